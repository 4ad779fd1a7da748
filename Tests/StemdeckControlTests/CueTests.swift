import Foundation
import StemdeckAudioFile
import StemdeckControl
import StemdeckEngine
import StemdeckSession
import StemdeckTestSupport
import Testing

/// The cue bus (issue 42, item 4): a synchronous mixer whose cue outputs the test hands in, as
/// the JACK driver hands in stemdeck:cue_L/R.
@Suite struct CueTests {
  /// Renders `frames` in blocks of 256 with the cue's outputs given; returns the master and the cue.
  /// With `input`, every live input's port reads that constant (a live source the test holds still).
  static func render(_ mixer: Mixer, frames: Int, input: Float? = nil) -> (master: Stereo, cue: Stereo) {
    let port = [Float](repeating: input ?? 0, count: 256)
    var master = Stereo(frames: frames), cue = Stereo(frames: frames)
    master.left.withUnsafeMutableBufferPointer { ml in
      master.right.withUnsafeMutableBufferPointer { mr in
        cue.left.withUnsafeMutableBufferPointer { cl in
          cue.right.withUnsafeMutableBufferPointer { cr in
            var done = 0
            while done < frames {
              let n = min(256, frames - done)
              mixer.engine.fillStreams()
              mixer.renderState.pointee.cue.outputLeft = cl.baseAddress! + done
              mixer.renderState.pointee.cue.outputRight = cr.baseAddress! + done
              if input != nil {
                port.withUnsafeBufferPointer { p in
                  for i in 0..<8 { mixer.renderState.pointee.inputs.buffers[i] = UnsafeMutablePointer(mutating: p.baseAddress!) }
                }
              }
              renderBlock(mixer.renderState, left: ml.baseAddress! + done, right: mr.baseAddress! + done, frameCount: n)
              done += n
            }
          }
        }
      }
    }
    return (master, cue)
  }

  @Test(
    "PFL puts a stem on the cue at unity, before its -6 dB fader and pan; AFL after them; the master is the same to the bit as with no cue")
  func pflAndAfl() throws {
    let folder = try TemporaryFolder()
    let noise = Signal.noise(frames: 48000, amplitude: 0.5, seed: 42)
    try writeAudio(folder.file("a.wav"), format: .wavFloat, channels: [noise])
    try writeAudio(folder.file("b.wav"), format: .wavFloat, channels: [Signal.constant(0.1, frames: 48000)])
    func rig() throws -> MixerRig {
      let rig = MixerRig()
      try rig.mixer.stems.add(
        path: folder.file("a.wav"),
        settings: stem("a", "a.wav") {
          $0.volume = 0.5; $0.pan = 0.5
        })
      try rig.mixer.stems.add(path: folder.file("b.wav"), settings: stem("b", "b.wav"))
      try rig.mixer.transport.play()
      return rig
    }
    let plain = try rig(), pfl = try rig(), afl = try rig()
    try pfl.mixer.cues.set("a", .preFader)
    try afl.mixer.cues.set("a", .afterFader)
    #expect(pfl.mixer.cues.all.map(\.name) == ["a"] && pfl.mixer.cues.portsWanted)
    let reference = Self.render(plain.mixer, frames: 24000)
    let p = Self.render(pfl.mixer, frames: 24000)
    let f = Self.render(afl.mixer, frames: 24000)
    #expect(reference.cue.left.allSatisfy { $0 == 0 }, "nothing cued: the cue is silent")
    #expect(p.master.left == reference.master.left && p.master.right == reference.master.right, "PFL changed the master")
    #expect(f.master.left == reference.master.left && f.master.right == reference.master.right, "AFL changed the master")
    // PFL: the source itself on both sides (a mono stem, unpanned, at unity), the other stem absent.
    let start = reference.master.left.firstIndex { $0 != 0 } ?? 0
    #expect(Array(p.cue.left[start...]) == Array(noise[0..<(24000 - start)]), "PFL is the stem's source")
    #expect(p.cue.left == p.cue.right)
    // AFL: the stem as it is in the master (its fader and pan), without the other stem.
    let aloneA = try rig()
    try aloneA.mixer.strips.setMute("b", true)
    let alone = Self.render(aloneA.mixer, frames: 24000)
    #expect(maxAbsError(f.cue.left, alone.master.left) < 1e-6 && maxAbsError(f.cue.right, alone.master.right) < 1e-6)
    #expect(peak(f.cue.left) < peak(f.cue.right), "panned right")
    try afl.mixer.cues.clear()
    #expect(afl.mixer.cues.all.isEmpty && !afl.mixer.cues.portsWanted)
    #expect(Self.render(afl.mixer, frames: 1024).cue.left.allSatisfy { $0 == 0 }, "cue off: silent")
  }

  @Test(
    "cue on every strip kind: a bus's PFL is its sum before its -6 dB fader, a live input's its signal at unity, a bus's AFL what it adds to the master; the master is the same to the bit"
  )
  func busAndInputCue() throws {
    let folder = try TemporaryFolder()
    let noise = Signal.noise(frames: 48000, amplitude: 0.5, seed: 7)
    try writeAudio(folder.file("a.wav"), format: .wavFloat, channels: [noise, noise])
    func rig(micMuted: Bool = false) throws -> MixerRig {
      let rig = MixerRig()
      try rig.mixer.stems.add(path: folder.file("a.wav"), settings: stem("a", "a.wav"))
      try rig.mixer.buses.add(BusSettings(name: "grp"))
      try rig.mixer.strips.setVolume("grp", 0.5)
      try rig.mixer.buses.route("a", to: "grp")
      var mic = InputSettings(name: "mic", channels: .mono)
      mic.mute = micMuted
      try rig.mixer.inputs.add(mic)
      try rig.mixer.transport.play()
      return rig
    }
    let plain = try rig(), micMuted = try rig(micMuted: true)  // kept: a rig shuts its mixer down when it goes
    let reference = Self.render(plain.mixer, frames: 12000, input: 0.25)
    let busOnly = Self.render(micMuted.mixer, frames: 12000, input: 0.25)
    for (strip, tap) in [("grp", CueTap.preFader), ("mic", .preFader), ("grp", .afterFader)] {
      let cued = try rig()
      try cued.mixer.cues.set(strip, tap)
      #expect(cued.mixer.cues.all.map(\.name) == [strip] && cued.mixer.cues.portsWanted && cued.mixer.cues.tap(of: strip) == tap)
      let r = Self.render(cued.mixer, frames: 12000, input: 0.25)
      #expect(r.master.left == reference.master.left && r.master.right == reference.master.right, "\(strip) \(tap) changed the master")
      switch (strip, tap) {
      case ("grp", .preFader):
        #expect(r.cue.left == busOnly.master.left.map { $0 * 2 }, "the bus before its fader (0.5): twice what it adds")
      case ("grp", _):
        #expect(r.cue.left == busOnly.master.left && r.cue.right == busOnly.master.right, "the bus as it is in the master")
      default:
        #expect(r.cue.left.allSatisfy { $0 == 0.25 } && r.cue.right == r.cue.left, "the input's signal at unity on both sides")
      }
      try cued.mixer.cues.clear()
      #expect(cued.mixer.cues.all.isEmpty && !cued.mixer.cues.portsWanted)
    }
    #expect(throws: MixerError.self) { try plain.mixer.cues.set("nothing", .preFader) }
  }
}
