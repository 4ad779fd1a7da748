import Foundation
import StemdeckControl
import StemdeckEngine
import StemdeckSession
import Testing
@testable import StemdeckConsole
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

// MIDI control without JACK: the `midi` command against an offline mixer, and MIDI events fed to
// the renderer the way the process callback does (`midiInput` before `renderBlock`).

@Suite("MIDI control: curve, 14-bit pairs, takeover")
struct MidiMathTests {
  @Test("the fader curve: CC 0 → −inf, 100 → 0 dB, 127 → +6 dB; gain = (CC/100)^2.9, and its inverse")
  func curve() {
    #expect(MidiCurve.gain(position: 0) == 0)
    #expect(abs(MidiCurve.gain(position: 100) - 1) < 1e-12)
    #expect(abs(20 * log10(MidiCurve.gain(position: 127)) - 6.0206) < 0.001)
    #expect(abs(MidiCurve.gain(position: 50) - pow(0.5, 2.9)) < 1e-4)
    for p in stride(from: 1.0, through: 127, by: 7) {
      #expect(abs(MidiCurve.position(gain: MidiCurve.gain(position: p)) - p) < 1e-9)
    }
    #expect(MidiCurve.pan(position: 0) == -1 && MidiCurve.pan(position: 64) == 0 && MidiCurve.pan(position: 127) == 1)
    #expect(MidiCurve.rate(bend: 8192) == 1 && MidiCurve.rate(bend: 0) == 0.5 && abs(MidiCurve.rate(bend: 16383) - 2) < 0.001)
  }

  @Test("14-bit pairs: an MSB alone is 7-bit; with its LSB the value is 14-bit; a new MSB clears the LSB")
  func fine() {
    var c = FineController()
    let alone = c.receive(msb: 100)
    #expect(alone == 100)
    let paired = c.receive(lsb: 64)
    #expect(paired == 100.5)
    let cleared = c.receive(msb: 127)
    #expect(cleared == 127)
    let top = c.receive(lsb: 127)
    #expect(top == 127 + 127.0 / 128)
    #expect(MidiCurve.gain(position: top) == 2)  // the curve stops at +6 dB
  }

  @Test("soft takeover: held until the controller reaches or crosses the value; lost when the value moves elsewhere")
  func takeover() {
    var t = SoftTakeover()
    var moves: [Bool] = []
    moves.append(t.accept(position: 10, currentPosition: 100, current: 1))
    moves.append(t.accept(position: 90, currentPosition: 100, current: 1))
    moves.append(t.accept(position: 110, currentPosition: 100, current: 1))  // crossed
    t.lastApplied = 1.3
    moves.append(t.accept(position: 112, currentPosition: 110, current: 1.3))
    // The REPL set another value (position 64): the fader, still above it, must catch it again.
    moves.append(t.accept(position: 100, currentPosition: 64, current: 0.3))
    #expect(moves == [false, false, true, true, false])
    var near = SoftTakeover()
    let within = near.accept(position: 64, currentPosition: 64.3, current: 0.3)  // within half a step
    #expect(within)
  }
}

