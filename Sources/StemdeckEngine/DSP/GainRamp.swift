/// A linear gain ramp: moves from the current gain to a target over a fixed number of frames,
/// restarting from wherever it is when the target changes (jack_mixer's smoothing, done per
/// sample). This is what keeps volume, pan, mute and solo changes free of clicks and zipper noise.
///
/// - Realtime: safe; plain arithmetic.
/// - Thread: owned by the realtime thread (it lives in a voice or the master bus).
public struct GainRamp: Sendable {
  public private(set) var current: Float
  public private(set) var target: Float
  @usableFromInline var step: Float = 0
  @usableFromInline var remaining: Int = 0
  /// Ramp length in frames for a full change.
  public var length: Int

  public init(gain: Float, length: Int) {
    current = gain
    target = gain
    self.length = Swift.max(1, length)
  }

  public var isRamping: Bool { @_noLocks get { remaining > 0 } }

  /// Starts moving toward `newTarget`.
  @_noLocks
  public mutating func set(target newTarget: Float) {
    target = newTarget
    if newTarget == current { remaining = 0; step = 0; return }
    remaining = length
    step = (newTarget - current) / Float(length)
  }

  /// Moves toward `newTarget` over exactly `frames` frames (glides step their ramps per block).
  @_noLocks
  public mutating func set(target newTarget: Float, frames: Int) {
    target = newTarget
    if newTarget == current || frames <= 0 { current = newTarget; remaining = 0; step = 0; return }
    remaining = frames
    step = (newTarget - current) / Float(frames)
  }

  /// Jumps to `gain` at once (used before a stem is audible).
  @_noLocks
  public mutating func jump(to gain: Float) {
    current = gain; target = gain; remaining = 0; step = 0
  }

  /// Advances the ramp by `frames`, returning the gain at the start and the per-frame step to use
  /// for those frames, and how many of them ramp (the rest stay at `target`). Loops apply it as
  /// `g = start; for i: out(g); g = i + 1 < rampFrames ? g + step : target`, so the frame after
  /// the ramp is exactly the target.
  @_noLocks
  public mutating func advance(frames: Int) -> (start: Float, step: Float, rampFrames: Int) {
    if remaining == 0 { return (current, 0, 0) }
    let n = Swift.min(frames, remaining)
    let start = current
    let s = step
    remaining &-= n
    if remaining == 0 { current = target; step = 0 } else { current += s * Float(n) }
    return (start, s, n)
  }
}
