// Stereo width, mid/side (docs/architecture.md, *Strips*; README, *Width*). A stereo strip's
// left and right become mid M = (L+R)/2 and side S = (L−R)/2; the output is m·M ± s·S with
// s = width·m and m = √(2 / (1 + width²)): equal power for left and right that do not correlate
// (the power of m·M and s·S together is that of L and R), so narrowing a wide pad to mono or
// widening it keeps its loudness. A centred (correlated) source gains m: +3 dB at width 0,
// 0 dB at 1, −4 dB at 2. Width 1 is the identity and costs nothing (the strip skips it).
// As two coefficients: L' = a·L + b·R, R' = b·L + a·R with a = (m+s)/2, b = (m−s)/2.

/// A strip's width stage: its two coefficients, ramped like the fader's gains.
public struct StereoWidth: Sendable {
  @usableFromInline var direct: GainRamp
  @usableFromInline var cross: GainRamp
  /// The width the coefficients are heading for (a level change that leaves it is not a width
  /// change: its ramp runs on, and no coefficient is worked out again).
  @usableFromInline var width: Double = 1

  /// Width 1 (the identity); a change ramps over `rampFrames`.
  public init(rampFrames: Int) {
    direct = GainRamp(gain: 1, length: rampFrames)
    cross = GainRamp(gain: 0, length: rampFrames)
  }

  /// The coefficients (a, b) of `width` (0…2).
  @_noLocks
  public static func coefficients(width: Double) -> (direct: Float, cross: Float) {
    let w = Swift.max(0, width)
    let m = RealtimeC.pow(2 / (1 + w * w), 0.5)
    let s = w * m
    return (Float((m + s) * 0.5), Float((m - s) * 0.5))
  }

  /// Whether it changes nothing: at width 1 and not moving.
  public var isIdentity: Bool {
    @_noLocks get { !direct.isRamping && !cross.isRamping && direct.current == 1 && cross.current == 0 }
  }

  /// Moves to `width`: over `frames` (0: the usual ramp), or at once (`jump`).
  @_noLocks
  public mutating func set(width newWidth: Double, jump: Bool, frames: Int = 0) {
    if newWidth == width && !jump { return }
    width = newWidth
    let (a, b) = Self.coefficients(width: newWidth)
    if jump {
      direct.jump(to: a)
      cross.jump(to: b)
    } else if frames > 0 {
      direct.set(target: a, frames: frames)
      cross.set(target: b, frames: frames)
    } else {
      direct.set(target: a)
      cross.set(target: b)
    }
  }

  /// Applies the width to `count` interleaved (`stride` 2) or planar (`stride` 1, two planes)
  /// frames in place. Width 1 returns at once.
  @_noLocks
  public mutating func process(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, stride: Int, count: Int) {
    if isIdentity { return }
    let d = direct.advance(frames: count), c = cross.advance(frames: count)
    var a = d.start, b = c.start
    let endA = direct.current, endB = cross.current
    var i = 0, k = 0
    while i < count {
      let l = left[k], r = right[k]
      left[k] = a * l + b * r
      right[k] = b * l + a * r
      a = i &+ 1 < d.rampFrames ? a + d.step : (d.rampFrames > 0 ? endA : a)
      b = i &+ 1 < c.rampFrames ? b + c.step : (c.rampFrames > 0 ? endB : b)
      i &+= 1
      k &+= stride
    }
  }
}
