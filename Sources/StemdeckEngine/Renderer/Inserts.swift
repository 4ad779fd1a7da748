import Synchronization

// Plugin inserts: each strip's chain of LV2 effects, run right after its channel EQ and before
// its fader (input → EQ → inserts → fader/pan → post sends). docs/architecture.md, *Plugin inserts*.
//
// The control thread builds everything (StemdeckControl's PluginInstance.swift: lilv
// instantiates and activates the plugins, connects their ports to the buffers below) and sends
// a strip's whole chain in one command (`EngineCommand.setInserts`); the chain is never changed
// here, and the one it replaces goes back in `EngineEvent.insertChainRetired` to be freed there
// (the bus plans' path). The renderer only copies the strip's planes into a stage's input
// buffers, calls the plugin's own `run` and copies the outputs back: no allocation, no lock.

/// An LV2 plugin's `run(LV2_Handle, uint32_t sample_count)`.
public typealias InsertRunFunction = @convention(c) (UnsafeMutableRawPointer?, UInt32) -> Void

/// One insert of a chain: one plugin instance (a stereo plugin, or a mono plugin on a mono
/// strip) or two linked ones (a mono plugin on a stereo strip: left, right). Built on the
/// control thread; trivial, so a chain is a flat buffer of these.
public struct InsertStage: BitwiseCopyable, @unchecked Sendable {
  /// The plugin's `run`; nil: a placeholder (its plugin is missing), which passes audio through.
  public let run: InsertRunFunction?
  /// The instances' handles (the second only for a linked pair).
  public let first: UnsafeMutableRawPointer?
  public let second: UnsafeMutableRawPointer?
  /// Planar audio buffers the instances' ports are connected to: channel c's input at
  /// `inputs + c × maxBlockFrames`, likewise `outputs`; two channels' room each.
  public let inputs: UnsafeMutablePointer<Float>
  public let outputs: UnsafeMutablePointer<Float>
  public let maxBlockFrames: Int
  /// Passed through as if absent.
  public let bypassed: Bool
  /// The plugin's latency output port (`lv2:reportsLatency`, the first instance's), and where
  /// the renderer publishes its value in frames after each run (−1: none yet), or nil.
  public let latencyPort: UnsafePointer<Float>?
  public let latencyFrames: UnsafePointer<Atomic<Int32>>?
  /// Each instance's atom ports and worker (InsertAtoms.swift), or nil when it has neither.
  public let plumbing: UnsafeMutablePointer<InsertPlumbing>?
  public let plumbing2: UnsafeMutablePointer<InsertPlumbing>?
  /// Written by the renderer only: the plugin put out NaN or infinity and is bypassed from then
  /// on (the control thread is told and sends a chain with it bypassed).
  public var faulted = false

  public init(
    run: InsertRunFunction?, first: UnsafeMutableRawPointer?, second: UnsafeMutableRawPointer?,
    inputs: UnsafeMutablePointer<Float>, outputs: UnsafeMutablePointer<Float>, maxBlockFrames: Int, bypassed: Bool,
    latencyPort: UnsafePointer<Float>? = nil, latencyFrames: UnsafePointer<Atomic<Int32>>? = nil,
    plumbing: UnsafeMutablePointer<InsertPlumbing>? = nil, plumbing2: UnsafeMutablePointer<InsertPlumbing>? = nil
  ) {
    self.run = run
    self.first = first
    self.second = second
    self.inputs = inputs
    self.outputs = outputs
    self.maxBlockFrames = maxBlockFrames
    self.bypassed = bypassed
    self.latencyPort = latencyPort
    self.latencyFrames = latencyFrames
    self.plumbing = plumbing
    self.plumbing2 = plumbing2
  }
}

/// A strip's inserts in order, then its latency compensation: immutable once sent (but each
/// stage's `faulted` and the delay line's position). A chain may hold no stage and only a delay
/// (a strip without latency of its own, delayed to meet a strip with it).
public struct InsertChain: ~Copyable {
  public let count: Int
  @usableFromInline let stages: UnsafeMutablePointer<InsertStage>
  /// The compensation delay in frames (0: none), run after the stages: planar, two channels'
  /// room of `delayFrames` each, zeroed when built. The rest is the renderer's: the line's
  /// position; the delay it runs at while it catches up with `delayFrames` after replacing a
  /// chain with a shorter one, and for how many more frames (InsertDelay.swift).
  public let delayFrames: Int
  @usableFromInline let delayLine: UnsafeMutablePointer<Float>
  @usableFromInline var delayPosition = 0
  @usableFromInline var lag = 0
  @usableFromInline var catchUp = 0
  /// After a catch-up, the frames left of the crossfade from the old delay (`fadeLag`) to the
  /// full one (InsertDelay.swift).
  @usableFromInline var fadeLeft = 0
  @usableFromInline var fadeLag = 0

