#if canImport(Glibc)
import Glibc
#endif

/// A look-ahead limiter whose detector is the true (inter-sample) peak: `render --normalize
/// --true-peak` (docs/architecture.md, *Offline render*). Offline only today, but written to the
/// realtime rules of `DSP/` (buffers allocated in `init`, nothing allocated or locked in
/// `process`).
///
/// How it works, per input frame:
/// 1. Detector (`TruePeakDetector`): the waveform from the frame to the next, left and right,
///    reconstructed at 8× the rate (a polyphase Kaiser-windowed sinc of `2 * half` taps per
///    phase) with each local maximum's top found by a parabola. The peak `p[n]` is the larger of
///    the two channels'. (A 4× BS.1770-style detector with 24 taps let transients through up to
///    0.5 dB over an ideal reconstruction: the drums of the demo, 2026-12-03.)
/// 2. An interpolated point depends on the `2 * half` frames around it, so a peak's gain must hold
///    over all of them; and the gain must have finished falling when the first of them comes.
///    Both are one sliding maximum of `p` over `attack + 2 * half − 1` frames: the gain asked for
///    frame m, `h[m] = min(1, ceiling / max p[m − half … m + attack + half − 2])`.
/// 3. Release: the gain returns towards 1 with a one-pole curve (`releaseSeconds` time constant),
///    and never above `h`.
/// 4. Attack: two moving averages of `attack / 2` frames each smooth the gain (an S-shaped fall
///    spread over the look-ahead). An average over frames that all lie in the hold of step 2 is
///    never above the smallest `h` among them, so the smoothed gain is at most `ceiling / p` on
///    every frame a peak depends on.
/// 5. The audio of every channel (the master's two, and any other channels that must get the same
///    gain curve, such as the stems of `render --stems`) is delayed by `latency` frames and
///    multiplied by the gain. The caller drops the first `latency` output frames and feeds
///    `latency` frames of silence at the end, so the output stays sample-aligned with the input.
///
/// Where the gain curve never falls below 1 the output is the input exactly (× 1).
public struct TruePeakLimiter: ~Copyable, @unchecked Sendable {
  /// Frames of delay between input and output.
  public let latency: Int
  /// Frames the gain takes to fall (the look-ahead).
  public let attack: Int
  /// Half the taps of each interpolation phase.
  public let half: Int
  public let channels: Int
  public let maxFrames: Int
  /// The largest true peak let through, linear.
  public let ceiling: Float
  let releaseCoefficient: Double

  /// Reconstructs the waveform between samples.
  let detector: TruePeakDetector
  /// Per master channel: the detector's point just before the current frame.
  var beforeLeft: Float = 0, beforeRight: Float = 0
  /// The last `2 * half` input samples of each master channel, stored twice (at i and
  /// i + 2 * half) so that the window is always contiguous.
  let history: UnsafeMutablePointer<Float>
  var historyPosition = 0
  /// The sliding maximum's monotonic queue (values and frame numbers), `window` entries.
  let queueValues: UnsafeMutablePointer<Float>
  let queueFrames: UnsafeMutablePointer<Int>
  var queueHead = 0
  var queueCount = 0
  let window: Int
  /// The released gain.
  var released = 1.0
  /// The two moving averages: their last values, running sums and how many values under 1 they
  /// hold (none: the average is exactly 1).
  let box1: UnsafeMutablePointer<Double>
  let box2: UnsafeMutablePointer<Double>
  let box1Length: Int
  let box2Length: Int
  var box1Position = 0, box2Position = 0
  var box1Sum: Double, box2Sum: Double
  var box1Under = 0, box2Under = 0
  /// Per block: the gain of each output frame.
  let gains: UnsafeMutablePointer<Float>
  /// Per channel: `latency` delayed frames then room for a block.
  let delay: UnsafeMutablePointer<Float>
  /// Input frames taken so far.
  var inputFrames = 0

  /// The smallest gain applied to an output frame (after the first `latency`), linear.
  public private(set) var smallestGain: Float = 1
  /// Output frames (after the first `latency`) whose gain is under 1, and under −0.1 dB.
  public private(set) var limitedFrames = 0
  public private(set) var reducedFrames = 0

