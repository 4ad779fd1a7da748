// The cue bus (issue 42, item 4): stems put on `stemdeck:cue_L/R` for headphones, before their
// fader (PFL: after their EQ, at unity, unpanned) or after it (AFL: through the voice's own
// ramped gains, its volume, pan, mute and solo). The cue only reads the voice's signal: the
// master is not touched. docs/architecture.md, *Cue bus*.

/// How a stem is cued (`EngineCommand.setCue`).
public enum CueTap: UInt8, BitwiseCopyable, Sendable {
  case off = 0, preFader = 1, afterFader = 2
}

/// The cue's state in the renderer: each slot's tap and the output buffers the driver sets
/// before each block (nil: nowhere to write; cleared by `renderBlock`).
public struct RenderCue {
  @usableFromInline let taps: UnsafeMutablePointer<CueTap>
  @usableFromInline let count: Int
  public var outputLeft: UnsafeMutablePointer<Float>?
  public var outputRight: UnsafeMutablePointer<Float>?

  init(maxVoices: Int) {
    count = maxVoices
    taps = .allocate(capacity: maxVoices)
    taps.initialize(repeating: .off, count: maxVoices)
  }

  func free() { taps.deallocate() }

  /// Sets slot `slot`'s tap (out of range: ignored).
  @_noLocks
  func set(_ slot: Int32, _ tap: CueTap) {
    let s = Int(slot)
    guard s >= 0, s < count else { return }
    taps[s] = tap
  }
}

/// Clears the click's and the cue's own outputs for the block (before any pass writes them).
@_noLocks
func clearMonitorOutputs(_ state: UnsafeMutablePointer<RenderState>, frameCount: Int) {
  clearClickOutputs(state, frameCount: frameCount)
  if let l = state.pointee.cue.outputLeft { l.update(repeating: 0, count: frameCount) }
  if let r = state.pointee.cue.outputRight { r.update(repeating: 0, count: frameCount) }
}

/// Adds a voice's `count` source frames to the cue outputs when it is cued: PFL straight from
/// the source, AFL through its ramped channel gains (`stepL`/`stepR`, already advanced).
///
/// - Realtime: safe. Proven by `@_noLocks`.
@_noLocks
func mixVoiceCue(
  _ state: UnsafeMutablePointer<RenderState>, _ voice: UnsafeMutablePointer<StemVoice>,
  slot: Int, source: UnsafeMutablePointer<Float>, offset: Int, count: Int,
  stepL: (start: Float, step: Float, rampFrames: Int), stepR: (start: Float, step: Float, rampFrames: Int), mono: Bool
) {
  guard slot >= 0, slot < state.pointee.cue.count, !voice.pointee.detached else { return }
  let tap = state.pointee.cue.taps[slot]
  guard tap != .off, let outL = state.pointee.cue.outputLeft, let outR = state.pointee.cue.outputRight else { return }
  let at = state.pointee.passOffset &+ offset
  let pre = tap == .preFader
  let tl = voice.pointee.levels.gainLeft.current, tr = voice.pointee.levels.gainRight.current
  var gl = pre ? 1 : stepL.start, gr = pre ? 1 : stepR.start
  for i in 0..<count {
    let xl = mono ? source[i] : source[2 &* i]
    let xr = mono ? xl : source[2 &* i &+ 1]
    outL[at &+ i] += xl * gl
    outR[at &+ i] += xr * gr
    if !pre {
      gl = i &+ 1 < stepL.rampFrames ? gl + stepL.step : tl
      gr = i &+ 1 < stepR.rampFrames ? gr + stepR.step : tr
    }
  }
}
