/// A parameter moving to a target over a time (`vol drums 0 over 4s`): linear, or exponential
/// (equal steps in dB, for gain). Evaluated once per block by the renderer; the block's gain
/// ramp or resampler ratio ramp interpolates within the block.
///
/// - Realtime: safe (one `pow` from libm per block for exponential glides, behind a waiver).
public struct Glide: Sendable, Equatable {
  public enum Curve: Int, Sendable { case linear = 0, exponential = 1 }
  public var from: Double
  public var to: Double
  public var totalFrames: Int
  public var doneFrames = 0
  public var curve: Curve
  /// False for the idle glide (nothing moving).
  public var isActive = true

  /// An idle glide.
  @_noLocks
  public init() {
    from = 0; to = 0; totalFrames = 1; curve = .linear; isActive = false
  }

  @_noLocks
  public init(from: Double, to: Double, frames: Int, curve: Curve) {
    self.from = from
    self.to = to
    totalFrames = Swift.max(1, frames)
    self.curve = curve
  }

  /// Silence for exponential gain glides: they move in dB between this and the end points.
  static let floorGain = 1e-4  // -80 dB

  public var isFinished: Bool { @_noLocks get { doneFrames >= totalFrames } }

  /// Advances by `frames` and returns the value reached.
  @_noLocks
  public mutating func advance(frames: Int) -> Double {
    doneFrames = Swift.min(totalFrames, doneFrames &+ frames)
    return value
  }

  /// The value at the current point (exactly `to` at the end).
  public var value: Double {
    @_noLocks get {
      if doneFrames >= totalFrames { return to }
      let t = Double(doneFrames) / Double(totalFrames)
      switch curve {
      case .linear:
        return from + (to - from) * t
      case .exponential:
        let a = Swift.max(from, Glide.floorGain), b = Swift.max(to, Glide.floorGain)
        return a * RealtimeC.pow(b / a, t)
      }
    }
  }
}
