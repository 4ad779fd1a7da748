@_exported import StemdeckRing
import CSampleRate

/// Everything the realtime renderer owns. Built by the control thread, then used only by the
/// thread that calls `renderBlock` (the JACK process thread, or the offline renderer's loop)
/// until the driver has stopped calling it; then destroyed on the control thread.
///
/// Holds only trivial data, ring handles and preallocated buffers: no classes, no arrays.
public struct RenderState: ~Copyable {
  @usableFromInline var commands: Consumer<EngineCommand>
  @usableFromInline var events: Producer<EngineEvent>
  @usableFromInline var retired: Producer<UnsafeMutablePointer<StemVoice>>
  public let status: UnsafeMutablePointer<EngineStatus>
  @usableFromInline let voices: UnsafeMutablePointer<UnsafeMutablePointer<StemVoice>?>
  public let maxVoices: Int
  /// One past the highest occupied slot.
  @usableFromInline var slotLimit = 0
  /// Largest number of frames rendered in one pass; longer blocks are split.
  public let maxBlockFrames: Int
  @usableFromInline let mixLeft: UnsafeMutablePointer<Float>
  @usableFromInline let mixRight: UnsafeMutablePointer<Float>
  /// Source frames of one voice (interleaved, up to 2 channels) for one pass.
  @usableFromInline let scratch: UnsafeMutablePointer<Float>
  /// Per-slot direct-out buffers (left, right) for the current block, set by the driver before
  /// each `renderBlock` (nil where a stem has no direct outs). `maxVoices` × 2 entries.
  public let directOutputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
  /// Offset of the current pass within the driver's block (for direct outs).
  @usableFromInline var passOffset = 0
  public let sampleRate: Double

  @usableFromInline var transportFrame = 0
  @usableFromInline var playing = false
  /// Waiting for every voice to have audio after a seek or start.
  @usableFromInline var holding = false
  @usableFromInline var playAfterHold = false
  @usableFromInline var holdFramesLeft = 0
  /// A seek requested while playing waits for the fade-out.
  @usableFromInline var pendingSeekFrame = -1
  @usableFromInline var pendingSeekEpoch = 0
  @usableFromInline var pendingPause = false
  @usableFromInline var fade: GainRamp
  @usableFromInline var masterGain: GainRamp
  @usableFromInline var masterMeter: MeterAccumulator
  @usableFromInline var preFaderMeters = false
  @usableFromInline var stemMetering = true
  @usableFromInline var effects: EffectBank
  /// Input port buffers for the current block, set by the driver before `renderBlock` (nil: none).
  public var inputLeft: UnsafeMutablePointer<Float>?
  public var inputRight: UnsafeMutablePointer<Float>?
  @usableFromInline var recordTake: UnsafeMutablePointer<RecordTake>?
  @usableFromInline var recordPaused = false
  @usableFromInline var inputMeter: MeterAccumulator
  /// Frames a voice must have buffered before a held transport starts.
  @usableFromInline let primeFrames: Int

  /// One past the highest occupied slot (drivers fill `directOutputs` up to here).
  public var slotLimitForDrivers: Int { @_noLocks get { slotLimit } }

