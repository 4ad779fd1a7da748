// File names that are not UTF-8. Linux file names are bytes; a Swift String holds only valid
// Unicode. Every byte of a name that is not part of valid UTF-8 is held in a String as one
// private-use character, U+10FE00 + the byte (U+10FE80–U+10FEFF), and turned back into that byte
// where the name reaches the file system. How people see and type it (README, *Session files*):
//   printed        `\xNN` (terminalSafe, printableText)
//   typed          `"\xNN"` inside double quotes (Tokenizer); Tab inserts that form
//   session file   the JSON escape `\udbff\udeNN` (the character's UTF-16 pair), read back as is

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

public enum RawFileName {
  /// The character that stands for `byte` (0x80–0xFF) of a name that is not UTF-8.
  public static func scalar(forByte byte: UInt8) -> Unicode.Scalar {
    Unicode.Scalar(0x10FE00 + UInt32(byte))!
  }

  /// The byte `scalar` stands for, or nil for any other character.
  public static func byte(of scalar: Unicode.Scalar) -> UInt8? {
    (0x10FE80...0x10FEFF).contains(scalar.value) ? UInt8(scalar.value - 0x10FE00) : nil
  }

  /// Whether `text` holds a byte that is not UTF-8.
  public static func holdsRawBytes(_ text: String) -> Bool {
    text.unicodeScalars.contains { byte(of: $0) != nil }
  }

  /// A name as the file system gives it: valid UTF-8 decoded, every other byte as its character.
  public static func string<C: Collection<UInt8>>(fromBytes bytes: C) -> String {
    if let text = String(validating: bytes, as: UTF8.self), !holdsRawBytes(text) { return text }
    var out = String.UnicodeScalarView()
    // Decode sequence by sequence; at an error, keep the first byte of the bad sequence as a
    // raw byte and start again after it.
    let all = Array(bytes)
    var start = 0
    while start < all.count {
      var decoder = UTF8()
      var it = all[start...].makeIterator()
      switch decoder.decode(&it) {
      case .scalarValue(let s):
        // A name that really holds one of the stand-in characters keeps its bytes as bytes,
        // so that it still names the same file.
        if byte(of: s) != nil {
          for b in all[start..<(start + UTF8.width(s))] { out.append(scalar(forByte: b)) }
        } else {
          out.append(s)
        }
        start += UTF8.width(s)
      case .error:
        out.append(scalar(forByte: all[start]))
        start += 1
      case .emptyInput:
        start = all.count
      }
    }
    return String(out)
  }

  /// The bytes `text` names on the file system: UTF-8, with each raw-byte character as its byte.
  public static func bytes(_ text: String) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(text.utf8.count)
    for s in text.unicodeScalars {
      if let b = byte(of: s) { out.append(b) } else { out.append(contentsOf: String(s).utf8) }
    }
    return out
  }

  /// `text` as it should be read: raw bytes that together form valid UTF-8 (typed as
  /// `"\xc3\xa9"`) become the character they spell.
  public static func normalized(_ text: String) -> String {
    holdsRawBytes(text) ? string(fromBytes: bytes(text)) : text
  }

  /// The file system's C string for `path` (its bytes, NUL-terminated), for a system call that
  /// takes a path: `rename(RawFileName.cPath(a), RawFileName.cPath(b))`.
  public static func cPath(_ path: String) -> [CChar] {
    bytes(path).map { CChar(bitPattern: $0) } + [0]
  }

  /// Runs `body` with the file system's C string for `path` (its bytes, NUL-terminated).
  public static func withCPath<R>(_ path: String, _ body: (UnsafePointer<CChar>) -> R) -> R {
    if !holdsRawBytes(path) { return path.withCString(body) }
    let c = bytes(path).map { CChar(bitPattern: $0) } + [0]
    return c.withUnsafeBufferPointer { body($0.baseAddress!) }
  }

  /// `text` with each raw byte written `\xNN` (lower-case hex), for showing it.
  public static func escaped(_ text: String) -> String {
    guard holdsRawBytes(text) else { return text }
    var out = ""
    for s in text.unicodeScalars {
      if let b = byte(of: s) {
        out += "\\x" + (b < 16 ? "0" : "") + String(b, radix: 16)
      } else {
        out.unicodeScalars.append(s)
      }
    }
    return out
  }
}
