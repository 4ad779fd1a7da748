import Foundation
import StemdeckControl
import StemdeckTestSupport
import Testing
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

// `sfx load` decodes off the control thread (issue 16, item 18): it answers at once, an event
// says when the effect is ready, and `sfx wait` makes scripts wait for it.

@Suite struct EffectLoadingTests {
  /// A harness with `wide.wav`: 2 s of 64 channels at 768 kHz (sparse), seconds of decoding and
  /// conversion, so it is still loading for the commands on the same line.
  static func withWideEffect() throws -> ConsoleHarness {
    let h = try ConsoleHarness()
    try WAV.writeSparse(h.folder.file("wide.wav"), channels: 64, sampleRate: 768_000, seconds: 2)
    try h.folder.wav("short.wav", channels: 1, sampleRate: 44100, seconds: 1)
    return h
  }

  @Test("sfx load answers at once; at the REPL firing it before it is loaded is a clear error; sfx wait waits and reports the event")
  func fireWhileLoading() throws {
    let h = try Self.withWideEffect()
    defer { h.shutdown() }
    h.console.interactive = true
    let wide = h.folder.file("wide.wav")
    let first = h.run("sfx load wide \(wide); sfx fire wide; sfx load wide \(wide)")
    #expect(!first.ok)
    #expect(
      first.output == [
        "loading effect wide…",
        "error: effect 'wide' is still loading ('sfx wait wide' waits for it)",
        "loading effect wide… (the earlier load of 'wide' is cancelled)"
      ], "\(first.output)")
    #expect(h.mixer.effects.stillLoading == ["wide"])
    #expect(h.mixer.isDirty)
    let waited = h.run("sfx wait wide; sfx fire wide")
    #expect(waited == (true, ["effect 'wide' loaded"]), "\(waited)")
    #expect(h.mixer.effects.stillLoading.isEmpty)
    #expect(h.mixer.effects.statuses().map(\.settings.name) == ["wide"])
    #expect(h.mixer.effects.statuses().first.map { abs($0.seconds - 2) < 0.001 } == true)
  }

  @Test("sfx unload of an effect still loading cancels it: nothing is loaded, and the name can be loaded again")
  func unloadWhileLoading() throws {
    let h = try Self.withWideEffect()
    defer { h.shutdown() }
    let unload = h.run("sfx load wide \(h.folder.file("wide.wav")); sfx unload wide")
    #expect(unload == (true, ["loading effect wide…", "unloaded effect wide"]), "\(unload)")
    #expect(h.mixer.effects.stillLoading.isEmpty)
    #expect(h.run("sfx wait") == (true, []))
    #expect(h.run("sfx wait wide").output == ["error: sfx wait: no effect 'wide' is loading or loaded"])
    // The same name with another file: the cancelled load never lands, whenever its thread ends.
    let again = h.run("sfx load wide \(h.folder.file("short.wav")); sfx wait")
    #expect(again == (true, ["loading effect wide…", "effect 'wide' loaded"]), "\(again)")
    #expect(h.mixer.effects.statuses().map { abs($0.seconds - 1) < 0.001 } == [true])
  }

  @Test("a load that fails in the background is reported by an event, nothing is loaded, and sfx wait fails")
  func failedLoadIsReported() throws {
    let h = try Self.withWideEffect()
    defer { h.shutdown() }
    let path = h.folder.file("wide.wav")
    #expect(h.run("sfx load wide \(path)") == (true, ["loading effect wide…"]))
    // Cut the file under the open handle while its 196 MB of samples are being read.
    #expect(truncate(path, 1000) == 0)
    let result = h.run("sfx wait")
    #expect(!result.ok)
    #expect(result.output.first?.hasPrefix("effect 'wide' failed: cannot load effect 'wide': \(path): ") == true, "\(result.output)")
    #expect(result.output.last == "error: sfx wait: not loaded: 'wide'", "\(result.output)")
    #expect(h.mixer.effects.statuses().isEmpty)
    #expect(h.mixer.effects.stillLoading.isEmpty)
    #expect(h.run("sfx fire wide").output == ["error: unknown effect 'wide' (no effects are loaded; 'sfx load NAME PATH')"])
  }

  @Test("in a script, firing an effect that is still loading waits for it (scripts that load then fire keep working)")
  func scriptFireWaits() throws {
    let h = try Self.withWideEffect()
    defer { h.shutdown() }
    let wide = h.folder.file("wide.wav")
    let run = h.run("sfx load wide \(wide); sfx fire wide")
    #expect(run == (true, ["loading effect wide…", "effect 'wide' loaded"]), "\(run)")
    #expect(h.mixer.effects.statuses().map(\.settings.name) == ["wide"])
  }
}