  /// Creates the renderer's state and the control thread's ends of its three rings.
  public static func make(
    sampleRate: Double, maxVoices: Int = 1024, maxBlockFrames: Int = 4096
  ) -> RenderStateAndRings {
    let commands = SPSCRing.make(minimumCapacity: 8192, of: EngineCommand.self)
    let events = SPSCRing.make(minimumCapacity: 4096, of: EngineEvent.self)
    let retired = SPSCRing.make(minimumCapacity: maxVoices * 2, of: UnsafeMutablePointer<StemVoice>.self)
    let status = UnsafeMutablePointer<EngineStatus>.allocate(capacity: 1)
    status.initialize(to: EngineStatus())
    let voices = UnsafeMutablePointer<UnsafeMutablePointer<StemVoice>?>.allocate(capacity: maxVoices)
    voices.initialize(repeating: nil, count: maxVoices)
    let direct = UnsafeMutablePointer<UnsafeMutablePointer<Float>?>.allocate(capacity: maxVoices * 2)
    direct.initialize(repeating: nil, count: maxVoices * 2)
    func buffer(_ n: Int) -> UnsafeMutablePointer<Float> {
      let p = UnsafeMutablePointer<Float>.allocate(capacity: n)
      p.initialize(repeating: 0, count: n)
      return p
    }
    let state = UnsafeMutablePointer<RenderState>.allocate(capacity: 1)
    state.initialize(to: RenderState(
      commands: commands.consumer, events: events.producer, retired: retired.producer, status: status,
      voices: voices, maxVoices: maxVoices, maxBlockFrames: maxBlockFrames,
      mixLeft: buffer(maxBlockFrames), mixRight: buffer(maxBlockFrames),
      scratch: buffer(maxBlockFrames * 2), directOutputs: direct, sampleRate: sampleRate))
    return RenderStateAndRings(
      state: state,
      rings: EngineRings(commands: commands.producer, events: events.consumer, retired: retired.consumer))
  }

  init(
    commands: consuming Consumer<EngineCommand>, events: consuming Producer<EngineEvent>,
    retired: consuming Producer<UnsafeMutablePointer<StemVoice>>, status: UnsafeMutablePointer<EngineStatus>,
    voices: UnsafeMutablePointer<UnsafeMutablePointer<StemVoice>?>, maxVoices: Int, maxBlockFrames: Int,
    mixLeft: UnsafeMutablePointer<Float>, mixRight: UnsafeMutablePointer<Float>,
    scratch: UnsafeMutablePointer<Float>, directOutputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>,
    sampleRate: Double
  ) {
    self.commands = commands
    self.events = events
    self.retired = retired
    self.status = status
    self.voices = voices
    self.maxVoices = maxVoices
    self.maxBlockFrames = maxBlockFrames
    self.mixLeft = mixLeft
    self.mixRight = mixRight
    self.scratch = scratch
    self.directOutputs = directOutputs
    self.sampleRate = sampleRate
    self.fade = GainRamp(gain: 1, length: Swift.max(1, Int(sampleRate * 0.005)))
    self.masterGain = GainRamp(gain: 1, length: Swift.max(1, Int(sampleRate * 0.010)))
    self.masterMeter = MeterAccumulator(sampleRate: sampleRate)
    self.primeFrames = Swift.min(8192, Int(sampleRate / 4))
    self.effects = EffectBank(sampleRate: sampleRate)
    self.inputMeter = MeterAccumulator(sampleRate: sampleRate)
  }

  /// Destroys a state whose driver has stopped calling `renderBlock`: frees the buffers and
  /// hands every voice still installed to `dispose` (control thread).
  public static func destroy(
    _ state: UnsafeMutablePointer<RenderState>, dispose: (UnsafeMutablePointer<StemVoice>) -> Void
  ) {
    for slot in 0..<state.pointee.maxVoices {
      if let voice = state.pointee.voices[slot] { dispose(voice) }
    }
    state.pointee.voices.deallocate()
    state.pointee.mixLeft.deallocate()
    state.pointee.mixRight.deallocate()
    state.pointee.scratch.deallocate()
    state.pointee.directOutputs.deallocate()
    let status = state.pointee.status
    state.deinitialize(count: 1)
    state.deallocate()
    status.deinitialize(count: 1)
    status.deallocate()
  }
}

/// A new renderer state and the control thread's ends of its rings.
@frozen
public struct RenderStateAndRings: ~Copyable {
  public let state: UnsafeMutablePointer<RenderState>
  public var rings: EngineRings
}

/// The control thread's ends of the renderer's rings. Used under the control thread's lock, so
/// each ring still has one producer and one consumer at a time.
public struct EngineRings: ~Copyable, Sendable {
  public var commands: Producer<EngineCommand>
  public var events: Consumer<EngineEvent>
  public var retired: Consumer<UnsafeMutablePointer<StemVoice>>
}

