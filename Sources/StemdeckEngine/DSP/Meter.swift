import Synchronization

/// One channel's published meter: linear amplitudes stored as `Float` bit patterns.
///
/// - Thread: written by the realtime thread (relaxed stores: each value stands alone);
///   read by the control thread at any time.
public struct MeterCell: ~Copyable, Sendable {
  /// Peak |sample| over the last meter window.
  let peakBits = Atomic<UInt32>(0)
  /// Mean square over the last meter window (the square root is taken on the reading side).
  let meanSquareBits = Atomic<UInt32>(0)
  /// Highest window peak seen recently; falls back to the current peak after `holdSeconds`.
  let holdBits = Atomic<UInt32>(0)
  /// Samples over full scale (|x| > 1) since the last reset.
  let clipCount = Atomic<Int>(0)

  public init() {}

  public var peak: Float { Float(bitPattern: peakBits.load(ordering: .relaxed)) }
  public var rms: Float { Float(bitPattern: meanSquareBits.load(ordering: .relaxed)).squareRoot() }
  public var hold: Float { Float(bitPattern: holdBits.load(ordering: .relaxed)) }
  public var clips: Int { clipCount.load(ordering: .relaxed) }
}

/// The published meters of a stem or of the master: up to two channels.
public struct MeterCells: ~Copyable, Sendable {
  public let left = MeterCell()
  public let right = MeterCell()
  /// Set by the control thread to ask the realtime thread to zero hold and clip counts.
  let resetRequests = Atomic<Int>(0)

  public init() {}

  /// Allocates and initializes cells on the heap (control thread).
  public static func allocate() -> UnsafeMutablePointer<MeterCells> {
    let p = UnsafeMutablePointer<MeterCells>.allocate(capacity: 1)
    p.initialize(to: MeterCells())
    return p
  }

  /// Asks the realtime side to clear peak hold and the clip count (control thread).
  public func requestReset() { resetRequests.add(1, ordering: .relaxed) }
}

/// Meter accumulation for one stereo (or mono) signal, owned by the realtime thread.
///
/// Each block adds its peak and sum of squares; when a window (`windowFrames`, 50 ms by default)
/// is complete the window's peak and RMS are published to a `MeterCells`. A full-scale sine reads
/// peak 1.0 (0 dBFS) and RMS 0.7071 (-3.01 dB).
public struct MeterAccumulator: Sendable {
  @usableFromInline var peak: (Float, Float) = (0, 0)
  @usableFromInline var sumSquares: (Double, Double) = (0, 0)
  @usableFromInline var hold: (Float, Float) = (0, 0)
  @usableFromInline var holdAge: Int = 0
  @usableFromInline var clips: (Int, Int) = (0, 0)
  @usableFromInline var frames: Int = 0
  @usableFromInline var seenResets: Int = 0
  public let windowFrames: Int
  public let holdFrames: Int

  public init(sampleRate: Double, windowSeconds: Double = 0.05, holdSeconds: Double = 3) {
    windowFrames = Swift.max(1, Int(sampleRate * windowSeconds))
    holdFrames = Swift.max(1, Int(sampleRate * holdSeconds))
  }

  /// Adds `count` frames of `left` (and `right`, or `left` again for mono) and publishes
  /// completed windows into `cells`.
  @_noLocks
  public mutating func accumulate(
    left: UnsafePointer<Float>, right: UnsafePointer<Float>, count: Int,
    into cells: UnsafePointer<MeterCells>
  ) {
    var done = 0
    while done < count {
      let n = Swift.min(count &- done, windowFrames &- frames)
      let l = Self.scan(left + done, n)
      let r = left == right ? l : Self.scan(right + done, n)
      peak.0 = Swift.max(peak.0, l.peak); peak.1 = Swift.max(peak.1, r.peak)
      sumSquares.0 += Double(l.sumSquares); sumSquares.1 += Double(r.sumSquares)
      clips.0 &+= l.clips; clips.1 &+= r.clips
      frames &+= n
      done &+= n
      if frames >= windowFrames { publish(into: cells) }
    }
  }

