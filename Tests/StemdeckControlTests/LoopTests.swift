import Foundation
import StemdeckAudioFile
import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import Testing

@Suite struct LoopTests {
  @Test(
    "loops 2 plays the file's samples exactly three times back to back, then silence",
    arguments: [OutputFormat.wavFloat, .flac])
  func bitExactSeams(format: OutputFormat) throws {
    let folder = try TemporaryFolder()
    let n = 10007  // prime: no block size divides it, so seams fall mid-block
    let name = format == .flac ? "noise.flac" : "noise.wav"
    try writeAudio(folder.file(name), format: format, channels: [Signal.noise(frames: n, amplitude: 0.9, seed: 7)])
    let file = try readAudio(folder.file(name)).samples
    var session = Session()
    session.stems = [
      stem("noise", name) {
        $0.pan = -1; $0.loops = 2
      }
    ]

    // Without a duration the render is exactly the three passes.
    let natural = try renderOffline(session, in: folder, name: "natural.wav")
    #expect(natural.summary.frames == 3 * n)

    let (_, output) = try renderOffline(session, in: folder, duration: Double(3 * n + 2000) / 48000, name: "long.wav")
    #expect(output.count == 3 * n + 2000)
    for pass in 0..<3 {
      let played = output.left[(pass * n)..<((pass + 1) * n)]
      #expect(firstMismatch(played, file[...]) == nil, "pass \(pass) differs from the file")
    }
    #expect(output.left[(3 * n)...].allSatisfy { $0 == 0 }, "silence after the last pass")
    #expect(output.right.allSatisfy { $0 == 0 }, "pan -1: nothing on the right")
  }

  @Test("loops 2 with blocks of 1 frame, 7 frames and 4096 frames give identical renders")
  func blockSizeDoesNotMatter() throws {
    let folder = try TemporaryFolder()
    let n = 3001
    try writeAudio(folder.file("r.wav"), format: .wavFloat, channels: [Signal.ramp(frames: n)])
    var session = Session()
    session.stems = [
      stem("r", "r.wav") {
        $0.loops = 2; $0.pan = 0.3; $0.volume = 0.9
      }
    ]
    let reference = try renderOffline(session, in: folder, name: "a.wav", blockFrames: 1024).output
    for block in [1, 7, 4096] {
      let other = try renderOffline(session, in: folder, name: "b\(block).wav", blockFrames: block).output
      #expect(other.count == reference.count)
      #expect(firstMismatch(other.left[...], reference.left[...]) == nil, "block \(block)")
      #expect(firstMismatch(other.right[...], reference.right[...]) == nil, "block \(block)")
    }
  }

  @Test("with rate 0.9 and loops 2 the output is continuous across the seams")
  func continuousSeamsWithVarispeed() throws {
    let folder = try TemporaryFolder()
    // 100 Hz has a period of 480 frames, which divides n: the looped signal is one smooth sine.
    let n = 12000
    try writeAudio(
      folder.file("sine.wav"), format: .wavFloat,
      channels: [Signal.sine(frequency: 100, sampleRate: 48000, frames: n, amplitude: 0.8)])
    var session = Session()
    session.stems = [
      stem("sine", "sine.wav") {
        $0.pan = -1; $0.loops = 2; $0.rate = 0.9
      }
    ]
    let (summary, output) = try renderOffline(session, in: folder, duration: 1.0)
    let playedFrames = Double(3 * n) / 0.9  // 40000
    let left = output.left
    #expect(summary.frames == 48000)

    let seams = [Double(n) / 0.9, Double(2 * n) / 0.9].map { Int($0.rounded()) }
    let window = 64
    var elsewhere = 0.0
    for i in 100..<(Int(playedFrames) - 100) where !seams.contains(where: { abs($0 - i) <= window }) {
      elsewhere = max(elsewhere, abs(Double(left[i + 1]) - Double(left[i])))
    }
    // A 90 Hz sine of amplitude 0.8 moves at most 2π·90/48000·0.8 per frame.
    let expectedStep = 2 * Double.pi * 90 / 48000 * 0.8
    #expect(abs(elsewhere - expectedStep) < 0.05 * expectedStep, "largest step \(elsewhere), expected about \(expectedStep)")
    for seam in seams {
      let step = maxStep(left, in: (seam - window)..<(seam + window))
      #expect(step <= 1.5 * elsewhere, "step \(step) at the seam near \(seam) (elsewhere \(elsewhere))")
      // And the level does not dip: the sine's envelope is intact across the seam.
      let local = peak(left[(seam - 300)..<(seam + 300)])
      #expect(local > 0.79, "peak near seam \(seam) is \(local)")
    }
    // The stem plays for 3n/0.9 frames, then is silent.
    #expect(peak(left[(Int(playedFrames) - 600)..<(Int(playedFrames) - 10)]) > 0.7)
    #expect(peak(left[(Int(playedFrames) + 100)...]) < 1e-3)
  }

  @Test("loops -1 keeps playing past many passes")
  func loopsForever() throws {
    let folder = try TemporaryFolder()
    let n = 1000
    try writeAudio(folder.file("r.wav"), format: .wavFloat, channels: [Signal.ramp(frames: n)])
    let file = try readAudio(folder.file("r.wav")).samples
    var session = Session()
    session.stems = [
      stem("r", "r.wav") {
        $0.loops = -1; $0.pan = -1
      }
    ]
    let (_, output) = try renderOffline(session, in: folder, duration: Double(40 * n + 123) / 48000)
    for pass in 0..<40 {
      #expect(firstMismatch(output.left[(pass * n)..<((pass + 1) * n)], file[...]) == nil, "pass \(pass)")
    }
    #expect(firstMismatch(output.left[(40 * n)...], file[0..<123]) == nil)
  }
}