/// Renders `frameCount` frames of the master into `left` and `right`.
///
/// - Realtime: safe. Wait-free; allocates nothing, takes no locks, makes no syscalls (the one C
///   call, `src_process`, carries a waiver). Time is bounded by the number of voices and commands.
///   Proven by `@_noLocks` in debug and release builds.
/// - Thread: the audio thread only (JACK's process thread, or the offline renderer). Owns
///   `state`; nothing else may touch it while the driver runs.
/// - Failure: never traps on bad audio; a stem that underruns plays silence and counts it.
@_noLocks
public func renderBlock(
  _ state: UnsafeMutablePointer<RenderState>,
  left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, frameCount: Int
) {
  applyCommands(state)
  let direct = state.pointee.directOutputs
  for i in 0..<(state.pointee.slotLimit &* 2) {
    if let buffer = direct[i] { buffer.update(repeating: 0, count: frameCount) }
  }
  var done = 0
  while done < frameCount {
    let n = Swift.min(frameCount &- done, state.pointee.maxBlockFrames)
    state.pointee.passOffset = done
    renderPass(state, left: left + done, right: right + done, frameCount: n)
    done &+= n
  }
  state.pointee.status.pointee.blocksRendered.add(1, ordering: .relaxed)
}

/// Applies queued commands (at most 4096 per block, so a flood cannot stall the audio).
@_noLocks
func applyCommands(_ state: UnsafeMutablePointer<RenderState>) {
  var applied = 0
  while applied < 4096, let command = state.pointee.commands.pop() {
    applied &+= 1
    switch command {
    case .addVoice(let slot, let voice):
      let s = Int(slot)
      guard s >= 0, s < state.pointee.maxVoices, state.pointee.voices[s] == nil else { continue }
      state.pointee.voices[s] = voice
      if s >= state.pointee.slotLimit { state.pointee.slotLimit = s &+ 1 }
    case .removeVoice(let slot):
      guard let voice = voiceAt(state, slot) else { continue }
      voice.pointee.removing = true
      voice.pointee.gainLeft.set(target: 0)
      voice.pointee.gainRight.set(target: 0)
    case .setGains(let slot, let l, let r):
      guard let voice = voiceAt(state, slot), !voice.pointee.removing else { continue }
      voice.pointee.gainLeft.set(target: l)
      voice.pointee.gainRight.set(target: r)
    case .setRatio(let slot, let ratio):
      guard let voice = voiceAt(state, slot) else { continue }
      if ratio != voice.pointee.ratio {
        if voice.pointee.bypass {
          // Leaving the bypass: start the converter from a clean state.
          voice.pointee.bypass = false
          resetResampler(voice)
        }
        voice.pointee.ratio = ratio
      }
    case .setMasterGain(let gain):
      state.pointee.masterGain.set(target: gain)
    case .play(let fadeIn):
      state.pointee.pendingPause = false
      if state.pointee.playing { state.pointee.fade.set(target: 1); continue }
      if fadeIn { state.pointee.fade.jump(to: 0) } else { state.pointee.fade.jump(to: 1) }
      state.pointee.fade.set(target: 1)
      state.pointee.holding = true
      state.pointee.playAfterHold = true
      state.pointee.holdFramesLeft = Int(state.pointee.sampleRate)
    case .pause:
      state.pointee.playAfterHold = false
      if state.pointee.playing {
        state.pointee.pendingPause = true
        state.pointee.fade.set(target: 0)
      }
    case .seek(let frame, let epoch):
      if state.pointee.playing {
        state.pointee.pendingSeekFrame = frame
        state.pointee.pendingSeekEpoch = epoch
        state.pointee.fade.set(target: 0)
      } else {
        performSeek(state, frame: frame, epoch: epoch, resume: state.pointee.playAfterHold)
      }
    case .setJoinFrameAfterSeek(let slot, let frame):
      voiceAt(state, slot)?.pointee.joinFrameAfterSeek = frame
    case .setMeterPoint(let preFader):
      state.pointee.preFaderMeters = preFader
    case .setStemMetering(let on):
      state.pointee.stemMetering = on
    case .loadEffect(let slot, let sample):
      state.pointee.effects.load(slot: Int(slot), sample: sample)
    case .unloadEffect(let slot):
      state.pointee.effects.unload(slot: Int(slot))
      _ = state.pointee.events.push(.effectUnloaded(slot: slot))
    case .fireEffect(let slot, let l, let r):
      state.pointee.effects.fire(slot: Int(slot), gainLeft: l, gainRight: r)
    case .stopEffect(let slot):
      state.pointee.effects.stop(slot: Int(slot))
    case .startRecording(let take):
      state.pointee.recordTake = take
      state.pointee.recordPaused = false
    case .pauseRecording(let paused):
      state.pointee.recordPaused = paused
    case .stopRecording:
      state.pointee.recordTake = nil
      _ = state.pointee.events.push(.recordingStopped)
    }
  }
  if applied > 0 { state.pointee.status.pointee.commandsApplied.add(applied, ordering: .relaxed) }
}

