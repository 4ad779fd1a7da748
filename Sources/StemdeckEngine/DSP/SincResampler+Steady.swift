import CKernels

/// Steady mode of stemdeck's sinc (issue 38): the ratio a stem holds at rate 1 when its file's
/// rate is not the engine's (44.1 kHz stems on a 48 kHz server: 160/147) is a ratio L/M of two
/// small integers, so the read position only ever falls on L sub-sample phases. Those L rows are
/// computed exactly from the prototype when the converter is made (control thread), and steady
/// mode walks them with an integer position: no interpolation between table rows, no
/// floating-point position, one coefficient load for both channels. It costs about half of the
/// general path per output frame (a quarter with AVX2), and the rows are exact rather than
/// interpolated between 256 table phases.
///
/// When it runs: from a reset (a voice's start or seek) for as long as every call asks for
/// exactly the steady ratio. The first call at another ratio (varispeed, a glide) leaves it for
/// the general path, seamlessly (the position carries over exactly; the coefficients differ by
/// the general table's interpolation error, about −110 dB); the next reset returns to it. Both
/// depend only on the calls' ratios and the reset, never on how calls are sized, so live and
/// offline renders stay identical.

/// The exact polyphase rows of one rational ratio: `outputStep` (L) rows of `padded` coefficients,
/// row p for the read position's fraction p / L.
///
/// - Thread: built on the control thread; read by the realtime thread; freed with the converter
///   that built it, or kept for the process by the stems' shared cache (Control, Stem.swift).
public struct SteadyRows: @unchecked Sendable {
  /// The ratio as output frames L per input frames M, in lowest terms.
  public let outputStep: Int
  public let inputStep: Int
  /// The ratio L / M, and the same ratio as the caller computes it (engine rate / file rate).
  let ratio: Double
  let ratioAsGiven: Double
  /// Input frames on each side of the centre, and the row length rounded up to SIMD8 groups.
  let width: Int
  let padded: Int
  /// Whole input frames and phases (1/L) the read position moves per output frame.
  let frameStep: Int
  let phaseStep: Int
  let rows: UnsafeMutablePointer<Float>

  /// Rows above this many coefficients (L × padded) are not worth their memory: such ratios use
  /// the general path. 44.1 → 48 kHz needs 160 × 40, 48 → 44.1 kHz 147 × 48, 22.05 → 48 kHz 320 × 40.
  static let maximumCoefficients = 65_536

  /// The rows for converting `input` Hz to `output` Hz, or nil when the rates are equal, not
  /// positive, or their ratio needs too many rows. `reach` is the converter's (it bounds the
  /// width of a ratio below 1).
  public init?(output: Int, input: Int, reach: Int) {
    guard output > 0, input > 0, output != input else { return nil }
    var a = output, b = input
    while b != 0 { (a, b) = (b, a % b) }
    let l = output / a, m = input / a
    let r = Double(l) / Double(m)
    // Below ratio 1 the filter widens to 20 / r zero crossings a side; rounded up to whole SIMD
    // groups (the taps added are the prototype's zeros) when the buffer's reach allows, so no
    // group is partial.
    let needed = Int(Double(SincTable.halfTaps) / r) + 1
    let width = r >= 1 ? SincTable.halfTaps : Swift.min(reach - 1, (needed + 3) & ~3)
    let padded = SincResampler.padded(2 * width)
    guard l * padded <= Self.maximumCoefficients else { return nil }
    outputStep = l
    inputStep = m
    ratio = r
    ratioAsGiven = Double(output) / Double(input)
    self.width = width
    self.padded = padded
    frameStep = m / l
    phaseStep = m % l
    rows = .allocate(capacity: l * padded)
    // Below ratio 1 the cut-off falls to the output's Nyquist frequency: r·h(r·u), as the general
    // path's widened filter. At or above it each row sums to 1, as `SincTable`'s rows (DC exact).
    let scale = Swift.min(1, r)
    for p in 0..<l {
      let phi = Double(p) / Double(l)
      var values = [Double](repeating: 0, count: 2 * width)
      for k in 0..<(2 * width) { values[k] = Self.tap(k - width + 1, phi, scale) }
      let sum = r >= 1 ? values.reduce(0, +) : 1 / r
      let row = rows + p * padded
      for k in 0..<padded { row[k] = k < 2 * width ? Float(values[k] / sum) : 0 }
    }
  }

  /// The prototype at input offset `k − phi`, its cut-off scaled by `scale` (≤ 1).
  static func tap(_ k: Int, _ phi: Double, _ scale: Double) -> Double {
    SincTable.prototype((Double(k) - phi) * scale)
  }

  /// Frees the rows (control thread; only rows no converter uses any more, and never the shared
  /// cache's).
  public func deallocate() { rows.deallocate() }

  /// The ratio as the caller computes it (output rate / input rate): what a caller that converts
  /// only at this ratio passes to `process` (the disk side's file-rate conversion).
  public var steadyRatio: Double { ratioAsGiven }

  /// Whether `ratio` is this steady ratio (as the caller computes it, or in lowest terms).
  @_noLocks @inline(__always)
  func holds(_ ratio: Double) -> Bool { ratio == ratioAsGiven || ratio == self.ratio }
}

extension SincResampler {
  /// Whether this processor runs steady mode's AVX2 and FMA loop (CPUID, and the kernel saves
  /// the AVX registers).
  public static func processorHasAVX2FMA() -> Bool { stemdeck_cpu_has_avx2_fma() != 0 }

