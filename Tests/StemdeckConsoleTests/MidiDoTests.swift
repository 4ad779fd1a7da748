import Foundation
import StemdeckControl
import StemdeckEngine
import StemdeckSession
import Testing

@testable import StemdeckConsole
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

/// Any command on a pedal (issue 42, item 3): a MIDI mapping's `do` line runs on each press, as
/// typed; file commands are refused when mapped and again when run (a session file could hold
/// one); a bouncing sustain pedal is one press.
@Suite struct MidiDoTests {
  @Test("'do' runs its line on each press (quoted, with ';'), is listed and saved as typed, and refuses what it must")
  func doLines() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("midi map note 60 ch 16 do \"mute drums; pan bass 0.5\"").ok)
    #expect(h.run("midi map cc 64 do next").ok)
    for (line, fragment) in [
      ("midi map note 61 do", "do needs a command line"),
      ("midi map note 61 do \"save /tmp/x.json\"", "do: 'save /tmp/x.json' reads or writes files: refused from a MIDI mapping"),
      ("midi map note 61 do \"vol drums 1; sfx load a b.wav\"", "'sfx load a b.wav' reads or writes files"),
      ("midi map note 61 do frobnicate", "do: unknown command 'frobnicate'"),
      ("midi map bend do play", "not pitch bend")
    ] {
      let r = h.run(line)
      #expect(!r.ok && r.output.joined().contains(fragment), "\(line): \(r.output)")
    }
    #expect(h.run("midi maps").output == ["note 60 ch 16 do \"mute drums; pan bass 0.5\"", "cc 64 do next"])
    h.render(blocks: 1)
    var events: [String] = []
    h.console.writeEvent = { events.append($0) }
    func send(_ b: [UInt8]) {
      midiInput(h.mixer.renderState, offset: 0, count: b.count, b[0], b[1], b.count > 2 ? b[2] : 0)
      h.render(blocks: 1)
      h.console.serviceOnce()
    }
    send([0x9F, 60, 100])
    #expect(try h.mixer.stems.status("drums").settings.mute && h.mixer.stems.status("bass").settings.pan == 0.5)
    #expect(h.console.history.steps.last?.source == "midi")
    // A sustain pedal whose contacts bounce (down, up, down within one period): one press, one
    // 'next' (refused here: no setlist, said as an event).
    events.removeAll()
    for (offset, value) in [(10, 127), (12, 0), (14, 127)] as [(Int, UInt8)] {
      midiInput(h.mixer.renderState, offset: offset, count: 3, 0xB0, 64, value)
    }
    h.render(blocks: 1)
    h.console.serviceOnce()
    #expect(events.filter { $0.hasPrefix("midi next:") }.count == 1, "\(events)")
    // Saved as typed and read back.
    let path = h.folder.file("pedal.json")
    #expect(h.run("save \(path); new!; open! \(path)").ok)
    #expect(h.run("midi maps").output == ["note 60 ch 16 do \"mute drums; pan bass 0.5\"", "cc 64 do next"])
  }

  @Test("a 'do' line that touches files, put in a session file by hand, is not run when pressed: the event says why")
  func fileLineFromASessionFile() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let path = h.folder.file("planted.json"), target = h.folder.file("overwritten.json")
    #expect(h.run("save \(path)").ok)
    var session = try SessionFile.load(path: path)
    session.midi.mappings.append(MidiMapping(source: .note, number: 62, action: .command, target: "save \(target)"))
    try SessionFile.save(session, to: path)
    #expect(h.run("open! \(path)").ok)
    h.render(blocks: 1)
    var events: [String] = []
    h.console.writeEvent = { events.append($0) }
    midiInput(h.mixer.renderState, offset: 0, count: 3, 0x90, 62, 100)
    h.render(blocks: 1)
    h.console.serviceOnce()
    #expect(events.contains { $0.contains("reads or writes files: refused from a MIDI mapping") }, "\(events)")
    #expect(!FileManager.default.fileExists(atPath: target))
  }

  @Test("a press mapped to 'toggle safe' switches a strip's solo-safe, a stem's or a live input's")
  func toggleSafe() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("input add mic mono; midi map note 41 toggle safe drums; midi map note 42 safe mic").ok)
    #expect(h.run("midi maps").output == ["note 41 safe drums", "note 42 safe mic"])
    h.render(blocks: 1)
    func press(_ note: UInt8) {
      midiInput(h.mixer.renderState, offset: 0, count: 3, 0x90, note, 100)
      h.render(blocks: 1)
      h.console.serviceOnce()
    }
    press(41)
    #expect(try h.mixer.stems.status("drums").settings.soloSafe)
    press(42)  // a live input is solo-safe from the start: the press makes it follow solo
    #expect(h.mixer.inputs.settings.first?.strip.soloSafe == false)
    press(41)
    #expect(try !h.mixer.stems.status("drums").settings.soloSafe)
  }

  @Test(
    "a pedal's 'goto chorus' (issue 42, item 2) sets a jump waiting for the next bar line, shown by 'mark list', 'status' and the JSON status; 'goto chorus now' seeks; OSC /stemdeck/goto ,ss chorus bar jumps too"
  )
  func pedalGoto() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("tempo 120 4; mark add chorus at 1.5; midi map note 60 do \"goto chorus\"; play").ok)
    #expect(h.run("mark add chorus at 0.5").output.joined().contains("already a mark 'chorus'"))
    #expect(h.run("goto chorsu").output.joined().contains("did you mean 'chorus'?"))
    h.render(blocks: 4)  // 4,096 frames: the next bar line 0.25 s on is bar 2's (2 s, frame 96,000)
    midiInput(h.mixer.renderState, offset: 0, count: 3, 0x90, 60, 100)
    h.render(blocks: 1)
    h.console.serviceOnce()
    let jump = try #require(h.mixer.marks.waitingJump, "the pedal's goto sent no jump")
    #expect(jump.mark == "chorus" && jump.atSeconds == 2 && jump.toSeconds == 1.5)
    #expect(h.run("mark list").output == ["chorus  0:01.500 (bar 1.4)", "jumping to 'chorus' (0:01.500) at 0:02.000 (bar 2.1)"])
    #expect(h.run("status").output.contains("jumping to 'chorus' (0:01.500) at 0:02.000"))
    let json = QueryJSON.status(Display.statusReport(h.console))
    #expect((json["jump"] as? [String: Any])?["at"] as? Double == 2)
    #expect(h.run("goto chorus now").output == ["at 'chorus' (0:01.500)"])
    #expect(h.mixer.marks.waitingJump == nil && h.mixer.transport.position == 1.5)
    // OSC: a mark and where it lands (,ss).
    h.render(blocks: 4)
    let server = try OSCServer(host: "127.0.0.1", port: 0)
    defer { server.close() }
    let message = OSCMessage(
      path: "/stemdeck/goto", arguments: [.string("chorus"), .string("bar")], source: sockaddr_storage(), sourceLength: 0)
    #expect(server.handle(message, h.console) == nil)
    #expect(h.mixer.marks.waitingJump?.mark == "chorus" && h.mixer.marks.waitingJump?.atSeconds == 2)
  }
}
