import CStream
import StemdeckAudioFile
import StemdeckEngine
import StemdeckSession
import Foundation
import StemdeckText
import Synchronization
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
    /// `render --stems` with `--normalize` to an integer format: each stem file's samples over
    /// full scale (the gain follows the master's peaks, not each stem's), in the files' order.
    public var stemClippedSamples: [Int] = []
    /// `render --stems`: the stem files that were there already and were replaced (names in the folder).
    public var replacedStemFiles: [String] = []
    /// EBU R 128 figures of what was written (`render --normalize`; an Ogg Vorbis or Opus file
    /// decoded back and measured, since the codec changes the peaks) or measured (`analyze`).
    public var loudness: Loudness?
    /// `render --normalize`: the first pass's figures and the gain applied.
    public var normalization: Normalization?
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

  /// A pass over the mix, as the progress bar names it: `measuring` (the first pass of a
  /// normalised render, and `analyze`), `limiter pass N` (the true-peak limiter's measuring
  /// passes), `writing`. `span` is its share of the progress fraction.
  public struct Pass: Sendable, Equatable {
    public var name: String
    public var span: ClosedRange<Double>
    public init(_ name: String, _ span: ClosedRange<Double>) {
      self.name = name
      self.span = span
    }
  }

  /// `render --normalize`: the integrated loudness asked for, and optionally a true-peak ceiling.
  public struct Normalize: Sendable, Equatable {
    /// Target integrated loudness, LUFS (`targetRange`).
    public var target: Double
    /// The true peak the output must not exceed, dBTP (`ceilingRange`); nil: none.
    public var truePeakCeiling: Double?
    public static let targetRange: ClosedRange<Double> = -60...0
    public static let ceilingRange: ClosedRange<Double> = -30...0
    /// `render --normalize` without `--true-peak`: the ceiling a delivery gets unless one is asked
    /// for (−1 dBTP, EBU R 128's maximum true peak), so that a normalised integer
    /// file is never written clipped.
    public static let defaultCeiling: Double = -1

    public init(target: Double, truePeakCeiling: Double? = nil) {
      self.target = target
      self.truePeakCeiling = truePeakCeiling
    }
  }

  /// What a normalised render measured and did.
  public struct Normalization: Sendable, Equatable {
    public var asked: Normalize
    /// The mix before the gain (first pass).
    public var measured: Loudness
    /// The gain applied, dB (before the limiter, when there is one).
    public var gain: Double
    /// What the true-peak limiter did; nil when the gain alone keeps the true peak at or under
    /// the ceiling (or none was asked), and the limiter was not used.
    public var limiter: Limiting?
  }

  /// `render --normalize --true-peak`: the look-ahead true-peak limiter (StemdeckEngine's
  /// `DSP/TruePeakLimiter.swift`) that lets the gain reach the target while the true peak stays
  /// at or under the ceiling.
  public struct Limiting: Sendable, Equatable {
    /// The largest gain reduction, dB (0 or more).
    public var maxReduction: Double
    /// Seconds of output with more than 0.1 dB of gain reduction.
    public var seconds: Double
    /// Measuring passes (the mix through the gain and the limiter, nothing written) before the
    /// written one: each corrects the gain for the loudness the limiter took away, and the
    /// detector's threshold for any true peak libebur128 still finds over the ceiling.
    public var passes: Int
    /// The detector's threshold, dBTP: the ceiling or a little under it.
    public var threshold: Double
  }

  /// Renders `session` (stored at `sessionPath`) for `duration` seconds, or the longest finite
  /// stem when nil, into `outputPath` (format from its extension). It starts at transport time
  /// `from` (seconds) when given, else at the session's saved position. `cancelled` is asked
  /// before each block; when it says so the render stops (an error) and nothing is written over
  /// the output. With `normalize`, the mix is rendered twice: a first pass measures its
  /// integrated loudness and true peak (nothing written), the second writes it with the gain
  /// that brings it to the target (lowered to meet a true-peak ceiling when one is asked); the
  /// summary then carries `normalization` and the output's own `loudness`. With `stemsFolder`,
  /// every stem is also written to `FOLDER/NAME.EXT` (the output's format) in the same pass,
  /// sample-aligned with the master: each is the session with that stem alone (mute and solo as
  /// in the full mix, master volume and any normalising gain applied), so the stem files sum to
  /// the master.
  public static func render(
    session: Session, sessionPath: String, outputPath: String, duration: Double?,
    from: Double? = nil, sampleRate: Int = 48000, blockFrames: Int = 1024,
    dither: Bool? = nil, normalize: Normalize? = nil, stemsFolder: String? = nil,
    format chosen: OutputFormat? = nil, inputs: [RenderInput] = [],
    progress: ((Double) -> Void)? = nil, pass: ((Pass) -> Void)? = nil, warning: ((MutedStem) -> Void)? = nil,
    cancelled: (() -> Bool)? = nil, interleavedStemTaps: Bool = true, clickPath: String? = nil
  ) throws(MixerError) -> Summary {
    let format: OutputFormat
    do throws(SoundFileError) { format = try OutputFormat.resolve(path: outputPath, format: chosen) } catch {
      throw MixerError("\(printableText(outputPath)): \(error.reason)")
    }
    if dither == true && format.isLossy {
      throw MixerError(
        "\(option: .dither) is for integer outputs; \(printableText(outputPath)) is \(format.description), a lossy codec that takes the float mix as it is"
      )
    }
    if dither == true && format.integerBits == nil {
      throw MixerError(
        "\(option: .dither) is for integer outputs (.flac, .aiff: 24-bit); \(printableText(outputPath)) is 32-bit float WAV, which needs none"
      )
    }
    if format == .opus && ![8000, 12000, 16000, 24000, 48000].contains(sampleRate) {
      throw MixerError(
        "\(printableText(outputPath)): Opus files are 8000, 12000, 16000, 24000 or 48000 Hz, not \(sampleRate) Hz: render with \(option: .sampleRate) 48000, or to another format"
      )
    }
    if dither == true && format.integerBits == 32 {
      throw MixerError(
        "\(option: .dither) is for 16- and 24-bit outputs; \(printableText(outputPath)) is \(format.description), which holds every float sample of the mix exactly"
      )
    }
    if let normalize { try check(normalize) }
    // TPDF dither: on by default for 16-bit output, on request for 24-bit (as mastering tools do);
    // a 32-bit integer file holds the float mix's 24-bit mantissa exactly, so it needs none.
    // The master's from `TPDFDither.masterSeed`; each stem file gets its own (`StemFiles`).
    var ditherer = format.integerBits.flatMap { bits in (dither ?? (bits <= 16)) ? TPDFDither(bits: bits) : nil }
    try checkOutput(outputPath, session: session, sessionPath: sessionPath, inputs: inputs)
    if let clickPath { try checkClickPath(clickPath, outputPath: outputPath, session: session, sessionPath: sessionPath, inputs: inputs) }
    let feeds = try InputFeeds.load(inputs, session: session, sessionPath: sessionPath, sampleRate: sampleRate)
    var stemPaths: [String] = [], replacedStemFiles: [String] = []
    // A --stems folder this render made is removed again when the render refuses or fails
    // (rmdir: only if it is still empty): a refused render leaves nothing behind.
    var madeStemsFolder = false, finished = false
    defer { if let stemsFolder, madeStemsFolder && !finished { rmdir(RawFileName.cPath(stemsFolder)) } }
    if let stemsFolder {
      (stemPaths, madeStemsFolder, replacedStemFiles) = try checkStemsFolder(
        stemsFolder, outputPath: outputPath, extension: OutputFormat.fileExtension(outputPath) ?? format.container,
        session: session, sessionPath: sessionPath, inputs: inputs)
    }

    // First pass of a normalised render: measure the mix as it is (nothing written).
    var normalization: Normalization?
    var gain: Float = 1
    // With a limiter: its detector's threshold (dBTP) and the measuring passes it took.
    var limiterSetting: (threshold: Double, passes: Int)?
    // The written pass's share of the progress bar starts here.
    var writtenFrom = 0.0
    if let normalize {
      let measuring = try prepare(
        session: session, sessionPath: sessionPath, duration: duration, from: from, sampleRate: sampleRate, inputs: feeds)
      defer { measuring.mixer.shutdown() }
      let meter = try LoudnessMeter(sampleRate: sampleRate)
      pass?(Pass("measuring", 0...0.5))
      _ = try run(
        measuring, blockFrames: blockFrames,
        progress: progress.map { p in { p($0 / 2) } }, warning: nil, cancelled: cancelled,
        interrupted: "interrupted: the render stopped while measuring; nothing was written"
      ) { interleaved, n throws(MixerError) in
        try meter.add(interleaved, frames: n)
      }
      let measured = meter.loudness
      guard measured.integrated.isFinite else {
        throw MixerError(
          "\(option: .normalize): the mix is silent (every 400 ms block lies under the -70 LUFS gate), so there is no loudness to bring to \(Loudness.lufs(normalize.target)); render without \(option: .normalize)"
        )
      }
      var db = normalize.target - measured.integrated
      writtenFrom = 0.5
      // The limiter only where the gain alone would put the true peak over the ceiling: anything
      // else is written exactly as without --true-peak.
      if let ceiling = normalize.truePeakCeiling, measured.truePeak > 0, measured.truePeakDecibels + db > ceiling {
        let settled = try settleLimiter(
          session: session, sessionPath: sessionPath, duration: duration, from: from, sampleRate: sampleRate, inputs: feeds,
          blockFrames: blockFrames, target: normalize.target, ceiling: ceiling, gain: db,
          progress: progress.map { p in { p(0.5 + $0 / 4) } }, pass: pass, cancelled: cancelled)
        db = settled.gain
        limiterSetting = (settled.threshold, settled.passes)
        writtenFrom = 0.75
      }
      normalization = Normalization(asked: normalize, measured: measured, gain: db, limiter: nil)
      gain = Float(Decibels.toAmplitude(db))
    }

    let plan = try prepare(
      session: session, sessionPath: sessionPath, duration: duration, from: from, sampleRate: sampleRate, inputs: feeds)
    defer { plan.mixer.shutdown() }
    let meter = normalize == nil ? nil : try LoudnessMeter(sampleRate: sampleRate)
    // Stems: one pass. The master's mixer taps every stem (direct-out buffers that also feed
    // the master and follow its fade and gain: StemdeckEngine's StemTaps.swift), in the
    // session's order. (One mixer per stem, each rendering its stem again, cost 2.9×.)
    var stemSlots: [Int32] = []
    if stemsFolder != nil {
      // A file per strip that feeds the master (`exportedStrips`): a stem's tap is its slot, a
      // bus's is its direct-out index after the stems' (Renderer/Buses.swift), a live input's
      // after the buses' (`InputBank.directSlot`).
      let strips = exportedStrips(session)
      let maxVoices = plan.mixer.renderState.pointee.maxVoices
      stemSlots = plan.mixer.lock.locked {
        strips.map { strip in
          if strip.isInput {
            return plan.mixer.liveInputs.find(strip.name).map { Int32(InputBank.directSlot($0.index, maxVoices: maxVoices)) } ?? -1
          }
          return strip.isBus
            ? Int32(maxVoices) + plan.mixer.busIndex(strip.name)
            : plan.mixer.table.stems.first { $0.settings.name == strip.name }?.slot ?? -1
        }
      }
      if let missing = stemSlots.firstIndex(of: -1) {
        throw MixerError(
          "\(option: .stems): stem '\(printableText(strips[missing].name))' is not playable (its file is offline), so it has no file to write"
        )
      }
    }

    // The render goes to a new temporary file beside the output, renamed over it only once
    // complete: a failed render (disk full, size limit) leaves the previous file as it was.
    let folder = outputPath.contains("/") ? String(outputPath[..<outputPath.lastIndex(of: "/")!]) : "."
    let name = outputPath.split(separator: "/").last.map(String.init) ?? outputPath
    let keptMode = AtomicFile.regularFileMode(at: outputPath)
    var temporary = ""
    var renamed = false
    defer { if !temporary.isEmpty && !renamed { unlink(RawFileName.cPath(temporary)) } }
    var summary: Summary
    var limiter: LimiterBox?
    var encodedLoudness: Loudness?
    do {
      // A fresh random name, created exclusively (nothing planted there is followed).
      let candidate = (folder.isEmpty ? "" : folder) + "/" + AtomicFile.temporaryName(for: name)
      func create() throws(MixerError) -> SoundFileWriter {
        do {
          return try SoundFileWriter(path: candidate, format: format, sampleRate: sampleRate, channelCount: 2, exclusive: true)
        } catch {
          throw MixerError("\(printableText(outputPath)): cannot create a temporary file beside it: \(error.reason)")
        }
      }
      let writer = try create()
      temporary = candidate
      let clickFile = try clickPath.map { (path) throws(MixerError) in
        try ClickFile(path: path, sampleRate: sampleRate, blockFrames: blockFrames)
      }
      let stemFiles = try StemFiles(
        paths: stemPaths, names: exportedStrips(session).map(\.name), format: format, sampleRate: sampleRate,
        ditherBits: ditherer?.bits, blockFrames: blockFrames)
      defer { stemFiles.removeTemporaries() }
      let stopped = "the render stopped; a previous \(printableText(name)) is left as it was"
      // The stems go through the limiter with the master: the same gain curve, so they still sum to it.
      limiter = limiterSetting.map { setting in
        LimiterBox(
          TruePeakLimiter(
            sampleRate: sampleRate, ceiling: Decibels.toAmplitude(setting.threshold),
            channels: 2 + 2 * stemSlots.count, maxFrames: blockFrames))
      }
      pass?(Pass("writing", writtenFrom...1))
      summary = try run(
        plan, click: clickFile, stemSlots: stemSlots, stemSink: stemFiles.write, stemSlot: stemFiles.slot,
        interleavedTaps: interleavedStemTaps,
        limiter: limiter, blockFrames: blockFrames, gain: gain, countStemClips: normalize != nil && format.integerBits != nil,
        progress: progress.map { p in normalize == nil ? p : { p(writtenFrom + $0 * (1 - writtenFrom)) } },
        warning: warning, cancelled: cancelled, interrupted: "interrupted: \(stopped)"
      ) { interleaved, n throws(MixerError) in
        ditherer?.apply(interleaved, count: 2 * n)
        try meter?.add(interleaved, frames: n)
        do throws(SoundFileError) { try writer.write(interleaved, frameCount: n) } catch {
          throw MixerError("\(printableText(outputPath)): \(error.reason) — \(stopped)")
        }
      }
      try refuseClipped(summary, normalization: normalization, format: format, stems: exportedStrips(session).map(\.name))
      do { try writer.finish() } catch { throw MixerError("\(printableText(outputPath)): \(error.reason)") }
      // A lossy file (Ogg Vorbis, Opus) is not the mix it was given (the codec moves the peaks
      // and a little of the loudness): its figures are the file's, decoded back and measured.
      if meter != nil && format.isLossy { encodedLoudness = try measureEncoded(temporary, shownAs: outputPath) }
      try stemFiles.finish()
      try clickFile?.finish()
      if let keptMode, chmod(RawFileName.cPath(temporary), keptMode) != 0 {
        throw MixerError("\(printableText(outputPath)): cannot set the permissions of the new file: \(String(cString: strerror(errno)))")
      }
      // The stems are put in place first: a failure there leaves the previous master as it was.
      try stemFiles.putInPlace()
      try clickFile?.putInPlace()
    }
    if rename(RawFileName.cPath(temporary), RawFileName.cPath(outputPath)) != 0 {
      throw MixerError("\(printableText(outputPath)): cannot put the render in place: \(String(cString: strerror(errno)))")
    }
    renamed = true
    if let box = limiter, let setting = limiterSetting {
      let smallest = box.limiter.smallestGain, reduced = box.limiter.reducedFrames
      normalization?.limiter = Limiting(
        maxReduction: smallest < 1 ? -Decibels.fromAmplitude(Double(smallest)) : 0,
        seconds: Double(reduced) / Double(sampleRate), passes: setting.passes, threshold: setting.threshold)
    }
    summary.normalization = normalization
    summary.replacedStemFiles = replacedStemFiles
    summary.loudness = encodedLoudness ?? meter?.loudness
    finished = true
    return summary
  }

  /// Measures `session`'s master as `render` would write it (same mixer, same blocks, same
  /// `duration`/`from` rules) without writing a file: `analyze`. The summary's `loudness` holds
  /// the EBU R 128 figures.
  public static func analyze(
    session: Session, sessionPath: String, duration: Double?, from: Double? = nil,
    sampleRate: Int = 48000, blockFrames: Int = 1024, inputs: [RenderInput] = [],
    progress: ((Double) -> Void)? = nil, pass: ((Pass) -> Void)? = nil, warning: ((MutedStem) -> Void)? = nil,
    cancelled: (() -> Bool)? = nil
  ) throws(MixerError) -> Summary {
    let feeds = try InputFeeds.load(inputs, session: session, sessionPath: sessionPath, sampleRate: sampleRate)
    let plan = try prepare(
      session: session, sessionPath: sessionPath, duration: duration, from: from, sampleRate: sampleRate, inputs: feeds)
    defer { plan.mixer.shutdown() }
    let meter = try LoudnessMeter(sampleRate: sampleRate)
    pass?(Pass("measuring", 0...1))
    var summary = try run(
      plan, blockFrames: blockFrames, progress: progress, warning: warning, cancelled: cancelled,
      interrupted: "interrupted: the analysis stopped"
    ) { interleaved, n throws(MixerError) in
      try meter.add(interleaved, frames: n)
    }
    summary.loudness = meter.loudness
    return summary
  }

  /// A loaded mixer positioned at the render's start, and how many frames to render.
  struct Plan {
    let mixer: Mixer
    let session: Session
    /// Where the session is stored: errors name it, and its stems' files resolve from it.
    let sessionPath: String
    let sampleRate: Int
    let totalFrames: Int
    /// Files standing in for live inputs (`render --input`; OfflineRenderer+Inputs.swift).
    var inputs = InputFeeds.none
  }

  /// Checks the rate, start and length, loads the session into a synchronous mixer.
  static func prepare(
    session: Session, sessionPath: String, duration: Double?, from: Double?, sampleRate: Int, inputs: InputFeeds = .none
  ) throws(MixerError) -> Plan {
    guard (8000...384_000).contains(sampleRate) else {
      throw MixerError("sample rate must be between 8000 and 384000 Hz (got \(sampleRate))")
    }
    var session = session
    if let from {
      guard SettingRule.position.accepts(from) else {
        throw MixerError("\(option: .from)\(SettingRule.position.refusal("", got: from))")
      }
      session.position = from
    }
    let mixer = Mixer(sampleRate: Double(sampleRate), quality: session.quality, streaming: .synchronous)
    var handedOver = false
    defer { if !handedOver { mixer.shutdown() } }
    try mixer.load(session, sessionPath: sessionPath, strict: true)
    let seconds: Double
    if let d = duration {
      guard d.isFinite, d > 0, d <= 24 * 3600 else {
        throw MixerError("\(option: .duration) must be a number of seconds above 0 and at most 86400 (got \(NumberFormat.plain(d)))")
      }
      seconds = d
    } else {
      if mixer.transport.hasEndlessStems {
        throw MixerError(file: sessionPath, "a stem loops forever (loops -1), so the render needs \(option: .duration) SECONDS")
      }
      guard let d = mixer.transport.duration else { throw MixerError(file: sessionPath, "the session has no stems to render") }
      seconds = d - session.position
    }
    var totalFrames = Int((seconds * Double(sampleRate)).rounded())
    if duration != nil && totalFrames == 0 {
      throw MixerError("\(option: .duration) \(NumberFormat.plain(seconds)) is shorter than one sample at \(sampleRate) Hz")
    }
    guard totalFrames > 0 else {
      let end = NumberFormat.time(mixer.transport.duration ?? 0), at = NumberFormat.time(session.position)
      throw MixerError(
        from != nil
          ? "nothing to render: \(option: .from) \(at) is at or past the session's end (\(end))"
          : "nothing to render: the session's saved position (\(at)) is at or past its end (\(end)); \(option: .from) 0 renders from the start"
      )
    }
    // To the end, a count-in comes first: the stems start that much later (Click.swift).
    if duration == nil { totalFrames += mixer.click.countInFrames }
    handedOver = true
    return Plan(
      mixer: mixer, session: session, sessionPath: sessionPath, sampleRate: sampleRate, totalFrames: totalFrames, inputs: inputs)
  }

  /// Plays `plan` to its end in blocks of `blockFrames`, hands each block (interleaved stereo,
  /// `gain` applied; the sink may change it in place) to `sink`, and sums up peaks, RMS, clips
  /// (of the samples as `gain` leaves them), underruns and muted stems. With a `limiter` the
  /// master and the stems go through it after the gain; its delay is made up (the mix is fed
  /// `latency` frames of silence past its end and the first `latency` frames out are dropped),
  /// so the output stays sample-aligned and as long.
  ///
  /// With `stemSlot` (the stem writer's chunk), `interleavedTaps`, no limiter and a gain of 1, the
  /// stems' taps are their parts of the chunk (`RenderState.tapStride` 2): the mix writes them
  /// interleaved in its own pass (StemTaps.swift). Otherwise, and for buses' and inputs' taps,
  /// the taps are planar and interleaved into the chunk after each block (false: the planar path
  /// for every tap, which the tests compare with).
  static func run(
    _ plan: Plan, click: ClickFile? = nil, stemSlots: [Int32] = [],
    stemSink: ((Int, UnsafeMutablePointer<Float>, Int) throws(MixerError) -> Void)? = nil,
    stemSlot: ((Int) -> UnsafeMutablePointer<Float>)? = nil, interleavedTaps: Bool = true, limiter: LimiterBox? = nil, blockFrames: Int,
    gain: Float = 1, countStemClips: Bool = false,
    progress: ((Double) -> Void)?, warning: ((MutedStem) -> Void)?, cancelled: (() -> Bool)?,
    interrupted: String,
    sink: (UnsafeMutablePointer<Float>, Int) throws(MixerError) -> Void
  ) throws(MixerError) -> Summary {
    let mixer = plan.mixer, sampleRate = plan.sampleRate, totalFrames = plan.totalFrames
    var peak = (0.0, 0.0), sum = (0.0, 0.0), clipped = 0
    var muted: [MutedStem] = []
    var stemClipped = [Int](repeating: 0, count: countStemClips ? stemSlots.count : 0)
    let left = UnsafeMutablePointer<Float>.allocate(capacity: blockFrames)
    let right = UnsafeMutablePointer<Float>.allocate(capacity: blockFrames)
    let interleaved = UnsafeMutablePointer<Float>.allocate(capacity: blockFrames * 2)
    defer { left.deallocate(); right.deallocate(); interleaved.deallocate() }
    // Each tapped stem's left and right buffers (StemTaps.swift), handed to the renderer before
    // every block (it writes every frame of them).
    let taps = UnsafeMutablePointer<Float>.allocate(capacity: max(1, stemSlots.count * 2 * blockFrames))
    defer { taps.deallocate() }
    // The live inputs' files, a block at a time (OfflineRenderer+Inputs.swift).
    let inputScratch = UnsafeMutablePointer<Float>.allocate(capacity: max(1, plan.inputs.feeds.count * 2 * blockFrames))
    defer { inputScratch.deallocate() }
    let state = mixer.renderState
    state.pointee.stemTaps = !stemSlots.isEmpty
    // Which taps are written straight into the chunk, interleaved: the stems' (a bus's or an
    // input's slot is past `maxVoices`), when nothing comes between the mix and the file.
    let inChunk = tapsInChunk(
      stemSlots, maxVoices: state.pointee.maxVoices, interleaved: interleavedTaps && stemSlot != nil, limited: limiter != nil,
      gain: gain)
    state.pointee.tapStride = inChunk.contains(true) ? 2 : 1

    try mixer.stems.setMetering(false)
    // The limiter's lanes: the master's left and right, then each tapped stem's.
    let lanes = 2 + 2 * stemSlots.count
    let lanePointers = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: lanes)
    defer { lanePointers.deallocate() }
    lanePointers[0] = left
    lanePointers[1] = right
    for lane in 2..<max(2, lanes) { lanePointers[lane] = taps + (lane - 2) * blockFrames }
    let latency = limiter?.limiter.latency ?? 0
    let inputFrames = totalFrames + latency
    mixer.engine.fillStreams()
    // Bad samples and read failures are found by the disk reader, ahead of playback (as live): a
    // stem is muted before the next block, and before any sound when they lie in its first
    // ring's worth; a failed one ends the render (OfflineRenderer+Faults.swift).
    muted += try streamFaults(mixer.pump(), plan: plan, at: 0, warning: warning)
    try mixer.transport.play()
    var done = 0
    var skip = latency
    var lastProgress = -1
    while done < inputFrames {
      if let cancelled, cancelled() { throw MixerError(ControlText(interrupted)) }
      let n = min(blockFrames, inputFrames - done)
      // Frames of the mix in this block; the rest (the limiter's tail) is silence.
      let fresh = max(0, min(n, totalFrames - done))
      if fresh > 0 {
        mixer.engine.fillStreams()
        if mixer.engine.hasUnreportedFaults { muted += try streamFaults(mixer.pump(), plan: plan, at: done, warning: warning) }
        attachTaps(stemSlots, to: state, inChunk: inChunk, chunk: stemSlot, planar: taps, blockFrames: blockFrames)
        plan.inputs.attach(to: state, mixer: mixer, scratch: inputScratch, blockFrames: blockFrames, frame: done, count: fresh)
        click?.attach(to: state)
        renderBlock(mixer.renderState, left: left, right: right, frameCount: fresh)
      }
      var blockGain = gain
      if let limiter {
        for lane in 0..<lanes {
          let p = lanePointers[lane]
          for i in 0..<fresh { p[i] *= gain }
          for i in fresh..<n { p[i] = 0 }
        }
        limiter.limiter.process(lanePointers, frames: n)
        blockGain = 1
      }
      let first = min(skip, n)
      skip -= first
      let out = n - first
      for i in 0..<out {
        let l = left[first + i] * blockGain, r = right[first + i] * blockGain
        interleaved[2 * i] = l
        interleaved[2 * i + 1] = r
        let al = Double(abs(l)), ar = Double(abs(r))
        peak.0 = max(peak.0, al); peak.1 = max(peak.1, ar)
        sum.0 += al * al; sum.1 += ar * ar
        if al > 1 { clipped += 1 }
        if ar > 1 { clipped += 1 }
      }
      // NaN or infinity in the master: a mix no file can hold (OfflineRenderer+Faults.swift).
      if !(sum.0 + sum.1).isFinite {
        throw nonFiniteMix(plan, at: max(0, done + first - latency) + (firstNonFiniteFrame(interleaved, count: 2 * out) ?? 0))
      }
      if out > 0 { try sink(interleaved, out) }
      try click?.take(fresh: fresh, of: n, writing: out)
      for index in stemSlots.indices where out > 0 {
        let tl = taps + 2 * index * blockFrames + first, tr = tl + blockFrames
        // Straight into the stem writer's chunk when it offers one (`stemSlot`), past the cache
        // (CStream: the chunk is not read again here).
        let target = stemSlot?(index) ?? interleaved
        // A tap in the chunk holds the block already (`inChunk`: no gain, no limiter).
        if !inChunk[index] { stemdeck_interleave_stream(tl, tr, target, out, blockGain) }
        if countStemClips { stemClipped[index] += overFullScale(target, count: 2 * out) }
        try stemSink?(index, target, out)
      }
      done += n
      if done % (blockFrames * 64) == 0 { muted += try streamFaults(mixer.pump(), plan: plan, at: done, warning: warning) }
      let percent = done * 100 / inputFrames
      if percent != lastProgress { lastProgress = percent; progress?(Double(done) / Double(inputFrames)) }
    }
    muted += try streamFaults(mixer.pump(), plan: plan, at: totalFrames, warning: warning)
    let underruns = mixer.stems.statuses().reduce(0) { $0 + $1.underruns }
    let frames = Double(totalFrames)
    return Summary(
      frames: totalFrames, sampleRate: sampleRate, start: plan.session.position, peak: (peak.0, peak.1),
      rms: ((sum.0 / frames).squareRoot(), (sum.1 / frames).squareRoot()),
      clippedSamples: clipped, underruns: underruns, mutedStems: muted, stemClippedSamples: stemClipped)
  }
}
