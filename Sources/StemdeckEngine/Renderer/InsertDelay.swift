// A strip's latency compensation delay: the line at the end of its insert chain (Inserts.swift),
// and what happens to the audio in it when the chain is replaced. docs/architecture.md,
// *Plugin inserts*, *Latency*.
//
// The line is a ring of `delayFrames` frames per channel. Steady, each frame's sample is swapped
// with the one `delayFrames` before it. A chain replacing another (a plugin added, removed or
// bypassed anywhere changes the plan; a change of the strip's own inserts resends its chain)
// takes over what the old line still held, so the audio runs on:
// - the same delay, or a shorter one: the newest `delayFrames` frames in flight carry over
//   (a shorter delay skips the oldest: the strip jumps ahead by the difference);
// - a longer one: everything in flight carries over and plays at the old delay (its `lag`),
//   while the line fills; after `delayFrames` frames the line is full and the delay moves to
//   its new length over a 64-frame crossfade, replaying the last (new − old) frames once. The
//   time shift a longer delay needs is a repeat of audio just heard, never a gap of silence,
//   and the crossfade keeps the seam from clicking.

/// The crossfade's length in frames when a longer delay takes over (1.3 ms at 48 kHz).
public let jumpFadeFrames = 64

/// Gives `new` what `old`'s delay line holds in flight (none: an old chain without a delay, or
/// no old chain): the newest frames, as many as fit, at the end of `new`'s line, oldest first,
/// so that reading `lag` frames behind the write position plays them next.
///
/// - Realtime: safe. Copies at most `2 × new.delayFrames` floats; no allocation or lock.
/// - Thread: the renderer's, as it installs `new` in `old`'s place (`setInserts`).
@_noLocks
func carryDelay(from old: UnsafeMutablePointer<InsertChain>?, to new: UnsafeMutablePointer<InsertChain>) {
  let d = new.pointee.delayFrames
  guard d > 0 else { return }
  var carried = 0
  if let old, old.pointee.delayFrames > 0 {
    let od = old.pointee.delayFrames
    // The old line's frames in flight: the `lag` written last, behind its position.
    carried = Swift.min(old.pointee.lag, d)
    let from = (old.pointee.delayPosition &+ od &- carried) % od
    for plane in 0..<2 {
      let source = old.pointee.delayLine + plane &* od
      let target = new.pointee.delayLine + (plane &* d &+ d &- carried)
      var at = from
      for k in 0..<carried {
        target[k] = source[at]
        at &+= 1
        if at == od { at = 0 }
      }
    }
  }
  new.pointee.delayPosition = 0
  new.pointee.lag = carried
  new.pointee.catchUp = carried < d ? d : 0
}

/// The chain's compensation delay over `count` frames (none: nothing): each sample swapped with
/// the one `delayFrames` earlier in the line, or, while the line catches up after a longer
/// delay replaced a shorter one, written and the one `lag` frames earlier read.
///
/// - Realtime: safe. No allocation, lock or call; time linear in `count`.
@_noLocks @inline(__always)
func compensate(
  _ chain: UnsafeMutablePointer<InsertChain>, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>?,
  stride: Int, count: Int
) {
  let d = chain.pointee.delayFrames
  guard d > 0 else { return }
  let lineL = chain.pointee.delayLine, lineR = lineL + d
  var at = chain.pointee.delayPosition
  var i = 0
  if chain.pointee.catchUp > 0 {
    let lag = chain.pointee.lag
    let n = Swift.min(count, chain.pointee.catchUp)
    while i < n {
      let k = i &* stride
      var back = at &- lag
      if back < 0 { back &+= d }
      lineL[at] = left[k]
      left[k] = lineL[back]
      if let right {
        lineR[at] = right[k]
        right[k] = lineR[back]
      }
      at &+= 1
      if at == d { at = 0 }
      i &+= 1
    }
    chain.pointee.catchUp &-= n
    if chain.pointee.catchUp == 0 {
      chain.pointee.fadeLag = lag
      chain.pointee.fadeLeft = jumpFadeFrames
      chain.pointee.lag = d
    }
  }
  if chain.pointee.fadeLeft > 0 {
    // The crossfade from the old delay to the full one: frame j of it weighs the full delay's
    // sample (the line's oldest, read before it is overwritten) by (j + 1) / (fade + 1).
    let fadeLag = chain.pointee.fadeLag
    let total = jumpFadeFrames
    var left_ = chain.pointee.fadeLeft
    while i < count && left_ > 0 {
      let k = i &* stride
      var back = at &- fadeLag
      if back < 0 { back &+= d }
      let w = Float(total &- left_ &+ 1) / Float(total &+ 1)
      let fullL = lineL[at]
      lineL[at] = left[k]
      let oldL = lineL[back]
      left[k] = oldL + w * (fullL - oldL)
      if let right {
        let fullR = lineR[at]
        lineR[at] = right[k]
        let oldR = lineR[back]
        right[k] = oldR + w * (fullR - oldR)
      }
      at &+= 1
      if at == d { at = 0 }
      i &+= 1
      left_ &-= 1
    }
    chain.pointee.fadeLeft = left_
  }
  while i < count {
    let k = i &* stride
    let l = lineL[at]
    lineL[at] = left[k]
    left[k] = l
    if let right {
      let r = lineR[at]
      lineR[at] = right[k]
      right[k] = r
    }
    at &+= 1
    if at == d { at = 0 }
    i &+= 1
  }
  chain.pointee.delayPosition = at
}
