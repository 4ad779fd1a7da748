// Setlist song changes on the realtime side. Everything here is realtime code.
//
// The control thread sends the next song's voices as *pending* (`EngineCommand.addPendingVoice`):
// they sit in their slots and their disk streams fill, but they are not part of the transport and
// make no sound. Then `EngineCommand.changeSong` asks for the switch. The renderer keeps playing
// the current song until every pending voice has audio buffered (or a second of audio has passed),
// then switches at the start of a block:
//
// - gapless (fadeFrames == 0): the current song's voices are handed back at once and the pending
//   ones start on the same frame, so the old song's last frame is followed directly by the new
//   song's first frame;
// - crossfade: the current song's voices are *detached*: they leave the transport (later seeks,
//   pauses and song changes do not touch them), keep their own clock, and fade out with
//   cos(π/2 · k/N) while the new song's voices fade in with sin(π/2 · k/N), k = 0 at the switch
//   frame, N = fadeFrames (equal power: the two gains' squares sum to 1). A detached voice whose
//   fade has ended is handed back through the return ring like a removed one.

/// An equal-power song-change fade on one voice, positioned on the voice's clock (the transport
/// for the new song's voices, the detached clock for the old song's).
public struct SongFade: BitwiseCopyable {
  /// Clock frame where the fade starts (gain 0 for a fade-in, 1 for a fade-out).
  @usableFromInline var startFrame = 0
  /// Length in frames (0: no fade).
  @usableFromInline var frames = 0
  @usableFromInline var fadingIn = false

  @_noLocks
  public init() {}

  @_noLocks
  init(startFrame: Int, frames: Int, fadingIn: Bool) {
    self.startFrame = startFrame
    self.frames = frames
    self.fadingIn = fadingIn
  }

  @usableFromInline var isActive: Bool { @_noLocks get { frames > 0 } }

  /// True once the fade is complete at clock frame `clock`.
  @_noLocks @inline(__always)
  func isOver(at clock: Int) -> Bool { clock &- startFrame >= frames }

  /// The gain at clock frame `clock`.
  @_noLocks
  func gain(at clock: Int) -> Float {
    let k = clock &- startFrame
    if k <= 0 { return fadingIn ? 0 : 1 }
    if k >= frames { return fadingIn ? 1 : 0 }
    let angle = Double.pi / 2 * Double(k) / Double(frames)
    let g = fadingIn ? RealtimeC.sin(angle) : RealtimeC.cos(angle)
    return Float(g)
  }
}

/// Scales `count` frames of a voice's source (starting at clock frame `clock`) by its song fade.
@_noLocks
func applySongFade(
  _ voice: UnsafeMutablePointer<StemVoice>, _ source: UnsafeMutablePointer<Float>, count: Int, clock: Int
) {
  let fade = voice.pointee.songFade
  let ch = voice.pointee.channels
  if fade.isOver(at: clock) {
    if fade.fadingIn {
      voice.pointee.songFade = SongFade()  // faded in: nothing more to do
    } else {
      source.update(repeating: 0, count: count &* ch)
    }
    return
  }
  for i in 0..<count {
    let g = fade.gain(at: clock &+ i)
    if ch == 1 {
      source[i] *= g
    } else {
      source[2 &* i] *= g
      source[2 &* i &+ 1] *= g
    }
  }
}

/// True when every pending voice has enough audio to start.
/// `EngineCommand.changeSong`: asks for a switch to `song` at transport frame `frame` (with seek
/// epoch `epoch`), crossfading over `fadeFrames` (0: gapless). An earlier change still waiting for
/// its voices is superseded: its voices go back now (not at the switch), so changes in a row hand
/// their slots back before the slots run out.
@_noLocks
func requestSongChange(_ state: UnsafeMutablePointer<RenderState>, frame: Int, epoch: Int, fadeFrames: Int, song: Int) {
  for slot in 0..<state.pointee.slotLimit {
    guard let voice = state.pointee.voices[slot], voice.pointee.pending, voice.pointee.pendingSong < song else { continue }
    retireVoice(state, slot: slot, voice: voice)
  }
  state.pointee.songChange.pending = true
  state.pointee.songChange.song = song
  state.pointee.songChange.frame = frame
  state.pointee.songChange.epoch = epoch
  state.pointee.songChange.fadeFrames = Swift.max(0, fadeFrames)
  state.pointee.songChange.waitLeft = Int(state.pointee.sampleRate)
}

@_noLocks
func pendingVoicesPrimed(_ state: UnsafeMutablePointer<RenderState>) -> Bool {
  var all = true
  for slot in 0..<state.pointee.slotLimit {
    guard let voice = state.pointee.voices[slot], voice.pointee.pending, !voice.pointee.removing,
      voice.pointee.pendingSong == state.pointee.songChange.song
    else { continue }
    if !voiceIsPrimed(voice, primeFrames: state.pointee.transport.primeFrames) { all = false }
  }
  return all
}

