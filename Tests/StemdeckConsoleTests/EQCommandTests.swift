import Foundation
import StemdeckControl
import StemdeckSession
import Testing
@testable import StemdeckConsole
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

/// The `eq` command (Commands+EQ.swift): settings reach the mixer, `eq NAME` shows them, `stems`
/// flags them, and every value out of range is refused by field, value and range, changing nothing.
@Suite struct EQCommandTests {
  @Test("eq sets, shows, switches and resets a stem's and the master's EQ")
  func setsAndShows() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("eq drums").output == ["drums eq: flat"])
    for line in ["eq drums hpf 80 24", "eq drums low 120 +3dB", "eq drums mid 1k -4dB q 1.4", "eq drums high 8kHz 2"] {
      #expect(h.run(line).ok, "\(line)")
    }
    var expected = EQSettings()
    expected.highPass = EQHighPass(frequency: 80, slope: 24)
    expected.low = EQBand(frequency: 120, gain: 3)
    expected.mid = EQBand(frequency: 1000, gain: -4, q: 1.4)
    expected.high = EQBand(frequency: 8000, gain: 2)
    #expect(try h.mixer.strips.eq("drums") == expected)
    #expect(h.mixer.isDirty)
    #expect(
      h.run("eq drums").output == [
        "drums eq: hpf 80 Hz 24 dB/oct, low 120 Hz +3 dB, mid 1000 Hz -4 dB q 1.4, high 8000 Hz +2 dB"
      ])
    #expect(h.run("stems").output.contains { $0.hasPrefix("drums") && $0.contains(" Q ") || $0.hasSuffix(" Q") })
    #expect(h.run("eq drums off").ok)
    #expect(
      h.run("eq drums").output == ["drums eq: off (hpf 80 Hz 24 dB/oct, low 120 Hz +3 dB, mid 1000 Hz -4 dB q 1.4, high 8000 Hz +2 dB)"])
    #expect(h.run("eq drums on; eq drums hpf off; eq drums mid 500 -2").ok)
    #expect(try h.mixer.strips.eq("drums").highPass == nil)
    #expect(try h.mixer.strips.eq("drums").mid == EQBand(frequency: 500, gain: -2, q: 1.4))
    #expect(h.run("eq drums hpf 100").ok)
    #expect(try h.mixer.strips.eq("drums").highPass == EQHighPass(frequency: 100, slope: 12))
    #expect(h.run("eq drums flat").ok)
    #expect(try h.mixer.strips.eq("drums") == EQSettings())
    #expect(h.run("eq all low 200 -3dB").ok)
    #expect(try h.mixer.strips.eq("bass").low == EQBand(frequency: 200, gain: -3))
    #expect(h.run("eq master high 10k -1.5dB").ok)
    #expect(h.mixer.master.eq.high == EQBand(frequency: 10000, gain: -1.5))
    #expect(h.run("eq master").output == ["master eq: high 10000 Hz -1.5 dB"])
    // Saved and loaded with the session.
    let session = h.mixer.session(savingTo: h.folder.file("s.json"))
    #expect(session.masterEQ.high.gain == -1.5)
    #expect(session.stems.first { $0.name == "bass" }?.eq.low.gain == -3)
  }

  static let rejections: [(String, String)] = [
    ("eq drums hpf 10", "eq hpf frequency must be a frequency in Hz from 20 to 500 (got 10)"),
    ("eq drums hpf 80 18", "eq hpf slope must be 12 or 24 (dB per octave) (got '18')"),
    ("eq drums low 120 +19dB", "eq low gain must be a gain in dB from -18 to 18 (got 19)"),
    ("eq drums mid 1k -4dB q 20", "eq mid q must be a Q from 0.1 to 10 (got 20)"),
    ("eq drums high 25k 2", "eq high frequency must be a frequency in Hz from 20 to 20000 (got 25000)"),
    ("eq drums high loud 2", "eq high frequency must be a frequency in Hz from 20 to 20000 (got 'loud')"),
    ("eq drums mid 1000 lots", "eq mid gain must be a gain in dB from -18 to 18 (got 'lots')"),
    ("eq drums presence 3k 2", "eq: unknown setting 'presence' (allowed: on, off, flat, hpf, low, mid, high)"),
    ("eq master mid 1000 -30dB", "eq mid gain must be a gain in dB from -18 to 18 (got -30)")
  ]

  @Test("out-of-range values are refused by field, value and range; nothing changes")
  func refusals() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("eq drums mid 300 +2dB").ok)
    h.mixer.markSaved()
    let before = try h.mixer.strips.eq("drums")
    for (line, message) in Self.rejections {
      let result = h.run(line)
      #expect(!result.ok, "\(line)")
      #expect(result.output == ["error: " + message], "\(line)")
    }
    #expect(try h.mixer.strips.eq("drums") == before)
    #expect(h.mixer.master.eq == EQSettings())
    #expect(!h.mixer.isDirty)
  }

  @Test("an EQ set from the console changes what the engine renders; off restores the level")
  func rendersThroughEngine() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("remove bass").ok)
    #expect(h.run("play").ok)
    let plain = h.render(blocks: 8)
    #expect(h.run("eq drums hpf 500 24; eq drums mid 440 -18dB q 0.5").ok)
    h.render(blocks: 2)  // the EQ fades in over 10 ms and glides over 30 ms
    let cut = h.render(blocks: 8)
    #expect(cut < plain * 0.2, "drums (a 440 Hz sine) through a -18 dB mid and a high-pass: \(cut) vs \(plain)")
    #expect(h.run("eq drums off").ok)
    h.render(blocks: 2)
    #expect(abs(h.render(blocks: 8) - plain) < 0.001)
  }

  @Test("eq in a group: lands with the others; a group that fails puts every EQ back")
  func eqInGroups() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("begin; eq drums mid 1k -6dB; eq master low 80 +2dB; vol bass 0.5; commit").output == ["3 changes land now"])
    #expect(try h.mixer.strips.eq("drums").mid.gain == -6)
    #expect(h.mixer.master.eq.low == EQBand(frequency: 80, gain: 2))
    h.mixer.markSaved()
    let result = h.run("begin; eq drums hpf 100 24; eq master off; eq bass low 100 +30dB; commit")
    #expect(!result.ok)
    #expect(result.output.first?.contains("nothing changed: the group is all or nothing") == true, "\(result.output)")
    #expect(try h.mixer.strips.eq("drums").highPass == nil)
    #expect(try h.mixer.strips.eq("drums").mid.gain == -6)
    #expect(h.mixer.master.eq.enabled)
    #expect(!h.mixer.isDirty)
  }

  @Test("a version 1 session opens with flat EQs, gets an EQ, and saves as version 3; a newer file changes nothing")
  func version1SessionThroughTheConsole() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let path = h.folder.file("old.json")
    try SessionCommandTests.goodSession.write(toFile: path, atomically: true, encoding: .utf8)
    #expect(h.run("open \(path)").ok)
    #expect(h.run("eq kick").output == ["kick eq: flat"])
    #expect(h.run("eq master").output == ["master eq: flat"])
    #expect(h.run("save").ok)
    let saved = try String(contentsOfFile: path, encoding: .utf8)
    #expect(saved.contains(#""version" : 3,"#))
    #expect(!saved.contains(#""eq""#))
    #expect(h.run("eq kick mid 2k -3dB q 2; eq master hpf 40; save").ok)
    let session = try SessionFile.load(path: path)
    #expect(session.stems[0].eq.mid == EQBand(frequency: 2000, gain: -3, q: 2))
    #expect(session.masterEQ.highPass == EQHighPass(frequency: 40))
    // A file from a newer stemdeck: refused by name, the open session and the file untouched.
    let newer = h.folder.file("newer.json")
    let text = saved.replacingOccurrences(of: #""version" : 3,"#, with: #""version" : 4,"#)
    try text.write(toFile: newer, atomically: true, encoding: .utf8)
    let result = h.run("open \(newer)")
    #expect(!result.ok)
    #expect(result.output.count == 1)
    #expect(result.output.first?.contains("made by a newer version of stemdeck (format 4; this one reads up to 3)") == true)
    #expect(h.console.sessionPath == path)
    #expect(try h.mixer.strips.eq("kick").mid.gain == -3)
    #expect(try String(contentsOfFile: newer, encoding: .utf8) == text)
  }
}

