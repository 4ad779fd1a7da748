import CJack
import StemdeckEngine
import Synchronization

/// What the JACK process callback needs, reached through its `void *arg`: plain pointers and
/// atomics only (no classes, so nothing is retained or released on the realtime thread).
///
/// - Thread: allocated and freed by the control thread while the client is not active; read by
///   the process callback; the counters are written by JACK's callbacks and read by control.
public struct ProcessContext: ~Copyable, @unchecked Sendable {
  /// The renderer; replaced only while the client is deactivated.
  var renderState: UnsafeMutablePointer<RenderState>
  var masterLeft: OpaquePointer
  var masterRight: OpaquePointer
  /// Recording inputs `in_L` / `in_R`.
  var inputLeft: OpaquePointer?
  var inputRight: OpaquePointer?
  /// The sound-effect ports `sfx_L`/`sfx_R` (bit patterns of the port pointers; 0: none, effects
  /// go into the master). Cleared by the control thread, which then waits two periods before
  /// unregistering the ports.
  let effectPortLeft = Atomic<Int>(0)
  let effectPortRight = Atomic<Int>(0)
  /// The click's ports `click_L`/`click_R` (JackDriver+Monitors.swift), published like the sfx ports.
  let clickPortLeft = Atomic<Int>(0)
  let clickPortRight = Atomic<Int>(0)
  /// The cue bus's ports `cue_L`/`cue_R`, published the same way.
  let cuePortLeft = Atomic<Int>(0)
  let cuePortRight = Atomic<Int>(0)
  /// The MIDI input `midi_in` (pointer bit pattern; 0: none), published like the sfx ports.
  let midiPort = Atomic<Int>(0)
  /// The MIDI feedback output `midi_out` (pointer bit pattern; 0: none).
  let midiOutPort = Atomic<Int>(0)
  /// Process thread only: the `midi_out` and the graph change count seen last period (a new port
  /// or a new connection anywhere gets every value again: a controller plugged in learns them).
  var lastMidiOut = 0
  var lastMidiGraph = 0
  /// Periods until the feedback is sent once more after a graph change (see `writeMidiFeedback`).
  var midiResendPeriods = 0
  /// MIDI events read by the process callback (a figure for `midi maps`).
  public let midiEvents = Atomic<Int>(0)
  /// Per-slot direct-out ports (left, right) as pointer bit patterns, 0 where a stem has none;
  /// `maxVoices` × 2 entries, then the buses' and the live inputs' (`RenderState.directOutputs`). Atomic because the control thread changes them while the process
  /// callback reads them (ThreadSanitizer caught the plain pointers racing); written with
  /// `setDirectPort` (releasing), read with `directPort` (acquiring).
  let directPorts: UnsafeMutablePointer<Atomic<Int>>
  let directPortCount: Int
  /// Set by the control thread after changing `directPorts` entries (relaxed is enough: a stale
  /// read only delays a new port by one period, and pointers are published before the flag).
  let directPortsVersion = Atomic<Int>(0)
  /// One past the highest bus and live input with direct-out ports (`updateDirectLimits`): the
  /// process callback fetches those slots only.
  let busDirectLimit = Atomic<Int>(0)
  let inputDirectLimit = Atomic<Int>(0)
  /// Process thread only: the slot counts fetched last period (the entries past this period's
  /// counts are cleared once, so no stale buffer stays in `RenderState.directOutputs`).
  var lastStemDirect = 0
  var lastBusDirect = 0
  var lastInputDirect = 0
  /// Live input ports (InputStrips.swift; JackDriver+Inputs.swift), left and right per input
  /// strip (a mono input only the left), pointer bit patterns, 0 where none; published and
  /// cleared like the direct outs.
  let liveInputPorts: UnsafeMutablePointer<Atomic<Int>>
  let liveInputPortCount: Int
  /// Aux send ports (Sends.swift; JackDriver+Sends.swift): send L/R, return L/R per send,
  /// pointer bit patterns, 0 where none; published and cleared like the live inputs.
  let sendPorts: UnsafeMutablePointer<Atomic<Int>>
  let sendPortCount = SendBank.maxSends * 4
  /// Incremented by JACK's xrun callback.
  public let xruns = Atomic<Int>(0)
  /// Set by the shutdown callback when the server goes away.
  public let serverGone = Atomic<Bool>(false)
  /// Set by port registration and connection callbacks: routing may need healing.
  public let graphChanged = Atomic<Int>(0)
  /// Incremented by the port registration callback for every port unregistered (anyone's):
  /// a connection seen vanishing may have gone with its peer even if a port of that name is
  /// there again (JackDriver+Patchbay.swift, `refreshSeen`).
  public let portsUnregistered = Atomic<Int>(0)
  /// Set by the sample-rate callback.
  public let sampleRate = Atomic<Int>(0)
  /// The plugin inserts' latency at the master in frames, added to the ports' latencies by the
  /// latency callback (JackDriver+Latency.swift); −1: not yet told to JACK.
  let processingLatency = Atomic<Int>(0)
  /// Periods processed.
  public let periods = Atomic<Int>(0)
  /// The tempo the timebase callback reports (JACK transport lead).
  let tempo = TimebaseTempo()
  /// The client, for the transport calls the process callback makes while leading.
  var client: OpaquePointer?
  /// Set by the control thread while stemdeck leads JACK transport: the process callback then
  /// keeps JACK's transport frame equal to stemdeck's, sample for sample (see `leadTransport`).
  public let leading = Atomic<Bool>(false)
  /// Whether JACK's transport frame equalled stemdeck's at the start of the last period.
  public let transportLocked = Atomic<Bool>(false)
  /// Locates requested by the process callback to keep JACK's transport in step (a figure for
  /// `status`; more than a couple per start or seek means something else moves JACK transport).
  public let transportCorrections = Atomic<Int>(0)
  /// Process-thread only: the lead lock's state between periods.
  var lead = TransportLeadState()

