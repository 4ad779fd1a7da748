import Foundation
import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import Testing

// One topic of MusicalTests (the suite and its helpers: MusicalSupport.swift).
extension MusicalTests {
  // MARK: - Scenes (issue 41)

  /// A DC stem panned hard left: the left channel is its level times the master's.
  @Test("a scene recalled with a 1 s fade: a stem's level and the master's glide together and land exactly on frame 48,000")
  func sceneFadeLands() throws {
    let folder = try TemporaryFolder()
    let path = try Musical.mono(folder, "dc.wav", Signal.constant(1, frames: 96000))
    let rig = MixerRig()
    try rig.mixer.stems.add(path: path, settings: stem("dc", path) { $0.pan = -1 })
    try rig.mixer.scenes.save("full", update: false)
    try rig.mixer.strips.setVolume("dc", 0.5)
    try rig.mixer.master.setVolume(0.5)
    try rig.mixer.scenes.save("half", update: false)
    try rig.mixer.scenes.recall("full")
    try rig.mixer.transport.play()
    _ = rig.render(2048, block: 256)
    let recall = try rig.mixer.scenes.recall("half", fade: 1)
    #expect(recall.changed == ["dc"])
    #expect(try rig.mixer.stems.status("dc").settings.volume == 0.5 && rig.mixer.master.volume == 0.5)
    let out = rig.render(60000, block: 256).left
    // Both from 1 to 0.5 over 48,000 frames: (1 − t/2)² on the way, 0.5625 halfway.
    let curve = Musical.deviation(out, at: 0, over: 0...47999) { k in
      let g = 1 - 0.5 * Double(k) / 48000
      return g * g
    }
    #expect(curve < 1e-3, "off the product of the two glides by \(curve)")
    #expect(out[47999] > 0.25, "landed early")
    let off = out[48000...].firstIndex { $0 != 0.25 }
    #expect(off == nil, "not exactly 0.25 from frame 48000: frame \(off ?? -1) = \(off.map { out[$0] } ?? 0)")
  }
}
