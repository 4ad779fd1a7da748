/// stemdeck's own band-limited resampler: a Kaiser-windowed sinc, polyphase, in single precision
/// with SIMD over the taps. It is the `fast` quality of varispeed and file-rate conversion.
///
/// Why not libsamplerate's `SRC_SINC_FASTEST`: that converter interpolates every coefficient in
/// double precision, one tap at a time, behind bounds checks; it took about 250 cycles per stereo
/// output frame here, 92 % of a varispeed stem's cost. This one precomputes the filter for
/// `phases` sub-sample positions, so a coefficient row is two vector loads and one multiply-add
/// per 8 taps, and the dot products run 8 taps at a time.
///
/// Quality, with the same budget as `SRC_SINC_FASTEST` (80 % of the input band flat, aliases
/// and images at least 97 dB down): 40 taps (`halfTaps` zero crossings a side), Kaiser β 10,
/// cut-off at the lower Nyquist frequency. `SincResamplerTests` measures both converters on the
/// same tones and checks that this one's worst residual over the tones is at least as low (within
/// 1 dB); tone by tone libsamplerate's is sometimes lower (README, Sound).
///
/// The interface copies `src_process`: the caller passes input frames and room for output, the
/// converter says how much of each it used; output is time-aligned with input (output frame 0 is
/// input frame 0); a changed ratio ramps linearly across the call's output; `endOfInput` flushes
/// the look-ahead with silence. Ratios below 1 (playing faster than the file's rate) lower the
/// cut-off to the output's Nyquist frequency and widen the filter to match, as libsamplerate does.
/// While such a ratio moves, its coefficients come from a one-sided table, one lookup per tap;
/// once it holds (a rate above 1, a 48 kHz file on a 44.1 kHz server) each converter builds that
/// ratio's own polyphase rows over a few calls and then runs as fast as the ratio ≥ 1 path per
/// tap (2.4× less CPU at rate 1.2 than the lookups).
///
/// - Thread: `SincTable` and `SincResampler.make` allocate (control thread); `process` and `reset`
///   are realtime code. The table is immutable once built and shared by every converter.
public struct SincTable: @unchecked Sendable {
  /// Zero crossings on each side of the centre tap.
  public static let halfTaps = 20
  /// Taps in one row: the interpolation case (ratio ≥ 1) uses exactly this many input frames.
  public static let taps = 2 * halfTaps
  /// Sub-sample positions the rows are computed for (linear interpolation in between).
  public static let phases = 256
  public static let kaiserBeta = 10.0

  /// `phases + 1` rows of `taps` coefficients followed by their differences to the next row:
  /// row p holds h(k − p/phases) for k = −halfTaps+1 … halfTaps, each row scaled to sum to 1.
  let rows: UnsafeMutablePointer<Float>
  /// One side of the prototype, h(j / phases) for j = 0 … halfTaps·phases (+1 guard), for the
  /// widened filter of ratios below 1.
  let half: UnsafeMutablePointer<Float>
  let halfCount: Int

  /// The one table every converter uses (built on first use, on a control thread).
  public static let shared = SincTable()

  init() {
    let z = Self.halfTaps, p = Self.phases, taps = Self.taps
    halfCount = z * p + 2
    half = .allocate(capacity: halfCount)
    for j in 0..<halfCount { half[j] = Float(Self.prototype(Double(j) / Double(p))) }
    rows = .allocate(capacity: (p + 1) * taps * 2)
    for row in 0...p {
      let phi = Double(row) / Double(p)
      var values = [Double](repeating: 0, count: taps)
      for k in 0..<taps { values[k] = Self.prototype(Double(k - z + 1) - phi) }
      // Each phase passes DC at exactly unity, so a constant input stays constant at any ratio.
      let sum = values.reduce(0, +)
      for k in 0..<taps { rows[row * taps * 2 + k] = Float(values[k] / sum) }
    }
    for row in 0...p {
      let next = Swift.min(row + 1, p)
      for k in 0..<taps {
        // Row p (phase 1) is row 0 moved by one tap; the last row's differences are never used
        // with a non-zero fraction.
        rows[row * taps * 2 + taps + k] = rows[next * taps * 2 + k] - rows[row * taps * 2 + k]
      }
    }
  }