  init(
    renderState: UnsafeMutablePointer<RenderState>, masterLeft: OpaquePointer, masterRight: OpaquePointer, maxVoices: Int,
    maxInputs: Int = InputBank.maxInputs
  ) {
    self.renderState = renderState
    self.masterLeft = masterLeft
    self.masterRight = masterRight
    // The stems' slots, then the buses' (bus b at maxVoices + b: Renderer/Buses.swift), then the
    // live inputs' (`InputBank.directSlot`).
    directPortCount = (maxVoices + BusBank.maxBuses + InputBank.maxInputs) * 2
    directPorts = .allocate(capacity: directPortCount)
    for i in 0..<directPortCount { (directPorts + i).initialize(to: Atomic(0)) }
    liveInputPortCount = maxInputs * 2
    liveInputPorts = .allocate(capacity: maxInputs * 2)
    for i in 0..<(maxInputs * 2) { (liveInputPorts + i).initialize(to: Atomic(0)) }
    sendPorts = .allocate(capacity: SendBank.maxSends * 4)
    for i in 0..<(SendBank.maxSends * 4) { (sendPorts + i).initialize(to: Atomic(0)) }
  }

  deinit {
    directPorts.deinitialize(count: directPortCount)
    directPorts.deallocate()
    liveInputPorts.deinitialize(count: liveInputPortCount)
    liveInputPorts.deallocate()
    sendPorts.deinitialize(count: sendPortCount)
    sendPorts.deallocate()
  }

  /// Publishes (or clears) one send port. Control thread.
  func setSendPort(_ index: Int, _ port: OpaquePointer?) {
    sendPorts[index].store(port.map { Int(bitPattern: UnsafeRawPointer($0)) } ?? 0, ordering: .releasing)
  }

  /// Publishes (or clears) one live input port. Control thread.
  func setLiveInputPort(_ index: Int, _ port: OpaquePointer?) {
    liveInputPorts[index].store(port.map { Int(bitPattern: UnsafeRawPointer($0)) } ?? 0, ordering: .releasing)
  }

  /// Publishes (or clears) one direct-out port. Control thread.
  func setDirectPort(_ index: Int, _ port: OpaquePointer?) {
    directPorts[index].store(port.map { Int(bitPattern: UnsafeRawPointer($0)) } ?? 0, ordering: .releasing)
  }

  /// Publishes how many bus and input direct-out slots the process callback fetches: one past
  /// the highest with a port. Control thread, after the `setDirectPort` calls (a port is then
  /// published before the count that covers it).
  func updateDirectLimits(maxVoices: Int) {
    func limit(first: Int, count: Int) -> Int {
      var result = 0
      for k in 0..<count where directPorts[2 * (first + k)].load(ordering: .relaxed) != 0 { result = k + 1 }
      return result
    }
    busDirectLimit.store(limit(first: maxVoices, count: BusBank.maxBuses), ordering: .releasing)
    inputDirectLimit.store(
      limit(first: InputBank.directSlot(0, maxVoices: maxVoices), count: InputBank.maxInputs), ordering: .releasing)
  }

