import Foundation
import StemdeckControl
import StemdeckEngine
import StemdeckSession
import StemdeckTestSupport
import Testing

/// A live input glides like the other strips (issue 34: every strip kind has every control that
/// fits it): `vol mic 0.1 over 0.5s`, linear or in equal dB steps, and pan, rendered through
/// `renderBlock` with `SendRenderTests`' capture. The transport never plays: an input is live.
@Suite struct InputGlideTests {
  let capture = SendRenderTests()

  /// A stereo input `keys` fed a constant 0.5 on both sides, routed to the master, rendered
  /// for 4,800 frames at unity; then `start` runs and 30,000 frames are rendered.
  func glide(_ start: (Mixer) throws(MixerError) -> Void) throws -> (before: Stereo, after: Stereo, mixer: Mixer) {
    let rig = MixerRig()
    try rig.mixer.inputs.add(InputSettings(name: "keys", channels: .stereo))
    let before = capture.render(rig, frames: 4800, inputFeed: [Float](repeating: 0.5, count: 4800)).master
    try start(rig.mixer)
    let after = capture.render(rig, frames: 30_000, inputFeed: [Float](repeating: 0.5, count: 30_000)).master
    return (before, after, rig.mixer)
  }

  @Test("an input's volume glides linearly while stopped: frame k of 24,000 is at 1 - 0.9 k / 24,000; the settings take the target")
  func linearVolume() throws {
    let (before, after, m) = try glide { (m: Mixer) throws(MixerError) in try m.strips.glide("keys", to: .volume(0.1), seconds: 0.5) }
    #expect(abs(before.left[4000] - 0.5) < 1e-6 && abs(before.right[4000] - 0.5) < 1e-6, "\(before.left[4000])")
    var worst = 0.0
    for k in stride(from: 0, to: 30_000, by: 97) {
      let expected = 0.5 * (k < 24_000 ? 1 - 0.9 * Double(k) / 24_000 : 0.1)
      worst = max(worst, abs(Double(after.left[k]) - expected), abs(Double(after.right[k]) - expected))
    }
    #expect(worst < 1e-5, "largest difference from the linear glide: \(worst)")
    #expect(m.inputs.settings.first?.volume == 0.1)
    #expect(m.isDirty)
  }

  @Test("an input's exponential volume glide moves in equal dB steps (at each block's end) to its target")
  func exponentialVolume() throws {
    let (_, after, _) = try glide { (m: Mixer) throws(MixerError) in
      try m.strips.glide("keys", to: .volume(0.01), seconds: 0.5, exponential: true)
    }
    // The capture renders 256-frame blocks; a glide's value is exact at each block's start.
    var worst = 0.0
    for k in stride(from: 256, to: 24_000, by: 256) {
      let expected = 0.5 * pow(0.01, Double(k) / 24_000)
      worst = max(worst, abs(20 * log10(Double(after.left[k]) / expected)))
    }
    #expect(worst < 0.01, "largest difference from the dB glide: \(worst) dB")
    #expect(abs(Double(after.left[29_000]) - 0.005) < 1e-6, "\(after.left[29_000])")
  }

  @Test("an input's balance glides to hard left; a plain change ends a glide where it is set; rate is refused")
  func panAndRefusals() throws {
    let (_, after, m) = try glide { (m: Mixer) throws(MixerError) in try m.strips.glide("keys", to: .pan(-1), seconds: 0.25) }
    #expect(abs(after.left[20_000] - 0.5) < 1e-6 && abs(after.right[20_000]) < 1e-6, "\(after.left[20_000]) \(after.right[20_000])")
    // Mid-glide, a plain volume change stops the glide at the value set.
    let rig = MixerRig()
    try rig.mixer.inputs.add(InputSettings(name: "keys", channels: .stereo))
    try rig.mixer.strips.glide("keys", to: .volume(0), seconds: 10)
    _ = capture.render(rig, frames: 4800, inputFeed: [Float](repeating: 0.5, count: 4800))
    try rig.mixer.strips.setVolume("keys", 0.5)
    let held = capture.render(rig, frames: 9600, inputFeed: [Float](repeating: 0.5, count: 9600)).master
    #expect(abs(held.left[9000] - 0.25) < 1e-6, "the level set holds: \(held.left[9000])")
    let refused = capture.message { () throws(MixerError) in try m.strips.glide("keys", to: .rate(1.5), seconds: 1) }
    #expect(refused.hasPrefix("'keys' is a live input: it has volume, pan"), "\(refused)")
  }

