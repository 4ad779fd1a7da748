import Foundation
import StemdeckAudioFile
@testable import StemdeckControl
import StemdeckEngine
import StemdeckSession
import StemdeckTestSupport
import Testing

// The master's live loudness (issue 23): the renderer's tap, drained by the control thread,
// feeds libebur128 on the meter's own thread (LoudnessWorker.swift). Checked against EBU Tech
// 3341 figures of signals played through the real renderer, across `meters reset`, a stalled
// control thread, and with the meter off.

@Suite("live loudness meter: the renderer's master tap measured on the control thread")
struct LiveLoudnessTests {
  /// A rig playing a stereo 1 kHz sine of `dBFS` peak in both channels (EBU Tech 3341 case 1
  /// at -23), looped forever.
  func rig(_ dBFS: Double, in folder: TemporaryFolder) throws -> MixerRig {
    let path = folder.file("sine.wav")
    let s = Signal.sine(frequency: 1000, sampleRate: 48000, frames: 48000, amplitude: pow(10, dBFS / 20))
    try writeAudio(path, format: .wavFloat, channels: [s, s])
    let rig = MixerRig()
    try rig.mixer.stems.add(path: path, settings: stem("sine", path) { $0.loops = -1 })
    return rig
  }

  /// Renders `seconds` in 256-frame periods, draining the tap every 20 ms as the console does.
  func play(_ rig: MixerRig, seconds: Double) {
    for _ in 0..<Int(seconds * 50) {
      _ = rig.render(960, block: 256)
      _ = rig.mixer.pump()
    }
  }

  @Test("a -23 dBFS 1 kHz stereo sine reads -23.0 LUFS momentary, short-term and integrated (±0.1), range 0, true peak -23 dBTP")
  func steadyTone() throws {
    let folder = try TemporaryFolder()
    let rig = try rig(-23, in: folder)
    #expect(rig.mixer.loudness.current() == nil, "not measured until started")
    try rig.mixer.loudness.start()
    try rig.mixer.transport.play()
    play(rig, seconds: 12)
    let l = try #require(rig.mixer.loudness.current())
    #expect(abs(l.momentary + 23) <= 0.1, "momentary \(l.momentary)")
    #expect(abs(l.shortTerm + 23) <= 0.1, "short-term \(l.shortTerm)")
    #expect(abs(l.integrated + 23) <= 0.1, "integrated \(l.integrated)")
    #expect(l.range <= 0.1, "range \(l.range)")
    #expect(abs(l.truePeakDecibels + 23) <= 0.2, "true peak \(l.truePeakDecibels)")
    // The 5 ms fade-in at play is measured too; the rest of the 12 s is the tone.
    #expect(abs(l.seconds - 12) < 0.01, "\(l.seconds) s measured")
    #expect(l.droppedFrames == 0)
    #expect(l.line.hasPrefix("M -23.0  S -23.0  I -23.0 LUFS  LRA 0.0 LU  TP -23."), "\(l.line)")
  }

  @Test("meters reset restarts the integration: after a 10 dB drop, integrated reads the new level alone")
  func resetRestartsIntegration() throws {
    let folder = try TemporaryFolder()
    let rig = try rig(-20, in: folder)
    try rig.mixer.loudness.start()
    try rig.mixer.transport.play()
    play(rig, seconds: 5)
    try rig.mixer.strips.setVolume("sine", pow(10, -10.0 / 20))
    play(rig, seconds: 5)
    let mixed = try #require(rig.mixer.loudness.current())
    // Both halves gated in: between the two levels, and a loudness range that is not zero.
    #expect(mixed.integrated > -29.9 && mixed.integrated < -20.5, "\(mixed.integrated)")
    rig.mixer.resetMeters()
    let fresh = try #require(rig.mixer.loudness.current())
    #expect(fresh.seconds == 0 && !fresh.integrated.isFinite && fresh.truePeak == 0, "\(fresh)")
    play(rig, seconds: 6)
    let after = try #require(rig.mixer.loudness.current())
    #expect(abs(after.integrated + 30) <= 0.1, "\(after.integrated)")
    #expect(abs(after.truePeakDecibels + 30) <= 0.2, "the true peak is the new level's: \(after.truePeakDecibels)")
  }

