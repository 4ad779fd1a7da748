import CSampleRate

// One voice's part of a pass: keeping in step with its stream, pulling (and resampling) its
// frames, glides, mixing with its smoothed gains, metering. Everything here is realtime code.

/// Brings a voice to its epoch's boundary; true once it plays the current stream.
@_noLocks
func syncVoice(_ voice: UnsafeMutablePointer<StemVoice>) -> Bool {
  if voice.pointee.synced { return true }
  let shared = voice.pointee.shared
  guard shared.pointee.publishedEpoch.load(ordering: .acquiring) == voice.pointee.epoch else { return false }
  let boundary = shared.pointee.boundary.load(ordering: .relaxed)
  guard voice.pointee.audio.discard(upTo: boundary) else { return false }
  voice.pointee.synced = true
  voice.pointee.finished = false
  voice.pointee.drained = false
  voice.pointee.underrunning = false
  voice.pointee.bypass = voice.pointee.ratio == 1
  voice.pointee.heldActive = false  // restartConverter takes zita back into use if the rate holds
  voice.pointee.heldPending = 0
  voice.pointee.historyFilled = 0
  voice.pointee.discardFrames = 0
  voice.pointee.skipFrames = 0
  voice.pointee.startedSinceSync = false
  voice.pointee.heard = 0
  voice.pointee.eq.clearState()  // the next audio does not continue what the filters hold
  shared.pointee.heardStartFrame.store(shared.pointee.epochStartFrame.load(ordering: .relaxed), ordering: .relaxed)
  shared.pointee.publishHeard(sourceFrames: 0, transportFrame: voice.pointee.joinFrame)
  // src_reset clears the converter's whole filter state (about 118k instructions for a stereo
  // fast-sinc converter: 32 stems starting or seeking together spent ~1 ms in one period). A
  // voice in bypass does not use the converter, and leaving the bypass resets it (changeRatio).
  if !voice.pointee.bypass { restartConverter(voice) }
  if let stretch = voice.pointee.stretch { stretch.pointee.needsReset = true }
  shared.pointee.finished.store(false, ordering: .relaxed)
  shared.pointee.synced.store(true, ordering: .relaxed)
  shared.pointee.readCounter.store(voice.pointee.audio.readCounter, ordering: .relaxed)
  return true
}

@_noLocks
func resetResampler(_ voice: UnsafeMutablePointer<StemVoice>) {
  switch voice.pointee.converter {
  case .sinc(let sinc):
    sinc.pointee.reset()
  case .libsamplerate(let state):
    RealtimeC.reset(state)
  }
}

/// Runs the voice's converter on `data` with `src_process`'s contract; returns its error code.
@_noLocks
func convert(_ voice: UnsafeMutablePointer<StemVoice>, _ data: inout SRC_DATA) -> Int32 {
  switch voice.pointee.converter {
  case .sinc(let sinc):
    let result = sinc.pointee.process(
      input: data.data_in, inputFrames: data.input_frames, output: data.data_out, outputFrames: data.output_frames,
      ratio: data.src_ratio, endOfInput: data.end_of_input != 0)
    data.input_frames_used = result.used
    data.output_frames_gen = result.generated
    return 0
  case .libsamplerate(let state):
    return RealtimeC.process(state, &data)
  }
}

/// True when the disk thread has marked the end of this epoch's stream at the voice's read point.
@_noLocks @inline(__always)
func streamEndsHere(_ voice: UnsafeMutablePointer<StemVoice>, extra: Int) -> Bool {
  let shared = voice.pointee.shared
  guard shared.pointee.endEpoch.load(ordering: .acquiring) == voice.pointee.epoch else { return false }
  return voice.pointee.audio.readCounter &+ extra >= shared.pointee.endCounter.load(ordering: .relaxed)
}

/// True when a voice has enough audio buffered to start (or nothing more will come).
@_noLocks
func voiceIsPrimed(_ voice: UnsafeMutablePointer<StemVoice>, primeFrames: Int) -> Bool {
  guard syncVoice(voice) else { return false }
  if voice.pointee.removing || voice.pointee.finished { return true }
  if voice.pointee.shared.pointee.readFailed.load(ordering: .relaxed) { return true }
  let available = voice.pointee.audio.availableCount()
  let wanted = Swift.min(primeFrames &* voice.pointee.channels, voice.pointee.audio.capacity / 2)
  return available >= wanted || streamEndsHere(voice, extra: available)
}

