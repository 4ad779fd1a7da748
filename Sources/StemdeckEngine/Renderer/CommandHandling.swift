import CSampleRate

/// Applies queued commands (at most 4096 per block, so a flood cannot stall the audio).
/// Commands between `beginGroup` and `endGroup` are held and applied together on one frame.
@_noLocks
func applyCommands(_ state: UnsafeMutablePointer<RenderState>) {
  var applied = 0
  while applied < 4096, let command = state.pointee.commands.pop() {
    applied &+= 1
    switch command {
    case .beginGroup(let frame):
      state.pointee.schedule.collecting = true
      state.pointee.schedule.groupFrame = frame
      state.pointee.schedule.groupStart = state.pointee.schedule.count
    case .endGroup:
      state.pointee.schedule.collecting = false
    case .abortGroup:
      // Nothing is compacted while a group arrives (applyDueChanges waits), so its commands are
      // the entries from groupStart on. Only plain values are grouped: dropping them frees nothing.
      // (The control side stops counting them itself: `Mixer.abortGroup`.)
      if state.pointee.schedule.collecting { state.pointee.schedule.count = state.pointee.schedule.groupStart }
      state.pointee.schedule.collecting = false
    case .offerConverter:
      apply(state, command)  // never held for a group's frame: dropping it would lose the instance
    default:
      if state.pointee.schedule.collecting {
        schedule(state, command, at: state.pointee.schedule.groupFrame)
      } else {
        apply(state, command)
      }
    }
  }
  if applied > 0 {
    // Where the transport is (or, during a seek's fade-out, is going) once they are applied.
    let seek = state.pointee.transport.pendingSeekFrame
    state.pointee.status.pointee.commandFrame.store(seek >= 0 ? seek : state.pointee.transport.frame, ordering: .relaxed)
    state.pointee.status.pointee.commandsApplied.add(applied, ordering: .releasing)
  }
}

/// Holds `command` until the transport reaches `frame` (Int.min: the next pass). If the
/// schedule is full the command is applied now rather than lost (the control side refuses a
/// group that would not fit: `Mixer.send`).
@_noLocks
func schedule(_ state: UnsafeMutablePointer<RenderState>, _ command: EngineCommand, at frame: Int) {
  guard state.pointee.schedule.count < state.pointee.schedule.capacity else {
    apply(state, command)
    state.pointee.status.pointee.scheduleReleased.add(1, ordering: .releasing)
    return
  }
  state.pointee.schedule.entries[state.pointee.schedule.count] = ScheduledCommand(frame: frame, command: command)
  state.pointee.schedule.count &+= 1
}

/// The earliest frame a scheduled change waits for, if any.
@_noLocks
func nextScheduledFrame(_ state: UnsafeMutablePointer<RenderState>) -> Int? {
  let count = state.pointee.schedule.count
  if count == 0 { return nil }
  var earliest = Int.max
  for i in 0..<count { earliest = Swift.min(earliest, state.pointee.schedule.entries[i].frame) }
  return earliest
}

/// Applies, in the order they arrived, every scheduled change whose frame has come. Groups whose
/// frame has not come stay; nothing waits while the group is still arriving.
@_noLocks
func applyDueChanges(_ state: UnsafeMutablePointer<RenderState>) {
  let count = state.pointee.schedule.count
  if count == 0 || state.pointee.schedule.collecting { return }
  let now = state.pointee.transport.frame
  var kept = 0
  for i in 0..<count {
    let entry = state.pointee.schedule.entries[i]
    if entry.frame <= now {
      apply(state, entry.command)
    } else {
      state.pointee.schedule.entries[kept] = entry
      kept &+= 1
    }
  }
  if kept != count { state.pointee.status.pointee.scheduleReleased.add(count &- kept, ordering: .releasing) }
  state.pointee.schedule.count = kept
}

