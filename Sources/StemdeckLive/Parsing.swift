import StemdeckControl
import StemdeckJack
import StemdeckSession
import StemdeckText

/// A rejected command line: printed as `error: <message>`. Why is kept as a case: a refusal of
/// the control layer (`mixer`) or the JACK driver (`jack`) keeps its typed error, so a test or a
/// front end can match on what was refused; the console's own refusals (a command's syntax, a word
/// it does not know) are words. Two errors are equal when they say the same (`message`).
public struct CommandError: Error, CustomStringConvertible, Equatable {
  public enum Reason: Sendable {
    /// The control layer refused (its typed reason in `MixerError.reason`).
    case mixer(MixerError)
    /// The JACK driver refused.
    case jack(JackError)
    /// A command word the console does not know (`suggestion`: the closest one it does).
    case unknownCommand(String, suggestion: String?)
    /// A command given the wrong words: its usage line (after `usage: `).
    case usage(String)
    /// The console's own refusal, in words.
    case console(String)
  }
  public let reason: Reason
  public init(_ message: String) { reason = .console(message) }
  public init(_ error: MixerError) { reason = .mixer(error) }
  public init(_ error: JackError) { reason = .jack(error) }
  public init(usage: String) { reason = .usage(usage) }
  public init(unknownCommand word: String, suggestion: String?) { reason = .unknownCommand(word, suggestion: suggestion) }
  /// The line after `error: `, in the console's words.
  public var message: String {
    switch reason {
    case .mixer(let e): return e.consoleWords
    case .jack(let e): return e.consoleWords
    case .usage(let line): return "usage: " + line
    case .unknownCommand(let word, let guess):
      let shown = ValueParser.printable(word)
      if let guess { return "unknown command '\(shown)' — did you mean '\(guess)'? (type 'help' for the list)" }
      return "unknown command '\(shown)' (type 'help' for the list)"
    case .console(let m): return m
    }
  }
  /// The control layer's error, when it was one.
  public var mixerError: MixerError? { if case .mixer(let e) = reason { e } else { nil } }
  /// The JACK driver's error, when it was one.
  public var jackError: JackError? { if case .jack(let e) = reason { e } else { nil } }
  public var description: String { message }
  public static func == (a: CommandError, b: CommandError) -> Bool { a.message == b.message }
}