@_noLocks @inline(__always)
func meterCells(_ voice: UnsafeMutablePointer<StemVoice>) -> UnsafePointer<MeterCells> {
  UnsafePointer(voice.pointee.shared.pointee.meters)
}

/// Applies the voice's rate: the stretcher's tempo in stretch mode, the converter ratio otherwise.
@_noLocks
func applyRate(_ voice: UnsafeMutablePointer<StemVoice>) {
  if let stretch = voice.pointee.stretch {
    updateStretchRatios(stretch, rate: voice.pointee.rate, pitchScale: voice.pointee.pitchScale)
  } else {
    changeRatio(voice, to: voice.pointee.ringScale / voice.pointee.rate)
  }
}

/// Sets the voice's converter ratio; leaving the bypass primes the converter with the frames
/// just played, so its filter starts full and the switch is seamless.
@_noLocks
func changeRatio(_ voice: UnsafeMutablePointer<StemVoice>, to ratio: Double) {
  if ratio == voice.pointee.ratio { return }
  if voice.pointee.bypass {
    voice.pointee.bypass = false
    resetResampler(voice)
    voice.pointee.discardFrames = -1  // prime at the next pull (it needs an output buffer)
  }
  voice.pointee.ratio = ratio
}

/// Feeds the bypass history through the reset converter at ratio 1 and arranges for the output
/// that replays it to be dropped. (libsamplerate's output is time-aligned with its input; it
/// holds back only its filter's look-ahead, which comes out after the switch and is dropped.)
@_noLocks
func primeResampler(_ voice: UnsafeMutablePointer<StemVoice>) {
  let scratch = voice.pointee.primeOutput
  let scratchFrames = voice.pointee.primeFrames &+ 64
  let ch = voice.pointee.channels
  let k = voice.pointee.historyCapacity
  // The last `historyFrames` at most (a `fast` voice's history holds more, for zita).
  let filled = Swift.min(voice.pointee.historyFilled, voice.pointee.primeFrames)
  var produced = 0
  var fed = 0
  // The history is circular: oldest frame at historyWrite - filled.
  while fed < filled {
    let start = (voice.pointee.historyWrite &- filled &+ fed &+ k) % k
    let run = Swift.min(filled &- fed, k &- start)
    var data = SRC_DATA()
    data.data_in = UnsafePointer(voice.pointee.history + start &* ch)
    data.data_out = scratch
    data.input_frames = run
    data.output_frames = scratchFrames
    data.src_ratio = 1
    data.end_of_input = 0
    let error = convert(voice, &data)
    if error != 0 { break }
    produced &+= data.output_frames_gen
    fed &+= data.input_frames_used
    if data.input_frames_used == 0 && data.output_frames_gen == 0 { break }
    if produced >= scratchFrames { break }
  }
  voice.pointee.discardFrames = Swift.max(0, filled &- produced)
}

/// Keeps the last `historyCapacity` frames played in bypass (or fed to zita's converter).
@_noLocks @inline(__always)
func remember(_ voice: UnsafeMutablePointer<StemVoice>, _ source: UnsafeMutablePointer<Float>, frames: Int) {
  let ch = voice.pointee.channels
  let k = voice.pointee.historyCapacity
  let n = Swift.min(frames, k)
  var write = voice.pointee.historyWrite
  let from = source + (frames &- n) &* ch
  var done = 0
  while done < n {
    let run = Swift.min(n &- done, k &- write)
    UnsafeMutableRawPointer(voice.pointee.history + write &* ch)
      .copyMemory(from: UnsafeRawPointer(from + done &* ch), byteCount: run &* ch &* 4)
    write &+= run
    if write == k { write = 0 }  // run <= k - write: this is (write + run) % k without a division
    done &+= run
  }
  voice.pointee.historyWrite = write
  voice.pointee.historyFilled = Swift.min(k, voice.pointee.historyFilled &+ n)
}

