import Foundation
import StemdeckControl
import StemdeckEngine
import StemdeckSession
import StemdeckTestSupport
import Testing

/// A bus's and a live input's aux sends (issue 22, item 2) rendered through `renderBlock` with
/// `SendRenderTests`' capture: pre- and post-fader levels, removal, the session round trip.
@Suite struct StripSendRenderTests {
  let capture = SendRenderTests()

  func message(_ body: () throws(MixerError) -> Void) -> String { capture.message(body) }

  /// A mono stem `kick` (noise) into bus `drums_bus` (volume 0.5, balance 0.3), the only path to
  /// the master, and send `verb`.
  func busRig(_ folder: TemporaryFolder) throws -> (MixerRig, [Float]) {
    let x = Signal.noise(frames: 48000, amplitude: 0.5, seed: 51)
    try writeAudio(folder.file("kick.wav"), format: .wavFloat, channels: [x])
    let rig = MixerRig()
    let m = rig.mixer
    _ = try m.stems.add(path: folder.file("kick.wav"), settings: StemSettings(name: "kick", file: "kick.wav"))
    var bus = BusSettings(name: "drums_bus")
    bus.volume = 0.5
    bus.pan = 0.3
    try m.buses.add(bus)
    try m.buses.route("kick", to: "drums_bus")
    try m.sends.add("verb")
    return (rig, x)
  }

  @Test("a bus's post-fader send is its output at the level; pre-fader, its sum before its fader; 'off' silences it")
  func busSend() throws {
    let folder = try TemporaryFolder()
    let (rig, x) = try busRig(folder)
    let m = rig.mixer
    let g = Decibels.toAmplitude(-6)
    try m.sends.set(strip: "drums_bus", send: "verb", level: SendLevel(gain: g, preFader: false))
    try m.transport.play()
    let a = capture.render(rig, frames: 9600)
    // The bus is the master's only source (master at unity, no EQ): send = master × −6 dB.
    #expect(peak(a.master.left[...]) > 0.05)
    #expect(maxAbsError(a.send.left, a.master.left.map { $0 * Float(g) }) < 1e-6)
    #expect(maxAbsError(a.send.right, a.master.right.map { $0 * Float(g) }) < 1e-6)
    // Pre-fader (while playing: from silence over 10 ms): the stem's sum at the bus's input,
    // x × the mono pan law at centre, whatever the bus's volume and balance.
    try m.sends.set(strip: "drums_bus", send: "verb", level: SendLevel(gain: 0.5, preFader: true))
    let b = capture.render(rig, frames: 9600)
    let c = referenceGains(pan: 0, channels: 1)
    for i in 480..<9600 {
      let expected = Double(x[9600 + i]) * c.left * 0.5
      if abs(Double(b.send.left[i]) - expected) > 1e-6 || abs(Double(b.send.right[i]) - expected) > 1e-6 {
        Issue.record("frame \(i): send \(b.send.left[i]), \(b.send.right[i]); expected \(expected)")
        break
      }
    }
    #expect(m.sends.all[0].levels == ["drums_bus": SendLevel(gain: 0.5, preFader: true)])
    // Muting the bus leaves a pre-fader send open (a console's pre-fader send is the monitor mix).
    try m.strips.setMute("drums_bus", true)
    let muted = capture.render(rig, frames: 2048)
    #expect(peak(muted.master.left[1024...]) == 0 && peak(muted.send.left[1024...]) > 0.05)
    try m.sends.set(strip: "drums_bus", send: "verb", level: nil)
    let off = capture.render(rig, frames: 2048)
    #expect(peak(off.send.left[1024...]) == 0 && m.sends.all[0].levels.isEmpty)
  }

  @Test("a live input sends pre-fader (both sides, its EQ only) and post-fader (its fader and pan), whatever the transport")
  func inputSend() throws {
    let rig = MixerRig()
    let m = rig.mixer
    var mic = InputSettings(name: "mic", channels: .mono)
    mic.volume = 0.25
    mic.pan = -0.5
    try m.inputs.add(mic)
    try m.sends.add("verb")
    let g = Decibels.toAmplitude(-10)
    try m.sends.set(strip: "mic", send: "verb", level: SendLevel(gain: g, preFader: true))
    let x = Signal.noise(frames: 9600, amplitude: 0.5, seed: 52)
    // Set before the strip's first block: at its level from the first frame.
    let a = capture.render(rig, frames: 4800, inputFeed: Array(x[0..<4800]))
    #expect(maxAbsError(a.send.left, x[0..<4800].map { $0 * Float(g) }) < 1e-6)
    #expect(maxAbsError(a.send.right, x[0..<4800].map { $0 * Float(g) }) < 1e-6)
    // Post-fader (ramped from silence over 10 ms: the input is live): the master × the level.
    try m.sends.set(strip: "mic", send: "verb", level: SendLevel(gain: 0.5, preFader: false))
    let b = capture.render(rig, frames: 4800, inputFeed: Array(x[4800...]))
    let tail = 480..<4800
    #expect(peak(b.master.left[tail]) > 0.02)
    #expect(maxAbsError(Array(b.send.left[tail]), b.master.left[tail].map { $0 * 0.5 }) < 1e-6)
    #expect(maxAbsError(Array(b.send.right[tail]), b.master.right[tail].map { $0 * 0.5 }) < 1e-6)
    var largest: Float = 0
    for i in 1..<b.send.left.count { largest = max(largest, abs(b.send.left[i] - b.send.left[i - 1])) }
    #expect(largest < 0.5, "no step beyond the signal's own")
  }