/// Splits command lines into words.
///
/// Words are separated by spaces or tabs; single or double quotes group words with spaces
/// ("add 'My Drums.wav' as drums"); a backslash escapes the next character outside single
/// quotes; `#` at the start of a word begins a comment. `;` outside quotes separates commands
/// (used by `-c`). Inside double quotes `\xNN` is the byte NN (hex, `\x01`–`\xff`): a file
/// name that is not UTF-8 is typed that way (`add "caf\xe9.wav"`; RawFileName).
public enum Tokenizer {
  /// The commands on one line, each as its words. Unbalanced quotes are an error.
  public static func commands(in line: String) throws(CommandError) -> [[String]] {
    var commands: [[String]] = []
    var words: [String] = []
    var word = ""
    var inWord = false
    var quote: Character?
    var escaping = false
    var escapingInQuote = false
    // After `\x` inside double quotes: the hex digits read so far (nil: not in one).
    var hexDigits: String?
    var braceDepth = 0
    func finishWord() {
      words.append(RawFileName.normalized(word))
      word = ""
      inWord = false
    }
    for c in line {
      if let digits = hexDigits {
        guard c.isHexDigit, c.isASCII else {
          throw CommandError("\\x in quotes needs two hexadecimal digits (\\x01–\\xff; got '\\x\(printableText(digits + String(c)))')")
        }
        if digits.count == 0 { hexDigits = String(c); continue }
        hexDigits = nil
        let value = UInt8(digits + String(c), radix: 16)!
        guard value != 0 else { throw CommandError("\\x00: a NUL byte cannot be part of a word") }
        word.unicodeScalars.append(value < 0x80 ? Unicode.Scalar(value) : RawFileName.scalar(forByte: value))
        continue
      }
      // `{ … }` is one word (the body of `at POSITION { cmd; cmd }`), semicolons included.
      if braceDepth > 0 {
        word.append(c)
        if c == "{" { braceDepth += 1 } else if c == "}" { braceDepth -= 1 }
        continue
      }
      if c == "{" && quote == nil && !escaping && !inWord {
        braceDepth = 1
        word.append(c)
        inWord = true
        continue
      }
      if escaping {
        escaping = false
        inWord = true
        if escapingInQuote && c == "x" { hexDigits = ""; continue }
        word.append(c)
        continue
      }
      if let q = quote {
        if c == q { quote = nil } else if c == "\\" && q == "\"" { escaping = true; escapingInQuote = true } else { word.append(c) }
        continue
      }
      switch c {
      case "\\": escaping = true; escapingInQuote = false; inWord = true
      case "'", "\"": quote = c; inWord = true
      case " ", "\t", "\r", "\n":
        if inWord { finishWord() }
      case ";":
        if inWord { finishWord() }
        if !words.isEmpty { commands.append(words) }
        words = []
      case "#" where !inWord:
        if !words.isEmpty { commands.append(words) }
        return commands
      default:
        word.append(c); inWord = true
      }
    }
    if quote != nil { throw CommandError("unbalanced quote: a \(quote == "'" ? "'" : "\"") is not closed") }
    if braceDepth > 0 { throw CommandError("unbalanced brace: a '{' is not closed") }
    if hexDigits != nil { throw CommandError("\\x in quotes needs two hexadecimal digits (\\x01–\\xff)") }
    if escaping { word.append("\\") }
    if inWord { finishWord() }
    if !words.isEmpty { commands.append(words) }
    return commands
  }
}

/// Parsing of the values people type.
public enum ValueParser {
  /// A finite number (no NaN, no inf, no hex): "0.8", "-0.3", "2", ".5".
  public static func number(_ text: String, _ what: String) throws(CommandError) -> Double {
    let allowed = "0123456789.-+eE"
    guard !text.isEmpty, text.count <= 32, text.allSatisfy({ allowed.contains($0) }),
      let v = Double(text), v.isFinite
    else {
      throw CommandError("\(what) must be a number (got '\(printable(text))')")
    }
    return v == 0 ? 0 : v  // -0 → 0
  }

  /// A whole number: "3", "-1".
  public static func integer(_ text: String, _ what: String) throws(CommandError) -> Int {
    guard !text.isEmpty, text.count <= 18, let v = Int(text) else {
      throw CommandError("\(what) must be a whole number (got '\(printable(text))')")
    }
    return v
  }

  /// A volume: linear ("0.8") or decibels ("-6dB", "-6 dB" as two words joined by the caller,
  /// "+3dB", "-inf dB" for silence), read as the session format reads it (`Decibels.linearGain`).
  /// Returns linear gain, checked against `SettingRule.volume`.
  public static func volume(_ text: String) throws(CommandError) -> Double {
    let rule = SettingRule.volume
    if text.lowercased().hasSuffix("db") {
      guard let linear = Decibels.linearGain(text: text) else {
        throw CommandError(rule.refusal("volume", got: "'\(printable(text))'"))
      }
      guard rule.accepts(linear) else { throw CommandError(rule.refusal("volume", got: text + Decibels.gainNote(linear))) }
      return linear
    }
    let linear = try number(text, "volume")
    guard rule.accepts(linear) else { throw CommandError(rule.refusal("volume", got: linear)) }
    return linear
  }

