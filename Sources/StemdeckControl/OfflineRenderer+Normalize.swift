import StemdeckAudioFile
import StemdeckSession
import StemdeckText

// `render --normalize`: the target's checks, what a normalised render refuses to put in place,
// and an encoded file's figures (OfflineRenderer.render runs the passes; the limiter's are in
// OfflineRenderer+Limiter.swift).
extension OfflineRenderer {
  static func check(_ normalize: Normalize) throws(MixerError) {
    let t = Normalize.targetRange, c = Normalize.ceilingRange
    guard normalize.target.isFinite, t.contains(normalize.target) else {
      throw MixerError(
        "\(option: .normalize) must be an integrated loudness from \(NumberFormat.plain(t.lowerBound)) to \(NumberFormat.plain(t.upperBound)) LUFS, such as -14LUFS (got \(NumberFormat.plain(normalize.target)))"
      )
    }
    if let ceiling = normalize.truePeakCeiling {
      guard ceiling.isFinite, c.contains(ceiling) else {
        throw MixerError(
          "\(option: .truePeak) must be a ceiling from \(NumberFormat.plain(c.lowerBound)) to \(NumberFormat.plain(c.upperBound)) dBTP, such as -1dBTP (got \(NumberFormat.plain(ceiling)))"
        )
      }
    }
  }

  /// A normalised integer file is never put in place clipped (a gain without a ceiling, or a
  /// ceiling the limiter missed): the render is refused, and nothing is written. The same for
  /// `--stems` files (`stems`: their strips' names, in the files' order): the gain and the
  /// limiter follow the master's peaks, and a stem can be louder than the master (stems that
  /// partly cancel), so a stem file can clip where the master does not.
  static func refuseClipped(
    _ summary: Summary, normalization: Normalization?, format: OutputFormat, stems: [String] = []
  ) throws(MixerError) {
    guard let db = normalization?.gain, let bits = format.integerBits else { return }
    let gain = "\(db >= 0 ? "+" : "")\(NumberFormat.fixed(db, 2)) dB"
    if summary.clippedSamples > 0 {
      throw MixerError(
        "\(option: .normalize): the gain of \(gain) puts \(summary.clippedSamples) samples over full scale, which a \(bits)-bit file cannot hold: give a lower target or \(option: .truePeak) (e.g. -1dBTP); nothing was written"
      )
    }
    if let index = summary.stemClippedSamples.firstIndex(where: { $0 > 0 }), index < stems.count {
      throw MixerError(
        "\(option: .normalize): the gain of \(gain) (and the limiter, which follows the master's peaks, not each stem's) puts \(summary.stemClippedSamples[index]) samples of stem file '\(printableText(stems[index]))' over full scale, which a \(bits)-bit file cannot hold: give a lower target, or render to 32-bit float WAV, which holds levels over full scale; nothing was written"
      )
    }
  }

  /// The loudness figures of an encoded render, from the file decoded by libsndfile.
  static func measureEncoded(_ path: String, shownAs output: String) throws(MixerError) -> Loudness {
    let file: SoundFile
    do throws(SoundFileError) { file = try SoundFile(readingFrom: path) } catch {
      throw MixerError("\(printableText(output)): cannot read the encoded file back to measure its loudness: \(error.reason)")
    }
    let meter = try LoudnessMeter(sampleRate: file.info.sampleRate, channels: file.info.channelCount)
    let frames = 8192
    let buffer = UnsafeMutablePointer<Float>.allocate(capacity: frames * file.info.channelCount)
    defer { buffer.deallocate() }
    while true {
      let got = file.readFrames(into: buffer, frameCount: frames)
      if got <= 0 { break }
      try meter.add(buffer, frames: got)
    }
    if let why = file.lastError {
      throw MixerError("\(printableText(output)): cannot decode the encoded file to measure its loudness: \(why)")
    }
    return meter.loudness
  }
}
