import Foundation
import StemdeckAudioFile
import StemdeckControl
import StemdeckEngine
import StemdeckSession
import StemdeckTestSupport
import Testing

// One topic of MusicalTests (the suite and its helpers: MusicalSupport.swift).
extension MusicalTests {
  // MARK: - 1. Glides

  /// Blocks of 1000 frames: the glide's end (frame 48000) falls on a block boundary. Ends inside
  /// a block are `glideEndsMidBlock`.
  @Test("linear volume glide 1 → 0 over 1 s: 0.5 at 0.5 s, straight line, exactly 0 from 1 s on")
  func linearVolumeGlide() throws {
    let folder = try TemporaryFolder()
    let path = try Musical.mono(folder, "dc.wav", Signal.constant(1, frames: 96000))
    let rig = MixerRig()
    try rig.mixer.stems.add(path: path, settings: stem("dc", path) { $0.pan = -1 })
    try rig.mixer.transport.play()
    try rig.mixer.strips.glide("dc", to: .volume(0), seconds: 1)
    #expect(try rig.mixer.stems.status("dc").settings.volume == 0, "the settings take the target at once")
    let first = rig.render(24000, block: 1000)
    let midway = try rig.mixer.stems.status("dc").glidingVolume
    #expect(midway.map { abs($0 - 0.5) < 1e-9 } == true, "status while gliding: \(String(describing: midway))")
    let out = first.left + rig.render(48000, block: 1000).left
    #expect(abs(Double(out[24000]) - 0.5) <= 0.01, "left at 0.5 s: \(out[24000])")
    let line = Musical.deviation(out, at: 0, over: 0...47999) { 1 - Double($0) / 48000 }
    #expect(line < 1e-3, "off the straight line by \(line)")
    #expect(out[47999] > 0, "arrived early")
    let nonZero = out[48000...].firstIndex { $0 != 0 }
    #expect(nonZero == nil, "not exactly 0 at/after 1 s: frame \(nonZero ?? -1) = \(nonZero.map { out[$0] } ?? 0)")
    #expect(try rig.mixer.stems.status("dc").glidingVolume == nil, "the glide is over")
  }

  /// `advanceGlides` (VoiceRendering.swift:243) ramps the gain across the whole pass to the value
  /// the glide reached, and `Glide.advance` clamps at the end, so when the glide's last frame falls
  /// inside a pass the target is reached only at the end of that pass, up to a block late.
  @Test(
    "a glide whose end falls inside a block still reaches its target exactly on its last frame",
    arguments: [256, 4096])
  func glideEndsMidBlock(block: Int) throws {
    let folder = try TemporaryFolder()
    let path = try Musical.mono(folder, "dc.wav", Signal.constant(1, frames: 96000))
    let rig = MixerRig()
    try rig.mixer.stems.add(path: path, settings: stem("dc", path) { $0.pan = -1 })
    try rig.mixer.transport.play()
    try rig.mixer.strips.glide("dc", to: .volume(0), seconds: 1)
    let out = rig.render(60000, block: block).left
    let zeroFrom = (out.lastIndex { $0 != 0 } ?? -1) + 1
    #expect(zeroFrom == 48000, "block \(block): exactly 0 only from frame \(zeroFrom) (left[48000] = \(out[48000]))")
    let line = Musical.deviation(out, at: 0, over: 0...47999) { 1 - Double($0) / 48000 }
    #expect(line < 1e-3, "block \(block): off the straight line by \(line)")
  }

  @Test(
    "exponential volume glide moves in equal dB steps and ends exactly on the target",
    arguments: [(0.01, -20.0), (0.0, -40.0)])
  func exponentialVolumeGlide(target: Double, midwayDB: Double) throws {
    let folder = try TemporaryFolder()
    let path = try Musical.mono(folder, "dc.wav", Signal.constant(1, frames: 96000))
    let rig = MixerRig()
    try rig.mixer.stems.add(path: path, settings: stem("dc", path) { $0.pan = -1 })
    try rig.mixer.transport.play()
    try rig.mixer.strips.glide("dc", to: .volume(target), seconds: 1, exponential: true)
    let out = rig.render(60000, block: 1000).left
    // 1 → max(target, 1e-4) in dB: a quarter of the way is a quarter of the dB distance.
    #expect(abs(decibels(Double(out[24000])) - midwayDB) <= 0.3, "at 0.5 s: \(decibels(Double(out[24000]))) dB")
    #expect(abs(decibels(Double(out[12000])) - midwayDB / 2) <= 0.3, "at 0.25 s: \(decibels(Double(out[12000]))) dB")
    #expect(abs(decibels(Double(out[36000])) - midwayDB * 1.5) <= 0.3, "at 0.75 s: \(decibels(Double(out[36000]))) dB")
    let expected = Float(target)
    let off = out[48000...].firstIndex { $0 != expected }
    #expect(off == nil, "not exactly \(expected) from 1 s: frame \(off ?? -1) = \(off.map { out[$0] } ?? 0)")
  }

