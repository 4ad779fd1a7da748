// Buses (subgroups): stems (and buses) routed to a bus are summed into its preallocated stereo
// buffer; the bus then runs its channel EQ, its smoothed volume and balance and its meter, and
// adds the result to the bus it feeds or to the master mix (or writes it to its direct-out
// ports). docs/architecture.md, *Buses*.
//
// The routing plan (which buses are in use, in which order to render them, where each one goes)
// is built on the control thread (`Mixer+Buses.swift`), sent whole through the command ring
// (`EngineCommand.setBusPlan`) and never changed by the renderer; the plan it replaces goes back
// to the control thread in an event (`EngineEvent.busPlanRetired`) to be freed there.

/// The routing plan of the buses: immutable once sent to the renderer.
public struct BusPlan: ~Copyable {
  /// How many buses are in use (the first `count` entries of `order`).
  public let count: Int
  /// Bus indices in render order: every bus after all the buses that feed it.
  @usableFromInline let order: UnsafeMutablePointer<Int32>
  /// Per bus index: the bus it feeds (≥ 0), the master (`BusPlan.master`), or not in use
  /// (`BusPlan.unused`: a stem sent there goes to the master).
  @usableFromInline let destinations: UnsafeMutablePointer<Int32>

  public static var master: Int32 { @_noLocks get { -1 } }
  public static var unused: Int32 { @_noLocks get { -2 } }

  init(count: Int, order: UnsafeMutablePointer<Int32>, destinations: UnsafeMutablePointer<Int32>) {
    self.count = count
    self.order = order
    self.destinations = destinations
  }

  /// Builds a plan on the heap (control thread). `order` lists the buses in use in render order;
  /// `destinations` gives each one's destination (`master` or a bus index).
  public static func make(order: [Int32], destinations: [Int32: Int32]) -> UnsafeMutablePointer<BusPlan> {
    let o = UnsafeMutablePointer<Int32>.allocate(capacity: Swift.max(1, BusBank.maxBuses))
    o.initialize(repeating: 0, count: BusBank.maxBuses)
    let d = UnsafeMutablePointer<Int32>.allocate(capacity: BusBank.maxBuses)
    d.initialize(repeating: unused, count: BusBank.maxBuses)
    for (i, bus) in order.prefix(BusBank.maxBuses).enumerated() { o[i] = bus }
    for (bus, destination) in destinations where bus >= 0 && Int(bus) < BusBank.maxBuses { d[Int(bus)] = destination }
    let plan = UnsafeMutablePointer<BusPlan>.allocate(capacity: 1)
    plan.initialize(to: BusPlan(count: Swift.min(order.count, BusBank.maxBuses), order: o, destinations: d))
    return plan
  }

  /// Frees a plan the renderer no longer holds (control thread).
  public static func free(_ plan: UnsafeMutablePointer<BusPlan>) {
    plan.pointee.order.deallocate()
    plan.pointee.destinations.deallocate()
    plan.deinitialize(count: 1)
    plan.deallocate()
  }
}

/// One bus's state in the renderer.
public struct BusStrip {
  /// Volume, balance, audibility, their glides (`vol drums_bus 0 over 4s`) and gains.
  @usableFromInline var levels: StripLevels
  @usableFromInline var eq: ChannelEQ
  @usableFromInline var meter: MeterAccumulator

  init(sampleRate: Double) {
    levels = StripLevels(sampleRate: sampleRate, gain: 1)  // 10 ms ramps, as a stem's gain
    eq = ChannelEQ(sampleRate: sampleRate)
    meter = MeterAccumulator(sampleRate: sampleRate)
  }
}

/// Every bus's buffers, strips and meters, preallocated for `maxBuses`, and the current plan.
public struct BusBank: ~Copyable {
  /// The most buses (`BusSettings.maximumBuses` in the session format says the same).
  public static var maxBuses: Int { @_noLocks get { 64 } }
  /// Plans waiting to go back to the control thread (the event ring was full).
  static var retiringCapacity: Int { @_noLocks get { 64 } }

