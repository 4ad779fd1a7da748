import CRubberBand
import CSampleRate

/// A stem's time-stretcher (Rubber Band, real-time mode, R3 "finer" engine with its short
/// window): tempo changes without changing pitch, and an independent pitch shift. A pitch-shifted
/// stem's file-rate → engine-rate conversion is folded into the stretcher (time ratio ×
/// engine/file, pitch scale × file/engine), whose resampler runs anyway; an unshifted stem of
/// another rate is converted by the voice's own converter first (`preconverts`), so Rubber Band's
/// resampler runs only where a pitch scale needs it (`needsResampler`).
///
/// Why R3, short window: the R2 engine renders tones flat whenever it really stretches (−8.7
/// cents at tempo 0.8, −9.5 cents at +12 semitones, −23 cents at −12; librubberband 3.1.2, the
/// same from C): its phase resets at detected transients lose part of a cycle each time. R3 is
/// exact to 0.01 cent from 100 Hz to 5 kHz. R3's standard window costs about 2.4× R2's CPU and,
/// with a 44.1 kHz file's rate conversion folded in, strays from the source waveform by 0.067
/// RMS; the short window costs what R2 did (less without the resampler) and stays within 0.003.
/// No lighter Rubber Band setting exists to offer as a quality choice (issue 25; librubberband 3.1.2 as
/// Debian builds it, with its built-in FFT; a stereo stem at tempo 0.8, 48 kHz, in the C API's
/// real-time mode): R3 short window 4.1–4.3 % of a core; R2 with the transients that keep its
/// pitch exact (`TransientsSmooth`) 4.9–5.7 %, adding `PhaseIndependent` and `WindowShort`
/// 4.1–4.3 %, the same as R3 and with R2's smeared attacks; R3's standard window 12–15 %.
///
/// The `fast` stretch quality (issue 25) replaces Rubber Band with stemdeck's own WSOLA
/// (`WsolaStretcher`, DSP/Wsola.swift) for an unshifted stem: about 0.1 % of a core per stereo
/// stem instead of 4 %, pitch exact, with WSOLA's sound (tones clean, dense mixes slightly
/// rougher). A pitch-shifted stem uses R3 whatever the quality (`usesWsola`).
///
/// - Thread: created and destroyed on the control thread (they allocate); used by the renderer.
public struct StretchState: ~Copyable, @unchecked Sendable {
  /// Rubber Band's stretcher, nil when the stem uses `wsola`.
  @usableFromInline let stretcher: OpaquePointer?
  /// The light stretcher of the `fast` quality (an unshifted stem), else nil.
  @usableFromInline let wsola: UnsafeMutablePointer<WsolaStretcher>?
  @usableFromInline let channels: Int
  /// Per-channel input and output buffers of `maxFrames` frames, and the pointer arrays the C
  /// API takes.
  @usableFromInline let inputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
  @usableFromInline let outputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
  /// The same input buffers as `const float *` for `rubberband_process`.
  @usableFromInline let inputsForProcess: UnsafeMutablePointer<UnsafePointer<Float>?>
  public static let maxFrames = 2048
  /// The input frames of every process call (a pass feeds as many chunks as it needs).
  public static let feedChunk = 256
  @usableFromInline let maxFrames = StretchState.maxFrames
  /// engineRate / fileRate for what the stretcher is fed: 1 when the voice's converter takes the
  /// file to the engine rate first.
  @usableFromInline let rateScale: Double
  /// The converter's ratio (engineRate / fileRate) when it runs ahead of the stretcher
  /// (`preconverts`), else 0.
  @usableFromInline let convertRatio: Double
  /// Interleaved: one chunk of file-rate frames (the converter's input), and the engine-rate frames
  /// the converter made that the stretcher has not been fed yet (`convertedFrames` of them).
  @usableFromInline let convertInput: UnsafeMutablePointer<Float>
  @usableFromInline let converted: UnsafeMutablePointer<Float>
  @usableFromInline var convertedFrames = 0
  /// The stream has ended and the converter has given everything it will.
  @usableFromInline var convertDrained = false
  /// Room for converted frames: under a chunk left over plus a chunk converted at the largest
  /// ratio (an 8 kHz file at 48 kHz: 6 × 256) and the converter's tail at the end.
  @usableFromInline static let convertedCapacity = 4096
  /// Output frames still to drop after a reset (the stretcher's start delay).
  @usableFromInline var discard = 0
  @usableFromInline var needsReset = true
  @usableFromInline var finalSent = false
  /// Output frames this stem keeps ready beyond what a pass takes before it feeds more input.
  /// Rubber Band works a whole hop at a time (about 512 output frames, four 128-frame periods),
  /// in the pass that feeds it; stems started together would all work in the same period and
  /// that period would overrun. Spreading this over 0..<512 by slot spreads their hops over
  /// different periods. It moves when the work is done, not what is output (no added latency).
  /// The WSOLA makes its next hop ahead by the same lead (`pullWsola`).
  @usableFromInline let feedAhead: Int

