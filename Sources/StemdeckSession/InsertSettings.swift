import Foundation

// A strip's plugin inserts in a session file: the optional "inserts" list of a stem, a bus, a
// live input and the master, absent when empty (so files without inserts are unchanged):
//
//   "inserts" : [ { "uri" : "http://plugin.org.uk/swh-plugins/amp", "values" : { "gain" : -6 } },
//                 { "uri" : "http://gareus.org/oss/lv2/nodelay", "bypass" : true, "values" : { … } } ]
//
// In order: the first runs first, right after the strip's EQ. "bypass" only when true. "values"
// holds the plugin's input controls by port symbol, in the order they were written (a plugin
// that is not installed is kept as it was read and written back unchanged). "state", only when
// the plugin has state of its own (LV2 state interface), holds what its `save` stored, in order:
//
//   "state" : [ { "key" : "http://gareus.org/oss/lv2/convoLV2#impulse",
//                 "type" : "http://lv2plug.in/ns/ext/atom#Path", "flags" : 3, "text" : "ir.wav" } ]
//
// "text" for a text value (atom String, Path or URI, UTF-8, its closing NUL left out), else
// "base64" with the value's bytes. A path is the plugin's abstract path: relative to the
// session's folder (a file from elsewhere is copied beside the session, StemdeckControl's
// PluginState.swift).

/// One plugin insert of a strip.
public struct InsertSettings: Equatable, Sendable {
  /// The LV2 plugin's URI.
  public var uri: String
  public var bypass = false
  /// Control values by port symbol, in order.
  public var values: [InsertValue] = []
  /// The plugin's own state (LV2 state interface), in the order it stored it; nil: none.
  public var state: [InsertStateValue]?

  public init(uri: String, bypass: Bool = false, values: [InsertValue] = [], state: [InsertStateValue]? = nil) {
    self.uri = uri
    self.bypass = bypass
    self.values = values
    self.state = state
  }

  static let fields = ["uri", "bypass", "values", "state"]
}

/// One property of a plugin's saved state: what its `save` passed to `store`.
public struct InsertStateValue: Equatable, Sendable {
  /// The property's key and the value's type, as URIs.
  public var key: String
  public var type: String
  /// LV2_State_Flags (1: plain old data, 2: portable, 4: native).
  public var flags: UInt32
  public var bytes: [UInt8]

  public init(key: String, type: String, flags: UInt32, bytes: [UInt8]) {
    self.key = key
    self.type = type
    self.flags = flags
    self.bytes = bytes
  }

  /// The value as text, when it is one: a text type's UTF-8 with one closing NUL and no other.
  public var text: String? {
    let textTypes = ["String", "Path", "URI"].map { "http://lv2plug.in/ns/ext/atom#" + $0 }
    guard textTypes.contains(type), bytes.last == 0, !bytes.dropLast().contains(0) else { return nil }
    return String(validating: bytes.dropLast(), as: UTF8.self)
  }

  static let fields = ["key", "type", "flags", "text", "base64"]
}

/// One control value of an insert.
public struct InsertValue: Equatable, Sendable {
  public var symbol: String
  public var value: Double

  public init(symbol: String, value: Double) {
    self.symbol = symbol
    self.value = value
  }
}

extension SessionDecoder {
  /// A strip's "inserts" list.
  func inserts(_ node: JSONNode, at path: String) throws(SessionError) -> [InsertSettings] {
    guard case .array(let elements) = node.value else {
      throw fail(path, node, "must be a list of inserts such as [ { \"uri\" : \"http://…\" } ] (got \(describe(node)))")
    }
    var out: [InsertSettings] = []
    for (index, element) in elements.enumerated() {
      let base = "\(path)[\(index)]"
      let fields = try object(element, at: base, allowed: InsertSettings.fields, example: "{ \"uri\" : \"http://…\", \"values\" : { } }")
      guard let uriNode = fields["uri"] else { throw fail(base + ".uri", element, "is missing (every insert names its plugin's URI)") }
      let uri = try string(uriNode, at: base + ".uri", rule: "must be the plugin's URI as a string")
      guard !uri.isEmpty, uri.contains(":") else {
        throw fail(
          base + ".uri", uriNode, "must be the plugin's URI, such as \"http://plugin.org.uk/swh-plugins/amp\" (got \(describe(uriNode)))")
      }
      var insert = InsertSettings(uri: uri)
      if let b = fields["bypass"] { insert.bypass = try bool(b, at: base + ".bypass") }
      if let v = fields["values"] {
        guard case .object(let members) = v.value else {
          throw fail(base + ".values", v, "must be an object of numbers by port symbol, such as { \"gain\" : -6 } (got \(describe(v)))")
        }
        try rejectDuplicates(members, path: base + ".values")
        for m in members {
          guard case .number(let literal) = m.value.value, let value = JSONNumber.double(literal), value.isFinite else {
            throw fail(base + ".values." + m.key, m.value, "must be a number (got \(describe(m.value)))")
          }
          insert.values.append(InsertValue(symbol: m.key, value: value))
        }
      }
      if let st = fields["state"] { insert.state = try insertState(st, at: base + ".state") }
      out.append(insert)
    }
    return out
  }