/// Applies one command: each case hands it to the function for its concern (the voice table,
/// a voice's levels, the transport, song changes, effects, recording). Changes made while the
/// transport is not playing take effect at once (nothing is sounding, so there is nothing to
/// smooth); while playing they ramp.
@_noLocks
func apply(_ state: UnsafeMutablePointer<RenderState>, _ command: EngineCommand) {
  let jump = !state.pointee.transport.playing
  switch command {
  case .addVoice(let slot, let voice): installVoice(state, slot: slot, voice)
  case .addPendingVoice(let slot, let voice, let song): installVoice(state, slot: slot, voice, pendingSong: song)
  case .replaceVoice(let slot, let voice): replaceVoice(state, slot: slot, with: voice, jump: jump)
  case .removeVoice(let slot): if let voice = voiceAt(state, slot) { fadeOutVoice(voice, jump: jump) }
  case .changeSong(let frame, let epoch, let fadeFrames, let song):
    requestSongChange(state, frame: frame, epoch: epoch, fadeFrames: fadeFrames, song: song)
  case .completeSongChange: if state.pointee.songChange.pending { performSongChange(state) }
  case .setGains(let slot, let l, let r): if let voice = voiceAt(state, slot) { setGains(voice, l, r, jump: jump) }
  case .setStripLevels(let strip, let change): setStripLevels(state, strip, change, jump: jump)
  case .offerConverter(let slot, let z):
    if let voice = voiceAt(state, slot) {
      offerConverter(state, voice, z)
    } else {
      _ = state.pointee.events.push(.converterRetired(address: Int(bitPattern: z.pointer)))
    }
  case .setRate(let slot, let rate): if let voice = voiceAt(state, slot) { setRate(voice, rate) }
  case .setPitchScale(let slot, let scale): if let voice = voiceAt(state, slot) { setPitchScale(voice, scale) }
  case .cancelGlides(let slot): if let voice = voiceAt(state, slot) { cancelGlides(voice) }
  case .setJoinFrameAfterSeek(let slot, let frame): voiceAt(state, slot)?.pointee.joinFrameAfterSeek = frame
  case .setMasterGain(let gain): setRamp(&state.pointee.masterGain, gain, jump: jump)
  case .setEQ(let target, let band, let frequency, let gain, let q):
    setEQ(state, target, jump: jump) { $0.set(band, frequency: frequency, gain: gain, q: q) }
  case .setEQEnabled(let target, let on): setEQ(state, target, jump: jump) { $0.enabled = on }
  case .setInserts(let target, let chain): setInserts(state, target, chain)
  case .setInsertControl(let port, let value): port.pointee = value
  case .play(let fadeIn): play(state, fadeIn: fadeIn)
  case .pause: pause(state)
  case .seek(let frame, let epoch): seek(state, frame: frame, epoch: epoch)
  case .setMeterPoint(let preFader): state.pointee.preFaderMeters = preFader
  case .setStemMetering(let on): state.pointee.stemMetering = on
  case .setBusPlan(let plan): setBusPlan(state, plan)
  case .resetBus(let bus):
    resetBus(state, bus: bus)
    state.pointee.cue.set(.bus(bus), .off)  // a bus taken into use again is not cued
  case .stripGlide(let strip, let parameter, let target, let frames, let exponential):
    startStripGlide(state, strip, parameter, to: target, frames: frames, exponential: exponential)
  case .setStemBus(let slot, let bus): if let voice = voiceAt(state, slot) { setStemBus(state, voice, bus: bus, jump: jump) }
  case .addInput(let index, let channels, let levels):
    state.pointee.inputs.add(index: Int(index), channels: Int(channels), levels)
    state.pointee.sends.inputs.clear(strip: Int(index))
    state.pointee.cue.set(.input(index), .off)
  case .removeInput(let index): state.pointee.inputs.remove(index: Int(index))
  case .setInputBus(let index, let bus, let crossfade):
    state.pointee.inputs.setBus(index: Int(index), bus: bus, sampleRate: state.pointee.sampleRate, jump: !crossfade)
  case .addSend(let index, let gain): state.pointee.sends.add(index: Int(index), returnGain: gain)
  case .removeSend(let index): state.pointee.sends.remove(index: Int(index))
  case .setSendLevel(let strip, let index, let gain, let pre):
    setSendLevel(state, strip, index: index, gain: gain, preFader: pre, jump: jump)
  case .setReturnGain(let index, let gain): state.pointee.sends.setReturnGain(index: Int(index), gain: gain)
  case .setMidiBinding(let index, let binding, let count): state.pointee.midi.apply(index: index, binding: binding, count: count)
  case .loadEffect(let slot, let sample): state.pointee.effects.load(slot: Int(slot), sample: sample)
  case .unloadEffect(let slot): unloadEffect(state, slot: slot)
  case .fireEffect(let slot, let l, let r): state.pointee.effects.fire(slot: Int(slot), gainLeft: l, gainRight: r)
  case .stopEffect(let slot): state.pointee.effects.stop(slot: Int(slot))
  case .startRecording(let take): state.pointee.recording.start(take)
  case .pauseRecording(let paused): state.pointee.recording.paused = paused
  case .stopRecording: stopRecording(state)
  case .setClick(let parameters): state.pointee.click.parameters = parameters
  case .setClickSamples(let samples): setClickSamples(state, samples)
  case .setCue(let target, let tap): state.pointee.cue.set(target, tap)
  case .jump(let at, let target, let epoch): scheduleJump(state, at: at, to: target, epoch: epoch)
  case .beginGroup, .endGroup, .abortGroup: break  // handled by applyCommands
  }
}

