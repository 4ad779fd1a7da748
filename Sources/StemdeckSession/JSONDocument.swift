// A small, strict JSON reader that remembers where every value came from.
//
// Why not JSONSerialization: on this toolchain (swift-corelibs-foundation, Swift 6.3.1) it
// accepts trailing commas, silently keeps the last of two duplicate keys, reports syntax errors
// only as "around character N", loses the source position of every value (so validation errors
// could not say which line is wrong), and bridges `1` and `true` to the same NSNumber. Session files
// are edited by hand, so each of those matters. This reader follows RFC 8259 exactly, keeps object
// members in order (duplicates included, for the validator to report), records the line and column
// of every value, bounds nesting depth, and never traps on any input.

/// A 1-based line and column (columns count Unicode scalars, so a tab or an "é" is one column).
struct TextPosition: Equatable, Sendable {
  var line: Int
  var column: Int
}

/// A parsed JSON value and where it starts in the source text.
struct JSONNode: Sendable {
  enum Value: Sendable {
    case null
    case bool(Bool)
    /// The number exactly as written (a valid JSON number literal); see `JSONNumber`.
    case number(String)
    case string(String)
    case array([JSONNode])
    /// Members in document order; duplicate keys are kept so the validator can report them.
    case object([JSONMember])
  }

  var value: Value
  var position: TextPosition
}

/// One `"key" : value` member of a JSON object.
struct JSONMember: Sendable {
  var key: String
  var keyPosition: TextPosition
  var value: JSONNode
}

/// A syntax error: what the reader expected, and where.
struct JSONSyntaxError: Error, Sendable {
  var message: String
  var position: TextPosition
}

/// Interpretations of a JSON number literal.
enum JSONNumber {
  /// The literal as a finite Double, or nil when it overflows (e.g. `1e400`).
  static func double(_ literal: String) -> Double? {
    guard let value = Double(literal), value.isFinite else { return nil }
    return value
  }

  /// The literal as an Int when it denotes an integer that fits (`3`, `3.0`, `3e2`), else nil.
  static func integer(_ literal: String) -> Int? {
    if let exact = Int(literal) { return exact }
    // Accept integral values written with a fraction or exponent, but only where a Double holds
    // every integer exactly, so the conversion below can neither trap nor round.
    guard let value = double(literal), value == value.rounded(.towardZero),
      abs(value) <= 9_007_199_254_740_992
    else { return nil }
    return Int(value)
  }
}

/// Parses one JSON document from UTF-8 bytes.
struct JSONReader {
  /// Objects and arrays nested deeper than this are rejected (a session needs 4 levels). The limit
  /// also bounds the recursion, so hostile input cannot overflow the stack.
  static let maximumDepth = 64

  private let bytes: [UInt8]
  private var index = 0
  private var line = 1
  private var lineStart = 0
  // Column cache: the column at byte `columnIndex` of the current line. Positions are asked for in
  // increasing order, so counting from here keeps a long single-line (minified) file linear.
  private var columnLine = 1
  private var columnIndex = 0
  private var columnAtIndex = 1

  private init(bytes: [UInt8]) {
    self.bytes = bytes
  }

