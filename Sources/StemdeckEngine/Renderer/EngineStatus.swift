import Synchronization

/// What the renderer publishes about the transport and the master, read by the control thread.
/// Allocated by the control thread and shared by pointer; written only by the realtime thread.
public struct EngineStatus: ~Copyable, @unchecked Sendable {
  /// Transport position in engine frames.
  public let transportFrame = Atomic<Int>(0)
  /// 0 paused, 1 playing, 2 waiting for the disk after a seek or start.
  public let transportState = Atomic<Int>(0)
  /// The last seek epoch the renderer has applied.
  public let appliedEpoch = Atomic<Int>(0)
  /// Blocks rendered (a heartbeat for tests and the status line).
  public let blocksRendered = Atomic<Int>(0)
  /// The number of the last song change performed (they count from 1; a change superseded
  /// before it happened is skipped).
  public let songChanges = Atomic<Int>(0)
  /// Voices of old songs still fading out after a crossfade song change.
  public let detachedVoices = Atomic<Int>(0)
  /// Commands applied so far (latency measurement: compare with commands sent).
  public let commandsApplied = Atomic<Int>(0)
  /// The transport frame right after the block's commands were last applied — the target while
  /// a seek fades out — stored before `commandsApplied` grows (release ordering): the frame a
  /// transport command took effect at (where `play` starts, `pause` begins its fade, `seek` and
  /// `stop` land), for the control socket's replies (`mixer.engine.waitForApplication`).
  public let commandFrame = Atomic<Int>(0)
  /// Grouped commands that have left the schedule so far (applied on their frame, or at once
  /// because the schedule was full; not those of an aborted group, which the control side stops
  /// counting when it aborts): compared with the grouped commands sent, how full the schedule is.
  public let scheduleReleased = Atomic<Int>(0)
  /// Frames of count-in still to run before the stems start (0: none running; Click.swift).
  public let countInFramesLeft = Atomic<Int>(0)
  /// Separately allocated so the renderer can hold a plain pointer to it.
  public let masterMeters: UnsafeMutablePointer<MeterCells> = MeterCells.allocate()
  /// Meters of the input ports (recording).
  public let inputMeters: UnsafeMutablePointer<MeterCells> = MeterCells.allocate()
  /// Meters of the sound effects' sum, before the master gain (the mixer view's effects strip).
  public let effectsMeters: UnsafeMutablePointer<MeterCells> = MeterCells.allocate()
  /// The master's loudness tap: on/off and dropped frames (LoudnessTap.swift).
  public let loudnessTap: UnsafeMutablePointer<LoudnessTapStatus> = {
    let p = UnsafeMutablePointer<LoudnessTapStatus>.allocate(capacity: 1)
    p.initialize(to: LoudnessTapStatus())
    return p
  }()

  deinit {
    masterMeters.deinitialize(count: 1); masterMeters.deallocate()
    inputMeters.deinitialize(count: 1); inputMeters.deallocate()
    effectsMeters.deinitialize(count: 1); effectsMeters.deallocate()
    loudnessTap.deinitialize(count: 1); loudnessTap.deallocate()
  }

  public init() {}
}