  /// One direct-out port, or nil. Process callback.
  @_noLocks
  func directPort(_ index: Int) -> OpaquePointer? {
    OpaquePointer(bitPattern: directPorts[index].load(ordering: .acquiring))
  }
}

/// A port's buffer for this period (master, inputs, sfx ports, direct outs): the one waiver for
/// every `jack_port_get_buffer` of the process callback.
@_noLocks @inline(__always)
func portBuffer(_ port: OpaquePointer, _ nframes: jack_nframes_t) -> UnsafeMutableRawPointer? {
  // RT-WAIVER: jack_port_get_buffer only returns the port's buffer pointer for this period;
  // jack2 common/jack/jack.h says buffers must be fetched anew in each process callback
  // (never cached). No allocation, no lock, no syscall.
  _unsafePerformance { jack_port_get_buffer(port, nframes) }
}

/// The number of events in a MIDI port's buffer this period.
@_noLocks @inline(__always)
func midiEventCount(_ buffer: UnsafeMutableRawPointer) -> UInt32 {
  // RT-WAIVER: jack_midi_get_event_count reads the event count from the port buffer's header
  // (jack2 common/JackMidiAPI.cpp); no allocation, no lock, no syscall.
  _unsafePerformance { jack_midi_get_event_count(buffer) }
}

/// MIDI event `index` of a port's buffer: its frame offset and data pointer (into the buffer).
@_noLocks @inline(__always)
func midiEvent(_ buffer: UnsafeMutableRawPointer, _ index: UInt32, _ event: UnsafeMutablePointer<jack_midi_event_t>) -> Int32 {
  // RT-WAIVER: jack_midi_event_get fills `event` with the time, size and a pointer into the port
  // buffer (jack2 common/JackMidiAPI.cpp); it copies no data, allocates nothing, takes no lock,
  // makes no syscall.
  _unsafePerformance { jack_midi_event_get(event, buffer, index) }
}

/// Reads this period's MIDI input and hands each event to the renderer (`midiInput`), which
/// queues mapped changes for their frame in the coming `renderBlock`. At most 1,024 events a
/// period (a flood cannot stall the audio). The commands queued so far are applied first: a
/// mapping learned a moment ago and a fader moved in the same period met the old table, and the
/// move was lost (MidiControlTests' takeover count, once in CI).
@_noLocks
func readMidi(_ context: UnsafeMutablePointer<ProcessContext>, _ state: UnsafeMutablePointer<RenderState>, _ nframes: jack_nframes_t) {
  guard let port = OpaquePointer(bitPattern: context.pointee.midiPort.load(ordering: .acquiring)),
    let buffer = portBuffer(port, nframes)
  else { return }
  let count = Swift.min(midiEventCount(buffer), 1024)
  if count == 0 { return }
  applyCommandsBeforeInput(state)
  var event = jack_midi_event_t()
  for i in 0..<count {
    guard midiEvent(buffer, i, &event) == 0, let data = event.buffer, event.size > 0 else { continue }
    let size = Int(event.size)
    midiInput(state, offset: Int(event.time), count: size, data[0], size > 1 ? data[1] : 0, size > 2 ? data[2] : 0)
  }
  context.pointee.midiEvents.add(Int(count), ordering: .relaxed)
}

/// Writes MIDI feedback (`midi.feedback`) into `midi_out`: at most 128 messages a period, at
/// frame 0; the rest follow in the next periods.
@_noLocks
func writeMidiFeedback(
  _ context: UnsafeMutablePointer<ProcessContext>, _ state: UnsafeMutablePointer<RenderState>, _ nframes: jack_nframes_t
) {
  let bits = context.pointee.midiOutPort.load(ordering: .acquiring)
  let graph = context.pointee.graphChanged.load(ordering: .relaxed)
  if bits != context.pointee.lastMidiOut || graph != context.pointee.lastMidiGraph {
    context.pointee.lastMidiOut = bits
    context.pointee.lastMidiGraph = graph
    midiFeedbackReset(state)
    // JACK tells of a new connection from its notification thread, not in step with the process
    // cycle: the period that sees the count change can come before the connection carries data,
    // and the values sent then are lost (CI saw a controller get nothing in 10 s). So everything
    // is sent once more 8 periods later; a controller takes a repeated value as it is.
    context.pointee.midiResendPeriods = 8
  } else if context.pointee.midiResendPeriods > 0 {
    context.pointee.midiResendPeriods &-= 1
    if context.pointee.midiResendPeriods == 0 { midiFeedbackReset(state) }
  }
  guard let port = OpaquePointer(bitPattern: bits), let buffer = portBuffer(port, nframes) else { return }
  // RT-WAIVER: jack_midi_clear_buffer resets the port buffer's header (jack2 common/JackMidiAPI.cpp);
  // it must be called once per period on an output MIDI port. No allocation, no lock, no syscall.
  _unsafePerformance { jack_midi_clear_buffer(buffer) }
  var index = 0
  var written = 0
  while written < 128, let message = midiFeedback(state, index: &index) {
    let length = midiFeedbackLength(status: message.status)
    // RT-WAIVER: jack_midi_event_reserve hands out 2 or 3 bytes inside the port buffer (nil when
    // it is full); no allocation, no lock, no syscall.
    guard let data = _unsafePerformance({ jack_midi_event_reserve(buffer, 0, length) }) else { break }
    data[0] = message.status
    data[1] = message.data1
    if length == 3 { data[2] = message.data2 }
    written &+= 1
  }
}

