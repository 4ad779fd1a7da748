import Synchronization

// Live input strips (issue 22, item 3): JACK inputs (`stemdeck:mic_in`, `keys_in_L/R`) mixed into
// the master like stems, with volume, pan or balance, mute/solo (as audibility), a meter and a
// channel EQ. docs/architecture.md, *Live inputs*.
//
// They are live: a strip routed to the master passes sound whatever the transport does (it is
// summed after the transport fade, with the sound effects, before the master EQ and the master
// volume), so pause and stop leave a microphone open, as a console's input channel does. A strip
// routed to a bus (`route mic drums_bus`) is mixed into that bus's input before the buses render
// and is then part of the bus: it is heard while the transport plays and goes quiet with the
// transport fade, like the bus's stems (README, *Live inputs*).

/// One live input as the renderer sees it. Trivial values only (a table entry, preallocated).
public struct InputStrip {
  /// In use (an input was added and has not faded out after its removal).
  @usableFromInline var active = false
  /// Removed: fading to silence; inactive once the ramp is done.
  @usableFromInline var removing = false
  /// Volume, pan or balance, audibility, their glides (`vol mic 0 over 4s`: a live input
  /// glides whatever the transport does) and gains; `levels.channels` is the strip's.
  @usableFromInline var levels: StripLevels
  @usableFromInline var meter: MeterAccumulator
  @usableFromInline var eq: ChannelEQ
  /// Where it goes: a bus index (≥ 0; one not in the plan means the master) or −1, the master.
  @usableFromInline var bus: Int32 = -1
  /// A route change in progress: the old destination and the 10 ms crossfade's progress
  /// (`routeFadeTotal` 0: none), as a stem's (Buses.swift `setStemBus`).
  @usableFromInline var previousBus: Int32 = -1
  @usableFromInline var routeFadeDone = 0
  @usableFromInline var routeFadeTotal = 0
  /// Added and not rendered yet: its EQ is set at once, as its gains (no signal to glide from).
  @usableFromInline var fresh = false

  init(sampleRate: Double) {
    levels = StripLevels(sampleRate: sampleRate, gain: 0)
    meter = MeterAccumulator(sampleRate: sampleRate)
    eq = ChannelEQ(sampleRate: sampleRate)
  }
}

/// The renderer's table of live inputs: `capacity` strips, their meters, the port buffers the
/// driver hands in for each block, and a work buffer. All preallocated in `RenderState.make`.
public struct InputBank: ~Copyable {
  /// The most live inputs a session can have.
  public static var maxInputs: Int { @_noLocks get { 32 } }
  public let capacity: Int
  @usableFromInline let strips: UnsafeMutablePointer<InputStrip>
  /// Each strip's meter (peak/average per channel), read by the control thread.
  public let meters: UnsafeMutablePointer<MeterCells>
  /// Where each strip's glides are (`StripLevels.publish`), read by the control thread.
  public let glides: UnsafeMutablePointer<GlideCells>
  /// Whether each strip is active (1) or free (0), for the control thread: a removed input's
  /// ports stay until the renderer has faded it out.
  public let live: UnsafeMutablePointer<Atomic<Int>>
  /// The input ports' buffers for the current block (left, right per strip; a mono strip uses
  /// the left one), set by the driver before each `renderBlock` (nil: silence). `capacity` × 2.
  public let buffers: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
  /// A strip's signal for one pass (left plane, then right plane), `maxBlockFrames` each.
  @usableFromInline let work: UnsafeMutablePointer<Float>
  /// The strips routed to the master, summed for one pass (left plane, then right plane); added
  /// after the transport fade (`addInputsToMaster`).
  @usableFromInline let master: UnsafeMutablePointer<Float>
  /// Whether `master` holds anything this pass.
  @usableFromInline var masterWritten = false
  @usableFromInline let maxBlockFrames: Int
  /// One past the highest active strip.
  @usableFromInline var limit = 0
  /// A new strip's EQ (flat: bypassed).
  @usableFromInline let flatEQ = EQParameters()

  init(sampleRate: Double, maxBlockFrames: Int, capacity: Int = InputBank.maxInputs) {
    self.capacity = capacity
    self.maxBlockFrames = maxBlockFrames
    strips = .allocate(capacity: capacity)
    strips.initialize(repeating: InputStrip(sampleRate: sampleRate), count: capacity)
    meters = .allocate(capacity: capacity)
    for i in 0..<capacity { (meters + i).initialize(to: MeterCells()) }
    glides = .allocate(capacity: capacity)
    for i in 0..<capacity { (glides + i).initialize(to: GlideCells()) }
    live = .allocate(capacity: capacity)
    for i in 0..<capacity { (live + i).initialize(to: Atomic(0)) }
    buffers = .allocate(capacity: capacity * 2)
    buffers.initialize(repeating: nil, count: capacity * 2)
    work = .allocate(capacity: maxBlockFrames * 2)
    work.initialize(repeating: 0, count: maxBlockFrames * 2)
    master = .allocate(capacity: maxBlockFrames * 2)
    master.initialize(repeating: 0, count: maxBlockFrames * 2)
  }

