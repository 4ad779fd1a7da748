import CKernels
import CRubberBand
import CSampleRate
import CZita

// Every C call the realtime path makes from the renderer and the DSP, each behind the one waiver
// that says why it is safe. The realtime checker (@_noLocks, proven by `swift build -c release`)
// cannot see into C; these wrappers are where that is accepted, so call sites need no waiver of
// their own. The JACK calls of the process callback are in StemdeckJack's ProcessCallback.swift.
// docs/architecture.md, *The realtime contract*.

/// Realtime-safe entries into libm, libsamplerate and Rubber Band (real-time mode).
@usableFromInline
enum RealtimeC {
  // MARK: libm (through the `*Impl` shims in DSP/MathShims.swift)

  // MARK: stemdeck's own C kernels (Sources/CKernels)

  /// The resampler's steady-mode stereo loop with AVX2 and FMA (`stemdeck_steady_stereo_avx2`).
  @_noLocks @inline(__always) @usableFromInline
  static func steadyStereoAVX2(
    rows: UnsafeMutablePointer<Float>, padded: Int, count: Int, width: Int, left: UnsafeMutablePointer<Float>,
    right: UnsafeMutablePointer<Float>, filled: Int, end: Int, frames: Int, frameStep: Int, phaseStep: Int,
    phases: Int, output: UnsafeMutablePointer<Float>, frame: inout Int, phase: inout Int
  ) -> Int {
    // RT-WAIVER: our own arithmetic loop over buffers the caller owns: no allocation, no lock, no syscall.
    _unsafePerformance {
      stemdeck_steady_stereo_avx2(
        rows, padded, count, width, left, right, filled, end, frames, frameStep, phaseStep, phases, output, &frame,
        &phase)
    }
  }

  /// cos(x).
  @_noLocks @inline(__always) @usableFromInline
  static func cos(_ x: Double) -> Double {
    // RT-WAIVER: cos from libm is a pure function: no allocation, no lock, no syscall.
    _unsafePerformance { cosImpl(x) }
  }

  /// sin(x).
  @_noLocks @inline(__always) @usableFromInline
  static func sin(_ x: Double) -> Double {
    // RT-WAIVER: sin from libm is a pure function: no allocation, no lock, no syscall.
    _unsafePerformance { sinImpl(x) }
  }

  /// x^y.
  @_noLocks @inline(__always) @usableFromInline
  static func pow(_ x: Double, _ y: Double) -> Double {
    // RT-WAIVER: pow from libm is a pure function: no allocation, no lock, no syscall.
    _unsafePerformance { powImpl(x, y) }
  }

  /// log2(x).
  @_noLocks @inline(__always) @usableFromInline
  static func log2(_ x: Double) -> Double {
    // RT-WAIVER: log2 from libm is a pure function: no allocation, no lock, no syscall.
    _unsafePerformance { log2Impl(x) }
  }

  // MARK: libsamplerate (linear, medium, best qualities)

  /// `src_reset`: clears the converter's internal buffers.
  @_noLocks @inline(__always)
  static func reset(_ state: OpaquePointer) {
    // RT-WAIVER: src_reset only clears the converter's internal buffers (libsamplerate 0.2.2;
    // docs/architecture.md: no allocation over 10,000 calls, no lock).
    _ = _unsafePerformance { src_reset(state) }
  }

  /// `src_process`: converts `data`; returns libsamplerate's error code.
  @_noLocks @inline(__always)
  static func process(_ state: OpaquePointer, _ data: inout SRC_DATA) -> Int32 {
    // RT-WAIVER: src_process makes no allocation and takes no lock (libsamplerate 0.2.2; checked
    // with an allocation counter over 10,000 calls at changing ratios, docs/architecture.md). A changed
    // src_ratio is ramped smoothly across the output block by the library.
    _unsafePerformance { src_process(state, &data) }
  }

  // MARK: zita-resampler's VResampler (the `fast` quality at a held rate; CZita)

  /// `VResampler::reset`: forgets all input.
  @_noLocks @inline(__always)
  static func zitaReset(_ z: OpaquePointer) {
    // RT-WAIVER: VResampler::reset only sets the instance's counters (zita-resampler 1.8: no
    // allocation, no lock; setup and the table's mutex stay on the control thread).
    _unsafePerformance { stemdeck_zita_reset(z) }
  }

  /// `VResampler::set_phase`: where between two input frames the next output lies.
  @_noLocks @inline(__always)
  static func zitaSetPhase(_ z: OpaquePointer, _ phase: Double) {
    // RT-WAIVER: arithmetic on the instance's phase (floor from libm).
    _unsafePerformance { stemdeck_zita_set_phase(z, phase) }
  }

  /// `VResampler::inpdist`: the next input frame's index minus the next output's position.
  @_noLocks @inline(__always)
  static func zitaInputDistance(_ z: OpaquePointer) -> Double {
    // RT-WAIVER: a getter.
    _unsafePerformance { stemdeck_zita_inpdist(z) }
  }

  /// `VResampler::process` on interleaved frames (`input` nil: silence); returns the input frames
  /// taken and the output frames made.
  @_noLocks @inline(__always)
  static func zitaProcess(
    _ z: OpaquePointer, input: UnsafePointer<Float>?, inputFrames: Int, output: UnsafeMutablePointer<Float>,
    outputFrames: Int
  ) -> (used: Int, made: Int) {
    // RT-WAIVER: VResampler::process filters from and into buffers the instance and the caller
    // own (a memmove inside its own buffer): no allocation, no lock, no syscall (zita-resampler 1.8).
    _unsafePerformance { () -> (used: Int, made: Int) in
      var used: UInt32 = 0
      var made: UInt32 = 0
      stemdeck_zita_process(
        z, input, UInt32(truncatingIfNeeded: inputFrames), output, UInt32(truncatingIfNeeded: outputFrames), &used, &made)
      return (Int(used), Int(made))
    }
  }