/// Pulls `count` frames of the voice's (resampled) audio into `destination`; returns frames made.
@_noLocks
func pullFrames(_ voice: UnsafeMutablePointer<StemVoice>, into destination: UnsafeMutablePointer<Float>, count: Int) -> Int {
  let ch = voice.pointee.channels
  if voice.pointee.skipFrames > 0 {
    let available = voice.pointee.audio.availableCount() / ch
    let skip = Swift.min(available, voice.pointee.skipFrames)
    voice.pointee.audio.release(count: skip &* ch)
    voice.pointee.skipFrames &-= skip
    if voice.pointee.skipFrames > 0 { return 0 }  // still catching up: more silence
  }
  if let stretch = voice.pointee.stretch {
    return pullStretched(voice, stretch, into: destination, count: count)
  }
  if voice.pointee.bypass {
    let got = voice.pointee.audio.read(into: UnsafeMutableBufferPointer(start: destination, count: count &* ch)) / ch
    remember(voice, destination, frames: got)
    return got
  }
  if voice.pointee.heldActive { return pullHeld(voice, into: destination, count: count) }
  if voice.pointee.discardFrames < 0 { primeResampler(voice) }
  var produced = 0
  var attempts = 0
  while produced < count && attempts < 8 {
    attempts &+= 1
    let segments = voice.pointee.audio.readableSegments()
    let inputFrames = segments.first.count / ch
    let ends = streamEndsHere(voice, extra: segments.count)
    if inputFrames == 0 && !ends { break }
    var data = SRC_DATA()
    data.data_in = UnsafePointer(segments.first.baseAddress)
    data.data_out = destination + produced &* ch
    data.input_frames = inputFrames
    // While the primed look-ahead is being dropped the ratio stays 1, so the dropped output maps
    // one-to-one onto the history's last frames; the new ratio ramps in right after.
    let discarding = voice.pointee.discardFrames > 0
    data.output_frames = discarding ? Swift.min(count &- produced, voice.pointee.discardFrames) : count &- produced
    data.src_ratio = discarding ? 1 : voice.pointee.ratio
    data.end_of_input = ends && segments.second.count == 0 ? 1 : 0
    let error = convert(voice, &data)
    if error != 0 { break }
    voice.pointee.audio.release(count: data.input_frames_used &* ch)
    var made = data.output_frames_gen
    // Drop the output that replays the priming history.
    let drop = Swift.min(voice.pointee.discardFrames, made)
    if drop > 0 {
      let at = destination + produced &* ch
      // The regions overlap: copyMemory moves bytes like memmove.
      UnsafeMutableRawPointer(at).copyMemory(from: UnsafeRawPointer(at + drop &* ch), byteCount: (made &- drop) &* ch &* 4)
      made &-= drop
      voice.pointee.discardFrames &-= drop
    }
    produced &+= made
    if data.input_frames_used == 0 && data.output_frames_gen == 0 {
      if data.end_of_input != 0 { voice.pointee.drained = true }
      break
    }
  }
  return produced
}

/// Publishes the voice's running glides (its levels' and its rate's) for the control thread.
@_noLocks
func publishGlides(_ voice: UnsafeMutablePointer<StemVoice>) {
  let rate: Double? = voice.pointee.rateGlide.isActive ? voice.pointee.rate : nil
  voice.pointee.levels.publish(to: voice.pointee.shared.pointee.glides, rate: rate)
}

/// Advances the voice's glides to the end of this pass: gains ramp across the pass to the
/// values reached; a rate glide sets the ratio that libsamplerate ramps to across the pass.
@_noLocks
func advanceGlides(_ voice: UnsafeMutablePointer<StemVoice>, frames: Int) {
  if voice.pointee.levels.isGliding { voice.pointee.levels.advanceGlides(frames: frames) }
  if voice.pointee.rateGlide.isActive {
    voice.pointee.rate = voice.pointee.rateGlide.advance(frames: frames)
    if voice.pointee.rateGlide.isFinished {
      voice.pointee.rateGlide = Glide()
      voice.pointee.rateGlideLanding = true  // HeldConverter.swift: the sinc lands it
    }
    applyRate(voice)
  }
  publishGlides(voice)
}

