// `render --normalize` without `--true-peak` (issue 37, item 8): the normaliser's default ceiling
// is -1 dBTP, so a delivery to an integer format is never written clipped.
import Foundation
import StemdeckAudioFile
@testable import StemdeckConsole
import StemdeckControl
import StemdeckTestSupport
import StemdeckText
import Testing
@testable import StemdeckRemote
@testable import StemdeckLive

@Suite("render --normalize: the default -1 dBTP ceiling")
struct NormalizeCeilingTests {
  /// A folder with spiky.wav (4 s stereo: a 1 kHz tone at -40 dBFS and, every half second, a
  /// 5 ms burst of it at 0.5) and spiky.json: its loudness is near -29 LUFS, so -14 LUFS takes a
  /// gain of about +15 dB, which would put the bursts near +9 dBFS.
  func fixture() throws -> TemporaryFolder {
    let folder = try TemporaryFolder()
    let frames = 4 * 48000
    let mono = (0..<frames).map { i -> Float in
      let burst = i % 24000 < 240
      return Float((burst ? 0.5 : 0.01) * sin(2 * Double.pi * 1000 * Double(i) / 48000))
    }
    try writeOneStemSession(folder, name: "spiky", mono: mono)
    return folder
  }

  /// The number in the summary line starting `line`, after `prefix` and before `suffix` ("-1.2";
  /// "-inf": -infinity); `last`: after the last `prefix` in it.
  func figure(_ lines: [String], line start: String, after prefix: String, before suffix: String, last: Bool = false) -> Double? {
    guard let line = lines.first(where: { $0.hasPrefix(start) }),
      let from = line.range(of: prefix, options: last ? .backwards : [])
    else { return nil }
    let rest = line[from.upperBound...]
    guard let end = rest.range(of: suffix) else { return nil }
    let text = String(rest[..<end.lowerBound])
    return text == "-inf" ? -.infinity : Double(text)
  }

  @Test(
    "--normalize -14 to wav16 without --true-peak: exit 0, no sample at full scale, true peak at most -1 dBTP, and the summary's peak lines agree"
  )
  func defaultCeiling() throws {
    let folder = try fixture()
    // Measured without a ceiling (float WAV holds overs): the gain alone would clip.
    let r = try runBinary(["render", "spiky.json", "-o", "out.wav", "--format", "wav16", "--normalize", "-14"], in: folder)
    #expect(r.status == 0, "\(r.stderr)")
    #expect(r.stderr == [], "no warning: \(r.stderr)")
    // The ceiling holds this mix under the target (its loudness is the quiet tone between the
    // bursts the limiter holds down): the first line says the level reached, not the one asked
    // (issue 43, item 13).
    let normalized = r.stdout.first {
      $0.hasPrefix("normalized to -")
        && $0.contains(
          " LUFS, not the -14.0 LUFS asked (the true-peak ceiling holds it down), true peak at most -1.0 dBTP (the default ceiling): ")
    }
    #expect(normalized != nil, "\(r.stdout)")
    let reached = try #require(figure(r.stdout, line: "integrated loudness ", after: "integrated loudness ", before: " LUFS"))
    #expect(normalized?.hasPrefix("normalized to \(NumberFormat.fixed(reached, 1)) LUFS, ") == true, "\(r.stdout)")
    #expect(r.stdout.contains { $0.hasPrefix("the true-peak ceiling holds the output ") }, "\(r.stdout)")
    let measured = try #require(figure(r.stdout, line: "normalized to", after: "the mix measured ", before: " LUFS"))
    let measuredPeak = try #require(figure(r.stdout, line: "normalized to", after: ", true peak ", before: " dBTP; gain", last: true))
    #expect(measuredPeak - measured - 14 > 0.5, "the gain to -14 LUFS alone would put the true peak over 0 dBTP")
    #expect(r.stdout.contains { $0.hasPrefix("true-peak limiter: up to ") }, "\(r.stdout)")
    // The file: 16-bit levels, none at full scale.
    let file = try SoundFile(readingFrom: folder.file("out.wav"))
    var samples = [Float](repeating: 0, count: file.info.frameCount * 2)
    let got = samples.withUnsafeMutableBufferPointer { file.readFrames(into: $0.baseAddress!, frameCount: file.info.frameCount) }
    #expect(got == 4 * 48000)
    let levels = samples.map { Int((Double($0) * 32768).rounded()) }
    #expect(!levels.contains { abs($0) >= 32767 }, "no sample at ±32767 (clipped)")
    let filePeak = 20 * log10(Double(levels.map { abs($0) }.max() ?? 0) / 32768)
    // The summary: the output's true and sample peak, the mix's peak per channel, all under -1.
    let truePeak = try #require(figure(r.stdout, line: "true peak ", after: "true peak ", before: " dBTP"))
    let samplePeak = try #require(figure(r.stdout, line: "sample peak ", after: "sample peak ", before: " dBFS"))
    let peakL = try #require(figure(r.stdout, line: "peak L ", after: "peak L ", before: " dB,"))
    let peakR = try #require(figure(r.stdout, line: "peak L ", after: ", R ", before: " dB; RMS"))
    #expect(truePeak <= -1.0, "\(r.stdout)")
    #expect(samplePeak <= truePeak + 0.05 && peakL <= -1.0 && peakR <= -1.0, "\(r.stdout)")
    #expect(abs(samplePeak - max(peakL, peakR)) <= 0.1, "the peak lines agree: \(r.stdout)")
    #expect(abs(filePeak - samplePeak) <= 0.1, "the file's peak \(filePeak) dBFS, the summary's \(samplePeak)")
    #expect(r.stdout.contains { $0.hasSuffix("; clipped samples 0") }, "\(r.stdout)")
  }

  @Test("--normalize with --true-peak 0: the asked ceiling, not the default, and still no clipped sample in wav16")
  func askedCeiling() throws {
    let folder = try fixture()
    let r = try runBinary(
      ["render", "spiky.json", "-o", "out.wav", "--format", "wav16", "--normalize", "-14", "--true-peak", "0"], in: folder)
    #expect(r.status == 0, "\(r.stderr)")
    #expect(
      r.stdout.contains {
        $0.hasPrefix("normalized to -") && $0.contains(" LUFS asked (the true-peak ceiling holds it down), true peak at most 0.0 dBTP: ")
      },
      "\(r.stdout)")
    let truePeak = try #require(figure(r.stdout, line: "true peak ", after: "true peak ", before: " dBTP"))
    #expect(truePeak <= 0 && truePeak > -1, "\(r.stdout)")
    #expect(r.stdout.contains { $0.hasSuffix("; clipped samples 0") }, "\(r.stdout)")
  }
}