  /// Adds one already-scanned stretch of `frames` frames (at most one window long).
  @_noLocks
  public mutating func add(
    peak newPeak: (Float, Float), sumSquares newSums: (Float, Float), clips newClips: (Int, Int),
    frames count: Int, into cells: UnsafePointer<MeterCells>
  ) {
    peak.0 = Swift.max(peak.0, newPeak.0); peak.1 = Swift.max(peak.1, newPeak.1)
    sumSquares.0 += Double(newSums.0); sumSquares.1 += Double(newSums.1)
    clips.0 &+= newClips.0; clips.1 &+= newClips.1
    frames &+= count
    if frames >= windowFrames { publish(into: cells) }
  }

  /// Adds `count` frames of silence (the transport is paused).
  @_noLocks
  public mutating func accumulateSilence(count: Int, into cells: UnsafePointer<MeterCells>) {
    var done = 0
    while done < count {
      let n = Swift.min(count &- done, windowFrames &- frames)
      frames &+= n
      done &+= n
      if frames >= windowFrames { publish(into: cells) }
    }
  }

  @usableFromInline
  struct Scan { var peak: Float; var sumSquares: Float; var clips: Int }

  @inline(__always) @usableFromInline
  static func scan(_ p: UnsafePointer<Float>, _ n: Int) -> Scan {
    let s = scanChannel(p, count: n)
    return Scan(peak: s.peak, sumSquares: s.sumSquares, clips: s.clips)
  }

  @_noLocks
  mutating func publish(into cellsPointer: UnsafePointer<MeterCells>) {
    let cells = cellsPointer
    let resets = cells.pointee.resetRequests.load(ordering: .relaxed)
    if resets != seenResets {
      seenResets = resets
      hold = (0, 0); holdAge = 0
      cells.pointee.left.clipCount.store(0, ordering: .relaxed)
      cells.pointee.right.clipCount.store(0, ordering: .relaxed)
    }
    let n = Double(frames)
    let meanSquare0 = Float(sumSquares.0 / n)
    let meanSquare1 = Float(sumSquares.1 / n)
    // Peak hold: a new maximum restarts the hold time; after `holdFrames` without one, the
    // hold falls back to the current window's peak.
    holdAge &+= frames
    if holdAge >= holdFrames { hold = peak; holdAge = 0 }
    if peak.0 > hold.0 { hold.0 = peak.0; holdAge = 0 }
    if peak.1 > hold.1 { hold.1 = peak.1; holdAge = 0 }
    cells.pointee.left.peakBits.store(peak.0.bitPattern, ordering: .relaxed)
    cells.pointee.left.meanSquareBits.store(meanSquare0.bitPattern, ordering: .relaxed)
    cells.pointee.left.holdBits.store(hold.0.bitPattern, ordering: .relaxed)
    cells.pointee.right.peakBits.store(peak.1.bitPattern, ordering: .relaxed)
    cells.pointee.right.meanSquareBits.store(meanSquare1.bitPattern, ordering: .relaxed)
    cells.pointee.right.holdBits.store(hold.1.bitPattern, ordering: .relaxed)
    if clips.0 > 0 { cells.pointee.left.clipCount.add(clips.0, ordering: .relaxed) }
    if clips.1 > 0 { cells.pointee.right.clipCount.add(clips.1, ordering: .relaxed) }
    peak = (0, 0); sumSquares = (0, 0); clips = (0, 0); frames = 0
  }
}

/// Peak, sum of squares and over-threshold counts of one block, per output channel.
public struct BlockScan: Sendable {
  public var peak: (Float, Float)
  public var sumSquares: (Float, Float)
  public var clips: (Int, Int)
}

