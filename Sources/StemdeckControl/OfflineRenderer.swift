import StemdeckAudioFile
import StemdeckEngine
import StemdeckSession

/// Renders a session's master to a file through the same `renderBlock` the JACK client runs,
/// with the disk streams filled synchronously between blocks. This is the reference the live
/// output is compared against.
public enum OfflineRenderer {
  public struct Summary: Sendable {
    public var frames: Int
    public var sampleRate: Int
    public var seconds: Double { Double(frames) / Double(sampleRate) }
    /// The transport time the render started at, in seconds.
    public var start: Double
    /// Peak |sample| and RMS of each master channel over the whole render (linear).
    public var peak: (left: Double, right: Double)
    public var rms: (left: Double, right: Double)
    public var clippedSamples: Int
    public var underruns: Int
    /// Stems muted because their file holds NaN or infinite samples, in the order found.
    public var mutedStems: [MutedStem] = []
  }

  /// A stem the render muted: its file holds NaN or infinite samples (as live: muted as soon as
  /// the disk reader finds them, before they are heard, and reported).
  public struct MutedStem: Sendable, Equatable {
    public var name: String
    public var file: String
    /// The render time (seconds from the render's start) from which it is muted.
    public var at: Double
    public var message: String {
      "stem '\(name)' (\(file)) holds NaN or infinite samples: muted from \(NumberFormat.time(at)) of the render"
    }
  }

  /// Renders `session` (stored at `sessionPath`) for `duration` seconds, or the longest finite
  /// stem when nil, into `outputPath` (format from its extension). It starts at transport time
  /// `from` (seconds) when given, else at the session's saved position.
  public static func render(
    session: Session, sessionPath: String, outputPath: String, duration: Double?,
    from: Double? = nil, sampleRate: Int = 48000, blockFrames: Int = 1024,
    dither: Bool? = nil, progress: ((Double) -> Void)? = nil, warning: ((MutedStem) -> Void)? = nil
  ) throws(MixerError) -> Summary {
    guard let format = OutputFormat.forPath(outputPath) else {
      throw MixerError("\(outputPath): unknown output format (use a .wav, .flac or .aiff file name)")
    }
    if dither == true && format.integerBits == nil {
      throw MixerError("--dither is for integer outputs (.flac, .aiff: 24-bit); \(outputPath) is 32-bit float WAV, which needs none")
    }
    // TPDF dither: on by default for 16-bit output, on request for 24-bit (as mastering tools do).
    var ditherer = format.integerBits.flatMap { bits in (dither ?? (bits <= 16)) ? TPDFDither(bits: bits) : nil }
    guard (8000...384_000).contains(sampleRate) else {
      throw MixerError("sample rate must be between 8000 and 384000 Hz (got \(sampleRate))")
    }
    var session = session
    if let from {
      guard from.isFinite, SettingRange.position.contains(from) else {
        throw MixerError("--from must be a time from 0 to \(NumberFormat.plain(SettingRange.position.upperBound)) seconds (got \(NumberFormat.plain(from)))")
      }
      session.position = from
    }
    let mixer = Mixer(sampleRate: Double(sampleRate), quality: session.quality, streaming: .synchronous)
    defer { mixer.shutdown() }
    try mixer.load(session, sessionPath: sessionPath, strict: true)
    let seconds: Double
    if let d = duration {
      guard d.isFinite, d > 0, d <= 24 * 3600 else {
        throw MixerError("--duration must be a number of seconds above 0 and at most 86400 (got \(NumberFormat.plain(d)))")
      }
      seconds = d
    } else {
      if mixer.hasEndlessStems {
        throw MixerError("\(sessionPath): a stem loops forever (loops -1), so the render needs --duration SECONDS")
      }
      guard let d = mixer.duration else { throw MixerError("\(sessionPath): the session has no stems to render") }
      seconds = d - session.position
    }
    let totalFrames = Int((seconds * Double(sampleRate)).rounded())
    guard totalFrames > 0 else {
      let end = NumberFormat.time(mixer.duration ?? 0), at = NumberFormat.time(session.position)
      throw MixerError(from != nil
        ? "nothing to render: --from \(at) is at or past the session's end (\(end))"
        : "nothing to render: the session's saved position (\(at)) is at or past its end (\(end)); --from 0 renders from the start")
    }

    let writer: SoundFileWriter
    do { writer = try SoundFileWriter(path: outputPath, format: format, sampleRate: sampleRate, channelCount: 2) } catch {
      throw MixerError("\(error)")
    }
    let left = UnsafeMutablePointer<Float>.allocate(capacity: blockFrames)
    let right = UnsafeMutablePointer<Float>.allocate(capacity: blockFrames)
    let interleaved = UnsafeMutablePointer<Float>.allocate(capacity: blockFrames * 2)
    defer { left.deallocate(); right.deallocate(); interleaved.deallocate() }

    try mixer.setStemMetering(false)
    // Bad samples are found by the disk reader, ahead of playback (as live): a stem is muted
    // before the next block, and before any sound when they lie in its first ring's worth.
    var muted: [MutedStem] = []
    func muteBadStems(at frame: Int) {
      for case .badSamples(let name) in mixer.pump() {
        let file = session.stems.first { $0.name == name }?.file ?? name
        let stem = MutedStem(name: name, file: file, at: Double(frame) / Double(sampleRate))
        muted.append(stem)
        warning?(stem)
      }
    }
    mixer.fillStreams()
    muteBadStems(at: 0)
    try mixer.play()
    var done = 0
    var peak = (0.0, 0.0), sum = (0.0, 0.0), clipped = 0
    var lastProgress = -1
    while done < totalFrames {
      let n = min(blockFrames, totalFrames - done)
      mixer.fillStreams()
      if mixer.hasUnreportedBadSamples { muteBadStems(at: done) }
      renderBlock(mixer.renderState, left: left, right: right, frameCount: n)
      for i in 0..<n {
        let l = left[i], r = right[i]
        interleaved[2 * i] = l
        interleaved[2 * i + 1] = r
        let al = Double(abs(l)), ar = Double(abs(r))
        peak.0 = max(peak.0, al); peak.1 = max(peak.1, ar)
        sum.0 += al * al; sum.1 += ar * ar
        if al > 1 { clipped += 1 }
        if ar > 1 { clipped += 1 }
      }
      ditherer?.apply(interleaved, count: 2 * n)
      do { try writer.write(interleaved, frameCount: n) } catch { throw MixerError("\(error)") }
      done += n
      if done % (blockFrames * 64) == 0 { _ = mixer.pump() }
      let percent = done * 100 / totalFrames
      if percent != lastProgress { lastProgress = percent; progress?(Double(done) / Double(totalFrames)) }
    }
    _ = mixer.pump()
    let underruns = mixer.stemStatuses().reduce(0) { $0 + $1.underruns }
    let frames = Double(totalFrames)
    return Summary(
      frames: totalFrames, sampleRate: sampleRate, start: session.position, peak: (peak.0, peak.1),
      rms: ((sum.0 / frames).squareRoot(), (sum.1 / frames).squareRoot()),
      clippedSamples: clipped, underruns: underruns, mutedStems: muted)
  }
}

