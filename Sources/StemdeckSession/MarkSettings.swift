// Marks (the session's `"marks"` array): named transport positions a performer jumps to with
// `goto NAME [now|bar|end]` (issue 42, item 2). Absent when there are none, so older sessions stay
// byte-identical. docs/architecture.md, *Marks and quantised jumps*.

/// A named position on the song's transport.
public struct Mark: Equatable, Sendable {
  /// The mark's name: a stem name's alphabet (ASCII letters, digits, `_ - . + @`…), 1 to 64.
  public var name: String
  /// Transport seconds, in `SettingRange.position`.
  public var at: Double

  public init(name: String, at: Double) {
    self.name = name
    self.at = at
  }
}

extension SessionRules {
  static let markFields = ["name", "at"]
}

extension SettingRule {
  /// Why `name` is not a valid mark name, or nil.
  public static func markProblem(_ name: String) -> String? {
    SessionRules.nameProblem(name, of: .mark)
  }
}

extension Session {
  /// The first mark that breaks a rule, as `validate()` words it (location, message).
  func markProblem() -> (location: String, message: String)? {
    var names = SessionRules.NameList(of: .mark)
    for (index, mark) in marks.enumerated() {
      let base = "marks[\(index)]"
      if let problem = names.problem(mark.name, at: index) { return (base + ".name", problem) }
      if !SettingRule.position.accepts(mark.at) {
        return (base + ".at", SettingRule.position.rule + " (got \(SessionRules.number(mark.at)))")
      }
    }
    return nil
  }
}

extension SessionEncoder {
  /// `"marks" : [ { "name" : "chorus", "at" : 61.5 }, … ]`, one mark a line.
  static func marks(_ marks: [Mark]) -> String {
    let entries = marks.map { "    { \"name\" : " + JSONText.string($0.name) + ", \"at\" : " + JSONText.number($0.at) + " }" }
    return "\"marks\" : [\n" + entries.joined(separator: ",\n") + "\n  ]"
  }
}

extension SessionDecoder {
  func marks(_ node: JSONNode) throws(SessionError) -> [Mark] {
    let example = "{ \"name\" : \"chorus\", \"at\" : 61.5 }"
    return try namedList(node, of: .mark, allowed: SessionRules.markFields, arrayExample: example, example: example) {
      (mark) throws(SessionError) -> Mark in
      guard let atNode = mark.fields["at"] else {
        throw fail(mark.base + ".at", mark.node, "is missing (the mark's position in seconds on the transport)")
      }
      return Mark(name: mark.name, at: try number(atNode, at: mark.base + ".at", rule: .position))
    }
  }
}