  /// `ceiling`: linear. `channels` ≥ 2 (the first two are the master, whose peaks drive the gain).
  /// Allocates; not on the realtime thread.
  public init(
    sampleRate: Int, ceiling: Double, channels: Int, maxFrames: Int,
    lookAheadSeconds: Double = 0.0015, releaseSeconds: Double = 0.1
  ) {
    precondition(channels >= 2 && maxFrames > 0)
    detector = TruePeakDetector()
    let half = detector.half
    self.ceiling = Float(ceiling)
    self.channels = channels
    self.maxFrames = maxFrames
    self.half = half
    attack = Swift.max(2, Int((lookAheadSeconds * Double(sampleRate)).rounded()))
    latency = attack + 2 * half - 2
    window = attack + 2 * half - 1
    releaseCoefficient = 1 - exp(-1 / (releaseSeconds * Double(sampleRate)))
    let taps = 2 * half
    history = .allocate(capacity: 2 * 2 * taps)
    history.initialize(repeating: 0, count: 2 * 2 * taps)
    queueValues = .allocate(capacity: window)
    queueValues.initialize(repeating: 0, count: window)
    queueFrames = .allocate(capacity: window)
    queueFrames.initialize(repeating: 0, count: window)
    box1Length = attack / 2
    box2Length = attack - box1Length
    box1 = .allocate(capacity: box1Length)
    box1.initialize(repeating: 1, count: box1Length)
    box2 = .allocate(capacity: box2Length)
    box2.initialize(repeating: 1, count: box2Length)
    box1Sum = Double(box1Length)
    box2Sum = Double(box2Length)
    gains = .allocate(capacity: maxFrames)
    gains.initialize(repeating: 1, count: maxFrames)
    delay = .allocate(capacity: channels * (latency + maxFrames))
    delay.initialize(repeating: 0, count: channels * (latency + maxFrames))
  }

  deinit {
    history.deallocate()
    queueValues.deallocate()
    queueFrames.deallocate()
    box1.deallocate()
    box2.deallocate()
    gains.deallocate()
    delay.deallocate()
  }

  /// Replaces `frames` (≤ `maxFrames`) frames of each of `channels` planar buffers with the
  /// limited output `latency` frames earlier (silence before the first input).
  @_noLocks
  public mutating func process(_ buffers: UnsafePointer<UnsafeMutablePointer<Float>>, frames n: Int) {
    let left = buffers[0], right = buffers[1]
    let taps = 2 &* half
    let historyLeft = history, historyRight = history + 2 &* taps
    let ceilingValue = Double(ceiling)
    let tenthOfDecibel: Float = 0.988_553_1  // 10^(−0.1/20)
    for i in 0..<n {
      // 1. The detector.
      let l = left[i], r = right[i]
      historyLeft[historyPosition] = l
      historyLeft[historyPosition &+ taps] = l
      historyRight[historyPosition] = r
      historyRight[historyPosition &+ taps] = r
      historyPosition = historyPosition &+ 1 == taps ? 0 : historyPosition &+ 1
      let wl = historyLeft + historyPosition, wr = historyRight + historyPosition
      let peak = Swift.max(detector.segmentPeak(wl, before: &beforeLeft), detector.segmentPeak(wr, before: &beforeRight))
      // 2. The sliding maximum over `window` peaks.
      // Entries leave the front once older than the window (first, so that at most `window`
      // are ever held), and the back while not larger than the new peak.
      let frame = inputFrames
      while queueCount > 0 && queueFrames[queueHead] <= frame &- window {
        queueHead = queueHead &+ 1 == window ? 0 : queueHead &+ 1
        queueCount &-= 1
      }
      while queueCount > 0 {
        let back = queueHead &+ queueCount &- 1
        if queueValues[back >= window ? back &- window : back] <= peak { queueCount &-= 1 } else { break }
      }
      let slot = queueHead &+ queueCount
      queueValues[slot >= window ? slot &- window : slot] = peak
      queueFrames[slot >= window ? slot &- window : slot] = frame
      queueCount &+= 1
      let highest = Double(queueValues[queueHead])
      let held = highest > ceilingValue ? ceilingValue / highest : 1
      // 3. Release.
      var g = released + (1 - released) * releaseCoefficient
      if g > 1 - 1e-7 { g = 1 }
      if held < g { g = held }
      released = g
      // 4. Two moving averages.
      let out1 = Self.average(box1, box1Length, &box1Position, &box1Sum, &box1Under, g)
      let out2 = Self.average(box2, box2Length, &box2Position, &box2Sum, &box2Under, out1)
      let gain = Float(out2)
      gains[i] = gain
      if frame >= latency {
        // Output frame `frame − latency`, past the first `latency` (which are silence).
        if gain < 1 { limitedFrames &+= 1 }
        if gain < tenthOfDecibel { reducedFrames &+= 1 }
        smallestGain = Swift.min(smallestGain, gain)
      }
      inputFrames &+= 1
    }
    // 5. Delay every channel and apply the gains.
    let stride = latency &+ maxFrames
    for c in 0..<channels {
      let line = delay + c &* stride
      let io = buffers[c]
      for i in 0..<n { line[latency &+ i] = io[i] }
      for i in 0..<n { io[i] = line[i] * gains[i] }
      for i in 0..<latency { line[i] = line[i &+ n] }
    }
  }

  /// One step of a moving average of `length` values: `value` in, the mean out (exactly 1 while
  /// every value is 1).
  @inline(__always)
  static func average(
    _ values: UnsafeMutablePointer<Double>, _ length: Int, _ position: inout Int, _ sum: inout Double,
    _ under: inout Int, _ value: Double
  ) -> Double {
    let old = values[position]
    values[position] = value
    position = position &+ 1 == length ? 0 : position &+ 1
    if old < 1 { under &-= 1 }
    if value < 1 { under &+= 1 }
    if under == 0 {
      sum = Double(length)
      return 1
    }
    sum += value - old
    return Swift.min(1, sum / Double(length))
  }
}
