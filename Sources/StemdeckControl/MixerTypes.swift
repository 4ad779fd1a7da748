import Foundation
import StemdeckAudioFile
import StemdeckEngine
import StemdeckSession

/// A rejected control request: one line saying what was wrong and what is allowed. An error
/// about a file (a session being opened or rendered) names it in `file`, apart from `text`,
/// so a front end can name the file as its user gave it (`naming(_:as:)`). The text states the
/// fact; a render option or a suggested step in it is data (`ControlText`), worded by the front
/// end (`words(option:action:)`); `message` words them neutrally.
public struct MixerError: Error, CustomStringConvertible, Equatable, Sendable {
  /// The file the error is about, as the mixer was given it (absolute), or nil.
  public let file: String?
  /// What was wrong (with `file`, when there is one).
  public let text: ControlText
  public init(_ text: ControlText) {
    file = nil
    self.text = text
  }
  public init(file: String, _ text: ControlText) {
    self.file = file
    self.text = text
  }
  /// `text` in neutral words.
  public var detail: String { text.plain }
  /// The whole line in neutral words: `FILE: detail`, or the detail alone.
  public var message: String { file.map { "\($0): \(detail)" } ?? detail }
  public var description: String { message }

  /// The whole line with the options and actions worded by a front end.
  public func words(option: (RenderOption) -> String, action: (MixerAction) -> String) -> String {
    let d = text.words(option: option, action: action)
    return file.map { "\($0): \(d)" } ?? d
  }

  /// The same error with `file` shown as `shown` when it is `file` (the path as typed).
  public func naming(_ file: String, as shown: String) -> MixerError {
    self.file == file ? MixerError(file: shown, text) : self
  }

  /// Checks `value` against a setting's rule (StemdeckSession's `SettingRule`, the one the session
  /// format and the console use): `pan must be a number between -1 and 1 (got 7)`.
  static func check(_ value: Double, _ rule: SettingRule, _ what: String) throws(MixerError) {
    guard rule.accepts(value) else { throw MixerError(ControlText(rule.refusal(what, got: value))) }
  }

  /// `check` for an integer setting (`loops`).
  static func check(_ value: Int, _ rule: SettingRule, _ what: String) throws(MixerError) {
    guard rule.accepts(value) else { throw MixerError(ControlText(rule.refusal(what, got: String(value)))) }
  }

  /// "unknown stem 'drms' — did you mean 'drums'?"
  public static func unknownStem(_ rawName: String, known: [String]) -> MixerError {
    let name = printableText(rawName)
    if known.isEmpty { return MixerError("unknown stem '\(name)' (there are no stems; \(action: .addStem))") }
    if let guess = Suggestion.closest(to: rawName, in: known) {
      return MixerError("unknown stem '\(name)' — did you mean '\(guess)'?")
    }
    return MixerError("unknown stem '\(name)' (stems: \(known.joined(separator: ", ")))")
  }
}

/// Stem names made up for files (the rules themselves are StemdeckSession's `NameRules`).
public enum StemName {
  /// A valid, unused stem name derived from a file path ("Drums Loop.wav" → "Drums_Loop").
  public static func derived(fromPath path: String, taken: [String]) -> String {
    var base = String(path.split(separator: "/").last ?? "stem")
    if let dot = base.lastIndex(of: "."), dot != base.startIndex { base = String(base[..<dot]) }
    var cleaned = String(
      base.unicodeScalars.map { c -> Character in
        StemSettings.isNameCharacter(c) ? Character(c) : "_"
      })
    // Not '.' or '-' first (hidden files, folders, options: `SessionRules.nameProblem`).
    while let first = cleaned.first, first == "." || first == "-" { cleaned.removeFirst() }
    if cleaned.isEmpty || cleaned.lowercased() == "all" { cleaned = "stem" }
    if NameRules.reservedForPorts.contains(cleaned.lowercased()) { cleaned += "-stem" }
    if cleaned.count > 60 { cleaned = String(cleaned.prefix(60)) }
    var name = cleaned
    var n = 2
    while taken.contains(name) { name = "\(cleaned)-\(n)"; n += 1 }
    return name
  }
}