  /// The windowed sinc at `u` input frames from the centre, for a cut-off at the input's Nyquist.
  static func prototype(_ u: Double) -> Double {
    let z = Double(halfTaps)
    if abs(u) >= z { return 0 }
    let x = u / z
    let window = besselI0(kaiserBeta * (1 - x * x).squareRoot()) / besselI0(kaiserBeta)
    if u == 0 { return window }
    let a = Double.pi * u
    return sinImpl(a) / a * window
  }

  /// Modified Bessel function of the first kind, order 0 (power series; converges fast for β ≤ 20).
  static func besselI0(_ x: Double) -> Double {
    var sum = 1.0, term = 1.0
    let q = x * x / 4
    var k = 1.0
    while term > sum * 1e-17 {
      term *= q / (k * k)
      sum += term
      k += 1
    }
    return sum
  }
}

/// One converter's state: planar history of its input, the read position, the last ratio.
public struct SincResampler {
  public let channels: Int
  /// Frames of input kept on each side of the read position at the smallest ratio allowed.
  let reach: Int
  /// Frames kept behind the read position when the buffer is compacted: `reach`, or more for a
  /// converter that hands over to zita's (whose filter is longer; Renderer/HeldConverter.swift).
  let keep: Int
  /// The smallest ratio the filter widens for; lower ratios alias a little rather than overrun.
  let minimumRatio: Double
  /// Planar input: channel c's frames at `buffer + c * capacity`.
  let buffer: UnsafeMutablePointer<Float>
  let capacity: Int
  /// Coefficients of the widened filter (ratio < 1), `2 * reach` of them.
  let scratch: UnsafeMutablePointer<Float>
  let table: SincTable
  /// The widened filter for one held ratio below 1, as polyphase rows like `SincTable.rows`
  /// (`phases + 1` rows of `widePadded` coefficients, then their differences), so a steady rate
  /// above 1 (or a file rate above the engine's) costs vector loads instead of a table lookup
  /// per tap. Built a few rows per call once the ratio holds still (`buildWideRows`); until it is
  /// complete, and while the ratio moves, the scalar path computes the same coefficients.
  let wide: UnsafeMutablePointer<Float>
  /// The ratio `wide` is (being) built for (0: none), its half-width, padded row length, and the
  /// rows built so far (`phases + 1` coefficient rows, then all difference rows: complete).
  var wideRatio: Double = 0
  var wideWidth = 0
  var widePadded = 0
  var wideRows = 0
  /// False: never use `wide` (tests compare the two paths).
  var usesWideTable = true
  /// Exact rows for the ratio a stem holds at rate 1 (its file rate to the engine's), or nil;
  /// steady mode (SincResampler+Steady.swift) runs from a reset while the ratio stays that one.
  let steady: SteadyRows?
  /// Whether `steady` was built for this converter (freed with it) or is shared (`steadyRows`).
  let ownsSteady: Bool
  /// In steady mode the read position is `steadyFrame` + `steadyPhase` / L, kept in integers
  /// (`position` is brought up to date whenever the mode is left or the buffer compacted).
  var inSteady = false
  /// Steady mode's stereo loop runs in C with AVX2 and FMA when the processor has them (the
  /// values differ from the SSE path's in the last bits: FMA rounds once). Tests and the
  /// benchmark turn it off to compare.
  public var usesAVX2: Bool
  var steadyFrame = 0
  var steadyPhase = 0
  /// Frames in `buffer` (valid input, or the silence before it / after the end).
  var filled = 0
  /// The next output frame's position in `buffer` frames.
  var position: Double = 0
  /// Where the real input ends once `endOfInput` has been seen (frames in `buffer`), else -1.
  var inputEnd = -1
  var lastRatio: Double = 0

  /// Frames of input a call takes at most before it produces output again.
  static let chunk = 1024