@_noLocks
func renderVoice(
  _ state: UnsafeMutablePointer<RenderState>, _ voice: UnsafeMutablePointer<StemVoice>,
  slot: Int, transportStart: Int, frameCount n: Int
) {
  let cells = meterCells(voice)
  guard syncVoice(voice), !voice.pointee.finished else {
    voice.pointee.meter.accumulateSilence(count: n, into: cells)
    return
  }
  let offset = Swift.max(0, voice.pointee.joinFrame &- transportStart)
  if offset >= n { return }
  if !voice.pointee.startedSinceSync {
    // Its audio arrived after the frame it should have started on (a slow disk, a late join):
    // skip what it missed so it sounds in step with the transport.
    voice.pointee.startedSinceSync = true
    let late = transportStart &- voice.pointee.joinFrame
    if late > 0 {
      voice.pointee.skipFrames &+= Int(Double(late) / voice.pointee.ratio + 0.5)
      voice.pointee.heard += Double(late) * voice.pointee.rate / voice.pointee.rateScale
    }
  }
  let count = n &- offset
  let rateBefore = voice.pointee.rate
  if voice.pointee.levels.isGliding || voice.pointee.rateGlide.isActive {
    advanceGlides(voice, frames: count)
  }
  // Every frame of the pass is heard time, silence of an underrun too (its frames are skipped
  // later). A rate moved by a glide ramps across the pass: the mean of its ends.
  let meanRate = (rateBefore + voice.pointee.rate) * 0.5
  voice.pointee.heard += Double(count) * meanRate / voice.pointee.rateScale
  // A voice at rate 1 with steady gains mixes straight from its ring (not while a song change
  // fades it, nor through plugin inserts: those work on a copy).
  let inserts = slot < state.pointee.maxVoices ? state.pointee.inserts.stems[slot] : nil
  if !voice.pointee.songFade.isActive && inserts == nil && mixFromRing(state, voice, slot: slot, offset: offset, count: count, cells: cells)
  {
    voice.pointee.shared.pointee.publishHeard(sourceFrames: voice.pointee.heard, transportFrame: transportStart &+ n)
    return
  }
  let ch = voice.pointee.channels
  let source = state.pointee.scratch
  selectConverter(state, voice)  // the sinc or zita (HeldConverter.swift)
  let got = pullFrames(voice, into: source, count: count)
  let shared = voice.pointee.shared
  shared.pointee.readCounter.store(voice.pointee.audio.readCounter, ordering: .relaxed)
  // Frames the channel EQ filters: all of them, but only up to the stream's end once it ended
  // (its tail is cut there, whatever the block size, so live equals offline).
  var eqFrames = count
  if got < count {
    source.advanced(by: got &* ch).update(repeating: 0, count: (count &- got) &* ch)
    let ended = voice.pointee.bypass && voice.pointee.stretch == nil ? streamEndsHere(voice, extra: 0) : voice.pointee.drained
    if ended || shared.pointee.readFailed.load(ordering: .relaxed) {
      eqFrames = got
      if !voice.pointee.finished {
        voice.pointee.finished = true
        shared.pointee.finished.store(true, ordering: .releasing)
        // A voice fading out for good says nothing: its slot may already belong to the stem
        // rebuilt in its place (`replaceVoice`), whose events these would seem to be.
        if !voice.pointee.removing { _ = state.pointee.events.push(.stemFinished(slot: Int32(slot))) }
      }
    } else {
      // The frames that should have sounded are skipped when the audio arrives.
      voice.pointee.skipFrames &+= Int(Double(count &- got) / voice.pointee.ratio + 0.5)
      shared.pointee.underruns.add(1, ordering: .relaxed)
      if !voice.pointee.underrunning {
        voice.pointee.underrunning = true
        if !voice.pointee.removing { _ = state.pointee.events.push(.underrun(slot: Int32(slot))) }
      }
    }
  } else {
    voice.pointee.underrunning = false
  }
  if voice.pointee.songFade.isActive {
    applySongFade(voice, source, count: count, clock: transportStart &+ offset)
  }
  // The channel EQ, before the fader and pan (a console channel's order). Bypassed: no-op.
  voice.pointee.eq.process(left: source, right: ch == 2 ? source + 1 : nil, stride: ch, count: eqFrames)
  // Then its plugin inserts (Inserts.swift), still before the fader.
  if let inserts {
    runInserts(state, inserts, target: .stem(slot: Int32(slot)), left: source, right: ch == 2 ? source + 1 : nil, stride: ch, count: count)
  }
  voice.pointee.levels.applyStages(left: source, right: ch == 2 ? source + 1 : nil, stride: ch, count: count)
  shared.pointee.publishHeard(sourceFrames: voice.pointee.heard, transportFrame: transportStart &+ n)
  mixVoice(state, voice, slot: slot, source: source, offset: offset, count: count, cells: cells)
}

