import CStream
import Foundation
import StemdeckAudioFile
import StemdeckEngine
import StemdeckSession
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

// A normalised render's true-peak limiter: its box and the measuring passes that settle its gain
// and threshold (OfflineRenderer.render calls settleLimiter).
extension OfflineRenderer {
  /// The true-peak limiter of a render, boxed: `TruePeakLimiter` is ~Copyable.
  final class LimiterBox {
    var limiter: TruePeakLimiter
    init(_ limiter: consuming TruePeakLimiter) { self.limiter = limiter }
  }

  /// A measuring pass's true-peak meter, boxed (~Copyable, and filled from a closure).
  final class PeakBox {
    var meter = TruePeakMeter(channels: 2)
  }

  /// Finds the gain and the limiter threshold of a normalised render with a true-peak ceiling:
  /// renders the mix through the gain and the limiter (measuring, nothing written) and corrects
  /// the gain by the loudness the limiter took away (a secant step) and the threshold by any true
  /// peak still read over the ceiling, until the loudness is within 0.05 LU of the target and the
  /// true peak under the ceiling, in at most 5 passes. The true peak is the highest of three
  /// readings of the output: libebur128's, ITU-R BS.1770-4's reference interpolator and the
  /// limiter's own 8× detector (`TruePeakMeter`): a gain that moves under a peak can lift the
  /// waveform between samples a little over what the detector saw coming. When more gain no longer buys loudness (the ceiling holds
  /// it down: a steady tone, say) it stops and keeps the first gain that came as close.
  static func settleLimiter(
    session: Session, sessionPath: String, duration: Double?, from: Double?, sampleRate: Int, inputs feeds: InputFeeds,
    blockFrames: Int, target: Double, ceiling: Double, gain startGain: Double,
    progress: ((Double) -> Void)?, pass announce: ((Pass) -> Void)? = nil, cancelled: (() -> Bool)?
  ) throws(MixerError) -> (gain: Double, threshold: Double, passes: Int) {
    struct Trial { var gain: Double; var threshold: Double; var loudness: Loudness; var truePeak: Double }
    // Margins, dB: a first threshold a little under the ceiling, and what the written pass may
    // differ from the measuring ones (dither, the stems' order of summing).
    let margin = 0.03, slack = 0.005, tolerance = 0.05
    let maxPasses = 5
    var trials: [Trial] = []
    var gain = startGain
    var threshold = ceiling - margin
    for pass in 0..<maxPasses {
      let plan = try prepare(
        session: session, sessionPath: sessionPath, duration: duration, from: from, sampleRate: sampleRate, inputs: feeds)
      defer { plan.mixer.shutdown() }
      let meter = try LoudnessMeter(sampleRate: sampleRate)
      let peaks = PeakBox()
      let box = LimiterBox(
        TruePeakLimiter(sampleRate: sampleRate, ceiling: Decibels.toAmplitude(threshold), channels: 2, maxFrames: blockFrames))
      // Pass k fills half of what is left of this stage's share of the progress bar.
      let start = 1 - pow(0.5, Double(pass)), share = pow(0.5, Double(pass + 1))
      announce?(Pass("limiter pass \(pass + 1)", (0.5 + start / 4)...(0.5 + (start + share) / 4)))
      _ = try run(
        plan, limiter: box, blockFrames: blockFrames, gain: Float(Decibels.toAmplitude(gain)),
        progress: progress.map { p in { p(start + $0 * share) } }, warning: nil, cancelled: cancelled,
        interrupted: "interrupted: the render stopped while measuring; nothing was written"
      ) { interleaved, n throws(MixerError) in
        try meter.add(interleaved, frames: n)
        peaks.meter.add(interleaved, frames: n)
      }
      peaks.meter.finish()
      let loudness = meter.loudness
      let truePeak = Swift.max(loudness.truePeakDecibels, peaks.meter.decibels)
      trials.append(Trial(gain: gain, threshold: threshold, loudness: loudness, truePeak: truePeak))
      let peakFits = truePeak <= ceiling - slack
      let error = target - loudness.integrated
      if peakFits && abs(error) <= tolerance { return (gain, threshold, pass + 1) }
      if !peakFits { threshold -= truePeak - ceiling + 0.03 }
      var slope = 1.0
      if trials.count >= 2 {
        let a = trials[trials.count - 2], b = trials[trials.count - 1]
        // (Only between passes with the same threshold: a lower one takes loudness away too.)
        if b.gain != a.gain && b.threshold == a.threshold {
          slope = (b.loudness.integrated - a.loudness.integrated) / (b.gain - a.gain)
          // More gain bought (almost) no loudness: only more limiting.
          if error > tolerance && b.gain > a.gain && slope < 0.2 { break }
        }
      }
      gain += Swift.min(6, error / Swift.min(1, Swift.max(0.2, slope)))
    }
    let fitting = trials.filter { $0.truePeak <= ceiling - slack }
    let pool = fitting.isEmpty ? trials : fitting
    let closest = pool.map { abs(target - $0.loudness.integrated) }.min() ?? 0
    let chosen = pool.first { abs(target - $0.loudness.integrated) <= closest + tolerance } ?? trials[trials.count - 1]
    return (chosen.gain, chosen.threshold, trials.count)
  }
}