  /// Frees the table (control thread, once the renderer has stopped).
  func free() {
    strips.deinitialize(count: capacity)
    strips.deallocate()
    meters.deinitialize(count: capacity)
    meters.deallocate()
    glides.deinitialize(count: capacity)
    glides.deallocate()
    live.deinitialize(count: capacity)
    live.deallocate()
    buffers.deallocate()
    work.deallocate()
    master.deallocate()
  }

  /// Starts strip `index` with these levels (a new input).
  @_noLocks
  mutating func add(index: Int, channels: Int, _ levels: StripLevelChange) {
    guard index >= 0, index < capacity else { return }
    let s = strips + index
    s.pointee.bus = -1
    s.pointee.routeFadeTotal = 0
    s.pointee.fresh = true
    s.pointee.active = true
    s.pointee.removing = false
    s.pointee.levels.reset(gain: 0)
    s.pointee.levels.unpublish(from: glides + index)
    s.pointee.levels.channels = channels == 2 ? 2 : 1
    // At its levels at once: its ports are registered after this (the driver's next poll), so
    // it has no signal yet to click; an offline render then starts exactly at the set gain.
    s.pointee.levels.set(levels, jump: true)
    s.pointee.eq.set(flatEQ, immediate: true)
    s.pointee.eq.clearState()
    (live + index).pointee.store(1, ordering: .releasing)
    if index >= limit { limit = index &+ 1 }
  }

  /// New levels for strip `index` (nil: unchanged; a value set ends its glide); the gains ramp
  /// there (10 ms).
  @_noLocks
  mutating func setLevels(index: Int, _ change: StripLevelChange) {
    guard index >= 0, index < capacity, strips[index].active, !strips[index].removing else { return }
    (strips + index).pointee.levels.set(change, jump: false)
  }

  /// Starts strip `index`'s volume or pan glide; it runs whatever the transport does.
  @_noLocks
  mutating func startGlide(index: Int, _ parameter: GlideParameter, to target: Double, frames: Int, exponential: Bool) {
    guard index >= 0, index < capacity, strips[index].active, !strips[index].removing else { return }
    (strips + index).pointee.levels.startGlide(parameter, to: target, frames: frames, exponential: exponential)
  }

  /// Fades strip `index` out; it becomes free once silent.
  @_noLocks
  mutating func remove(index: Int) {
    guard index >= 0, index < capacity, strips[index].active else { return }
    let s = strips + index
    s.pointee.removing = true
    s.pointee.levels.stopGlides()
    s.pointee.levels.updateGains(jump: false, silenced: true)
  }

  /// Routes strip `index` to bus `bus` (−1: the master); it crossfades from where it went over
  /// 10 ms, whatever the transport does (a live input is live), at once when `jump` (just added).
  @_noLocks
  mutating func setBus(index: Int, bus: Int32, sampleRate: Double, jump: Bool) {
    guard index >= 0, index < capacity, strips[index].active else { return }
    let s = strips + index
    guard s.pointee.bus != bus else { return }
    if jump {
      s.pointee.routeFadeTotal = 0
    } else {
      s.pointee.previousBus = s.pointee.bus
      s.pointee.routeFadeDone = 0
      s.pointee.routeFadeTotal = Swift.max(1, Int(sampleRate * 0.010))
    }
    s.pointee.bus = bus
  }

  /// Changes strip `index`'s EQ; it always glides (a live input sounds whatever the transport
  /// does), except on a strip just added and not rendered yet: that one starts at its EQ.
  @_noLocks
  mutating func changeEQ(index: Int, _ change: (inout EQParameters) -> Void) {
    guard index >= 0, index < capacity else { return }
    // Through the pointer (not `strips[index]`): the subscript form broke the ThreadSanitizer
    // build's IR here ("Invalid bitcast", Swift 6.3.1).
    let s = strips + index
    guard s.pointee.active, !s.pointee.removing else { return }
    var p = s.pointee.eq.target
    change(&p)
    s.pointee.eq.set(p, immediate: s.pointee.fresh)
  }
}

extension InputBank {
  /// Input `index`'s direct-out slot in `RenderState.directOutputs` (its left buffer at twice
  /// the slot, the right after it): after the stems' slots and the buses'.
  @_noLocks @inline(__always)
  public static func directSlot(_ index: Int, maxVoices: Int) -> Int { maxVoices &+ BusBank.maxBuses &+ index }
}

