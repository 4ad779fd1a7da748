import Synchronization

// Live input strips (issue 22, item 3): JACK inputs (`stemdeck:mic_in`, `keys_in_L/R`) mixed into
// the master like stems, with volume, pan or balance, mute/solo (as audibility), a meter and a
// channel EQ. docs/architecture.md, *Live inputs*.
//
// They are live: a strip passes sound whatever the transport does (it is summed after the
// transport fade, with the sound effects, before the master EQ and the master volume), so pause
// and stop leave a microphone open, as a console's input channel does.

/// One live input as the renderer sees it. Trivial values only (a table entry, preallocated).
public struct InputStrip {
  /// In use (an input was added and has not faded out after its removal).
  @usableFromInline var active = false
  /// Removed: fading to silence; inactive once the ramp is done.
  @usableFromInline var removing = false
  @usableFromInline var channels = 1
  @usableFromInline var volume = 1.0
  @usableFromInline var pan = 0.0
  @usableFromInline var audible = true
  @usableFromInline var gainLeft: GainRamp
  @usableFromInline var gainRight: GainRamp
  @usableFromInline var meter: MeterAccumulator
  @usableFromInline var eq: ChannelEQ

  init(sampleRate: Double) {
    let ramp = Swift.max(1, Int(sampleRate * 0.010))
    gainLeft = GainRamp(gain: 0, length: ramp)
    gainRight = GainRamp(gain: 0, length: ramp)
    meter = MeterAccumulator(sampleRate: sampleRate)
    eq = ChannelEQ(sampleRate: sampleRate)
  }

  /// The gains volume, pan and audibility ask for (the stems' pan law: constant power for mono,
  /// balance for stereo; PanLaw.swift).
  @_noLocks
  func targetGains() -> (Float, Float) {
    let g = PanLaw.realtimeGains(pan: pan, channelCount: channels)
    let level = audible && !removing ? volume : 0
    return (Float(g.left * level), Float(g.right * level))
  }
}

/// The renderer's table of live inputs: `capacity` strips, their meters, the port buffers the
/// driver hands in for each block, and a work buffer. All preallocated in `RenderState.make`.
public struct InputBank: ~Copyable {
  /// The most live inputs a session can have.
  public static let maxInputs = 32
  public let capacity: Int
  @usableFromInline let strips: UnsafeMutablePointer<InputStrip>
  /// Each strip's meter (peak/average per channel), read by the control thread.
  public let meters: UnsafeMutablePointer<MeterCells>
  /// Whether each strip is active (1) or free (0), for the control thread: a removed input's
  /// ports stay until the renderer has faded it out.
  public let live: UnsafeMutablePointer<Atomic<Int>>
  /// The input ports' buffers for the current block (left, right per strip; a mono strip uses
  /// the left one), set by the driver before each `renderBlock` (nil: silence). `capacity` × 2.
  public let buffers: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
  /// A strip's signal for one pass (left plane, then right plane), `maxBlockFrames` each.
  @usableFromInline let work: UnsafeMutablePointer<Float>
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
    live = .allocate(capacity: capacity)
    for i in 0..<capacity { (live + i).initialize(to: Atomic(0)) }
    buffers = .allocate(capacity: capacity * 2)
    buffers.initialize(repeating: nil, count: capacity * 2)
    work = .allocate(capacity: maxBlockFrames * 2)
    work.initialize(repeating: 0, count: maxBlockFrames * 2)
  }

  /// Frees the table (control thread, once the renderer has stopped).
  func free() {
    strips.deinitialize(count: capacity)
    strips.deallocate()
    meters.deinitialize(count: capacity)
    meters.deallocate()
    live.deinitialize(count: capacity)
    live.deallocate()
    buffers.deallocate()
    work.deallocate()
  }

  /// Starts strip `index` with these levels (a new input).
  @_noLocks
  mutating func add(index: Int, channels: Int, volume: Double, pan: Double, audible: Bool) {
    guard index >= 0, index < capacity else { return }
    let s = strips + index
    s.pointee.active = true
    s.pointee.removing = false
    s.pointee.channels = channels == 2 ? 2 : 1
    s.pointee.volume = volume
    s.pointee.pan = pan
    s.pointee.audible = audible
    // At its levels at once: its ports are registered after this (the driver's next poll), so
    // it has no signal yet to click; an offline render then starts exactly at the set gain.
    let g = s.pointee.targetGains()
    s.pointee.gainLeft.jump(to: g.0)
    s.pointee.gainRight.jump(to: g.1)
    s.pointee.eq.set(flatEQ, immediate: true)
    s.pointee.eq.clearState()
    live[index].store(1, ordering: .releasing)
    if index >= limit { limit = index &+ 1 }
  }

  /// New levels for strip `index` (nil: unchanged); the gains ramp there (10 ms).
  @_noLocks
  mutating func setLevels(index: Int, volume: Double?, pan: Double?, audible: Bool) {
    guard index >= 0, index < capacity, strips[index].active, !strips[index].removing else { return }
    let s = strips + index
    if let volume { s.pointee.volume = volume }
    if let pan { s.pointee.pan = pan }
    s.pointee.audible = audible
    let g = s.pointee.targetGains()
    s.pointee.gainLeft.set(target: g.0)
    s.pointee.gainRight.set(target: g.1)
  }

  /// Fades strip `index` out; it becomes free once silent.
  @_noLocks
  mutating func remove(index: Int) {
    guard index >= 0, index < capacity, strips[index].active else { return }
    let s = strips + index
    s.pointee.removing = true
    s.pointee.gainLeft.set(target: 0)
    s.pointee.gainRight.set(target: 0)
  }

  /// Changes strip `index`'s EQ; it always glides (a live input sounds whatever the transport does).
  @_noLocks
  mutating func changeEQ(index: Int, _ change: (inout EQParameters) -> Void) {
    guard index >= 0, index < capacity, strips[index].active, !strips[index].removing else { return }
    var p = strips[index].eq.target
    change(&p)
    strips[index].eq.set(p, immediate: false)
  }
}

