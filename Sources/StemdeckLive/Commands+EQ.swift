import StemdeckControl
import StemdeckSession

// The `eq` command: a stem's or the master's channel EQ (EQSettings.swift; the DSP is
// StemdeckEngine's ChannelEQ). docs/architecture.md, *Channel EQ*.

extension CommandTable {
  package static let eqUsage =
    "eq NAME|master|all [on|off|flat | hpf FREQ [12|24] | hpf off | low FREQ GAIN | mid FREQ GAIN [q Q] | high FREQ GAIN]"

  package static let eqCommand = CommandSpec(
    name: "eq", usage: "eq NAME|master|all [SETTING…]",
    summary: "channel EQ: high-pass, low shelf, mid peak with Q, high shelf (±18 dB); 'eq NAME' shows it",
    details: """
      eq drums hpf 80 24        high-pass at 80 Hz (20…500), 12 or 24 dB/oct (default 12); 'hpf off'
      eq drums low 120 +3dB     low shelf at 120 Hz (20…20000 Hz), gain -18…18 dB
      eq drums mid 1k -4dB q 1.4  peaking mid band, Q 0.1…10 (default 0.707)
      eq drums high 8k +2dB     high shelf
      eq drums off|on|flat      switch it out (settings kept), back in, or reset it
      eq master …               the master bus's EQ (before the master volume)
      Changes glide over 30 ms while playing (no clicks); off or flat costs nothing.
      """,
    argumentCount: 1...6, completions: [.stemOrAll, .keyword(["master", "hpf", "low", "mid", "high", "on", "off", "flat", "q"])]
  ) { (c, a) throws(CommandError) in
    let target = a[0]
    let isMaster = target.lowercased() == "master" && !c.mixer.stems.allNames.contains(target)
    let words = Array(a.dropFirst())
    if words.isEmpty {
      if isMaster {
        c.write("master eq: " + c.mixer.master.eq.summary)
      } else {
        for name in try c.stems(target, includeOffline: true) {
          let eq = try c.mixerCall { () throws(MixerError) in try c.mixer.strips.eq(name) }
          c.write("\(name) eq: " + eq.summary)
        }
      }
      return
    }
    let edit = try EQEdit.parse(words)
    if isMaster {
      var eq = c.mixer.master.eq
      edit.apply(to: &eq)
      try c.mixerCall { () throws(MixerError) in try c.mixer.master.setEQ(eq) }
      return
    }
    try c.each(target) { (n: String) throws(MixerError) in
      var eq = try c.mixer.strips.eq(n)
      edit.apply(to: &eq)
      try c.mixer.strips.setEQ(n, eq)
    }
  }
}

/// One `eq` change, parsed and checked: values out of range are refused with the field, the
/// value and what is allowed (the same `SettingRule`s as the session file).
package enum EQEdit {
  case enabled(Bool)
  case flat
  case highPass(EQHighPass?)
  case band(String, frequency: Double, gain: Double, q: Double?)

  package func apply(to eq: inout EQSettings) {
    switch self {
    case .enabled(let on): eq.enabled = on
    case .flat: eq = EQSettings()
    case .highPass(let hpf): eq.highPass = hpf
    case .band(let name, let frequency, let gain, let q):
      switch name {
      case "low": eq.low.frequency = frequency; eq.low.gain = gain
      case "mid": eq.mid.frequency = frequency; eq.mid.gain = gain; if let q { eq.mid.q = q }
      default: eq.high.frequency = frequency; eq.high.gain = gain
      }
    }
  }

  package static func parse(_ words: [String]) throws(CommandError) -> EQEdit {
    let usage = CommandError("eq: usage: " + CommandTable.eqUsage)
    let head = words[0].lowercased()
    switch head {
    case "on", "off", "flat":
      guard words.count == 1 else { throw usage }
      return head == "flat" ? .flat : .enabled(head == "on")
    case "hpf":
      guard (2...3).contains(words.count) else { throw usage }
      if words[1].lowercased() == "off" {
        guard words.count == 2 else { throw usage }
        return .highPass(nil)
      }
      let frequency = try self.frequency(words[1], "eq hpf frequency", rule: .eqHighPass)
      var slope = 12
      if words.count == 3 {
        let text = words[2].lowercased().replacingOccurrences(of: "db", with: "")
        guard let s = Int(text), EQSettings.slopes.contains(s) else {
          throw CommandError("eq hpf slope \(SettingRule.eqSlopeRule) (got '\(ValueParser.printable(words[2]))')")
        }
        slope = s
      }
      return .highPass(EQHighPass(frequency: frequency, slope: slope))
    case "low", "mid", "high":
      var rest = Array(words.dropFirst())
      var q: Double?
      if head == "mid", rest.count == 4, rest[2].lowercased() == "q" {
        q = try number(rest[3], "eq mid q", rule: .eqQ)
        rest.removeLast(2)
      }
      guard rest.count == 2 else { throw usage }
      let frequency = try self.frequency(rest[0], "eq \(head) frequency", rule: .eqFrequency)
      let gain = try self.gain(rest[1], "eq \(head) gain")
      return .band(head, frequency: frequency, gain: gain, q: q)
    default:
      throw CommandError("eq: unknown setting '\(ValueParser.printable(words[0]))' (allowed: on, off, flat, hpf, low, mid, high)")
    }
  }

  /// A number in a rule's range.
  package static func number(_ text: String, _ what: String, rule: SettingRule) throws(CommandError) -> Double {
    let v = try ValueParser.number(text, what)
    guard rule.accepts(v) else { throw CommandError(rule.refusal(what, got: v)) }
    return v
  }

  /// Hz: `120`, `120Hz`, `8k`, `8kHz`.
  package static func frequency(_ text: String, _ what: String, rule: SettingRule) throws(CommandError) -> Double {
    var t = text.lowercased()
    if t.hasSuffix("hz") { t.removeLast(2) }
    var scale = 1.0
    if t.hasSuffix("k") { t.removeLast(); scale = 1000 }
    let v: Double
    do { v = try ValueParser.number(t, what) * scale } catch {
      throw CommandError("\(what) \(rule.rule) (got '\(ValueParser.printable(text))')")
    }
    guard rule.accepts(v) else { throw CommandError(rule.refusal(what, got: v)) }
    return v
  }

  /// dB: `+3dB`, `-4.5dB`, `3`.
  package static func gain(_ text: String, _ what: String) throws(CommandError) -> Double {
    var t = text.lowercased()
    if t.hasSuffix("db") { t.removeLast(2) }
    let v: Double
    do { v = try ValueParser.number(t, what) } catch {
      throw CommandError("\(what) \(SettingRule.eqGain.rule) (got '\(ValueParser.printable(text))')")
    }
    guard SettingRule.eqGain.accepts(v) else { throw CommandError(SettingRule.eqGain.refusal(what, got: v)) }
    return v
  }
}