// MARK: - The voice table

/// Installs `voice` in an empty slot; with `pendingSong` it waits for that song change
/// (SongChange.swift) before it plays.
@_noLocks
func installVoice(
  _ state: UnsafeMutablePointer<RenderState>, slot: Int32, _ voice: UnsafeMutablePointer<StemVoice>,
  pendingSong: Int? = nil
) {
  let s = Int(slot)
  guard s >= 0, s < state.pointee.maxVoices, state.pointee.voices[s] == nil else { return }
  if let song = pendingSong {
    voice.pointee.pending = true
    voice.pointee.pendingSong = song
  }
  state.pointee.voices[s] = voice
  state.pointee.cue.set(.stem(slot: slot), .off)  // a new stem in the slot is not cued
  if s >= state.pointee.slotLimit { state.pointee.slotLimit = s &+ 1 }
}

/// Puts `voice` in place of the slot's voice, which fades out first (its replacement takes over
/// in `retireVoice`).
@_noLocks
func replaceVoice(
  _ state: UnsafeMutablePointer<RenderState>, slot: Int32, with voice: UnsafeMutablePointer<StemVoice>,
  jump: Bool
) {
  let s = Int(slot)
  guard s >= 0, s < state.pointee.maxVoices else { return }
  guard let old = state.pointee.voices[s] else {
    state.pointee.voices[s] = voice
    if s >= state.pointee.slotLimit { state.pointee.slotLimit = s &+ 1 }
    return
  }
  if let waiting = old.pointee.replacement {
    // Rebuilt again before the first rebuild took over: that one never sounded.
    guard state.pointee.retired.push(waiting) else { return }
  }
  old.pointee.replacement = voice
  fadeOutVoice(old, jump: jump)
}

/// Marks a voice for removal: it fades to silence, then `renderPass` retires it.
@_noLocks
func fadeOutVoice(_ voice: UnsafeMutablePointer<StemVoice>, jump: Bool) {
  voice.pointee.removing = true
  voice.pointee.levels.stopGlides()
  setRamp(&voice.pointee.levels.gainLeft, 0, jump: jump)
  setRamp(&voice.pointee.levels.gainRight, 0, jump: jump)
}

// MARK: - A voice's levels, rate and glides

@_noLocks
func setGains(_ voice: UnsafeMutablePointer<StemVoice>, _ l: Float, _ r: Float, jump: Bool) {
  guard !voice.pointee.removing else { return }
  voice.pointee.levels.stopGlides()
  setRamp(&voice.pointee.levels.gainLeft, l, jump: jump || voice.pointee.pending)
  setRamp(&voice.pointee.levels.gainRight, r, jump: jump || voice.pointee.pending)
}

/// Changes `target`'s channel EQ with `change`; it glides there while it sounds, and jumps while
/// nothing does (transport stopped, a pending voice, a fresh input strip).
@_noLocks
func setEQ(
  _ state: UnsafeMutablePointer<RenderState>, _ target: StripTarget, jump: Bool, _ change: (inout EQParameters) -> Void
) {
  switch target {
  case .input(let index):
    state.pointee.inputs.changeEQ(index: Int(index), change)
  case .bus(let bus):
    setBusEQ(state, bus: Int(bus), jump: jump, change)
  case .master:
    var p = state.pointee.masterEQ.target
    change(&p)
    state.pointee.masterEQ.set(p, immediate: jump)
  case .stem(let slot):
    guard let voice = voiceAt(state, slot), !voice.pointee.removing else { return }
    var p = voice.pointee.eq.target
    change(&p)
    voice.pointee.eq.set(p, immediate: jump || voice.pointee.pending)
  }
}

/// Any strip's levels (`EngineCommand.setStripLevels`).
@_noLocks
func setStripLevels(_ state: UnsafeMutablePointer<RenderState>, _ strip: StripTarget, _ change: StripLevelChange, jump: Bool) {
  switch strip {
  case .stem(let slot): if let voice = voiceAt(state, slot) { setLevels(voice, change, jump: jump) }
  case .bus(let bus): setBusLevels(state, bus: bus, change, jump: jump)
  case .input(let index): state.pointee.inputs.setLevels(index: Int(index), change)
  case .master: break
  }
}