  /// `process` in steady mode: the same contract, the ratio fixed at `steady`'s.
  @_noLocks
  mutating func processSteady(
    _ steady: SteadyRows, input: UnsafePointer<Float>, inputFrames: Int, output: UnsafeMutablePointer<Float>,
    outputFrames: Int, ratio: Double, endOfInput: Bool
  ) -> (used: Int, generated: Int) {
    var used = 0, generated = 0
    while generated < outputFrames {
      generated &+= steadyRun(steady, into: output + generated &* channels, frames: outputFrames &- generated)
      if generated == outputFrames || (inputEnd >= 0 && steadyFrame >= inputEnd) { break }  // done, or drained
      // Need more input.
      position = Double(steadyFrame) + Double(steadyPhase) / Double(steady.outputStep)
      steadyFrame &-= compact()
      if !refill(input: input, inputFrames: inputFrames, used: &used, endOfInput: endOfInput) { break }
    }
    lastRatio = ratio
    return (used, generated)
  }

  /// Makes up to `frames` output frames from the buffered input (fewer when it needs more input
  /// or the input has ended); returns how many.
  @_noLocks @inline(__always)
  mutating func steadyRun(_ steady: SteadyRows, into output: UnsafeMutablePointer<Float>, frames: Int) -> Int {
    let width = steady.width, l = steady.outputStep
    let end = inputEnd >= 0 ? inputEnd : Int.max
    if usesAVX2 {
      return RealtimeC.steadyStereoAVX2(
        rows: steady.rows, padded: steady.padded, count: 2 &* width, width: width, left: buffer,
        right: buffer + capacity, filled: filled, end: end, frames: frames, frameStep: steady.frameStep,
        phaseStep: steady.phaseStep, phases: l, output: output, frame: &steadyFrame, phase: &steadyPhase)
    }
    var made = 0
    while made < frames && steadyFrame < end && steadyFrame &+ width < filled {
      steadyDot(
        row: steady.rows + steadyPhase &* steady.padded, count: 2 &* width, padded: steady.padded,
        first: steadyFrame &- width &+ 1, into: output + made &* channels)
      made &+= 1
      steadyFrame &+= steady.frameStep
      steadyPhase &+= steady.phaseStep
      if steadyPhase >= l {
        steadyPhase &-= l
        steadyFrame &+= 1
      }
    }
    return made
  }

  /// Leaves steady mode for the general path at the same read position.
  @_noLocks
  mutating func leaveSteady() {
    inSteady = false
    guard let steady else { return }
    position = Double(steadyFrame) + Double(steadyPhase) / Double(steady.outputStep)
  }

  /// One output frame: `row` (`count` coefficients, zero up to `padded`) times the input frames
  /// from `first`, each coefficient group loaded once for every channel.
  @_noLocks @inline(__always)
  func steadyDot(row: UnsafeMutablePointer<Float>, count: Int, padded: Int, first: Int, into out: UnsafeMutablePointer<Float>) {
    let h = UnsafeRawPointer(row)
    let full = count & ~7
    if channels == 2 {
      let left = UnsafeRawPointer(buffer + first), right = UnsafeRawPointer(buffer + (capacity &+ first))
      var accLeft = SIMD8<Float>(), accRight = SIMD8<Float>()
      var k = 0
      while k < full {
        let c = h.loadUnaligned(fromByteOffset: k &* 4, as: SIMD8<Float>.self)
        accLeft += c * left.loadUnaligned(fromByteOffset: k &* 4, as: SIMD8<Float>.self)
        accRight += c * right.loadUnaligned(fromByteOffset: k &* 4, as: SIMD8<Float>.self)
        k &+= 8
      }
      if k < padded {
        // The last group reaches past the window: read only the frames inside it.
        let c = h.loadUnaligned(fromByteOffset: k &* 4, as: SIMD8<Float>.self)
        var l = SIMD8<Float>(), r = SIMD8<Float>()
        for i in 0..<(count &- k) {
          l[i] = left.load(fromByteOffset: (k &+ i) &* 4, as: Float.self)
          r[i] = right.load(fromByteOffset: (k &+ i) &* 4, as: Float.self)
        }
        accLeft += c * l
        accRight += c * r
      }
      // Both sums at once, as a tree: a sequential `sum()` of each cost a third of the frame.
      let left4 = accLeft.lowHalf + accLeft.highHalf, right4 = accRight.lowHalf + accRight.highHalf
      let pairs =
        SIMD4(lowHalf: left4.lowHalf, highHalf: right4.lowHalf)
        + SIMD4(lowHalf: left4.highHalf, highHalf: right4.highHalf)
      let sums = pairs.evenHalf + pairs.oddHalf
      out[0] = sums[0]
      out[1] = sums[1]
      return
    }
    for channel in 0..<channels {
      let x = UnsafeRawPointer(buffer + (channel &* capacity &+ first))
      var acc = SIMD8<Float>()
      var k = 0
      while k < padded {
        let c = h.loadUnaligned(fromByteOffset: k &* 4, as: SIMD8<Float>.self)
        var v = SIMD8<Float>()
        if k < full {
          v = x.loadUnaligned(fromByteOffset: k &* 4, as: SIMD8<Float>.self)
        } else {
          for i in 0..<(count &- k) { v[i] = x.load(fromByteOffset: (k &+ i) &* 4, as: Float.self) }
        }
        acc += c * v
        k &+= 8
      }
      out[channel] = acc.sum()
    }
  }
}