/// The JACK process callback: fetches the port buffers and runs the engine's block renderer.
///
/// - Realtime: safe. Allocates nothing, takes no locks, makes no syscalls. Its C calls carry
///   RT-WAIVERs: `jack_port_get_buffer` in `portBuffer`, the MIDI reads in `midiEventCount`/`midiEvent`,
///   the feedback writes in `writeMidiFeedback`, `jack_transport_query`/`jack_transport_locate`
///   in `leadTransport`, and those `renderBlock` makes (the engine's Renderer/RealtimeC.swift).
///   Proven by `@_noLocks`.
/// - Thread: JACK's process thread. This is a free function, not a closure literal: a closure
///   written in main-actor code would be main-actor isolated and trap on JACK's thread
///   (docs/architecture.md).
@_noLocks
func stemdeckProcess(_ nframes: jack_nframes_t, _ arg: UnsafeMutableRawPointer?) -> Int32 {
  guard let arg else { return 0 }
  let context = arg.assumingMemoryBound(to: ProcessContext.self)
  let left = context.pointee.masterLeft
  let right = context.pointee.masterRight
  let leftBuffer = portBuffer(left, nframes)
  let rightBuffer = portBuffer(right, nframes)
  guard let leftBuffer, let rightBuffer else { return 0 }
  let state = context.pointee.renderState
  if let inL = context.pointee.inputLeft, let inR = context.pointee.inputRight {
    let l = portBuffer(inL, nframes)
    let r = portBuffer(inR, nframes)
    state.pointee.inputLeft = l?.assumingMemoryBound(to: Float.self)
    state.pointee.inputRight = r?.assumingMemoryBound(to: Float.self)
  } else {
    state.pointee.inputLeft = nil
    state.pointee.inputRight = nil
  }
  state.pointee.effectOutputLeft = nil
  state.pointee.effectOutputRight = nil
  if let fxL = OpaquePointer(bitPattern: context.pointee.effectPortLeft.load(ordering: .acquiring)),
    let fxR = OpaquePointer(bitPattern: context.pointee.effectPortRight.load(ordering: .acquiring))
  {
    let l = portBuffer(fxL, nframes)?.assumingMemoryBound(to: Float.self)
    let r = portBuffer(fxR, nframes)?.assumingMemoryBound(to: Float.self)
    if let l, let r {
      l.update(repeating: 0, count: Int(nframes))
      r.update(repeating: 0, count: Int(nframes))
      state.pointee.effectOutputLeft = l
      state.pointee.effectOutputRight = r
    }
  }
  // Direct outs: the stems' slots in use, then the buses' and the live inputs' up to the highest
  // with ports (`updateDirectLimits`), by one helper.
  let direct = state.pointee.directOutputs
  let maxVoices = state.pointee.maxVoices
  let stems = Swift.min(state.pointee.slotLimitForDrivers, maxVoices)
  let buses = Swift.min(context.pointee.busDirectLimit.load(ordering: .acquiring), BusBank.maxBuses)
  let inputs = Swift.min(context.pointee.inputDirectLimit.load(ordering: .acquiring), InputBank.maxInputs)
  fetchDirectOutputs(context, direct, first: 0, count: stems, previous: context.pointee.lastStemDirect, nframes)
  fetchDirectOutputs(context, direct, first: maxVoices, count: buses, previous: context.pointee.lastBusDirect, nframes)
  fetchDirectOutputs(
    context, direct, first: InputBank.directSlot(0, maxVoices: maxVoices), count: inputs,
    previous: context.pointee.lastInputDirect, nframes)
  context.pointee.lastStemDirect = stems
  context.pointee.lastBusDirect = buses
  context.pointee.lastInputDirect = inputs
  state.pointee.busDirectCount = buses
  state.pointee.inputDirectCount = inputs
  // Live inputs (InputStrips.swift): each port's buffer for this period, nil where none.
  let inputBuffers = state.pointee.inputs.buffers
  for i in 0..<Swift.min(context.pointee.liveInputPortCount, state.pointee.inputs.capacity &* 2) {
    if let port = OpaquePointer(bitPattern: context.pointee.liveInputPorts[i].load(ordering: .acquiring)) {
      inputBuffers[i] = portBuffer(port, nframes)?.assumingMemoryBound(to: Float.self)
    } else {
      inputBuffers[i] = nil
    }
  }
  // Aux sends (Sends.swift): the send outputs' and returns' buffers for this period.
  for k in 0..<(context.pointee.sendPortCount / 4) {
    for side in 0..<2 {
      let out = OpaquePointer(bitPattern: context.pointee.sendPorts[4 &* k &+ side].load(ordering: .acquiring))
      let ret = OpaquePointer(bitPattern: context.pointee.sendPorts[4 &* k &+ 2 &+ side].load(ordering: .acquiring))
      state.pointee.sends.outputs[2 &* k &+ side] = out.flatMap { portBuffer($0, nframes)?.assumingMemoryBound(to: Float.self) }
      state.pointee.sends.returns[2 &* k &+ side] = ret.flatMap { portBuffer($0, nframes)?.assumingMemoryBound(to: Float.self) }
    }
  }
  fetchMonitorOutputs(context, state, nframes)
  readMidi(context, state, nframes)
  renderBlock(
    state, left: leftBuffer.assumingMemoryBound(to: Float.self),
    right: rightBuffer.assumingMemoryBound(to: Float.self), frameCount: Int(nframes))
  writeMidiFeedback(context, state, nframes)
  if context.pointee.leading.load(ordering: .relaxed) {
    leadTransport(context, frames: Int(nframes))
  } else if context.pointee.lead.pending >= 0 {
    context.pointee.lead = TransportLeadState()
  }
  context.pointee.periods.add(1, ordering: .relaxed)
  return 0
}

