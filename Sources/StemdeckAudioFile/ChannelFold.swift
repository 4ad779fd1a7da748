/// Folding of files with more than two channels to stereo: even-numbered channels (1st, 3rd, …)
/// are averaged into the left, odd-numbered ones into the right. Used by the disk reader and by
/// whole-file loads (sound effects).
public enum ChannelFold {
  /// Folds `frames` interleaved frames of `channels` (> 2) channels into stereo `output`.
  public static func foldToStereo(
    _ input: UnsafePointer<Float>, frames: Int, channels: Int, into output: UnsafeMutablePointer<Float>
  ) {
    let leftCount = Float((channels + 1) / 2)
    let rightCount = Float(channels / 2)
    for f in 0..<frames {
      var l: Float = 0, r: Float = 0
      let frame = input + f * channels
      for c in 0..<channels {
        if c % 2 == 0 { l += frame[c] } else { r += frame[c] }
      }
      output[2 * f] = l / leftCount
      output[2 * f + 1] = r / rightCount
    }
  }
}

extension SoundFile {
  /// Reads the whole file (at most `maxFrames` frames) as interleaved floats, folded to at most
  /// two channels. For short files held in memory (sound effects).
  public func readAll(maxFrames: Int) throws(SoundFileError) -> (samples: [Float], channels: Int) {
    let channels = info.channelCount
    guard info.frameCount <= maxFrames else {
      throw SoundFileError(path: path, reason: "too long to hold in memory (\(info.frameCount) frames; at most \(maxFrames))")
    }
    try seek(toFrame: 0)
    var raw = [Float](repeating: 0, count: info.frameCount * channels)
    let got = raw.withUnsafeMutableBufferPointer { readFrames(into: $0.baseAddress!, frameCount: info.frameCount) }
    guard got == info.frameCount else {
      throw SoundFileError(path: path, reason: "could read only \(max(0, got)) of \(info.frameCount) frames (truncated or corrupt)")
    }
    if channels <= 2 { return (raw, channels) }
    var out = [Float](repeating: 0, count: got * 2)
    raw.withUnsafeBufferPointer { i in
      out.withUnsafeMutableBufferPointer { o in
        ChannelFold.foldToStereo(i.baseAddress!, frames: got, channels: channels, into: o.baseAddress!)
      }
    }
    return (out, 2)
  }
}