  /// A slot's lead in 0..<512: its 9 bits reversed, so that the first 2^k slots fall one in each
  /// of 2^k equal parts of the hop (slots 0–3 at 0, 256, 128, 384: one in each 128-frame period;
  /// 32 stems eight to a period, 64 stems four to each 64-frame period).
  public static func lead(slot: Int) -> Int {
    var bits = slot & 511
    var reversed = 0
    for _ in 0..<9 {
      reversed = reversed << 1 | bits & 1
      bits >>= 1
    }
    return reversed
  }

  /// Creates a stretcher for `channels` channels at the engine rate. The corresponding C function
  /// is `rubberband_new`.
  public init(
    channels: Int, engineRate: Double, fileRate: Double, rate: Double, pitchSemitones: Double, slot: Int = 0,
    fast: Bool = false
  ) {
    feedAhead = Self.lead(slot: slot)
    let resampling = Self.needsResampler(pitchSemitones: pitchSemitones, fileRate: fileRate, engineRate: engineRate)
    let preconverting = Self.preconverts(pitchSemitones: pitchSemitones, fileRate: fileRate, engineRate: engineRate)
    let options = Int32(
      RubberBandOptionProcessRealTime.rawValue | RubberBandOptionEngineFiner.rawValue
        | RubberBandOptionWindowShort.rawValue
        | (resampling ? RubberBandOptionPitchHighConsistency.rawValue : RubberBandOptionPitchHighSpeed.rawValue))
    rateScale = preconverting ? 1 : engineRate / fileRate
    convertRatio = preconverting ? engineRate / fileRate : 0
    let convertChannels = preconverting ? channels : 1
    convertInput = .allocate(capacity: Self.feedChunk * convertChannels)
    converted = .allocate(capacity: Self.convertedCapacity * convertChannels)
    if Self.usesWsola(fast: fast, pitchSemitones: pitchSemitones) {
      stretcher = nil
      wsola = .allocate(capacity: 1)
      wsola!.initialize(to: WsolaStretcher(channels: channels, sampleRate: engineRate, tempo: rate))
    } else {
      wsola = nil
      let rb = rubberband_new(
        UInt32(engineRate), UInt32(channels), options,
        rateScale / rate, Self.pitchScale(semitones: pitchSemitones, fileRate: fileRate, engineRate: engineRate))
      rubberband_set_max_process_size(rb, UInt32(Self.maxFrames))
      stretcher = rb
    }
    self.channels = channels
    inputs = .allocate(capacity: channels)
    outputs = .allocate(capacity: channels)
    inputsForProcess = .allocate(capacity: channels)
    for c in 0..<channels {
      inputs[c] = .allocate(capacity: Self.maxFrames)
      outputs[c] = .allocate(capacity: Self.maxFrames)
      inputs[c]!.initialize(repeating: 0, count: Self.maxFrames)
      inputsForProcess[c] = UnsafePointer(inputs[c])
    }
  }

  deinit {
    if let stretcher { rubberband_delete(stretcher) }
    if let wsola {
      wsola.deinitialize(count: 1)
      wsola.deallocate()
    }
    for c in 0..<channels { inputs[c]!.deallocate(); outputs[c]!.deallocate() }
    inputs.deallocate()
    outputs.deallocate()
    inputsForProcess.deallocate()
    convertInput.deallocate()
    converted.deallocate()
  }

  /// Whether the stretcher is built with its resampler always on (`PitchHighConsistency`): when
  /// the stem is pitch-shifted. At pitch scale 1 the `PitchHighSpeed` option leaves the resampler
  /// out and costs 40 % less (a stereo stem at tempo 1.05: 3.3 % of a core instead of 5.7 %), but
  /// a pitch scale moved across 1 in that mode switches the resampler in mid-stream, which R3
  /// cannot do smoothly and cannot reconfigure: a pitch change that moves a stem across this line
  /// gets a new stretcher (`mixer.stems.setPitch`). `fileRate` and `engineRate` do not decide it any
  /// more (`preconverts`); they stay in the signature for its callers.
  public static func needsResampler(pitchSemitones: Double, fileRate: Double, engineRate: Double) -> Bool {
    pitchSemitones != 0
  }

