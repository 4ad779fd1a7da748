// Aux sends and returns (issue 22, item 2): a send is a pair of JACK outputs (`NAME_send_L/R`) fed
// from the stems at a per-stem level, pre- or post-fader, and a pair of return inputs
// (`NAME_return_L/R`) summed into the master with their own volume, like a live input strip.
// docs/architecture.md, *Aux sends*.

/// The renderer's sends: levels per stem slot and send, the port buffers the driver hands in for
/// each block, and the returns' gains. All preallocated in `RenderState.make`.
public struct SendBank: ~Copyable {
  /// The most sends a session can have.
  public static let maxSends = 8
  @usableFromInline let maxVoices: Int
  /// Whether each send is in use.
  @usableFromInline let active: UnsafeMutablePointer<Bool>
  /// The send outputs' buffers for the current block (left, right per send), set by the driver
  /// before each `renderBlock` (nil: nowhere to write). `maxSends` × 2.
  public let outputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
  /// The return inputs' buffers for the current block (never written), nil: silence. `maxSends` × 2.
  public let returns: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
  /// Each return's volume (10 ms ramps).
  @usableFromInline let returnGains: UnsafeMutablePointer<GainRamp>
  /// Each return's meter (after its volume, as a strip's post-fader meter), read by the control
  /// thread, and its accumulator; `work` holds a return's scaled signal for one pass (left
  /// plane, then right plane, `maxBlockFrames` each).
  public let returnMeters: UnsafeMutablePointer<MeterCells>
  @usableFromInline let returnMeterState: UnsafeMutablePointer<MeterAccumulator>
  @usableFromInline let work: UnsafeMutablePointer<Float>
  @usableFromInline let maxBlockFrames: Int
  /// Send level of slot s into send k at `levels[s × maxSends + k]` (10 ms ramps), and whether it
  /// is taken before the stem's fader.
  @usableFromInline let levels: UnsafeMutablePointer<GainRamp>
  @usableFromInline let preFader: UnsafeMutablePointer<Bool>
  /// Whether slot s has any send level that is not silent (or still ramping).
  @usableFromInline let slotUsed: UnsafeMutablePointer<Bool>
  /// The buses' levels (`BusBank.maxBuses` strips) and the live inputs' (`InputBank.maxInputs`).
  public let buses: StripSendLevels
  public let inputs: StripSendLevels

  init(sampleRate: Double, maxVoices: Int, maxBlockFrames: Int) {
    self.maxVoices = maxVoices
    self.maxBlockFrames = maxBlockFrames
    let ramp = Swift.max(1, Int(sampleRate * 0.010))
    let k = SendBank.maxSends
    active = .allocate(capacity: k)
    active.initialize(repeating: false, count: k)
    outputs = .allocate(capacity: k * 2)
    outputs.initialize(repeating: nil, count: k * 2)
    returns = .allocate(capacity: k * 2)
    returns.initialize(repeating: nil, count: k * 2)
    returnGains = .allocate(capacity: k)
    returnGains.initialize(repeating: GainRamp(gain: 0, length: ramp), count: k)
    returnMeters = .allocate(capacity: k)
    for i in 0..<k { (returnMeters + i).initialize(to: MeterCells()) }
    returnMeterState = .allocate(capacity: k)
    returnMeterState.initialize(repeating: MeterAccumulator(sampleRate: sampleRate), count: k)
    work = .allocate(capacity: 2 * maxBlockFrames)
    work.initialize(repeating: 0, count: 2 * maxBlockFrames)
    levels = .allocate(capacity: maxVoices * k)
    levels.initialize(repeating: GainRamp(gain: 0, length: ramp), count: maxVoices * k)
    preFader = .allocate(capacity: maxVoices * k)
    preFader.initialize(repeating: false, count: maxVoices * k)
    slotUsed = .allocate(capacity: maxVoices)
    slotUsed.initialize(repeating: false, count: maxVoices)
    buses = StripSendLevels(strips: BusBank.maxBuses, rampFrames: ramp)
    inputs = StripSendLevels(strips: InputBank.maxInputs, rampFrames: ramp)
  }