@_noLocks @inline(__always)
func voiceAt(_ state: UnsafeMutablePointer<RenderState>, _ slot: Int32) -> UnsafeMutablePointer<StemVoice>? {
  let s = Int(slot)
  guard s >= 0, s < state.pointee.maxVoices else { return nil }
  return state.pointee.voices[s]
}

@_noLocks
func performSeek(_ state: UnsafeMutablePointer<RenderState>, frame: Int, epoch: Int, resume: Bool) {
  state.pointee.transportFrame = frame
  state.pointee.pendingSeekFrame = -1
  state.pointee.playing = false
  state.pointee.holding = true
  state.pointee.playAfterHold = resume
  state.pointee.holdFramesLeft = Int(state.pointee.sampleRate)
  if resume { state.pointee.fade.jump(to: 0); state.pointee.fade.set(target: 1) }
  state.pointee.status.pointee.appliedEpoch.store(epoch, ordering: .relaxed)
  for slot in 0..<state.pointee.slotLimit {
    guard let voice = state.pointee.voices[slot] else { continue }
    voice.pointee.epoch = epoch
    voice.pointee.synced = false
    let join = voice.pointee.joinFrameAfterSeek
    voice.pointee.joinFrame = join == Int.min ? frame : join
    voice.pointee.joinFrameAfterSeek = Int.min
    voice.pointee.shared.pointee.synced.store(false, ordering: .relaxed)
  }
}

@_noLocks
func resetResampler(_ voice: UnsafeMutablePointer<StemVoice>) {
  // RT-WAIVER: src_reset only clears the converter's internal buffers (libsamplerate 0.2.2;
  // design.md: no allocation over 10,000 calls, no lock).
  _ = _unsafePerformance { src_reset(voice.pointee.resampler) }
}

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
  resetResampler(voice)
  shared.pointee.finished.store(false, ordering: .relaxed)
  shared.pointee.synced.store(true, ordering: .relaxed)
  shared.pointee.readCounter.store(voice.pointee.audio.readCounter, ordering: .relaxed)
  return true
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