/// TPDF dither for an integer output of `bits` bits: triangular noise of ±1 LSB (the sum of two
/// independent uniform values of ±½ LSB) is added before rounding to the output's step, which
/// makes the rounding error independent of the signal (noise of 0.5 LSB RMS in all, instead of
/// distortion, and signals below ½ LSB are kept instead of rounded to silence). The rounding is
/// done here, to integers that libsndfile writes back unchanged (it scales floats by 2^(bits−1) − 1,
/// sndfile's float→int conversion). A fixed seed: the same render writes the same file.
struct TPDFDither {
  let scale: Double
  let largest: Double
  var state: UInt64 = 0x9E37_79B9_7F4A_7C15

  init(bits: Int) {
    scale = Double((1 << (bits - 1)) - 1)
    largest = Double(1 << (bits - 1))
  }

  /// A uniform value in [0, 1) (xorshift64*).
  mutating func uniform() -> Double {
    state ^= state >> 12
    state ^= state << 25
    state ^= state >> 27
    return Double((state &* 0x2545_F491_4F6C_DD1D) >> 11) / Double(1 << 53)
  }

  mutating func apply(_ samples: UnsafeMutablePointer<Float>, count: Int) {
    for i in 0..<count {
      let noise = uniform() - uniform()  // triangular on (−1, 1) LSB
      let q = (Double(samples[i]) * scale + noise).rounded()
      samples[i] = Float(Swift.min(largest - 1, Swift.max(-largest, q)) / scale)
    }
  }
}
