/// Conversions between linear gain and decibels, with AVAudioPlayer's -160 dB floor.
///
/// The realtime thread publishes meters as linear amplitudes; the control thread converts them
/// to decibels here, so no logarithm runs on the realtime path.
public enum Decibels {
  /// The floor reported for silence, as AVAudioPlayer's `peakPower(forChannel:)` does.
  public static let floor: Double = -160

  /// 20·log10(amplitude), clamped to `floor` (silence reads -160, never -inf or NaN).
  public static func fromAmplitude(_ amplitude: Double) -> Double {
    guard amplitude > 1e-8, amplitude.isFinite else { return amplitude.isFinite ? floor : 0 }
    return Swift.max(floor, 20 * log10Impl(amplitude))
  }

  /// The linear gain for `decibels` (anything at or below the floor gives 0).
  public static func toAmplitude(_ decibels: Double) -> Double {
    if decibels <= floor { return 0 }
    return pow10Impl(decibels / 20)
  }
}