/// The EQ's settings in the one-rule-per-setting check: the REPL's `eq` and the session decoder
/// accept and refuse the same edge values with the same range text.
extension SettingRuleTests {
  static let eqCases: [SettingCase] = [
    SettingCase(
      label: "EQ high-pass frequency", rule: .eqHighPass, what: "eq hpf frequency", line: "eq drums hpf {v}",
      members: SettingCase.stem(#""eq" : { "hpf" : { "frequency" : {v} } }"#), location: "stems[0].eq.hpf.frequency",
      accepted: ["20", "500"], refused: ["19.9", "501"]),
    SettingCase(
      label: "EQ band gain", rule: .eqGain, what: "eq low gain", line: "eq drums low 100 {v}",
      members: SettingCase.stem(#""eq" : { "low" : { "gain" : {v} } }"#), location: "stems[0].eq.low.gain",
      accepted: ["-18", "18"], refused: ["-18.5", "18.01"]),
    SettingCase(
      label: "EQ band frequency", rule: .eqFrequency, what: "eq high frequency", line: "eq drums high {v} 2",
      members: SettingCase.stem(#""eq" : { "high" : { "frequency" : {v} } }"#), location: "stems[0].eq.high.frequency",
      accepted: ["20", "20000"], refused: ["19", "20001"]),
    SettingCase(
      label: "EQ mid Q", rule: .eqQ, what: "eq mid q", line: "eq drums mid 1000 3 q {v}",
      members: SettingCase.stem(#""eq" : { "mid" : { "q" : {v} } }"#), location: "stems[0].eq.mid.q",
      accepted: ["0.1", "10"], refused: ["0.09", "10.5"]),
    SettingCase(
      label: "master EQ gain", rule: .eqGain, what: "eq mid gain", line: "eq master mid 1000 {v}",
      members: #""master" : { "volume" : 1, "eq" : { "mid" : { "gain" : {v} } } }"#, location: "master.eq.mid.gain",
      accepted: ["-18", "18"], refused: ["-19", "18.5"])
  ]

  @Test("EQ settings: each edge value accepted by both, or refused by both with the same range text", arguments: eqCases)
  func eqBothSidesAgree(_ setting: SettingCase) throws {
    try bothSidesAgree(setting)
  }
}