/// "Did you mean" suggestions by edit distance.
public enum Suggestion {
  public static func closest(to word: String, in candidates: [String]) -> String? {
    // One edit per three characters; very short words only match on a single edit if they are
    // at least two characters long (so 'c' does not "mean" 'a').
    //
    // The distance is at least the difference in length, so a candidate whose length is further
    // from the word's than the limit is skipped without the quadratic table: a mistyped word of
    // megabytes (a pasted file) costs one pass over it, not its length times each name's
    // (1 MB took 22 s and 3 MB 633 MB of memory). Words far longer than every name stop sooner.
    let (compared, limit) = worthComparing(word, candidates)
    let lowered = word.lowercased()
    var best: (String, Int)?
    for c in compared {
      let d = distance(lowered, c.lowercased())
      if d <= limit, d < (best?.1 ?? Int.max) { best = (c, d) }
    }
    return best?.0
  }

  /// The candidates `closest` builds an edit-distance table for (those whose length is within
  /// `limit` edits of the word's), and that limit. None for a word far longer than every name.
  static func worthComparing(_ word: String, _ candidates: [String]) -> (candidates: [String], limit: Int) {
    let longest = candidates.reduce(0) { max($0, $1.utf8.count) }
    guard word.utf8.count <= 8 * longest + 8 else { return ([], 0) }
    let length = word.count
    let limit = length < 2 ? 0 : max(1, length / 3)
    return (candidates.filter { abs($0.count - length) <= limit }, limit)
  }

  /// Edit distance counting a swap of two neighbouring letters as one edit ("paly" → "play"):
  /// the optimal-string-alignment variant of Damerau–Levenshtein.
  static func distance(_ a: String, _ b: String) -> Int {
    let a = Array(a), b = Array(b)
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
    for i in 0...a.count { d[i][0] = i }
    for j in 0...b.count { d[0][j] = j }
    for i in 1...a.count {
      for j in 1...b.count {
        let cost = a[i - 1] == b[j - 1] ? 0 : 1
        d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
        if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
          d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
        }
      }
    }
    return d[a.count][b.count]
  }
}

/// User text made safe to show in a message: control characters as escapes, long text cut.
public func printableText(_ text: String) -> String {
  var out = ""
  for scalar in text.unicodeScalars.prefix(60) {
    if scalar.value < 0x20 || scalar.value == 0x7f {
      out += "\\u{\(String(scalar.value, radix: 16))}"
    } else if RawFileName.byte(of: scalar) != nil {
      out += RawFileName.escaped(String(scalar))
    } else {
      out.unicodeScalars.append(scalar)
    }
  }
  if text.unicodeScalars.count > 60 { out += "…" }
  return out
}

/// `text` safe to print on a terminal: every control character that could move the cursor,
/// retitle the window or rewrite the screen (C0 except newline and tab, DEL, the C1 range
/// U+0080–U+009F, and the bidirectional overrides U+202A–U+202E, U+2066–U+2069) is written as
/// `\u{1b}`. Nothing is cut. Applied to every line the console prints (`Console.write`, stdout
/// and stderr lines), since paths from session files and other clients' JACK port names are
/// whatever their authors made them. Idempotent.
public func terminalSafe(_ text: String) -> String {
  func unsafe(_ v: UInt32) -> Bool {
    (v < 0x20 && v != 0x0A && v != 0x09) || (0x7F...0x9F).contains(v)
      || (0x202A...0x202E).contains(v) || (0x2066...0x2069).contains(v)
  }
  guard text.unicodeScalars.contains(where: { unsafe($0.value) || RawFileName.byte(of: $0) != nil }) else { return text }
  var out = ""
  for scalar in text.unicodeScalars {
    if unsafe(scalar.value) {
      out += "\\u{\(String(scalar.value, radix: 16))}"
    } else if RawFileName.byte(of: scalar) != nil {
      out += RawFileName.escaped(String(scalar))
    }  // a name that is not UTF-8
    else {
      out.unicodeScalars.append(scalar)
    }
  }
  return out
}

/// `terminalSafe` for text that must stay one line (a console line, a reply's output line, the
/// mixer view's status): a line feed, the Unicode line and paragraph separators and the
/// invisible direction marks are escaped too, so a file name or another JACK client's port name
/// can neither start a line of its own (a fake `event:` or `error:` in a script's or `ctl`'s
/// output) nor reorder what is printed.
public func lineSafe(_ text: String) -> String {
  let safe = terminalSafe(text)
  func breaks(_ v: UInt32) -> Bool { v == 0x0A || v == 0x2028 || v == 0x2029 || v == 0x200E || v == 0x200F || v == 0x061C }
  guard safe.unicodeScalars.contains(where: { breaks($0.value) }) else { return safe }
  var out = ""
  for scalar in safe.unicodeScalars {
    if breaks(scalar.value) { out += "\\u{\(String(scalar.value, radix: 16))}" } else { out.unicodeScalars.append(scalar) }
  }
  return out
}

