import StemdeckSession
import Testing
@testable import StemdeckConsole
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

/// The strip controls' table (StemdeckSession/StripParameter.swift) against the front ends it
/// drives: every word it gives the console is a command, the groupable words and OSC's strip
/// addresses come from it, and each control with a rule is refused at the console with the
/// rule's own words.
@Suite struct StripParameterTests {
  @Test("every console word of the table is a command; the groupable words are the table's plus master, glide and eq")
  func consoleWords() {
    for control in StripParameter.all {
      for word in control.consoleWords { #expect(CommandTable.lookup(word) != nil, "'\(word)' (\(control.key)) is not a command") }
    }
    #expect(
      Console.groupable == [
        "vol", "volume", "pan", "width", "rate", "mute", "unmute", "solo", "unsolo", "safe", "unsafe", "master", "glide", "eq"
      ],
      "\(Console.groupable.sorted())")
  }

  @Test("OSC's strip addresses by kind, from the table (what a kind's refusal lists)")
  func oscAddresses() {
    #expect(StripParameter.oscAddresses(on: .stem) == "vol (dB), pan, width, rate, mute, solo, safe")
    #expect(StripParameter.oscAddresses(on: .bus) == "vol (dB), pan, width, mute, solo, safe")
    #expect(StripParameter.oscAddresses(on: .input) == "vol (dB), pan, width, mute, solo, safe")
    #expect(StripParameter.osc("volume")?.key == "volume" && StripParameter.osc("gain") == nil)
    #expect(StripParameter.rate.kinds == [.stem] && !StripParameter.mute.glides)
  }

  @Test("a value out of a control's rule is refused at the console in the rule's words, and nothing changes")
  func rulesAtTheConsole() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    for control in StripParameter.all {
      guard let rule = control.rule else { continue }
      let result = h.run("\(control.word) drums 7")
      #expect(result.output == ["error: " + rule.refusal(control.key, got: 7)], "\(control.key): \(result.output)")
    }
    #expect(!h.mixer.isDirty)
  }
}
