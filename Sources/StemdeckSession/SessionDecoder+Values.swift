// Objects, fields, values and messages of the session decoder (SessionDecoder.swift), and the
// migration of older format versions.

extension SessionDecoder {
  // MARK: Objects and fields

  /// The members of an object node, after rejecting duplicate and unknown keys.
  func object(
    _ node: JSONNode, at path: String, allowed: [String],
    example: String
  ) throws(SessionError) -> [String: JSONNode] {
    guard case .object(let members) = node.value else {
      throw fail(path, node, "must be an object such as \(example) (got \(describe(node)))")
    }
    try rejectDuplicates(members, path: path)
    return try knownFields(members, path: path, allowed: allowed)
  }

  func rejectDuplicates(_ members: [JSONMember], path: String) throws(SessionError) {
    var firstByKey: [String: TextPosition] = [:]
    for member in members {
      if let first = firstByKey[member.key] {
        throw fail(
          SessionRules.path(path, member.key), member.keyPosition,
          "appears more than once (first at line \(first.line), column \(first.column)); "
            + "keep one")
      }
      firstByKey[member.key] = member.keyPosition
    }
  }

  func knownFields(
    _ members: [JSONMember], path: String,
    allowed: [String]
  ) throws(SessionError) -> [String: JSONNode] {
    var fields: [String: JSONNode] = [:]
    for member in members {
      guard allowed.contains(member.key) else {
        var message = "unknown field (allowed: \(allowed.joined(separator: ", ")))"
        if let guess = closestMatch(member.key, in: allowed) { message += "; did you mean \"\(guess)\"?" }
        throw fail(SessionRules.path(path, member.key), member.keyPosition, message)
      }
      fields[member.key] = member.value
    }
    return fields
  }

  /// One object of a list of named objects (`namedList`): its index, its location
  /// (`marks[2]`), its fields and its name, checked.
  struct NamedObject {
    let index: Int
    let base: String
    let fields: [String: JSONNode]
    let node: JSONNode
    let name: String
  }

  /// A list section of named objects (`kind.listName`: stems, effects, buses, scenes, marks): an
  /// array (its error shows `arrayExample`) of at most `maximum` objects, each with only
  /// `allowed` fields (its error shows `example`) and a `"name"` (missing: "every stem needs
  /// `needs`") the rules accept and no earlier object has; `read` makes each element from what
  /// that leaves to read.
  func namedList<Element>(
    _ node: JSONNode, of kind: SessionRules.ElementKind, allowed: [String], arrayExample: String, example: String,
    needs: String = "a name", maximum: Int? = nil, _ read: (NamedObject) throws(SessionError) -> Element
  ) throws(SessionError) -> [Element] {
    let list = kind.listName
    guard case .array(let elements) = node.value else {
      throw fail(list, node, "must be an array of \(list) [ \(arrayExample), ... ] (got \(describe(node)))")
    }
    if let maximum, elements.count > maximum { throw fail(list, node, "has \(elements.count) \(list); at most \(maximum)") }
    var result: [Element] = []
    result.reserveCapacity(elements.count)
    var names = SessionRules.NameList(of: kind)
    for (index, element) in elements.enumerated() {
      let base = "\(list)[\(index)]"
      let fields = try object(element, at: base, allowed: allowed, example: example)
      guard let nameNode = fields["name"] else { throw fail(base + ".name", element, "is missing (every \(kind.rawValue) needs \(needs))") }
      let name = try string(nameNode, at: base + ".name", rule: "must be \(kind.withArticle) name in double quotes")
      if let problem = names.problem(name, at: index) { throw fail(base + ".name", nameNode, problem) }
      result.append(try read(NamedObject(index: index, base: base, fields: fields, node: element, name: name)))
    }
    return result
  }

  func required(
    _ fields: [String: JSONNode], _ key: String, in object: JSONNode,
    at path: String, of kind: SessionRules.ElementKind
  ) throws(SessionError) -> JSONNode {
    guard let node = fields[key] else {
      throw fail(
        SessionRules.path(path, key), object,
        "is missing (every \(kind.rawValue) needs a name and a file)")
    }
    return node
  }