  /// Frees the table (control thread, once the renderer has stopped).
  func free() {
    active.deallocate()
    outputs.deallocate()
    returns.deallocate()
    returnGains.deallocate()
    returnMeters.deinitialize(count: SendBank.maxSends)
    returnMeters.deallocate()
    returnMeterState.deallocate()
    work.deallocate()
    levels.deallocate()
    preFader.deallocate()
    slotUsed.deallocate()
    buses.free()
    inputs.free()
  }

  /// Starts send `index` with its return at `returnGain`; every stem's level into it is silent.
  @_noLocks
  mutating func add(index: Int, returnGain: Float) {
    guard index >= 0, index < SendBank.maxSends else { return }
    active[index] = true
    (returnGains + index).pointee.jump(to: returnGain)
    for slot in 0..<maxVoices {
      (levels + (slot &* SendBank.maxSends &+ index)).pointee.jump(to: 0)
      preFader[slot &* SendBank.maxSends &+ index] = false
    }
    buses.clear(send: index)
    inputs.clear(send: index)
  }

  /// Stops send `index` (its ports go after this; its return fades for 10 ms on the way).
  @_noLocks
  mutating func remove(index: Int) {
    guard index >= 0, index < SendBank.maxSends else { return }
    active[index] = false
    for slot in 0..<maxVoices { (levels + (slot &* SendBank.maxSends &+ index)).pointee.jump(to: 0) }
    buses.clear(send: index)
    inputs.clear(send: index)
    (returnGains + index).pointee.set(target: 0)
  }

  /// Slot `slot`'s level into send `index` (ramped over 10 ms; `jump`: at once).
  @_noLocks
  mutating func setLevel(slot: Int, index: Int, gain: Float, preFader pre: Bool, jump: Bool) {
    guard slot >= 0, slot < maxVoices, index >= 0, index < SendBank.maxSends, active[index] else { return }
    let at = slot &* SendBank.maxSends &+ index
    if preFader[at] != pre {
      // Pre and post take different signals: switching starts from silence (no step).
      (levels + at).pointee.jump(to: 0)
      preFader[at] = pre
    }
    if jump { (levels + at).pointee.jump(to: gain) } else { (levels + at).pointee.set(target: gain) }
    if gain != 0 || (levels + at).pointee.isRamping { slotUsed[slot] = true }
  }

  /// The volume of send `index`'s return (ramped).
  @_noLocks
  mutating func setReturnGain(index: Int, gain: Float) {
    guard index >= 0, index < SendBank.maxSends, active[index] else { return }
    (returnGains + index).pointee.set(target: gain)
  }
}

/// Clears the send outputs at the start of a block.
@_noLocks
func clearSendOutputs(_ state: UnsafeMutablePointer<RenderState>, frameCount: Int) {
  for i in 0..<(SendBank.maxSends &* 2) {
    if let buffer = state.pointee.sends.outputs[i] { buffer.update(repeating: 0, count: frameCount) }
  }
}

/// Adds a voice's `count` source frames to each send it feeds: post-fader through the voice's
/// ramped channel gains (`stepL`/`stepR`, already advanced: its volume, pan, mute and solo),
/// pre-fader straight from the source (after its EQ). `offset` is within the pass.
@_noLocks
func mixVoiceSends(
  _ state: UnsafeMutablePointer<RenderState>, _ voice: UnsafeMutablePointer<StemVoice>,
  slot: Int, source: UnsafeMutablePointer<Float>, offset: Int, count: Int,
  stepL: (start: Float, step: Float, rampFrames: Int), stepR: (start: Float, step: Float, rampFrames: Int), mono: Bool
) {
  guard slot >= 0, slot < state.pointee.sends.maxVoices, state.pointee.sends.slotUsed[slot], !voice.pointee.detached else {
    return
  }
  let at = state.pointee.passOffset &+ offset
  let tl = voice.pointee.levels.gainLeft.current, tr = voice.pointee.levels.gainRight.current
  var used = false
  for k in 0..<SendBank.maxSends {
    let level = state.pointee.sends.levels + (slot &* SendBank.maxSends &+ k)
    guard state.pointee.sends.active[k], level.pointee.current != 0 || level.pointee.isRamping else { continue }
    let step = level.pointee.advance(frames: count)
    let target = level.pointee.current
    if target != 0 { used = true }
    guard let outL = state.pointee.sends.outputs[2 &* k], let outR = state.pointee.sends.outputs[2 &* k &+ 1] else {
      continue
    }
    let pre = state.pointee.sends.preFader[slot &* SendBank.maxSends &+ k]
    var g = step.start
    var gl = pre ? 1 : stepL.start, gr = pre ? 1 : stepR.start
    for i in 0..<count {
      let xl = mono ? source[i] : source[2 &* i]
      let xr = mono ? xl : source[2 &* i &+ 1]
      outL[at &+ i] += xl * gl * g
      outR[at &+ i] += xr * gr * g
      g = i &+ 1 < step.rampFrames ? g + step.step : target
      if !pre {
        gl = i &+ 1 < stepL.rampFrames ? gl + stepL.step : tl
        gr = i &+ 1 < stepR.rampFrames ? gr + stepR.step : tr
      }
    }
  }
  if !used { state.pointee.sends.slotUsed[slot] = false }
}