@_noLocks
func renderPass(
  _ state: UnsafeMutablePointer<RenderState>,
  left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, frameCount n: Int
) {
  state.pointee.captureInputs(frameCount: n)
  let mixL = state.pointee.mixLeft
  let mixR = state.pointee.mixRight
  mixL.update(repeating: 0, count: n)
  mixR.update(repeating: 0, count: n)

  if state.pointee.holding {
    var allPrimed = true
    for slot in 0..<state.pointee.slotLimit {
      guard let voice = state.pointee.voices[slot] else { continue }
      if !voiceIsPrimed(voice, primeFrames: state.pointee.primeFrames) { allPrimed = false }
    }
    state.pointee.holdFramesLeft &-= n
    if !allPrimed && state.pointee.holdFramesLeft <= 0 {
      _ = state.pointee.events.push(.primeTimeout)
      allPrimed = true
    }
    if allPrimed {
      state.pointee.holding = false
      state.pointee.playing = state.pointee.playAfterHold
    }
  }

  let playing = state.pointee.playing
  let start = state.pointee.transportFrame
  for slot in 0..<state.pointee.slotLimit {
    guard let voice = state.pointee.voices[slot] else { continue }
    if voice.pointee.removing {
      let faded = !voice.pointee.gainLeft.isRamping
      if faded || !playing {
        retireVoice(state, slot: slot, voice: voice)
        continue
      }
    }
    if playing {
      renderVoice(state, voice, slot: slot, transportStart: start, frameCount: n)
    } else {
      _ = syncVoice(voice)
      voice.pointee.meter.accumulateSilence(count: n, into: meterCells(voice))
    }
  }

  // Sound effects play whatever the transport does: they are summed after the transport fade,
  // into the scratch buffer (free once the voices are done), then go through the master gain.
  let fxL = state.pointee.scratch
  let fxR = state.pointee.scratch + state.pointee.maxBlockFrames
  let effectsActive = state.pointee.effects.activeCount() > 0
  if effectsActive {
    fxL.update(repeating: 0, count: n)
    fxR.update(repeating: 0, count: n)
    state.pointee.effects.render(intoLeft: fxL, right: fxR, frameCount: n)
  }

  // Master: transport fade, effects, master gain, then meters.
  let fadeStep = state.pointee.fade.advance(frames: n)
  let gainStep = state.pointee.masterGain.advance(frames: n)
  var fadeGain = fadeStep.start
  var masterGain = gainStep.start
  if fadeStep.rampFrames == 0 && gainStep.rampFrames == 0 {
    if effectsActive {
      for i in 0..<n {
        left[i] = (mixL[i] * fadeGain + fxL[i]) * masterGain
        right[i] = (mixR[i] * fadeGain + fxR[i]) * masterGain
      }
    } else {
      let g = fadeGain * masterGain
      for i in 0..<n {
        left[i] = mixL[i] * g
        right[i] = mixR[i] * g
      }
    }
  } else {
    let fadeTarget = state.pointee.fade.current
    let gainTarget = state.pointee.masterGain.current
    for i in 0..<n {
      let fl: Float = effectsActive ? fxL[i] : 0
      let fr: Float = effectsActive ? fxR[i] : 0
      left[i] = (mixL[i] * fadeGain + fl) * masterGain
      right[i] = (mixR[i] * fadeGain + fr) * masterGain
      if i < fadeStep.rampFrames { fadeGain += fadeStep.step } else { fadeGain = fadeTarget }
      if i < gainStep.rampFrames { masterGain += gainStep.step } else { masterGain = gainTarget }
    }
  }
  state.pointee.masterMeter.accumulate(
    left: left, right: right, count: n,
    into: state.pointee.status.pointee.masterMeters)

  if playing {
    state.pointee.transportFrame &+= n
    // A fade-out that reached silence completes a pause or a seek.
    if !state.pointee.fade.isRamping && state.pointee.fade.current == 0 {
      if state.pointee.pendingSeekFrame >= 0 {
        performSeek(state, frame: state.pointee.pendingSeekFrame, epoch: state.pointee.pendingSeekEpoch,
                    resume: !state.pointee.pendingPause)
        state.pointee.pendingPause = false
      } else if state.pointee.pendingPause {
        state.pointee.playing = false
        state.pointee.pendingPause = false
        state.pointee.fade.jump(to: 1)
      }
    }
  }
  let status = state.pointee.status
  status.pointee.transportFrame.store(state.pointee.transportFrame, ordering: .relaxed)
  let published: TransportState = state.pointee.playing ? .playing : (state.pointee.holding && state.pointee.playAfterHold ? .waitingForDisk : .paused)
  status.pointee.transportState.store(published.rawValue, ordering: .relaxed)
}

@_noLocks @inline(__always)
func meterCells(_ voice: UnsafeMutablePointer<StemVoice>) -> UnsafePointer<MeterCells> {
  UnsafePointer(voice.pointee.shared.pointee.meters)
}

