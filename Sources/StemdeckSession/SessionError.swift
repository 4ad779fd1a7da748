/// Why a session file could not be read, decoded, validated or saved.
///
/// Every error names the file (or source), where in the document the problem is when that is known,
/// and what is allowed, so the message alone is enough to fix the file:
///
///     Sessions/x.json: stems[2].pan: must be a number between -1 and 1 (got 7) (line 9, column 72)
public struct SessionError: Error, CustomStringConvertible, Equatable, Sendable {
  /// The session file's path, or the source name given to `SessionFile.decode(_:source:)`.
  public var file: String
  /// The place in the document, e.g. `"stems[2].pan"`; nil for whole-file problems
  /// (missing file, malformed JSON, not UTF-8…).
  public var location: String?
  /// The 1-based line of the offending text, when known.
  public var line: Int?
  /// The 1-based column (in characters) of the offending text, when known.
  public var column: Int?
  /// What is wrong and what is allowed, e.g. `"must be a number between -1 and 1 (got 7)"`.
  public var message: String

  /// Makes an error. Prefer the specific factories used inside this module; this initializer is
  /// public so callers (and tests) can build expected values.
  public init(
    file: String, location: String? = nil, line: Int? = nil, column: Int? = nil,
    message: String
  ) {
    self.file = file
    self.location = location
    self.line = line
    self.column = column
    self.message = message
  }

  /// `"<file>: <location>: <message>"`, followed by `" (line L, column C)"` when known.
  public var description: String {
    var text = file + ": "
    if let location { text += location + ": " }
    text += message
    if let line {
      text += column.map { " (line \(line), column \($0))" } ?? " (line \(line))"
    }
    return text
  }
}