/// A reading of a meter, in dB (AVAudioPlayer's scale: -160 … 0 and above for overs).
public struct MeterReading: Sendable, Equatable {
  public struct Channel: Sendable, Equatable {
    public var peak: Double
    public var average: Double
    public var hold: Double
    public var clips: Int
  }
  public var channels: [Channel]

  init(cells: UnsafeMutablePointer<MeterCells>, channels count: Int) {
    func read(_ c: borrowing MeterCell) -> Channel {
      Channel(
        peak: Decibels.fromAmplitude(Double(c.peak)), average: Decibels.fromAmplitude(Double(c.rms)),
        hold: Decibels.fromAmplitude(Double(c.hold)), clips: c.clips)
    }
    var list = [read(cells.pointee.left)]
    if count > 1 { list.append(read(cells.pointee.right)) }
    channels = list
  }
}

/// What one stem is doing, for `stems` and `status`.
public struct StemStatus: Sendable {
  public var settings: StemSettings
  public var path: String
  public var info: SoundFileInfo
  public var loopIndex: Int
  /// Seconds into the file (within the current loop).
  public var positionInFile: Double
  /// The file's length in seconds.
  public var length: Double
  public var finished: Bool
  public var underruns: Int
  public var failed: Bool
  public var meter: MeterReading
  /// Where its running glides have got to (nil: that parameter is not gliding); the settings
  /// hold the targets.
  public var gliding = GlideReading()
  public var glidingVolume: Double? { gliding.volume }
  public var glidingPan: Double? { gliding.pan }
  public var glidingRate: Double? { gliding.rate }
  public var isGliding: Bool { gliding.any }
}

/// A session stem whose audio file could not be opened. It stays in the session (and is saved
/// back unchanged) so nothing is lost; it plays nothing until the session is opened again.
public struct OfflineStem: Sendable, Equatable {
  public var settings: StemSettings
  /// The path stemdeck looked at.
  public var path: String
  public var reason: String
  /// Its place among the session's stems, so a save puts it back where it was.
  public var index: Int = 0
}

/// A session's sound effect whose file could not be loaded: kept so a save writes it back.
struct OfflineEffect {
  var settings: EffectSettings
  var path: String
  /// Its place among the session's effects.
  var index: Int
}

/// Things that happened, reported to the user.
public enum MixerEvent: Sendable, Equatable, CustomStringConvertible {
  case stemFinished(String)
  case allFinished
  case underrun(String)
  case primeTimeout
  case badSamples(String)
  case readFailed(String, String)
  case takeRecorded(String, String, Double, Int)
  case recordingFailed(String, String)
  /// A background `sfx load` finished (the effect can be fired) or failed (nothing was loaded).
  case effectLoaded(String)
  case effectFailed(String, ControlText)
  /// `midi learn` bound a control (the mapping as `midi maps` shows it), or a MIDI action failed.
  case midiLearned(String)
  case midiFailed(ControlText)
  /// A MIDI press of a show command (`next`, `prev`, `stop`): the front end runs it as its
  /// command of that name, and reports what it says.
  case midiCommand(String)
  /// Insert (strip, 1-based position, plugin name) put out NaN or infinity and was bypassed.
  case insertFaulted(String, Int, String)