  /// A converter for `channels` interleaved channels whose ratio will not go below
  /// `minimumRatio` (lower ratios still work, with a narrower filter than ideal). Steady mode's
  /// rows: `steadyRows`, shared and immutable (built once for every converter of that ratio and
  /// `reach(minimumRatio:)`; not freed here), or built for this converter from `steadyRates`
  /// (output rate, input rate: the engine's and the file's). `keepBehind`: frames to keep behind
  /// the read position (at least `reach`), for a hand-over to another converter.
  public init(
    channels: Int, minimumRatio: Double, table: SincTable = .shared, steadyRates: (output: Int, input: Int)? = nil,
    steadyRows: SteadyRows? = nil, keepBehind: Int = 0
  ) {
    precondition(channels >= 1)
    self.channels = channels
    self.table = table
    self.minimumRatio = Self.clamped(minimumRatio: minimumRatio)
    let reach = Self.reach(minimumRatio: minimumRatio)
    self.reach = reach
    keep = Swift.max(reach, keepBehind)
    ownsSteady = steadyRows == nil && steadyRates != nil
    steady = steadyRows ?? steadyRates.flatMap { SteadyRows(output: $0.output, input: $0.input, reach: reach) }
    usesAVX2 = channels == 2 && Self.processorHasAVX2FMA()
    // Room for `keep` frames behind the position, a call's chunk ahead, and a hand-back's frames.
    capacity = reach + 2 * keep + Self.chunk + 8
    buffer = .allocate(capacity: capacity * channels)
    scratch = .allocate(capacity: 2 * reach + 8)
    // Pages of `wide` are touched only when a ratio below 1 holds (resident memory stays low).
    wide = .allocate(capacity: (SincTable.phases + 1) * 2 * Self.padded(2 * reach))
    reset()
  }

  /// Frees the buffers (control thread).
  public func deallocate() {
    buffer.deallocate()
    scratch.deallocate()
    wide.deallocate()
    if ownsSteady { steady?.rows.deallocate() }
  }

  /// The ratio the filter is widened for at the lowest: `minimumRatio` within 1/64 … 1.
  static func clamped(minimumRatio: Double) -> Double { Swift.min(1, Swift.max(minimumRatio, 1.0 / 64)) }

  /// Frames kept on each side of the read position by a converter made for `minimumRatio` (what
  /// steady rows are built for: `SteadyRows(output:input:reach:)`).
  public static func reach(minimumRatio: Double) -> Int {
    Int((Double(SincTable.halfTaps) / clamped(minimumRatio: minimumRatio)).rounded(.up)) + 1
  }

  /// `count` rounded up to whole SIMD8 groups.
  @_noLocks @inline(__always)
  static func padded(_ count: Int) -> Int { (count &+ 7) & ~7 }

  /// Coefficient rows of the widened table built per `process` call: about 3 µs of work, so a
  /// stem settling on a new rate spends no more per period than the scalar path it replaces; the
  /// table is complete after 2 · (phases + 1) / 32 ≈ 17 calls.
  static let wideRowsPerCall = 32

  /// Forgets all input: the next input frame is heard at output frame 0, after silence.
  @_noLocks
  public mutating func reset() {
    buffer.update(repeating: 0, count: capacity &* channels)
    filled = reach
    position = Double(reach)
    inputEnd = -1
    lastRatio = 0
    inSteady = steady != nil
    steadyFrame = reach
    steadyPhase = 0
  }

  /// Converts interleaved `input` into interleaved `output`; returns the input frames consumed
  /// and the output frames made. `ratio` is output rate / input rate.
  @_noLocks
  public mutating func process(
    input: UnsafePointer<Float>, inputFrames: Int, output: UnsafeMutablePointer<Float>, outputFrames: Int,
    ratio: Double, endOfInput: Bool
  ) -> (used: Int, generated: Int) {
    if !(ratio > 0) || outputFrames <= 0 { return (0, 0) }
    if lastRatio <= 0 { lastRatio = ratio }
    let startRatio = lastRatio
    if inSteady {
      if let steady, startRatio == ratio, steady.holds(ratio) {
        return processSteady(
          steady, input: input, inputFrames: inputFrames, output: output, outputFrames: outputFrames,
          ratio: ratio, endOfInput: endOfInput)
      }
      leaveSteady()
    }
    // A ratio below 1 that holds for a whole call gets its own table, built over a few calls.
    if usesWideTable && ratio < 1 && startRatio == ratio {
      let r = Swift.max(ratio, minimumRatio)
      if r != wideRatio {
        wideRatio = r
        wideWidth = halfWidth(ratio: r)
        widePadded = Self.padded(2 &* wideWidth)
        wideRows = 0
      }
      if wideRows < 2 &* (SincTable.phases &+ 1) { buildWideRows() }
    }
    var used = 0, generated = 0
    while generated < outputFrames {
      let r = startRatio + (ratio - startRatio) * Double(generated) / Double(outputFrames)
      let width = halfWidth(ratio: r)
      let centre = Int(position)
      if inputEnd >= 0 && position >= Double(inputEnd) { break }  // drained
      if centre &+ width < filled {
        render(
          at: centre, fraction: position - Double(centre), ratio: r, width: width,
          into: output + generated &* channels)
        generated &+= 1
        position += 1 / r
        continue
      }
      // Need more input: keep `reach` frames before the read position, move the rest down.
      compact()
      if !refill(input: input, inputFrames: inputFrames, used: &used, endOfInput: endOfInput) { break }
    }
    // Where the ramp got to: the next call continues from there.
    lastRatio =
      generated == outputFrames
      ? ratio
      : startRatio + (ratio - startRatio) * Double(generated) / Double(outputFrames)
    return (used, generated)
  }

