/// Pan and balance laws: the per-channel gains a stem contributes to the stereo master.
///
/// - Mono stems use a constant-power (sine/cosine) law: with θ = (pan + 1)·π/4,
///   left = cos θ, right = sin θ. Centre gives −3.01 dB on each side; hard left gives (1, 0).
///   Perceived loudness stays constant as the stem moves.
/// - Stereo stems use a balance law: pan 0 leaves both channels at unity; moving right
///   attenuates the left channel linearly to silence at +1 (and vice versa), so a centred stereo
///   stem passes through unchanged.
/// - Stems with more than two channels are downmixed to stereo by the disk reader before they reach
///   the mixer (see `StereoDownmix`), so they follow the balance law.
public enum PanLaw {
  /// `gains(pan:channelCount:)` for the realtime thread (glides). Same arithmetic, so the results
  /// are bit-identical to the control thread's.
  @_noLocks
  public static func realtimeGains(pan: Double, channelCount: Int) -> (left: Double, right: Double) {
    let p = Swift.min(1, Swift.max(-1, pan))
    if channelCount == 1 {
      let theta = (p + 1) * Double.pi / 4
      return (RealtimeC.cos(theta), RealtimeC.sin(theta))
    }
    return (Swift.min(1, 1 - p), Swift.min(1, 1 + p))
  }

  /// Gains (left, right) for a stem of `channelCount` (1 or 2) at `pan` in -1…1.
  public static func gains(pan: Double, channelCount: Int) -> (left: Double, right: Double) {
    let p = Swift.min(1, Swift.max(-1, pan))
    if channelCount == 1 {
      let theta = (p + 1) * Double.pi / 4
      return (cosImpl(theta), sinImpl(theta))
    }
    return (Swift.min(1, 1 - p), Swift.min(1, 1 + p))
  }
}