/// Renders every active input strip's pass (EQ, fader, pan, meter: pre- or post-fader like the
/// stems) into its destination: a bus in the plan (its input buffer, so this runs before
/// `renderBuses`) or the inputs' master planes, added after the transport fade by
/// `addInputsToMaster`. `offset` is the pass's start within the driver's block (the port buffers
/// are per block).
@_noLocks
func mixInputs(_ state: UnsafeMutablePointer<RenderState>, frameCount n: Int) {
  state.pointee.inputs.masterWritten = false
  let limit = state.pointee.inputs.limit
  let workL = state.pointee.inputs.work
  let workR = workL + state.pointee.inputs.maxBlockFrames
  // A take recorded from a strip (Recording.swift): its signal after the EQ, before the fader;
  // silence while the strip is gone, so the take keeps time.
  let recordIndex = state.pointee.recording.take?.pointee.inputStrip ?? -1
  let rolling = state.pointee.transport.playing
  if recordIndex >= 0 && (recordIndex >= limit || !(state.pointee.inputs.strips + recordIndex).pointee.active) {
    workL.update(repeating: 0, count: n)
    state.pointee.captureTake(left: workL, right: workL, frameCount: n, rolling: rolling)
  }
  if limit == 0 { return }
  let preFader = state.pointee.preFaderMeters
  let masterL = state.pointee.inputs.master
  let masterR = masterL + state.pointee.inputs.maxBlockFrames
  let offset = state.pointee.passOffset
  let direct = state.pointee.directOutputs
  let directBase = InputBank.directSlot(0, maxVoices: state.pointee.maxVoices)
  var newLimit = 0
  for index in 0..<limit {
    let s = state.pointee.inputs.strips + index
    guard s.pointee.active else { continue }
    s.pointee.fresh = false
    let cells = UnsafePointer(state.pointee.inputs.meters + index)
    let stereo = s.pointee.levels.channels == 2
    let bufL = state.pointee.inputs.buffers[2 &* index]
    let bufR = stereo ? state.pointee.inputs.buffers[2 &* index &+ 1] : bufL
    // The source: the port's samples (never written to: JACK may share an input's buffer), copied
    // to the work planes; silence where there is no port (offline without a file, no server).
    if let bufL { copyFrames(workL, from: bufL + offset, n) } else { workL.update(repeating: 0, count: n) }
    if stereo {
      if let bufR { copyFrames(workR, from: bufR + offset, n) } else { workR.update(repeating: 0, count: n) }
    }
    s.pointee.eq.process(left: workL, right: stereo ? workR : nil, stride: 1, count: n)
    if let inserts = state.pointee.inserts.inputs[index] {
      runInserts(state, inserts, target: .input(Int32(index)), left: workL, right: stereo ? workR : nil, stride: 1, count: n)
    }
    s.pointee.levels.applyStages(left: workL, right: stereo ? workR : nil, stride: 1, count: n)
    mixStripSends(state, state.pointee.sends.inputs, strip: index, left: workL, right: stereo ? workR : workL, count: n, preFader: true)
    mixStripCue(state, .input(Int32(index)), left: workL, right: stereo ? workR : workL, count: n, afterFader: false)
    if index == recordIndex { state.pointee.captureTake(left: workL, right: stereo ? workR : workL, frameCount: n, rolling: rolling) }
    if preFader {
      s.pointee.meter.accumulate(left: workL, right: stereo ? workR : workL, count: n, into: cells)
    }
    // Fader and pan: the planes become the strip's contribution (mono: the left plane feeds both).
    if s.pointee.levels.isGliding { s.pointee.levels.advanceGlides(frames: n) }
    s.pointee.levels.publish(to: state.pointee.inputs.glides + index)
    let stepL = s.pointee.levels.gainLeft.advance(frames: n)
    let stepR = s.pointee.levels.gainRight.advance(frames: n)
    let targetL = s.pointee.levels.gainLeft.current, targetR = s.pointee.levels.gainRight.current
    var gl = stepL.start, gr = stepR.start
    for i in 0..<n {
      let xl = workL[i]
      let xr = stereo ? workR[i] : xl
      workL[i] = xl * gl
      workR[i] = xr * gr
      gl = i &+ 1 < stepL.rampFrames ? gl + stepL.step : targetL
      gr = i &+ 1 < stepR.rampFrames ? gr + stepR.step : targetR
    }
    if !preFader { s.pointee.meter.accumulate(left: workL, right: workR, count: n, into: cells) }
    mixStripSends(state, state.pointee.sends.inputs, strip: index, left: workL, right: workR, count: n, preFader: false)
    mixStripCue(state, .input(Int32(index)), left: workL, right: workR, count: n, afterFader: true)
    // Direct outs (post-fader, as a stem's): live, the strip goes to its own ports instead of its
    // destination; in a stem export (StemTaps.swift) they are its tap and it feeds the master too.
    if index < state.pointee.inputDirectCount, let dl = direct[2 &* (directBase &+ index)],
      let dr = direct[2 &* (directBase &+ index) &+ 1]
    {
      for i in 0..<n {
        dl[offset &+ i] += workL[i]
        dr[offset &+ i] += workR[i]
      }
      if !state.pointee.stemTaps {
        s.pointee.routeFadeTotal = 0
        retireInputIfFaded(state, index: index, newLimit: &newLimit)
        continue
      }
    }
    let new = inputDestination(state, bus: s.pointee.bus, masterL: masterL, masterR: masterR, n: n)
    if s.pointee.routeFadeTotal > 0 {
      // Just routed elsewhere: a 10 ms crossfade from the old destination to the new one.
      let old = inputDestination(state, bus: s.pointee.previousBus, masterL: masterL, masterR: masterR, n: n)
      let total = s.pointee.routeFadeTotal
      var done = s.pointee.routeFadeDone
      let inverse = 1 / Float(total)
      for i in 0..<n {
        let t = done < total ? Float(done) * inverse : 1
        new.0[i] += workL[i] * t
        new.1[i] += workR[i] * t
        old.0[i] += workL[i] * (1 - t)
        old.1[i] += workR[i] * (1 - t)
        if done < total { done &+= 1 }
      }
      s.pointee.routeFadeDone = done
      if done >= total { s.pointee.routeFadeTotal = 0 }
    } else {
      for i in 0..<n {
        new.0[i] += workL[i]
        new.1[i] += workR[i]
      }
    }
    retireInputIfFaded(state, index: index, newLimit: &newLimit)
  }
  state.pointee.inputs.limit = newLimit
}

