import CJack

/// The names stemdeck hands to JACK and builds paths from: checked before use, so a hostile
/// `--server`/`JACK_DEFAULT_SERVER` (e.g. `../../etc/x`) never becomes part of a file path, and a
/// client name JACK would refuse gets a clear reason instead of "cannot connect".
public enum JackNames {
  /// The longest server name accepted (JACK's own limit is larger; 64 is plenty and keeps the
  /// log file name short).
  public static let longestServerName = 64

  /// Why `name` cannot be a JACK server name, or nil. Allowed: 1–64 ASCII letters, digits, `.`,
  /// `_` and `-`, not starting with `.` (so never `.`, `..` or a hidden file name).
  public static func serverProblem(_ name: String) -> String? {
    if name.isEmpty { return "is empty" }
    if name.utf8.count > longestServerName {
      return "is \(name.utf8.count) bytes long; the longest allowed is \(longestServerName)"
    }
    if name.hasPrefix(".") { return "may not start with '.'" }
    let allowed = name.unicodeScalars.allSatisfy { s in
      s.isASCII && (s.properties.isAlphabetic || ("0"..."9").contains(s) || s == "." || s == "_" || s == "-")
    }
    return allowed ? nil : "may hold only ASCII letters, digits, '.', '_' and '-'"
  }

  /// The longest client name JACK accepts (`jack_client_name_size()` counts the final NUL).
  public static var longestClientName: Int { Int(jack_client_name_size()) - 1 }

  /// Why `name` cannot be stemdeck's JACK client name, or nil.
  public static func clientProblem(_ name: String) -> String? {
    if name.isEmpty { return "is empty" }
    if name.utf8.count > longestClientName {
      return "is \(name.utf8.count) bytes long; JACK allows at most \(longestClientName)"
    }
    if name.contains(":") { return "may not contain ':' (it separates a client's name from its ports')" }
    if name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) {
      return "may not contain control characters"
    }
    return nil
  }
}