/// At a block boundary: performs a requested song change once the next song is primed (or after
/// a second of waiting, reporting `primeTimeout`; its late voices then skip what they missed).
@_noLocks
func advanceSongChange(_ state: UnsafeMutablePointer<RenderState>, frameCount: Int) {
  guard state.pointee.songChange.pending else { return }
  if !pendingVoicesPrimed(state) {
    state.pointee.songChange.waitLeft &-= frameCount
    if state.pointee.songChange.waitLeft > 0 { return }
    _ = state.pointee.events.push(.primeTimeout)
  }
  performSongChange(state)
}

@_noLocks
func performSongChange(_ state: UnsafeMutablePointer<RenderState>) {
  state.pointee.songChange.pending = false
  state.pointee.transport.pendingJumpFrame = -1  // the old song's jump leaves with it (Jump.swift)
  let fadeFrames = state.pointee.songChange.fadeFrames
  let frame = state.pointee.songChange.frame
  let oldFrame = state.pointee.transport.frame
  let detachedClock = state.pointee.songChange.detachedClock
  for slot in 0..<state.pointee.slotLimit {
    guard var voice = state.pointee.voices[slot] else { continue }
    if !voice.pointee.pending && voice.pointee.replacement != nil {
      // A stem rebuilt in place whose old voice is still fading: the rebuilt one is the song's.
      retireVoice(state, slot: slot, voice: voice)
      guard let installed = state.pointee.voices[slot], installed != voice else { continue }
      voice = installed
    }
    if voice.pointee.pending {
      let song = voice.pointee.pendingSong
      if song > state.pointee.songChange.song { continue }  // a later change's, still to come
      if song < state.pointee.songChange.song || voice.pointee.removing {
        // A song that never started (superseded by this change) or a stem taken back.
        retireVoice(state, slot: slot, voice: voice)
        continue
      }
      voice.pointee.pending = false
      voice.pointee.songFade = fadeFrames > 0 ? SongFade(startFrame: frame, frames: fadeFrames, fadingIn: true) : SongFade()
    } else if fadeFrames == 0 {
      // Gapless: the old song (and what is left of an earlier crossfade) stops on this frame.
      let wasDetached = voice.pointee.detached
      retireVoice(state, slot: slot, voice: voice)
      if wasDetached && state.pointee.voices[slot] == nil { state.pointee.songChange.detachedCount &-= 1 }
    } else if !voice.pointee.detached {
      // Crossfade: the old song's voice leaves the transport and keeps going on the detached
      // clock, fading out. (An earlier crossfade's voices carry on with their own fades.)
      voice.pointee.detached = true
      voice.pointee.joinFrame = voice.pointee.joinFrame &- oldFrame &+ detachedClock
      voice.pointee.songFade = SongFade(startFrame: detachedClock, frames: fadeFrames, fadingIn: false)
      state.pointee.songChange.detachedCount &+= 1
    }
  }
  state.pointee.transport.frame = frame
  state.pointee.transport.pendingSeekFrame = -1
  state.pointee.schedule.count = 0  // the old song's timed changes mean nothing to the new one
  if state.pointee.transport.holding {
    state.pointee.transport.holding = false
    state.pointee.transport.playing = state.pointee.transport.playAfterHold
  }
  if !state.pointee.transport.pendingPause { state.pointee.transport.fade.jump(to: 1) }
  state.pointee.status.pointee.appliedEpoch.store(state.pointee.songChange.epoch, ordering: .relaxed)
  state.pointee.status.pointee.detachedVoices.store(state.pointee.songChange.detachedCount, ordering: .relaxed)
  state.pointee.status.pointee.songChanges.store(state.pointee.songChange.song, ordering: .relaxed)
}

/// Renders the detached voices (the old songs of crossfades) on their own clock into the
/// detached bus, whatever the transport does; hands back those whose fade is over.
/// Returns true when the detached bus holds something to add to the master.
@_noLocks
func renderDetachedVoices(_ state: UnsafeMutablePointer<RenderState>, frameCount n: Int) -> Bool {
  let clock = state.pointee.songChange.detachedClock
  state.pointee.songChange.detachedClock = clock &+ n
  guard state.pointee.songChange.detachedCount > 0 else { return false }
  state.pointee.songChange.detachedLeft.update(repeating: 0, count: n)
  state.pointee.songChange.detachedRight.update(repeating: 0, count: n)
  state.pointee.busLeft = state.pointee.songChange.detachedLeft
  state.pointee.busRight = state.pointee.songChange.detachedRight
  for slot in 0..<state.pointee.slotLimit {
    guard let voice = state.pointee.voices[slot], voice.pointee.detached else { continue }
    let removed = voice.pointee.removing && !voice.pointee.levels.gainLeft.isRamping
    if !removed && !voice.pointee.finished {
      renderVoice(state, voice, slot: slot, transportStart: clock, frameCount: n)
    }
    if removed || voice.pointee.finished || voice.pointee.songFade.isOver(at: clock &+ n) {
      retireVoice(state, slot: slot, voice: voice)
      if state.pointee.voices[slot] == nil { state.pointee.songChange.detachedCount &-= 1 }
    }
  }
  state.pointee.busLeft = state.pointee.mixLeft
  state.pointee.busRight = state.pointee.mixRight
  state.pointee.status.pointee.detachedVoices.store(state.pointee.songChange.detachedCount, ordering: .relaxed)
  return true
}
