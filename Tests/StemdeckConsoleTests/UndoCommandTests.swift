import Foundation
import StemdeckControl
import StemdeckEngine
import StemdeckSession
import Testing

@testable import StemdeckConsole
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

/// Undo and redo (issue 41): every kind of change taken back to the byte and done again; one
/// step per command, group, glide or drag; the history's bounds and words.
@Suite struct UndoCommandTests {
  /// The session as its file holds it now (paused: the position stays where it is).
  static func saved(_ h: ConsoleHarness) throws -> String {
    let path = h.folder.file("undo.json")
    let r = h.run("save \(path)")
    guard r.ok else { throw CommandError("save failed: \(r.output)") }
    return try String(contentsOfFile: path, encoding: .utf8)
  }

  @Test("every kind of change is one step: undone, the session saved is the one saved before, byte for byte; redone, the one after")
  func everyKind() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("midi map cc 1 vol drums").ok)
    let lines = [
      "vol drums -6dB", "pan bass 0.3", "mute drums", "solo bass", "safe drums", "directout bass on", "eq drums low 100 3",
      "eq master high 8000 -2", "master -3dB", "rate drums 1.1", "loops bass 2", "loop drums 0.5 1.5 xfade 0.1", "offset bass 0.25",
      "mode drums stretch fast", "pitch drums 2", "bus add band", "route bass band", "vol band -4dB", "bus add sub to band",
      "bus remove band", "send add verb", "send drums verb -12dB", "send bass verb -6dB pre", "send return verb -3dB",
      "send remove verb", "input add mic mono", "vol mic -2dB", "route mic sub", "input remove mic", "midi map cc 7 vol bass",
      "midi unmap cc 1", "tempo 120 4", "quality best", "songchange crossfade 3", "meterpoint pre", "scene save verse", "vol bass -9dB",
      "scene recall verse fade 1s", "scene safe bass", "scene rename verse v2", "scene remove v2", "remove drums",
      "add \(h.drums) as again", "begin; vol bass 0.5; pan bass -0.2; commit", "vol bass 0 over 2s", "remove all"
    ]
    for line in lines {
      let before = try Self.saved(h)
      let steps = h.console.history.steps.count
      let r = h.run(line)
      try #require(r.ok, "\(line): \(r.output)")
      #expect(h.console.history.steps.count == steps + 1, "\(line): one step")
      let after = try Self.saved(h)
      #expect(after != before, "\(line) changed nothing")
      let undone = h.run("undo")
      let shown = line.hasPrefix("begin; ") ? "commit: vol bass 0.5; pan bass -0.2 (" : line
      #expect(undone.ok && undone.output.first?.hasPrefix("undone: \(shown)") == true, "\(line): \(undone.output)")
      #expect(try Self.saved(h) == before, "\(line): undo did not give back the session saved before")
      #expect(h.run("redo").ok, "\(line)")
      #expect(try Self.saved(h) == after, "\(line): redo did not give back the session saved after")
    }
    // All the way back: the two stems as added, and forward again to none.
    #expect(h.run("undo \(lines.count)").ok)
    #expect(h.mixer.stems.names == ["drums", "bass"])
    #expect(try h.mixer.stems.status("drums").settings == StemSettings(name: "drums", file: h.drums))
    #expect(h.run("redo 100").ok)
    #expect(h.mixer.stems.names.isEmpty)
  }

  @Test("undo and redo say what they did; a new change ends what can be redone; history numbers the steps and marks the undone")
  func words() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    h.console.resetHistory()
    #expect(h.run("undo") == (false, ["error: nothing to undo since the session was opened"]))
    #expect(h.run("history").output == ["no changes since the session was opened"])
    #expect(h.run("vol drums -6dB; pan bass 0.5").ok)
    #expect(h.run("undo").output == ["undone: pan bass 0.5 (bass pan 0.5 → 0)"])
    #expect(
      h.run("history").output == [
        "   1  vol drums -6dB [repl] (drums volume 0dB → -6dB)",
        "~  2  pan bass 0.5 [repl] (bass pan 0 → 0.5)",
        "(~: undone; 'redo' does it again)"
      ])
    #expect(h.run("mute drums").ok)
    #expect(h.run("redo") == (false, ["error: nothing to redo (a change after an undo ends what can be redone)"]))
    #expect(h.run("undo 5").output == ["undone: mute drums (drums mute true → false)", "undone: vol drums -6dB (drums volume -6dB → 0dB)"])
    #expect(try h.mixer.stems.status("drums").settings.strip == StripSettings())
    #expect(h.run("undo 0") == (false, ["error: undo: the number of steps must be a whole number from 1 to 100 (got '0')"]))
    // A command that changed nothing, or failed, is no step.
    #expect(!h.run("vol nope 1").ok)
    #expect(h.run("stems; vol drums 1").ok)
    #expect(h.console.history.steps.count == 2 && h.console.history.done == 0)
  }

  @Test("the history keeps the last 100 steps whatever the number of changes (100,000 here), and undoes exactly those")
  func bounded() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    h.console.resetHistory()
    for i in 1...100_000 {
      if i % 500 == 0 { h.render(blocks: 1) }  // the renderer takes the commands
      try h.mixer.strips.setVolume("drums", Double(i % 1000) / 1000)
      h.console.noteChanges(source: "repl", text: "vol \(i)")
    }
    #expect(h.console.history.steps.count == UndoHistory.limit)
    #expect(h.console.history.steps.first?.text == "vol 99901")
    #expect(h.run("undo 100").ok)
    #expect(try h.mixer.stems.status("drums").settings.volume == 0.9)  // as before "vol 99901"
    #expect(h.run("undo").output == ["error: nothing to undo (the oldest of the last 100 steps is reached)"])
  }

  @Test("a fader drag in the mixer view is one step, u takes it back and U does it again; a MIDI sweep joins into one step")
  func viewAndMidi() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let view = MixerView(console: h.console)
    let faders = TwoStripFaders(), bassFader = faders.bass
    func row(_ db: Double) -> Int { faders.row(db) }
    let steps = h.console.history.steps.count
    view.mouse(column: bassFader + 1, row: row(-3), kind: 1, columns: 80, rows: 24)
    for db in [-6.0, -12, -18, -24] { view.mouse(column: bassFader + 1, row: row(db), kind: 3, columns: 80, rows: 24) }
    view.mouse(column: bassFader + 1, row: row(-24), kind: 2, columns: 80, rows: 24)
    #expect(h.console.history.steps.count == steps + 1)
    #expect(h.console.history.steps.last?.source == "view")
    view.handle(.character("u"))
    #expect(try h.mixer.stems.status("bass").settings.volume == 1)
    #expect(view.state.status.hasPrefix("undone: mixer view (bass volume"), "\(view.state.status)")
    view.handle(.character("U"))
    #expect(abs(Decibels.fromAmplitude(try h.mixer.stems.status("bass").settings.volume) + 24) < 1e-9)
    // A MIDI controller's moves reach the mixer between commands: one step for the sweep.
    let sweep = h.console.history.steps.count
    for v in stride(from: 0.9, through: 0.1, by: -0.1) {
      try h.mixer.strips.setVolume("drums", v)
      h.console.serviceOnce()
    }
    #expect(h.console.history.steps.count == sweep + 1)
    #expect(h.console.history.steps.last?.source == "midi")
    #expect(h.run("undo").ok)
    #expect(try h.mixer.stems.status("drums").settings.volume == 1)
  }

  @Test("undo of a stem removed while playing brings it back in place: the same frame of its loop as if never removed")
  func removedStemComesBackInPlace() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("loops all -1; play").ok)  // both loop forever
    h.render(blocks: 40)
    #expect(h.run("remove drums").ok)
    h.render(blocks: 10)
    #expect(h.run("undo").ok)
    h.render(blocks: 100)  // past the join margin (0.3 s), and past the ends of both files
    let drums = try h.mixer.stems.status("drums"), bass = try h.mixer.stems.status("bass")
    let position = h.mixer.transport.position
    // drums (2 s, 48 kHz) and bass (1 s) loop from the transport's start: each stands where the
    // transport does in its own loop, to the frame.
    #expect(
      abs(drums.positionInFile - position.truncatingRemainder(dividingBy: 2)) <= 1.0 / 48000, "\(drums.positionInFile) at \(position)")
    #expect(abs(bass.positionInFile - position.truncatingRemainder(dividingBy: 1)) <= 1.0 / 44100, "\(bass.positionInFile) at \(position)")
    #expect(drums.underruns == 0 && !drums.failed)
  }

  @Test("over the control socket and OSC: undo and redo answer as commands; an OSC fader's stream of moves is one step from osc")
  func socketAndOSC() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let control = try ControlServer(path: h.folder.file("c.sock"), makeFolder: false)
    defer { control.close() }
    func ask(_ cmd: String) throws -> [String: Any] {
      let text = control.reply(to: Array(ControlServer.encode(["id": 1, "cmd": cmd]).utf8), h.console)
      return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
    }
    #expect(try ask("vol drums 0.5")["ok"] as? Bool == true)
    #expect(h.console.history.steps.last?.source == "socket")
    let undone = try ask("undo")
    #expect(
      undone["ok"] as? Bool == true && (undone["output"] as? [String])?.first?.hasPrefix("undone: vol drums 0.5") == true, "\(undone)")
    #expect(try h.mixer.stems.status("drums").settings.volume == 1)
    let refused = try ask("redo 2; undo 1000")
    #expect(refused["ok"] as? Bool == false && (refused["error"] as? String)?.contains("whole number from 1 to 100") == true, "\(refused)")
    #expect(try h.mixer.stems.status("drums").settings.volume == 0.5)  // 'redo 2' did the one step there was
    let listed = try ask("history")
    let rows = try #require(listed["history"] as? [[String: Any]], "\(listed)")
    #expect(rows.last?["text"] as? String == "vol drums 0.5" && rows.last?["source"] as? String == "socket")
    #expect(rows.last?["undone"] as? Bool == false && rows.last?["changes"] as? [String] == ["drums volume 1 → 0.5"], "\(rows)")
    let osc = try OSCServer(host: "127.0.0.1", port: 0)
    defer { osc.close() }
    func send(_ path: String, _ arguments: [OSCArgument] = []) -> (ok: Bool, text: String)? {
      osc.handle(OSCMessage(path: path, arguments: arguments, source: sockaddr_storage(), sourceLength: 0), h.console)
    }
    let steps = h.console.history.steps.count
    for db in stride(from: -1.0, through: -20, by: -1) { #expect(send("/stemdeck/stem/bass/vol", [.float(Float(db))]) == nil) }
    #expect(h.console.history.steps.count == steps + 1)
    #expect(h.console.history.steps.last?.source == "osc")
    #expect(send("/stemdeck/undo", [.int(1)]) == nil)
    #expect(try h.mixer.stems.status("bass").settings.volume == 1)
    #expect(send("/stemdeck/undo", [.int(0)]) == nil)  // a button's release does nothing
    #expect(try h.mixer.stems.status("drums").settings.volume == 0.5)
    #expect(send("/stemdeck/redo") == nil)
    #expect(abs(Decibels.fromAmplitude(try h.mixer.stems.status("bass").settings.volume) + 20) < 1e-6)
  }

  @Test("MIDI: a note mapped to undo takes back the last change and one mapped to redo does it again, as the REPL's commands")
  func midiPresses() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("midi map note 62 undo; midi map note 63 redo").ok)
    #expect(h.run("vol drums 0.5").ok)
    h.render(blocks: 1)
    var events: [String] = []
    h.console.writeEvent = { events.append($0) }
    func press(_ note: UInt8) -> [String] {
      midiInput(h.mixer.renderState, offset: 0, count: 3, 0x90, note, 100)
      h.render(blocks: 1)
      events.removeAll()
      h.console.serviceOnce()
      return events
    }
    let undone = press(62)
    #expect(try h.mixer.stems.status("drums").settings.volume == 1)
    #expect(undone.first?.hasPrefix("midi undo: undone: vol drums 0.5") == true, "\(undone)")
    _ = press(63)
    #expect(try h.mixer.stems.status("drums").settings.volume == 0.5)
    #expect(h.run("midi maps").output.suffix(2) == ["note 62 undo", "note 63 redo"])
  }
}