/// Adds `count` source frames to the mix at `offset` with the voice's ramped gains, and meters.
@_noLocks
func mixVoice(
  _ state: UnsafeMutablePointer<RenderState>, _ voice: UnsafeMutablePointer<StemVoice>,
  slot: Int, source: UnsafeMutablePointer<Float>, offset: Int, count: Int, cells: UnsafePointer<MeterCells>
) {
  var mixL = state.pointee.busLeft + offset
  var mixR = state.pointee.busRight + offset
  let stepL = voice.pointee.levels.gainLeft.advance(frames: count)
  let stepR = voice.pointee.levels.gainRight.advance(frames: count)
  let preFader = state.pointee.preFaderMeters
  mixVoiceSends(
    state, voice, slot: slot, source: source, offset: offset, count: count, stepL: stepL, stepR: stepR,
    mono: voice.pointee.channels == 1)
  mixVoiceCue(
    state, voice, slot: slot, source: source, offset: offset, count: count, stepL: stepL, stepR: stepR,
    mono: voice.pointee.channels == 1)
  // A stem routed to a bus mixes into the bus (not while an old song fades out on the detached
  // bus: it keeps its own clock there). Buses.swift.
  if voice.pointee.bus >= 0, !voice.pointee.detached, let input = state.pointee.buses.input(voice.pointee.bus) {
    mixL = input.left + offset
    mixR = input.right + offset
  }
  // A stem with direct outs is written to its own ports instead of the master bus.
  let directIndex = 2 &* slot
  if let dl = state.pointee.directOutputs[directIndex], let dr = state.pointee.directOutputs[directIndex &+ 1] {
    let at = state.pointee.passOffset &+ offset
    mixL = dl + at
    mixR = dr + at
    voice.pointee.routeFadeTotal = 0
    if state.pointee.stemTaps {
      // Stem export: into its tap and the master in one pass (StemTaps.swift).
      mixVoiceIntoTap(
        state, voice, slot: slot, source: source, offset: offset, count: count, tap: (dl, dr), stepL: stepL, stepR: stepR,
        cells: cells, preFader: preFader)
      return
    }
  }
  let mono = voice.pointee.channels == 1
  if voice.pointee.routeFadeTotal > 0 {
    // Just routed elsewhere while playing: a 10 ms crossfade from the old destination to the new.
    var oldL = state.pointee.busLeft + offset, oldR = state.pointee.busRight + offset
    if voice.pointee.previousBus >= 0, !voice.pointee.detached, let input = state.pointee.buses.input(voice.pointee.previousBus) {
      oldL = input.left + offset
      oldR = input.right + offset
    }
    mixRouteCrossfade(voice, source: source, count: count, new: (mixL, mixR), old: (oldL, oldR), stepL: stepL, stepR: stepR, mono: mono)
    postFaderMeter(
      state, voice, source: source, count: count, stepL: stepL, stepR: stepR,
      mono: mono, cells: cells, preFader: preFader)
    return
  }
  mixAndMeter(
    state, voice, source: source, count: count, stepL: stepL, stepR: stepR, mono: mono, cells: cells, preFader: preFader,
    left: mixL, right: mixR)
}

/// Adds a voice's `count` source frames times its gains (steady, or ramping from `stepL`/`stepR`
/// to its levels' current gains) to `left` and `right`, and meters it. Steady gains (the usual
/// case) take one SIMD pass that mixes and takes the meter's levels.
@_noLocks @inline(__always)
func mixAndMeter(
  _ state: UnsafeMutablePointer<RenderState>, _ voice: UnsafeMutablePointer<StemVoice>,
  source: UnsafeMutablePointer<Float>, count: Int,
  stepL: (start: Float, step: Float, rampFrames: Int), stepR: (start: Float, step: Float, rampFrames: Int),
  mono: Bool, cells: UnsafePointer<MeterCells>, preFader: Bool, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>
) {
  var levels: BlockLevels? = nil
  if stepL.rampFrames == 0 && stepR.rampFrames == 0 {
    levels = mixSteady(
      source, mono: mono, frames: count, gainLeft: stepL.start, gainRight: stepR.start,
      left: left, right: right, metering: state.pointee.stemMetering)
  } else {
    let targets = (voice.pointee.levels.gainLeft.current, voice.pointee.levels.gainRight.current)
    mixRamping(source, mono: mono, count: count, stepL: stepL, stepR: stepR, targets: targets, left: left, right: right)
  }
  postFaderMeter(
    state, voice, source: source, count: count, stepL: stepL, stepR: stepR,
    mono: mono, cells: cells, preFader: preFader, levels: levels)
}