  /// Parses `bytes` (which should already be checked to be UTF-8; see `UTF8Check`) as a single JSON
  /// value with optional surrounding whitespace. A leading UTF-8 byte order mark is skipped.
  static func parse(_ bytes: [UInt8]) throws(JSONSyntaxError) -> JSONNode {
    var reader = JSONReader(bytes: bytes)
    if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
      reader.index = 3
      reader.lineStart = 3
    }
    reader.skipWhitespace()
    guard reader.index < bytes.count else {
      throw JSONSyntaxError(
        message: "the file is empty (expected a JSON object)",
        position: reader.trackedPosition())
    }
    let node = try reader.parseValue(depth: 0)
    reader.skipWhitespace()
    if reader.index < bytes.count {
      throw reader.error("unexpected \(reader.describeCurrent()) after the end of the document")
    }
    return node
  }

  // MARK: Values

  private mutating func parseValue(depth: Int) throws(JSONSyntaxError) -> JSONNode {
    let start = trackedPosition()
    guard let byte = current else {
      throw error("unexpected end of file (expected a value)")
    }
    switch byte {
    case UInt8(ascii: "{"):
      return JSONNode(value: .object(try parseObject(depth: depth + 1)), position: start)
    case UInt8(ascii: "["):
      return JSONNode(value: .array(try parseArray(depth: depth + 1)), position: start)
    case UInt8(ascii: "\""):
      return JSONNode(value: .string(try parseString()), position: start)
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
      return JSONNode(value: .number(try parseNumber()), position: start)
    case UInt8(ascii: "t"):
      try expectLiteral("true")
      return JSONNode(value: .bool(true), position: start)
    case UInt8(ascii: "f"):
      try expectLiteral("false")
      return JSONNode(value: .bool(false), position: start)
    case UInt8(ascii: "n"):
      try expectLiteral("null")
      return JSONNode(value: .null, position: start)
    default:
      throw error(
        "unexpected \(describeCurrent()) (expected a value: a string in double quotes, "
          + "a number, an object, an array, true, false or null)")
    }
  }

  private mutating func parseObject(depth: Int) throws(JSONSyntaxError) -> [JSONMember] {
    try checkDepth(depth)
    index += 1  // "{"
    var members: [JSONMember] = []
    skipWhitespace()
    if current == UInt8(ascii: "}") {
      index += 1
      return members
    }
    while true {
      skipWhitespace()
      guard current == UInt8(ascii: "\"") else {
        let hint = members.isEmpty ? "" : " (a trailing comma is not allowed)"
        throw error(
          current == nil
            ? "unexpected end of file (expected a field name in double quotes)"
            : "unexpected \(describeCurrent()) (expected a field name in double quotes)"
              + (current == UInt8(ascii: "}") ? hint : ""))
      }
      let keyPosition = trackedPosition()
      let key = try parseString()
      skipWhitespace()
      guard current == UInt8(ascii: ":") else {
        throw error(
          current == nil
            ? "unexpected end of file (expected ':' after the field name)"
            : "unexpected \(describeCurrent()) (expected ':' after the field name)")
      }
      index += 1
      skipWhitespace()
      let value = try parseValue(depth: depth)
      members.append(JSONMember(key: key, keyPosition: keyPosition, value: value))
      skipWhitespace()
      switch current {
      case UInt8(ascii: ","):
        index += 1
      case UInt8(ascii: "}"):
        index += 1
        return members
      case nil:
        throw error("unexpected end of file (expected ',' or '}' after a field)")
      default:
        throw error("unexpected \(describeCurrent()) (expected ',' or '}' after a field)")
      }
    }
  }

  private mutating func parseArray(depth: Int) throws(JSONSyntaxError) -> [JSONNode] {
    try checkDepth(depth)
    index += 1  // "["
    var elements: [JSONNode] = []
    skipWhitespace()
    if current == UInt8(ascii: "]") {
      index += 1
      return elements
    }
    while true {
      skipWhitespace()
      if current == UInt8(ascii: "]") {
        throw error("unexpected ']' (expected a value; a trailing comma is not allowed)")
      }
      elements.append(try parseValue(depth: depth))
      skipWhitespace()
      switch current {
      case UInt8(ascii: ","):
        index += 1
      case UInt8(ascii: "]"):
        index += 1
        return elements
      case nil:
        throw error("unexpected end of file (expected ',' or ']' after an array element)")
      default:
        throw error("unexpected \(describeCurrent()) (expected ',' or ']' after an array element)")
      }
    }
  }

  private func checkDepth(_ depth: Int) throws(JSONSyntaxError) {
    if depth > Self.maximumDepth {
      throw error("objects and arrays are nested too deeply (more than \(Self.maximumDepth) levels)")
    }
  }

  // MARK: Strings

  private mutating func parseString() throws(JSONSyntaxError) -> String {
    index += 1  // opening quote
    var utf8: [UInt8] = []
    while true {
      guard let byte = current else {
        throw error("unexpected end of file inside a string (missing closing '\"')")
      }
      switch byte {
      case UInt8(ascii: "\""):
        index += 1
        return String(decoding: utf8, as: UTF8.self)
      case UInt8(ascii: "\\"):
        try parseEscape(into: &utf8)
      case 0..<0x20:
        throw error(
          "a control character (code \(byte)) inside a string; write a line break as \\n "
            + "and a tab as \\t")
      default:
        utf8.append(byte)
        index += 1
      }
    }
  }

  private mutating func parseEscape(into utf8: inout [UInt8]) throws(JSONSyntaxError) {
    let escapeStart = index
    index += 1  // backslash
    guard let byte = current else {
      throw error("unexpected end of file inside a string (missing closing '\"')")
    }
    index += 1
    let simple: UInt8?
    switch byte {
    case UInt8(ascii: "\""): simple = UInt8(ascii: "\"")
    case UInt8(ascii: "\\"): simple = UInt8(ascii: "\\")
    case UInt8(ascii: "/"): simple = UInt8(ascii: "/")
    case UInt8(ascii: "b"): simple = 0x08
    case UInt8(ascii: "f"): simple = 0x0C
    case UInt8(ascii: "n"): simple = 0x0A
    case UInt8(ascii: "r"): simple = 0x0D
    case UInt8(ascii: "t"): simple = 0x09
    case UInt8(ascii: "u"): simple = nil
    default:
      index = escapeStart
      throw error(
        "invalid escape sequence in a string (allowed: \\\" \\\\ \\/ \\b \\f \\n \\r \\t "
          + "\\uXXXX)")
    }
    if let simple {
      utf8.append(simple)
      return
    }
    var code = try parseHex4(escapeStart: escapeStart)
    if (0xDC00...0xDFFF).contains(code) {
      index = escapeStart
      throw error("invalid \\u escape: a low surrogate without a high surrogate before it")
    }
    if (0xD800...0xDBFF).contains(code) {
      guard current == UInt8(ascii: "\\"), peek(1) == UInt8(ascii: "u") else {
        index = escapeStart
        throw error("invalid \\u escape: a high surrogate must be followed by a \\u low surrogate")
      }
      let lowStart = index
      index += 2
      let low = try parseHex4(escapeStart: lowStart)
      guard (0xDC00...0xDFFF).contains(low) else {
        index = lowStart
        throw error("invalid \\u escape: a high surrogate must be followed by a \\u low surrogate")
      }
      code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
    }
    guard let scalar = Unicode.Scalar(code) else {
      index = escapeStart
      throw error("invalid \\u escape")
    }
    UTF8.encode(scalar) { utf8.append($0) }
  }

  private mutating func parseHex4(escapeStart: Int) throws(JSONSyntaxError) -> UInt32 {
    var code: UInt32 = 0
    for _ in 0..<4 {
      let digit: UInt32
      switch current {
      case let byte? where (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte):
        digit = UInt32(byte - UInt8(ascii: "0"))
      case let byte? where (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte):
        digit = UInt32(byte - UInt8(ascii: "a") + 10)
      case let byte? where (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte):
        digit = UInt32(byte - UInt8(ascii: "A") + 10)
      default:
        index = escapeStart
        throw error("invalid \\u escape (expected four hexadecimal digits)")
      }
      code = code << 4 | digit
      index += 1
    }
    return code
  }

  // MARK: Numbers and literals

  /// Reads a number literal following RFC 8259: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
  private mutating func parseNumber() throws(JSONSyntaxError) -> String {
    let start = index
    func isDigit(_ byte: UInt8?) -> Bool {
      guard let byte else { return false }
      return (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
    func invalid(_ reader: JSONReader) -> JSONSyntaxError {
      var atStart = reader
      atStart.index = start
      return atStart.error(
        "invalid number (numbers look like 3, -0.25 or 1e-3; no leading zeros, "
          + "'+', '.5', NaN or Infinity)")
    }
    if current == UInt8(ascii: "-") { index += 1 }
    if current == UInt8(ascii: "0") {
      index += 1
      if isDigit(current) { throw invalid(self) }
    } else if isDigit(current) {
      while isDigit(current) { index += 1 }
    } else {
      throw invalid(self)
    }
    if current == UInt8(ascii: ".") {
      index += 1
      guard isDigit(current) else { throw invalid(self) }
      while isDigit(current) { index += 1 }
    }
    if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
      index += 1
      if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
      guard isDigit(current) else { throw invalid(self) }
      while isDigit(current) { index += 1 }
    }
    return String(decoding: bytes[start..<index], as: UTF8.self)
  }

  private mutating func expectLiteral(_ word: String) throws(JSONSyntaxError) {
    let expected = Array(word.utf8)
    guard index + expected.count <= bytes.count,
      bytes[index..<(index + expected.count)].elementsEqual(expected)
    else {
      throw error(
        "unexpected \(describeCurrent()) (expected a value: a string in double quotes, "
          + "a number, an object, an array, true, false or null)")
    }
    index += expected.count
  }

  // MARK: Position tracking

  private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

  private func peek(_ offset: Int) -> UInt8? {
    index + offset < bytes.count ? bytes[index + offset] : nil
  }

  private mutating func skipWhitespace() {
    while let byte = current {
      switch byte {
      case UInt8(ascii: "\n"):
        index += 1
        line += 1
        lineStart = index
      case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"):
        index += 1
      default:
        return
      }
    }
  }

  /// The position of `index`, counted incrementally (amortized O(1) while the reader moves forward).
  private mutating func trackedPosition() -> TextPosition {
    let end = min(index, bytes.count)
    if columnLine != line || columnIndex < lineStart || columnIndex > end {
      columnLine = line
      columnIndex = lineStart
      columnAtIndex = 1
    }
    columnAtIndex += UTF8Check.scalarCount(bytes[columnIndex..<end])
    columnIndex = end
    return TextPosition(line: line, column: columnAtIndex)
  }

  /// A syntax error at `index` (its column is counted from the line start: errors happen once).
  private func error(_ message: String) -> JSONSyntaxError {
    let end = min(index, bytes.count)
    return JSONSyntaxError(
      message: message,
      position: TextPosition(line: line, column: UTF8Check.scalarCount(bytes[lineStart..<end]) + 1))
  }

  /// A short, printable description of the character at the current index.
  private func describeCurrent() -> String {
    guard let byte = current else { return "end of file" }
    if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
    if byte == 0x20 { return "space" }
    if byte < 0x80 { return "control character (code \(byte))" }
    // A non-ASCII character: decode it for display (the input was checked to be UTF-8; if it was
    // not, the replacement character is shown, which is still safe).
    var end = index + 1
    while end < bytes.count && end < index + 4 && bytes[end] & 0xC0 == 0x80 { end += 1 }
    return "'\(String(decoding: bytes[index..<end], as: UTF8.self))'"
  }
}

