// A strip's plugin inserts in a session file: the optional "inserts" list of a stem, a bus, a
// live input and the master, absent when empty (so files without inserts are unchanged):
//
//   "inserts" : [ { "uri" : "http://plugin.org.uk/swh-plugins/amp", "values" : { "gain" : -6 } },
//                 { "uri" : "http://gareus.org/oss/lv2/nodelay", "bypass" : true, "values" : { … } } ]
//
// In order: the first runs first, right after the strip's EQ. "bypass" only when true. "values"
// holds the plugin's input controls by port symbol, in the order they were written (a plugin
// that is not installed is kept as it was read and written back unchanged).

/// One plugin insert of a strip.
public struct InsertSettings: Equatable, Sendable {
  /// The LV2 plugin's URI.
  public var uri: String
  public var bypass = false
  /// Control values by port symbol, in order.
  public var values: [InsertValue] = []

  public init(uri: String, bypass: Bool = false, values: [InsertValue] = []) {
    self.uri = uri
    self.bypass = bypass
    self.values = values
  }

  static let fields = ["uri", "bypass", "values"]
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
      out.append(insert)
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
      return "{ " + members.joined(separator: ", ") + " }"
    }
    return "\"inserts\" : [ " + items.joined(separator: ", ") + " ]"
  }
}
