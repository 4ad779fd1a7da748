/// Where each channel of a file with more than two channels sounds, when the file says so (its
/// channel map: a WAV's WAVE_FORMAT_EXTENSIBLE mask, a CAF or AIFF layout, as libsndfile reports
/// them) or its format fixes the order (FLAC; Ogg Vorbis and Opus use Vorbis's order).
public struct ChannelLayout: Sendable, Equatable {
  public enum Position: String, Sendable, Equatable {
    case left = "L", right = "R", center = "C", lfe = "LFE"
    case backLeft = "Lb", backRight = "Rb", backCenter = "Cb", sideLeft = "Ls", sideRight = "Rs"
    case leftOfCenter = "Lc", rightOfCenter = "Rc"
    case topCenter = "Tc", topFrontLeft = "Tfl", topFrontRight = "Tfr", topFrontCenter = "Tfc"
    case topBackLeft = "Tbl", topBackRight = "Tbr", topBackCenter = "Tbc"
  }

  public var positions: [Position]
  /// Where the layout comes from: "channel map" (the file's own) or "FLAC order", "Vorbis order".
  public var source: String

  public init(positions: [Position], source: String) {
    self.positions = positions
    self.source = source
  }

  /// The usual name ("5.1", "7.1", "quad"…), else the positions ("L R C Tc").
  public var name: String {
    let set = Set(positions.map(\.rawValue))
    let known: [(String, Set<String>)] = [
      ("3.0", ["L", "R", "C"]), ("quad", ["L", "R", "Lb", "Rb"]), ("quad", ["L", "R", "Ls", "Rs"]),
      ("5.0", ["L", "R", "C", "Lb", "Rb"]), ("5.0", ["L", "R", "C", "Ls", "Rs"]),
      ("5.1", ["L", "R", "C", "LFE", "Lb", "Rb"]), ("5.1", ["L", "R", "C", "LFE", "Ls", "Rs"]),
      ("6.1", ["L", "R", "C", "LFE", "Cb", "Ls", "Rs"]), ("7.1", ["L", "R", "C", "LFE", "Lb", "Rb", "Ls", "Rs"])
    ]
    if set.count == positions.count, let match = known.first(where: { $0.1 == set }) { return match.0 }
    return positions.map(\.rawValue).joined(separator: " ")
  }

  /// −3 dB: ITU-R BS.775's coefficient for the centre and each surround.
  public static let minus3dB: Float = 0.70710677

  /// The stereo downmix gains of a position (ITU-R BS.775-3 Table 2, 3/2 → 2/0: Lo = L + 0.7071·C
  /// + 0.7071·Ls, Ro = R + 0.7071·C + 0.7071·Rs; the LFE is left out). Back and side surrounds
  /// (7.1) both go to their side at −3 dB; a centre surround and the height channels go to both
  /// sides at −6 dB (−3 dB twice) or their side at −3 dB; left and right of centre count as left
  /// and right.
  public static func gains(_ p: Position) -> (left: Float, right: Float) {
    let a = minus3dB
    switch p {
    case .left, .leftOfCenter: return (1, 0)
    case .right, .rightOfCenter: return (0, 1)
    case .center: return (a, a)
    case .lfe: return (0, 0)
    case .backLeft, .sideLeft, .topFrontLeft, .topBackLeft: return (a, 0)
    case .backRight, .sideRight, .topFrontRight, .topBackRight: return (0, a)
    case .backCenter, .topCenter, .topFrontCenter, .topBackCenter: return (0.5, 0.5)
    }
  }