/// Only the levels sent change (and only their glides stop): a pan change or a solo elsewhere
/// leaves a volume glide running.
@_noLocks
func setLevels(_ voice: UnsafeMutablePointer<StemVoice>, _ change: StripLevelChange, jump: Bool) {
  guard !voice.pointee.removing else { return }
  voice.pointee.levels.set(change, jump: jump || voice.pointee.pending)
  publishGlides(voice)
}

@_noLocks
func setRate(_ voice: UnsafeMutablePointer<StemVoice>, _ rate: Double) {
  voice.pointee.rateGlide = Glide()
  voice.pointee.rate = rate
  applyRate(voice)
  holdStretchTempo(voice)
  publishGlides(voice)
}

@_noLocks
func setPitchScale(_ voice: UnsafeMutablePointer<StemVoice>, _ scale: Double) {
  voice.pointee.pitchScale = scale
  applyRate(voice)
}

@_noLocks
func startGlide(
  _ voice: UnsafeMutablePointer<StemVoice>, _ parameter: GlideParameter, to target: Double, frames: Int,
  exponential: Bool
) {
  guard !voice.pointee.removing else { return }
  if case .rate = parameter {
    voice.pointee.rateGlide = Glide(
      from: voice.pointee.rate, to: target, frames: frames, curve: exponential ? .exponential : .linear)
    glideStretchTempo(voice)
  } else {
    voice.pointee.levels.startGlide(parameter, to: target, frames: frames, exponential: exponential)
  }
  publishGlides(voice)
}

/// Starts a glide on any strip (`EngineCommand.stripGlide`).
@_noLocks
func startStripGlide(
  _ state: UnsafeMutablePointer<RenderState>, _ strip: StripTarget, _ parameter: GlideParameter, to target: Double,
  frames: Int, exponential: Bool
) {
  switch strip {
  case .stem(let slot):
    if let voice = voiceAt(state, slot) { startGlide(voice, parameter, to: target, frames: frames, exponential: exponential) }
  case .bus(let bus):
    guard bus >= 0, Int(bus) < BusBank.maxBuses else { return }
    (state.pointee.buses.strips + Int(bus)).pointee.levels.startGlide(parameter, to: target, frames: frames, exponential: exponential)
  case .input(let index):
    state.pointee.inputs.startGlide(index: Int(index), parameter, to: target, frames: frames, exponential: exponential)
  case .master:
    // The master's fader ramps exactly `frames` (linearly: a scene's fade); a plain change
    // (`setMasterGain`) restarts its 10 ms ramp from where it stands, which ends the glide.
    if case .volume = parameter { state.pointee.masterGain.set(target: Float(target), frames: frames) }
  }
}

@_noLocks
func cancelGlides(_ voice: UnsafeMutablePointer<StemVoice>) {
  voice.pointee.levels.stopGlides()
  voice.pointee.rateGlide = Glide()
  holdStretchTempo(voice)
  publishGlides(voice)
}

// MARK: - The transport

@_noLocks
func play(_ state: UnsafeMutablePointer<RenderState>, fadeIn: Bool) {
  state.pointee.transport.pendingPause = false
  // While a seek's fade-out runs, the seek completes first (it resumes playing): raising the
  // fade again here would leave the seek waiting forever, and voices added for it silent.
  if state.pointee.transport.playing {
    if state.pointee.transport.pendingSeekFrame < 0 { state.pointee.transport.fade.set(target: 1) }
    return
  }
  if fadeIn { state.pointee.transport.fade.jump(to: 0) } else { state.pointee.transport.fade.jump(to: 1) }
  state.pointee.transport.fade.set(target: 1)
  state.pointee.transport.holding = true
  state.pointee.transport.playAfterHold = true
  state.pointee.transport.holdFramesLeft = Int(state.pointee.sampleRate)
  startCountIn(state)
}

@_noLocks
func pause(_ state: UnsafeMutablePointer<RenderState>) {
  state.pointee.transport.playAfterHold = false
  state.pointee.click.countInLeft = 0
  state.pointee.status.pointee.countInFramesLeft.store(0, ordering: .relaxed)
  if state.pointee.transport.playing {
    state.pointee.transport.pendingPause = true
    state.pointee.transport.fade.set(target: 0)
  }
}