  /// Builds a chain on the heap (control thread), its delay line sized here.
  public static func make(_ stages: [InsertStage], delayFrames: Int = 0) -> UnsafeMutablePointer<InsertChain> {
    let buffer = UnsafeMutablePointer<InsertStage>.allocate(capacity: Swift.max(1, stages.count))
    for (i, s) in stages.enumerated() { (buffer + i).initialize(to: s) }
    let delay = Swift.max(0, delayFrames)
    let line = UnsafeMutablePointer<Float>.allocate(capacity: Swift.max(1, 2 * delay))
    line.initialize(repeating: 0, count: Swift.max(1, 2 * delay))
    let chain = UnsafeMutablePointer<InsertChain>.allocate(capacity: 1)
    chain.initialize(to: InsertChain(count: stages.count, stages: buffer, delayFrames: delay, delayLine: line))
    return chain
  }

  /// Frees the chain (control thread; the instances are the control thread's own to free).
  public static func free(_ chain: UnsafeMutablePointer<InsertChain>) {
    chain.pointee.stages.deallocate()
    chain.pointee.delayLine.deallocate()
    chain.deinitialize(count: 1)
    chain.deallocate()
  }

  init(count: Int, stages: UnsafeMutablePointer<InsertStage>, delayFrames: Int, delayLine: UnsafeMutablePointer<Float>) {
    self.count = count
    self.stages = stages
    self.delayFrames = delayFrames
    self.delayLine = delayLine
    self.lag = delayFrames
  }
}

/// Every strip's chain (nil: no inserts): stems by slot, buses and inputs by index, the master.
public struct InsertTable: ~Copyable {
  @usableFromInline let stems: UnsafeMutablePointer<UnsafeMutablePointer<InsertChain>?>
  @usableFromInline let buses: UnsafeMutablePointer<UnsafeMutablePointer<InsertChain>?>
  @usableFromInline let inputs: UnsafeMutablePointer<UnsafeMutablePointer<InsertChain>?>
  @usableFromInline var master: UnsafeMutablePointer<InsertChain>?
  let maxVoices: Int
  /// Replaced chains waiting for room in the event ring.
  @usableFromInline let retiring: UnsafeMutablePointer<UnsafeMutablePointer<InsertChain>?>
  @usableFromInline var retiringCount = 0
  static let retiringCapacity = 1024

  init(maxVoices: Int) {
    self.maxVoices = maxVoices
    stems = .allocate(capacity: maxVoices)
    stems.initialize(repeating: nil, count: maxVoices)
    buses = .allocate(capacity: BusBank.maxBuses)
    buses.initialize(repeating: nil, count: BusBank.maxBuses)
    inputs = .allocate(capacity: InputBank.maxInputs)
    inputs.initialize(repeating: nil, count: InputBank.maxInputs)
    retiring = .allocate(capacity: Self.retiringCapacity)
    retiring.initialize(repeating: nil, count: Self.retiringCapacity)
  }

  /// Hands every chain still held to `dispose` and frees the table (control thread, once the
  /// renderer has stopped).
  func free(dispose: (UnsafeMutablePointer<InsertChain>) -> Void) {
    for i in 0..<maxVoices { if let c = stems[i] { dispose(c) } }
    for i in 0..<BusBank.maxBuses { if let c = buses[i] { dispose(c) } }
    for i in 0..<InputBank.maxInputs { if let c = inputs[i] { dispose(c) } }
    if let master { dispose(master) }
    for i in 0..<retiringCount { if let c = retiring[i] { dispose(c) } }
    stems.deallocate()
    buses.deallocate()
    inputs.deallocate()
    retiring.deallocate()
  }

  /// Where `target`'s chain is kept, or nil (an index out of range).
  @_noLocks @inline(__always)
  func cell(_ target: StripTarget) -> UnsafeMutablePointer<UnsafeMutablePointer<InsertChain>?>? {
    switch target {
    case .stem(let slot): slot >= 0 && Int(slot) < maxVoices ? stems + Int(slot) : nil
    case .bus(let b): b >= 0 && Int(b) < BusBank.maxBuses ? buses + Int(b) : nil
    case .input(let i): i >= 0 && Int(i) < InputBank.maxInputs ? inputs + Int(i) : nil
    case .master: nil
    }
  }
}

/// Installs `chain` (nil: none) as `target`'s inserts; the chain it replaces goes back to the
/// control thread.
@_noLocks
func setInserts(_ state: UnsafeMutablePointer<RenderState>, _ target: StripTarget, _ chain: UnsafeMutablePointer<InsertChain>?) {
  let old: UnsafeMutablePointer<InsertChain>?
  if case .master = target {
    old = state.pointee.inserts.master
    state.pointee.inserts.master = chain
  } else if let cell = state.pointee.inserts.cell(target) {
    old = cell.pointee
    cell.pointee = chain
  } else {
    old = chain  // nowhere to put it: straight back
  }
  // What the old chain's delay line still holds plays on in the new one (InsertDelay.swift).
  if let chain, old != chain { carryDelay(from: old, to: chain) }
  if let old, state.pointee.inserts.retiringCount < InsertTable.retiringCapacity {
    state.pointee.inserts.retiring[state.pointee.inserts.retiringCount] = old
    state.pointee.inserts.retiringCount &+= 1
  }  // else: kept rather than freed here (a stalled control thread)
  retireInsertChains(state)
}