  /// From libsndfile's channel map (`SF_CHANNEL_MAP_*` values); nil when a channel has no place
  /// a downmix can use (invalid, mono in a multichannel file, Ambisonic B-format, repeated).
  public static func fromSndfileMap(_ map: [Int32]) -> ChannelLayout? {
    // The order of libsndfile's enum (sndfile.h): INVALID, MONO, LEFT, RIGHT, CENTER, FRONT_LEFT,
    // FRONT_RIGHT, FRONT_CENTER, REAR_CENTER, REAR_LEFT, REAR_RIGHT, LFE, FRONT_LEFT_OF_CENTER,
    // FRONT_RIGHT_OF_CENTER, SIDE_LEFT, SIDE_RIGHT, TOP_CENTER, TOP_FRONT_LEFT, TOP_FRONT_RIGHT,
    // TOP_FRONT_CENTER, TOP_REAR_LEFT, TOP_REAR_RIGHT, TOP_REAR_CENTER, AMBISONIC_B_W…
    let table: [Position?] = [
      nil, nil, .left, .right, .center, .left, .right, .center, .backCenter, .backLeft, .backRight, .lfe,
      .leftOfCenter, .rightOfCenter, .sideLeft, .sideRight, .topCenter, .topFrontLeft, .topFrontRight,
      .topFrontCenter, .topBackLeft, .topBackRight, .topBackCenter
    ]
    var positions: [Position] = []
    for code in map {
      guard code >= 0, Int(code) < table.count, let p = table[Int(code)] else { return nil }
      positions.append(p)
    }
    guard Set(positions.map(\.rawValue)).count == positions.count else { return nil }
    return ChannelLayout(positions: positions, source: "channel map")
  }

  /// The channel order a format fixes for 3 to 8 channels: FLAC's (its format specification,
  /// the same as WAVE's default mask order), or Vorbis's (Vorbis I specification §4.3.9; Ogg Opus,
  /// mapping family 1, uses it too). nil for other formats and counts.
  public static func formatOrder(flac: Bool, channels: Int) -> ChannelLayout? {
    let order: [[Position]]
    if flac {
      order = [
        [.left, .right, .center], [.left, .right, .backLeft, .backRight],
        [.left, .right, .center, .backLeft, .backRight], [.left, .right, .center, .lfe, .backLeft, .backRight],
        [.left, .right, .center, .lfe, .backCenter, .sideLeft, .sideRight],
        [.left, .right, .center, .lfe, .backLeft, .backRight, .sideLeft, .sideRight]
      ]
    } else {
      order = [
        [.left, .center, .right], [.left, .right, .backLeft, .backRight],
        [.left, .center, .right, .backLeft, .backRight], [.left, .center, .right, .backLeft, .backRight, .lfe],
        [.left, .center, .right, .sideLeft, .sideRight, .backCenter, .lfe],
        [.left, .center, .right, .sideLeft, .sideRight, .backLeft, .backRight, .lfe]
      ]
    }
    guard (3...8).contains(channels) else { return nil }
    return ChannelLayout(positions: order[channels - 3], source: flac ? "FLAC order" : "Vorbis order")
  }
}

/// Folding of files with more than two channels to stereo. With a known layout: the ITU-R BS.775
/// downmix (`ChannelLayout.gains`). Without one (a plain WAV, an AIFF without a layout): the
/// channels are averaged, odd-numbered ones (1st, 3rd, …) into the left and even-numbered ones
/// into the right. Used by the disk reader and by whole-file loads (sound effects).
public struct StereoDownmix: Sendable, Equatable {
  /// Gains of each file channel into the left and the right.
  public var left: [Float]
  public var right: [Float]

  public init(channels: Int, layout: ChannelLayout?) {
    if let layout, layout.positions.count == channels {
      left = layout.positions.map { ChannelLayout.gains($0).left }
      right = layout.positions.map { ChannelLayout.gains($0).right }
    } else {
      let leftShare = 1 / Float((channels + 1) / 2), rightShare = 1 / Float(max(1, channels / 2))
      left = (0..<channels).map { $0 % 2 == 0 ? leftShare : 0 }
      right = (0..<channels).map { $0 % 2 == 1 ? rightShare : 0 }
    }
  }

