// The common case of a voice's pass, without the copy: a voice in bypass (ratio exactly 1, no
// stretcher) with steady gains and its frames buffered is mixed straight from its ring's
// readable segments, instead of being copied into the scratch buffer first.

/// Mixes `count` frames at `offset` straight from the voice's ring when the voice is in bypass,
/// its gains are steady, it has nothing to skip and the ring holds all `count` frames; returns
/// false (having read nothing) when any of that does not hold, and the caller takes the general
/// path (`pullFrames` into the scratch buffer).
///
/// The samples mixed, the history kept for leaving the bypass and the meter are exactly those
/// of the general path; only the copy is gone.
///
/// - Realtime: safe; ring index loads and arithmetic. Proven by `@_noLocks`.
@_noLocks
func mixFromRing(
  _ state: UnsafeMutablePointer<RenderState>, _ voice: UnsafeMutablePointer<StemVoice>,
  slot: Int, offset: Int, count: Int, cells: UnsafePointer<MeterCells>
) -> Bool {
  guard voice.pointee.bypass, voice.pointee.stretch == nil, voice.pointee.skipFrames == 0,
    voice.pointee.levels.isPlain, !voice.pointee.eq.isActive
  else { return false }
  let ch = voice.pointee.channels
  let segments = voice.pointee.audio.readableSegments()
  let samples = count &* ch
  // A segment that ends mid-frame (never expected: the disk writes whole frames) takes the copy.
  guard segments.count >= samples, segments.first.count % ch == 0,
    let firstBase = segments.first.baseAddress
  else { return false }
  let firstFrames = Swift.min(count, segments.first.count / ch)
  mixVoice(state, voice, slot: slot, source: firstBase, offset: offset, count: firstFrames, cells: cells)
  remember(voice, firstBase, frames: firstFrames)
  if firstFrames < count, let secondBase = segments.second.baseAddress {
    // The read wraps around the ring's end: the rest comes from its start.
    let rest = count &- firstFrames
    mixVoice(state, voice, slot: slot, source: secondBase, offset: offset &+ firstFrames, count: rest, cells: cells)
    remember(voice, secondBase, frames: rest)
  }
  voice.pointee.audio.release(count: samples)
  voice.pointee.shared.pointee.readCounter.store(voice.pointee.audio.readCounter, ordering: .relaxed)
  voice.pointee.underrunning = false
  return true
}
