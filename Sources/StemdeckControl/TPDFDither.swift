/// TPDF dither for an integer output of `bits` bits: triangular noise of ±1 LSB (the sum of two
/// independent uniform values of ±½ LSB) is added before rounding to the output's step, which
/// makes the rounding error independent of the signal (noise of 0.5 LSB RMS in all, instead of
/// distortion, and signals below ½ LSB are kept instead of rounded to silence). The rounding is
/// done here, to a level q in −2^(bits−1) … 2^(bits−1) − 1, handed on as q/2^(bits−1) (a float
/// that holds it exactly): the scale the file is read back with, and the one
/// `SoundFileWriter.encodePCM` stores levels by, so every format (WAV, AIFF, FLAC) stores q
/// itself (`IntegerExactnessTests`).
///
/// Seeded, so the same render writes the same file: the master from `masterSeed`, each
/// `render --stems` file from `stemSeed(name:)`, its own sequence (the same one in every render
/// of that stem, whatever else the session holds). Were the stems to share one sequence, their
/// rounding errors would add up coherently where the stem files are summed (32 stems: 13 LSB RMS
/// instead of √32 × 0.5 = 2.8).
struct TPDFDither {
  let bits: Int
  let scale: Double
  let largest: Double
  var state: UInt64

  /// The master file's seed (xorshift64*'s state before the first draw).
  static let masterSeed: UInt64 = 0x9E37_79B9_7F4A_7C15

  /// The seed of the stem file of strip `name`: the 64-bit FNV-1a hash of the name's UTF-8 bytes,
  /// exclusive-or'd with `masterSeed` and mixed by SplitMix64's finaliser (so names that differ in
  /// one byte get unrelated sequences); never 0, which xorshift cannot leave.
  static func stemSeed(name: String) -> UInt64 {
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    for byte in name.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
    var z = hash ^ masterSeed
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    z ^= z >> 31
    return z == 0 ? masterSeed : z
  }

  init(bits: Int, seed: UInt64 = TPDFDither.masterSeed) {
    self.bits = bits
    scale = Double(1 << (bits - 1))
    largest = scale
    state = seed == 0 ? Self.masterSeed : seed
  }

  /// Each sample takes one 64-bit draw (xorshift64*) split into two independent 32-bit uniform
  /// values on [0, 1): their difference is triangular on (−1, 1) LSB. The rounding adds and
  /// subtracts 1.5 × 2^52, which leaves a Double rounded to the nearest integer (ties to even)
  /// without a libm call: `render --stems` to 16-bit dithers every sample of 32 files, and the
  /// earlier two draws and `rounded()` per sample made that most of the export's time.
  mutating func apply(_ samples: UnsafeMutablePointer<Float>, count: Int) {
    let scale = self.scale, largest = self.largest, unit = 1 / self.scale
    let toUnit = 1.0 / 4_294_967_296.0, magic = 6_755_399_441_055_744.0
    var x = state
    for i in 0..<count {
      x ^= x >> 12
      x ^= x << 25
      x ^= x >> 27
      let r = x &* 0x2545_F491_4F6C_DD1D
      let noise = (Double(UInt32(truncatingIfNeeded: r >> 32)) - Double(UInt32(truncatingIfNeeded: r))) * toUnit
      let q = (Double(samples[i]) * scale + noise + magic) - magic
      samples[i] = Float(Swift.min(largest - 1, Swift.max(-largest, q)) * unit)
    }
    state = x
  }
}