@_noLocks
func retireVoice(_ state: UnsafeMutablePointer<RenderState>, slot: Int, voice: UnsafeMutablePointer<StemVoice>) {
  // The return ring holds twice as many entries as there are slots, so this cannot fail; if it
  // ever did, keeping the voice installed (silent) is safer than leaking it unseen.
  guard state.pointee.retired.push(voice) else { return }
  state.pointee.voices[slot] = nil
  while state.pointee.slotLimit > 0 && state.pointee.voices[state.pointee.slotLimit &- 1] == nil {
    state.pointee.slotLimit &-= 1
  }
}

/// Pulls `count` frames of the voice's (resampled) audio into `destination`; returns frames made.
@_noLocks
func pullFrames(_ voice: UnsafeMutablePointer<StemVoice>, into destination: UnsafeMutablePointer<Float>, count: Int) -> Int {
  let ch = voice.pointee.channels
  if voice.pointee.bypass {
    let got = voice.pointee.audio.read(into: UnsafeMutableBufferPointer(start: destination, count: count &* ch))
    return got / ch
  }
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
    data.output_frames = count &- produced
    data.src_ratio = voice.pointee.ratio
    data.end_of_input = ends && segments.second.count == 0 ? 1 : 0
    let resampler = voice.pointee.resampler
    // RT-WAIVER: src_process makes no allocation and takes no lock (libsamplerate 0.2.2; checked
    // with an allocation counter over 10,000 calls at changing ratios, design.md). A changed
    // src_ratio is ramped smoothly across the output block by the library.
    let error = _unsafePerformance { src_process(resampler, &data) }
    if error != 0 { break }
    voice.pointee.audio.release(count: data.input_frames_used &* ch)
    produced &+= data.output_frames_gen
    if data.input_frames_used == 0 && data.output_frames_gen == 0 {
      if data.end_of_input != 0 { voice.pointee.drained = true }
      break
    }
  }
  return produced
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
  let count = n &- offset
  let ch = voice.pointee.channels
  let source = state.pointee.scratch
  let got = pullFrames(voice, into: source, count: count)
  let shared = voice.pointee.shared
  shared.pointee.readCounter.store(voice.pointee.audio.readCounter, ordering: .relaxed)
  if got < count {
    source.advanced(by: got &* ch).update(repeating: 0, count: (count &- got) &* ch)
    let ended = voice.pointee.bypass ? streamEndsHere(voice, extra: 0) : voice.pointee.drained
    if ended || shared.pointee.readFailed.load(ordering: .relaxed) {
      if !voice.pointee.finished {
        voice.pointee.finished = true
        shared.pointee.finished.store(true, ordering: .releasing)
        _ = state.pointee.events.push(.stemFinished(slot: Int32(slot)))
      }
    } else {
      shared.pointee.underruns.add(1, ordering: .relaxed)
      if !voice.pointee.underrunning {
        voice.pointee.underrunning = true
        _ = state.pointee.events.push(.underrun(slot: Int32(slot)))
      }
    }
  } else {
    voice.pointee.underrunning = false
  }
  mixVoice(state, voice, slot: slot, source: source, offset: offset, count: count, cells: cells)
}