  /// Builds the next `wideRowsPerCall` rows of `wide` for `wideRatio`: first the coefficient
  /// rows (phase 0 … 1), then the differences between neighbouring rows. Each coefficient is the
  /// one the scalar path computes for that phase, so switching between the paths is seamless.
  @_noLocks
  mutating func buildWideRows() {
    let phases = SincTable.phases
    let stride = 2 &* widePadded
    let count = 2 &* wideWidth
    let step = wideRatio * Double(phases)
    let limit = table.halfCount &- 2
    let gain = Float(wideRatio)
    var budget = Self.wideRowsPerCall
    while budget > 0 && wideRows < 2 &* (phases &+ 1) {
      if wideRows <= phases {
        let row = wide + wideRows &* stride
        let fraction = Double(wideRows) / Double(phases)
        var at = (Double(wideWidth &- 1) + fraction) * step
        for k in 0..<widePadded {
          var h: Float = 0
          let a = Swift.abs(at)
          let j = Int(a)
          if k < count && j <= limit {
            let t = Float(a - Double(j))
            h = (table.half[j] + t * (table.half[j &+ 1] - table.half[j])) * gain
          }
          row[k] = h
          at -= step
        }
      } else {
        let p = wideRows &- (phases &+ 1)
        let next = Swift.min(p &+ 1, phases)
        let row = wide + p &* stride
        let following = wide + next &* stride
        for k in 0..<widePadded { row[widePadded &+ k] = following[k] - row[k] }
      }
      wideRows &+= 1
      budget &-= 1
    }
  }

  /// Input frames used on each side of the centre at `ratio`.
  @_noLocks @inline(__always)
  func halfWidth(ratio: Double) -> Int {
    if ratio >= 1 { return SincTable.halfTaps }
    let r = Swift.max(ratio, minimumRatio)
    return Swift.min(reach &- 1, Int(Double(SincTable.halfTaps) / r) &+ 1)
  }

  /// Takes more of `input` into the buffer (from frame `used`, which it advances), or marks the
  /// end of the input with silence after it; false when neither is possible (the call is done).
  @_noLocks
  mutating func refill(input: UnsafePointer<Float>, inputFrames: Int, used: inout Int, endOfInput: Bool) -> Bool {
    if used < inputFrames {
      let n = Swift.min(inputFrames &- used, capacity &- filled)
      if n <= 0 { return false }
      append(input + used &* channels, frames: n)
      used &+= n
    } else if endOfInput && inputEnd < 0 {
      inputEnd = filled
      let n = Swift.min(reach &+ 1, capacity &- filled)
      for c in 0..<channels { (buffer + c &* capacity + filled).update(repeating: 0, count: n) }
      filled &+= n
    } else {
      return false
    }
    return true
  }

  /// Drops frames no longer needed: everything more than `keep` frames before the read position.
  /// Returns how many frames the buffer moved down by.
  @_noLocks @discardableResult
  mutating func compact() -> Int {
    let keepFrom = Int(position) &- keep
    if keepFrom <= 0 { return 0 }
    let keep = filled &- keepFrom
    for c in 0..<channels {
      let base = buffer + c &* capacity
      UnsafeMutableRawPointer(base).copyMemory(from: UnsafeRawPointer(base + keepFrom), byteCount: keep &* 4)
    }
    filled = keep
    position -= Double(keepFrom)
    if inputEnd >= 0 { inputEnd &-= keepFrom }
    return keepFrom
  }

  /// Appends interleaved frames to the planar buffer.
  @_noLocks
  mutating func append(_ source: UnsafePointer<Float>, frames: Int) {
    if channels == 2 {
      let l = buffer + filled, r = buffer + (capacity &+ filled)
      for i in 0..<frames {
        l[i] = source[2 &* i]
        r[i] = source[2 &* i &+ 1]
      }
    } else {
      for c in 0..<channels {
        let d = buffer + (c &* capacity &+ filled)
        for i in 0..<frames { d[i] = source[i &* channels &+ c] }
      }
    }
    filled &+= frames
  }