  /// A position: "83.5" seconds, "1:23.5" m:ss, "1:02:03" h:mm:ss. Relative forms "+10"/"-5"
  /// return `relative: true`.
  public static func position(_ text: String) throws(CommandError) -> (seconds: Double, relative: Bool) {
    var body = Substring(text)
    var sign = 1.0
    var relative = false
    if body.hasPrefix("+") {
      relative = true; body = body.dropFirst()
    } else if body.hasPrefix("-") {
      relative = true; sign = -1; body = body.dropFirst()
    }
    let parts = body.split(separator: ":", omittingEmptySubsequences: false)
    guard (1...3).contains(parts.count), !body.isEmpty else {
      throw CommandError(
        "position must be seconds (83.5), m:ss (1:23.5) or h:mm:ss, optionally +/- for relative (got '\(printable(text))')")
    }
    var seconds = 0.0
    for (i, part) in parts.enumerated() {
      let isLast = i == parts.count - 1
      guard !part.isEmpty, part.allSatisfy({ "0123456789.".contains($0) }), let v = Double(part), v.isFinite,
        isLast || !part.contains(".")
      else {
        throw CommandError(
          "position must be seconds (83.5), m:ss (1:23.5) or h:mm:ss, optionally +/- for relative (got '\(printable(text))')")
      }
      if i > 0 && v >= 60 { throw CommandError("position '\(printable(text))': minutes and seconds after ':' must be below 60") }
      seconds = seconds * 60 + v
    }
    return (sign * seconds, relative)
  }

  /// A duration: "2", "2s", "500ms", "1:30".
  public static func duration(_ text: String) throws(CommandError) -> Double {
    let lower = text.lowercased()
    if lower.hasPrefix("-") || lower.hasPrefix("+") {
      throw CommandError("duration must not have a sign (got '\(printable(text))')")
    }
    let message = "duration must be seconds (2, 2s, 500ms) or m:ss (1:30) (got '\(printable(text))')"
    if lower.hasSuffix("ms") {
      guard let v = try? number(String(lower.dropLast(2)), "duration") else { throw CommandError(message) }
      return v / 1000
    }
    if lower.hasSuffix("s") {
      guard let v = try? number(String(lower.dropLast()), "duration") else { throw CommandError(message) }
      return v
    }
    guard let p = try? position(text) else { throw CommandError(message) }
    guard !p.relative else { throw CommandError("duration must not have a sign (got '\(printable(text))')") }
    return p.seconds
  }

  public static func onOff(_ text: String, _ what: String) throws(CommandError) -> Bool {
    switch text.lowercased() {
    case "on", "yes", "true", "1": return true
    case "off", "no", "false", "0": return false
    default: throw CommandError("\(what) must be on or off (got '\(printable(text))')")
    }
  }

  /// Text made safe to echo in an error: control characters shown as escapes, long text cut.
  public static func printable(_ text: String) -> String { printableText(text) }
}

extension String {
  package func trimmingSpaces() -> String {
    var s = Substring(self)
    while s.first == " " { s = s.dropFirst() }
    while s.last == " " { s = s.dropLast() }
    return String(s)
  }

  package func padded(_ width: Int) -> String {
    count >= width ? self : self + String(repeating: " ", count: width - count)
  }

  package func padLeft(_ width: Int) -> String {
    count >= width ? self : String(repeating: " ", count: width - count) + self
  }
}

/// The `… over TIME [exp|lin]` suffix of vol, pan and rate.
package enum GlideSyntax {
  /// Splits arguments into the value words and the glide time (nil: no glide) and curve.
  package static func split(
    _ args: [String], command: String
  ) throws(CommandError) -> (value: [String], seconds: Double?, exponential: Bool) {
    guard let at = args.firstIndex(where: { $0.lowercased() == "over" }) else { return (args, nil, false) }
    let rest = Array(args[(at + 1)...])
    guard let time = rest.first else { throw CommandError("\(command): 'over' needs a time, e.g. 'over 4s' or 'over 500ms'") }
    let seconds = try ValueParser.duration(time)
    var exponential = false
    if rest.count > 1 {
      switch rest[1].lowercased() {
      case "exp", "exponential": exponential = true
      case "lin", "linear": exponential = false
      default: throw CommandError("\(command): after the glide time comes 'exp' or 'lin' (got '\(ValueParser.printable(rest[1]))')")
      }
    }
    if rest.count > 2 { throw CommandError("\(command): too many words after 'over \(time)'") }
    return (Array(args[..<at]), seconds, exponential)
  }
}