  public var description: String {
    switch self {
    case .stemFinished(let name): return "stem '\(name)' finished"
    case .allFinished: return "all stems finished"
    case .underrun(let name): return "underrun: stem '\(name)' ran out of audio from disk (playing silence until it catches up)"
    case .primeTimeout: return "the disk was slow to fill after a start or seek; some stems started late"
    case .badSamples(let name): return "stem '\(name)' produced NaN or infinite samples and was muted"
    case .insertFaulted(let strip, let position, let plugin):
      return "insert \(position) of '\(strip)' (\(plugin)) put out NaN or infinite samples and was bypassed"
    case .readFailed(let name, let message): return "stem '\(name)' can no longer be read: \(message)"
    case .takeRecorded(let name, let path, let seconds, let dropped):
      return "take '\(name)' recorded: \(NumberFormat.time(seconds)) in \(path), added as a stem"
        + (dropped > 0 ? " (\(dropped) frames dropped: the disk was too slow)" : "")
    case .recordingFailed(let name, let message): return "recording '\(name)': \(message)"
    case .effectLoaded(let name): return "effect '\(name)' loaded"
    case .effectFailed(let name, let message): return "effect '\(name)' failed: \(message.plain)"
    case .midiLearned(let mapping): return "midi learned: \(mapping)"
    case .midiFailed(let message): return "midi: \(message.plain)"
    case .midiCommand(let command): return "midi: \(command)"
    }
  }
}

/// Formatting numbers for messages and tables.
public enum NumberFormat {
  /// A number as people write it: "7", "0.25", "-0.3", "nan".
  public static func plain(_ v: Double) -> String {
    if v.isNaN { return "nan" }
    if v.isInfinite { return v > 0 ? "inf" : "-inf" }
    if v == v.rounded(), abs(v) < 1e15 { return String(Int(v)) }
    return String(v)
  }

  /// m:ss.mmm (h:mm:ss.mmm past an hour).
  public static func time(_ seconds: Double) -> String {
    guard seconds.isFinite else { return "--:--.---" }
    let totalMillis = Int((max(0, seconds) * 1000).rounded())
    let ms = totalMillis % 1000
    let s = (totalMillis / 1000) % 60
    let m = (totalMillis / 60000) % 60
    let h = totalMillis / 3_600_000
    let msText = String(ms).leftPadded(to: 3)
    if h > 0 { return "\(h):\(String(m).leftPadded(to: 2)):\(String(s).leftPadded(to: 2)).\(msText)" }
    return "\(m):\(String(s).leftPadded(to: 2)).\(msText)"
  }

  /// A level in dB with `decimals` decimals ("-12.3"), or "-inf" at or below −160 dB as shown
  /// (`Decibels.isSilent`): how every level is printed, meters, `analyze` and the render summary.
  public static func level(_ decibels: Double, _ decimals: Int = 1) -> String {
    Decibels.isSilent(decibels, decimals: decimals) ? "-inf" : fixed(decibels, decimals)
  }

  /// Fixed decimals without Foundation's String(format:).
  public static func fixed(_ v: Double, _ decimals: Int) -> String {
    guard v.isFinite else { return plain(v) }
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let r = (abs(v) * scale).rounded()
    let whole = Int(r / scale)
    let frac = Int(r - Double(whole) * scale)
    let sign = v < 0 && r > 0 ? "-" : ""
    if decimals == 0 { return "\(sign)\(whole)" }
    return "\(sign)\(whole).\(String(frac).leftPadded(to: decimals))"
  }
}

extension String {
  func leftPadded(to width: Int, with pad: Character = "0") -> String {
    count >= width ? self : String(repeating: pad, count: width - count) + self
  }
}

extension NSRecursiveLock {
  /// Runs `body` holding the lock, keeping `body`'s typed error (Foundation's `withLock` rethrows
  /// untyped errors).
  @inlinable
  public func locked<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
    lock()
    defer { unlock() }
    return try body()
  }
}

/// Something a session load let through but the user should know (a stem left offline, an
/// effect not loaded, a recording folder outside the session's folder), about `file` (the
/// session file, absolute) when it names one.
public struct MixerWarning: CustomStringConvertible, Equatable, Sendable {
  public let file: String?
  /// What happened, with options and actions as data (`ControlText`).
  public let text: ControlText
  public init(file: String?, _ text: ControlText) {
    self.file = file
    self.text = text
  }
  /// `text` in neutral words.
  public var detail: String { text.plain }
  public var description: String { file.map { "\($0): \(detail)" } ?? detail }

  /// The whole line with the options and actions worded by a front end.
  public func words(option: (RenderOption) -> String, action: (MixerAction) -> String) -> String {
    let d = text.words(option: option, action: action)
    return file.map { "\($0): \(d)" } ?? d
  }

  /// The same warning with `file` shown as `shown` when it is `file` (the path as typed).
  public func naming(_ file: String, as shown: String) -> MixerWarning {
    self.file == file ? MixerWarning(file: shown, text) : self
  }
}
