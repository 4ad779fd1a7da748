/// Duplicate keys in a JSON text, which Foundation's reader takes silently (the last wins): a
/// control-socket request `{"cmd": "echo hi", "cmd": "quit"}` must not mean one thing to a proxy
/// that checks the first and another to stemdeck (issue 43, item 1). The session reader's own
/// parser keeps every member, so they can be found.
public enum JSONDuplicates {
  /// The first key that appears twice in one object of `bytes` (at any depth), or nil; nil too
  /// for a text that does not parse (the caller's own reader says what is wrong with it).
  public static func firstDuplicateKey(in bytes: [UInt8]) -> String? {
    guard let root = try? JSONReader.parse(bytes) else { return nil }
    return duplicate(in: root)
  }

  static func duplicate(in node: JSONNode) -> String? {
    switch node.value {
    case .object(let members):
      var seen: Set<String> = []
      for member in members {
        if !seen.insert(member.key).inserted { return member.key }
        if let inner = duplicate(in: member.value) { return inner }
      }
      return nil
    case .array(let elements):
      for element in elements { if let inner = duplicate(in: element) { return inner } }
      return nil
    default: return nil
    }
  }
}