  @usableFromInline let strips: UnsafeMutablePointer<BusStrip>
  /// Per bus: left then right, `maxBlockFrames` each.
  @usableFromInline let buffers: UnsafeMutablePointer<Float>
  @usableFromInline let maxBlockFrames: Int
  /// Per bus meters (post-fader), read by the control thread.
  public let meters: UnsafeMutablePointer<MeterCells>
  /// Per bus: where its glides are (`StripLevels.publish`), read by the control thread.
  public let glides: UnsafeMutablePointer<GlideCells>
  @usableFromInline var plan: UnsafeMutablePointer<BusPlan>? = nil
  @usableFromInline let retiring: UnsafeMutablePointer<UnsafeMutablePointer<BusPlan>?>
  @usableFromInline var retiringCount = 0

  init(sampleRate: Double, maxBlockFrames: Int) {
    self.maxBlockFrames = maxBlockFrames
    strips = .allocate(capacity: Self.maxBuses)
    strips.initialize(repeating: BusStrip(sampleRate: sampleRate), count: Self.maxBuses)
    buffers = .allocate(capacity: Self.maxBuses * 2 * maxBlockFrames)
    buffers.initialize(repeating: 0, count: Self.maxBuses * 2 * maxBlockFrames)
    meters = .allocate(capacity: Self.maxBuses)
    for i in 0..<Self.maxBuses { (meters + i).initialize(to: MeterCells()) }
    glides = .allocate(capacity: Self.maxBuses)
    for i in 0..<Self.maxBuses { (glides + i).initialize(to: GlideCells()) }
    retiring = .allocate(capacity: Self.retiringCapacity)
    retiring.initialize(repeating: nil, count: Self.retiringCapacity)
  }

  /// Frees everything, the plans too (control thread, once the renderer has stopped).
  func free() {
    if let plan { BusPlan.free(plan) }
    for i in 0..<retiringCount { if let p = retiring[i] { BusPlan.free(p) } }
    strips.deinitialize(count: Self.maxBuses)
    strips.deallocate()
    buffers.deallocate()
    meters.deinitialize(count: Self.maxBuses)
    meters.deallocate()
    glides.deinitialize(count: Self.maxBuses)
    glides.deallocate()
    retiring.deallocate()
  }

  @_noLocks @inline(__always)
  func left(_ bus: Int) -> UnsafeMutablePointer<Float> { buffers + bus &* 2 &* maxBlockFrames }

  @_noLocks @inline(__always)
  func right(_ bus: Int) -> UnsafeMutablePointer<Float> { buffers + (bus &* 2 &+ 1) &* maxBlockFrames }

  /// The buffers a stem routed to `bus` mixes into, or nil (no such bus in the plan: the master).
  @_noLocks @inline(__always)
  func input(_ bus: Int32) -> (left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>)? {
    guard bus >= 0, Int(bus) < Self.maxBuses, let plan, plan.pointee.destinations[Int(bus)] != BusPlan.unused else { return nil }
    return (left(Int(bus)), right(Int(bus)))
  }
}

// MARK: - Commands

/// Installs a new plan; the old one goes back to the control thread.
@_noLocks
func setBusPlan(_ state: UnsafeMutablePointer<RenderState>, _ plan: UnsafeMutablePointer<BusPlan>) {
  if let old = state.pointee.buses.plan {
    if state.pointee.buses.retiringCount < BusBank.retiringCapacity {
      state.pointee.buses.retiring[state.pointee.buses.retiringCount] = old
      state.pointee.buses.retiringCount &+= 1
    }  // else: kept forever rather than freed here (a stalled control thread; a few hundred bytes)
  }
  state.pointee.buses.plan = plan
  retireBusPlans(state)
}

