import Foundation
import StemdeckAudioFile
import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import Testing

/// Gain changes while playing, driven through the Mixer with the test as the audio thread.
@Suite struct SmoothingTests {
  /// The first index from `start` after which `a` stays within `tolerance` of `value`.
  static func settles(_ a: [Float], at value: Float, tolerance: Float = 1e-6) -> Int? {
    guard let last = a.lastIndex(where: { abs($0 - value) > tolerance }) else { return 0 }
    return last + 1 < a.count ? last + 1 : nil
  }

  @Test("volume 0 → 1 on a full-scale DC stem ramps in steps of at most 1/400 and arrives within 500 frames")
  func volumeJump() throws {
    let folder = try TemporaryFolder()
    try writeAudio(
      folder.file("dc.wav"), format: .wavFloat,
      channels: [Signal.constant(1, frames: 96000), Signal.constant(1, frames: 96000)])
    let rig = MixerRig()
    try rig.mixer.stems.add(path: folder.file("dc.wav"), settings: stem("dc", "dc.wav") { $0.volume = 0 })
    try rig.mixer.transport.play()
    let before = rig.render(1024)
    #expect(before.left.allSatisfy { $0 == 0 } && before.right.allSatisfy { $0 == 0 })

    try rig.mixer.strips.setVolume("dc", 1)
    let after = rig.render(2048)
    let left = before.left + after.left
    #expect(maxStep(left) <= 1.0 / 400, "largest step \(maxStep(left))")
    let arrived = try #require(Self.settles(after.left, at: 1), "never reaches 1")
    #expect(arrived <= 500, "reaches 1 only at frame \(arrived) after the change")
    #expect(arrived >= 400, "the change took effect in \(arrived) frames: not smoothed")
    #expect(after.right == after.left, "a centred stereo stem gets the same gain on both sides")

    // And back down: 1 → 0.25.
    try rig.mixer.strips.setVolume("dc", 0.25)
    let down = rig.render(1024)
    #expect(maxStep(after.left + down.left) <= 1.0 / 400)
    let settled = try #require(Self.settles(down.left, at: 0.25))
    #expect(settled <= 500)
  }

  @Test("pan -1 → 1 on a DC stem moves both sides in steps of at most 1/400", arguments: [1, 2])
  func panJump(channels: Int) throws {
    let folder = try TemporaryFolder()
    try writeAudio(
      folder.file("dc.wav"), format: .wavFloat,
      channels: Array(repeating: Signal.constant(1, frames: 96000), count: channels))
    let rig = MixerRig()
    try rig.mixer.stems.add(path: folder.file("dc.wav"), settings: stem("dc", "dc.wav") { $0.pan = -1 })
    try rig.mixer.transport.play()
    let before = rig.render(1024)
    // Playing from position 0 starts at full level on the first frame (no fade-in).
    #expect(before.left[0] == 1)
    #expect(before.left.allSatisfy { $0 == 1 } && before.right.allSatisfy { $0 == 0 })

    try rig.mixer.strips.setPan("dc", 1)
    let after = rig.render(2048)
    let left = before.left + after.left, right = before.right + after.right
    #expect(maxStep(left) <= 1.0 / 400, "left: largest step \(maxStep(left))")
    #expect(maxStep(right) <= 1.0 / 400, "right: largest step \(maxStep(right))")
    // Hard right: cos(π/2) ≈ 6e-17 on the left for mono, exactly 0 for stereo balance.
    let leftSettled = try #require(Self.settles(after.left, at: 0))
    let rightSettled = try #require(Self.settles(after.right, at: 1))
    #expect(leftSettled <= 500 && rightSettled <= 500)
    #expect(leftSettled >= 400 && rightSettled >= 400)
  }

