import StemdeckAudioFile
import StemdeckSession
import StemdeckText

/// `analyze FILE…`: an audio file measured as it is, with no session and no mixer: EBU R 128
/// loudness and range over its channels, its true and sample peak, and how many of its samples
/// sit at (or past) its format's full scale. docs/render.md, *Analyze*.
///
/// Channels are weighted as libebur128's default map does (ITU-R BS.1770-4): one or two channels
/// are L and R at weight 1 (a mono file is one channel, not doubled); five are L, R, C, Ls, Rs;
/// six are L, R, C, LFE (left out), Ls, Rs; any further channel is left out of the loudness but
/// still counted in the peaks.
public struct FileAnalysis: Sendable, Equatable {
  /// The file as given.
  public var path: String
  public var info: SoundFileInfo
  /// Frames read (less than `info.frameCount` when the file ends before its header says).
  public var frames: Int
  public var loudness: Loudness
  /// Samples at or past the format's full scale: for integer PCM its largest code (±32767 for
  /// 16 bits, ±8388607 for 24) or its most negative one; for float and compressed files ±1.0.
  /// More than a few in a row mean the file was clipped.
  public var fullScaleSamples: Int
  /// NaN or infinite samples (a float file only): measured as silence, and said.
  public var nonFiniteSamples: Int

  public var seconds: Double { Double(frames) / Double(info.sampleRate) }

  /// The header's frame count when fewer frames could be read, else nil.
  public var truncated: Int? { frames < info.frameCount ? info.frameCount : nil }

  /// |x| at or above this is at full scale, as libsndfile's float conversion gives a file of
  /// `integerBits` (nil: float or compressed).
  static func fullScale(integerBits: Int?) -> Float {
    guard let bits = integerBits, bits < 32 else { return 1 }
    return 1 - 1 / Float(1 << (bits - 1))
  }

  /// Reads `path` to its end and measures it. `progress` gets the fraction read; `cancelled`
  /// is asked between blocks (an interrupted read throws). Errors name the file.
  public static func measure(
    path: String, progress: ((Double) -> Void)? = nil, cancelled: (() -> Bool)? = nil
  ) throws(MixerError) -> FileAnalysis {
    let file: SoundFile
    do { file = try SoundFile(readingFrom: path) } catch { throw MixerError(file: path, ControlText(error.reason)) }
    let info = file.info
    let meter = try LoudnessMeter(sampleRate: info.sampleRate, channels: info.channelCount)
    let threshold = fullScale(integerBits: info.integerBits)
    let blockFrames = 16384
    let samples = blockFrames * info.channelCount
    let buffer = UnsafeMutablePointer<Float>.allocate(capacity: samples)
    defer { buffer.deallocate() }
    var frames = 0, atFullScale = 0, nonFinite = 0
    var failure: MixerError?
    while failure == nil {
      if cancelled?() == true {
        failure = MixerError(
          file: path, "interrupted: the analysis stopped at \(NumberFormat.time(Double(frames) / Double(info.sampleRate)))")
        break
      }
      let n = file.readFrames(into: buffer, frameCount: blockFrames)
      if n <= 0 {
        if let reason = file.lastError, frames < info.frameCount {
          failure = MixerError(file: path, "cannot read past frame \(frames) of \(info.frameCount): \(reason)")
        }
        break
      }
      for i in 0..<(n * info.channelCount) {
        let x = buffer[i]
        if !x.isFinite {
          nonFinite += 1
          buffer[i] = 0
        } else if abs(x) >= threshold {
          atFullScale += 1
        }
      }
      do throws(MixerError) { try meter.add(buffer, frames: n) } catch { failure = error }
      frames += n
      progress?(info.frameCount > 0 ? min(1, Double(frames) / Double(info.frameCount)) : 0)
    }
    if let failure { throw failure }
    return FileAnalysis(
      path: path, info: info, frames: frames, loudness: meter.loudness, fullScaleSamples: atFullScale,
      nonFiniteSamples: nonFinite)
  }
}