/// Hands waiting old plans to the control thread while the event ring has room.
@_noLocks
func retireBusPlans(_ state: UnsafeMutablePointer<RenderState>) {
  while state.pointee.buses.retiringCount > 0 {
    let last = state.pointee.buses.retiringCount &- 1
    guard let plan = state.pointee.buses.retiring[last] else {
      state.pointee.buses.retiringCount = last
      continue
    }
    guard state.pointee.events.push(.busPlanRetired(address: Int(bitPattern: plan))) else { return }
    state.pointee.buses.retiring[last] = nil
    state.pointee.buses.retiringCount = last
  }
}

/// A bus's volume, balance and width (nil: unchanged) and audibility (mute and solo, worked out
/// on the control thread along the graph). Ramps while playing.
@_noLocks
func setBusLevels(_ state: UnsafeMutablePointer<RenderState>, bus: Int32, _ change: StripLevelChange, jump: Bool) {
  guard bus >= 0, Int(bus) < BusBank.maxBuses else { return }
  (state.pointee.buses.strips + Int(bus)).pointee.levels.set(change, jump: jump)
}

/// Routes a voice to `bus` (−1: the master); while playing it crossfades from where it went
/// over 10 ms (`mixRouteCrossfade`), at once otherwise.
@_noLocks
func setStemBus(_ state: UnsafeMutablePointer<RenderState>, _ voice: UnsafeMutablePointer<StemVoice>, bus: Int32, jump: Bool) {
  guard voice.pointee.bus != bus else { return }
  if jump || voice.pointee.pending {
    voice.pointee.routeFadeTotal = 0
  } else {
    voice.pointee.previousBus = voice.pointee.bus
    voice.pointee.routeFadeDone = 0
    voice.pointee.routeFadeTotal = Swift.max(1, Int(state.pointee.sampleRate * 0.010))
  }
  voice.pointee.bus = bus
}

/// A bus index taken into use again: unity, centre, no glide, an EQ with no memory (the control
/// thread sends its EQ and clears its meter).
@_noLocks
func resetBus(_ state: UnsafeMutablePointer<RenderState>, bus: Int32) {
  guard bus >= 0, Int(bus) < BusBank.maxBuses else { return }
  let strip = state.pointee.buses.strips + Int(bus)
  strip.pointee.levels.reset(gain: 1)
  strip.pointee.levels.unpublish(from: state.pointee.buses.glides + Int(bus))
  strip.pointee.eq.clearState()
  state.pointee.sends.buses.clear(strip: Int(bus))
}

/// Changes bus `bus`'s channel EQ with `change`.
@_noLocks
func setBusEQ(_ state: UnsafeMutablePointer<RenderState>, bus: Int, jump: Bool, _ change: (inout EQParameters) -> Void) {
  guard bus >= 0, bus < BusBank.maxBuses else { return }
  let strip = state.pointee.buses.strips + bus
  var p = strip.pointee.eq.target
  change(&p)
  strip.pointee.eq.set(p, immediate: jump)
}

// MARK: - Rendering

/// Clears the buffers of the buses in use for a pass of `n` frames.
@_noLocks
func clearBusInputs(_ state: UnsafeMutablePointer<RenderState>, frameCount n: Int) {
  guard let plan = state.pointee.buses.plan else { return }
  for k in 0..<plan.pointee.count {
    let bus = Int(plan.pointee.order[k])
    state.pointee.buses.left(bus).update(repeating: 0, count: n)
    state.pointee.buses.right(bus).update(repeating: 0, count: n)
  }
}

