import Foundation
import StemdeckAudioFile
import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import Testing

// Integer renders store exactly the level meant for each sample: with dither, the ditherer's
// rounded level q; without, the clipped float mix rounded to the nearest level. Checked against
// an independent quantization of the float mix (the same render to 32-bit float WAV) with the
// same TPDF noise, redrawn here from the ditherer's documented generator and seeds (the master's,
// and each stem file's own).

@Suite struct IntegerExactnessTests {
  /// The ditherer's noise, in LSB, for `count` samples from its seed (xorshift64*, two 32-bit
  /// uniform values per draw, their difference), as `TPDFDither` documents it.
  static func noise(count: Int, seed: UInt64 = masterSeed) -> [Double] {
    var x = seed
    var out: [Double] = []
    out.reserveCapacity(count)
    for _ in 0..<count {
      x ^= x >> 12
      x ^= x << 25
      x ^= x >> 27
      let r = x &* 0x2545_F491_4F6C_DD1D
      out.append((Double(UInt32(truncatingIfNeeded: r >> 32)) - Double(UInt32(truncatingIfNeeded: r))) / 4_294_967_296)
    }
    return out
  }

  /// The master file's seed, as `TPDFDither` documents it.
  static let masterSeed: UInt64 = 0x9E37_79B9_7F4A_7C15

  /// A stem file's seed, as `TPDFDither` documents it: FNV-1a (64-bit) of the strip's name,
  /// exclusive-or the master's seed, through SplitMix64's finaliser.
  static func stemSeed(_ name: String) -> UInt64 {
    var h: UInt64 = 14_695_981_039_346_656_037
    for byte in Array(name.utf8) { h = (h ^ UInt64(byte)) &* 1_099_511_628_211 }
    var z = h ^ masterSeed
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  /// Two stems: "tone", left a 1 kHz sine of 5 LSB (16-bit) around zero, so half its levels are
  /// negative, right a slow sine to 0.99995 of full scale, through the top and bottom levels;
  /// "hiss", white noise of 3 LSB (16-bit) in both channels, which takes the master past full
  /// scale (clipped) and gives 24-bit files every kind of level.
  static func session(in folder: TemporaryFolder) throws -> Session {
    let frames = 48000
    let left = Signal.sine(frequency: 1000, sampleRate: 48000, frames: frames, amplitude: 5.0 / 32768)
    let right = Signal.sine(frequency: 3, sampleRate: 48000, frames: frames, amplitude: 0.99995)
    try writeAudio(folder.file("tone.wav"), format: .wavFloat, channels: [left, right])
    let hiss = Signal.noise(frames: frames, amplitude: 3.0 / 32768, seed: 23)
    try writeAudio(folder.file("hiss.wav"), format: .wavFloat, channels: [hiss, hiss.reversed()])
    var session = Session()
    session.stems = [stem("tone", "tone.wav"), stem("hiss", "hiss.wav")]
    return session
  }

  /// The levels a file of `bits` bits should hold for the float `mix`: with dither, the mix
  /// scaled by 2^(bits−1) plus the ditherer's noise, rounded to the nearest level (ties to
  /// even), clipped; without, the mix rounded the same way.
  static func levels(_ mix: [Float], bits: Int, dither: Bool, seed: UInt64 = masterSeed) -> [Double] {
    let full = Double(1 << (bits - 1))
    let noise = dither ? Self.noise(count: mix.count, seed: seed) : [Double](repeating: 0, count: mix.count)
    return mix.indices.map { i in min(full - 1, max(-full, (Double(mix[i]) * full + noise[i]).rounded(.toNearestOrEven))) }
  }

  /// Compares a file with the levels it should hold; the mismatches by kind, and the first of each.
  static func mismatches(_ path: String, _ expected: [Double], bits: Int) throws -> [String: (count: Int, first: String)] {
    let written = try readAudio(path).samples
    #expect(written.count == expected.count, "\(path)")
    let full = Double(1 << (bits - 1))
    var wrong: [String: (count: Int, first: String)] = [:]
    for i in 0..<min(written.count, expected.count) {
      let q = expected[i], level = Double(written[i]) * full
      guard level != q else { continue }
      let key = "\(q < 0 ? "negative" : "positive") q written as q\(level - q >= 0 ? "+" : "")\(level - q)"
      let first = wrong[key]?.first ?? "sample \(i): q \(Int(q)), written \(level)"
      wrong[key] = ((wrong[key]?.count ?? 0) + 1, first)
    }
    return wrong
  }

  @Test(
    "16- and 24-bit WAV, AIFF and FLAC, dithered and not, master and --stems files: every sample holds exactly its level (the ditherer's q; else the nearest)",
    arguments: [OutputFormat.wav16, .wav24, .aiff16, .aiff, .flac16, .flac], [true, false])
  func exactLevels(format: OutputFormat, dither: Bool) throws {
    let folder = try TemporaryFolder()
    let session = try Self.session(in: folder)
    let bits = try #require(format.integerBits)
    let ext = format.container
    // The float mix and stems (32-bit float WAV holds them exactly).
    _ = try OfflineRenderer.render(
      session: session, sessionPath: folder.file("s.stemdeck"), outputPath: folder.file("float-mix.wav"), duration: nil,
      stemsFolder: folder.file("float"))
    let summary = try OfflineRenderer.render(
      session: session, sessionPath: folder.file("s.stemdeck"), outputPath: folder.file("mix.\(ext)"), duration: nil,
      dither: dither, stemsFolder: folder.file("int"), format: format)
    #expect(summary.clippedSamples > 0, "the master goes past full scale")
    let files = [
      ("float-mix.wav", "mix.\(ext)", Self.masterSeed), ("float/tone.wav", "int/tone.\(ext)", Self.stemSeed("tone")),
      ("float/hiss.wav", "int/hiss.\(ext)", Self.stemSeed("hiss"))
    ]
    for (float, written, seed) in files {
      let mix = try readAudio(folder.file(float)).samples
      #expect(mix.count == 96000)
      let expected = Self.levels(mix, bits: bits, dither: dither, seed: seed)
      #expect(expected.contains { $0 < 0 } && expected.contains { $0 > 0 })
      let wrong = try Self.mismatches(folder.file(written), expected, bits: bits)
      #expect(wrong.isEmpty, "\(format.description), dither \(dither), \(written): \(wrong.sorted { $0.key < $1.key })")
    }
  }
}