/// Strict UTF-8 validation with the position of the first bad byte.
enum UTF8Check {
  /// The offset of the first byte that does not start a well-formed UTF-8 sequence (overlong forms,
  /// surrogates and values above U+10FFFF are rejected), or nil if all of `bytes` is valid UTF-8.
  static func firstInvalidOffset(_ bytes: [UInt8]) -> Int? {
    var i = 0
    let count = bytes.count
    while i < count {
      let lead = bytes[i]
      if lead < 0x80 {
        i += 1
        continue
      }
      let trailing: Int
      var secondRange: ClosedRange<UInt8> = 0x80...0xBF
      switch lead {
      case 0xC2...0xDF: trailing = 1
      case 0xE0: trailing = 2; secondRange = 0xA0...0xBF
      case 0xE1...0xEC, 0xEE...0xEF: trailing = 2
      case 0xED: trailing = 2; secondRange = 0x80...0x9F
      case 0xF0: trailing = 3; secondRange = 0x90...0xBF
      case 0xF1...0xF3: trailing = 3
      case 0xF4: trailing = 3; secondRange = 0x80...0x8F
      default: return i
      }
      guard i + trailing < count, secondRange.contains(bytes[i + 1]) else { return i }
      var k = 2
      while k <= trailing {
        guard (0x80...0xBF).contains(bytes[i + k]) else { return i }
        k += 1
      }
      i += trailing + 1
    }
    return nil
  }

  /// The number of Unicode scalars in UTF-8 bytes (bytes that are not continuation bytes).
  static func scalarCount(_ bytes: ArraySlice<UInt8>) -> Int {
    var count = 0
    for byte in bytes where byte & 0xC0 != 0x80 { count += 1 }
    return count
  }

  /// The line and column of byte `offset`.
  static func position(ofByte offset: Int, in bytes: [UInt8]) -> TextPosition {
    let end = min(max(offset, 0), bytes.count)
    var line = 1
    var lineStart = 0
    var i = 0
    while i < end {
      if bytes[i] == UInt8(ascii: "\n") {
        line += 1
        lineStart = i + 1
      }
      i += 1
    }
    return TextPosition(line: line, column: scalarCount(bytes[lineStart..<end]) + 1)
  }
}