/// Meters a voice from one SIMD scan of its source. Post-fader values are the source's scaled
/// by the channel gains (exact while a gain is steady; during a ramp the larger end of the
/// ramp is used for the peak and the mean of the squared ends for the average).
@_noLocks
func postFaderMeter(
  _ state: UnsafeMutablePointer<RenderState>, _ voice: UnsafeMutablePointer<StemVoice>,
  source: UnsafeMutablePointer<Float>, count: Int,
  stepL: (start: Float, step: Float, rampFrames: Int), stepR: (start: Float, step: Float, rampFrames: Int),
  mono: Bool, cells: UnsafePointer<MeterCells>, preFader: Bool = false, levels: BlockLevels? = nil
) {
  guard state.pointee.stemMetering else { return }
  var gainL: (peak: Float, square: Float) = (1, 1)
  var gainR: (peak: Float, square: Float) = (1, 1)
  if !preFader {
    let endL = voice.pointee.levels.gainLeft.current, endR = voice.pointee.levels.gainRight.current
    let a = Swift.abs(stepL.start), b = Swift.abs(endL), c = Swift.abs(stepR.start), d = Swift.abs(endR)
    gainL = (Swift.max(a, b), (a * a + b * b) / 2)
    gainR = (Swift.max(c, d), (c * c + d * d) / 2)
  }
  // |x|·g > 1  ⇔  |x| > 1/g (no clip is possible at gain 0).
  let threshold = (
    gainL.peak > 0 ? 1 / gainL.peak : Float.greatestFiniteMagnitude,
    gainR.peak > 0 ? 1 / gainR.peak : Float.greatestFiniteMagnitude
  )
  let peak: (Float, Float), sumSquares: (Float, Float), clips: (Int, Int)
  if let levels {
    // Levels already taken by the mix pass; overs need a scan only when a peak crosses 1/gain.
    peak = levels.peak
    sumSquares = levels.sumSquares
    let over = peak.0 > threshold.0 || peak.1 > threshold.1
    clips = over ? scanBlock(source, frames: count, channels: mono ? 1 : 2, clipThreshold: threshold).clips : (0, 0)
  } else {
    let scan = scanBlock(source, frames: count, channels: mono ? 1 : 2, clipThreshold: threshold)
    peak = scan.peak
    sumSquares = scan.sumSquares
    clips = scan.clips
  }
  voice.pointee.meter.add(
    peak: (peak.0 * gainL.peak, peak.1 * gainR.peak),
    sumSquares: (sumSquares.0 * gainL.square, sumSquares.1 * gainR.square),
    clips: clips, frames: count, into: cells)
}

/// Mixes `count` frames into the new destination and the old one with complementary linear
/// gains (the voice's `routeFade`, Buses.swift): a route change while playing never clicks.
@_noLocks
func mixRouteCrossfade(
  _ voice: UnsafeMutablePointer<StemVoice>, source: UnsafeMutablePointer<Float>, count: Int,
  new: (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>), old: (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>),
  stepL: (start: Float, step: Float, rampFrames: Int), stepR: (start: Float, step: Float, rampFrames: Int), mono: Bool
) {
  var gl = stepL.start, gr = stepR.start
  let tl = voice.pointee.levels.gainLeft.current, tr = voice.pointee.levels.gainRight.current
  let total = voice.pointee.routeFadeTotal
  var done = voice.pointee.routeFadeDone
  let inverse = 1 / Float(total)
  for i in 0..<count {
    let xl = mono ? source[i] : source[2 &* i]
    let xr = mono ? xl : source[2 &* i &+ 1]
    let t = done < total ? Float(done) * inverse : 1
    let l = xl * gl, r = xr * gr
    new.0[i] += l * t
    new.1[i] += r * t
    old.0[i] += l * (1 - t)
    old.1[i] += r * (1 - t)
    if done < total { done &+= 1 }
    gl = i &+ 1 < stepL.rampFrames ? gl + stepL.step : tl
    gr = i &+ 1 < stepR.rampFrames ? gr + stepR.step : tr
  }
  voice.pointee.routeFadeDone = done
  if done >= total { voice.pointee.routeFadeTotal = 0 }
}
