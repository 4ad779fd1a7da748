import StemdeckControl
import Testing

@testable import StemdeckConsole
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

/// The click's commands that read files (issue 42, item 1): `click sample`, `click accent`.
@Suite struct ClickCommandTests {
  @Test(
    "click sample FILE and click accent FILE are shown by 'click', saved relative to the session, and 'click sample off' takes both back")
  func clickSampleCommand() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("click sample \(h.drums); click accent \(h.drums)").ok)
    #expect(h.run("click").output == ["click: off, on its ports click_L/R, level 0 dB, no count-in, sample \(h.drums), accent \(h.drums)"])
    #expect(h.mixer.session(savingTo: h.folder.file("s.json")).click.sample == "drums.wav")
    #expect(h.run("click sample off").ok && h.mixer.click.settings.sample == nil && h.mixer.click.settings.accentSample == nil)
  }
}
