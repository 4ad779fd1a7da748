import StemdeckAudioFile
import StemdeckEngine
import StemdeckSession
#if canImport(Glibc)
import Glibc
#endif

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
  /// `from` (seconds) when given, else at the session's saved position. `cancelled` is asked
  /// before each block; when it says so the render stops (an error) and nothing is written over
  /// the output.
  public static func render(
    session: Session, sessionPath: String, outputPath: String, duration: Double?,
    from: Double? = nil, sampleRate: Int = 48000, blockFrames: Int = 1024,
    dither: Bool? = nil, progress: ((Double) -> Void)? = nil, warning: ((MutedStem) -> Void)? = nil,
    cancelled: (() -> Bool)? = nil
  ) throws(MixerError) -> Summary {
    guard let format = OutputFormat.forPath(outputPath) else {
      throw MixerError("\(printableText(outputPath)): unknown output format (use a .wav, .flac or .aiff file name)")
    }
    if dither == true && format.integerBits == nil {
      throw MixerError("--dither is for integer outputs (.flac, .aiff: 24-bit); \(printableText(outputPath)) is 32-bit float WAV, which needs none")
    }
    // TPDF dither: on by default for 16-bit output, on request for 24-bit (as mastering tools do).
    var ditherer = format.integerBits.flatMap { bits in (dither ?? (bits <= 16)) ? TPDFDither(bits: bits) : nil }
    try checkOutput(outputPath, session: session, sessionPath: sessionPath)
    guard (8000...384_000).contains(sampleRate) else {
      throw MixerError("sample rate must be between 8000 and 384000 Hz (got \(sampleRate))")
    }
    var session = session
    if let from {
      guard SettingRule.position.accepts(from) else {
        throw MixerError(SettingRule.position.refusal("--from", got: from))
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
    if duration != nil && totalFrames == 0 {
      throw MixerError("--duration \(NumberFormat.plain(seconds)) is shorter than one sample at \(sampleRate) Hz")
    }
    guard totalFrames > 0 else {
      let end = NumberFormat.time(mixer.duration ?? 0), at = NumberFormat.time(session.position)
      throw MixerError(from != nil
        ? "nothing to render: --from \(at) is at or past the session's end (\(end))"
        : "nothing to render: the session's saved position (\(at)) is at or past its end (\(end)); --from 0 renders from the start")
    }

    // The render goes to a new temporary file beside the output, renamed over it only once
    // complete: a failed render (disk full, size limit) leaves the previous file as it was.
    let folder = outputPath.contains("/") ? String(outputPath[..<outputPath.lastIndex(of: "/")!]) : "."
    let name = outputPath.split(separator: "/").last.map(String.init) ?? outputPath
    let keptMode = AtomicFile.regularFileMode(at: outputPath)
    var temporary = ""
    var renamed = false
    defer { if !temporary.isEmpty && !renamed { unlink(temporary) } }
    var peak = (0.0, 0.0), sum = (0.0, 0.0), clipped = 0
    var muted: [MutedStem] = []
    do {
      // A fresh random name, created exclusively (nothing planted there is followed).
      let candidate = (folder.isEmpty ? "" : folder) + "/" + AtomicFile.temporaryName(for: name)
      let writer: SoundFileWriter
      do {
        writer = try SoundFileWriter(path: candidate, format: format, sampleRate: sampleRate, channelCount: 2, exclusive: true)
      } catch {
        throw MixerError("\(printableText(outputPath)): cannot create a temporary file beside it: \(error.reason)")
      }
      temporary = candidate
      let left = UnsafeMutablePointer<Float>.allocate(capacity: blockFrames)
      let right = UnsafeMutablePointer<Float>.allocate(capacity: blockFrames)
      let interleaved = UnsafeMutablePointer<Float>.allocate(capacity: blockFrames * 2)
      defer { left.deallocate(); right.deallocate(); interleaved.deallocate() }

      try mixer.setStemMetering(false)
      // Bad samples are found by the disk reader, ahead of playback (as live): a stem is muted
      // before the next block, and before any sound when they lie in its first ring's worth.
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
      var lastProgress = -1
      while done < totalFrames {
        if let cancelled, cancelled() {
          throw MixerError("interrupted: the render stopped; a previous \(printableText(name)) is left as it was")
        }
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
        do { try writer.write(interleaved, frameCount: n) } catch { throw MixerError("\(printableText(outputPath)): \(error.reason) — the render stopped; a previous \(printableText(name)) is left as it was") }
        done += n
        if done % (blockFrames * 64) == 0 { _ = mixer.pump() }
        let percent = done * 100 / totalFrames
        if percent != lastProgress { lastProgress = percent; progress?(Double(done) / Double(totalFrames)) }
      }
      do { try writer.finish() } catch { throw MixerError("\(printableText(outputPath)): \(error.reason)") }
    }
    if let keptMode, chmod(temporary, keptMode) != 0 {
      throw MixerError("\(printableText(outputPath)): cannot set the permissions of the new file: \(String(cString: strerror(errno)))")
    }
    if rename(temporary, outputPath) != 0 {
      throw MixerError("\(printableText(outputPath)): cannot put the render in place: \(String(cString: strerror(errno)))")
    }
    renamed = true
    _ = mixer.pump()
    let underruns = mixer.stemStatuses().reduce(0) { $0 + $1.underruns }
    let frames = Double(totalFrames)
    return Summary(
      frames: totalFrames, sampleRate: sampleRate, start: session.position, peak: (peak.0, peak.1),
      rms: ((sum.0 / frames).squareRoot(), (sum.1 / frames).squareRoot()),
      clippedSamples: clipped, underruns: underruns, mutedStems: muted)
  }

  /// Refuses an output that is not a regular file or a new name (a folder, device, FIFO or
  /// socket) and one that is one of the render's own inputs (the same file as a stem's or an
  /// effect's audio, or the session file: compared by device and inode, so links count).
  static func checkOutput(_ outputPath: String, session: Session, sessionPath: String) throws(MixerError) {
    let shown = printableText(outputPath)
    var info = stat()
    if lstat(outputPath, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR {
      throw MixerError("\(shown): is a folder; give a file name for the render")
    }
    if let what = AtomicFile.specialFileKind(at: outputPath) {
      throw MixerError("\(shown): is \(what), not a regular file; a render writes only to a regular file or a new name")
    }
    guard stat(outputPath, &info) == 0 else { return }  // a new name (or a dangling link, replaced)
    func same(_ path: String) -> Bool {
      var other = stat()
      return stat(path, &other) == 0 && other.st_dev == info.st_dev && other.st_ino == info.st_ino
    }
    for stem in session.stems where same(SessionFile.resolve(file: stem.file, sessionPath: sessionPath)) {
      throw MixerError("\(shown): is the audio file of stem '\(printableText(stem.name))'; a render never writes over its own inputs (choose another --output)")
    }
    for effect in session.effects where same(SessionFile.resolve(file: effect.file, sessionPath: sessionPath)) {
      throw MixerError("\(shown): is the audio file of effect '\(printableText(effect.name))'; a render never writes over its own inputs (choose another --output)")
    }
    if same(sessionPath) {
      throw MixerError("\(shown): is the session file itself; choose another --output")
    }
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
