// The event gate (issue 26 item 5): classes, `events [on|off|CLASS…]`, and repeated events
// folded to at most one line a second per kind, with a count.
import Foundation
import StemdeckSession
import StemdeckTestSupport
import Testing
@testable import StemdeckConsole
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

@Suite("events: classes, filter, folding")
struct EventGateTests {
  @Test("every event the mixer and the driver report has its class")
  func classes() {
    let cases: [(String, EventGate.Class)] = [
      ("xrun: JACK reported 4 more (70 in total)", .xrun),
      ("underrun: stem 'bass' ran out of audio from disk (playing silence until it catches up)", .disk),
      ("the disk was slow to fill after a start or seek; some stems started late", .disk),
      ("stem 'bass' produced NaN or infinite samples and was muted", .disk),
      ("stem 'bass' can no longer be read: I/O error", .disk),
      ("stem 'bass' finished", .end),
      ("all stems finished", .end),
      ("JACK server 'x' went away; keeping the session and retrying every 250 ms", .server),
      ("reconnected to JACK server 'x' (48000 Hz, 256 frames); restored 2 connections", .server),
      ("resuming playback", .server),
      ("the JACK server now runs at 44100 Hz (was 48000 Hz); the engine follows", .server),
      ("JACK transport started: playing (following JACK)", .transport),
      ("paused: the master outputs lost their last connection (autoPauseOnDisconnect is on)", .transport),
      ("take 'take1' recorded: 0:02.000 in /tmp/t.wav, added as a stem", .record),
      ("recording 'take1': disk full", .record),
      ("effect 'hit' loaded", .other),
      ("effect 'hit' failed: cannot load effect 'hit': /tmp/hit.wav: could read only 10 of 48000 frames (truncated or corrupt)", .other)
    ]
    for (line, expected) in cases { #expect(EventGate.classify(line) == expected, "\(line)") }
  }

  @Test("a burst of 50 xruns in 0.5 s: the first at once, then one folded line with the count when the second is over")
  func folding() {
    var gate = EventGate()
    var written: [String] = []
    for i in 0..<50 {
      let t = 10 + Double(i) * 0.01
      written += gate.admit("xrun: JACK reported 1 more (\(i + 1) in total)", now: t)
      written += gate.flush(now: t)
    }
    #expect(written == ["xrun: JACK reported 1 more (1 in total)"])
    // Another kind is not held back by the xruns.
    #expect(gate.admit("stem 'bass' finished", now: 10.6) == ["stem 'bass' finished"])
    #expect(gate.flush(now: 10.9).isEmpty)
    #expect(gate.flush(now: 11.0) == ["xrun: JACK reported 1 more (50 in total) [+48 more like it]"])
    #expect(gate.flush(now: 12.5).isEmpty)
    // After a quiet second the next one is written at once.
    #expect(gate.admit("xrun: JACK reported 2 more (52 in total)", now: 12.5) == ["xrun: JACK reported 2 more (52 in total)"])
    // Two different stems finishing in the same second are two events, both shown; state
    // changes are never folded (a server lost twice within a second is said twice).
    #expect(gate.admit("stem 'drums' finished", now: 12.6) == ["stem 'drums' finished"])
    #expect(gate.admit("stem 'drums' finished", now: 12.65) == ["stem 'drums' finished"])
    #expect(gate.admit("JACK server 'x' went away", now: 12.6) == ["JACK server 'x' went away"])
    #expect(gate.admit("JACK server 'x' went away", now: 12.65) == ["JACK server 'x' went away"])
    // Underruns of one stem fold; another stem's are another kind.
    #expect(gate.admit("underrun: stem 'a' ran out", now: 12.6) == ["underrun: stem 'a' ran out"])
    #expect(gate.admit("underrun: stem 'a' ran out", now: 12.61).isEmpty)
    #expect(gate.admit("underrun: stem 'b' ran out", now: 12.62) == ["underrun: stem 'b' ran out"])
    // A final flush writes what is held (one held: no count).
    _ = gate.admit("xrun: JACK reported 1 more (53 in total)", now: 12.7)
    #expect(gate.flush(now: 12.7, all: true) == ["underrun: stem 'a' ran out", "xrun: JACK reported 1 more (53 in total)"])
  }

  @Test("events on|off|CLASS…: hidden classes are dropped; a bad class is a clear error that changes nothing")
  func filter() throws {
    let h = try ConsoleHarness()
    defer { h.shutdown() }
    var shown: [String] = []
    h.console.writeEvent = { shown.append($0) }
    let listing = h.run("events")
    #expect(listing.ok && listing.output.count == EventGate.Class.allCases.count)
    #expect(listing.output.first?.hasPrefix("xrun      shown") == true, "\(listing.output)")
    #expect(h.run("events xrun end").ok)
    h.console.report(["underrun: stem 'a' ran out of audio from disk", "stem 'a' finished", "xrun: JACK reported 1 more (1 in total)"])
    #expect(shown == ["stem 'a' finished", "xrun: JACK reported 1 more (1 in total)"])
    let bad = h.run("events xrun nosuch")
    #expect(
      !bad.ok
        && bad.output == [
          "error: events: unknown class 'nosuch' (allowed: on, off, CLASS…, -CLASS or +CLASS, the classes being xrun, disk, end, server, transport, record, other)"
        ])
    #expect(h.console.eventGate.shown == [.xrun, .end], "a rejected events command changed the filter")
    #expect(h.run("events off").ok)
    shown = []
    h.console.report(["all stems finished"])
    #expect(shown.isEmpty)
    #expect(h.run("events on").ok)
    h.console.report(["all stems finished"])
    #expect(shown == ["all stems finished"])
  }

  @Test("events -CLASS hides one and +CLASS shows it again; at the prompt the choice is kept for the next run")
  func hideOneAndKeep() throws {
    let h = try ConsoleHarness()
    defer { h.shutdown() }
    let state = try TemporaryFolder()
    defer { state.remove() }
    let path = state.file("events")
    h.console.interactive = true
    h.console.eventsChoicePath = path
    #expect(h.run("events -xrun -disk").ok)
    #expect(h.console.eventGate.shown == Set(EventGate.Class.allCases).subtracting([.xrun, .disk]))
    #expect(Console.loadEventsChoice(from: path) == h.console.eventGate.shown)
    #expect(try String(contentsOfFile: path, encoding: .utf8) == "end server transport record other\n")
    #expect(AtomicFile.regularFileMode(at: path) == 0o600)
    #expect(h.run("events +disk").ok)
    #expect(Console.loadEventsChoice(from: path) == Set(EventGate.Class.allCases).subtracting([.xrun]))
    // Changes and a plain list do not mix; a bad class changes nothing, the file included.
    let mixed = h.run("events xrun -disk")
    #expect(
      !mixed.ok
        && mixed.output == ["error: events: give the classes to show (events xrun disk) or changes (events -xrun +disk), not both"])
    #expect(!h.run("events -nosuch").ok)
    #expect(Console.loadEventsChoice(from: path) == Set(EventGate.Class.allCases).subtracting([.xrun]))
    // A script or a control client's choice is its own: not kept.
    h.console.interactive = false
    #expect(h.run("events off").ok)
    #expect(Console.loadEventsChoice(from: path) == Set(EventGate.Class.allCases).subtracting([.xrun]))
    // A file holding something else is no choice (all shown).
    try state.write("xrun bogus\n", to: "events")
    #expect(Console.loadEventsChoice(from: path) == nil)
  }
}
