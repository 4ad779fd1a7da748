import Foundation
import Testing
@testable import StemdeckConsole
import StemdeckControl
import StemdeckJack
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

@Suite("LiveSession: one service step, typed events, the console's words")
struct LiveSessionTests {
  @Test("the driver's events carry values; the console writes the words they always had")
  func driverEventWords() {
    let cases: [(DriverEvent, String)] = [
      (
        .serverWentAway(server: "live", retryMilliseconds: 250),
        "JACK server 'live' went away; keeping the session and retrying every 250 ms"
      ),
      (.xruns(new: 2, total: 5), "xrun: JACK reported 2 more (5 in total)"),
      (.transportFollowed(playing: true), "JACK transport started: playing (following JACK)"),
      (.transportFollowed(playing: false), "JACK transport stopped: paused (following JACK)"),
      (.autoPaused, "paused: the master outputs lost their last connection (autoPauseOnDisconnect is on)"),
      (
        .sampleRateFollowed(newRate: 96000, oldRate: 48000),
        "the JACK server now runs at 96000 Hz (was 48000 Hz); the engine follows"
      ),
      (.rebuildWarning("stem 'x' is offline"), "stem 'x' is offline"),
      (
        .rebuildFailed(newRate: 44100, reason: "no memory"),
        "cannot follow the server's new sample rate 44100 Hz: no memory; retrying"
      ),
      (.reconnectFailed(reason: "cannot register"), "reconnect failed: cannot register"),
      (
        .reconnected(server: "live", sampleRate: 48000, bufferSize: 256, restoredConnections: 1),
        "reconnected to JACK server 'live' (48000 Hz, 256 frames); restored 1 connection"
      ),
      (
        .reconnected(server: "live", sampleRate: 48000, bufferSize: 256, restoredConnections: 3),
        "reconnected to JACK server 'live' (48000 Hz, 256 frames); restored 3 connections"
      ),
      (.resumingPlayback, "resuming playback")
    ]
    for (event, words) in cases { #expect(event.text == words) }
    #expect(DriverEvent.masterDisconnected.text == nil, "a fact for the auto-pause policy, not a line")
    #expect(LiveEvent.driver(.autoPaused).text == DriverEvent.autoPaused.text)
    #expect(LiveEvent.mixer(.allFinished).text == "all stems finished")
    #expect(LiveEvent.mixer(.stemFinished("drums")).text == "stem 'drums' finished")
    #expect(LiveEvent.songEnded.text == nil, "the end of a song is acted on, not written")
  }

  @Test("serviceOnce reports the mixer's events, then the song's end once the transport stopped, once")
  func serviceOnceReportsInOrder() throws {
    let h = try ConsoleHarness()
    defer { h.shutdown() }
    try h.folder.wav("short.wav", channels: 1, sampleRate: 48000, seconds: 0.1, frequency: 375, amplitude: 0.5)
    #expect(h.run("add \(h.folder.file("short.wav"))").ok)
    #expect(h.run("play").ok)
    let live = h.console.live
    #expect(live.mixer === h.mixer)
    h.render(blocks: 8)
    var events: [LiveEvent] = []
    live.serviceOnce { events.append($0) }
    h.render(blocks: 1)
    live.serviceOnce { events.append($0) }
    #expect(events.contains(.mixer(.allFinished)))
    #expect(events.last == .songEnded, "\(events)")
    #expect(events.firstIndex(of: .mixer(.allFinished))! < events.firstIndex(of: .songEnded)!)
    var later: [LiveEvent] = []
    live.serviceOnce { later.append($0) }
    #expect(later.isEmpty, "one end is reported once: \(later)")
  }

  @Test("the session's state lives in the LiveSession: path, autosave clock and sidecar, nothing unsaved after save")
  func sessionState() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let path = h.folder.file("song.json")
    #expect(h.run("save \(path)").ok)
    #expect(h.console.live.path == path && h.console.sessionPath == path)
    #expect(!h.mixer.isDirty)
    #expect(h.console.live.autosaveNow() == nil, "nothing unsaved: nothing written")
    #expect(h.run("volume drums 0.5").ok)
    h.console.live.lastAutosave = .distantPast
    h.console.live.serviceOnce { _ in }
    let side = LiveSession.autosavePath(for: path)
    #expect(FileManager.default.fileExists(atPath: side), "the autosave was due: the sidecar is written")
    #expect(h.console.live.autosaveNow() == .written(target: side, sessionPath: path))
    #expect(h.run("save").ok)
    #expect(!FileManager.default.fileExists(atPath: side), "save removes the sidecar")
  }

  @Test(
    "the autosave belongs to its session: save-as removes the old name's, quit! removes it, and an autosave keeps no .bak of itself"
  )
  func autosaveBelongsToItsSession() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let first = h.folder.file("first.json"), second = h.folder.file("second.json")
    #expect(h.run("save \(first)").ok)
    func autosave() {
      h.console.live.lastAutosave = .distantPast
      h.console.live.serviceOnce { _ in }
    }
    let firstSide = LiveSession.autosavePath(for: first)
    #expect(h.run("volume drums 0.5").ok)
    autosave()
    #expect(h.run("volume drums 0.4").ok)
    autosave()
    #expect(FileManager.default.fileExists(atPath: firstSide))
    #expect(!FileManager.default.fileExists(atPath: firstSide + ".bak"), "a second autosave keeps no backup")
    // Save under another name: the changes are in second.json; first.json offers nothing back.
    #expect(h.run("save \(second)").ok)
    #expect(!FileManager.default.fileExists(atPath: firstSide), "save-as left the old name's autosave")
    #expect(h.run("open \(first)").output.allSatisfy { !$0.contains("an autosave") })
    // quit! discards the unsaved changes, their autosave included.
    #expect(h.run("volume drums 0.3").ok)
    autosave()
    #expect(FileManager.default.fileExists(atPath: firstSide))
    h.console.interactive = true
    #expect(!h.run("quit").ok, "quit refuses with unsaved changes")
    #expect(FileManager.default.fileExists(atPath: firstSide), "a refused quit keeps the autosave")
    #expect(h.run("quit!").ok)
    #expect(!FileManager.default.fileExists(atPath: firstSide), "quit! left the autosave of the changes it discarded")
  }
}