/// Adds every send's return (its input ports at the return's ramped volume) to `outL`/`outR`
/// (`add` false: overwrites them first) and meters it. Returns whether anything was written.
@_noLocks
func mixSendReturns(
  _ state: UnsafeMutablePointer<RenderState>, intoLeft outL: UnsafeMutablePointer<Float>,
  right outR: UnsafeMutablePointer<Float>, frameCount n: Int, add: Bool
) -> Bool {
  var written = add
  let offset = state.pointee.passOffset
  let wl = state.pointee.sends.work, wr = wl + state.pointee.sends.maxBlockFrames
  for k in 0..<SendBank.maxSends {
    let ramp = state.pointee.sends.returnGains + k
    guard state.pointee.sends.active[k] || ramp.pointee.isRamping else { continue }
    let meter = state.pointee.sends.returnMeterState + k
    let cells = UnsafePointer(state.pointee.sends.returnMeters + k)
    let step = ramp.pointee.advance(frames: n)
    let target = ramp.pointee.current
    let inL = state.pointee.sends.returns[2 &* k], inR = state.pointee.sends.returns[2 &* k &+ 1]
    if (step.start == 0 && target == 0) || (inL == nil && inR == nil) {
      meter.pointee.accumulateSilence(count: n, into: cells)
      continue
    }
    var g = step.start
    for i in 0..<n {
      wl[i] = (inL?[offset &+ i] ?? 0) * g
      wr[i] = (inR?[offset &+ i] ?? 0) * g
      g = i &+ 1 < step.rampFrames ? g + step.step : target
    }
    meter.pointee.accumulate(left: wl, right: wr, count: n, into: cells)
    mixPlanes(intoLeft: outL, right: outR, left: wl, right: wr, n, add: written)
    written = true
  }
  return written
}

// MARK: - Buses' and live inputs' sends

/// The send levels of a kind of strip that is not a stem (the buses, the live inputs): strip s's
/// level into send k at `levels[s × maxSends + k]` (10 ms ramps), pre- or post-fader, and whether
/// the strip sends anything. Preallocated (`SendBank.init`); a value of pointers, so copies share
/// the table.
public struct StripSendLevels {
  public let strips: Int
  @usableFromInline let levels: UnsafeMutablePointer<GainRamp>
  @usableFromInline let preFader: UnsafeMutablePointer<Bool>
  @usableFromInline let used: UnsafeMutablePointer<Bool>

  init(strips: Int, rampFrames: Int) {
    self.strips = strips
    let n = strips * SendBank.maxSends
    levels = .allocate(capacity: n)
    levels.initialize(repeating: GainRamp(gain: 0, length: rampFrames), count: n)
    preFader = .allocate(capacity: n)
    preFader.initialize(repeating: false, count: n)
    used = .allocate(capacity: strips)
    used.initialize(repeating: false, count: strips)
  }

  func free() {
    levels.deallocate()
    preFader.deallocate()
    used.deallocate()
  }