  /// Whether a stem uses stemdeck's WSOLA rather than Rubber Band: the `fast` quality, unshifted
  /// (pitch shifting stays Rubber Band's). A pitch change across 0 on a `fast` stem gets a new
  /// stretcher, as a change across `needsResampler`'s line does (the same line).
  public static func usesWsola(fast: Bool, pitchSemitones: Double) -> Bool {
    fast && pitchSemitones == 0
  }

  /// Whether an unshifted stem whose file rate is not the engine's has its file converted to the
  /// engine rate by the voice's converter (the session's `quality`) before the stretcher, rather
  /// than by Rubber Band's resampler inside it: stemdeck's `fast` sinc costs about 0.2 % of a core
  /// where Rubber Band's resampler costs 2–3 % (issue 25: a 44.1 kHz stereo stem at tempo 0.8 took
  /// 6.7 % of a core, a 48 kHz one 4.1–4.4 %). A pitch-shifted stem keeps both in the stretcher.
  public static func preconverts(pitchSemitones: Double, fileRate: Double, engineRate: Double) -> Bool {
    pitchSemitones == 0 && fileRate != engineRate
  }

  /// The stretcher's pitch scale: the shift, and the file-rate conversion unless the voice's
  /// converter does that first (`preconverts`).
  public static func pitchScale(semitones: Double, fileRate: Double, engineRate: Double) -> Double {
    if preconverts(pitchSemitones: semitones, fileRate: fileRate, engineRate: engineRate) { return 1 }
    return pow2(semitones / 12) * fileRate / engineRate
  }
}

@usableFromInline
func pow2(_ x: Double) -> Double { powImpl(2, x) }

/// Sets the stretcher's ratios for a varispeed-like `rate` (tempo) and a pitch shift.
@_noLocks
func updateStretchRatios(_ s: UnsafeMutablePointer<StretchState>, rate: Double, pitchScale: Double) {
  // WSOLA holds its own tempo schedule (`holdStretchTempo`, `glideStretchTempo`).
  guard let rb = s.pointee.stretcher else { return }
  let timeRatio = s.pointee.rateScale / rate
  RealtimeC.setRatios(rb, time: timeRatio, pitch: pitchScale)
}

/// The voice's rate holds at `voice.rate` from its next output frame on (a plain change, a glide
/// cancelled): a `fast` stem's WSOLA re-makes what it has ready at the new tempo, so the change is
/// heard in the next period (`WsolaStretcher.setTempo`). Rubber Band takes its ratio from
/// `updateStretchRatios`.
@_noLocks
func holdStretchTempo(_ voice: UnsafeMutablePointer<StemVoice>) {
  guard let s = voice.pointee.stretch, let wsola = s.pointee.wsola else { return }
  wsola.pointee.setTempo(voice.pointee.rate)
}

/// A rate glide starts (`voice.rateGlide`): a `fast` stem's WSOLA follows it output frame by
/// output frame (`WsolaStretcher.glideTempo`), not block by block as the renderer advances it,
/// so a glide's output does not depend on the block size either.
@_noLocks
func glideStretchTempo(_ voice: UnsafeMutablePointer<StemVoice>) {
  guard let s = voice.pointee.stretch, let wsola = s.pointee.wsola else { return }
  wsola.pointee.glideTempo(voice.pointee.rateGlide)
}

/// Starts the stretcher's stream afresh when the voice asked for it (`needsReset`: the start, a
/// seek, a loop seam): Rubber Band gets its start pad and start delay, WSOLA forgets its input,
/// and the converter that feeds an unshifted stem of another rate starts again.
@_noLocks
func resetStretcherIfNeeded(_ voice: UnsafeMutablePointer<StemVoice>, _ s: UnsafeMutablePointer<StretchState>) {
  if !s.pointee.needsReset { return }
  s.pointee.needsReset = false
  s.pointee.finalSent = false
  if let wsola = s.pointee.wsola {
    wsola.pointee.reset()
  } else if let rb = s.pointee.stretcher {
    // The start pad of silence and the start delay follow Rubber Band 3's recipe for aligned output.
    let pad = RealtimeC.resetForStartPad(rb)
    let inputs = s.pointee.inputs
    for c in 0..<s.pointee.channels { inputs[c]!.update(repeating: 0, count: s.pointee.maxFrames) }
    var left = pad
    while left > 0 {
      let n = Swift.min(left, s.pointee.maxFrames)
      RealtimeC.process(rb, UnsafePointer(s.pointee.inputsForProcess), frames: n, final: false)
      left &-= n
    }
    s.pointee.discard = RealtimeC.startDelay(rb)
  }
  if s.pointee.convertRatio > 0 {
    resetResampler(voice)
    s.pointee.convertedFrames = 0
    s.pointee.convertDrained = false
  }
}