  @Test("pause fades out within 5 ms; play resumes with a fade-in and the audio continues where it paused")
  func pauseAndResume() throws {
    let folder = try TemporaryFolder()
    let ramp = Signal.ramp(frames: 96000, from: 0.5, to: 1)
    try writeAudio(folder.file("r.wav"), format: .wavFloat, channels: [ramp])
    let rig = MixerRig()
    try rig.mixer.stems.add(path: folder.file("r.wav"), settings: stem("r", "r.wav") { $0.pan = -1 })
    try rig.mixer.transport.play()
    let first = rig.render(2048)
    #expect(firstMismatch(first.left[...], ramp[0..<2048]) == nil)

    try rig.mixer.transport.pause()
    let paused = rig.render(2048)
    // Faded out within 240 frames (5 ms), smoothly, then silence.
    let silentFrom = try #require(paused.left.firstIndex(of: 0))
    #expect(silentFrom <= 241, "silent only from \(silentFrom)")
    #expect(paused.left[silentFrom...].allSatisfy { $0 == 0 })
    #expect(maxStep(first.left + paused.left) <= 1.0 / 200, "click at the pause: \(maxStep(first.left + paused.left))")
    #expect(rig.mixer.transport.state == .paused)
    let pausedAt = rig.mixer.transport.position
    #expect(abs(pausedAt * 48000 - Double(2048 + silentFrom)) <= 256, "paused at \(pausedAt * 48000)")

    try rig.mixer.transport.play()
    let resumed = rig.render(2048)
    // Resuming away from 0 fades in (first frame near silence) and continues the file
    // exactly where the transport stopped.
    #expect(abs(resumed.left[0]) < 0.01, "no fade-in: first frame \(resumed.left[0])")
    #expect(maxStep(resumed.left) <= 1.0 / 200)
    let resumeFrame = Int((pausedAt * 48000).rounded())
    #expect(
      firstMismatch(resumed.left[300...], ramp[(resumeFrame + 300)..<(resumeFrame + 2048)]) == nil,
      "after the fade-in the audio is the file from the pause position")
  }

  @Test("after a fade-in the output is bit-exact from the fade's end (frame 240 at 48 kHz)")
  func fadeEndsExactly() throws {
    let folder = try TemporaryFolder()
    let ramp = Signal.ramp(frames: 96000, from: 0.3, to: 0.9)
    try writeAudio(folder.file("r.wav"), format: .wavFloat, channels: [ramp])
    let rig = MixerRig()
    try rig.mixer.stems.add(path: folder.file("r.wav"), settings: stem("r", "r.wav") { $0.pan = -1 })
    try rig.mixer.transport.seek(toSeconds: 1)
    try rig.mixer.transport.play()
    let out = rig.render(512)
    #expect(out.left[240] == ramp[48240], "frame 240: \(out.left[240]) vs \(ramp[48240])")
    #expect(firstMismatch(out.left[240...], ramp[48240..<48512]) == nil)

    // The same for a stem's gain ramp: volume 0.5 → 1 ends exactly at frame 480 of the ramp.
    try rig.mixer.strips.setVolume("r", 0.5)
    _ = rig.render(1024)
    try rig.mixer.strips.setVolume("r", 1)
    let ramped = rig.render(1024)
    let base = 48000 + 512 + 1024
    #expect(ramped.left[480] == ramp[base + 480], "frame 480: \(ramped.left[480]) vs \(ramp[base + 480])")
  }

  @Test(
    "a change made while paused applies from the first sample of play",
    arguments: ["mute", "volume", "solo", "pan"])
  func changeWhilePausedAppliesAtOnce(change: String) throws {
    let folder = try TemporaryFolder()
    try writeAudio(folder.file("dc.wav"), format: .wavFloat, channels: [Signal.constant(1, frames: 48000)])
    let rig = MixerRig()
    try rig.mixer.stems.add(path: folder.file("dc.wav"), settings: stem("a", "dc.wav") { $0.pan = -1 })
    try rig.mixer.stems.add(path: folder.file("dc.wav"), settings: stem("b", "dc.wav") { $0.pan = 1 })
    _ = rig.render(1024)  // paused at 0
    switch change {
    case "mute": try rig.mixer.strips.setMute("a", true)
    case "volume": try rig.mixer.strips.setVolume("a", 0)
    case "solo": try rig.mixer.strips.setSolo("b", true)
    default: try rig.mixer.strips.setPan("a", 1)
    }
    _ = rig.render(1024)  // still paused: time for any smoothing
    try rig.mixer.transport.play()
    let out = rig.render(1024)
    #expect(abs(out.left[0]) < 1e-6, "\(change): left starts at \(out.left[0])")  // stem b at pan 1 leaves cos(π/2) ≈ 6e-17 on the left
    #expect(peak(out.left) < 1e-6, "\(change): stem a is heard for \(out.left.firstIndex { abs($0) < 1e-6 } ?? -1) frames")
  }
}
