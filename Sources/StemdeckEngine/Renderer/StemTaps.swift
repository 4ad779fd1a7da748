// Stem export in one pass (`render --stems`, issue 23): with `RenderState.stemTaps` on, every
// stem the offline renderer gave direct-out buffers is written there by `mixVoice` as usual, then
// also added to the master mix here, and after the master stage its buffers get the same
// transport fade and master gain as the master. The buffers then hold each stem as the master
// hears it, and they sum to the master (effects aside, which renders never fire). A live input
// on the master is tapped the same way (`mixInputs` writes its tap and feeds the master). Live, direct
// outs keep their meaning (a stem goes to its own ports instead of the master) and this is off.

/// Adds every tapped stem's buffers for this pass into the master mix.
@_noLocks
func addStemTapsToMix(_ state: UnsafeMutablePointer<RenderState>, frameCount n: Int) {
  let mixL = state.pointee.mixLeft, mixR = state.pointee.mixRight
  let at = state.pointee.passOffset
  let direct = state.pointee.directOutputs
  for slot in 0..<state.pointee.slotLimit {
    guard let dl = direct[2 &* slot], let dr = direct[2 &* slot &+ 1] else { continue }
    for i in 0..<n {
      mixL[i] += dl[at &+ i]
      mixR[i] += dr[at &+ i]
    }
  }
}

/// Gives every tapped stem's buffers the gains the master stage just applied: the transport
/// fade times the master gain, sample by sample through their ramps (`renderPass` computes the
/// same sequence for the master).
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
  // The stems' taps, then the buses' (a bus's tap is its direct-out index: Buses.swift).
  let busTaps = state.pointee.maxVoices
  for index in 0..<(state.pointee.slotLimit &+ BusBank.maxBuses) {
    let slot = index < state.pointee.slotLimit ? index : busTaps &+ (index &- state.pointee.slotLimit)
    guard let dl = direct[2 &* slot], let dr = direct[2 &* slot &+ 1] else { continue }
    if fade.rampFrames == 0 && gain.rampFrames == 0 {
      let g = fade.start * gain.start
      for i in 0..<n {
        dl[at &+ i] *= g
        dr[at &+ i] *= g
      }
    } else {
      var f = fade.start, m = gain.start
      for i in 0..<n {
        // In the master's order, (x · fade) · gain: one stem alone is then its master exactly.
        dl[at &+ i] = dl[at &+ i] * f * m
        dr[at &+ i] = dr[at &+ i] * f * m
        f = i &+ 1 < fade.rampFrames ? f + fade.step : fadeTarget
        m = i &+ 1 < gain.rampFrames ? m + gain.step : gainTarget
      }
    }
  }
  // The live inputs' taps (those on the master: InputStrips.swift): they join the master after
  // the transport fade, so they get the master gain alone.
  let inputTaps = InputBank.directSlot(0, maxVoices: state.pointee.maxVoices)
  for index in 0..<Swift.min(InputBank.maxInputs, state.pointee.inputDirectCount) {
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