/// Sets the direct-out buffers of `count` slots from `first` (left and right: 2 × slot and the
/// entry after it) to their ports' buffers for this period, nil where a slot has no ports, and
/// clears the slots a larger `previous` count set last period.
@_noLocks
func fetchDirectOutputs(
  _ context: UnsafeMutablePointer<ProcessContext>, _ direct: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>, first: Int,
  count: Int, previous: Int, _ nframes: jack_nframes_t
) {
  let end = first &+ Swift.max(0, count)
  for slot in first..<end {
    if let portL = context.pointee.directPort(2 &* slot), let portR = context.pointee.directPort(2 &* slot &+ 1) {
      direct[2 &* slot] = portBuffer(portL, nframes)?.assumingMemoryBound(to: Float.self)
      direct[2 &* slot &+ 1] = portBuffer(portR, nframes)?.assumingMemoryBound(to: Float.self)
    } else {
      direct[2 &* slot] = nil
      direct[2 &* slot &+ 1] = nil
    }
  }
  let staleEnd = first &+ previous
  if staleEnd > end {
    for slot in end..<staleEnd {
      direct[2 &* slot] = nil
      direct[2 &* slot &+ 1] = nil
    }
  }
}

/// The process thread's memory of the lead lock between periods.
struct TransportLeadState {
  /// Periods since the last locate request (-1: none outstanding).
  var pending = -1
  /// The frame that locate asked for, and how many periods late it was aimed.
  var target = 0
  /// Periods a locate takes to show in `jack_transport_query` (JACK's docs say "two process
  /// cycles"; jackd2 applies it at the next cycle). Learnt from the last locate seen landing.
  var delay = 1
  /// JACK's frame in the previous period, to see a locate land.
  var lastJackFrame = -1
  @_noLocks init() {}
}