  /// One output frame centred at buffer frame `centre` + `fraction`.
  @_noLocks @inline(__always)
  mutating func render(at centre: Int, fraction: Double, ratio: Double, width: Int, into out: UnsafeMutablePointer<Float>) {
    if ratio >= 1 {
      polyphaseDot(
        rows: table.rows, rowLength: SincTable.taps, count: SincTable.taps, fraction: fraction,
        first: centre &- SincTable.halfTaps &+ 1, into: out)
      return
    }
    renderWidened(at: centre, fraction: fraction, ratio: ratio, width: width, into: out)
  }

  /// One output frame from polyphase rows (`phases + 1` rows of `rowLength` coefficients, each
  /// followed by its differences to the next row): the rows around `fraction`, interpolated, times
  /// the `count` input frames from `first`; a last group past `count` reads only the frames inside.
  /// (`mutating` only so that it works in place: the converter is not copied per output frame.)
  @_noLocks @inline(__always)
  mutating func polyphaseDot(
    rows: UnsafeMutablePointer<Float>, rowLength: Int, count: Int, fraction: Double, first: Int,
    into out: UnsafeMutablePointer<Float>
  ) {
    let scaled = fraction * Double(SincTable.phases)
    let row = Swift.min(Int(scaled), SincTable.phases)
    let f = Float(scaled - Double(row))
    let coefficients = UnsafeRawPointer(rows + row &* rowLength &* 2)
    let full = count & ~7
    var c = 0
    while c < channels {
      let x = UnsafeRawPointer(buffer + (c &* capacity &+ first))
      var acc = SIMD8<Float>()
      var k = 0
      while k < rowLength {
        let h = coefficients.loadUnaligned(fromByteOffset: k &* 4, as: SIMD8<Float>.self)
        let d = coefficients.loadUnaligned(fromByteOffset: (rowLength &+ k) &* 4, as: SIMD8<Float>.self)
        var v = SIMD8<Float>()
        if k < full {
          v = x.loadUnaligned(fromByteOffset: k &* 4, as: SIMD8<Float>.self)
        } else {
          for i in 0..<(count &- k) { v[i] = x.load(fromByteOffset: (k &+ i) &* 4, as: Float.self) }
        }
        acc += (h + d * f) * v
        k &+= 8
      }
      out[c] = acc.sum()
      c &+= 1
    }
  }

  /// One output frame through the widened filter of a ratio below 1.
  @_noLocks @inline(never)
  mutating func renderWidened(at centre: Int, fraction: Double, ratio: Double, width: Int, into out: UnsafeMutablePointer<Float>) {
    let r = Swift.max(ratio, minimumRatio)
    let count = 2 &* width
    let first = centre &- width &+ 1
    if r == wideRatio && wideRows == 2 &* (SincTable.phases &+ 1) {
      // The held ratio's own polyphase rows (padded to whole SIMD groups with zeros).
      polyphaseDot(rows: wide, rowLength: widePadded, count: count, fraction: fraction, first: first, into: out)
      return
    }
    // Widened filter: h(r·u)·r at u = k − fraction, from the one-sided table.
    let step = r * Double(SincTable.phases)
    var at = (Double(width &- 1) + fraction) * step  // table position of the first tap (u < 0)
    let limit = table.halfCount &- 2
    let gain = Float(r)
    for k in 0..<count {
      let a = Swift.abs(at)
      let j = Int(a)
      var h: Float = 0
      if j <= limit {
        let t = Float(a - Double(j))
        h = table.half[j] + t * (table.half[j &+ 1] - table.half[j])
      }
      scratch[k] = h * gain
      at -= step
    }
    var padded = count
    while padded & 7 != 0 { scratch[padded] = 0; padded &+= 1 }
    var c = 0
    while c < channels {
      let x = buffer + (c &* capacity &+ first)
      var acc = SIMD8<Float>()
      var k = 0
      while k < padded {
        var v = SIMD8<Float>()
        // The last group may reach past the widened window: read only the frames inside it.
        let n = Swift.min(8, count &- k)
        if n == 8 {
          v = UnsafeRawPointer(x + k).loadUnaligned(as: SIMD8<Float>.self)
        } else {
          for i in 0..<n { v[i] = x[k &+ i] }
        }
        acc += UnsafeRawPointer(scratch + k).loadUnaligned(as: SIMD8<Float>.self) * v
        k &+= 8
      }
      out[c] = acc.sum()
      c &+= 1
    }
  }
}