/// Scans `frames` frames of an interleaved mono or stereo block in SIMD lanes (one pass, no
/// per-sample branches). For mono both channels get the same peak and sum; clip counts use each
/// channel's threshold (|x| > threshold), so a post-fader count can be taken on the source with
/// threshold 1 / gain.
@_noLocks
public func scanBlock(
  _ source: UnsafePointer<Float>, frames: Int, channels: Int, clipThreshold: (Float, Float)
) -> BlockScan {
  let total = frames &* channels
  let raw = UnsafeRawPointer(source)
  var peak = SIMD8<Float>(repeating: 0)
  var sum = SIMD8<Float>(repeating: 0)
  var clipsA = SIMD8<Float>(repeating: 0)
  var clipsB = SIMD8<Float>(repeating: 0)
  // Stereo: lanes alternate L, R. Mono: every lane is the one channel, counted against both thresholds.
  let thresholdA =
    channels == 2
    ? SIMD8<Float>(
      clipThreshold.0, clipThreshold.1, clipThreshold.0, clipThreshold.1,
      clipThreshold.0, clipThreshold.1, clipThreshold.0, clipThreshold.1)
    : SIMD8<Float>(repeating: clipThreshold.0)
  let thresholdB = SIMD8<Float>(repeating: clipThreshold.1)
  let one = SIMD8<Float>(repeating: 1)
  let zero = SIMD8<Float>(repeating: 0)
  var i = 0
  while i &+ 8 <= total {
    let v = raw.loadUnaligned(fromByteOffset: i &* 4, as: SIMD8<Float>.self)
    let a = v.replacing(with: -v, where: v .< zero)
    peak.replace(with: a, where: a .> peak)
    sum += v * v
    i &+= 8
  }
  // Counting overs needs a second pass, made only when the block's peak crosses a threshold
  // (rare), so the common case is one cheap pass.
  let lowestThreshold = Swift.min(clipThreshold.0, clipThreshold.1)
  if peak.max() > lowestThreshold {
    var j = 0
    while j &+ 8 <= total {
      let v = raw.loadUnaligned(fromByteOffset: j &* 4, as: SIMD8<Float>.self)
      let a = v.replacing(with: -v, where: v .< zero)
      clipsA += zero.replacing(with: one, where: a .> thresholdA)
      if channels == 1 { clipsB += zero.replacing(with: one, where: a .> thresholdB) }
      j &+= 8
    }
  }
  var result = BlockScan(peak: (0, 0), sumSquares: (0, 0), clips: (0, 0))
  if channels == 2 {
    result.peak = (
      Swift.max(Swift.max(peak[0], peak[2]), Swift.max(peak[4], peak[6])),
      Swift.max(Swift.max(peak[1], peak[3]), Swift.max(peak[5], peak[7]))
    )
    result.sumSquares = (sum[0] + sum[2] + sum[4] + sum[6], sum[1] + sum[3] + sum[5] + sum[7])
    result.clips = (Int(clipsA[0] + clipsA[2] + clipsA[4] + clipsA[6]), Int(clipsA[1] + clipsA[3] + clipsA[5] + clipsA[7]))
  } else {
    let p = peak.max()
    let s = sum.sum()
    result.peak = (p, p)
    result.sumSquares = (s, s)
    result.clips = (Int(clipsA.sum()), Int(clipsB.sum()))
  }
  // The tail (fewer than 8 samples).
  while i < total {
    let x = source[i]
    let a = Swift.abs(x)
    let right = channels == 2 && (i & 1) == 1
    if channels == 1 || !right {
      result.peak.0 = Swift.max(result.peak.0, a); result.sumSquares.0 += x * x
      result.clips.0 &+= a > clipThreshold.0 ? 1 : 0
    }
    if channels == 1 || right {
      result.peak.1 = Swift.max(result.peak.1, a); result.sumSquares.1 += x * x
      result.clips.1 &+= a > clipThreshold.1 ? 1 : 0
    }
    i &+= 1
  }
  return result
}
