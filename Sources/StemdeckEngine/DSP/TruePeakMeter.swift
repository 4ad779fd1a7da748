#if canImport(Glibc)
import Glibc
#endif

/// The true peak of a stream of interleaved frames, measured two ways at once, the larger kept:
/// `TruePeakDetector` (8×, near an ideal reconstruction) and ITU-R BS.1770-4 Annex 2's reference
/// interpolator (4×, 48 taps), which can read a little over an ideal reconstruction by its
/// ripple. `render --normalize --true-peak` settles its limiter until both are under the
/// ceiling. Offline (it allocates in `init` only).
public struct TruePeakMeter: ~Copyable, @unchecked Sendable {
  public let channels: Int
  let detector = TruePeakDetector()
  /// Per channel: the last `2 * half` samples, stored twice (at i and i + 2 * half) so the window
  /// is contiguous; the detector's `before` point.
  let history: UnsafeMutablePointer<Float>
  let before: UnsafeMutablePointer<Float>
  var position = 0
  /// The largest magnitude read, linear.
  public private(set) var peak: Float = 0

  /// ITU-R BS.1770-4, Annex 2, Table 1: the interpolator's 48 coefficients, phase by phase
  /// (12 taps each; tap j weighs the sample j frames back).
  static let bs1770: [Float] = [
    0.001_708_984_375, 0.010_986_328_125, -0.019_653_320_312_5, 0.033_203_125, -0.059_448_242_187_5,
    0.137_329_101_562_5, 0.972_167_968_75, -0.102_294_921_875, 0.047_607_421_875, -0.026_611_328_125,
    0.014_892_578_125, -0.008_300_781_25,
    -0.029_174_804_687_5, 0.029_296_875, -0.051_757_812_5, 0.089_111_328_125, -0.166_503_906_25,
    0.465_087_890_625, 0.779_785_156_25, -0.200_317_382_812_5, 0.101_562_5, -0.058_227_539_062_5,
    0.033_081_054_687_5, -0.018_920_898_437_5,
    -0.018_920_898_437_5, 0.033_081_054_687_5, -0.058_227_539_062_5, 0.101_562_5, -0.200_317_382_812_5,
    0.779_785_156_25, 0.465_087_890_625, -0.166_503_906_25, 0.089_111_328_125, -0.051_757_812_5,
    0.029_296_875, -0.029_174_804_687_5,
    -0.008_300_781_25, 0.014_892_578_125, -0.026_611_328_125, 0.047_607_421_875, -0.102_294_921_875,
    0.972_167_968_75, 0.137_329_101_562_5, -0.059_448_242_187_5, 0.033_203_125, -0.019_653_320_312_5,
    0.010_986_328_125, 0.001_708_984_375
  ]

  public init(channels: Int) {
    precondition(channels > 0)
    self.channels = channels
    let taps = 2 * detector.half
    history = .allocate(capacity: channels * 2 * taps)
    history.initialize(repeating: 0, count: channels * 2 * taps)
    before = .allocate(capacity: channels)
    before.initialize(repeating: 0, count: channels)
  }

  deinit {
    history.deallocate()
    before.deallocate()
  }

  /// The peak in dBTP (−inf for silence).
  public var decibels: Double { 20 * log10(Double(peak)) }

  /// Reads the end of the stream: the waveform after the last sample (zeros after it), which
  /// the detector's look-ahead has not reached yet.
  public mutating func finish() {
    let zeros = UnsafeMutablePointer<Float>.allocate(capacity: channels * 2 * detector.half)
    zeros.initialize(repeating: 0, count: channels * 2 * detector.half)
    add(zeros, frames: 2 * detector.half)
    zeros.deallocate()
  }

  /// Reads `frames` interleaved frames of `channels` samples.
  public mutating func add(_ interleaved: UnsafePointer<Float>, frames: Int) {
    let taps = 2 &* detector.half
    // BS.1770's 12 taps reach back 11 frames: the newest 12 of the history are theirs.
    let reference = Self.bs1770
    for i in 0..<frames {
      for c in 0..<channels {
        let line = history + c &* 2 &* taps
        let x = interleaved[i &* channels &+ c]
        line[position] = x
        line[position &+ taps] = x
        let window = line + (position &+ 1)  // oldest … newest (position + 1 … position + taps)
        // Through a local: `&before[c]` (inout through a pointer's subscript) crashed the
        // compiler under ThreadSanitizer ("Invalid bitcast", Swift 6.3.1).
        var point = before[c]
        peak = Swift.max(peak, detector.segmentPeak(window, before: &point))
        before[c] = point
        for phase in 0..<4 {
          var s: Float = 0
          for j in 0..<12 { s += reference[phase &* 12 &+ j] * window[taps &- 1 &- j] }
          peak = Swift.max(peak, s.magnitude)
        }
      }
      position = position &+ 1 == taps ? 0 : position &+ 1
    }
  }
}
