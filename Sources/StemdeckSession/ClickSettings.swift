// The click and the count-in (the session's `"click"` object): its model, its rules, and how it
// is read and written. Absent when every key is the default, so older sessions stay byte-identical.
// docs/architecture.md, *Click and count-in*.

/// The session's click (a metronome on the session's tempo) and count-in.
public struct ClickSettings: Equatable, Sendable {
  /// Where the click goes: its own ports (`stemdeck:click_L`/`click_R`) or the master.
  public enum Output: String, CaseIterable, Sendable {
    case click
    case master
  }

  /// Clicks while the transport plays (the count-in clicks whatever this says).
  public var on = false
  public var output = Output.click
  /// The click's level in dB (0: the accent peaks at −6 dBFS), in `SettingRange.clickLevel`.
  public var level = 0.0
  /// Bars of click before `play` starts the stems, in `SettingRange.countIn` (0: none).
  public var countIn = 0
  /// An audio file played on every beat instead of the synthesized burst (nil: the burst), and
  /// one for the bar's first beat (nil: `sample` there too). In a session file, relative to its
  /// folder; in a running mixer, absolute. At most `maxSampleSeconds`.
  public var sample: String? = nil
  public var accentSample: String? = nil
  /// The longest click sample, seconds.
  public static let maxSampleSeconds = 2.0

  public init(on: Bool = false, output: Output = .click, level: Double = 0, countIn: Int = 0) {
    self.on = on
    self.output = output
    self.level = level
    self.countIn = countIn
  }
}

extension SettingRange {
  /// dB: the click's level.
  public static let clickLevel: ClosedRange<Double> = -60.0...6.0
  /// Bars of count-in.
  public static let countIn: ClosedRange<Int> = 0...16
}

extension SettingRule {
  /// The click's level in dB.
  public static let clickLevel = span(SettingRange.clickLevel, "a level in dB")
  /// Bars of count-in.
  public static let countIn = span(SettingRange.countIn, "a whole number of bars")
}

extension SessionRules {
  static let clickFields = ["on", "output", "level", "countIn", "sample", "accentSample"]
}

extension ClickSettings {
  /// The first value out of its rule, as `Session.validate()` words it (location, message).
  func problem() -> (field: String, message: String)? {
    if !SettingRule.clickLevel.accepts(level) {
      return ("level", SettingRule.clickLevel.rule + " (got \(SessionRules.number(level)))")
    }
    if !SettingRule.countIn.accepts(countIn) { return ("countIn", SettingRule.countIn.rule + " (got \(countIn))") }
    if let sample, let problem = SessionRules.audioFileProblem(sample) { return ("sample", problem) }
    if let accentSample, let problem = SessionRules.audioFileProblem(accentSample) { return ("accentSample", problem) }
    if accentSample != nil && sample == nil {
      return ("accentSample", "needs \"sample\" too (the other beats' sound); set both, or only \"sample\" for every beat")
    }
    return nil
  }

  /// The `"click"` object: only the keys that differ from the default, in a fixed order.
  func encoded() -> String {
    var fields: [String] = []
    if on { fields.append("\"on\" : true") }
    if output != .click { fields.append("\"output\" : " + JSONText.string(output.rawValue)) }
    if level != 0 { fields.append("\"level\" : " + JSONText.number(level)) }
    if countIn != 0 { fields.append("\"countIn\" : \(countIn)") }
    if let sample { fields.append("\"sample\" : " + JSONText.string(sample)) }
    if let accentSample { fields.append("\"accentSample\" : " + JSONText.string(accentSample)) }
    return "{ " + fields.joined(separator: ", ") + " }"
  }
}

extension SessionDecoder {
  func click(_ node: JSONNode) throws(SessionError) -> ClickSettings {
    let fields = try object(
      node, at: "click", allowed: SessionRules.clickFields,
      example: "{ \"on\" : true, \"output\" : \"click\", \"level\" : -6, \"countIn\" : 2 }")
    var click = ClickSettings()
    if let value = fields["on"] { click.on = try bool(value, at: "click.on") }
    if let value = fields["output"] { click.output = try choice(value, at: "click.output", what: "click output") }
    if let value = fields["level"] { click.level = try number(value, at: "click.level", rule: .clickLevel) }
    if let value = fields["countIn"] {
      guard case .number(let literal) = value.value, let bars = JSONNumber.integer(literal), SettingRule.countIn.accepts(bars)
      else {
        throw fail("click.countIn", value, SettingRule.countIn.rule + " (got \(describe(value)))")
      }
      click.countIn = bars
    }
    for key in ["sample", "accentSample"] {
      guard let value = fields[key] else { continue }
      let file = try string(value, at: "click." + key, rule: "must be an audio file's path in double quotes")
      if let problem = SessionRules.audioFileProblem(file) { throw fail("click." + key, value, problem) }
      if key == "sample" { click.sample = file } else { click.accentSample = file }
    }
    if click.accentSample != nil && click.sample == nil, let value = fields["accentSample"] {
      throw fail("click.accentSample", value, "needs \"sample\" too (the other beats' sound); set both, or only \"sample\" for every beat")
    }
    return click
  }
}
