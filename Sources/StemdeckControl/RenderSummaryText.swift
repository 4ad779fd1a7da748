import StemdeckSession
import StemdeckText

extension OfflineRenderer.Summary {
  /// The master's peak and RMS per channel and the clipped samples, as `render` and `analyze`
  /// print them: "peak L -1.2 dB, R -1.4 dB; RMS L -18.0 dB, R -18.3 dB; clipped samples 0". A
  /// level at or below −160 dB (silence) is "-inf", as every level (`NumberFormat.level`).
  public var levelsLine: String {
    func db(_ v: Double) -> String { NumberFormat.level(Decibels.fromAmplitude(v)) }
    return
      "peak L \(db(peak.left)) dB, R \(db(peak.right)) dB; RMS L \(db(rms.left)) dB, R \(db(rms.right)) dB; clipped samples \(clippedSamples)"
  }
}