  @Test("pan glide −1 → 1 over 0.5 s on a mono stem keeps constant power and ends at L≈0, R=1")
  func panGlide() throws {
    let folder = try TemporaryFolder()
    let path = try Musical.mono(folder, "dc.wav", Signal.constant(1, frames: 48000))
    let rig = MixerRig()
    try rig.mixer.stems.add(path: path, settings: stem("dc", path) { $0.pan = -1 })
    try rig.mixer.transport.play()
    try rig.mixer.strips.glide("dc", to: .pan(1), seconds: 0.5)
    let out = rig.render(36000, block: 1000)
    var worst = 0.0
    for i in 0..<out.count {
      let l = Double(out.left[i]), r = Double(out.right[i])
      worst = max(worst, abs(l * l + r * r - 1))
    }
    #expect(worst < 2e-3, "power moves by \(worst)")
    #expect(
      abs(Double(out.left[12000]) - 0.5.squareRoot()) < 0.01 && abs(Double(out.right[12000]) - 0.5.squareRoot()) < 0.01,
      "at 0.25 s (centre): \(out.left[12000]), \(out.right[12000])")
    #expect(out.left[11000] > out.right[11000] && out.left[13000] < out.right[13000], "moves left to right")
    #expect(out.right[24000...].allSatisfy { $0 == 1 }, "right not exactly 1 after the glide")
    #expect(out.left[24000...].allSatisfy { abs($0) < 1e-6 }, "left not ≈ 0 after the glide")
    #expect(maxStep(out.left) < 0.001 && maxStep(out.right) < 0.001, "steps \(maxStep(out.left)), \(maxStep(out.right))")
  }

  @Test("rate glide 1 → 0.5 over 1 s on a 1 kHz sine: 750 Hz midway, 500 Hz after, no jumps")
  func rateGlide() throws {
    let folder = try TemporaryFolder()
    let sine = Signal.sine(frequency: 1000, sampleRate: 48000, frames: 3 * 48000, amplitude: 0.5)
    let path = try Musical.mono(folder, "sine.wav", sine)
    let rig = MixerRig()
    try rig.mixer.stems.add(path: path, settings: stem("s", path) { $0.pan = -1 })
    try rig.mixer.transport.play()
    let before = rig.render(4800).left
    try rig.mixer.strips.glide("s", to: .rate(0.5), seconds: 1)
    let out = before + rig.render(72000).left
    let start = 4800
    let mid = estimatedFrequency(out, sampleRate: 48000, in: (start + 21600)..<(start + 26400))
    #expect(abs(mid - 750) <= 5, "frequency around 0.5 s into the glide: \(mid) Hz")
    let early = estimatedFrequency(out, sampleRate: 48000, in: (start + 4800)..<(start + 9600))
    #expect(abs(early - 925) <= 5, "frequency around 0.15 s into the glide: \(early) Hz")
    let end = estimatedFrequency(out, sampleRate: 48000, in: (start + 50400)..<(start + 69600))
    #expect(abs(end - 500) <= 5, "frequency after the glide: \(end) Hz")
    let normal = maxStep(sine)
    let worst = maxStep(out)
    #expect(worst < 1.5 * normal, "largest step \(worst) vs the sine's own \(normal)")
    #expect(abs(try rig.mixer.stems.status("s").settings.rate - 0.5) < 1e-12)
  }

  @Test("strips.cancelGlides holds the value reached, and the settings take it")
  func cancelHolds() throws {
    let folder = try TemporaryFolder()
    let path = try Musical.mono(folder, "dc.wav", Signal.constant(1, frames: 96000))
    let rig = MixerRig()
    try rig.mixer.stems.add(path: path, settings: stem("dc", path) { $0.pan = -1 })
    try rig.mixer.transport.play()
    try rig.mixer.strips.glide("dc", to: .volume(0), seconds: 1)
    _ = rig.render(12000)
    try rig.mixer.strips.cancelGlides("dc")
    let held = rig.render(36000).left
    #expect(abs(Double(held[0]) - 0.75) < 1e-3, "held at \(held[0]), expected 0.75")
    #expect(held.allSatisfy { $0 == held[0] }, "moves after the cancel: \(held.min()!)…\(held.max()!)")
    let status = try rig.mixer.stems.status("dc")
    #expect(abs(status.settings.volume - 0.75) < 1e-3, "settings volume \(status.settings.volume)")
    #expect(status.glidingVolume == nil)
  }

  @Test("a plain strips.setVolume during a volume glide cancels it (10 ms ramp to the new value, then still)")
  func setVolumeCancelsGlide() throws {
    let folder = try TemporaryFolder()
    let path = try Musical.mono(folder, "dc.wav", Signal.constant(1, frames: 96000))
    let rig = MixerRig()
    try rig.mixer.stems.add(path: path, settings: stem("dc", path) { $0.pan = -1 })
    try rig.mixer.transport.play()
    try rig.mixer.strips.glide("dc", to: .volume(0), seconds: 1)
    _ = rig.render(12000)
    try rig.mixer.strips.setVolume("dc", 0.6)
    let after = rig.render(48000).left
    #expect(maxStep(after) <= 0.15 / 480 + 1e-6, "ramp steps \(maxStep(after))")
    #expect(after[480...].allSatisfy { $0 == Float(0.6) }, "not held at 0.6: min \(after[480...].min()!) max \(after[480...].max()!)")
    let status = try rig.mixer.stems.status("dc")
    #expect(status.settings.volume == 0.6 && status.glidingVolume == nil)
  }

  @Test("a glide started while paused does not move until play, then runs its full time from there")
  func glideWaitsForPlay() throws {
    let folder = try TemporaryFolder()
    let path = try Musical.mono(folder, "dc.wav", Signal.constant(1, frames: 96000))
    let rig = MixerRig()
    try rig.mixer.stems.add(path: path, settings: stem("dc", path) { $0.pan = -1 })
    _ = rig.render(4800)
    try rig.mixer.strips.glide("dc", to: .volume(0), seconds: 0.5)
    _ = rig.render(48000)  // paused for a second: longer than the glide
    #expect(try rig.mixer.stems.status("dc").glidingVolume == 1, "moved while paused")
    try rig.mixer.transport.play()
    let out = rig.render(36000, block: 1000).left
    #expect(out[0] == 1, "first frame after play: \(out[0])")
    #expect(abs(Double(out[12000]) - 0.5) <= 0.01, "0.25 s after play: \(out[12000])")
    #expect(out[24000...].allSatisfy { $0 == 0 }, "not 0 from 0.5 s after play")
  }

  /// Changing another parameter of a gliding stem must leave the glide running. The renderer's
  /// `.setStripLevels` (sent for every volume, pan, mute and solo change) clears BOTH the volume and
  /// the pan glide and sets the voice to the settings' values, which already hold the glide's
  /// target, so the glide jumps to its end in 10 ms.
  @Test(
    "setPan during a volume glide leaves the volume glide running",
  )
  func panChangeKeepsVolumeGlide() throws {
    let folder = try TemporaryFolder()
    let path = try Musical.mono(folder, "dc.wav", Signal.constant(1, frames: 96000))
    let rig = MixerRig()
    try rig.mixer.stems.add(path: path, settings: stem("dc", path) { $0.pan = -1 })
    try rig.mixer.transport.play()
    try rig.mixer.strips.glide("dc", to: .volume(0), seconds: 1)
    _ = rig.render(12000)
    try rig.mixer.strips.setPan("dc", 1)
    let out = rig.render(12000)
    // At 0.5 s the volume is 0.5, now all on the right.
    let r = out.right[11999]
    #expect(abs(Double(r) - 0.5) <= 0.01, "right at 0.5 s: \(r) (volume glide cut short)")
  }

  @Test(
    "soloing another stem during a volume glide leaves the glide running",
  )
  func soloElsewhereKeepsGlide() throws {
    let folder = try TemporaryFolder()
    let path = try Musical.mono(folder, "dc.wav", Signal.constant(1, frames: 96000))
    let rig = MixerRig()
    try rig.mixer.stems.add(path: path, settings: stem("a", path) { $0.pan = -1 })
    try rig.mixer.stems.add(path: path, settings: stem("b", path) { $0.pan = 1 })
    try rig.mixer.transport.play()
    try rig.mixer.strips.glide("a", to: .volume(0), seconds: 1)
    _ = rig.render(12000)
    try rig.mixer.strips.setSolo("b", true)
    try rig.mixer.strips.setSolo("b", false)
    let out = rig.render(12000)
    #expect(abs(Double(out.left[11999]) - 0.5) <= 0.01, "left at 0.5 s: \(out.left[11999]) (glide cut short)")
  }
}