/// Hands waiting replaced chains to the control thread while the event ring has room.
@_noLocks
func retireInsertChains(_ state: UnsafeMutablePointer<RenderState>) {
  while state.pointee.inserts.retiringCount > 0 {
    let last = state.pointee.inserts.retiringCount &- 1
    if let chain = state.pointee.inserts.retiring[last] {
      guard state.pointee.events.push(.insertChainRetired(address: Int(bitPattern: chain))) else { return }
    }
    state.pointee.inserts.retiring[last] = nil
    state.pointee.inserts.retiringCount = last
  }
}

/// Runs `chain` over `count` frames of a strip's audio: `channels` (1 or 2) interleaved with
/// `stride` floats between frames (1: `left` and `right` are separate planes). A stage whose
/// output holds NaN or infinity is bypassed from then on and reported (`insertFaulted`): what
/// it put out never reaches the mix. The signal goes from stage to stage in their planar
/// buffers: copied out of the strip into the first running stage's inputs, each output into the
/// next running stage's inputs, and the last output back into the strip. Each output is checked
/// while it is copied on (InsertCopies.swift), not in a pass of its own; a faulted output is
/// replaced by the signal that went into its stage: the last good output, or the strip's own
/// samples (a strip whose every stage faulted or is bypassed keeps its samples).
@_noLocks
func runInserts(
  _ state: UnsafeMutablePointer<RenderState>, _ chain: UnsafeMutablePointer<InsertChain>, target: StripTarget,
  left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>?, stride: Int, count: Int
) {
  guard count > 0 else { return }
  let planes = right == nil ? 1 : 2
  // The last good signal: nil, still in the strip; else a stage's output planes, `held` apart.
  var signal: UnsafeMutablePointer<Float>? = nil
  var held = 0
  // The stage that ran last, whose output is not checked yet (−1: none), and where the strip's
  // samples were copied first (the faulted first stage's own inputs: plugins only read them).
  var pending = -1
  var original: UnsafeMutablePointer<Float>? = nil
  var originalStride = 0
  var n = count
  for k in 0..<chain.pointee.count {
    let stage = chain.pointee.stages + k
    guard let run = stage.pointee.run, !stage.pointee.bypassed, !stage.pointee.faulted else { continue }
    let stride2 = stage.pointee.maxBlockFrames
    n = Swift.min(n, stride2)
    let ins = stage.pointee.inputs
    if pending >= 0 {
      let last = chain.pointee.stages + pending
      let outs = last.pointee.outputs, outStride = last.pointee.maxBlockFrames
      if copyCheckingFinite(outs, stride: outStride, to: ins, stride: stride2, planes: planes, count: n) {
        signal = outs
        held = outStride
      } else {
        fault(state, last, target: target, index: pending)
        if let signal {
          copyPlanes(signal, stride: held, to: ins, stride: stride2, planes: planes, count: n)
        } else {
          stripToPlanes(left: left, right: right, stride: stride, planes: ins, planeStride: stride2, count: n)
        }
      }
    } else {
      stripToPlanes(left: left, right: right, stride: stride, planes: ins, planeStride: stride2, count: n)
      original = ins
      originalStride = stride2
    }
    stage.pointee.plumbing?.pointee.prepare()
    RealtimeC.run(run, stage.pointee.first, frames: n)
    stage.pointee.plumbing?.pointee.finish()
    if let second = stage.pointee.second {
      stage.pointee.plumbing2?.pointee.prepare()
      RealtimeC.run(run, second, frames: n)
      stage.pointee.plumbing2?.pointee.finish()
    }
    if let port = stage.pointee.latencyPort, let cell = stage.pointee.latencyFrames {
      let v = port.pointee
      cell.pointee.store(v.isFinite && v >= 0 && v < 1e9 ? Int32(v) : -1, ordering: .relaxed)
    }
    pending = k
  }
  if pending >= 0 {
    let last = chain.pointee.stages + pending
    let outs = last.pointee.outputs, outStride = last.pointee.maxBlockFrames
    if !planesToStripCheckingFinite(planes: outs, planeStride: outStride, left: left, right: right, stride: stride, count: n) {
      fault(state, last, target: target, index: pending)
      // The strip now holds the faulted output: put back the signal that went into the stage.
      let from = signal ?? original
      let fromStride = signal == nil ? originalStride : held
      if let from,
        !planesToStripCheckingFinite(planes: from, planeStride: fromStride, left: left, right: right, stride: stride, count: n)
      {
        silenceStrip(left: left, right: right, stride: stride, count: n)  // a plugin wrote into its inputs
      }
    }
  }
  compensate(chain, left: left, right: right, stride: stride, count: count)
}

/// Bypasses a stage whose output was not finite from now on and reports it (once: it no longer runs).
@_noLocks @inline(__always)
private func fault(_ state: UnsafeMutablePointer<RenderState>, _ stage: UnsafeMutablePointer<InsertStage>, target: StripTarget, index: Int)
{
  stage.pointee.faulted = true
  _ = state.pointee.events.push(.insertFaulted(target, index: Int32(index)))
}
