import CStream
import StemdeckAudioFile
import StemdeckEngine
import StemdeckSession
import Foundation
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
    cancelled: (() -> Bool)? = nil, interleavedStemTaps: Bool = true
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
    try checkOutput(outputPath, session: session, sessionPath: sessionPath)
    let feeds = try InputFeeds.load(inputs, session: session, sessionPath: sessionPath, sampleRate: sampleRate)
    var stemPaths: [String] = []
    // A --stems folder this render made is removed again when the render refuses or fails
    // (rmdir: only if it is still empty): a refused render leaves nothing behind.
    var madeStemsFolder = false, finished = false
    defer { if let stemsFolder, madeStemsFolder && !finished { rmdir(RawFileName.cPath(stemsFolder)) } }
    if let stemsFolder {
      (stemPaths, madeStemsFolder) = try checkStemsFolder(
        stemsFolder, outputPath: outputPath, extension: OutputFormat.fileExtension(outputPath) ?? format.container,
        session: session, sessionPath: sessionPath)
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
        plan, stemSlots: stemSlots, stemSink: stemFiles.write, stemSlot: stemFiles.slot, interleavedTaps: interleavedStemTaps,
        limiter: limiter, blockFrames: blockFrames, gain: gain,
        progress: progress.map { p in normalize == nil ? p : { p(writtenFrom + $0 * (1 - writtenFrom)) } },
        warning: warning, cancelled: cancelled, interrupted: "interrupted: \(stopped)"
      ) { interleaved, n throws(MixerError) in
        ditherer?.apply(interleaved, count: 2 * n)
        try meter?.add(interleaved, frames: n)
        do throws(SoundFileError) { try writer.write(interleaved, frameCount: n) } catch {
          throw MixerError("\(printableText(outputPath)): \(error.reason) — \(stopped)")
        }
      }
      try refuseClipped(summary, normalization: normalization, format: format)
      do { try writer.finish() } catch { throw MixerError("\(printableText(outputPath)): \(error.reason)") }
      // A lossy file (Ogg Vorbis, Opus) is not the mix it was given (the codec moves the peaks
      // and a little of the loudness): its figures are the file's, decoded back and measured.
      if meter != nil && format.isLossy { encodedLoudness = try measureEncoded(temporary, shownAs: outputPath) }
      try stemFiles.finish()
      if let keptMode, chmod(RawFileName.cPath(temporary), keptMode) != 0 {
        throw MixerError("\(printableText(outputPath)): cannot set the permissions of the new file: \(String(cString: strerror(errno)))")
      }
      // The stems are put in place first: a failure there leaves the previous master as it was.
      try stemFiles.putInPlace()
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
    summary.loudness = encodedLoudness ?? meter?.loudness
    finished = true
    return summary
  }

  /// A normalised integer file is never put in place clipped (a gain without a ceiling, or a
  /// ceiling the limiter missed): the render is refused, and nothing is written.
  static func refuseClipped(_ summary: Summary, normalization: Normalization?, format: OutputFormat) throws(MixerError) {
    guard let db = normalization?.gain, let bits = format.integerBits, summary.clippedSamples > 0 else { return }
    throw MixerError(
      "\(option: .normalize): the gain of \(db >= 0 ? "+" : "")\(NumberFormat.fixed(db, 2)) dB puts \(summary.clippedSamples) samples over full scale, which a \(bits)-bit file cannot hold: give a lower target or \(option: .truePeak) (e.g. -1dBTP); nothing was written"
    )
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

  /// The true-peak limiter of a render, boxed: `TruePeakLimiter` is ~Copyable.
  final class LimiterBox {
    var limiter: TruePeakLimiter
    init(_ limiter: consuming TruePeakLimiter) { self.limiter = limiter }
  }

  /// Finds the gain and the limiter threshold of a normalised render with a true-peak ceiling:
  /// renders the mix through the gain and the limiter (measuring, nothing written) and corrects
  /// the gain by the loudness the limiter took away (a secant step) and the threshold by any true
  /// peak libebur128 still reads over the ceiling (the detector's interpolation filter is not
  /// libebur128's), until the loudness is within 0.05 LU of the target and the true peak under
  /// the ceiling, in at most 5 passes. When more gain no longer buys loudness (the ceiling holds
  /// it down: a steady tone, say) it stops and keeps the first gain that came as close.
  static func settleLimiter(
    session: Session, sessionPath: String, duration: Double?, from: Double?, sampleRate: Int, inputs feeds: InputFeeds,
    blockFrames: Int, target: Double, ceiling: Double, gain startGain: Double,
    progress: ((Double) -> Void)?, pass announce: ((Pass) -> Void)? = nil, cancelled: (() -> Bool)?
  ) throws(MixerError) -> (gain: Double, threshold: Double, passes: Int) {
    struct Trial { var gain: Double; var threshold: Double; var loudness: Loudness }
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
      }
      let loudness = meter.loudness
      trials.append(Trial(gain: gain, threshold: threshold, loudness: loudness))
      let peakFits = loudness.truePeakDecibels <= ceiling - slack
      let error = target - loudness.integrated
      if peakFits && abs(error) <= tolerance { return (gain, threshold, pass + 1) }
      if !peakFits { threshold -= loudness.truePeakDecibels - ceiling + 0.03 }
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
    let fitting = trials.filter { $0.loudness.truePeakDecibels <= ceiling - slack }
    let pool = fitting.isEmpty ? trials : fitting
    let closest = pool.map { abs(target - $0.loudness.integrated) }.min() ?? 0
    let chosen = pool.first { abs(target - $0.loudness.integrated) <= closest + tolerance } ?? trials[trials.count - 1]
    return (chosen.gain, chosen.threshold, trials.count)
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
    let sampleRate: Int
    let totalFrames: Int
    /// Files standing in for live inputs (`render --input`; OfflineRenderer+Inputs.swift).
    var inputs = InputFeeds.none
  }

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
      if mixer.hasEndlessStems {
        throw MixerError(file: sessionPath, "a stem loops forever (loops -1), so the render needs \(option: .duration) SECONDS")
      }
      guard let d = mixer.duration else { throw MixerError(file: sessionPath, "the session has no stems to render") }
      seconds = d - session.position
    }
    let totalFrames = Int((seconds * Double(sampleRate)).rounded())
    if duration != nil && totalFrames == 0 {
      throw MixerError("\(option: .duration) \(NumberFormat.plain(seconds)) is shorter than one sample at \(sampleRate) Hz")
    }
    guard totalFrames > 0 else {
      let end = NumberFormat.time(mixer.duration ?? 0), at = NumberFormat.time(session.position)
      throw MixerError(
        from != nil
          ? "nothing to render: \(option: .from) \(at) is at or past the session's end (\(end))"
          : "nothing to render: the session's saved position (\(at)) is at or past its end (\(end)); \(option: .from) 0 renders from the start"
      )
    }
    handedOver = true
    return Plan(mixer: mixer, session: session, sampleRate: sampleRate, totalFrames: totalFrames, inputs: inputs)
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
    _ plan: Plan, stemSlots: [Int32] = [], stemSink: ((Int, UnsafeMutablePointer<Float>, Int) throws(MixerError) -> Void)? = nil,
    stemSlot: ((Int) -> UnsafeMutablePointer<Float>)? = nil, interleavedTaps: Bool = true, limiter: LimiterBox? = nil, blockFrames: Int,
    gain: Float = 1,
    progress: ((Double) -> Void)?, warning: ((MutedStem) -> Void)?, cancelled: (() -> Bool)?,
    interrupted: String,
    sink: (UnsafeMutablePointer<Float>, Int) throws(MixerError) -> Void
  ) throws(MixerError) -> Summary {
    let mixer = plan.mixer, session = plan.session, sampleRate = plan.sampleRate, totalFrames = plan.totalFrames
    var peak = (0.0, 0.0), sum = (0.0, 0.0), clipped = 0
    var muted: [MutedStem] = []
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
    func attachTaps() {
      for (i, slot) in stemSlots.enumerated() {
        if inChunk[i], let stemSlot {
          let frames = stemSlot(i)
          state.pointee.directOutputs[2 * Int(slot)] = frames
          state.pointee.directOutputs[2 * Int(slot) + 1] = frames + 1
          continue
        }
        state.pointee.directOutputs[2 * Int(slot)] = taps + 2 * i * blockFrames
        state.pointee.directOutputs[2 * Int(slot) + 1] = taps + (2 * i + 1) * blockFrames
      }
    }

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
    // The limiter's lanes: the master's left and right, then each tapped stem's.
    let lanes = 2 + 2 * stemSlots.count
    let lanePointers = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: lanes)
    defer { lanePointers.deallocate() }
    lanePointers[0] = left
    lanePointers[1] = right
    for lane in 2..<max(2, lanes) { lanePointers[lane] = taps + (lane - 2) * blockFrames }
    let latency = limiter?.limiter.latency ?? 0
    let inputFrames = totalFrames + latency
    mixer.fillStreams()
    muteBadStems(at: 0)
    try mixer.play()
    var done = 0
    var skip = latency
    var lastProgress = -1
    while done < inputFrames {
      if let cancelled, cancelled() { throw MixerError(ControlText(interrupted)) }
      let n = min(blockFrames, inputFrames - done)
      // Frames of the mix in this block; the rest (the limiter's tail) is silence.
      let fresh = max(0, min(n, totalFrames - done))
      if fresh > 0 {
        mixer.fillStreams()
        if mixer.hasUnreportedBadSamples { muteBadStems(at: done) }
        attachTaps()
        plan.inputs.attach(to: state, mixer: mixer, scratch: inputScratch, blockFrames: blockFrames, frame: done, count: fresh)
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
      if out > 0 { try sink(interleaved, out) }
      for index in stemSlots.indices where out > 0 {
        let tl = taps + 2 * index * blockFrames + first, tr = tl + blockFrames
        // Straight into the stem writer's chunk when it offers one (`stemSlot`), past the cache
        // (CStream: the chunk is not read again here).
        let target = stemSlot?(index) ?? interleaved
        // A tap in the chunk holds the block already (`inChunk`: no gain, no limiter).
        if !inChunk[index] { stemdeck_interleave_stream(tl, tr, target, out, blockGain) }
        try stemSink?(index, target, out)
      }
      done += n
      if done % (blockFrames * 64) == 0 { _ = mixer.pump() }
      let percent = done * 100 / inputFrames
      if percent != lastProgress { lastProgress = percent; progress?(Double(done) / Double(inputFrames)) }
    }
    _ = mixer.pump()
    let underruns = mixer.stemStatuses().reduce(0) { $0 + $1.underruns }
    let frames = Double(totalFrames)
    return Summary(
      frames: totalFrames, sampleRate: sampleRate, start: session.position, peak: (peak.0, peak.1),
      rms: ((sum.0 / frames).squareRoot(), (sum.1 / frames).squareRoot()),
      clippedSamples: clipped, underruns: underruns, mutedStems: muted)
  }

  /// Which of `stemSlots`' taps `run` has the mix write straight into the stem writer's chunk,
  /// interleaved: the stems' (a bus's or an input's slot is `maxVoices` or past it), when the
  /// chunk is offered (`interleaved`) and nothing comes between the mix and the file (no limiter,
  /// a gain of 1).
  static func tapsInChunk(_ stemSlots: [Int32], maxVoices: Int, interleaved: Bool, limited: Bool, gain: Float) -> [Bool] {
    stemSlots.map { interleaved && !limited && gain == 1 && Int($0) < maxVoices }
  }

  /// The stem files' paths (`FOLDER/NAME.EXT`, the output's extension), each checked as an output
  /// is; the folder is made when missing (its parent must exist).
  /// What `--stems` writes a file for: every strip that feeds the master, in the session's order:
  /// the stems routed to no bus, then the buses routed to none (a stem in a bus is heard in its
  /// bus's file, after the bus's EQ and fader). They sum to the master.
  /// What `render --stems` writes, for its summary: each file's strip name and kind ("stem",
  /// "bus", "input"), in the order written.
  public static func stemFileStrips(_ session: Session) -> [(name: String, kind: String)] {
    exportedStrips(session).map { ($0.name, $0.isBus ? "bus" : $0.isInput ? "input" : "stem") }
  }

  static func exportedStrips(_ session: Session) -> [(name: String, isBus: Bool, isInput: Bool)] {
    session.stems.filter { $0.bus == nil }.map { ($0.name, false, false) }
      + session.buses.filter { $0.bus == nil }.map { ($0.name, true, false) }
      + session.inputs.filter { $0.bus == nil }.map { ($0.name, false, true) }
  }

  static func checkStemsFolder(
    _ folder: String, outputPath: String, extension ext: String, session: Session, sessionPath: String
  ) throws(MixerError) -> (paths: [String], made: Bool) {
    let shown = printableText(folder)
    var info = stat()
    var made = false
    if stat(RawFileName.cPath(folder), &info) != 0 {
      guard mkdir(RawFileName.cPath(folder), 0o777) == 0 else {
        throw MixerError("\(option: .stems) \(shown): cannot make the folder: \(String(cString: strerror(errno)))")
      }
      made = true
    } else if info.st_mode & S_IFMT != S_IFDIR {
      throw MixerError("\(option: .stems) \(shown): is not a folder; give a folder for the stem files")
    }
    var checked = false
    defer { if made && !checked { rmdir(RawFileName.cPath(folder)) } }
    guard !session.stems.isEmpty else { throw MixerError(file: sessionPath, "the session has no stems to render") }
    let base = folder.hasSuffix("/") ? folder : folder + "/"
    var paths: [String] = []
    for stem in exportedStrips(session) {
      let path = base + stem.name + "." + ext
      do { try checkOutput(path, session: session, sessionPath: sessionPath, choice: "\(option: .stems) folder") } catch {
        throw MixerError("\(option: .stems) \(shown): \(error)")
      }
      var a = stat(), b = stat()
      if stat(RawFileName.cPath(path), &a) == 0 && stat(RawFileName.cPath(outputPath), &b) == 0 && a.st_dev == b.st_dev
        && a.st_ino == b.st_ino || path == outputPath
      {
        throw MixerError(
          "\(option: .stems) \(shown): stem '\(printableText(stem.name))' would be written over \(option: .output) \(printableText(outputPath)); choose another folder"
        )
      }
      paths.append(path)
    }
    checked = true
    return (paths, made)
  }

  /// The stem files of `render --stems`: temporary files beside their targets, renamed into place
  /// once all are complete.
  ///
  /// Written on a thread of their own (`stemdeck-stem-writer`), so that the render thread only
  /// mixes: the renderer interleaves each stem's block straight into one of two chunk buffers
  /// (`chunkFrames` frames of every stem, `slot`), and a full chunk goes to the writer thread,
  /// which dithers and writes each stem's part in one call while the render fills the other
  /// (double buffering: the render waits only when the writer is a whole chunk behind): to an
  /// integer format converted into one shared buffer (`SoundFileWriter.writeConverted`, the
  /// master's conversion), to float WAV straight from the chunk to the disk (`DirectWAVWriter`:
  /// O_DIRECT, the chunk buffers aligned for it), to any other with `sf_writef_float`. A write
  /// error stops the render at the next chunk; nothing is put in place.
  final class StemFiles: @unchecked Sendable {
    let paths: [String]
    var temporaries: [String] = []
    /// `SoundFileWriter` is ~Copyable, so each lives in a box.
    final class Box {
      let writer: SoundFileWriter
      init(_ writer: consuming SoundFileWriter) { self.writer = writer }
    }
    var writers: [Box] = []
    /// Float WAV's writers instead (`writesDirect`).
    var directs: [DirectWAVWriter] = []
    /// Each stem file's ditherer, seeded by its strip's name (`TPDFDither.stemSeed`): every file
    /// its own sequence, so their rounding errors do not add up coherently when they are summed.
    var ditherers: [TPDFDither] = []
    /// An integer format's samples are converted into this (`SoundFileWriter.writeConverted`).
    let scratch: UnsafeMutablePointer<UInt8>?
    var placed = 0
    /// Frames of every stem in one chunk (256 KiB of interleaved float stereo per stem).
    let chunkFrames: Int
    let blockFrames: Int
    /// The two chunk buffers: stem i's frames at `i * chunkFrames * 2`.
    var chunks: [UnsafeMutablePointer<Float>] = []
    /// The chunk the render fills, and how many frames of it are filled (every stem alike).
    var filling = 0
    var filled = 0
    /// Render → writer: one signal per chunk handed over (`handed` counts them; chunk k is
    /// `chunks[k % 2]`, `chunkFill[k % 2]` frames), and a last one to stop.
    let ready = DispatchSemaphore(value: 0)
    let handed = Atomic<Int>(0)
    let chunkFill = UnsafeMutablePointer<Int>.allocate(capacity: 2)
    /// Writer → render: a chunk is free again.
    let free = DispatchSemaphore(value: 1)
    /// Writer → stop(): the thread has ended.
    let ended = DispatchSemaphore(value: 0)
    var running = false
    /// The first write error, set by the writer thread (read by the render after `free`/`ended`).
    var failure: MixerError?

    /// `names`: the strips the files are of, in `paths`' order; `ditherBits`: the integer depth
    /// to dither to, nil for none.
    init(
      paths: [String], names: [String], format: OutputFormat, sampleRate: Int, ditherBits: Int?, blockFrames: Int = 1024
    ) throws(MixerError) {
      self.paths = paths
      self.blockFrames = blockFrames
      chunkFrames = max(32768, blockFrames * 2)
      if let bits = ditherBits, !paths.isEmpty {
        ditherers = names.map { TPDFDither(bits: bits, seed: TPDFDither.stemSeed(name: $0)) }
      }
      scratch = paths.isEmpty || format.pcmLayout == nil ? nil : .allocate(capacity: chunkFrames * 2 * 4)
      for path in paths {
        let folder = String(path[..<path.lastIndex(of: "/")!])
        let name = String(path[path.index(after: path.lastIndex(of: "/")!)...])
        let candidate = folder + "/" + AtomicFile.temporaryName(for: name)
        do throws(SoundFileError) {
          if Self.writesDirect(format) {
            directs.append(try DirectWAVWriter(path: candidate, sampleRate: sampleRate, channelCount: 2))
          } else {
            writers.append(
              Box(
                try SoundFileWriter(
                  path: candidate, format: format, sampleRate: sampleRate, channelCount: 2, exclusive: true,
                  peakChunk: false)))
          }
        } catch {
          removeTemporaries()
          throw MixerError("\(printableText(path)): cannot create a temporary file beside it: \(error.reason)")
        }
        temporaries.append(candidate)
      }
      guard !paths.isEmpty else { return }
      // Aligned for direct writes: each stem's part starts at a multiple of 256 KiB.
      for _ in 0..<2 { chunks.append(Self.allocateChunk(floats: paths.count * chunkFrames * 2)) }
      running = true
      let thread = Thread { [self] in writeChunks() }
      thread.name = "stemdeck-stem-writer"
      thread.start()
    }

    deinit {
      stop()
      for chunk in chunks { chunk.deallocate() }
      chunkFill.deallocate()
      scratch?.deallocate()
    }

    /// A chunk buffer of `floats` samples, on transparent huge pages where the kernel offers them
    /// (`MADV_HUGEPAGE`, a hint: without it, 4 KiB pages as before). 2 MiB aligned and rounded, so
    /// every 256 KiB stem part is aligned for `O_DIRECT`. Huge pages are for the kernel's sake:
    /// each direct write pins the buffer's pages (`get_user_pages`), 180,000 of them for 740 MB of
    /// stems in 4 KiB pages, which was the writer thread's largest cost; in 2 MiB pages the walk is
    /// one entry per 2 MiB, and the render's stores into the chunk miss the TLB less.
    static func allocateChunk(floats: Int) -> UnsafeMutablePointer<Float> {
      let huge = 2 << 20
      let bytes = (floats * MemoryLayout<Float>.size + huge - 1) / huge * huge
      let raw = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: huge)
      #if os(Linux)
      _ = madvise(raw, bytes, MADV_HUGEPAGE)
      #endif
      return raw.bindMemory(to: Float.self, capacity: floats)
    }

    /// Whether the stem files of `format` are written by `DirectWAVWriter`: float WAV, whose
    /// bytes are the samples as they are on a little-endian machine.
    static func writesDirect(_ format: OutputFormat) -> Bool {
      #if _endian(little)
      return format == .wavFloat
      #else
      return false
      #endif
    }

    /// Where stem `index`'s next `n` frames go (interleaved stereo); `write` then takes them.
    func slot(_ index: Int) -> UnsafeMutablePointer<Float> {
      chunks[filling] + (index * chunkFrames + filled) * 2
    }

    /// Takes stem `index`'s next `n` frames (`interleaved`: its `slot`, or anywhere else). After
    /// the last stem of a block the block counts as filled, and a chunk with no room for another
    /// block goes to the writer thread.
    func write(_ index: Int, _ interleaved: UnsafeMutablePointer<Float>, _ n: Int) throws(MixerError) {
      let target = slot(index)
      if interleaved != target { target.update(from: interleaved, count: 2 * n) }
      guard index == paths.count - 1 else { return }
      filled += n
      if filled + blockFrames > chunkFrames { try handOff() }
    }

    /// Hands the filled chunk to the writer thread and waits for the other to be free.
    func handOff() throws(MixerError) {
      guard filled > 0 else { return }
      chunkFill[filling] = filled
      handed.add(1, ordering: .releasing)
      ready.signal()
      free.wait()
      filling ^= 1
      filled = 0
      if let failure { throw failure }
    }

    /// The writer thread: writes each chunk handed to it until told to stop.
    func writeChunks() {
      var written = 0
      while true {
        ready.wait()
        // Every chunk handed over is written before the stop signal (the last) is taken.
        guard written < handed.load(ordering: .acquiring) else { break }
        let chunk = written % 2, frames = chunkFill[chunk]
        written += 1
        if failure == nil {
          for index in paths.indices {
            let data = chunks[chunk] + index * chunkFrames * 2
            do throws(SoundFileError) {
              if index < ditherers.count { ditherers[index].apply(data, count: 2 * frames) }
              if !directs.isEmpty {
                try directs[index].write(data, count: frames * 2 * MemoryLayout<Float>.size)
              } else if let scratch {
                try writers[index].writer.writeConverted(data, frameCount: frames, scratch: scratch)
              } else {
                try writers[index].writer.write(data, frameCount: frames)
              }
            } catch {
              failure = MixerError(
                "\(printableText(paths[index])): \(error.reason) — the render stopped; previous stem files are left as they were")
              break
            }
          }
        }
        free.signal()
      }
      ended.signal()
    }

    /// Ends the writer thread (after the chunk it is writing, if any); idempotent.
    func stop() {
      guard running else { return }
      running = false
      ready.signal()
      ended.wait()
    }

    /// Writes what is left, ends the writer thread and finishes every file.
    func finish() throws(MixerError) {
      if running {
        try handOff()
        stop()
        if let failure { throw failure }
      }
      for i in paths.indices {
        do throws(SoundFileError) { try directs.isEmpty ? writers[i].writer.finish() : directs[i].finish() } catch {
          throw MixerError("\(printableText(paths[i])): \(error.reason)")
        }
      }
    }

    func putInPlace() throws(MixerError) {
      for i in paths.indices {
        if rename(RawFileName.cPath(temporaries[i]), RawFileName.cPath(paths[i])) != 0 {
          throw MixerError("\(printableText(paths[i])): cannot put the stem file in place: \(String(cString: strerror(errno)))")
        }
        placed = i + 1
      }
    }

    /// Ends the writer thread and removes the temporary files not renamed into place.
    func removeTemporaries() {
      stop()
      for i in placed..<temporaries.count { unlink(RawFileName.cPath(temporaries[i])) }
    }
  }

  /// Refuses an output that is not a regular file or a new name (a folder, device, FIFO or
  /// socket) and one that is one of the render's own inputs (the same file as a stem's or an
  /// effect's audio, or the session file: compared by device and inode, so links count).
  /// `choice` is what the user can choose instead (the output; a stem file's folder).
  static func checkOutput(
    _ outputPath: String, session: Session, sessionPath: String, choice: ControlText = "\(option: .output)"
  ) throws(MixerError) {
    let shown = printableText(outputPath)
    var info = stat()
    // The folder it goes in must be there: otherwise the error would be the temporary file's.
    if let slash = outputPath.lastIndex(of: "/") {
      let folder = slash == outputPath.startIndex ? "/" : String(outputPath[..<slash])
      if stat(RawFileName.cPath(folder), &info) != 0 {
        let reason = errno == ENOENT ? "does not exist" : "cannot be reached (\(String(cString: strerror(errno))))"
        throw MixerError("\(shown): the folder \(printableText(folder)) \(reason); make it first, or choose another \(choice)")
      }
      if info.st_mode & S_IFMT != S_IFDIR {
        throw MixerError("\(shown): \(printableText(folder)) is not a folder; choose another \(choice)")
      }
    }
    if lstat(RawFileName.cPath(outputPath), &info) == 0 && info.st_mode & S_IFMT == S_IFDIR {
      throw MixerError("\(shown): is a folder; give a file name for the render")
    }
    if let what = AtomicFile.specialFileKind(at: outputPath) {
      throw MixerError("\(shown): is \(what), not a regular file; a render writes only to a regular file or a new name")
    }
    guard stat(RawFileName.cPath(outputPath), &info) == 0 else { return }  // a new name (or a dangling link, replaced)
    func same(_ path: String) -> Bool {
      var other = stat()
      return stat(RawFileName.cPath(path), &other) == 0 && other.st_dev == info.st_dev && other.st_ino == info.st_ino
    }
    for stem in session.stems where same(SessionFile.resolve(file: stem.file, sessionPath: sessionPath)) {
      throw MixerError(
        "\(shown): is the audio file of stem '\(printableText(stem.name))'; a render never writes over its own inputs (choose another \(choice))"
      )
    }
    for effect in session.effects where same(SessionFile.resolve(file: effect.file, sessionPath: sessionPath)) {
      throw MixerError(
        "\(shown): is the audio file of effect '\(printableText(effect.name))'; a render never writes over its own inputs (choose another \(choice))"
      )
    }
    if same(sessionPath) {
      throw MixerError("\(shown): is the session file itself; choose another \(option: .output)")
    }
  }
}
