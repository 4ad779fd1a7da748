import Foundation
// What differs between two sessions, value by value (the console's `diff`): both are written as
// the session file writes them (SessionEncoder.swift) and read back as JSON, so a value shows as
// the file has it, a key the file leaves out (a default) as "(default)", and nothing of the model
// needs a comparison of its own: a new field of the file is compared without a line here.
// Elements of the named lists (stems, buses, inputs, effects, sends, scenes) are matched by name, connections
// by port and peer, MIDI mappings whole. The transport's saved position is left out: it is where
// the transport stands, not the mix.

/// One difference: what it is about, which value, and that value before and after.
public struct SessionChange: Equatable, Sendable {
  /// `drums` (a stem), `bus verb`, `input mic`, `effect horn`, `master`, `options`, `connection
  /// master_L → system:playback_1`, `midi mapping {…}`, `stems` (their order), or `session` (a
  /// top-level value such as `quality`).
  public var subject: String
  /// The value's key, dotted into nested objects (`volume`, `eq.low.gain`); nil when the subject
  /// itself was added or removed.
  public var field: String?
  /// As the session file writes it; nil when not there (a default left out, or the subject
  /// added or removed).
  public var from: String?
  public var to: String?

  /// `drums volume 0.8 → 0.5`, `bus verb added`, `input mic soloSafe (default) → false`.
  public var line: String {
    guard let field else { return "\(subject) \(to != nil ? "added" : "removed")" }
    let fallback = field == "bus" ? "master" : "(default)"
    return "\(subject) \(field) \(from ?? fallback) → \(to ?? fallback)"
  }
}

public enum SessionDiff {
  /// What changed from `old` (the saved session) to `new` (the live one), in the file's order.
  public static func changes(from old: Session, to new: Session) -> [SessionChange] {
    guard let a = members(of: old), let b = members(of: new) else {
      return [SessionChange(subject: "session", field: "text", from: "unreadable", to: "unreadable")]
    }
    var changes: [SessionChange] = []
    for key in keys(a, b) where !["format", "version", "position"].contains(key) {
      let before = a.first { $0.key == key }?.value, after = b.first { $0.key == key }?.value
      switch key {
      case "stems", "buses", "inputs", "effects", "sends", "scenes":
        changes += named(before, after, kind: key)
      case "connections":
        changes += connections(before, after)
      case "midi":
        changes += mappings(before, after)
      default:
        changes += values(before, after, subject: key, path: nil)
      }
    }
    return changes
  }

  /// The session as its file would hold it, parsed.
  static func members(of session: Session) -> [JSONMember]? {
    guard let node = try? JSONReader.parse(Array(SessionFile.encode(session).utf8)), case .object(let members) = node.value else {
      return nil
    }
    return members
  }

  /// The keys of both objects, `a`'s order first.
  static func keys(_ a: [JSONMember], _ b: [JSONMember]) -> [String] {
    var seen = Set<String>()
    return (a + b).map(\.key).filter { seen.insert($0).inserted }
  }

  /// Every leaf that differs between two values of `subject`, objects on both sides entered key
  /// by key (an object on one side only is one change: `bass eq (default) → { low: … }`).
  static func values(_ a: JSONNode?, _ b: JSONNode?, subject: String, path: String?) -> [SessionChange] {
    if case .object(let x)? = a?.value, case .object(let y)? = b?.value {
      return keys(x, y).flatMap { key in
        values(
          x.first { $0.key == key }?.value, y.first { $0.key == key }?.value, subject: subject,
          path: path.map { $0 + "." + key } ?? key)
      }
    }
    var before = a.map(text), after = b.map(text)
    guard before != after else { return [] }
    if let key = (path ?? subject).split(separator: ".").last, key == "volume" || key == "level" {
      (before, after) = sameUnits(before, after)
    }
    // A top-level value (`quality`): the key is its subject.
    return [SessionChange(subject: path == nil ? "session" : subject, field: path ?? subject, from: before, to: after)]
  }

  /// Two gains in one unit: the file writes a short one as a number (0.8) and a long one in dB
  /// (`"-6dB"`, SessionEncoder's `gain`), so `0.8 → -6dB` would mix them; when either side is in
  /// dB both are (`-1.94dB → -6dB`, two decimals; silence stays 0).
  static func sameUnits(_ a: String?, _ b: String?) -> (String?, String?) {
    guard a?.hasSuffix("dB") == true || b?.hasSuffix("dB") == true else { return (a, b) }
    func decibels(_ text: String?) -> String? {
      guard let text, let gain = Double(text), gain > 0 else { return text }
      return SessionRules.number((Decibels.fromAmplitude(gain) * 100).rounded() / 100) + "dB"
    }
    return (decibels(a), decibels(b))
  }

