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
  /// Reads the whole file (at most `maxFrames` frames, and at most `maxBytes` of samples once
  /// folded) as interleaved floats, folded to at most two channels. For short files held in
  /// memory (sound effects). Files of more than two channels are read and folded a block at a
  /// time, so only the folded samples are ever held whole (a 64-channel file was read whole
  /// first: 2 GB for 10 s at 768 kHz).
  public func readAll(maxFrames: Int, maxBytes: Int = Int.max) throws(SoundFileError) -> (samples: [Float], channels: Int) {
    let channels = info.channelCount
    let outChannels = min(channels, 2)
    guard info.frameCount <= maxFrames else {
      throw SoundFileError(path: path, reason: "too long to hold in memory (\(info.frameCount) frames; at most \(maxFrames))")
    }
    let (bytes, overflow) = info.frameCount.multipliedReportingOverflow(by: outChannels * MemoryLayout<Float>.size)
    guard !overflow, bytes <= maxBytes else {
      throw SoundFileError(path: path, reason: "too large to hold in memory (\(overflow ? Int.max >> 20 : bytes >> 20) MB of samples at \(info.sampleRate) Hz; at most \(maxBytes >> 20) MB)")
    }
    try seek(toFrame: 0)
    var out = [Float](repeating: 0, count: info.frameCount * outChannels)
    if channels <= 2 {
      let got = out.withUnsafeMutableBufferPointer { readFrames(into: $0.baseAddress!, frameCount: info.frameCount) }
      guard got == info.frameCount else {
        throw SoundFileError(path: path, reason: "could read only \(max(0, got)) of \(info.frameCount) frames (truncated or corrupt)")
      }
      return (out, channels)
    }
    let block = 16384
    let raw = UnsafeMutablePointer<Float>.allocate(capacity: block * channels)
    defer { raw.deallocate() }
    var done = 0
    while done < info.frameCount {
      let want = min(block, info.frameCount - done)
      let got = readFrames(into: raw, frameCount: want)
      guard got == want else {
        throw SoundFileError(path: path, reason: "could read only \(done + max(0, got)) of \(info.frameCount) frames (truncated or corrupt)")
      }
      out.withUnsafeMutableBufferPointer { o in
        ChannelFold.foldToStereo(raw, frames: got, channels: channels, into: o.baseAddress! + 2 * done)
      }
      done += got
    }
    return (out, 2)
  }
}
