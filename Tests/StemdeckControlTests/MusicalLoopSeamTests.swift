import Foundation
import StemdeckAudioFile
import StemdeckControl
import StemdeckEngine
import StemdeckSession
import StemdeckTestSupport
import Testing

// One topic of MusicalTests (the suite and its helpers: MusicalSupport.swift).
extension MusicalTests {
  // MARK: - 3. Loop seams

  @Test("stems.nextLoopSeam of a 0.5 s stem after 10000 frames is 0.5 s, and a group there lands on frame 24000")
  func loopSeam() throws {
    let folder = try TemporaryFolder()
    let ramp = Signal.ramp(frames: 24000, from: 0.5, to: 1)
    let path = try Musical.mono(folder, "r.wav", ramp)
    let rig = MixerRig()
    try rig.mixer.stems.add(
      path: path,
      settings: stem("r", path) {
        $0.pan = -1; $0.loops = -1
      })
    try rig.mixer.transport.play()
    var out = rig.render(10000).left
    let seam = try rig.mixer.stems.nextLoopSeam(of: "r")
    #expect(abs(seam * 48000 - 24000) <= 1, "seam at \(seam * 48000) frames")
    try rig.mixer.beginGroup(atSeconds: seam)
    try rig.mixer.strips.setVolume("r", 0)
    try rig.mixer.endGroup()
    out += rig.render(20000, block: 1024).left
    #expect(firstMismatch(out[0..<24000], ramp[0..<24000]) == nil, "first pass not the file")
    // From frame 24000 the second pass fades out over 480 frames: file[k] · (1 − k/480).
    let d = Musical.deviation(out, at: 24000, over: 0...480) { Double(ramp[$0]) * (1 - Double($0) / 480) }
    #expect(d < 1e-4, "the change does not start on the seam (off by \(d))")
    #expect(out[24000] == ramp[0], "frame 24000 is not the start of the second pass: \(out[24000])")
    // Next seam after that.
    let next = try rig.mixer.stems.nextLoopSeam(of: "r")
    #expect(abs(next * 48000 - 48000) <= 1, "the following seam at \(next * 48000)")
  }

  @Test("stems.nextLoopSeam follows a loop region (a 9600-frame loop seams at 19200 after 10000 frames)")
  func loopSeamRegion() throws {
    let folder = try TemporaryFolder()
    let path = try Musical.mono(folder, "dc.wav", Signal.constant(0.5, frames: 24000))
    let rig = MixerRig()
    try rig.mixer.stems.add(
      path: path,
      settings: stem("region", path) {
        $0.loops = -1; $0.loopStart = 0.1; $0.loopEnd = 0.3
      })
    try rig.mixer.transport.play()
    _ = rig.render(10000)
    let region = try rig.mixer.stems.nextLoopSeam(of: "region")
    #expect(abs(region * 48000 - 19200) <= 1, "region (9600-frame loop) seam at \(region * 48000), want 19200")
  }

  /// nextLoopSeam took the ring's read counter as the play position, but libsamplerate and
  /// Rubber Band pull input ahead of what they have output (their internal buffers), so for a
  /// resampled or stretched stem the seam came early (rate 0.8 → 21565, heard 30000; stretch →
  /// 22224, heard 24000). It now counts what the renderer has output.
  @Test(
    "stems.nextLoopSeam of a resampled or stretched stem is within a few frames of the seam heard",
    arguments: [("varispeed 0.8", 30000), ("stretch 1", 24000)])
  func loopSeamResampled(label: String, heardAt: Int) throws {
    let folder = try TemporaryFolder()
    let ramp = Signal.ramp(frames: 24000, from: 0.5, to: 1)
    let path = try Musical.mono(folder, "r.wav", ramp)
    let rig = MixerRig()
    try rig.mixer.stems.add(
      path: path,
      settings: stem("r", path) {
        $0.pan = -1; $0.loops = -1
        if label.hasPrefix("stretch") { $0.mode = .stretch } else { $0.rate = 0.8 }
      })
    try rig.mixer.transport.play()
    var out = rig.render(10000).left
    let seam = try rig.mixer.stems.nextLoopSeam(of: "r") * 48000
    out += rig.render(30000).left
    // Where the ramp drops back (0.5 below its top) is the seam heard.
    let heard = (5000..<(out.count - 1)).first { out[$0] - out[$0 + 1] > 0.2 }.map { $0 + 1 }
    #expect(heard.map { abs($0 - heardAt) <= 4 } == true, "\(label): heard at \(heard ?? -1), want \(heardAt)")
    #expect(abs(seam - Double(heardAt)) <= 4, "\(label): nextLoopSeam \(seam) frames, heard \(heard ?? -1)")
  }

  @Test(
    "a group at the next loop seam of a resampled or stretched stem lands on the seam's frame",
    arguments: [("varispeed 0.8", 30000), ("varispeed 1.25", 19200), ("stretch 0.8", 30000), ("stretch 1", 24000)])
  func groupAtResampledSeam(label: String, seamFrame: Int) throws {
    let folder = try TemporaryFolder()
    let ramp = Signal.ramp(frames: 24000, from: 0.5, to: 1)
    let path = try Musical.mono(folder, "r.wav", ramp)
    let rate = Double(label.split(separator: " ")[1])!
    func rig() throws -> MixerRig {
      let rig = MixerRig()
      try rig.mixer.stems.add(
        path: path,
        settings: stem("r", path) {
          $0.pan = -1; $0.loops = -1; $0.rate = rate
          if label.hasPrefix("stretch") { $0.mode = .stretch }
        })
      try rig.mixer.transport.play()
      return rig
    }
    // The same stem without the change is the reference: the renders are deterministic.
    let reference = try rig().render(40000, block: 1000).left
    let changed = try rig()
    var out = changed.render(10000, block: 1000).left
    let seam = try changed.mixer.stems.nextLoopSeam(of: "r")
    #expect(abs(seam * 48000 - Double(seamFrame)) < 0.5, "\(label): seam at \(seam * 48000), want \(seamFrame)")
    try changed.mixer.beginGroup(atSeconds: seam)
    try changed.mixer.strips.setVolume("r", 0)
    try changed.mixer.endGroup()
    out += changed.render(30000, block: 1000).left
    #expect(firstMismatch(out[0..<seamFrame], reference[0..<seamFrame]) == nil, "\(label): changed before the seam")
    // From the seam frame on, a 480-frame ramp to 0 over the reference.
    let d = Musical.deviation(out, at: seamFrame, over: 0...480) { Double(reference[seamFrame + $0]) * (1 - Double($0) / 480) }
    #expect(d < 1e-4, "\(label): the change does not start on frame \(seamFrame) (off by \(d))")
  }
}