  /// A list of named elements: added, removed, changed field by field, and their order.
  static func named(_ a: JSONNode?, _ b: JSONNode?, kind: String) -> [SessionChange] {
    let x = elements(a), y = elements(b)
    let label: (String) -> String = { name in
      switch kind {
      case "stems": name
      case "buses": "bus " + name
      default: String(kind.dropLast()) + " " + name
      }
    }
    var changes: [SessionChange] = []
    for (name, node) in x where !y.contains(where: { $0.name == name }) {
      changes.append(SessionChange(subject: label(name), field: nil, from: text(node), to: nil))
    }
    for (name, node) in y {
      guard let old = x.first(where: { $0.name == name })?.node else {
        changes.append(SessionChange(subject: label(name), field: nil, from: nil, to: text(node)))
        continue
      }
      changes += values(old, node, subject: label(name), path: nil)
    }
    let kept = x.map(\.name).filter { name in y.contains { $0.name == name } }
    let order = y.map(\.name).filter { name in x.contains { $0.name == name } }
    if kept != order {
      changes.append(SessionChange(subject: kind, field: "order", from: kept.joined(separator: ", "), to: order.joined(separator: ", ")))
    }
    return changes
  }

  /// The elements of a list of objects, each by its "name".
  static func elements(_ node: JSONNode?) -> [(name: String, node: JSONNode)] {
    guard case .array(let items)? = node?.value else { return [] }
    return items.compactMap { item in
      guard case .object(let members) = item.value, case .string(let name)? = members.first(where: { $0.key == "name" })?.value.value
      else { return nil }
      return (name, item)
    }
  }

  /// `connections` (port → peers): each pair added or removed.
  static func connections(_ a: JSONNode?, _ b: JSONNode?) -> [SessionChange] {
    func pairs(_ node: JSONNode?) -> [String] {
      guard case .object(let ports)? = node?.value else { return [] }
      return ports.flatMap { port -> [String] in
        guard case .array(let peers) = port.value.value else { return [] }
        return peers.compactMap { peer in
          if case .string(let p) = peer.value { return "\(port.key) → \(p)" }
          return nil
        }
      }
    }
    let x = pairs(a), y = pairs(b)
    return x.filter { !y.contains($0) }.map { SessionChange(subject: "connection " + $0, field: nil, from: "", to: nil) }
      + y.filter { !x.contains($0) }.map { SessionChange(subject: "connection " + $0, field: nil, from: nil, to: "") }
  }

  /// `midi.mappings`: each mapping added or removed, as the file writes it.
  static func mappings(_ a: JSONNode?, _ b: JSONNode?) -> [SessionChange] {
    func list(_ node: JSONNode?) -> [String] {
      guard case .object(let members)? = node?.value, case .array(let items)? = members.first(where: { $0.key == "mappings" })?.value.value
      else { return [] }
      return items.map(text)
    }
    let x = list(a), y = list(b)
    return x.filter { !y.contains($0) }.map { SessionChange(subject: "midi mapping " + $0, field: nil, from: $0, to: nil) }
      + y.filter { !x.contains($0) }.map { SessionChange(subject: "midi mapping " + $0, field: nil, from: nil, to: $0) }
  }

  /// A value as the session file writes it (compact: one line).
  static func text(_ node: JSONNode) -> String {
    switch node.value {
    case .null: "null"
    case .bool(let v): "\(v)"
    case .number(let literal): literal
    case .string(let s): s
    case .array(let items): "[" + items.map(text).joined(separator: ", ") + "]"
    case .object(let members):
      "{ " + members.map { "\($0.key): " + ($0.key == "state" ? stateText($0.value) : text($0.value)) }.joined(separator: ", ") + " }"
    }
  }

  /// An insert's plugin state (InsertSettings' "state") in short: each property by the last part
  /// of its key, a path or a short text as it is, a long text or bytes by their size. The whole
  /// would be a plugin's serialised settings (hundreds of characters on one line).
  static func stateText(_ node: JSONNode) -> String {
    guard case .array(let items) = node.value else { return text(node) }
    let parts = items.map { item -> String in
      guard case .object(let members) = item.value else { return text(item) }
      func field(_ key: String) -> String? {
        if case .string(let s)? = members.first(where: { $0.key == key })?.value.value { return s }
        return nil
      }
      let key = field("key") ?? "?"
      let name = key.split(whereSeparator: { "#/:".contains($0) }).last.map(String.init) ?? key
      let value: String
      if let t = field("text") {
        value = field("type")?.hasSuffix("#Path") == true || t.count <= 40 ? t : "(\(t.count) characters)"
      } else if let b = field("base64") {
        value = "(\(Data(base64Encoded: b)?.count ?? b.count * 3 / 4) bytes)"
      } else {
        value = "?"
      }
      return "\(name): \(value)"
    }
    return "{ " + parts.joined(separator: ", ") + " }"
  }
}