  /// Strip `strip`'s level into send `index` (ramped over 10 ms; `jump`: at once). Switching
  /// between pre and post starts from silence, as a stem's (`SendBank.setLevel`).
  @_noLocks
  func setLevel(strip: Int, index: Int, gain: Float, preFader pre: Bool, jump: Bool) {
    guard strip >= 0, strip < strips, index >= 0, index < SendBank.maxSends else { return }
    let at = strip &* SendBank.maxSends &+ index
    if preFader[at] != pre {
      (levels + at).pointee.jump(to: 0)
      preFader[at] = pre
    }
    if jump { (levels + at).pointee.jump(to: gain) } else { (levels + at).pointee.set(target: gain) }
    if gain != 0 || (levels + at).pointee.isRamping { used[strip] = true }
  }

  /// Silences every level of strip `strip` at once (a bus or input index taken into use again).
  @_noLocks
  func clear(strip: Int) {
    guard strip >= 0, strip < strips else { return }
    for k in 0..<SendBank.maxSends {
      (levels + (strip &* SendBank.maxSends &+ k)).pointee.jump(to: 0)
      preFader[strip &* SendBank.maxSends &+ k] = false
    }
    used[strip] = false
  }

  /// Silences every strip's level into send `index` at once (the send added or removed).
  @_noLocks
  func clear(send index: Int) {
    guard index >= 0, index < SendBank.maxSends else { return }
    for strip in 0..<strips {
      (levels + (strip &* SendBank.maxSends &+ index)).pointee.jump(to: 0)
      preFader[strip &* SendBank.maxSends &+ index] = false
    }
  }
}

/// `EngineCommand.setSendLevel`: a stem's, bus's or live input's level into send `index`. A
/// stem's and a bus's levels ramp while the transport plays (`jump` otherwise); a live input's always ramp
/// (it sounds whatever the transport does), except on a strip added and not yet rendered.
@_noLocks
func setSendLevel(
  _ state: UnsafeMutablePointer<RenderState>, _ target: StripTarget, index: Int32, gain: Float, preFader: Bool, jump: Bool
) {
  let k = Int(index)
  guard k >= 0, k < SendBank.maxSends, state.pointee.sends.active[k] else { return }
  switch target {
  case .stem(let slot):
    state.pointee.sends.setLevel(slot: Int(slot), index: k, gain: gain, preFader: preFader, jump: jump)
  case .input(let i):
    let input = Int(i)
    guard input >= 0, input < state.pointee.inputs.capacity else { return }
    let strip = state.pointee.inputs.strips + input
    let now = strip.pointee.fresh || !strip.pointee.active
    state.pointee.sends.inputs.setLevel(strip: input, index: k, gain: gain, preFader: preFader, jump: now)
  case .bus(let bus):
    state.pointee.sends.buses.setLevel(strip: Int(bus), index: k, gain: gain, preFader: preFader, jump: jump)
  case .master:
    return
  }
}

/// Adds a bus's or input's pass (`left`/`right`, `count` frames; the same plane twice for a mono
/// input) to the sends it feeds at its levels: with `preFader` true the levels taken before the
/// fader (call it after the strip's EQ), false those after it (call it after the fader and pan).
/// Each level advances in the one call that matches it. `at` is the pass's offset in the block.
@_noLocks
func mixStripSends(
  _ state: UnsafeMutablePointer<RenderState>, _ table: StripSendLevels, strip: Int,
  left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, count: Int, preFader pre: Bool
) {
  guard strip >= 0, strip < table.strips, table.used[strip] else { return }
  let at = state.pointee.passOffset
  var used = false
  for k in 0..<SendBank.maxSends {
    let i0 = strip &* SendBank.maxSends &+ k
    let level = table.levels + i0
    guard level.pointee.current != 0 || level.pointee.isRamping else { continue }
    if table.preFader[i0] != pre || !state.pointee.sends.active[k] {
      used = true
      continue
    }
    let step = level.pointee.advance(frames: count)
    let target = level.pointee.current
    if target != 0 || level.pointee.isRamping { used = true }
    guard let outL = state.pointee.sends.outputs[2 &* k], let outR = state.pointee.sends.outputs[2 &* k &+ 1] else {
      continue
    }
    var g = step.start
    for i in 0..<count {
      outL[at &+ i] += left[i] * g
      outR[at &+ i] += right[i] * g
      g = i &+ 1 < step.rampFrames ? g + step.step : target
    }
  }
  if !used { table.used[strip] = false }
}