extension InputBank {
  /// The `EngineCommand.setEQ` slot that addresses input `index`: −1000 − index (−1 is the
  /// master, −2 − bus a bus (`busEQSlot`), stems ≥ 0).
  @_noLocks
  public static func eqSlot(_ index: Int) -> Int32 { Int32(eqSlotBase &- index) }
  @inline(__always) static var eqSlotBase: Int { -1000 }

  /// The input index an EQ slot addresses, or nil.
  @_noLocks
  static func index(ofEQSlot slot: Int32) -> Int? { slot <= eqSlotBase ? Int(eqSlotBase &- Int(slot)) : nil }
}

/// Adds every active input strip's pass to `outL`/`outR` (`add` false: overwrites them first).
/// Returns whether anything was written. Meters each strip (pre- or post-fader like the stems).
/// `offset` is the pass's start within the driver's block (the port buffers are per block).
@_noLocks
func mixInputs(
  _ state: UnsafeMutablePointer<RenderState>, intoLeft outL: UnsafeMutablePointer<Float>,
  right outR: UnsafeMutablePointer<Float>, frameCount n: Int, add: Bool
) -> Bool {
  let limit = state.pointee.inputs.limit
  if limit == 0 { return false }
  let preFader = state.pointee.preFaderMeters
  let workL = state.pointee.inputs.work
  let workR = workL + state.pointee.inputs.maxBlockFrames
  let offset = state.pointee.passOffset
  var written = add
  var newLimit = 0
  for index in 0..<limit {
    let s = state.pointee.inputs.strips + index
    guard s.pointee.active else { continue }
    let cells = UnsafePointer(state.pointee.inputs.meters + index)
    let stereo = s.pointee.channels == 2
    let bufL = state.pointee.inputs.buffers[2 &* index]
    let bufR = stereo ? state.pointee.inputs.buffers[2 &* index &+ 1] : bufL
    // The source: the port's samples (never written to: JACK may share an input's buffer), copied
    // to the work planes; silence where there is no port (offline without a file, no server).
    if let bufL { copyFrames(workL, from: bufL + offset, n) } else { workL.update(repeating: 0, count: n) }
    if stereo {
      if let bufR { copyFrames(workR, from: bufR + offset, n) } else { workR.update(repeating: 0, count: n) }
    }
    s.pointee.eq.process(left: workL, right: stereo ? workR : nil, stride: 1, count: n)
    if preFader {
      s.pointee.meter.accumulate(left: workL, right: stereo ? workR : workL, count: n, into: cells)
    }
    // Fader and pan: the planes become the strip's contribution (mono: the left plane feeds both).
    let stepL = s.pointee.gainLeft.advance(frames: n)
    let stepR = s.pointee.gainRight.advance(frames: n)
    let targetL = s.pointee.gainLeft.current, targetR = s.pointee.gainRight.current
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
    if written {
      for i in 0..<n {
        outL[i] += workL[i]
        outR[i] += workR[i]
      }
    } else {
      copyFrames(outL, from: workL, n)
      copyFrames(outR, from: workR, n)
      written = true
    }
    if s.pointee.removing && !s.pointee.gainLeft.isRamping && !s.pointee.gainRight.isRamping {
      s.pointee.active = false
      s.pointee.removing = false
      state.pointee.inputs.live[index].store(0, ordering: .releasing)
    } else {
      newLimit = index &+ 1
    }
  }
  state.pointee.inputs.limit = newLimit
  return written
}

/// `count` floats from `source` to `destination` (a plain loop: the checker accepts it).
@_noLocks @inline(__always)
func copyFrames(_ destination: UnsafeMutablePointer<Float>, from source: UnsafePointer<Float>, _ count: Int) {
  for i in 0..<count { destination[i] = source[i] }
}
