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
  /// The master, interleaved, for the control thread's loudness meter (LoudnessTap.swift).
  @usableFromInline var loudnessTap: Producer<Float>
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
  /// each `renderBlock` (nil where a stem has no direct outs). `maxVoices` × 2 entries, then
  /// `BusBank.maxBuses` × 2 for the buses' direct outs (bus b at index 2 × (maxVoices + b)), then
  /// `InputBank.maxInputs` × 2 for the live inputs' (`InputBank.directSlot`).
  public let directOutputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
  /// How many of the buses' and of the inputs' direct-out entries the driver may have set for
  /// this block (those past them are nil): `renderBlock` clears the buffers of these only. The
  /// JACK driver sets them to one past the highest bus and input with ports; the defaults cover all.
  public var busDirectCount = BusBank.maxBuses
  public var inputDirectCount = InputBank.maxInputs
  /// Offset of the current pass within the driver's block (for direct outs).
  @usableFromInline var passOffset = 0
  /// Stem export (offline `render --stems`): the direct outs become taps. A stem with direct-out
  /// buffers still goes to the master as well, and its buffers get the master's transport fade
  /// and gain (where they are not 1), so the stems' buffers sum to the master (StemTaps.swift). Off live.
  public var stemTaps = false
  /// Stem export: per slot, how far into the block its tap holds this block's samples (StemTaps.swift):
  /// taps are written once rather than zeroed and added to, and what no voice wrote is zeroed
  /// at the end of the block. `maxVoices` entries.
  @usableFromInline let tapCursors: UnsafeMutablePointer<Int>
  /// Stem export: how the stems' taps (slots below `maxVoices`; buses' and inputs' stay planar)
  /// lay out their frames. 1: left and right are separate buffers (`directOutputs[2 × slot]` and
  /// `[2 × slot + 1]`, frame i at index i). 2: interleaved stereo, the offline renderer's part of
  /// the stem writer's chunk: the left entry is the frames' start, the right entry one float past
  /// it, frame i at index 2i of each (StemTaps.swift). Only 1 or 2.
  public var tapStride = 1
  public let sampleRate: Double

  /// Where the transport is, and its start/hold/seek/pause state (the seek protocol:
  /// docs/architecture.md, *Seek and epoch protocol*).
  @usableFromInline var transport: RenderTransport
  @usableFromInline var masterGain: GainRamp
  /// The master bus's channel EQ, before the master volume (bypassed: costs nothing).
  @usableFromInline var masterEQ: ChannelEQ
  @usableFromInline var masterMeter: MeterAccumulator
  @usableFromInline var preFaderMeters = false
  @usableFromInline var stemMetering = true
  @usableFromInline var effects: EffectBank
  /// The effects' sum, metered wherever it goes (`EngineStatus.effectsMeters`).
  @usableFromInline var effectsMeter: MeterAccumulator
  /// Input port buffers for the current block, set by the driver before `renderBlock` (nil: none).
  public var inputLeft: UnsafeMutablePointer<Float>?
  public var inputRight: UnsafeMutablePointer<Float>?
  /// Sound-effect port buffers for the current block, zeroed by the driver before `renderBlock`
  /// (nil: effects go into the master). Set only while effects have their own ports.
  public var effectOutputLeft: UnsafeMutablePointer<Float>?
  public var effectOutputRight: UnsafeMutablePointer<Float>?
  /// Live input strips (`stemdeck:NAME_in`…; InputStrips.swift): the driver sets their buffers.
  public var inputs: InputBank
  /// The aux sends and their returns (Sends.swift).
  public var sends: SendBank
  /// The take being recorded from the input ports (Recording.swift).
  @usableFromInline var recording: RenderRecording
  /// Grouped changes waiting for a transport frame (`begin … commit at POS`, CommandHandling.swift).
  @usableFromInline var schedule: RenderSchedule
  /// Where voices mix to: the transport's mix, or the detached bus (SongChange.swift).
  @usableFromInline var busLeft: UnsafeMutablePointer<Float>
  @usableFromInline var busRight: UnsafeMutablePointer<Float>
  /// A song change in flight and the old song's detached voices (SongChange.swift).
  @usableFromInline var songChange: RenderSongChange
  /// The buses: buffers, strips, meters and the routing plan (Buses.swift).
  public var buses: BusBank
  /// MIDI control: the mapping table and the changes due in this block (Midi.swift).
  @usableFromInline var midi: MidiTable
  /// What MIDI did, for the control thread (Midi.swift).
  @usableFromInline var midiReports: Producer<MidiReport>
  /// Every strip's plugin inserts (Inserts.swift).
  @usableFromInline var inserts: InsertTable
  /// The click and the count-in (Click.swift); the driver sets its output buffers.
  public var click: RenderClick
  /// The cue bus (Cue.swift); the driver sets its output buffers.
  public var cue: RenderCue

  /// One past the highest occupied slot (drivers fill `directOutputs` up to here).
  public var slotLimitForDrivers: Int { @_noLocks get { slotLimit } }

  /// Creates the renderer's state and the control thread's ends of its three rings.
  public static func make(
    sampleRate: Double, maxVoices: Int = 1024, maxBlockFrames: Int = 4096
  ) -> RenderStateAndRings {
    let commands = SPSCRing.make(minimumCapacity: 8192, of: EngineCommand.self)
    let events = SPSCRing.make(minimumCapacity: 4096, of: EngineEvent.self)
    let midiReports = SPSCRing.make(minimumCapacity: 4096, of: MidiReport.self)
    // Room for every voice alive at once: one per slot, plus a replacement per slot waiting for
    // its voice to fade (`replaceVoice`), plus as many again for a second rebuild before the
    // control thread collects the first.
    let retired = SPSCRing.make(minimumCapacity: maxVoices * 3, of: UnsafeMutablePointer<StemVoice>.self)
    // A second of stereo at the engine rate (a power of two at least that): the control thread
    // drains it every few tens of milliseconds, so only a stall of over a second drops audio.
    let loudnessTap = SPSCRing.make(minimumCapacity: Swift.max(8192, Int(sampleRate) * 2), of: Float.self)
    let status = UnsafeMutablePointer<EngineStatus>.allocate(capacity: 1)
    status.initialize(to: EngineStatus())
    let voices = UnsafeMutablePointer<UnsafeMutablePointer<StemVoice>?>.allocate(capacity: maxVoices)
    voices.initialize(repeating: nil, count: maxVoices)
    let directCount = (maxVoices + BusBank.maxBuses + InputBank.maxInputs) * 2
    let direct = UnsafeMutablePointer<UnsafeMutablePointer<Float>?>.allocate(capacity: directCount)
    direct.initialize(repeating: nil, count: directCount)
    let tapCursors = UnsafeMutablePointer<Int>.allocate(capacity: maxVoices)
    tapCursors.initialize(repeating: 0, count: maxVoices)
    func buffer(_ n: Int) -> UnsafeMutablePointer<Float> {
      let p = UnsafeMutablePointer<Float>.allocate(capacity: n)
      p.initialize(repeating: 0, count: n)
      return p
    }
    let state = UnsafeMutablePointer<RenderState>.allocate(capacity: 1)
    state.initialize(
      to: RenderState(
        commands: commands.consumer, events: events.producer, retired: retired.producer,
        loudnessTap: loudnessTap.producer, midiReports: midiReports.producer, status: status,
        voices: voices, maxVoices: maxVoices, maxBlockFrames: maxBlockFrames,
        mixLeft: buffer(maxBlockFrames), mixRight: buffer(maxBlockFrames),
        detachedLeft: buffer(maxBlockFrames), detachedRight: buffer(maxBlockFrames),
        scratch: buffer(maxBlockFrames * 2), directOutputs: direct, tapCursors: tapCursors, sampleRate: sampleRate))
    return RenderStateAndRings(
      state: state,
      rings: EngineRings(
        commands: commands.producer, events: events.consumer, retired: retired.consumer,
        loudnessTap: loudnessTap.consumer, midiReports: midiReports.consumer))
  }

  init(
    commands: consuming Consumer<EngineCommand>, events: consuming Producer<EngineEvent>,
    retired: consuming Producer<UnsafeMutablePointer<StemVoice>>, loudnessTap: consuming Producer<Float>,
    midiReports: consuming Producer<MidiReport>,
    status: UnsafeMutablePointer<EngineStatus>,
    voices: UnsafeMutablePointer<UnsafeMutablePointer<StemVoice>?>, maxVoices: Int, maxBlockFrames: Int,
    mixLeft: UnsafeMutablePointer<Float>, mixRight: UnsafeMutablePointer<Float>,
    detachedLeft: UnsafeMutablePointer<Float>, detachedRight: UnsafeMutablePointer<Float>,
    scratch: UnsafeMutablePointer<Float>, directOutputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>,
    tapCursors: UnsafeMutablePointer<Int>, sampleRate: Double
  ) {
    self.commands = commands
    self.events = events
    self.retired = retired
    self.loudnessTap = loudnessTap
    self.midiReports = midiReports
    self.midi = MidiTable()
    self.status = status
    self.voices = voices
    self.maxVoices = maxVoices
    self.maxBlockFrames = maxBlockFrames
    self.mixLeft = mixLeft
    self.mixRight = mixRight
    self.busLeft = mixLeft
    self.busRight = mixRight
    self.songChange = RenderSongChange(detachedLeft: detachedLeft, detachedRight: detachedRight)
    self.scratch = scratch
    self.directOutputs = directOutputs
    self.tapCursors = tapCursors
    self.sampleRate = sampleRate
    self.transport = RenderTransport(
      fade: GainRamp(gain: 1, length: Swift.max(1, Int(sampleRate * 0.005))),
      primeFrames: Swift.min(8192, Int(sampleRate / 4)))
    self.masterGain = GainRamp(gain: 1, length: Swift.max(1, Int(sampleRate * 0.010)))
    self.masterMeter = MeterAccumulator(sampleRate: sampleRate)
    self.masterEQ = ChannelEQ(sampleRate: sampleRate)
    self.effects = EffectBank(sampleRate: sampleRate)
    self.effectsMeter = MeterAccumulator(sampleRate: sampleRate)
    self.recording = RenderRecording(inputMeter: MeterAccumulator(sampleRate: sampleRate))
    self.schedule = RenderSchedule()
    self.buses = BusBank(sampleRate: sampleRate, maxBlockFrames: maxBlockFrames)
    self.inputs = InputBank(sampleRate: sampleRate, maxBlockFrames: maxBlockFrames)
    self.sends = SendBank(sampleRate: sampleRate, maxVoices: maxVoices, maxBlockFrames: maxBlockFrames)
    self.inserts = InsertTable(maxVoices: maxVoices)
    self.click = RenderClick(sampleRate: sampleRate)
    self.cue = RenderCue(maxVoices: maxVoices)
  }

  /// Destroys a state whose driver has stopped calling `renderBlock`: applies the commands still
  /// queued (so voices sent but never installed are freed too), frees the buffers and hands every
  /// voice to `dispose` (control thread).
  public static func destroy(
    _ state: UnsafeMutablePointer<RenderState>, dispose: (UnsafeMutablePointer<StemVoice>) -> Void,
    disposeInserts: (UnsafeMutablePointer<InsertChain>) -> Void = { InsertChain.free($0) }
  ) {
    while state.pointee.commands.availableCount() > 0 { applyCommands(state) }
    state.pointee.schedule.collecting = false
    state.pointee.schedule.count = 0
    for slot in 0..<state.pointee.maxVoices {
      if let voice = state.pointee.voices[slot] {
        if let waiting = voice.pointee.replacement { dispose(waiting) }
        dispose(voice)
      }
    }
    state.pointee.voices.deallocate()
    state.pointee.mixLeft.deallocate()
    state.pointee.mixRight.deallocate()
    state.pointee.songChange.detachedLeft.deallocate()
    state.pointee.songChange.detachedRight.deallocate()
    state.pointee.scratch.deallocate()
    state.pointee.directOutputs.deallocate()
    state.pointee.tapCursors.deallocate()
    state.pointee.schedule.entries.deallocate()
    state.pointee.midi.free()
    state.pointee.buses.free()
    state.pointee.inputs.free()
    state.pointee.sends.free()
    state.pointee.inserts.free(dispose: disposeInserts)
    state.pointee.click.free()
    state.pointee.cue.free()
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
  /// The master's loudness tap (LoudnessTap.swift), drained by the control thread.
  public var loudnessTap: Consumer<Float>
  /// What MIDI control did in the renderer (Midi.swift).
  public var midiReports: Consumer<MidiReport>
}

