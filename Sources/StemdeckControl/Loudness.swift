import CEbur128
import Foundation
import StemdeckEngine
import StemdeckSession
import StemdeckText

/// EBU R 128 figures of a stereo signal, as libebur128 measures them (ITU-R BS.1770-4:
/// K-weighting, 400 ms blocks, the −70 LUFS absolute and −10 LU relative gates; true peak by
/// 4× oversampling at 48 kHz and below, 2× up to 96 kHz).
public struct Loudness: Sendable, Equatable {
  /// Integrated (programme) loudness in LUFS; −infinity when every block lies under the gates.
  public var integrated: Double
  /// Loudness range in LU (EBU Tech 3342).
  public var range: Double
  /// The largest true (inter-sample) peak of either channel, linear.
  public var truePeak: Double
  /// The largest |sample| of either channel, linear.
  public var samplePeak: Double

  /// In dB (−infinity for silence).
  public var truePeakDecibels: Double { truePeak > 0 ? Decibels.fromAmplitude(truePeak) : -.infinity }
  public var samplePeakDecibels: Double { samplePeak > 0 ? Decibels.fromAmplitude(samplePeak) : -.infinity }

  /// "−23.0 LUFS", "-inf LUFS" for silence (at or below −160, as every level: `NumberFormat.level`).
  public static func lufs(_ v: Double) -> String { db(v, "LUFS") }
  public static func db(_ v: Double, _ unit: String) -> String { NumberFormat.level(v) + " " + unit }

  /// The figures as lines, as `analyze` and `render --normalize` print them.
  public var lines: [String] {
    [
      "integrated loudness \(Self.lufs(integrated))",
      "loudness range \(NumberFormat.fixed(range, 1)) LU",
      "true peak \(Self.db(truePeakDecibels, "dBTP"))",
      "sample peak \(Self.db(samplePeakDecibels, "dBFS"))"
    ]
  }
}

/// An EBU R 128 meter over interleaved stereo float frames (libebur128). Control thread or
/// offline renders only: it allocates and is never handed to the realtime thread.
public final class LoudnessMeter {
  private let state: UnsafeMutablePointer<ebur128_state>
  public let channels: Int

  /// `histogram`: libebur128 keeps its blocks in a histogram (constant memory, figures to
  /// 0.1 LU) rather than every block: for meters that run for hours; renders keep every block.
  public init(sampleRate: Int, channels: Int = 2, histogram: Bool = false) throws(MixerError) {
    // I includes M (400 ms blocks), LRA includes S (3 s windows).
    var mode = Int32(EBUR128_MODE_I.rawValue | EBUR128_MODE_LRA.rawValue | EBUR128_MODE_TRUE_PEAK.rawValue)
    if histogram { mode |= Int32(EBUR128_MODE_HISTOGRAM.rawValue) }
    guard sampleRate > 0, channels > 0,
      let made = ebur128_init(UInt32(channels), UInt(sampleRate), mode)
    else {
      throw MixerError("the loudness meter (libebur128) cannot measure \(channels) channel(s) at \(sampleRate) Hz")
    }
    state = made
    self.channels = channels
  }

  deinit {
    var s: UnsafeMutablePointer<ebur128_state>? = state
    ebur128_destroy(&s)
  }

  /// Adds `frames` interleaved frames.
  public func add(_ interleaved: UnsafePointer<Float>, frames: Int) throws(MixerError) {
    guard frames > 0 else { return }
    let status = ebur128_add_frames_float(state, interleaved, frames)
    guard status == Int32(EBUR128_SUCCESS.rawValue) else {
      throw MixerError("the loudness meter (libebur128) failed with error \(status)")
    }
  }

  /// Adds interleaved frames from an array.
  public func add(_ interleaved: [Float]) throws(MixerError) {
    let frames = interleaved.count / channels
    var failure: MixerError?
    interleaved.withUnsafeBufferPointer { b in
      guard let base = b.baseAddress else { return }
      do throws(MixerError) { try add(base, frames: frames) } catch { failure = error }
    }
    if let failure { throw failure }
  }

  /// The figures over everything added so far.
  public var loudness: Loudness {
    var integrated = -Double.infinity, range = 0.0, truePeak = 0.0, samplePeak = 0.0
    if ebur128_loudness_global(state, &integrated) != Int32(EBUR128_SUCCESS.rawValue) || integrated.isNaN {
      integrated = -.infinity
    }
    if ebur128_loudness_range(state, &range) != Int32(EBUR128_SUCCESS.rawValue) || !range.isFinite { range = 0 }
    for c in 0..<channels {
      var t = 0.0, s = 0.0
      if ebur128_true_peak(state, UInt32(c), &t) == Int32(EBUR128_SUCCESS.rawValue) { truePeak = max(truePeak, t) }
      if ebur128_sample_peak(state, UInt32(c), &s) == Int32(EBUR128_SUCCESS.rawValue) { samplePeak = max(samplePeak, s) }
    }
    return Loudness(integrated: integrated, range: range, truePeak: truePeak, samplePeak: samplePeak)
  }

  /// Momentary loudness (the last 400 ms), LUFS; −infinity for silence or under 400 ms.
  public var momentary: Double { figure(ebur128_loudness_momentary) }
  /// Short-term loudness (the last 3 s), LUFS; −infinity for silence or in the first 3 s.
  public var shortTerm: Double { figure(ebur128_loudness_shortterm) }