@Suite("MIDI control: the midi command and the renderer")
struct MidiCommandTests {
  @Test("midi map / maps / unmap; every malformed mapping is refused with what is allowed and changes nothing")
  func mapAndRefuse() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("midi map cc 7 ch 1 vol drums").ok)
    #expect(h.run("midi map cc 10 pan drums").ok)
    #expect(h.run("midi map bend rate bass").ok)
    #expect(h.run("midi map note 40 toggle mute bass").ok)
    #expect(h.run("midi map cc 64 play").ok)
    #expect(h.mixer.isDirty)
    let maps = h.run("midi maps").output
    #expect(maps == ["cc 7 ch 1 volume drums", "cc 10 pan drums", "bend rate bass", "note 40 mute bass", "cc 64 play"])
    let refusals: [(String, String)] = [
      ("midi map cc 200 vol drums", "cc number must be a whole number between 0 and 127 (got '200')"),
      ("midi map cc 7 ch 17 vol drums", "channel must be a whole number between 1 and 16"),
      ("midi map cc 7 vol nosuch", "no stem, bus or input named 'nosuch'"),
      ("midi map note 36 sfx fire nokick", "no effect named 'nokick'"),
      ("midi map note 36 vol drums", "volume follows a controller or pitch bend, not a note"),
      ("midi map cc 7 rate drums", "rate follows pitch bend only"),
      ("midi map cc 7 wiggle drums", "unknown MIDI action 'wiggle'"),
      ("midi map knob 7 vol drums", "MIDI source must be cc N, note N, pc N (a program change) or bend (got 'knob')"),
      ("midi map cc 7 ch 1 vol drums", "that mapping exists already"),
      ("midi map cc 64 play drums", "play takes no name"),
      ("midi unmap cc 99", "no mapping on cc 99")
    ]
    for (line, fragment) in refusals {
      let r = h.run(line)
      #expect(!r.ok, "\(line) was accepted")
      #expect(r.output.contains { $0.hasPrefix("error: ") && $0.contains(fragment) }, "\(line): \(r.output)")
    }
    #expect(h.run("midi maps").output == maps)
    #expect(h.run("midi unmap cc 10").output == ["midi: removed cc 10 pan drums"])
    #expect(h.run("midi unmap all").ok)
    #expect(h.mixer.midi.mappings.isEmpty)
  }

  @Test("a mapped CC moves the stem at the event's frame within the block, and the mixer's settings follow")
  func landsAtFrame() throws {
    let h = try ConsoleHarness()
    defer { h.shutdown() }
    try h.folder.wav("tone.wav", channels: 1, sampleRate: 48000, seconds: 1, frequency: 1000)
    #expect(h.run("add \(h.folder.file("tone.wav"))").ok)
    #expect(h.run("midi map cc 7 vol tone").ok)
    #expect(h.run("play").ok)
    h.render(blocks: 4)
    let left = UnsafeMutablePointer<Float>.allocate(capacity: 1024)
    let right = UnsafeMutablePointer<Float>.allocate(capacity: 1024)
    defer { left.deallocate(); right.deallocate() }
    func block(_ events: [(Int, [UInt8])]) -> [Float] {
      h.mixer.engine.fillStreams()
      for (offset, b) in events { midiInput(h.mixer.renderState, offset: offset, count: b.count, b[0], b[1], b[2]) }
      renderBlock(h.mixer.renderState, left: left, right: right, frameCount: 1024)
      return Array(UnsafeBufferPointer(start: left, count: 1024))
    }
    func peak(_ s: [Float], _ range: Range<Int>) -> Float { s[range].map(abs).max() ?? 0 }
    let reference = peak(block([]), 0..<1024)
    #expect(reference > 0.3)
    // Picked up at 100 (the stem's 0 dB), then down to CC 0 at frame 500 of the next block.
    _ = block([(0, [0xB0, 7, 100])])
    let moved = block([(500, [0xB0, 7, 0])])
    #expect(abs(peak(moved, 404..<500) - reference) < 0.01 * reference, "untouched before frame 500")
    #expect(peak(moved, 500 + 480..<1024) < 1e-6, "silent once the 10 ms ramp from frame 500 is done")
    #expect(peak(moved, 500..<548) < reference && peak(moved, 500..<548) > 0.8 * reference, "the ramp starts at frame 500")
    // The control thread records the value the renderer applied.
    _ = h.mixer.pump()
    #expect(try h.mixer.stems.status("tone").settings.volume == 0)
    #expect(h.mixer.isDirty)
    // Two events in one block, the second on a 14-bit LSB: both land, in order.
    let fine = block([(100, [0xB0, 7, 100]), (300, [0xB0, 39, 64])])
    #expect(peak(fine, 1000..<1024) > 0.9 * reference)
    _ = h.mixer.pump()
    let v = try h.mixer.stems.status("tone").settings.volume
    #expect(abs(v - MidiCurve.gain(position: 100.5)) < 1e-9, "\(v)")
  }

  @Test("EQ mappings: a CC sets a band's gain (0 → -18 dB, 64 → 0, 127 → +18), a note toggles the EQ; refusals; saved")
  func eqMappings() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("midi map cc 20 eq low drums").ok)
    #expect(h.run("midi map cc 21 ch 2 eqmid drums").ok)
    #expect(h.run("midi map cc 22 eq high bass").ok)
    #expect(h.run("midi map note 36 toggle eq drums").ok)
    #expect(
      h.run("midi maps").output == ["cc 20 eqlow drums", "cc 21 ch 2 eqmid drums", "cc 22 eqhigh bass", "note 36 eq drums"])
    for (line, fragment) in [
      ("midi map note 40 eq low drums", "eqlow follows a controller only (use source cc)"),
      ("midi map bend eq mid drums", "eqmid follows a controller only"),
      ("midi map bend toggle eq drums", "eq acts on a note or a controller press, not pitch bend"),
      ("midi map cc 23 eq treble drums", "eq takes a band: eq low|mid|high NAME"),
      ("midi map cc 23 eq low nosuch", "no stem, bus or input named 'nosuch'")
    ] {
      let r = h.run(line)
      #expect(!r.ok && r.output.contains { $0.hasPrefix("error: ") && $0.contains(fragment) }, "\(line): \(r.output)")
    }
    // As the process callback: the event, then the block (which also takes the mapping table).
    h.render(blocks: 1)
    func send(_ b: [UInt8]) {
      midiInput(h.mixer.renderState, offset: 0, count: 3, b[0], b[1], b[2])
      h.render(blocks: 1)
      _ = h.mixer.pump()
    }
    var gains: [Double] = []
    for value: UInt8 in [0, 32, 64, 127] {
      send([0xB0, 20, value])
      gains.append(try h.mixer.strips.eq("drums").low.gain)
    }
    #expect(gains == [-18, -9, 0, 18], "\(gains)")
    send([0xB1, 21, 96])  // channel 2
    send([0xB0, 21, 127])  // channel 1: not this mapping's
    #expect(try h.mixer.strips.eq("drums").mid.gain == 9.1)
    send([0xB0, 22, 1])
    #expect(try h.mixer.strips.eq("bass").high.gain == -17.7)
    #expect(try h.mixer.strips.eq("drums").enabled)
    send([0x90, 36, 100])
    send([0x90, 36, 0])  // note off: not a press
    #expect(try !h.mixer.strips.eq("drums").enabled)
    send([0x90, 36, 90])
    #expect(try h.mixer.strips.eq("drums").enabled)
    #expect(h.run("eq drums").output == ["drums eq: low 100 Hz +18 dB, mid 1000 Hz +9.1 dB q 0.707"])
    let path = h.folder.file("eq-midi.json")
    #expect(h.run("save \(path)").ok)
    #expect(try SessionFile.load(path: path).midi.mappings == h.mixer.midi.mappings)
  }

  @Test("buses and live inputs: vol/pan through the fader curve with soft takeover, mute/solo/EQ toggles; rate refused; send levels")
  func stripMappings() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    for line in [
      "bus add grp", "input add mic mono", "midi map cc 30 vol grp", "midi map cc 31 pan mic", "midi map note 40 toggle mute grp",
      "midi map note 41 toggle solo mic", "midi map note 42 toggle eq grp", "midi map cc 32 eq low mic"
    ] {
      let r = h.run(line)
      #expect(r.ok, "\(line): \(r.output)")
    }
    for (line, fragment) in [
      ("midi map bend rate grp", "no stem named 'grp' (midi rate drives a stem)"),
      ("midi map cc 33 vol nosuch", "no stem, bus or input named 'nosuch'")
    ] {
      let r = h.run(line)
      #expect(!r.ok && r.output.contains { $0.hasPrefix("error: ") && $0.contains(fragment) }, "\(line): \(r.output)")
    }
    h.render(blocks: 1)
    func send(_ b: [UInt8]) {
      midiInput(h.mixer.renderState, offset: 0, count: 3, b[0], b[1], b[2])
      h.render(blocks: 1)
      _ = h.mixer.pump()
    }
    func bus() throws -> BusSettings { try h.mixer.buses.setting("grp") }
    func mic() throws -> InputSettings { try h.mixer.inputs.status("mic").settings }
    // The bus is at 0 dB (CC 100): a controller at 20 is held; reaching 99.6… (100) picks it up.
    send([0xB0, 30, 20])
    #expect(try bus().volume == 1)
    #expect(h.mixer.midi.heldMoves == 1)
    send([0xB0, 30, 100])
    send([0xB0, 30, 50])
    #expect(try abs(bus().volume - MidiCurve.gain(position: 50)) < 1e-12)
    // A change made elsewhere drops the pick-up again.
    #expect(h.run("vol grp 1").ok)
    send([0xB0, 30, 10])
    #expect(try bus().volume == 1)
    // The input's pan: centre is 64.
    send([0xB0, 31, 64])
    send([0xB0, 31, 127])
    #expect(try mic().pan == 1)
    send([0x90, 40, 100])
    #expect(try bus().mute)
    send([0x90, 40, 100])
    #expect(try !bus().mute)
    send([0x90, 41, 90])
    #expect(try mic().solo)
    send([0x90, 42, 90])
    #expect(try !bus().eq.enabled)
    send([0xB0, 32, 127])
    #expect(try mic().eq.low.gain == 18)
    // Send levels: a bus's from silence (CC 0 picks it up), an input's pre-fader one at -20 dB
    // (position 45.3) picked up at 45 and kept pre-fader.
    for line in ["send add verb", "send mic verb -20dB pre", "midi map cc 34 send grp verb", "midi map cc 36 send mic verb"] {
      let r = h.run(line)
      #expect(r.ok, "\(line): \(r.output)")
    }
    for (line, fragment) in [
      ("midi map cc 37 send grp nosuch", "no send named 'nosuch'"),
      ("midi map note 3 send grp verb", "send follows a controller or pitch bend, not a note"),
      ("midi map cc 38 send grp", "send needs the sending stem, bus or input and the send")
    ] {
      let r = h.run(line)
      #expect(!r.ok && r.output.contains { $0.hasPrefix("error: ") && $0.contains(fragment) }, "\(line): \(r.output)")
    }
    h.render(blocks: 1)  // takes the new mappings
    send([0xB0, 34, 0])
    send([0xB0, 34, 100])
    send([0xB0, 36, 45])
    let verb = try #require(h.mixer.sends.all.first { $0.name == "verb" })
    #expect(verb.levels["grp"] == SendLevel(gain: 1, preFader: false), "\(verb.levels)")
    #expect(verb.levels["mic"] == SendLevel(gain: MidiCurve.gain(position: 45), preFader: true), "\(verb.levels)")
    #expect(h.run("midi maps").output.contains("cc 34 send grp verb"))
    let path = h.folder.file("strip-midi.json")
    #expect(h.run("save \(path)").ok)
    #expect(try SessionFile.load(path: path).midi.mappings == h.mixer.midi.mappings)
  }

  @Test("show mappings: next, prev and stop presses reach the front end as commands; vol master rides the master fader; refusals; saved")
  func showMappings() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    for line in ["midi map note 60 next", "midi map note 59 prev", "midi map cc 70 stop", "midi map cc 15 vol master"] {
      let r = h.run(line)
      #expect(r.ok, "\(line): \(r.output)")
    }
    for (line, fragment) in [
      ("midi map note 61 next drums", "next takes no name"),
      ("midi map bend stop", "stop acts on a note or a controller press, not pitch bend"),
      ("midi map cc 16 pan master", "target"),
      ("midi map note 62 toggle mute master", "target")
    ] {
      let r = h.run(line)
      #expect(!r.ok && r.output.contains { $0.hasPrefix("error: ") && $0.contains(fragment) }, "\(line): \(r.output)")
    }
    h.render(blocks: 1)
    func send(_ b: [UInt8]) -> [MixerEvent] {
      midiInput(h.mixer.renderState, offset: 0, count: 3, b[0], b[1], b[2])
      h.render(blocks: 1)
      return h.mixer.pump()
    }
    #expect(send([0x90, 60, 100]).contains(.midiCommand("next")))
    #expect(!send([0x80, 60, 0]).contains(.midiCommand("next")), "a note off is not a press")
    #expect(send([0x90, 59, 1]).contains(.midiCommand("prev")))
    #expect(send([0xB0, 70, 127]).contains(.midiCommand("stop")))
    #expect(!send([0xB0, 70, 127]).contains(.midiCommand("stop")), "held down: one press")
    // The master is at 0 dB (CC 100): 20 is held; 100 picks it up; 50 sets it.
    _ = send([0xB0, 15, 20])
    #expect(h.mixer.master.volume == 1)
    _ = send([0xB0, 15, 100])
    _ = send([0xB0, 15, 50])
    #expect(abs(h.mixer.master.volume - MidiCurve.gain(position: 50)) < 1e-12)
    #expect(h.run("midi maps").output == ["note 60 next", "note 59 prev", "cc 70 stop", "cc 15 volume master"])
    let path = h.folder.file("show-midi.json")
    #expect(h.run("save \(path)").ok)
    #expect(try SessionFile.load(path: path).midi.mappings == h.mixer.midi.mappings)
  }

  @Test("learn binds the next CC; an unmapped note does nothing; the mappings round-trip through the session")
  func learnAndSession() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("midi learn vol drums").ok)
    midiInput(h.mixer.renderState, offset: 0, count: 3, 0x95, 60, 100)  // a note: not for a volume
    midiInput(h.mixer.renderState, offset: 0, count: 3, 0xB2, 21, 5)
    h.render(blocks: 1)
    #expect(h.idle().contains { $0.contains("midi learned: cc 21 ch 3 volume drums") })
    #expect(h.mixer.midi.mappings == [MidiMapping(source: .cc, number: 21, channel: 3, action: .volume, target: "drums")])
    let path = h.folder.file("s.json")
    #expect(h.run("save \(path)").ok)
    let session = try SessionFile.load(path: path)
    #expect(session.midi.mappings == h.mixer.midi.mappings)
    #expect(h.run("midi unmap all").ok)
    #expect(h.run("open \(path)").ok)
    #expect(h.run("midi maps").output == ["cc 21 ch 3 volume drums"])
  }

  @Test("feedback: each mapped CC's value once, again only after a change; a new table sends it again")
  func feedback() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("midi map cc 7 ch 2 vol drums").ok)
    #expect(h.run("midi map note 36 toggle mute drums").ok)
    #expect(h.run("midi map cc 10 pan bass").ok)
    h.render(blocks: 1)
    func drain() -> [[UInt8]] {
      var index = 0
      var out: [[UInt8]] = []
      while let m = midiFeedback(h.mixer.renderState, index: &index) { out.append([m.status, m.data1, m.data2]) }
      return out
    }
    #expect(drain() == [[0xB1, 7, 100], [0xB0, 10, 64]])
    #expect(drain().isEmpty)
    #expect(h.run("vol drums 0.5").ok)
    #expect(h.run("pan bass -1").ok)
    h.render(blocks: 1)
    #expect(drain() == [[0xB1, 7, 79], [0xB0, 10, 0]])
    midiFeedbackReset(h.mixer.renderState)
    #expect(drain().count == 2)
  }

  /// Issue 42, item 3: a footswitch's LED and a pedal board's display.
  @Test("feedback: a play button's LED follows the transport; song buttons send the setlist song as a program change")
  func feedbackOfPlayAndSong() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("midi map note 60 ch 16 play").ok)
    #expect(h.run("midi map cc 64 ch 16 do next").ok)
    #expect(h.run("midi map cc 65 ch 16 do \"vol drums -3dB\"").ok)  // shows nothing
    func drain() -> [[UInt8]] {
      var index = 0
      var out: [[UInt8]] = []
      while let m = midiFeedback(h.mixer.renderState, index: &index) {
        out.append(Array([m.status, m.data1, m.data2].prefix(midiFeedbackLength(status: m.status))))
      }
      return out
    }
    h.render(blocks: 1)
    #expect(drain() == [[0x8F, 60, 0], [0xCF, 0]], "stopped, song 1 (program 0)")
    #expect(drain().isEmpty, "nothing again until something changes")
    #expect(h.run("play").ok)
    var got: [[UInt8]] = []
    for _ in 0..<20 where got.isEmpty {
      h.render(blocks: 1)
      got = drain()
    }
    #expect(got == [[0x9F, 60, 127]], "playing: the LED on")
    h.mixer.midi.setSongNumber(2)
    h.render(blocks: 1)
    #expect(drain() == [[0xCF, 2]], "song 3 (program 2)")
    #expect(h.run("stop").ok)
    got = []
    for _ in 0..<20 where got.isEmpty {
      h.render(blocks: 1)
      got = drain()
    }
    #expect(got == [[0x8F, 60, 0]], "stopped: the LED off")
    // A setlist's songs (each saved with the mappings): its number follows `next`.
    #expect(h.run("save \(h.folder.file("one.json"))").ok)
    #expect(h.run("save \(h.folder.file("two.json"))").ok)
    try "one.json\ntwo.json\n".write(toFile: h.folder.file("list.txt"), atomically: true, encoding: .utf8)
    #expect(h.run("setlist \(h.folder.file("list.txt"))").ok)
    h.render(blocks: 1)
    #expect(drain().contains([0xCF, 0]), "song 1 of the setlist: program 0")
    #expect(h.run("next").ok)
    h.render(blocks: 1)
    #expect(drain().contains([0xCF, 1]), "song 2: program 1")
  }
}