  // MARK: Values

  func number(_ node: JSONNode, at path: String, rule: SettingRule) throws(SessionError) -> Double {
    guard case .number(let literal) = node.value, let value = JSONNumber.double(literal),
      rule.accepts(value)
    else {
      throw fail(path, node, rule.rule + " (got \(describe(node)))")
    }
    return value
  }

  /// A volume: a linear number, or a string in dB ("-6dB"), which is converted to linear gain.
  func volume(_ node: JSONNode, at path: String) throws(SessionError) -> Double {
    if case .string(let text) = node.value {
      guard let gain = Decibels.linearGain(text: text) else {
        throw fail(path, node, SettingRule.volume.rule + " (got \(describe(node)))")
      }
      guard SettingRule.volume.accepts(gain) else {
        throw fail(path, node, SettingRule.volume.rule + " (got \(describe(node))\(Decibels.gainNote(gain)))")
      }
      return gain
    }
    return try number(node, at: path, rule: .volume)
  }

  func loops(_ node: JSONNode, at path: String) throws(SessionError) -> Int {
    guard case .number(let literal) = node.value, let value = JSONNumber.integer(literal),
      SettingRule.loops.accepts(value)
    else {
      throw fail(path, node, SettingRule.loops.rule + " (got \(describe(node)))")
    }
    return value
  }

  func bool(_ node: JSONNode, at path: String) throws(SessionError) -> Bool {
    guard case .bool(let value) = node.value else {
      throw fail(path, node, SessionRules.boolRule + " (got \(describe(node)))")
    }
    return value
  }

  func string(_ node: JSONNode, at path: String, rule: String) throws(SessionError) -> String {
    guard case .string(let value) = node.value else {
      throw fail(path, node, rule + " (got \(describe(node)))")
    }
    return value
  }

  /// One of an enum's raw values.
  func choice<Choice: RawRepresentable & CaseIterable>(
    _ node: JSONNode, at path: String, what: String
  ) throws(SessionError) -> Choice where Choice.RawValue == String {
    let allowed = Choice.allCases.map(\.rawValue).joined(separator: ", ")
    guard case .string(let text) = node.value else {
      throw fail(path, node, "must be one of \(allowed) (got \(describe(node)))")
    }
    guard let value = Choice(rawValue: text) else {
      throw fail(path, node, "unknown \(what) \(SessionRules.quote(text)) (allowed: \(allowed))")
    }
    return value
  }

  // MARK: Messages

  /// How a value appears in a "(got …)" clause: strings quoted, numbers as written, containers by kind.
  func describe(_ node: JSONNode) -> String {
    switch node.value {
    case .null: return "null"
    case .bool(let value): return value ? "true" : "false"
    case .number(let literal):
      return literal.count <= 40 ? literal : String(literal.prefix(40)) + "…"
    case .string(let text): return SessionRules.quote(text)
    case .array: return "an array"
    case .object: return "an object"
    }
  }

  func fail(_ location: String?, _ node: JSONNode, _ message: String) -> SessionError {
    fail(location, node.position, message)
  }

  func fail(_ location: String?, _ position: TextPosition, _ message: String) -> SessionError {
    SessionError(
      file: source, location: location, line: position.line, column: position.column,
      message: message)
  }

  /// The allowed word a mistyped field name most likely meant: one it is a prefix of (`vol` →
  /// `volume`), else the closest by edit distance if that is small for the word's length.
  func closestMatch(_ word: String, in candidates: [String]) -> String? {
    let lowered = word.lowercased()
    if lowered.count >= 2, let extended = candidates.first(where: { $0.lowercased().hasPrefix(lowered) }) {
      return extended
    }
    var best: (candidate: String, distance: Int)?
    for candidate in candidates {
      let distance = editDistance(lowered, candidate.lowercased())
      if let current = best, current.distance <= distance { continue }
      best = (candidate, distance)
    }
    guard let best, best.distance <= max(1, min(2, lowered.count / 3)) else { return nil }
    return best.candidate
  }