/// Pulls `count` frames through the stretcher from the voice's ring into `destination`
/// (interleaved); returns frames made.
@_noLocks
func pullStretched(
  _ voice: UnsafeMutablePointer<StemVoice>, _ s: UnsafeMutablePointer<StretchState>,
  into destination: UnsafeMutablePointer<Float>, count: Int
) -> Int {
  if let wsola = s.pointee.wsola { return pullWsola(voice, s, wsola, into: destination, count: count) }
  let ch = voice.pointee.channels
  guard let rb = s.pointee.stretcher else { return 0 }
  let inputs = s.pointee.inputs
  let outputs = s.pointee.outputs
  resetStretcherIfNeeded(voice, s)
  var produced = 0
  var attempts = 0
  // A bound on the loop (each turn feeds one chunk or retrieves): a 4096-frame pass at rate 2
  // feeds 32 chunks, more right after a reset while the start delay is dropped.
  while produced < count && attempts < 128 {
    attempts &+= 1
    let need = count &- produced
    let available = RealtimeC.available(rb)
    if available < 0 { voice.pointee.drained = true; break }  // finished and emptied
    // Feed when nothing is ready (the start delay is being dropped, or the pass needs more), or
    // when less than this pass plus the stem's feed-ahead is ready.
    let feed =
      !s.pointee.finalSent
      && (available == 0 || (s.pointee.discard == 0 && available < need &+ s.pointee.feedAhead))
    if feed && s.pointee.convertRatio > 0 {
      if feedConverted(voice, s) { continue }
      // The disk is late (an underrun): hand out what is ready.
    } else if feed {
      // The stretcher is always fed the same chunk (the end of the stream aside), so its input is
      // cut into process calls as a function of the transport alone, never of how far the disk
      // reader has got, where the ring wraps, or when output was retrieved (Rubber Band's
      // getSamplesRequired depends on that): its output depends on how its input is cut, and live
      // must equal the offline render bit for bit. A ring holding less than a chunk is an underrun
      // (unless the stream ends within it).
      let chunk = StretchState.feedChunk
      let segments = voice.pointee.audio.readableSegments()
      let inRing = segments.count / ch
      let ends = streamEndsHere(voice, extra: segments.count)
      let n = inRing >= chunk ? chunk : (ends ? inRing : 0)
      if n > 0 {
        let firstFrames = Swift.min(n, segments.first.count / ch)
        let src = segments.first.baseAddress!
        for c in 0..<ch {
          let dst = inputs[c]!
          for i in 0..<firstFrames { dst[i] = src[i &* ch &+ c] }
        }
        if n > firstFrames {
          let wrapped = segments.second.baseAddress!
          for c in 0..<ch {
            let dst = inputs[c]! + firstFrames
            for i in 0..<(n &- firstFrames) { dst[i] = wrapped[i &* ch &+ c] }
          }
        }
        voice.pointee.audio.release(count: n &* ch)
        let last = ends && n == inRing
        // It is fed at most maxFrames (its set_max_process_size) and only while its output holds
        // less than a pass plus 512 frames, so every hop it can make has run and left room (R3:
        // input buffer = window + max process size): in real-time mode rubberband_process is
        // lock-free and does not allocate while its input buffer has room (RealtimeC.swift).
        RealtimeC.process(rb, UnsafePointer(s.pointee.inputsForProcess), frames: n, final: last)
        if last { s.pointee.finalSent = true }
        continue
      }
      if ends {
        RealtimeC.process(rb, UnsafePointer(s.pointee.inputsForProcess), frames: 0, final: true)
        s.pointee.finalSent = true
        continue
      }
      // The disk is late (an underrun): hand out what is ready, feed nothing less than the chunk.
    }
    if available == 0 {
      if s.pointee.finalSent { voice.pointee.drained = true }
      break
    }
    let n = Swift.min(available, Swift.min(s.pointee.maxFrames, s.pointee.discard > 0 ? s.pointee.discard : need))
    let got = RealtimeC.retrieve(rb, UnsafePointer(outputs), frames: n)
    if s.pointee.discard > 0 {
      s.pointee.discard &-= got
      continue
    }
    for c in 0..<ch {
      let out = outputs[c]!
      for i in 0..<got { destination[(produced &+ i) &* ch &+ c] = out[i] }
    }
    produced &+= got
  }
  return produced
}

