// The cue bus (issue 42, item 4): strips put on `stemdeck:cue_L/R` for headphones, before their
// fader (PFL: a stem after its EQ, at unity, unpanned; a bus or live input where its pre-fader
// sends tap it: after its EQ, inserts and width) or after it (AFL: through the strip's own
// ramped gains, its volume, pan, mute and solo). The cue only reads the strips' signals: the
// master is not touched. docs/architecture.md, *Cue bus*.

/// How a strip is cued (`EngineCommand.setCue`).
public enum CueTap: UInt8, BitwiseCopyable, Sendable {
  case off = 0, preFader = 1, afterFader = 2
}

/// The cue's state in the renderer: each stem slot's, bus's and live input's tap, and the output
/// buffers the driver sets before each block (nil: nowhere to write; cleared by `renderBlock`).
public struct RenderCue {
  @usableFromInline let taps: UnsafeMutablePointer<CueTap>
  @usableFromInline let count: Int
  @usableFromInline let busTaps: UnsafeMutablePointer<CueTap>
  @usableFromInline let inputTaps: UnsafeMutablePointer<CueTap>
  public var outputLeft: UnsafeMutablePointer<Float>?
  public var outputRight: UnsafeMutablePointer<Float>?

  init(maxVoices: Int) {
    count = maxVoices
    taps = .allocate(capacity: maxVoices)
    taps.initialize(repeating: .off, count: maxVoices)
    busTaps = .allocate(capacity: BusBank.maxBuses)
    busTaps.initialize(repeating: .off, count: BusBank.maxBuses)
    inputTaps = .allocate(capacity: InputBank.maxInputs)
    inputTaps.initialize(repeating: .off, count: InputBank.maxInputs)
  }

  func free() {
    taps.deallocate()
    busTaps.deallocate()
    inputTaps.deallocate()
  }

  /// Sets a strip's tap (out of range, or the master: ignored).
  @_noLocks
  func set(_ target: StripTarget, _ tap: CueTap) {
    switch target {
    case .stem(let slot): if slot >= 0 && Int(slot) < count { taps[Int(slot)] = tap }
    case .bus(let b): if b >= 0 && Int(b) < BusBank.maxBuses { busTaps[Int(b)] = tap }
    case .input(let i): if i >= 0 && Int(i) < InputBank.maxInputs { inputTaps[Int(i)] = tap }
    case .master: break
    }
  }

  /// A bus's or live input's tap (out of range: off).
  @_noLocks
  func tap(of target: StripTarget) -> CueTap {
    switch target {
    case .bus(let b): b >= 0 && Int(b) < BusBank.maxBuses ? busTaps[Int(b)] : .off
    case .input(let i): i >= 0 && Int(i) < InputBank.maxInputs ? inputTaps[Int(i)] : .off
    case .stem, .master: .off
    }
  }
}

/// Adds a bus's or live input's `count` frames (`left`/`right`, at the pass's start) to the cue
/// outputs when it is cued at this point of its strip: `afterFader` false where its pre-fader
/// sends tap it (PFL), true after its fader (AFL).
///
/// - Realtime: safe. Proven by `@_noLocks`.
@_noLocks
func mixStripCue(
  _ state: UnsafeMutablePointer<RenderState>, _ target: StripTarget,
  left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, count: Int, afterFader: Bool
) {
  let tap = state.pointee.cue.tap(of: target)
  guard tap == (afterFader ? .afterFader : .preFader), let outL = state.pointee.cue.outputLeft,
    let outR = state.pointee.cue.outputRight
  else { return }
  let at = state.pointee.passOffset
  for i in 0..<count {
    outL[at &+ i] += left[i]
    outR[at &+ i] += right[i]
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
