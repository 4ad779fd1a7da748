import Foundation
import StemdeckControl
import StemdeckEngine
import StemdeckSession
import StemdeckTestSupport
import Testing

/// Aux sends and returns rendered through `renderBlock`: a stem's send reaches the send's output
/// buffer at its level (post-fader through the stem's fader and pan, pre-fader before it), the
/// send is not in the master, a return is summed into the master at its volume; refusals.
@Suite struct SendRenderTests {
  /// Renders `frames` like `MixerRig.render`, with the send outputs of send 0, a return feed and
  /// the live inputs' ports (`inputFeed`: every strip's, whichever index the mixer chose) pointed
  /// at test buffers; returns the master and the send's output.
  func render(_ rig: MixerRig, frames: Int, returnFeed: [Float]? = nil, inputFeed: [Float]? = nil) -> (master: Stereo, send: Stereo) {
    let block = 256
    var master = Stereo(frames: frames)
    var send = Stereo(frames: frames)
    let state = rig.mixer.renderState
    let sendL = UnsafeMutablePointer<Float>.allocate(capacity: block)
    let sendR = UnsafeMutablePointer<Float>.allocate(capacity: block)
    let ret = UnsafeMutablePointer<Float>.allocate(capacity: block)
    let input = UnsafeMutablePointer<Float>.allocate(capacity: block)
    defer {
      input.deallocate()
      for i in 0..<(2 * state.pointee.inputs.capacity) { state.pointee.inputs.buffers[i] = nil }
      sendL.deallocate()
      sendR.deallocate()
      ret.deallocate()
      state.pointee.sends.outputs[0] = nil
      state.pointee.sends.outputs[1] = nil
      state.pointee.sends.returns[0] = nil
      state.pointee.sends.returns[1] = nil
    }
    state.pointee.sends.outputs[0] = sendL
    state.pointee.sends.outputs[1] = sendR
    if returnFeed != nil {
      state.pointee.sends.returns[0] = ret
      state.pointee.sends.returns[1] = ret
    }
    if inputFeed != nil { for i in 0..<(2 * state.pointee.inputs.capacity) { state.pointee.inputs.buffers[i] = input } }
    var done = 0
    while done < frames {
      let n = min(block, frames - done)
      if let returnFeed { for i in 0..<n { ret[i] = returnFeed[done + i] } }
      if let inputFeed { for i in 0..<n { input[i] = inputFeed[done + i] } }
      rig.mixer.engine.fillStreams()
      master.left.withUnsafeMutableBufferPointer { l in
        master.right.withUnsafeMutableBufferPointer { r in
          renderBlock(state, left: l.baseAddress! + done, right: r.baseAddress! + done, frameCount: n)
        }
      }
      for i in 0..<n {
        send.left[done + i] = sendL[i]
        send.right[done + i] = sendR[i]
      }
      done += n
    }
    return (master, send)
  }

  func message(_ body: () throws(MixerError) -> Void) -> String {
    do throws(MixerError) { try body() } catch { return error.description }
    return "(no error)"
  }

  @Test("a post-fader send at −12 dB carries the stem after its fader and pan at −12 dB, and nothing of it reaches the master")
  func postFaderLevel() throws {
    let folder = try TemporaryFolder()
    let frames = 9600
    let x = Signal.noise(frames: frames, amplitude: 0.5, seed: 41)
    try writeAudio(folder.file("drums.wav"), format: .wavFloat, channels: [x])
    let rig = MixerRig()
    let m = rig.mixer
    var settings = StemSettings(name: "drums", file: "drums.wav")
    settings.volume = 0.5
    settings.pan = 0.4
    _ = try m.stems.add(path: folder.file("drums.wav"), settings: settings)
    try m.sends.add("verb")
    let level = Decibels.toAmplitude(-12)
    try m.sends.set(stem: "drums", send: "verb", level: SendLevel(gain: level, preFader: false))
    try m.transport.play()
    let out = render(rig, frames: frames)
    // The stem's own path is the master (master volume 1, no EQ): send = master × −12 dB exactly.
    let g = Float(level)
    #expect(peak(out.master.left[...]) > 0.05)
    let expectedL = out.master.left.map { $0 * g }, expectedR = out.master.right.map { $0 * g }
    #expect(maxAbsError(out.send.left, expectedL) < 1e-6)
    #expect(maxAbsError(out.send.right, expectedR) < 1e-6)
    // And the constant-power pan law's gains, independently: left = x · 0.5 · cos((0.4+1)π/4).
    let gl = 0.5 * cos((0.4 + 1) * Double.pi / 4) * level
    #expect(abs(Double(out.send.left[1000]) - Double(x[1000]) * gl) < 1e-6)
    // Muting the stem silences its post-fader send (after the 10 ms ramp).
    try m.strips.setMute("drums", true)
    let muted = render(rig, frames: 2048)
    #expect(peak(muted.send.left[1024...]) == 0 && peak(muted.send.right[1024...]) == 0)
  }