@_noLocks
func seek(_ state: UnsafeMutablePointer<RenderState>, frame: Int, epoch: Int) {
  if state.pointee.songChange.pending {
    // A seek sent after a song change is for the new song: it moves the switch's target and
    // the pending voices; the old song plays on untouched until the switch.
    state.pointee.songChange.frame = frame
    state.pointee.songChange.epoch = epoch
    for slot in 0..<state.pointee.slotLimit {
      guard let voice = state.pointee.voices[slot], voice.pointee.pending else { continue }
      resyncVoice(state, voice, frame: frame, epoch: epoch)
    }
    return
  }
  state.pointee.transport.pendingJumpFrame = -1  // a seek cancels a waiting jump (Jump.swift)
  if state.pointee.transport.playing {
    state.pointee.transport.pendingSeekFrame = frame
    state.pointee.transport.pendingSeekEpoch = epoch
    state.pointee.transport.fade.set(target: 0)
  } else {
    performSeek(state, frame: frame, epoch: epoch, resume: state.pointee.transport.playAfterHold)
  }
}

// MARK: - Effects and recording

@_noLocks
func unloadEffect(_ state: UnsafeMutablePointer<RenderState>, slot: Int32) {
  state.pointee.effects.unload(slot: Int(slot))
  _ = state.pointee.events.push(.effectUnloaded(slot: slot))
}

extension RenderRecording {
  @_noLocks
  mutating func start(_ take: UnsafeMutablePointer<RecordTake>) {
    self.take = take
    paused = false
  }
}

@_noLocks
func stopRecording(_ state: UnsafeMutablePointer<RenderState>) {
  state.pointee.recording.take = nil
  _ = state.pointee.events.push(.recordingStopped)
}

@_noLocks @inline(__always)
func setRamp(_ ramp: inout GainRamp, _ target: Float, jump: Bool) {
  if jump { ramp.jump(to: target) } else { ramp.set(target: target) }
}

@_noLocks @inline(__always)
func voiceAt(_ state: UnsafeMutablePointer<RenderState>, _ slot: Int32) -> UnsafeMutablePointer<StemVoice>? {
  let s = Int(slot)
  guard s >= 0, s < state.pointee.maxVoices, let voice = state.pointee.voices[s] else { return nil }
  return voice.pointee.replacement ?? voice
}

@_noLocks
func performSeek(_ state: UnsafeMutablePointer<RenderState>, frame: Int, epoch: Int, resume: Bool) {
  state.pointee.transport.frame = frame
  state.pointee.transport.pendingSeekFrame = -1
  state.pointee.transport.playing = false
  state.pointee.transport.holding = true
  state.pointee.transport.playAfterHold = resume
  state.pointee.transport.holdFramesLeft = Int(state.pointee.sampleRate)
  if resume { state.pointee.transport.fade.jump(to: 0); state.pointee.transport.fade.set(target: 1) }
  state.pointee.status.pointee.appliedEpoch.store(epoch, ordering: .relaxed)
  for slot in 0..<state.pointee.slotLimit {
    // Detached voices (an old song fading out) have left the transport.
    guard let voice = state.pointee.voices[slot], !voice.pointee.detached, !voice.pointee.pending else { continue }
    resyncVoice(state, voice, frame: frame, epoch: epoch)
    voice.pointee.songFade = SongFade()  // a seek ends a song-change fade-in
    if let waiting = voice.pointee.replacement { resyncVoice(state, waiting, frame: frame, epoch: epoch) }
  }
}

/// Points a voice at seek epoch `epoch`, joining at `frame` (or its own join frame after a seek).
@_noLocks
func resyncVoice(_ state: UnsafeMutablePointer<RenderState>, _ voice: UnsafeMutablePointer<StemVoice>, frame: Int, epoch: Int) {
  voice.pointee.epoch = epoch
  voice.pointee.synced = false
  let join = voice.pointee.joinFrameAfterSeek
  voice.pointee.joinFrame = join == Int.min ? frame : join
  voice.pointee.joinFrameAfterSeek = Int.min
  voice.pointee.shared.pointee.synced.store(false, ordering: .relaxed)
  // The voice plays again from the new position: a stem that had ended is no longer finished
  // (else the control thread, seeing every stem still finished, reports a stale end of the song).
  voice.pointee.shared.pointee.finished.store(false, ordering: .relaxed)
}

@_noLocks
func retireVoice(_ state: UnsafeMutablePointer<RenderState>, slot: Int, voice: UnsafeMutablePointer<StemVoice>) {
  // The return ring holds room for every voice there can be, so this cannot fail; if it ever
  // did, keeping the voice installed (silent) is safer than leaking it unseen. A voice being
  // replaced hands its slot to the replacement (read first: once pushed, the voice is not ours).
  let next = voice.pointee.replacement
  guard state.pointee.retired.push(voice) else { return }
  state.pointee.voices[slot] = next
  if next != nil { return }
  while state.pointee.slotLimit > 0 && state.pointee.voices[state.pointee.slotLimit &- 1] == nil {
    state.pointee.slotLimit &-= 1
  }
}