  /// The mean K-weighted energy of the last `milliseconds` (at most 3000), channels summed as
  /// BS.1770 weighs them: the quantity momentary (400 ms) and short-term (3 s) loudness are the
  /// logarithm of. 0 for silence. `LoudnessSlices` sums 100 ms ones.
  public func energy(lastMilliseconds milliseconds: Int) -> Double {
    var v = -Double.infinity
    guard ebur128_loudness_window(state, UInt(milliseconds), &v) == Int32(EBUR128_SUCCESS.rawValue), v.isFinite else {
      return 0
    }
    // libebur128's loudness is 10 log10(energy) − 0.691 (BS.1770); undone here.
    return pow(10, (v + 0.691) / 10)
  }

  private func figure(_ f: (UnsafeMutablePointer<ebur128_state>?, UnsafeMutablePointer<Double>?) -> Int32) -> Double {
    var v = -Double.infinity
    if f(state, &v) != Int32(EBUR128_SUCCESS.rawValue) || v.isNaN || v < -200 { return -.infinity }
    return v
  }
}

/// The master's loudness as measured live (`meters master`, the control socket): EBU R 128
/// momentary, short-term and integrated loudness, range and true peak since the last reset.
public struct LiveLoudness: Sendable, Equatable {
  public var momentary: Double
  public var shortTerm: Double
  public var integrated: Double
  public var range: Double
  /// The largest true peak of either channel since the reset, linear.
  public var truePeak: Double
  /// Seconds of audio measured since the reset.
  public var seconds: Double
  /// Frames the meter missed because the control thread fell a second behind (gaps in the
  /// integration); 0 normally.
  public var droppedFrames: Int

  public var truePeakDecibels: Double { truePeak > 0 ? Decibels.fromAmplitude(truePeak) : -.infinity }

  /// One line: "M -18.2  S -18.5  I -19.0 LUFS  LRA 3.1 LU  TP -1.2 dBTP (0:42)".
  public var line: String {
    func l(_ v: Double) -> String { NumberFormat.level(v) }
    return
      "M \(l(momentary))  S \(l(shortTerm))  I \(l(integrated)) LUFS  LRA \(NumberFormat.fixed(range, 1)) LU  TP \(l(truePeakDecibels)) dBTP"
      + " (over \(NumberFormat.time(seconds)))" + (droppedFrames > 0 ? ", \(droppedFrames) frames missed" : "")
  }
}

/// Momentary and short-term loudness kept current 100 ms at a time (the live meter's
/// publications, LoudnessWorker.swift). libebur128 answers `momentary` and `shortTerm` by summing
/// the last 400 ms and 3 s of K-weighted audio on every call: five readings a second of both
/// cost it more than measuring the audio. Here the audio is fed to the meter in slices ending on
/// 100 ms boundaries, each slice's mean energy is asked for once (a sum over 100 ms), and the
/// two figures are the means of the last 4 and 30 slices: the same windows, so the same figures
/// (to rounding, `LoudnessTests`), as libebur128's at the last slice boundary. A slice not yet
/// measured counts as silence, as libebur128's zeroed history does.
struct LoudnessSlices {
  /// Frames in 100 ms; 0 when the rate is not a multiple of 10 Hz (libebur128's 100 ms would
  /// then be rounded): the figures are then asked of libebur128 directly.
  let sliceFrames: Int
  private var energies = [Double](repeating: 0, count: 30)
  private var next = 0
  private var intoSlice = 0

  init(sampleRate: Int) {
    sliceFrames = sampleRate % 10 == 0 ? sampleRate / 10 : 0
  }

  /// Feeds `frames` interleaved frames to `meter`, measuring each 100 ms slice they complete.
  mutating func add(_ interleaved: UnsafePointer<Float>, frames: Int, to meter: LoudnessMeter) throws(MixerError) {
    guard sliceFrames > 0 else { return try meter.add(interleaved, frames: frames) }
    var done = 0
    while done < frames {
      let n = min(frames - done, sliceFrames - intoSlice)
      try meter.add(interleaved + done * meter.channels, frames: n)
      done += n
      intoSlice += n
      if intoSlice == sliceFrames {
        intoSlice = 0
        energies[next] = meter.energy(lastMilliseconds: 100)
        next = (next + 1) % energies.count
      }
    }
  }

  /// Momentary loudness at the last slice boundary (the last 400 ms), as `LoudnessMeter.momentary`.
  func momentary(_ meter: LoudnessMeter) -> Double { sliceFrames > 0 ? loudness(ofLast: 4) : meter.momentary }
  /// Short-term loudness at the last slice boundary (the last 3 s), as `LoudnessMeter.shortTerm`.
  func shortTerm(_ meter: LoudnessMeter) -> Double { sliceFrames > 0 ? loudness(ofLast: 30) : meter.shortTerm }

  private func loudness(ofLast count: Int) -> Double {
    var sum = 0.0
    for i in 1...count { sum += energies[(next - i + energies.count) % energies.count] }
    let energy = sum / Double(count)
    guard energy > 0 else { return -.infinity }
    let v = 10 * log10(energy) - 0.691
    return v < -200 ? -.infinity : v
  }
}
