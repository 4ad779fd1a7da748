// Quantised jumps (`goto NAME bar|end`, issue 42, item 2): the transport goes on from another
// position on a frame chosen in advance (a bar line, a loop's end), with no fade and no hold.
// docs/architecture.md, *Marks and quantised jumps*.
//
// The control thread picks the frame at least `Mixer.Marks.jumpLead` ahead and, for every stem, asks
// the disk for a new epoch whose stream starts *after a cut* in the stream playing now
// (`StemShared.requestedCut`: the source frame the stem reaches on the jump's frame, plus a
// margin). The disk keeps writing the old stream up to the cut, then places the epoch's boundary
// and writes the target's stream after it, so the ring holds both: the old stream for every frame
// up to the jump, the target after it. On the jump's frame (a pass ends there: `renderBlock`)
// every voice is pointed at the new epoch (`resyncVoice`) and, in the same pass, drops what is
// left of the old stream up to the boundary (`syncVoice`) and plays the target. A voice whose
// target has not arrived by then (a disk too slow for the lead) plays silence and, once it has
// audio, skips what it missed: it sounds in step with the transport, which never waits.

/// Stores a jump for frame `at` (replacing one still waiting).
@_noLocks
func scheduleJump(_ state: UnsafeMutablePointer<RenderState>, at: Int, to target: Int, epoch: Int) {
  state.pointee.transport.pendingJumpFrame = Swift.max(0, at)
  state.pointee.transport.pendingJumpTarget = Swift.max(0, target)
  state.pointee.transport.pendingJumpEpoch = epoch
}

/// Performs the waiting jump if the playing transport has reached its frame (at the start of a
/// pass: `renderBlock` ends the pass before it there). A jump whose frame has passed (its
/// command came late) is performed at once.
///
/// - Realtime: safe; bounded by the voice slots. Proven by `@_noLocks`.
@_noLocks
func applyDueJump(_ state: UnsafeMutablePointer<RenderState>) {
  let due = state.pointee.transport.pendingJumpFrame
  guard due >= 0, state.pointee.transport.playing, state.pointee.transport.frame >= due else { return }
  let target = state.pointee.transport.pendingJumpTarget
  let epoch = state.pointee.transport.pendingJumpEpoch
  state.pointee.transport.pendingJumpFrame = -1
  state.pointee.transport.frame = target
  state.pointee.status.pointee.transportFrame.store(target, ordering: .relaxed)
  state.pointee.status.pointee.appliedEpoch.store(epoch, ordering: .relaxed)
  for slot in 0..<state.pointee.slotLimit {
    // Detached voices (an old song fading out) have left the transport; pending ones wait.
    guard let voice = state.pointee.voices[slot], !voice.pointee.detached, !voice.pointee.pending else { continue }
    resyncVoice(state, voice, frame: target, epoch: epoch)
    if let waiting = voice.pointee.replacement { resyncVoice(state, waiting, frame: target, epoch: epoch) }
  }
}