  @Test("the published figures (the mixer view's, read without waiting): refreshed while read, never from before a meters reset")
  func published() throws {
    let folder = try TemporaryFolder()
    let rig = try rig(-23, in: folder)
    #expect(rig.mixer.loudness.published() == nil, "not measured until started")
    try rig.mixer.loudness.start()
    try rig.mixer.transport.play()
    play(rig, seconds: 5)
    // Read as the view reads them, 100 times a second, until the meter's thread has published
    // everything played (it does every 200 ms while they are read).
    var seen = try #require(rig.mixer.loudness.published())
    let deadline = Date().addingTimeInterval(10)
    while seen.seconds < 4.99 && Date() < deadline {
      usleep(10_000)
      seen = try #require(rig.mixer.loudness.published())
    }
    #expect(abs(seen.seconds - 5) < 0.01, "\(seen.seconds) s published")
    #expect(abs(seen.integrated + 23) <= 0.1, "integrated \(seen.integrated)")
    #expect(abs(seen.shortTerm + 23) <= 0.1, "short-term \(seen.shortTerm)")
    rig.mixer.resetMeters()
    let after = try #require(rig.mixer.loudness.published())
    #expect(after.seconds == 0 && !after.integrated.isFinite && !after.momentary.isFinite && after.truePeak == 0, "\(after)")
    // What the meter's thread measures from now on is the new integration only.
    play(rig, seconds: 1)
    let fresh = try #require(rig.mixer.loudness.current())
    #expect(abs(fresh.seconds - 1) < 0.01, "\(fresh.seconds) s after the reset")
    rig.mixer.loudness.stop()
    #expect(rig.mixer.loudness.published() == nil)
  }

  @Test("a control thread that stalls past the tap's second: the missed frames are counted, never half-measured")
  func stallIsCounted() throws {
    let folder = try TemporaryFolder()
    let rig = try rig(-23, in: folder)
    try rig.mixer.loudness.start()
    try rig.mixer.transport.play()
    // 3 s with nobody draining: the ring holds about 1.4 s.
    _ = rig.render(3 * 48000, block: 256)
    let l = try #require(rig.mixer.loudness.current())
    #expect(l.droppedFrames > 48000 && l.droppedFrames < 2 * 48000, "\(l.droppedFrames) frames missed")
    #expect(
      Double(l.droppedFrames) / 48000 + l.seconds > 2.99 && Double(l.droppedFrames) / 48000 + l.seconds < 3.01,
      "measured plus missed is what was rendered: \(l.seconds) + \(l.droppedFrames)")
    #expect(abs(l.integrated + 23) <= 0.1, "what was measured is still right: \(l.integrated)")
    #expect(l.line.hasSuffix("frames missed"), "\(l.line)")
  }

  @Test("stopped or never started, the renderer copies nothing: the tap ring stays empty")
  func offCostsNothing() throws {
    let folder = try TemporaryFolder()
    let rig = try rig(-23, in: folder)
    try rig.mixer.transport.play()
    _ = rig.render(48000, block: 256)
    #expect(rig.mixer.rings.loudnessTap.availableCount() == 0)
    try rig.mixer.loudness.start()
    rig.mixer.loudness.stop()
    _ = rig.render(48000, block: 256)
    #expect(rig.mixer.rings.loudnessTap.availableCount() == 0)
    #expect(rig.mixer.loudness.current() == nil)
    #expect(rig.mixer.renderState.pointee.status.pointee.loudnessTap.pointee.droppedFrames.load(ordering: .relaxed) == 0)
  }

  @Test("the published momentary and short-term figures (summed 100 ms slices) equal libebur128's own at every slice boundary")
  func slicesMatchLibebur128() throws {
    // EBU Tech 3341's steps (-36, -23, -20 dBFS) under a swelling programme, fed in pieces of
    // 1000, 2600, 1200, 7000 and 2600 frames: boundaries fall between pieces and inside them.
    let samples =
      LoudnessTests.sine(-36, seconds: 4) + LoudnessTests.programme(seconds: 5) + LoudnessTests.sine(-23, seconds: 4)
      + LoudnessTests.sine(-20, seconds: 3)
    let meter = try LoudnessMeter(sampleRate: 48000, histogram: true)
    var slices = LoudnessSlices(sampleRate: 48000)
    #expect(slices.sliceFrames == 4800)
    #expect(slices.momentary(meter) == -.infinity && slices.shortTerm(meter) == -.infinity)
    let pieces = [1000, 2600, 1200, 7000, 2600]
    var at = 0, compared = 0, worst = 0.0, shortTerms: [Double] = []
    try samples.withUnsafeBufferPointer { b throws(MixerError) in
      var k = 0
      while at < samples.count / 2 {
        let n = min(pieces[k % pieces.count], samples.count / 2 - at)
        try slices.add(b.baseAddress! + 2 * at, frames: n, to: meter)
        at += n
        k += 1
        guard at % 4800 == 0 else { continue }
        let pairs = [(slices.momentary(meter), meter.momentary), (slices.shortTerm(meter), meter.shortTerm)]
        for (mine, theirs) in pairs {
          #expect(mine.isFinite == theirs.isFinite, "\(mine) against \(theirs) at frame \(at)")
          if mine.isFinite && theirs.isFinite { worst = max(worst, abs(mine - theirs)) }
        }
        shortTerms.append(slices.shortTerm(meter))
        compared += 1
      }
    }
    #expect(compared >= 100, "\(compared) boundaries compared")
    #expect(worst < 1e-9, "largest difference \(worst) LU")
    // And the figures move with the signal: the last 3 s are the -20 dBFS tone.
    #expect(abs(shortTerms.last! + 20) <= 0.1, "short-term \(shortTerms.last!)")
    #expect(shortTerms.contains { abs($0 + 36) <= 0.1 }, "the -36 dBFS start was read")
  }
}
