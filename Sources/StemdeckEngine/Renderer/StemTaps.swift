// Stem export in one pass (`render --stems`, issue 23): with `RenderState.stemTaps` on, every
// stem the offline renderer gave direct-out buffers (its tap) is written there by `mixVoice`
// (`mixVoiceIntoTap`), which adds the same samples to the master mix in the same pass; after the
// master stage, where the transport fade or the master gain is not 1, the taps get them too
// (`applyMasterToStemTaps`). The buffers then hold each stem as the master hears it, and they sum
// to the master (effects aside, which renders never fire). A live input on the master is tapped
// the same way (`mixInputs` writes its tap and feeds the master), and so is a bus
// (`renderBuses`). Live, direct outs keep their meaning (a stem goes to its own ports instead of
// the master) and this is off.
//
// A stem's tap is written once a block, not zeroed first and then added to: `tapCursors[slot]`
// says how far into the block it already holds this block's samples; a write past the cursor
// zeroes the gap first, and what no voice wrote (before a stem's start, after its end, while
// paused) is zeroed at the end of the block (`finishStemTaps`). docs/architecture.md, *Stem export*.
//
// A stem's tap is planar (left and right buffers) or, with `RenderState.tapStride` 2, interleaved
// stereo: then it is the stem's part of the stem writer's chunk, written in the mix's own pass
// (`tapStereoSteadyInterleaved`), and no pass interleaves it afterwards. Every write below indexes
// frame i at `i × stride` from the left and the right entry (the right one float past the left
// when interleaved), so both layouts get the same values in the same order.

/// Zeroes stem `slot`'s tap from its cursor up to `end` (frames into the block) and moves the
/// cursor there; nothing when the cursor is already there or the slot has no tap.
@_noLocks
@inline(__always)
func clearStemTap(_ state: UnsafeMutablePointer<RenderState>, slot: Int, through end: Int) {
  let cursor = state.pointee.tapCursors[slot]
  guard cursor < end, let dl = state.pointee.directOutputs[2 &* slot],
    let dr = state.pointee.directOutputs[2 &* slot &+ 1]
  else { return }
  if state.pointee.tapStride == 2 {
    // Interleaved: the frames' left and right samples are contiguous from `dl` (`dr` is dl + 1).
    (dl + 2 &* cursor).update(repeating: 0, count: 2 &* (end &- cursor))
  } else {
    (dl + cursor).update(repeating: 0, count: end &- cursor)
    (dr + cursor).update(repeating: 0, count: end &- cursor)
  }
  state.pointee.tapCursors[slot] = end
}

/// The end of a block of `n` frames: zeroes what no voice wrote of every stem's tap (`slots`:
/// the slot limit the block started with; the current one may differ after the block's changes).
@_noLocks
func finishStemTaps(_ state: UnsafeMutablePointer<RenderState>, slots: Int, frameCount n: Int) {
  for slot in 0..<Swift.max(slots, state.pointee.slotLimit) { clearStemTap(state, slot: slot, through: n) }
}

/// `mixVoice` for a tapped stem in a stem export: its `count` source frames at `offset` of the
/// pass, times its ramped gains, written into its tap and added to the master mix, then metered.
/// The usual case (steady gains, a stereo source, frames past the tap's cursor) is one SIMD pass
/// that stores into the tap and adds to the mix (`tapStereoSteady`); anything else zeroes the
/// tap up to the frames' end and adds into both. With an interleaved tap (`tapStride` 2) the usual
/// case stores into it interleaved (`tapStereoSteadyInterleaved`), and the rest adds to it frame by
/// frame as the planar path does.
@_noLocks
func mixVoiceIntoTap(
  _ state: UnsafeMutablePointer<RenderState>, _ voice: UnsafeMutablePointer<StemVoice>,
  slot: Int, source: UnsafeMutablePointer<Float>, offset: Int, count: Int,
  tap: (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>),
  stepL: (start: Float, step: Float, rampFrames: Int), stepR: (start: Float, step: Float, rampFrames: Int),
  cells: UnsafePointer<MeterCells>, preFader: Bool
) {
  let at = state.pointee.passOffset &+ offset
  let stride = state.pointee.tapStride
  let tapL = tap.0 + at &* stride, tapR = tap.1 + at &* stride
  let mixL = state.pointee.mixLeft + offset, mixR = state.pointee.mixRight + offset
  let mono = voice.pointee.channels == 1
  let metering = state.pointee.stemMetering
  let steady = stepL.rampFrames == 0 && stepR.rampFrames == 0
  if steady && !mono && state.pointee.tapCursors[slot] <= at {
    clearStemTap(state, slot: slot, through: at)
    let levels =
      stride == 2
      ? tapStereoSteadyInterleaved(
        source, frames: count, gainLeft: stepL.start, gainRight: stepR.start, tap: tapL, left: mixL, right: mixR,
        metering: metering)
      : tapStereoSteady(
        source, frames: count, gainLeft: stepL.start, gainRight: stepR.start, tapLeft: tapL, tapRight: tapR,
        left: mixL, right: mixR, metering: metering)
    state.pointee.tapCursors[slot] = at &+ count
    postFaderMeter(
      state, voice, source: source, count: count, stepL: stepL, stepR: stepR,
      mono: mono, cells: cells, preFader: preFader, levels: levels)
    return
  }
  clearStemTap(state, slot: slot, through: at &+ count)
  // Anything else (a mono source, ramping gains, frames the tap already holds: never expected):
  // the products added into the zeroed tap, then into the mix and metered as `mixVoice` does.
  // Both passes compute the same products (0 + x·g in the tap), so the tap is the stem as mixed.
  if steady && stride == 1 {
    _ = mixSteady(
      source, mono: mono, frames: count, gainLeft: stepL.start, gainRight: stepR.start, left: tapL, right: tapR,
      metering: false)
  } else {
    let targets = steady ? (stepL.start, stepR.start) : (voice.pointee.levels.gainLeft.current, voice.pointee.levels.gainRight.current)
    mixRamping(source, mono: mono, count: count, stepL: stepL, stepR: stepR, targets: targets, left: tapL, right: tapR, stride: stride)
  }
  mixAndMeter(
    state, voice, source: source, count: count, stepL: stepL, stepR: stepR, mono: mono, cells: cells, preFader: preFader,
    left: mixL, right: mixR)
}