/// Feeds the stretcher one chunk of engine-rate frames that the voice's converter made from the
/// file's (`StretchState.preconverts`); false when the disk is late (an underrun). Both cuts are
/// functions of the stream alone, as in `pullStretched`: the converter is given whole
/// `feedChunk`s of file frames (copied out of the ring, so where the ring wraps does not cut
/// them) with room for all it makes, and the stretcher whole `feedChunk`s of what it made.
@_noLocks
func feedConverted(_ voice: UnsafeMutablePointer<StemVoice>, _ s: UnsafeMutablePointer<StretchState>) -> Bool {
  let ch = voice.pointee.channels
  let chunk = StretchState.feedChunk
  let input = s.pointee.convertInput
  let converted = s.pointee.converted
  var turns = 0
  // Each turn converts one chunk; an 8 kHz file needs one, a 192 kHz file four.
  while s.pointee.convertedFrames < chunk && !s.pointee.convertDrained && turns < 8 {
    turns &+= 1
    let segments = voice.pointee.audio.readableSegments()
    let inRing = segments.count / ch
    let ends = streamEndsHere(voice, extra: segments.count)
    let n = inRing >= chunk ? chunk : (ends ? inRing : 0)
    if n == 0 && !ends { return false }
    let firstFrames = Swift.min(n, segments.first.count / ch)
    if firstFrames > 0 {
      UnsafeMutableRawPointer(input).copyMemory(
        from: UnsafeRawPointer(segments.first.baseAddress!), byteCount: firstFrames &* ch &* 4)
    }
    if n > firstFrames {
      UnsafeMutableRawPointer(input + firstFrames &* ch).copyMemory(
        from: UnsafeRawPointer(segments.second.baseAddress!), byteCount: (n &- firstFrames) &* ch &* 4)
    }
    voice.pointee.audio.release(count: n &* ch)
    let last = ends && n == inRing
    var used = 0
    var calls = 0
    while calls < 16 {
      calls &+= 1
      var data = SRC_DATA()
      data.data_in = UnsafePointer(input + used &* ch)
      data.data_out = converted + s.pointee.convertedFrames &* ch
      data.input_frames = n &- used
      data.output_frames = StretchState.convertedCapacity &- s.pointee.convertedFrames
      data.src_ratio = s.pointee.convertRatio
      data.end_of_input = last ? 1 : 0
      if convert(voice, &data) != 0 {
        s.pointee.convertDrained = true  // a converter error ends the stem rather than looping
        break
      }
      used &+= data.input_frames_used
      s.pointee.convertedFrames &+= data.output_frames_gen
      if data.input_frames_used == 0 && data.output_frames_gen == 0 {
        if last { s.pointee.convertDrained = true }
        break
      }
      if used >= n && !last { break }
      if s.pointee.convertedFrames >= StretchState.convertedCapacity { break }
    }
  }
  if s.pointee.convertedFrames < chunk && !s.pointee.convertDrained { return false }
  let m = Swift.min(chunk, s.pointee.convertedFrames)
  let inputs = s.pointee.inputs
  for c in 0..<ch {
    let dst = inputs[c]!
    for i in 0..<m { dst[i] = converted[i &* ch &+ c] }
  }
  let rest = s.pointee.convertedFrames &- m
  if rest > 0 {
    // The regions overlap: copyMemory moves bytes like memmove.
    UnsafeMutableRawPointer(converted).copyMemory(from: UnsafeRawPointer(converted + m &* ch), byteCount: rest &* ch &* 4)
  }
  s.pointee.convertedFrames = rest
  let final = s.pointee.convertDrained && rest == 0
  if let wsola = s.pointee.wsola {
    // Called only with room for a chunk (`pullWsola`).
    wsola.pointee.append(planar: UnsafePointer(inputs), frames: m, final: final)
  } else if let rb = s.pointee.stretcher {
    RealtimeC.process(rb, UnsafePointer(s.pointee.inputsForProcess), frames: m, final: final)
  }
  if final { s.pointee.finalSent = true }
  return true
}

