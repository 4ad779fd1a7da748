// A channel EQ's settings (session format version 2): the `"eq"` object of a stem and of the
// master. Not tied to stems: any strip with an EQ (a bus, an input) uses the same value and rules.
//
//   "eq" : { "enabled" : false,                          <- only when off
//            "hpf" : { "frequency" : 80, "slope" : 24 }, <- only when on
//            "low" : { "frequency" : 120, "gain" : 3 },   <- each band only when not its default
//            "mid" : { "frequency" : 1000, "gain" : -4, "q" : 1.4 },
//            "high" : { "frequency" : 8000, "gain" : 2 } }

/// A shelf or peaking band: its frequency (Hz) and gain (dB); `q` is used by the mid band only.
public struct EQBand: Equatable, Sendable {
  public var frequency: Double
  public var gain: Double = 0
  public var q: Double = EQSettings.defaultQ

  public init(frequency: Double, gain: Double = 0, q: Double = EQSettings.defaultQ) {
    self.frequency = frequency
    self.gain = gain
    self.q = q
  }
}

/// The high-pass filter: its corner frequency (Hz) and slope (12 or 24 dB per octave).
public struct EQHighPass: Equatable, Sendable {
  public var frequency: Double
  public var slope: Int = 12

  public init(frequency: Double, slope: Int = 12) {
    self.frequency = frequency
    self.slope = slope
  }
}

/// A channel EQ: high-pass, low shelf, peaking mid, high shelf. The default is flat (every gain
/// 0 dB, no high-pass) and on; a flat or disabled EQ is bypassed and costs nothing.
public struct EQSettings: Equatable, Sendable {
  public static let defaultQ = 0.707
  public static let defaultLow = EQBand(frequency: 100)
  public static let defaultMid = EQBand(frequency: 1000)
  public static let defaultHigh = EQBand(frequency: 8000)
  /// The slopes the high-pass offers, in dB per octave.
  public static let slopes = [12, 24]
  /// The fields of an `"eq"` object and of its parts.
  public static let fields = ["enabled", "hpf", "low", "mid", "high"]
  public static let highPassFields = ["frequency", "slope"]
  public static let shelfFields = ["frequency", "gain"]
  public static let midFields = ["frequency", "gain", "q"]

  /// False: the EQ is switched out (its settings kept).
  public var enabled = true
  /// nil: no high-pass.
  public var highPass: EQHighPass? = nil
  public var low = EQSettings.defaultLow
  public var mid = EQSettings.defaultMid
  public var high = EQSettings.defaultHigh

  /// A flat EQ, on.
  public init() {}

  /// Every band at 0 dB and no high-pass.
  public var isFlat: Bool { highPass == nil && low.gain == 0 && mid.gain == 0 && high.gain == 0 }
  /// True when it changes nothing (off, or flat).
  public var isBypassed: Bool { !enabled || isFlat }

  /// The first setting out of its range: its field (`hpf.frequency`, `mid.q`…) and the refusal's
  /// words after the field (`must be … (got 7)`), or nil.
  public func problem() -> (field: String, message: String)? {
    func check(_ value: Double, _ rule: SettingRule, _ field: String) -> (String, String)? {
      rule.accepts(value) ? nil : (field, rule.rule + " (got \(SessionRules.number(value)))")
    }
    if let hpf = highPass {
      if let p = check(hpf.frequency, .eqHighPass, "hpf.frequency") { return p }
      if !EQSettings.slopes.contains(hpf.slope) { return ("hpf.slope", SettingRule.eqSlopeRule + " (got \(hpf.slope))") }
    }
    for (name, band) in [("low", low), ("mid", mid), ("high", high)] {
      if let p = check(band.frequency, .eqFrequency, name + ".frequency") { return p }
      if let p = check(band.gain, .eqGain, name + ".gain") { return p }
    }
    if let p = check(mid.q, .eqQ, "mid.q") { return p }
    return nil
  }

  /// One line for the console: `off`, `flat`, or the parts in use
  /// (`hpf 80 Hz 24 dB/oct, low 120 Hz +3 dB, mid 1000 Hz -4 dB q 1.4`).
  public var summary: String {
    var parts: [String] = []
    if let hpf = highPass { parts.append("hpf \(SessionRules.number(hpf.frequency)) Hz \(hpf.slope) dB/oct") }
    func gain(_ g: Double) -> String { (g > 0 ? "+" : "") + SessionRules.number(g) + " dB" }
    if low.gain != 0 { parts.append("low \(SessionRules.number(low.frequency)) Hz \(gain(low.gain))") }
    if mid.gain != 0 {
      parts.append("mid \(SessionRules.number(mid.frequency)) Hz \(gain(mid.gain)) q \(SessionRules.number(mid.q))")
    }
    if high.gain != 0 { parts.append("high \(SessionRules.number(high.frequency)) Hz \(gain(high.gain))") }
    let body = parts.isEmpty ? "flat" : parts.joined(separator: ", ")
    return enabled ? body : "off (" + body + ")"
  }
}

extension SettingRange {
  /// Hz: the high-pass filter's corner frequency.
  public static let eqHighPass: ClosedRange<Double> = 20...500
  /// Hz: a band's frequency (shelf corner or peak centre).
  public static let eqFrequency: ClosedRange<Double> = 20...20000
  /// dB: a band's gain.
  public static let eqGain: ClosedRange<Double> = -18...18
  /// The mid band's Q (bandwidth: larger is narrower).
  public static let eqQ: ClosedRange<Double> = 0.1...10
}

extension SettingRule {
  /// The high-pass filter's frequency.
  public static let eqHighPass = span(SettingRange.eqHighPass, "a frequency in Hz")
  /// A band's frequency.
  public static let eqFrequency = span(SettingRange.eqFrequency, "a frequency in Hz")
  /// A band's gain.
  public static let eqGain = span(SettingRange.eqGain, "a gain in dB")
  /// The mid band's Q.
  public static let eqQ = span(SettingRange.eqQ, "a Q")
  /// The high-pass slope's rule sentence.
  public static let eqSlopeRule = "must be 12 or 24 (dB per octave)"
}
