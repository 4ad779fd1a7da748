// Every numeric setting's rule, written once: its range (`SettingRange`) and the words that say
// what is allowed. The session decoder, `Session.validate()`, `Mixer`'s setters and validation
// (StemdeckControl) and the console's parsers (StemdeckConsole) all check and word a refusal
// through these, so a value one of them refuses is refused by all, with the same range text
// (`Tests/StemdeckConsoleTests/SettingRuleTests.swift` holds the REPL and the decoder to that).

/// One numeric setting's rule: the allowed range and the sentence that states it.
///
/// A session file's error says `stems[0].pan: must be a number between -1 and 1 (got 7)`; the
/// console's says `pan must be a number between -1 and 1 (got 7)`. `allowed` is the shared part.
public struct SettingRule: Sendable, Equatable {
  /// The allowed values, bounds included.
  public let range: ClosedRange<Double>
  /// Whether only whole numbers are allowed (`loops`, `beatsPerBar`).
  public let isInteger: Bool
  /// What is allowed, as it follows "must be": `a number between -1 and 1`.
  public let allowed: String

  init(_ range: ClosedRange<Double>, integer: Bool = false, allowed: String) {
    self.range = range
    self.isInteger = integer
    self.allowed = allowed
  }

  init(_ range: ClosedRange<Int>, allowed: String) {
    self.init(Double(range.lowerBound)...Double(range.upperBound), integer: true, allowed: allowed)
  }

  /// True if `value` is finite, inside `range` and (for integer settings) whole. NaN and the
  /// infinities never are.
  public func accepts(_ value: Double) -> Bool {
    value.isFinite && range.contains(value) && (!isInteger || value == value.rounded(.towardZero))
  }

  /// True if `value` is inside `range`.
  public func accepts(_ value: Int) -> Bool {
    range.contains(Double(value))
  }

  /// The rule as the session format states it: `must be a number between -1 and 1`.
  public var rule: String { "must be " + allowed }

  /// A value as a refusal shows it after "got": as the session file writes numbers (`0.45`, `3`).
  public static func shown(_ value: Double) -> String { SessionRules.number(value) }

  /// A refusal in the control API's and the console's words:
  /// `pan must be a number between -1 and 1 (got 7)`.
  public func refusal(_ what: String, got value: Double) -> String {
    refusal(what, got: SessionRules.number(value))
  }

  /// A refusal naming the value as the user wrote it: `volume must be … (got +7dB, which is a gain of 2.239)`.
  public func refusal(_ what: String, got text: String) -> String {
    "\(what) \(rule) (got \(text))"
  }
}

extension SettingRule {
  private static func number(_ value: Double) -> String { SessionRules.number(value) }

  /// The rule whose sentence is `what` followed by its bounds and `note`: `a frequency in Hz from
  /// 20 to 500` (the bounds as the session file writes numbers).
  static func span(_ range: ClosedRange<Double>, _ what: String, note: String = "") -> SettingRule {
    SettingRule(range, allowed: "\(what) from \(number(range.lowerBound)) to \(number(range.upperBound))" + note)
  }

  /// The whole-number rule whose sentence is `what` followed by its bounds: `a whole number of
  /// bars from 0 to 16`.
  static func span(_ range: ClosedRange<Int>, _ what: String) -> SettingRule {
    SettingRule(range, allowed: "\(what) from \(range.lowerBound) to \(range.upperBound)")
  }

  /// The rule `a number between -1 and 1`, then `note`.
  static func between(_ range: ClosedRange<Double>, note: String = "") -> SettingRule {
    SettingRule(range, allowed: "a number between \(number(range.lowerBound)) and \(number(range.upperBound))" + note)
  }

  /// Linear gain of a stem, an effect or the master; a session file (and the console) may also
  /// give it in dB (`Decibels.linearGain(text:)`).
  public static let volume = between(SettingRange.volume, note: ", or a level in dB such as \"-6dB\"")
  /// Pan of a stem or an effect.
  public static let pan = between(SettingRange.pan)
  /// A stem's varispeed ratio.
  public static let rate = between(SettingRange.rate)
  /// A stem's extra repetitions.
  public static let loops = SettingRule(
    SettingRange.loops, allowed: "an integer from -1 (forever) up to \(SettingRange.loops.upperBound)")
  /// A stem's start offset on the transport, in seconds.
  public static let startOffset = span(SettingRange.startOffset, "a number of seconds")
  /// The transport position (saved in a session, or sought to), in seconds.
  public static let position = span(SettingRange.position, "a number of seconds")
  /// The overlap of a setlist crossfade, in seconds.
  public static let crossfadeSeconds = span(SettingRange.crossfadeSeconds, "a number of seconds")
  /// The session tempo's beats per minute.
  public static let bpm = span(SettingRange.bpm, "a number of beats per minute")
  /// The session tempo's beats in one bar.
  public static let beatsPerBar = span(SettingRange.beatsPerBar, "an integer number of beats per bar")
  /// A stem's loop start or end, in seconds of its audio file.
  public static let loopPoint = span(SettingRange.loopPoint, "a number of seconds in the stem's audio file")
  /// The crossfade at a stem's loop seam, in seconds.
  public static let crossfade = span(
    SettingRange.crossfade, "a number of seconds", note: " (the crossfade at the loop seam; 0 for none)")
  /// A stem's pitch shift in stretch mode, in semitones.
  public static let pitch = span(SettingRange.pitch, "a number of semitones")
}

/// The rules for stem and effect names (`SessionRules.nameProblem`), for the mixer and the console:
/// the session file, `add … as NAME`, `record NAME` and `sfx load NAME` refuse the same names
/// with the same sentence.
public enum NameRules {
  /// Names whose direct-out ports would be stemdeck's own (`master_L`, `in_L`, `sfx_L`): JACK
  /// refused to register them at every poll, and `meters` showed two master rows. Any case.
  public static let reservedForPorts: Set<String> = ["master", "in", "sfx"]

  /// Why `name` is not a valid stem name, or nil: `invalid stem name "a b": a space is not allowed (…)`.
  public static func stemProblem(_ name: String) -> String? {
    SessionRules.nameProblem(name, of: .stem)
  }

  /// Why `name` is not a valid effect name, or nil.
  public static func effectProblem(_ name: String) -> String? {
    SessionRules.nameProblem(name, of: .effect)
  }

  /// Why `name` is not a valid scene name, or nil (SceneSettings.swift).
  public static func sceneProblem(_ name: String) -> String? {
    SessionRules.nameProblem(name, of: .scene)
  }
}