  /// Downmixes `frames` interleaved frames of `left.count` channels into stereo `output`.
  public func apply(_ input: UnsafePointer<Float>, frames: Int, into output: UnsafeMutablePointer<Float>) {
    let channels = left.count
    left.withUnsafeBufferPointer { gl in
      right.withUnsafeBufferPointer { gr in
        for f in 0..<frames {
          var l: Float = 0, r: Float = 0
          let frame = input + f * channels
          for c in 0..<channels {
            l += frame[c] * gl[c]
            r += frame[c] * gr[c]
          }
          output[2 * f] = l
          output[2 * f + 1] = r
        }
      }
    }
  }
}

extension SoundFile {
  /// The limits `readAll` enforces, checked from the header alone (no sample is read): at most
  /// `maxFrames` frames and `maxBytes` of samples once downmixed to at most two channels.
  public func checkFits(maxFrames: Int, maxBytes: Int = Int.max) throws(SoundFileError) {
    let outChannels = min(info.channelCount, 2)
    guard info.frameCount <= maxFrames else {
      throw SoundFileError(path: path, reason: "too long to hold in memory (\(info.frameCount) frames; at most \(maxFrames))")
    }
    let (bytes, overflow) = info.frameCount.multipliedReportingOverflow(by: outChannels * MemoryLayout<Float>.size)
    guard !overflow, bytes <= maxBytes else {
      throw SoundFileError(
        path: path,
        reason:
          "too large to hold in memory (\(overflow ? Int.max >> 20 : bytes >> 20) MB of samples at \(info.sampleRate) Hz; at most \(maxBytes >> 20) MB)"
      )
    }
  }

  /// Reads the whole file (at most `maxFrames` frames, and at most `maxBytes` of samples once
  /// downmixed) as interleaved floats, downmixed to at most two channels by the file's layout
  /// (`StereoDownmix`). For short files held in memory (sound effects). Files of more than two
  /// channels are read and downmixed a block at a time, so only the downmixed samples are ever
  /// held whole (a 64-channel file was read whole first: 2 GB for 10 s at 768 kHz).
  ///
  /// `cancelled` is asked between blocks: when it says true the read stops with an error
  /// ("cancelled") and nothing read is kept.
  public func readAll(
    maxFrames: Int, maxBytes: Int = Int.max,
    cancelled: () -> Bool = { false }
  ) throws(SoundFileError) -> (samples: [Float], channels: Int) {
    let channels = info.channelCount
    let outChannels = min(channels, 2)
    try checkFits(maxFrames: maxFrames, maxBytes: maxBytes)
    try seek(toFrame: 0)
    var out = [Float](repeating: 0, count: info.frameCount * outChannels)
    if channels <= 2 {
      var done = 0
      while done < info.frameCount {
        if cancelled() { throw SoundFileError(path: path, reason: "cancelled") }
        let want = min(1 << 18, info.frameCount - done)
        let got = out.withUnsafeMutableBufferPointer { readFrames(into: $0.baseAddress! + done * channels, frameCount: want) }
        guard got == want else {
          throw SoundFileError(
            path: path, reason: "could read only \(done + max(0, got)) of \(info.frameCount) frames (truncated or corrupt)")
        }
        done += got
      }
      return (out, channels)
    }
    let block = 16384
    let downmix = StereoDownmix(channels: channels, layout: info.layout)
    let raw = UnsafeMutablePointer<Float>.allocate(capacity: block * channels)
    defer { raw.deallocate() }
    var done = 0
    while done < info.frameCount {
      if cancelled() { throw SoundFileError(path: path, reason: "cancelled") }
      let want = min(block, info.frameCount - done)
      let got = readFrames(into: raw, frameCount: want)
      guard got == want else {
        throw SoundFileError(
          path: path, reason: "could read only \(done + max(0, got)) of \(info.frameCount) frames (truncated or corrupt)")
      }
      out.withUnsafeMutableBufferPointer { o in downmix.apply(raw, frames: got, into: o.baseAddress! + 2 * done) }
      done += got
    }
    return (out, 2)
  }
}