/// After a strip's pass: a removed strip whose fade is done becomes free; any other keeps
/// `newLimit` (one past the highest active strip) above it.
@_noLocks @inline(__always)
func retireInputIfFaded(_ state: UnsafeMutablePointer<RenderState>, index: Int, newLimit: inout Int) {
  let s = state.pointee.inputs.strips + index
  if s.pointee.removing && !s.pointee.levels.gainLeft.isRamping && !s.pointee.levels.gainRight.isRamping {
    s.pointee.active = false
    s.pointee.removing = false
    (state.pointee.inputs.live + index).pointee.store(0, ordering: .releasing)
  } else {
    newLimit = index &+ 1
  }
}

/// The planes an input routed to `bus` adds to: the bus's input (a bus in the plan) or the
/// inputs' master planes (cleared on their first use in the pass).
@_noLocks @inline(__always)
func inputDestination(
  _ state: UnsafeMutablePointer<RenderState>, bus: Int32, masterL: UnsafeMutablePointer<Float>,
  masterR: UnsafeMutablePointer<Float>, n: Int
) -> (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>) {
  if bus >= 0, let input = state.pointee.buses.input(bus) { return (input.left, input.right) }
  if !state.pointee.inputs.masterWritten {
    masterL.update(repeating: 0, count: n)
    masterR.update(repeating: 0, count: n)
    state.pointee.inputs.masterWritten = true
  }
  return (masterL, masterR)
}

/// Adds the inputs routed to the master (`mixInputs`) to `outL`/`outR` (`add` false: overwrites
/// them). Returns whether anything was written.
@_noLocks
func addInputsToMaster(
  _ state: UnsafeMutablePointer<RenderState>, intoLeft outL: UnsafeMutablePointer<Float>,
  right outR: UnsafeMutablePointer<Float>, frameCount n: Int, add: Bool
) -> Bool {
  guard state.pointee.inputs.masterWritten else { return false }
  let l = state.pointee.inputs.master
  mixPlanes(intoLeft: outL, right: outR, left: l, right: l + state.pointee.inputs.maxBlockFrames, n, add: add)
  return true
}

/// Adds `n` frames of a pair of planes to `outL`/`outR` (`add` false: copies them there).
@_noLocks @inline(__always)
func mixPlanes(
  intoLeft outL: UnsafeMutablePointer<Float>, right outR: UnsafeMutablePointer<Float>, left l: UnsafePointer<Float>,
  right r: UnsafePointer<Float>, _ n: Int, add: Bool
) {
  if add {
    for i in 0..<n {
      outL[i] += l[i]
      outR[i] += r[i]
    }
  } else {
    copyFrames(outL, from: l, n)
    copyFrames(outR, from: r, n)
  }
}

/// `count` floats from `source` to `destination` (a plain loop: the checker accepts it).
@_noLocks @inline(__always)
func copyFrames(_ destination: UnsafeMutablePointer<Float>, from source: UnsafePointer<Float>, _ count: Int) {
  for i in 0..<count { destination[i] = source[i] }
}