/// Gives every tapped stem's buffers the gains the master stage just applied: the transport
/// fade times the master gain, sample by sample through their ramps (`renderPass` computes the
/// same sequence for the master). Where both are 1 and steady (a render's usual case) there is
/// nothing to do, and the taps are not touched.
@_noLocks
func applyMasterToStemTaps(
  _ state: UnsafeMutablePointer<RenderState>,
  fade: (start: Float, step: Float, rampFrames: Int), gain: (start: Float, step: Float, rampFrames: Int),
  frameCount n: Int
) {
  let at = state.pointee.passOffset
  let direct = state.pointee.directOutputs
  let fadeTarget = state.pointee.transport.fade.current
  let gainTarget = state.pointee.masterGain.current
  let steady = fade.rampFrames == 0 && gain.rampFrames == 0
  // The stems' taps, then the buses' (a bus's tap is its direct-out index: Buses.swift).
  let busTaps = state.pointee.maxVoices
  let stems = state.pointee.slotLimit
  let tapStride = state.pointee.tapStride
  for index in 0..<(steady && fade.start * gain.start == 1 ? 0 : stems &+ BusBank.maxBuses) {
    let slot = index < stems ? index : busTaps &+ (index &- stems)
    guard let dl = direct[2 &* slot], let dr = direct[2 &* slot &+ 1] else { continue }
    // A stem's frames of this pass that no voice wrote are zeroed first (the tap is not cleared
    // before the block).
    if index < stems { clearStemTap(state, slot: slot, through: at &+ n) }
    // A stem's tap may be interleaved (frame i at i × stride); a bus's is planar.
    let s = index < stems ? tapStride : 1
    if steady {
      let g = fade.start * gain.start
      for i in 0..<n {
        dl[(at &+ i) &* s] *= g
        dr[(at &+ i) &* s] *= g
      }
    } else {
      var f = fade.start, m = gain.start
      for i in 0..<n {
        // In the master's order, (x · fade) · gain: one stem alone is then its master exactly.
        let k = (at &+ i) &* s
        dl[k] = dl[k] * f * m
        dr[k] = dr[k] * f * m
        f = i &+ 1 < fade.rampFrames ? f + fade.step : fadeTarget
        m = i &+ 1 < gain.rampFrames ? m + gain.step : gainTarget
      }
    }
  }
  // The live inputs' taps (those on the master: InputStrips.swift): they join the master after
  // the transport fade, so they get the master gain alone.
  let inputTaps = InputBank.directSlot(0, maxVoices: state.pointee.maxVoices)
  let inputs = gain.rampFrames == 0 && gain.start == 1 ? 0 : Swift.min(InputBank.maxInputs, state.pointee.inputDirectCount)
  for index in 0..<inputs {
    let slot = inputTaps &+ index
    guard let dl = direct[2 &* slot], let dr = direct[2 &* slot &+ 1] else { continue }
    var m = gain.start
    for i in 0..<n {
      dl[at &+ i] *= m
      dr[at &+ i] *= m
      m = i &+ 1 < gain.rampFrames ? m + gain.step : gainTarget
    }
  }
}