  // MARK: Rubber Band, real-time mode (the stretch mode's stretcher)

  /// Sets the time ratio and pitch scale.
  @_noLocks @inline(__always)
  static func setRatios(_ rb: OpaquePointer, time: Double, pitch: Double) {
    // RT-WAIVER: in real-time mode Rubber Band's ratio setters are realtime-safe (its docs: the
    // lock-free streaming mode lets the time and pitch ratios change during use).
    _unsafePerformance {
      rubberband_set_time_ratio(rb, time)
      rubberband_set_pitch_scale(rb, pitch)
    }
  }

  /// `rubberband_reset`, then the preferred start pad (frames of silence to feed first).
  @_noLocks @inline(__always)
  static func resetForStartPad(_ rb: OpaquePointer) -> Int {
    // RT-WAIVER: rubberband_reset clears the stretcher's buffers (no allocation in real-time mode);
    // the start pad of silence and the start delay follow Rubber Band 3's recipe for aligned output.
    _unsafePerformance { () -> Int in
      rubberband_reset(rb)
      return Int(rubberband_get_preferred_start_pad(rb))
    }
  }

  /// `rubberband_process`: feeds `frames` frames (`final`: the last block of the input).
  @_noLocks @inline(__always)
  static func process(_ rb: OpaquePointer, _ inputs: UnsafePointer<UnsafePointer<Float>?>, frames: Int, final: Bool) {
    // RT-WAIVER: rubberband_process in real-time mode is lock-free and does not allocate while its
    // input buffer has room (each call feeds at most the stretcher's max process size).
    _unsafePerformance { rubberband_process(rb, inputs, UInt32(frames), final ? 1 : 0) }
  }

  /// `rubberband_get_start_delay`.
  @_noLocks @inline(__always)
  static func startDelay(_ rb: OpaquePointer) -> Int {
    // RT-WAIVER: a getter.
    _unsafePerformance { Int(rubberband_get_start_delay(rb)) }
  }

  /// `rubberband_available`: frames ready to retrieve (-1 once finished and emptied).
  @_noLocks @inline(__always)
  static func available(_ rb: OpaquePointer) -> Int {
    // RT-WAIVER: a getter.
    _unsafePerformance { Int(rubberband_available(rb)) }
  }

  /// `rubberband_retrieve`: copies out up to `frames` processed frames; returns how many.
  @_noLocks @inline(__always)
  static func retrieve(_ rb: OpaquePointer, _ outputs: UnsafePointer<UnsafeMutablePointer<Float>?>, frames: Int) -> Int {
    // RT-WAIVER: rubberband_retrieve copies out processed frames (lock-free, no allocation).
    _unsafePerformance { Int(rubberband_retrieve(rb, outputs, UInt32(frames))) }
  }

  // MARK: LV2 plugins (Inserts.swift)

  /// An LV2 plugin's `run(instance, sample_count)`, through the pointer its descriptor gave.
  @_noLocks @inline(__always)
  static func run(_ run: InsertRunFunction, _ handle: UnsafeMutableRawPointer?, frames: Int) {
    // RT-WAIVER: run() is in LV2's audio threading class; live, stemdeck inserts only plugins
    // that declare lv2:hardRTCapable (no allocation, lock or syscall in run) unless the user
    // forced one in and was told why that is a risk (docs/architecture.md, *Plugin inserts*).
    _unsafePerformance { run(handle, UInt32(truncatingIfNeeded: frames)) }
  }

  /// A plugin's LV2 worker `work_response`, after its `run`.
  @_noLocks @inline(__always)
  static func workResponse(
    _ f: InsertWorkResponseFunction, _ handle: UnsafeMutableRawPointer?, size: Int, data: UnsafeRawPointer
  ) {
    // RT-WAIVER: the LV2 worker spec puts work_response in the audio threading class (called
    // in the same context as run): the same contract as `run` above.
    _ = _unsafePerformance { f(handle, UInt32(truncatingIfNeeded: size), data) }
  }

  /// A plugin's LV2 worker `end_run`, after its responses.
  @_noLocks @inline(__always)
  static func endRun(_ f: InsertEndRunFunction, _ handle: UnsafeMutableRawPointer?) {
    // RT-WAIVER: end_run is in the audio threading class like run (LV2 worker spec).
    _ = _unsafePerformance { f(handle) }
  }

  /// A plugin's LV2 worker `work`, run at once by `insertScheduleWork` for a synchronous
  /// (offline) mixer's plugin.
  @_noLocks @inline(__always)
  static func work(
    _ f: InsertWorkFunction, _ handle: UnsafeMutableRawPointer?, respondHandle: UnsafeMutableRawPointer, size: UInt32,
    data: UnsafeRawPointer
  ) -> UInt32 {
    // RT-WAIVER: not realtime safe, and never called live: only a plumbing made `synchronous`
    // (a mixer whose renderer is driven by the offline renderer or a test, no audio thread)
    // runs work here; a live mixer's plumbing queues the request for the worker thread.
    _unsafePerformance { f(handle, insertRespond, respondHandle, size, data) }
  }
}