  @Test("saved and opened again: the sends, their return volumes and every stem's levels are back, in the engine too")
  func sessionRoundTrip() throws {
    let folder = try TemporaryFolder()
    let frames = 9600
    let x = Signal.noise(frames: frames, amplitude: 0.5, seed: 43)
    try writeAudio(folder.file("drums.wav"), format: .wavFloat, channels: [x])
    try writeAudio(folder.file("bass.wav"), format: .wavFloat, channels: [x])
    let rig = MixerRig()
    let m = rig.mixer
    _ = try m.stems.add(path: folder.file("drums.wav"), settings: StemSettings(name: "drums", file: "drums.wav"))
    _ = try m.stems.add(path: folder.file("bass.wav"), settings: StemSettings(name: "bass", file: "bass.wav"))
    try m.sends.add("verb")
    try m.sends.add("dly")
    try m.sends.setReturnVolume("dly", 0.5)
    let level = Decibels.toAmplitude(-12)
    try m.sends.set(stem: "drums", send: "verb", level: SendLevel(gain: level, preFader: false))
    try m.sends.set(stem: "bass", send: "dly", level: SendLevel(gain: 0.5, preFader: true))
    let path = folder.file("s.json")
    try SessionFile.save(m.session(savingTo: path), to: path)
    let text = try String(contentsOfFile: path, encoding: .utf8)
    #expect(text.contains(#""sends" : [ { "to" : "dly", "level" : 0.5, "pre" : true } ]"#), "\(text)")

    // Another session without sends in between: they go.
    var plain = Session()
    plain.stems = [StemSettings(name: "drums", file: "drums.wav")]
    _ = try m.load(plain, sessionPath: path)
    #expect(m.sends.all.isEmpty)
    _ = try m.load(try SessionFile.load(path: path), sessionPath: path)
    #expect(m.sends.all.map(\.name) == ["verb", "dly"])
    #expect(m.sends.all[1].returnVolume == 0.5)
    #expect(m.sends.all[0].levels == ["drums": SendLevel(gain: level, preFader: false)])
    #expect(m.sends.all[1].levels == ["bass": SendLevel(gain: 0.5, preFader: true)])
    #expect(m.session(savingTo: path) == (try SessionFile.load(path: path)))
    // The engine has the level again: send 0 (verb) carries drums alone at −12 dB.
    try m.strips.setMute("bass", true)
    try m.transport.play()
    let out = render(rig, frames: frames)
    let g = Float(level)
    // (bass muted: the master is drums alone, so the send is the master × −12 dB.)
    #expect(peak(out.master.left[...]) > 0.05)
    #expect(maxAbsError(out.send.left, out.master.left.map { $0 * g }) < 1e-6)
    #expect(maxAbsError(out.send.right, out.master.right.map { $0 * g }) < 1e-6)
  }

  @Test("a pre-fader send takes the stem before its fader; 'off' silences it; changes ramp without a step")
  func preFaderAndOff() throws {
    let folder = try TemporaryFolder()
    let frames = 4800
    try writeAudio(folder.file("c.wav"), format: .wavFloat, channels: [Signal.constant(0.4, frames: frames * 4)])
    let rig = MixerRig()
    let m = rig.mixer
    var settings = StemSettings(name: "keys", file: "c.wav")
    settings.volume = 0.25
    _ = try m.stems.add(path: folder.file("c.wav"), settings: settings)
    try m.sends.add("verb")
    try m.sends.set(stem: "keys", send: "verb", level: SendLevel(gain: 0.5, preFader: true))
    try m.transport.play()
    let a = render(rig, frames: frames)
    // Pre-fader: 0.4 × 0.5 on both sides, whatever the volume (0.25) and pan.
    #expect(abs(a.send.left[2000] - 0.2) < 1e-6 && abs(a.send.right[2000] - 0.2) < 1e-6)
    try m.sends.set(stem: "keys", send: "verb", level: SendLevel(gain: 1, preFader: true))
    let b = render(rig, frames: frames)
    // A 10 ms ramp from 0.2 to 0.4: no step larger than the ramp's.
    var largest: Float = 0
    for i in 1..<b.send.left.count { largest = max(largest, abs(b.send.left[i] - b.send.left[i - 1])) }
    #expect(largest < 0.001)
    #expect(abs(b.send.left[frames - 1] - 0.4) < 1e-6)
    try m.sends.set(stem: "keys", send: "verb", level: nil)
    let c = render(rig, frames: frames)
    #expect(peak(c.send.left[1000...]) == 0)
    #expect(m.sends.all.first?.levels["keys"] == nil)
  }

