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
  /// Per-slot direct-out ports (left, right) as pointer bit patterns, 0 where a stem has none;
  /// `maxVoices` × 2 entries. Atomic because the control thread changes them while the process
  /// callback reads them (ThreadSanitizer caught the plain pointers racing); written with
  /// `setDirectPort` (releasing), read with `directPort` (acquiring).
  let directPorts: UnsafeMutablePointer<Atomic<Int>>
  let directPortCount: Int
  /// Set by the control thread after changing `directPorts` entries (relaxed is enough: a stale
  /// read only delays a new port by one period, and pointers are published before the flag).
  let directPortsVersion = Atomic<Int>(0)
  /// Incremented by JACK's xrun callback.
  public let xruns = Atomic<Int>(0)
  /// Set by the shutdown callback when the server goes away.
  public let serverGone = Atomic<Bool>(false)
  /// Set by port registration and connection callbacks: routing may need healing.
  public let graphChanged = Atomic<Int>(0)
  /// Set by the sample-rate callback.
  public let sampleRate = Atomic<Int>(0)
  /// Periods processed.
  public let periods = Atomic<Int>(0)
  /// The tempo the timebase callback reports (JACK transport lead).
  let tempo = TimebaseTempo()

  init(renderState: UnsafeMutablePointer<RenderState>, masterLeft: OpaquePointer, masterRight: OpaquePointer, maxVoices: Int) {
    self.renderState = renderState
    self.masterLeft = masterLeft
    self.masterRight = masterRight
    directPortCount = maxVoices * 2
    directPorts = .allocate(capacity: maxVoices * 2)
    for i in 0..<(maxVoices * 2) { (directPorts + i).initialize(to: Atomic(0)) }
  }

  deinit {
    directPorts.deinitialize(count: directPortCount)
    directPorts.deallocate()
  }

  /// Publishes (or clears) one direct-out port. Control thread.
  func setDirectPort(_ index: Int, _ port: OpaquePointer?) {
    directPorts[index].store(port.map { Int(bitPattern: UnsafeRawPointer($0)) } ?? 0, ordering: .releasing)
  }

  /// One direct-out port, or nil. Process callback.
  @_noLocks
  func directPort(_ index: Int) -> OpaquePointer? {
    OpaquePointer(bitPattern: directPorts[index].load(ordering: .acquiring))
  }
}

/// The JACK process callback: fetches the port buffers and runs the engine's block renderer.
///
/// - Realtime: safe. Allocates nothing, takes no locks, makes no syscalls; the only C call,
///   `jack_port_get_buffer`, carries a waiver. Proven by `@_noLocks`.
/// - Thread: JACK's process thread. This is a free function, not a closure literal: a closure
///   written in main-actor code would be main-actor isolated and trap on JACK's thread (design.md).
@_noLocks
func stemdeckProcess(_ nframes: jack_nframes_t, _ arg: UnsafeMutableRawPointer?) -> Int32 {
  guard let arg else { return 0 }
  let context = arg.assumingMemoryBound(to: ProcessContext.self)
  let left = context.pointee.masterLeft
  let right = context.pointee.masterRight
  // RT-WAIVER: jack_port_get_buffer only returns the port's buffer pointer for this period;
  // jack2 common/jack/jack.h says buffers must be fetched anew in each process callback
  // (never cached). No allocation, no lock, no syscall.
  let leftBuffer = _unsafePerformance { jack_port_get_buffer(left, nframes) }
  // RT-WAIVER: as above, jack_port_get_buffer for the right master port.
  let rightBuffer = _unsafePerformance { jack_port_get_buffer(right, nframes) }
  guard let leftBuffer, let rightBuffer else { return 0 }
  let state = context.pointee.renderState
  if let inL = context.pointee.inputLeft, let inR = context.pointee.inputRight {
    // RT-WAIVER: jack_port_get_buffer for the recording inputs (see above).
    let l = _unsafePerformance { jack_port_get_buffer(inL, nframes) }
    // RT-WAIVER: jack_port_get_buffer for the recording inputs (see above).
    let r = _unsafePerformance { jack_port_get_buffer(inR, nframes) }
    state.pointee.inputLeft = l?.assumingMemoryBound(to: Float.self)
    state.pointee.inputRight = r?.assumingMemoryBound(to: Float.self)
  } else {
    state.pointee.inputLeft = nil
    state.pointee.inputRight = nil
  }
  let direct = state.pointee.directOutputs
  let maxVoices = state.pointee.maxVoices
  for slot in 0..<min(state.pointee.slotLimitForDrivers, maxVoices) {
    let portL = context.pointee.directPort(2 &* slot)
    let portR = context.pointee.directPort(2 &* slot &+ 1)
    if let portL, let portR {
      // RT-WAIVER: jack_port_get_buffer for a stem's direct-out ports (see above).
      direct[2 &* slot] = _unsafePerformance { jack_port_get_buffer(portL, nframes) }?.assumingMemoryBound(to: Float.self)
      // RT-WAIVER: jack_port_get_buffer for a stem's direct-out ports (see above).
      direct[2 &* slot &+ 1] = _unsafePerformance { jack_port_get_buffer(portR, nframes) }?.assumingMemoryBound(to: Float.self)
    } else {
      direct[2 &* slot] = nil
      direct[2 &* slot &+ 1] = nil
    }
  }
  renderBlock(state, left: leftBuffer.assumingMemoryBound(to: Float.self),
              right: rightBuffer.assumingMemoryBound(to: Float.self), frameCount: Int(nframes))
  context.pointee.periods.add(1, ordering: .relaxed)
  return 0
}

/// JACK's xrun callback (JACK's notification thread).
func stemdeckXrun(_ arg: UnsafeMutableRawPointer?) -> Int32 {
  arg?.assumingMemoryBound(to: ProcessContext.self).pointee.xruns.add(1, ordering: .relaxed)
  return 0
}

/// JACK's info-shutdown callback: only flags it; the supervisor closes and reconnects
/// (jack_client_close must not be called from here).
func stemdeckShutdown(_ code: jack_status_t, _ reason: UnsafePointer<CChar>?, _ arg: UnsafeMutableRawPointer?) {
  arg?.assumingMemoryBound(to: ProcessContext.self).pointee.serverGone.store(true, ordering: .releasing)
}

func stemdeckPortRegistration(_ port: jack_port_id_t, _ registered: Int32, _ arg: UnsafeMutableRawPointer?) {
  arg?.assumingMemoryBound(to: ProcessContext.self).pointee.graphChanged.add(1, ordering: .releasing)
}

func stemdeckPortConnect(_ a: jack_port_id_t, _ b: jack_port_id_t, _ connect: Int32, _ arg: UnsafeMutableRawPointer?) {
  arg?.assumingMemoryBound(to: ProcessContext.self).pointee.graphChanged.add(1, ordering: .releasing)
}

func stemdeckSampleRate(_ rate: jack_nframes_t, _ arg: UnsafeMutableRawPointer?) -> Int32 {
  arg?.assumingMemoryBound(to: ProcessContext.self).pointee.sampleRate.store(Int(rate), ordering: .releasing)
  return 0
}