  @Test("removing a bus or an input forgets its levels; a bus or input added later in its place sends nothing")
  func removal() throws {
    let folder = try TemporaryFolder()
    let (rig, _) = try busRig(folder)
    let m = rig.mixer
    try m.inputs.add(InputSettings(name: "mic", channels: .mono))
    try m.sends.set(strip: "drums_bus", send: "verb", level: SendLevel(gain: 1, preFader: true))
    try m.sends.set(strip: "mic", send: "verb", level: SendLevel(gain: 1, preFader: true))
    try m.transport.play()
    let feed = [Float](repeating: 0.3, count: 4096)
    let a = capture.render(rig, frames: 4096, inputFeed: feed)
    #expect(peak(a.send.left[2048...]) > 0.3)
    try m.buses.remove("drums_bus")
    try m.inputs.remove("mic")
    #expect(m.sends.all[0].levels.isEmpty)
    _ = capture.render(rig, frames: 4096, inputFeed: feed)
    // The same names again (the same renderer indices): no level until one is set.
    try m.buses.add(BusSettings(name: "drums_bus"))
    try m.buses.route("kick", to: "drums_bus")
    try m.inputs.add(InputSettings(name: "mic", channels: .mono))
    let b = capture.render(rig, frames: 4096, inputFeed: feed)
    #expect(peak(b.master.left[...]) > 0.05)
    #expect(peak(b.send.left[...]) == 0 && peak(b.send.right[...]) == 0)
  }

  @Test("saved and opened again, after a song change and at a new sample rate: the buses' and inputs' levels are back, in the engine too")
  func sessionRoundTrip() throws {
    let folder = try TemporaryFolder()
    let (rig, _) = try busRig(folder)
    let m = rig.mixer
    try m.inputs.add(InputSettings(name: "mic", channels: .mono))
    try m.sends.set(strip: "drums_bus", send: "verb", level: SendLevel(gain: 0.5, preFader: false))
    try m.sends.set(strip: "mic", send: "verb", level: SendLevel(gain: 0.25, preFader: true))
    let path = folder.file("s.json")
    try SessionFile.save(m.session(savingTo: path), to: path)
    let text = try String(contentsOfFile: path, encoding: .utf8)
    #expect(text.contains(#""solo" : false, "sends" : [ { "to" : "verb", "level" : 0.5 } ] }"#), "\(text)")
    #expect(text.contains(#""sends" : [ { "to" : "verb", "level" : 0.25, "pre" : true } ] }"#), "\(text)")
    var plain = Session()
    plain.stems = [StemSettings(name: "kick", file: "kick.wav")]
    _ = try m.load(plain, sessionPath: path)
    #expect(m.sends.all.isEmpty)
    let saved = try SessionFile.load(path: path)
    _ = try m.load(saved, sessionPath: path)
    let expected = ["drums_bus": SendLevel(gain: 0.5, preFader: false), "mic": SendLevel(gain: 0.25, preFader: true)]
    #expect(m.sends.all.first?.levels == expected)
    #expect(m.session(savingTo: path) == saved)
    // In the engine: the bus's post-fader send is the master × 0.5, plus the input's 0.3 × 0.25.
    try m.transport.play()
    let feed = [Float](repeating: 0.3, count: 4096)
    let out = capture.render(rig, frames: 4096, inputFeed: feed)
    // (mic at the master too: take it out of the comparison through the known constant.)
    let micMaster = Float(referenceGains(pan: 0, channels: 1).left) * 0.3
    for i in [1000, 3000] {
      let bus = out.master.left[i] - micMaster
      #expect(abs(out.send.left[i] - (bus * 0.5 + 0.3 * 0.25)) < 1e-6, "frame \(i)")
    }
    // A song change to the same session keeps them; a copy at another sample rate too.
    _ = try m.songs.change(to: saved, sessionPath: path)
    #expect(m.sends.all.first?.levels == expected)
    var warnings: [ControlText] = []
    let other = try m.copy(atSampleRate: 44100, warnings: &warnings)
    defer { other.shutdown() }
    #expect(other.sends.all.first?.levels == expected)
    #expect(other.session(savingTo: path).buses[0].sends == saved.buses[0].sends)
    #expect(other.session(savingTo: path).inputs[0].sends == saved.inputs[0].sends)
  }
}