/// Renders every bus in the plan's order: EQ, volume and balance (ramped), meter, then into its
/// destination (a bus later in the order, the master mix) or its direct-out ports. While the
/// transport does not play nothing reaches the buses, and their EQs forget what they held, so
/// no filter tail sounds after a pause (the master's transport fade has already closed).
@_noLocks
func renderBuses(_ state: UnsafeMutablePointer<RenderState>, frameCount n: Int, playing: Bool) {
  guard let plan = state.pointee.buses.plan else { return }
  let mixL = state.pointee.mixLeft, mixR = state.pointee.mixRight
  let direct = state.pointee.directOutputs
  let busDirectBase = state.pointee.maxVoices &* 2
  let at = state.pointee.passOffset
  for k in 0..<plan.pointee.count {
    let bus = Int(plan.pointee.order[k])
    let strip = state.pointee.buses.strips + bus
    let cells = UnsafePointer(state.pointee.buses.meters + bus)
    let l = state.pointee.buses.left(bus), r = state.pointee.buses.right(bus)
    if !playing {
      strip.pointee.eq.clearState()
      _ = strip.pointee.levels.gainLeft.advance(frames: n)
      _ = strip.pointee.levels.gainRight.advance(frames: n)
      strip.pointee.levels.publish(to: state.pointee.buses.glides + bus)
      strip.pointee.meter.accumulateSilence(count: n, into: cells)
      continue
    }
    if strip.pointee.levels.isGliding { strip.pointee.levels.advanceGlides(frames: n) }
    strip.pointee.levels.publish(to: state.pointee.buses.glides + bus)
    strip.pointee.eq.process(left: l, right: r, stride: 1, count: n)
    if let inserts = state.pointee.inserts.buses[bus] {
      runInserts(state, inserts, target: .bus(Int32(bus)), left: l, right: r, stride: 1, count: n)
    }
    strip.pointee.levels.applyStages(left: l, right: r, stride: 1, count: n)
    mixStripSends(state, state.pointee.sends.buses, strip: bus, left: l, right: r, count: n, preFader: true)
    mixStripCue(state, .bus(Int32(bus)), left: l, right: r, count: n, afterFader: false)
    let stepL = strip.pointee.levels.gainLeft.advance(frames: n)
    let stepR = strip.pointee.levels.gainRight.advance(frames: n)
    if stepL.rampFrames == 0 && stepR.rampFrames == 0 {
      let gl = stepL.start, gr = stepR.start
      for i in 0..<n {
        l[i] *= gl
        r[i] *= gr
      }
    } else {
      var gl = stepL.start, gr = stepR.start
      let tl = strip.pointee.levels.gainLeft.current, tr = strip.pointee.levels.gainRight.current
      for i in 0..<n {
        l[i] *= gl
        r[i] *= gr
        gl = i &+ 1 < stepL.rampFrames ? gl + stepL.step : tl
        gr = i &+ 1 < stepR.rampFrames ? gr + stepR.step : tr
      }
    }
    mixStripSends(state, state.pointee.sends.buses, strip: bus, left: l, right: r, count: n, preFader: false)
    mixStripCue(state, .bus(Int32(bus)), left: l, right: r, count: n, afterFader: true)
    strip.pointee.meter.accumulate(left: l, right: r, count: n, into: cells)
    let outL: UnsafeMutablePointer<Float>, outR: UnsafeMutablePointer<Float>
    if let dl = direct[busDirectBase &+ 2 &* bus], let dr = direct[busDirectBase &+ 2 &* bus &+ 1] {
      if state.pointee.stemTaps {
        // Stem export (StemTaps.swift): the bus's file gets what it adds to the master, which
        // it still feeds; the master's fade and gain are applied to the tap afterwards.
        for i in 0..<n {
          dl[at &+ i] = l[i]
          dr[at &+ i] = r[i]
          mixL[i] += l[i]
          mixR[i] += r[i]
        }
        continue
      }
      outL = dl + at
      outR = dr + at
    } else {
      let destination = plan.pointee.destinations[bus]
      if destination >= 0 && Int(destination) < BusBank.maxBuses {
        outL = state.pointee.buses.left(Int(destination))
        outR = state.pointee.buses.right(Int(destination))
      } else {
        outL = mixL
        outR = mixR
      }
    }
    for i in 0..<n {
      outL[i] += l[i]
      outR[i] += r[i]
    }
  }
}