  /// An insert's "state" list.
  func insertState(_ node: JSONNode, at path: String) throws(SessionError) -> [InsertStateValue] {
    guard case .array(let elements) = node.value else {
      throw fail(path, node, "must be a list of state properties such as [ { \"key\" : \"http://…\", … } ] (got \(describe(node)))")
    }
    var out: [InsertStateValue] = []
    for (index, element) in elements.enumerated() {
      let base = "\(path)[\(index)]"
      let example = "{ \"key\" : \"http://…\", \"type\" : \"http://…\", \"flags\" : 3, \"text\" : \"…\" }"
      let f = try object(element, at: base, allowed: InsertStateValue.fields, example: example)
      guard let keyNode = f["key"], let typeNode = f["type"] else {
        throw fail(base, element, "needs a \"key\" and a \"type\" (URIs), such as \(example)")
      }
      let key = try string(keyNode, at: base + ".key", rule: "must be the property's URI as a string")
      let type = try string(typeNode, at: base + ".type", rule: "must be the value's type URI as a string")
      var flags: UInt32 = 0
      if let n = f["flags"] {
        guard case .number(let literal) = n.value, let v = JSONNumber.integer(literal), (0...0xffff_ffff).contains(v) else {
          throw fail(base + ".flags", n, "must be a whole number from 0 (got \(describe(n)))")
        }
        flags = UInt32(v)
      }
      let bytes: [UInt8]
      switch (f["text"], f["base64"]) {
      case (let t?, nil): bytes = Array(try string(t, at: base + ".text", rule: "must be a string").utf8) + [0]
      case (nil, let b?):
        let text = try string(b, at: base + ".base64", rule: "must be the value's bytes in base64, as a string")
        guard let data = Data(base64Encoded: text) else { throw fail(base + ".base64", b, "is not valid base64") }
        bytes = Array(data)
      default: throw fail(base, element, "needs exactly one of \"text\" and \"base64\" (the value)")
      }
      out.append(InsertStateValue(key: key, type: type, flags: flags, bytes: bytes))
    }
    return out
  }
}

extension SessionEncoder {
  /// A strip's "inserts" member, nil when it has none.
  static func inserts(_ inserts: [InsertSettings]) -> String? {
    if inserts.isEmpty { return nil }
    let items = inserts.map { x in
      var members = ["\"uri\" : " + JSONText.string(x.uri)]
      if x.bypass { members.append("\"bypass\" : true") }
      let values = x.values.map { JSONText.string($0.symbol) + " : " + JSONText.number($0.value) }
      members.append("\"values\" : " + (values.isEmpty ? "{}" : "{ " + values.joined(separator: ", ") + " }"))
      if let state = x.state {
        let items = state.map { v in
          let value =
            v.text.map { "\"text\" : " + JSONText.string($0) } ?? "\"base64\" : " + JSONText.string(Data(v.bytes).base64EncodedString())
          return "{ \"key\" : \(JSONText.string(v.key)), \"type\" : \(JSONText.string(v.type)), \"flags\" : \(v.flags), \(value) }"
        }
        members.append("\"state\" : [ " + items.joined(separator: ", ") + " ]")
      }
      return "{ " + members.joined(separator: ", ") + " }"
    }
    return "\"inserts\" : [ " + items.joined(separator: ", ") + " ]"
  }
}
