import StemdeckControl
import Testing
@testable import StemdeckConsole
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

/// A line of `;`-separated commands with a failure in it: where the rest runs and where it stops.
@Suite("commands after a failed one on the line")
struct SemicolonTests {
  @Test("at the prompt a failed command stops its line and says what was not run; without stopOnError all run")
  func semicolonStopsAtTheError() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let stopped = h.run(
      "vol drums 0.5; vol nosuch 1; vol bass 0.25; echo \"a b\"; at 1 { vol drums 1; mute bass }", stopOnError: true, sayingSkipped: true)
    #expect(
      stopped
        == (
          false,
          [
            "error: unknown stem 'nosuch' (stems: drums, bass)",
            "not run after the error: vol bass 0.25; echo \"a b\"; at 1 { vol drums 1; mute bass }"
          ]
        ))
    #expect(try h.mixer.stems.status("drums").settings.volume == 0.5 && h.mixer.stems.status("bass").settings.volume == 1)
    // The error last on its line: nothing more to say.
    #expect(h.run("vol nosuch 1", stopOnError: true, sayingSkipped: true).output.count == 1)
    // Without stopOnError (a control client that asked to go on) the rest still runs.
    #expect(h.run("vol nosuch 1; vol bass 0.25").output == ["error: unknown stem 'nosuch' (stems: drums, bass)"])
    #expect(try h.mixer.stems.status("bass").settings.volume == 0.25)
  }
}