/// Adds `count` source frames to the mix at `offset` with the voice's ramped gains, and meters.
@_noLocks
func mixVoice(
  _ state: UnsafeMutablePointer<RenderState>, _ voice: UnsafeMutablePointer<StemVoice>,
  slot: Int, source: UnsafeMutablePointer<Float>, offset: Int, count: Int, cells: UnsafePointer<MeterCells>
) {
  var mixL = state.pointee.mixLeft + offset
  var mixR = state.pointee.mixRight + offset
  let stepL = voice.pointee.gainLeft.advance(frames: count)
  let stepR = voice.pointee.gainRight.advance(frames: count)
  let preFader = state.pointee.preFaderMeters
  // A stem with direct outs is written to its own ports instead of the master bus.
  let directIndex = 2 &* slot
  if let dl = state.pointee.directOutputs[directIndex], let dr = state.pointee.directOutputs[directIndex &+ 1] {
    let at = state.pointee.passOffset &+ offset
    mixL = dl + at
    mixR = dr + at
  }
  if voice.pointee.channels == 1 {
    if stepL.rampFrames == 0 && stepR.rampFrames == 0 {
      let gl = stepL.start, gr = stepR.start
      for i in 0..<count {
        let x = source[i]
        mixL[i] += x * gl
        mixR[i] += x * gr
      }
    } else {
      var gl = stepL.start, gr = stepR.start
      let tl = voice.pointee.gainLeft.current, tr = voice.pointee.gainRight.current
      for i in 0..<count {
        let x = source[i]
        mixL[i] += x * gl
        mixR[i] += x * gr
        gl = i < stepL.rampFrames ? gl + stepL.step : tl
        gr = i < stepR.rampFrames ? gr + stepR.step : tr
      }
    }
    postFaderMeter(state, voice, source: source, count: count, stepL: stepL, stepR: stepR,
                   mono: true, cells: cells, preFader: preFader)
  } else {
    if stepL.rampFrames == 0 && stepR.rampFrames == 0 {
      let gl = stepL.start, gr = stepR.start
      for i in 0..<count {
        mixL[i] += source[2 &* i] * gl
        mixR[i] += source[2 &* i &+ 1] * gr
      }
    } else {
      var gl = stepL.start, gr = stepR.start
      let tl = voice.pointee.gainLeft.current, tr = voice.pointee.gainRight.current
      for i in 0..<count {
        mixL[i] += source[2 &* i] * gl
        mixR[i] += source[2 &* i &+ 1] * gr
        gl = i < stepL.rampFrames ? gl + stepL.step : tl
        gr = i < stepR.rampFrames ? gr + stepR.step : tr
      }
    }
    postFaderMeter(state, voice, source: source, count: count, stepL: stepL, stepR: stepR,
                   mono: false, cells: cells, preFader: preFader)
  }
}

/// Meters a voice from one SIMD scan of its source. Post-fader values are the source's scaled
/// by the channel gains (exact while a gain is steady; during a 10 ms ramp the larger end of the
/// ramp is used for the peak and the mean of the squared ends for the average).
@_noLocks
func postFaderMeter(
  _ state: UnsafeMutablePointer<RenderState>, _ voice: UnsafeMutablePointer<StemVoice>,
  source: UnsafeMutablePointer<Float>, count: Int,
  stepL: (start: Float, step: Float, rampFrames: Int), stepR: (start: Float, step: Float, rampFrames: Int),
  mono: Bool, cells: UnsafePointer<MeterCells>, preFader: Bool = false
) {
  guard state.pointee.stemMetering else { return }
  var gainL: (peak: Float, square: Float) = (1, 1)
  var gainR: (peak: Float, square: Float) = (1, 1)
  if !preFader {
    let endL = voice.pointee.gainLeft.current, endR = voice.pointee.gainRight.current
    let a = Swift.abs(stepL.start), b = Swift.abs(endL), c = Swift.abs(stepR.start), d = Swift.abs(endR)
    gainL = (Swift.max(a, b), (a * a + b * b) / 2)
    gainR = (Swift.max(c, d), (c * c + d * d) / 2)
  }
  // |x|·g > 1  ⇔  |x| > 1/g (no clip is possible at gain 0).
  let threshold = (gainL.peak > 0 ? 1 / gainL.peak : Float.greatestFiniteMagnitude,
                   gainR.peak > 0 ? 1 / gainR.peak : Float.greatestFiniteMagnitude)
  let scan = scanBlock(source, frames: count, channels: mono ? 1 : 2, clipThreshold: threshold)
  voice.pointee.meter.add(
    peak: (scan.peak.0 * gainL.peak, scan.peak.1 * gainR.peak),
    sumSquares: (scan.sumSquares.0 * gainL.square, scan.sumSquares.1 * gainR.square),
    clips: scan.clips, frames: count, into: cells)
}

/// Transport states as published in `EngineStatus.transportState`.
public enum TransportState: Int, Sendable {
  case paused = 0
  case playing = 1
  case waitingForDisk = 2
}
