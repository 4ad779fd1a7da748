import Foundation
@testable import StemdeckConsole
import StemdeckControl
import StemdeckTestSupport
import Testing
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

// Issue 16, item 18: `sfx load` runs off the control thread, and a long one can be cancelled
// (`sfx unload`/`sfx remove`, a newer `sfx load` of the same name, Ctrl-C during `sfx wait`: the
// terminal test is in IntegrationTests/RawNameTerminalTests.swift). Its thread stops within a
// block and nothing of it is loaded.

@Suite("Cancelling an effect load (issue 16, item 18)", .serialized)
struct EffectLoadCancelTests {
  /// Waits (deadline `timeout` seconds) until no effect load thread runs; returns the time taken.
  static func threadsEnd(_ h: ConsoleHarness, timeout: Double) -> Double? {
    let start = monotonicSeconds()
    while h.mixer.effects.loadThreadsRunning > 0 {
      if monotonicSeconds() - start > timeout { return nil }
      usleep(2_000)
    }
    return monotonicSeconds() - start
  }

  @Test(
    "a newer sfx load of the same name supersedes the running one: it says so, the old thread stops at once, only the new effect is loaded")
  func newerLoadSupersedes() throws {
    let h = try EffectLoadingTests.withWideEffect()
    defer { h.shutdown() }
    #expect(Self.threadsEnd(h, timeout: 60) != nil)
    // The full load of wide.wav, for comparison.
    let full = monotonicSeconds()
    #expect(h.run("sfx load wide \(h.folder.file("wide.wav")); sfx wait").ok)
    let fullSeconds = monotonicSeconds() - full
    #expect(h.run("sfx unload wide").ok)

    let run = h.run("sfx load wide \(h.folder.file("wide.wav")); sfx load wide \(h.folder.file("short.wav"))")
    #expect(run == (true, ["loading effect wide…", "loading effect wide… (the earlier load of 'wide' is cancelled)"]), "\(run)")
    #expect(h.mixer.effects.stillLoading == ["wide"])
    let waited = h.run("sfx wait")
    #expect(waited == (true, ["effect 'wide' loaded"]), "\(waited)")
    #expect(h.mixer.effects.statuses().map { abs($0.seconds - 1) < 0.001 } == [true], "the short file is the one loaded")
    let ended = Self.threadsEnd(h, timeout: fullSeconds)
    func f(_ x: Double) -> String { String(format: "%.2f", x) }
    print(
      "sfx load of 2 s of 64 channels at 768 kHz: \(f(fullSeconds)) s in full; its cancelled thread ended \(ended.map(f) ?? "-") s after")
    #expect(ended != nil && ended! < max(0.5, fullSeconds / 4), "the cancelled load kept working")
  }

  @Test("a newer sfx load that fails its checks leaves the running one alone (it loads)")
  func failedNewerLoadKeepsTheRunningOne() throws {
    let h = try EffectLoadingTests.withWideEffect()
    defer { h.shutdown() }
    #expect(h.run("sfx load wide \(h.folder.file("wide.wav"))").ok)
    let failed = h.run("sfx load wide \(h.folder.file("missing.wav"))")
    #expect(!failed.ok && failed.output.first?.contains("missing.wav") == true, "\(failed)")
    #expect(h.mixer.effects.stillLoading == ["wide"])
    #expect(h.run("sfx wait wide") == (true, ["effect 'wide' loaded"]))
    #expect(h.mixer.effects.statuses().map { abs($0.seconds - 2) < 0.001 } == [true])
  }

  @Test("sfx unload (or its alias sfx remove) of a running load stops its thread at once; nothing is loaded; the name is free")
  func unloadStopsTheThread() throws {
    let h = try EffectLoadingTests.withWideEffect()
    defer { h.shutdown() }
    #expect(Self.threadsEnd(h, timeout: 60) != nil)
    for verb in ["unload", "remove"] {
      let run = h.run("sfx load wide \(h.folder.file("wide.wav")); sfx \(verb) wide")
      #expect(run == (true, ["loading effect wide…", "unloaded effect wide"]), "\(run)")
      let ended = Self.threadsEnd(h, timeout: 5)
      #expect(ended != nil && ended! < 1, "sfx \(verb): the load thread ran on for \(ended ?? 5) s")
      #expect(h.mixer.effects.stillLoading.isEmpty && h.mixer.effects.statuses().isEmpty)
    }
    #expect(h.run("sfx load wide \(h.folder.file("short.wav")); sfx wait") == (true, ["loading effect wide…", "effect 'wide' loaded"]))
  }
}