  @Test(
    "a return is summed into the master at its volume and metered there; a silent return meters silence; removing the send fades it out"
  )
  func returnIntoMaster() throws {
    let rig = MixerRig()
    let m = rig.mixer
    try m.sends.add("verb", returnVolume: 0.5)
    let feed = [Float](repeating: 0.3, count: 4096)
    let a = render(rig, frames: 4096, returnFeed: feed)
    #expect(abs(a.master.left[100] - 0.15) < 1e-6 && abs(a.master.right[4000] - 0.15) < 1e-6)
    // The return's meter reads what it adds to the master: 0.15, -16.48 dB (a 50 ms window).
    let metered = try #require(m.sends.returnMeters().first)
    #expect(metered.name == "verb" && metered.meter.channels.count == 2)
    let expected = 20 * log10(0.15)
    #expect(metered.meter.channels.allSatisfy { abs($0.peak - expected) < 0.01 && abs($0.average - expected) < 0.01 }, "\(metered.meter)")
    try m.sends.setReturnVolume("verb", 1)
    let b = render(rig, frames: 4096, returnFeed: feed)
    #expect(abs(b.master.left[4000] - 0.3) < 1e-6)
    // Its ports silent (nothing connected): the meter falls to silence.
    _ = render(rig, frames: 4800)
    #expect(m.sends.returnMeters().first?.meter.channels.allSatisfy { $0.peak <= -160 } == true, "\(m.sends.returnMeters())")
    try m.sends.remove("verb")
    let c = render(rig, frames: 4096, returnFeed: feed)
    #expect(c.master.left[4000] == 0)
    #expect(m.sends.all.isEmpty)
  }

  @Test("sends: unknown names, bad names, levels out of range, buses and the limit are refused and change nothing")
  func refusals() throws {
    let folder = try TemporaryFolder()
    try writeAudio(folder.file("a.wav"), format: .wavFloat, channels: [Signal.noise(frames: 4800, amplitude: 0.3, seed: 1)])
    let rig = MixerRig()
    let m = rig.mixer
    _ = try m.stems.add(path: folder.file("a.wav"), settings: StemSettings(name: "kick", file: "a.wav"))
    try m.buses.add(BusSettings(name: "drums_bus"))
    try m.sends.add("verb")
    #expect(message { () throws(MixerError) in try m.sends.add("verb") }.contains("already exists"))
    #expect(message { () throws(MixerError) in try m.sends.add("bad name") } != "(no error)")
    #expect(message { () throws(MixerError) in try m.sends.remove("delay") }.contains("no send named 'delay' (sends: verb)"))
    #expect(
      message { () throws(MixerError) in try m.sends.set(stem: "kik", send: "verb", level: SendLevel(gain: 1, preFader: false)) }
        != "(no error)")
    #expect(
      message { () throws(MixerError) in try m.sends.set(stem: "kick", send: "verb", level: SendLevel(gain: 99, preFader: false)) }
        .contains(
          "send level"))
    #expect(
      message { () throws(MixerError) in try m.sends.set(strip: "drums_bus", send: "verb", level: SendLevel(gain: 3, preFader: false)) }
        .contains("send level"))
    #expect(
      message { () throws(MixerError) in try m.sends.set(strip: "nobody", send: "verb", level: SendLevel(gain: 1, preFader: false)) }
        .contains("unknown stem or bus 'nobody'"))
    #expect(message { () throws(MixerError) in try m.sends.setReturnVolume("verb", -1) }.contains("return volume"))
    #expect(m.sends.all.map(\.name) == ["verb"] && m.sends.all[0].returnVolume == 1 && m.sends.all[0].levels.isEmpty)
    for i in 1..<SendBank.maxSends { try m.sends.add("s\(i)") }
    #expect(message { () throws(MixerError) in try m.sends.add("one_more") }.contains("at most 8 sends"))
    #expect(m.sends.all.count == 8)
    // Removing a stem takes its sends with it.
    try m.sends.set(stem: "kick", send: "verb", level: SendLevel(gain: 1, preFader: false))
    try m.stems.remove("kick")
    #expect(m.sends.all[0].levels.isEmpty)
    // Opening a session replaces the sends and levels with its own (here: none).
    _ = try m.stems.add(path: folder.file("a.wav"), settings: StemSettings(name: "snare", file: "a.wav"))
    try m.sends.set(stem: "snare", send: "verb", level: SendLevel(gain: 1, preFader: true))
    var next = Session()
    next.stems = [StemSettings(name: "snare", file: "a.wav")]
    _ = try m.load(next, sessionPath: folder.file("next.json"))
    #expect(m.sends.all.isEmpty)
  }
}