  @Test(
    "an input kept by an open takes every field of the new session at once: volume, pan and solo changed together are all heard (one strip change path)"
  )
  func keptInputTakesEveryField() throws {
    let rig = MixerRig()
    try rig.mixer.inputs.add(InputSettings(name: "keys", channels: .stereo))
    _ = capture.render(rig, frames: 4800, inputFeed: [Float](repeating: 0.5, count: 4800))
    var session = Session()
    var keys = InputSettings(name: "keys", channels: .stereo)
    keys.volume = 0.5
    keys.pan = -1
    keys.solo = true
    session.inputs = [keys]
    _ = try rig.mixer.load(session, sessionPath: "/tmp/stemdeck-kept-input.json")
    let after = capture.render(rig, frames: 9600, inputFeed: [Float](repeating: 0.5, count: 9600)).master
    // Balance hard left on a stereo strip: the left side at volume, the right silent.
    #expect(abs(after.left[9000] - 0.25) < 1e-6 && abs(after.right[9000]) < 1e-6, "\(after.left[9000]) \(after.right[9000])")
    #expect(rig.mixer.inputs.settings.first?.solo == true && rig.mixer.inputs.settings.first?.volume == 0.5)
  }

  @Test(
    "a running input or bus glide is told (the value reached, the settings at the target) and 'glide cancel' stops it there: the level holds, the status says no glide"
  )
  func progressAndCancel() throws {
    let rig = MixerRig()
    try rig.mixer.inputs.add(InputSettings(name: "keys", channels: .stereo))
    try rig.mixer.strips.glide("keys", to: .volume(0), seconds: 1)
    // A quarter of the way (12,032 frames: whole 256-frame blocks, so the last block's end).
    _ = capture.render(rig, frames: 12_032, inputFeed: [Float](repeating: 0.5, count: 12_032))
    let during = try rig.mixer.inputs.status("keys")
    let reached = try #require(during.glidingVolume, "no glide told while one runs")
    #expect(abs(reached - (1 - 12_032.0 / 48_000)) < 1e-9, "reached \(reached)")
    #expect(during.glidingPan == nil && during.settings.volume == 0, "\(during)")
    try rig.mixer.strips.cancelGlides("keys")
    #expect(rig.mixer.inputs.settings.first?.volume == reached)
    #expect(try rig.mixer.inputs.status("keys").glidingVolume == nil, "told as gliding right after 'glide cancel'")
    let after = capture.render(rig, frames: 9600, inputFeed: [Float](repeating: 0.5, count: 9600)).master
    #expect(abs(Double(after.left[9000]) - 0.5 * reached) < 1e-6, "the level does not hold where the glide stopped: \(after.left[9000])")
    #expect(try rig.mixer.inputs.status("keys").glidingVolume == nil, "a glide is still told after cancel")

    // A bus's glide waits for play (as a stem's): told at its start, and cancelled there.
    try rig.mixer.buses.add(BusSettings(name: "band"))
    try rig.mixer.strips.glide("band", to: .pan(-1), seconds: 2)
    _ = capture.render(rig, frames: 512, inputFeed: [Float](repeating: 0.5, count: 512))
    let bus = try #require(rig.mixer.buses.statuses().first)
    #expect(bus.glidingPan == 0 && bus.glidingVolume == nil && bus.settings.pan == -1, "\(bus)")
    try rig.mixer.strips.cancelGlides("band")
    #expect(rig.mixer.buses.statuses().first?.glidingPan == nil, "told as gliding right after 'glide cancel'")
    _ = capture.render(rig, frames: 512, inputFeed: [Float](repeating: 0.5, count: 512))
    let cancelled = try #require(rig.mixer.buses.statuses().first)
    #expect(cancelled.glidingPan == nil && cancelled.settings.pan == 0, "\(cancelled)")
  }
}