/// `pullStretched` for a stem on the `fast` quality (`WsolaStretcher`): the stretcher holds the
/// voice's tempo schedule (`holdStretchTempo`, `glideStretchTempo`); before frames are handed out
/// it re-makes the unplayed rest of its last hop if the schedule changed (so a tempo change is
/// heard from this period's first frame) and makes the next hop when they run out. Input is
/// appended as the ring (or the converter, `feedConverted`) has it: WSOLA's output does not
/// depend on how its input is cut.
///
/// The next hop is made ahead, once at most the stem's lead (`feedAhead`, spread over the hop by
/// slot) is left of the last one, in a pull that made no search of its own: stems started
/// together then do their hops in different periods instead of all in one period of four
/// (issue 25: 32 stems at tempo 0.8 had bursts of xruns from that period). The output is the same
/// (`WsolaStretcher.prepareAhead`).
@_noLocks
func pullWsola(
  _ voice: UnsafeMutablePointer<StemVoice>, _ s: UnsafeMutablePointer<StretchState>,
  _ wsola: UnsafeMutablePointer<WsolaStretcher>, into destination: UnsafeMutablePointer<Float>, count: Int
) -> Int {
  resetStretcherIfNeeded(voice, s)
  let ch = voice.pointee.channels
  let searches = wsola.pointee.searches
  var produced = 0
  var attempts = 0
  // A bound on the loop: a 4096-frame pass at rate 2 makes 8 hops and feeds about 16 times.
  while produced < count && attempts < 256 {
    attempts &+= 1
    if wsola.pointee.update() {
      produced &+= wsola.pointee.retrieve(into: destination + produced &* ch, frames: count &- produced)
      if produced == count { break }
      if wsola.pointee.isFinished() {
        voice.pointee.drained = true
        break
      }
      continue
    }
    // It needs more input.
    if feedWsola(voice, s, wsola) { continue }
    // The disk is late (an underrun): a re-make waits for the next hop, the old frames play.
    if wsola.pointee.abandonRemake() { continue }
    break
  }
  if produced == count && wsola.pointee.searches == searches {
    // The stem's lead, scaled from the 512 frames `feedAhead` spreads over to the hop (1024 above 64 kHz).
    let lead = s.pointee.feedAhead &* wsola.pointee.hop / 512
    var turns = 0
    // If the input is not there yet (the disk is late), `update` makes the hop when it is due.
    while turns < 16 && !wsola.pointee.prepareAhead(lead: lead) && feedWsola(voice, s, wsola) { turns &+= 1 }
  }
  return produced
}

/// Appends what the voice's ring (or its converter) has to the WSOLA's input, as much as it takes;
/// false when nothing could be appended (the disk is late, or the stream was all given).
@_noLocks
func feedWsola(
  _ voice: UnsafeMutablePointer<StemVoice>, _ s: UnsafeMutablePointer<StretchState>,
  _ wsola: UnsafeMutablePointer<WsolaStretcher>
) -> Bool {
  if s.pointee.finalSent { return false }  // cannot happen while it needs input: past the end it reads silence
  if wsola.pointee.room() < StretchState.feedChunk { return false }  // cannot happen: see WsolaStretcher.capacity
  if s.pointee.convertRatio > 0 { return feedConverted(voice, s) }
  let ch = voice.pointee.channels
  let segments = voice.pointee.audio.readableSegments()
  let inRing = segments.count / ch
  let ends = streamEndsHere(voice, extra: segments.count)
  if inRing == 0 && !ends { return false }
  let room = wsola.pointee.room()
  let n = Swift.min(inRing, room)
  let last = ends && n == inRing
  let firstFrames = Swift.min(n, segments.first.count / ch)
  if firstFrames > 0 {
    wsola.pointee.append(interleaved: segments.first.baseAddress!, frames: firstFrames, final: last && n == firstFrames)
  }
  if n > firstFrames {
    wsola.pointee.append(interleaved: segments.second.baseAddress!, frames: n &- firstFrames, final: last)
  }
  if n == 0 && last { wsola.pointee.markEnd() }
  voice.pointee.audio.release(count: n &* ch)
  if last { s.pointee.finalSent = true }
  return true
}
