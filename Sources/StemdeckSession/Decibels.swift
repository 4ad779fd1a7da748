import Foundation
import StemdeckText

/// Conversions between linear gain and decibels, with AVAudioPlayer's -160 dB floor: the one
/// place dB is converted, for the session format, the mixer's meters and the console alike.
///
/// The realtime thread publishes meters as linear amplitudes; the control thread converts them
/// to decibels here, so no logarithm runs on the realtime path.
public enum Decibels {
  /// The floor reported for silence, as AVAudioPlayer's `peakPower(forChannel:)` does. Levels at
  /// or below it are silence (gain 0).
  public static let floor: Double = -160

  /// 20·log10(amplitude), clamped to `floor` (silence reads -160, never -inf or NaN).
  public static func fromAmplitude(_ amplitude: Double) -> Double {
    guard amplitude > 1e-8, amplitude.isFinite else { return amplitude.isFinite ? floor : 0 }
    return Swift.max(floor, 20 * log10(amplitude))
  }

  /// Whether a level in dB is silence as stemdeck shows it with `decimals` decimals: at or below
  /// `floor` (−infinity included) once rounded to them, so that the floor is never shown as a
  /// number (−159.96 dB is not "-160.0"). The one rule for every level printed (the console's
  /// meters, `analyze`, the render summary, one decimal: `-inf`) or sent as JSON (the control
  /// socket, `--json`, pushes, two decimals: `null`).
  public static func isSilent(_ decibels: Double, decimals: Int = 1) -> Bool {
    if decibels <= floor { return true }
    var scale = 1.0
    for _ in 0..<max(0, decimals) { scale *= 10 }
    return (decibels * scale).rounded() / scale <= floor
  }

  /// The linear gain for `decibels` (anything at or below the floor gives 0).
  public static func toAmplitude(_ decibels: Double) -> Double {
    if decibels <= floor { return 0 }
    return pow(10, decibels / 20)
  }

  /// Reads a level written as decibels — `"-6dB"`, `"-6 dB"`, `"+3dB"`, `"0.5db"`, `"-inf dB"` —
  /// and returns its linear gain (0 for `-inf` or anything at or below the floor). Returns nil if
  /// `text` is not a dB level. The result may still be outside `SettingRule.volume`.
  public static func linearGain(text: String) -> Double? {
    var body = text.trimmingCharacters(in: .whitespaces)
    guard body.count > 2, body.lowercased().hasSuffix("db") else { return nil }
    body = String(body.dropLast(2)).trimmingCharacters(in: .whitespaces)
    let lowered = body.lowercased()
    if lowered == "-inf" || lowered == "-infinity" { return 0 }
    // Only plain decimal numbers: no hex, no "nan", no exponent surprises.
    var sawDigit = false
    var sawPoint = false
    for (offset, character) in body.enumerated() {
      switch character {
      case "+" where offset == 0, "-" where offset == 0: continue
      case "0"..."9": sawDigit = true
      case "." where !sawPoint: sawPoint = true
      default: return nil
      }
    }
    guard sawDigit, let decibels = Double(body), decibels.isFinite else { return nil }
    return toAmplitude(decibels)
  }

  /// The note added to a refused dB level, saying which gain it is: `, which is a gain of 2.239`.
  /// Rounded to 3 decimals unless that would look allowed (+6.0206dB is a gain of 2.0000036).
  public static func gainNote(_ gain: Double) -> String {
    let rounded = (gain * 1000).rounded() / 1000
    let shown = SettingRule.volume.accepts(rounded) ? gain : rounded
    return ", which is a gain of \(SessionRules.number(shown))"
  }
}

extension NumberFormat {
  /// A level in dB with `decimals` decimals ("-12.3"), or "-inf" at or below −160 dB as shown
  /// (`Decibels.isSilent`): how every level is printed, meters, `analyze` and the render summary.
  public static func level(_ decibels: Double, _ decimals: Int = 1) -> String {
    Decibels.isSilent(decibels, decimals: decimals) ? "-inf" : fixed(decibels, decimals)
  }
}