  /// Levenshtein distance, capped in cost by only being used on short field names.
  func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a.unicodeScalars.prefix(64))
    let b = Array(b.unicodeScalars.prefix(64))
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
      current[0] = i
      for j in 1...b.count {
        current[j] = min(
          previous[j] + 1, current[j - 1] + 1,
          previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
      }
      swap(&previous, &current)
    }
    return previous[b.count]
  }
}

/// Upgrading documents written by older stemdeck versions.
///
/// A session file states its format version. When the format changes (a field renamed, a unit
/// changed, a section restructured), `Session.currentVersion` goes up by one and `migrate` gets a
/// case that rewrites a document of the previous version into the new shape. Loading then applies
/// the steps in order (1→2, 2→3, …), so every step is written once and only knows its neighbours.
/// Migration works on the parsed document (before validation), so the validator only ever knows the
/// current format.
///
/// Versions: 1 (the first); 2 adds the channel EQ (`"eq"` on stems and on the master); 3 adds the
/// mixer graph's new parts (buses, live inputs, stretch quality; every one optional). A version 1
/// document is a valid version 2 document without EQ (flat), and a version 2 document a valid
/// version 3 document without those parts, so both steps change nothing; older files are saved as
/// the current version.
enum SessionMigration {
  /// The first version of each section or field that was new in a later version than 1: a file
  /// that says an older version and holds one was hand-edited or written by hand wrongly, and is
  /// refused rather than read silently as the newer format (issue 43).
  static let topLevelSince: [String: (version: Int, what: String)] = [
    "buses": (3, "buses"), "inputs": (3, "live inputs"), "sends": (3, "aux sends"),
    "scenes": (3, "scenes"), "recallSafe": (3, "scenes' recall-safe strips")
  ]
  static let stemFieldSince: [String: (version: Int, what: String)] = [
    "eq": (2, "the channel EQ"), "bus": (3, "buses"), "sends": (3, "aux sends")
  ]

  /// The first member of `document` newer than its `version`: where it is and what to say.
  static func newerThanDeclared(_ document: [JSONMember], version: Int) -> (location: String, node: JSONNode, message: String)? {
    func message(_ key: String, _ since: (version: Int, what: String)) -> String {
      "is part of format \(since.version) (\(since.what)), but the file says \"version\" : \(version); "
        + "set \"version\" : \(since.version) if it is meant, or remove \"\(key)\""
    }
    for member in document {
      if let since = topLevelSince[member.key], since.version > version { return (member.key, member.value, message(member.key, since)) }
      if member.key == "master", case .object(let fields) = member.value.value, version < 2,
        let eq = fields.first(where: { $0.key == "eq" })
      {
        return ("master.eq", eq.value, message("eq", (2, "the channel EQ")))
      }
      guard member.key == "stems", case .array(let stems) = member.value.value else { continue }
      for (i, stem) in stems.enumerated() {
        guard case .object(let fields) = stem.value else { continue }
        for field in fields {
          if let since = stemFieldSince[field.key], since.version > version {
            return ("stems[\(i)].\(field.key)", field.value, message(field.key, since))
          }
        }
      }
    }
    return nil
  }

  /// Applies every migration step from `version` up to `Session.currentVersion`.
  static func upgrade(_ document: [JSONMember], from version: Int) -> [JSONMember] {
    var document = document
    var version = version
    while version < Session.currentVersion {
      document = migrate(document, from: version)
      version += 1
    }
    return document
  }

  /// Rewrites a document of format `version` into format `version + 1`.
  ///
  /// Example of a future step, if version 2 renamed "master" to "main":
  ///
  ///     case 1:
  ///       return document.map { member in
  ///         var member = member
  ///         if member.key == "master" { member.key = "main" }
  ///         return member
  ///       }
  static func migrate(_ document: [JSONMember], from version: Int) -> [JSONMember] {
    switch version {
    case 1:
      return document  // 1 → 2: "eq" is new and optional; nothing is renamed
    case 2:
      return document  // 2 → 3: the new sections are optional; nothing is renamed
    default:
      return document
    }
  }
}