/// A command waiting for a transport frame.
public struct ScheduledCommand: BitwiseCopyable {
  @usableFromInline var frame: Int
  @usableFromInline var command: EngineCommand
  @_noLocks
  init(frame: Int, command: EngineCommand) {
    self.frame = frame
    self.command = command
  }
}

/// Transport states as published in `EngineStatus.transportState`.
public enum TransportState: Int, Sendable {
  case paused = 0
  case playing = 1
  case waitingForDisk = 2
}

/// Renders `frameCount` frames of the master into `left` and `right`.
///
/// - Realtime: safe. Wait-free; allocates nothing, takes no locks, makes no syscalls (the C
///   calls it makes — `src_process`, `src_reset`, libm — carry waivers). Time is bounded by the
///   number of voices, commands and scheduled changes. Proven by `@_noLocks`.
/// - Thread: the audio thread only (JACK's process thread, or the offline renderer). Owns
///   `state`; nothing else may touch it while the driver runs.
/// - Failure: never traps on bad audio; a stem that underruns plays silence and counts it.
@_noLocks
public func renderBlock(
  _ state: UnsafeMutablePointer<RenderState>,
  left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, frameCount: Int
) {
  applyCommands(state)
  advanceSongChange(state, frameCount: frameCount)
  let direct = state.pointee.directOutputs
  let tapSlots = state.pointee.slotLimit
  if state.pointee.stemTaps {
    // Stem export: the stems' taps are written, not added to (StemTaps.swift); nothing to clear.
    state.pointee.tapCursors.update(repeating: 0, count: state.pointee.maxVoices)
  } else {
    for i in 0..<(state.pointee.slotLimit &* 2) {
      if let buffer = direct[i] { buffer.update(repeating: 0, count: frameCount) }
    }
  }
  let busDirect = state.pointee.maxVoices &* 2
  for i in busDirect..<(busDirect &+ Swift.min(state.pointee.busDirectCount, BusBank.maxBuses) &* 2) {
    if let buffer = direct[i] { buffer.update(repeating: 0, count: frameCount) }
  }
  let inputDirect = InputBank.directSlot(0, maxVoices: state.pointee.maxVoices) &* 2
  for i in inputDirect..<(inputDirect &+ Swift.min(state.pointee.inputDirectCount, InputBank.maxInputs) &* 2) {
    if let buffer = direct[i] { buffer.update(repeating: 0, count: frameCount) }
  }
  clearSendOutputs(state, frameCount: frameCount)
  clearMonitorOutputs(state, frameCount: frameCount)
  retireBusPlans(state)
  retireInsertChains(state)
  var done = 0
  // MIDI changes (Midi.swift) land on their frame: a pass ends where the next one is due.
  state.pointee.midi.timedNext = 0
  var nextTimed = applyTimed(state, upTo: 0)
  while done < frameCount {
    applyDueChanges(state)
    var n = Swift.min(frameCount &- done, state.pointee.maxBlockFrames)
    // A count-in's pass ends on its last frame: the stems start on the next (Click.swift).
    let countIn = state.pointee.click.countInLeft
    if countIn > 0 && countIn < n { n = countIn }
    if nextTimed != Int.max {
      let until = nextTimed &- done
      if until > 0 && until < n { n = until }
    }
    // A pass ends where a scheduled change is due, so the change lands on its exact frame.
    let rolling = state.pointee.transport.playing || (state.pointee.transport.holding && state.pointee.transport.playAfterHold)
    if rolling, let due = nextScheduledFrame(state) {
      let until = due &- state.pointee.transport.frame
      if until > 0 && until < n { n = until }
    }
    // A quantised jump lands on its frame: the pass before it ends there (Jump.swift).
    if state.pointee.transport.playing && state.pointee.transport.pendingJumpFrame >= 0 {
      let until = state.pointee.transport.pendingJumpFrame &- state.pointee.transport.frame
      if until > 0 && until < n { n = until }
    }
    state.pointee.passOffset = done
    applyDueJump(state)
    renderPass(state, left: left + done, right: right + done, frameCount: n)
    done &+= n
    nextTimed = applyTimed(state, upTo: done)
  }
  _ = applyTimed(state, upTo: Int.max)
  if state.pointee.stemTaps { finishStemTaps(state, slots: tapSlots, frameCount: frameCount) }
  state.pointee.midi.timedCount = 0
  state.pointee.status.pointee.blocksRendered.add(1, ordering: .relaxed)
}