/// Keeps JACK's transport frame equal to stemdeck's while stemdeck leads and plays, so other
/// JACK clients (and takes recorded against them) are sample-aligned with the stems.
///
/// Each period, after rendering: stemdeck's frame for the next period is the frame it reached;
/// JACK's will be its current frame plus the period. When they differ, a locate is requested,
/// aimed at where stemdeck will be when the locate takes effect; while it is outstanding no new
/// one is sent. The control thread keeps starting and stopping JACK transport (`syncTransport`).
///
/// - Realtime: safe. `jack_transport_query` and `jack_transport_locate` are documented as
///   realtime-safe (jack/transport.h); atomics and arithmetic otherwise. Proven by `@_noLocks`.
@_noLocks
func leadTransport(_ context: UnsafeMutablePointer<ProcessContext>, frames: Int) {
  guard let client = context.pointee.client else { return }
  let status = context.pointee.renderState.pointee.status
  let ours = status.pointee.transportFrame.load(ordering: .relaxed)
  let playing = status.pointee.transportState.load(ordering: .relaxed) == TransportState.playing.rawValue
  var position = jack_position_t()
  // RT-WAIVER: jack_transport_query is documented realtime-safe ("can be called from any
  // thread"): it copies the engine's double-buffered position; no lock, no syscall.
  let state = _unsafePerformance { jack_transport_query(client, &position) }
  let jackFrame = Int(position.frame)
  let rolling = state == JackTransportRolling
  var lead = context.pointee.lead
  if lead.pending >= 0 {
    lead.pending &+= 1
    // A locate has landed when JACK's frame stops following on from the previous period.
    if rolling && lead.lastJackFrame >= 0 && jackFrame != lead.lastJackFrame &+ frames {
      lead.delay = Swift.max(1, Swift.min(4, lead.pending))
      lead.pending = -1
    } else if lead.pending > 6 {
      lead.pending = -1  // never seen landing (a slow-sync client, or JACK stopped): try again
    }
  }
  // Frames are compared at the start of this period: ours then was `ours - frames` if the
  // whole period played; the lock is judged on the next period's start instead, which is exact.
  let jackNext = jackFrame &+ frames
  let locked = rolling && playing && jackNext == ours
  context.pointee.transportLocked.store(locked, ordering: .relaxed)
  if rolling && playing && !locked && lead.pending < 0 {
    let target = ours &+ frames &* (lead.delay &- 1)
    // RT-WAIVER: jack_transport_locate is documented realtime-safe: it posts a request that the
    // server applies at a later cycle; no lock, no syscall.
    _ = _unsafePerformance { jack_transport_locate(client, jack_nframes_t(truncatingIfNeeded: Swift.max(0, target))) }
    lead.pending = 0
    lead.target = target
    context.pointee.transportCorrections.add(1, ordering: .relaxed)
  }
  lead.lastJackFrame = jackFrame
  context.pointee.lead = lead
}

/// JACK's xrun callback (JACK's notification thread).
func stemdeckXrun(_ arg: UnsafeMutableRawPointer?) -> Int32 {
  arg?.assumingMemoryBound(to: ProcessContext.self).pointee.xruns.add(1, ordering: .relaxed)
  wakeControlLoop()
  return 0
}

/// JACK's info-shutdown callback: only flags it; the supervisor closes and reconnects
/// (jack_client_close must not be called from here).
func stemdeckShutdown(_ code: jack_status_t, _ reason: UnsafePointer<CChar>?, _ arg: UnsafeMutableRawPointer?) {
  arg?.assumingMemoryBound(to: ProcessContext.self).pointee.serverGone.store(true, ordering: .releasing)
  wakeControlLoop()
}

func stemdeckPortRegistration(_ port: jack_port_id_t, _ registered: Int32, _ arg: UnsafeMutableRawPointer?) {
  guard let context = arg?.assumingMemoryBound(to: ProcessContext.self) else { return }
  if registered == 0 { context.pointee.portsUnregistered.add(1, ordering: .relaxed) }
  context.pointee.graphChanged.add(1, ordering: .releasing)
  wakeControlLoop()
}

func stemdeckPortConnect(_ a: jack_port_id_t, _ b: jack_port_id_t, _ connect: Int32, _ arg: UnsafeMutableRawPointer?) {
  arg?.assumingMemoryBound(to: ProcessContext.self).pointee.graphChanged.add(1, ordering: .releasing)
  wakeControlLoop()
}

func stemdeckSampleRate(_ rate: jack_nframes_t, _ arg: UnsafeMutableRawPointer?) -> Int32 {
  arg?.assumingMemoryBound(to: ProcessContext.self).pointee.sampleRate.store(Int(rate), ordering: .releasing)
  wakeControlLoop()
  return 0
}
