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

  /// Linear gain of a stem, an effect or the master; a session file (and the console) may also
  /// give it in dB (`Decibels.linearGain(text:)`).
  public static let volume = SettingRule(
    SettingRange.volume,
    allowed: "a number between \(number(SettingRange.volume.lowerBound)) and "
      + "\(number(SettingRange.volume.upperBound)), or a level in dB such as \"-6dB\"")
  /// Pan of a stem or an effect.
  public static let pan = SettingRule(
    SettingRange.pan,
    allowed: "a number between \(number(SettingRange.pan.lowerBound)) and \(number(SettingRange.pan.upperBound))")
  /// A stem's varispeed ratio.
  public static let rate = SettingRule(
    SettingRange.rate,
    allowed: "a number between \(number(SettingRange.rate.lowerBound)) and \(number(SettingRange.rate.upperBound))")
  /// A stem's extra repetitions.
  public static let loops = SettingRule(
    SettingRange.loops, allowed: "an integer from -1 (forever) up to \(SettingRange.loops.upperBound)")
  /// A stem's start offset on the transport, in seconds.
  public static let startOffset = SettingRule(
    SettingRange.startOffset,
    allowed: "a number of seconds from \(number(SettingRange.startOffset.lowerBound)) to "
      + "\(number(SettingRange.startOffset.upperBound))")
  /// The transport position (saved in a session, or sought to), in seconds.
  public static let position = SettingRule(
    SettingRange.position,
    allowed: "a number of seconds from \(number(SettingRange.position.lowerBound)) to "
      + "\(number(SettingRange.position.upperBound))")
  /// The overlap of a setlist crossfade, in seconds.
  public static let crossfadeSeconds = SettingRule(
    SettingRange.crossfadeSeconds,
    allowed: "a number of seconds from \(number(SettingRange.crossfadeSeconds.lowerBound)) to "
      + "\(number(SettingRange.crossfadeSeconds.upperBound))")
  /// The session tempo's beats per minute.
  public static let bpm = SettingRule(
    SettingRange.bpm,
    allowed: "a number of beats per minute from \(number(SettingRange.bpm.lowerBound)) to "
      + "\(number(SettingRange.bpm.upperBound))")
  /// The session tempo's beats in one bar.
  public static let beatsPerBar = SettingRule(
    SettingRange.beatsPerBar,
    allowed: "an integer number of beats per bar from \(SettingRange.beatsPerBar.lowerBound) to "
      + "\(SettingRange.beatsPerBar.upperBound)")
  /// A stem's loop start or end, in seconds of its audio file.
  public static let loopPoint = SettingRule(
    SettingRange.loopPoint,
    allowed: "a number of seconds in the stem's audio file from \(number(SettingRange.loopPoint.lowerBound)) "
      + "to \(number(SettingRange.loopPoint.upperBound))")
  /// The crossfade at a stem's loop seam, in seconds.
  public static let crossfade = SettingRule(
    SettingRange.crossfade,
    allowed: "a number of seconds from \(number(SettingRange.crossfade.lowerBound)) to "
      + "\(number(SettingRange.crossfade.upperBound)) (the crossfade at the loop seam; 0 for none)")
  /// A stem's pitch shift in stretch mode, in semitones.
  public static let pitch = SettingRule(
    SettingRange.pitch,
    allowed: "a number of semitones from \(number(SettingRange.pitch.lowerBound)) to "
      + "\(number(SettingRange.pitch.upperBound))")
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