/// One pass: the transport, every voice, the effects, and the master.
@_noLocks
func renderPass(
  _ state: UnsafeMutablePointer<RenderState>,
  left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, frameCount n: Int
) {
  let mixL = state.pointee.mixLeft
  let mixR = state.pointee.mixRight
  mixL.update(repeating: 0, count: n)
  mixR.update(repeating: 0, count: n)
  clearBusInputs(state, frameCount: n)

  if state.pointee.transport.holding {
    var allPrimed = true
    for slot in 0..<state.pointee.slotLimit {
      guard let voice = state.pointee.voices[slot], !voice.pointee.pending, !voice.pointee.detached else { continue }
      if !voiceIsPrimed(voice, primeFrames: state.pointee.transport.primeFrames) { allPrimed = false }
    }
    // The disk's time limit runs from the count-in's end (it has all of it to prime).
    if !state.pointee.click.countingIn { state.pointee.transport.holdFramesLeft &-= n }
    if !allPrimed && state.pointee.transport.holdFramesLeft <= 0 {
      _ = state.pointee.events.push(.primeTimeout)
      allPrimed = true
    }
    // A count-in holds the stems until its last frame (Click.swift).
    if allPrimed && !state.pointee.click.countingIn {
      state.pointee.transport.holding = false
      state.pointee.transport.playing = state.pointee.transport.playAfterHold
    }
  }

  let playing = state.pointee.transport.playing
  let start = state.pointee.transport.frame
  state.pointee.captureInputs(frameCount: n, rolling: playing)
  for slot in 0..<state.pointee.slotLimit {
    guard let voice = state.pointee.voices[slot], !voice.pointee.detached else { continue }
    if voice.pointee.pending {
      // The next song: silent until the switch, unless it is being taken back.
      if voice.pointee.removing { retireVoice(state, slot: slot, voice: voice) }
      continue
    }
    if voice.pointee.removing {
      let faded = !voice.pointee.levels.gainLeft.isRamping
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

  // Live inputs: those routed to a bus join its input before the buses render; those routed to
  // the master wait in their own planes for the effects' stage (InputStrips.swift).
  mixInputs(state, frameCount: n)
  renderBuses(state, frameCount: n, playing: playing)
  let detachedActive = renderDetachedVoices(state, frameCount: n)

  // Sound effects play whatever the transport does: they are summed after the transport fade,
  // into the scratch buffer (free once the voices are done), then go through the master gain.
  // The old song of a crossfade (the detached bus) joins them there, for the same reason.
  let fxL = state.pointee.scratch
  let fxR = state.pointee.scratch + state.pointee.maxBlockFrames
  var effectsActive = state.pointee.effects.activeCount() > 0
  // The effects' meter sees them alone (before the detached bus joins and the master gain).
  let effectsMeters = state.pointee.status.pointee.effectsMeters
  if effectsActive, let outL = state.pointee.effectOutputLeft, let outR = state.pointee.effectOutputRight {
    // Their own ports: summed there at the effects' own levels, and nothing into the master.
    let offset = state.pointee.passOffset
    state.pointee.effects.render(intoLeft: outL + offset, right: outR + offset, frameCount: n)
    state.pointee.effectsMeter.accumulate(left: outL + offset, right: outR + offset, count: n, into: effectsMeters)
    effectsActive = false
  } else if effectsActive {
    fxL.update(repeating: 0, count: n)
    fxR.update(repeating: 0, count: n)
    state.pointee.effects.render(intoLeft: fxL, right: fxR, frameCount: n)
    state.pointee.effectsMeter.accumulate(left: fxL, right: fxR, count: n, into: effectsMeters)
  } else {
    state.pointee.effectsMeter.accumulateSilence(count: n, into: effectsMeters)
  }
  // Live inputs play whatever the transport does, like the effects (InputStrips.swift).
  if addInputsToMaster(state, intoLeft: fxL, right: fxR, frameCount: n, add: effectsActive) { effectsActive = true }
  if mixSendReturns(state, intoLeft: fxL, right: fxR, frameCount: n, add: effectsActive) { effectsActive = true }
  if detachedActive {
    let dl = state.pointee.songChange.detachedLeft, dr = state.pointee.songChange.detachedRight
    if effectsActive {
      for i in 0..<n { fxL[i] += dl[i]; fxR[i] += dr[i] }
    } else {
      for i in 0..<n { fxL[i] = dl[i]; fxR[i] = dr[i] }
      effectsActive = true
    }
  }

  // Master: transport fade (which moves only while playing), effects, master gain, meters.
  let fadeStep =
    playing ? state.pointee.transport.fade.advance(frames: n) : (start: state.pointee.transport.fade.current, step: Float(0), rampFrames: 0)
  let gainStep = state.pointee.masterGain.advance(frames: n)
  var fadeGain = fadeStep.start
  var masterGain = gainStep.start
  let masterInserts = state.pointee.inserts.master
  if state.pointee.masterEQ.isActive || masterInserts != nil {
    // The master EQ and inserts see the whole master bus (stems after the transport fade,
    // effects), before the master volume: the bus is summed in place, filtered, then scaled.
    let fadeTarget = state.pointee.transport.fade.current
    let gainTarget = state.pointee.masterGain.current
    for i in 0..<n {
      mixL[i] = mixL[i] * fadeGain + (effectsActive ? fxL[i] : 0)
      mixR[i] = mixR[i] * fadeGain + (effectsActive ? fxR[i] : 0)
      fadeGain = i &+ 1 < fadeStep.rampFrames ? fadeGain + fadeStep.step : fadeTarget
    }
    state.pointee.masterEQ.process(left: mixL, right: mixR, stride: 1, count: n)
    if let masterInserts { runInserts(state, masterInserts, target: .master, left: mixL, right: mixR, stride: 1, count: n) }
    for i in 0..<n {
      left[i] = mixL[i] * masterGain
      right[i] = mixR[i] * masterGain
      masterGain = i &+ 1 < gainStep.rampFrames ? masterGain + gainStep.step : gainTarget
    }
  } else if fadeStep.rampFrames == 0 && gainStep.rampFrames == 0 {
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
    let fadeTarget = state.pointee.transport.fade.current
    let gainTarget = state.pointee.masterGain.current
    for i in 0..<n {
      let fl: Float = effectsActive ? fxL[i] : 0
      let fr: Float = effectsActive ? fxR[i] : 0
      left[i] = (mixL[i] * fadeGain + fl) * masterGain
      right[i] = (mixR[i] * fadeGain + fr) * masterGain
      fadeGain = i &+ 1 < fadeStep.rampFrames ? fadeGain + fadeStep.step : fadeTarget
      masterGain = i &+ 1 < gainStep.rampFrames ? masterGain + gainStep.step : gainTarget
    }
  }
  if state.pointee.stemTaps { applyMasterToStemTaps(state, fade: fadeStep, gain: gainStep, frameCount: n) }
  renderClick(state, left: left, right: right, frameCount: n, playing: playing, transportStart: start)
  state.pointee.masterMeter.accumulate(
    left: left, right: right, count: n,
    into: state.pointee.status.pointee.masterMeters)
  tapMaster(state, left: left, right: right, frameCount: n)

  if playing {
    state.pointee.transport.frame &+= n
    // A fade-out that reached silence completes a pause or a seek.
    if !state.pointee.transport.fade.isRamping && state.pointee.transport.fade.current == 0 {
      if state.pointee.transport.pendingSeekFrame >= 0 {
        performSeek(
          state, frame: state.pointee.transport.pendingSeekFrame, epoch: state.pointee.transport.pendingSeekEpoch,
          resume: !state.pointee.transport.pendingPause)
        state.pointee.transport.pendingPause = false
      } else if state.pointee.transport.pendingPause {
        state.pointee.transport.playing = false
        state.pointee.transport.pendingPause = false
        state.pointee.transport.fade.jump(to: 1)
      }
    }
  }
  let status = state.pointee.status
  status.pointee.transportFrame.store(state.pointee.transport.frame, ordering: .relaxed)
  let published: TransportState =
    state.pointee.transport.playing
    ? .playing : (state.pointee.transport.holding && state.pointee.transport.playAfterHold ? .waitingForDisk : .paused)
  status.pointee.transportState.store(published.rawValue, ordering: .relaxed)
}
