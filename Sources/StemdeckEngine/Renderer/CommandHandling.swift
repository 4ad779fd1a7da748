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
      state.pointee.collectingGroup = true
      state.pointee.groupFrame = frame
      state.pointee.groupStart = state.pointee.scheduledCount
    case .endGroup:
      state.pointee.collectingGroup = false
    case .abortGroup:
      // Nothing is compacted while a group arrives (applyDueChanges waits), so its commands are
      // the entries from groupStart on. Only plain values are grouped: dropping them frees nothing.
      if state.pointee.collectingGroup { state.pointee.scheduledCount = state.pointee.groupStart }
      state.pointee.collectingGroup = false
    default:
      if state.pointee.collectingGroup {
        schedule(state, command, at: state.pointee.groupFrame)
      } else {
        apply(state, command)
      }
    }
  }
  if applied > 0 { state.pointee.status.pointee.commandsApplied.add(applied, ordering: .relaxed) }
}

/// Holds `command` until the transport reaches `frame` (Int.min: the next pass). If the
/// schedule is full the command is applied now rather than lost.
@_noLocks
func schedule(_ state: UnsafeMutablePointer<RenderState>, _ command: EngineCommand, at frame: Int) {
  guard state.pointee.scheduledCount < state.pointee.scheduleCapacity else { apply(state, command); return }
  state.pointee.scheduled[state.pointee.scheduledCount] = ScheduledCommand(frame: frame, command: command)
  state.pointee.scheduledCount &+= 1
}

/// The earliest frame a scheduled change waits for, if any.
@_noLocks
func nextScheduledFrame(_ state: UnsafeMutablePointer<RenderState>) -> Int? {
  let count = state.pointee.scheduledCount
  if count == 0 { return nil }
  var earliest = Int.max
  for i in 0..<count { earliest = Swift.min(earliest, state.pointee.scheduled[i].frame) }
  return earliest
}

/// Applies, in the order they arrived, every scheduled change whose frame has come. Groups whose
/// frame has not come stay; nothing waits while the group is still arriving.
@_noLocks
func applyDueChanges(_ state: UnsafeMutablePointer<RenderState>) {
  let count = state.pointee.scheduledCount
  if count == 0 || state.pointee.collectingGroup { return }
  let now = state.pointee.transportFrame
  var kept = 0
  for i in 0..<count {
    let entry = state.pointee.scheduled[i]
    if entry.frame <= now {
      apply(state, entry.command)
    } else {
      state.pointee.scheduled[kept] = entry
      kept &+= 1
    }
  }
  state.pointee.scheduledCount = kept
}

/// Applies one command. Changes made while the transport is not playing take effect at once
/// (nothing is sounding, so there is nothing to smooth); while playing they ramp.
@_noLocks
func apply(_ state: UnsafeMutablePointer<RenderState>, _ command: EngineCommand) {
  let playing = state.pointee.playing
  switch command {
  case .addVoice(let slot, let voice):
    let s = Int(slot)
    guard s >= 0, s < state.pointee.maxVoices, state.pointee.voices[s] == nil else { return }
    state.pointee.voices[s] = voice
    if s >= state.pointee.slotLimit { state.pointee.slotLimit = s &+ 1 }
  case .addPendingVoice(let slot, let voice, let song):
    let s = Int(slot)
    guard s >= 0, s < state.pointee.maxVoices, state.pointee.voices[s] == nil else { return }
    voice.pointee.pending = true
    voice.pointee.pendingSong = song
    state.pointee.voices[s] = voice
    if s >= state.pointee.slotLimit { state.pointee.slotLimit = s &+ 1 }
  case .changeSong(let frame, let epoch, let fadeFrames, let song):
    // An earlier change still waiting for its voices is superseded: its voices go back now (not
    // at the switch), so changes in a row hand their slots back before the slots run out.
    for slot in 0..<state.pointee.slotLimit {
      guard let voice = state.pointee.voices[slot], voice.pointee.pending, voice.pointee.pendingSong < song else { continue }
      retireVoice(state, slot: slot, voice: voice)
    }
    state.pointee.songChangePending = true
    state.pointee.songChangeSong = song
    state.pointee.songChangeFrame = frame
    state.pointee.songChangeEpoch = epoch
    state.pointee.songChangeFadeFrames = Swift.max(0, fadeFrames)
    state.pointee.songChangeWaitLeft = Int(state.pointee.sampleRate)
  case .completeSongChange:
    if state.pointee.songChangePending { performSongChange(state) }
  case .replaceVoice(let slot, let voice):
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
    old.pointee.removing = true
    old.pointee.volumeGlide = Glide()
    old.pointee.panGlide = Glide()
    setRamp(&old.pointee.gainLeft, 0, jump: !playing)
    setRamp(&old.pointee.gainRight, 0, jump: !playing)
  case .removeVoice(let slot):
    guard let voice = voiceAt(state, slot) else { return }
    voice.pointee.removing = true
    voice.pointee.volumeGlide = Glide()
    voice.pointee.panGlide = Glide()
    setRamp(&voice.pointee.gainLeft, 0, jump: !playing)
    setRamp(&voice.pointee.gainRight, 0, jump: !playing)
  case .setGains(let slot, let l, let r):
    guard let voice = voiceAt(state, slot), !voice.pointee.removing else { return }
    voice.pointee.volumeGlide = Glide()
    voice.pointee.panGlide = Glide()
    setRamp(&voice.pointee.gainLeft, l, jump: !playing || voice.pointee.pending)
    setRamp(&voice.pointee.gainRight, r, jump: !playing || voice.pointee.pending)
  case .setLevels(let slot, let volume, let pan, let audible):
    // Only the levels sent change (and only their glides stop): a pan change or a solo elsewhere
    // leaves a volume glide running.
    guard let voice = voiceAt(state, slot), !voice.pointee.removing else { return }
    if let volume {
      voice.pointee.volumeGlide = Glide()
      voice.pointee.volume = volume
    }
    if let pan {
      voice.pointee.panGlide = Glide()
      voice.pointee.pan = pan
    }
    voice.pointee.audible = audible
    updateGains(voice, frames: 0, jump: !playing || voice.pointee.pending)
    publishGlides(voice)
  case .setRate(let slot, let rate):
    guard let voice = voiceAt(state, slot) else { return }
    voice.pointee.rateGlide = Glide()
    voice.pointee.rate = rate
    applyRate(voice)
    publishGlides(voice)
  case .setPitchScale(let slot, let scale):
    guard let voice = voiceAt(state, slot) else { return }
    voice.pointee.pitchScale = scale
    applyRate(voice)
  case .glide(let slot, let parameter, let target, let frames, let exponential):
    guard let voice = voiceAt(state, slot), !voice.pointee.removing else { return }
    let curve: Glide.Curve = exponential ? .exponential : .linear
    switch parameter {
    case .volume: voice.pointee.volumeGlide = Glide(from: voice.pointee.volume, to: target, frames: frames, curve: curve)
    case .pan: voice.pointee.panGlide = Glide(from: voice.pointee.pan, to: target, frames: frames, curve: .linear)
    case .rate: voice.pointee.rateGlide = Glide(from: voice.pointee.rate, to: target, frames: frames, curve: curve)
    }
    publishGlides(voice)
  case .cancelGlides(let slot):
    guard let voice = voiceAt(state, slot) else { return }
    voice.pointee.volumeGlide = Glide()
    voice.pointee.panGlide = Glide()
    voice.pointee.rateGlide = Glide()
    publishGlides(voice)
  case .setMasterGain(let gain):
    setRamp(&state.pointee.masterGain, gain, jump: !playing)
  case .play(let fadeIn):
    state.pointee.pendingPause = false
    // While a seek's fade-out runs, the seek completes first (it resumes playing): raising the
    // fade again here would leave the seek waiting forever, and voices added for it silent.
    if playing {
      if state.pointee.pendingSeekFrame < 0 { state.pointee.fade.set(target: 1) }
      return
    }
    if fadeIn { state.pointee.fade.jump(to: 0) } else { state.pointee.fade.jump(to: 1) }
    state.pointee.fade.set(target: 1)
    state.pointee.holding = true
    state.pointee.playAfterHold = true
    state.pointee.holdFramesLeft = Int(state.pointee.sampleRate)
  case .pause:
    state.pointee.playAfterHold = false
    if playing {
      state.pointee.pendingPause = true
      state.pointee.fade.set(target: 0)
    }
  case .seek(let frame, let epoch):
    if state.pointee.songChangePending {
      // A seek sent after a song change is for the new song: it moves the switch's target and
      // the pending voices; the old song plays on untouched until the switch.
      state.pointee.songChangeFrame = frame
      state.pointee.songChangeEpoch = epoch
      for slot in 0..<state.pointee.slotLimit {
        guard let voice = state.pointee.voices[slot], voice.pointee.pending else { continue }
        resyncVoice(state, voice, frame: frame, epoch: epoch)
      }
      return
    }
    if playing {
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
  case .setMidiBinding(let index, let binding, let count):
    if index < 0 {
      state.pointee.midi.count = Swift.max(0, Swift.min(Int(count), MidiTable.capacity))
    } else {
      state.pointee.midi.set(index: Int(index), binding: binding, count: Int(count))
    }
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
  case .beginGroup, .endGroup, .abortGroup:
    break  // handled by applyCommands
  }
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
  state.pointee.transportFrame = frame
  state.pointee.pendingSeekFrame = -1
  state.pointee.playing = false
  state.pointee.holding = true
  state.pointee.playAfterHold = resume
  state.pointee.holdFramesLeft = Int(state.pointee.sampleRate)
  if resume { state.pointee.fade.jump(to: 0); state.pointee.fade.set(target: 1) }
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
