/// The parts of `RenderState` (BlockRenderer.swift), one per concern, each used by the file
/// named beside it. Plain values and preallocated buffers: the realtime rules hold
/// (docs/architecture.md, *The realtime contract*).

/// The transport: its frame, whether it plays, holds for the disk after a start or seek, or
/// waits for the fade-out before a seek or pause (BlockRenderer.swift `renderPass`,
/// CommandHandling.swift).
public struct RenderTransport {
  /// The transport's position, in engine frames.
  @usableFromInline var frame = 0
  @usableFromInline var playing = false
  /// Waiting for every voice to have audio after a seek or start.
  @usableFromInline var holding = false
  @usableFromInline var playAfterHold = false
  @usableFromInline var holdFramesLeft = 0
  /// A seek requested while playing waits for the fade-out.
  @usableFromInline var pendingSeekFrame = -1
  @usableFromInline var pendingSeekEpoch = 0
  @usableFromInline var pendingPause = false
  /// A quantised jump waiting for its frame (-1: none), where it goes and its epoch (Jump.swift).
  @usableFromInline var pendingJumpFrame = -1
  @usableFromInline var pendingJumpTarget = 0
  @usableFromInline var pendingJumpEpoch = 0
  /// The transport fade: 5 ms in on a start away from 0, out before a seek or pause.
  @usableFromInline var fade: GainRamp
  /// Frames a voice must have buffered before a held transport starts.
  @usableFromInline let primeFrames: Int

  init(fade: GainRamp, primeFrames: Int) {
    self.fade = fade
    self.primeFrames = primeFrames
  }
}

/// Commands waiting for a transport frame: grouped changes (`begin … commit at POS`) and the
/// group being received (CommandHandling.swift).
public struct RenderSchedule {
  /// Scheduled commands at most; a command beyond it is applied at once rather than lost.
  @usableFromInline let capacity = 1024
  @usableFromInline let entries: UnsafeMutablePointer<ScheduledCommand>
  @usableFromInline var count = 0
  /// While a group is being received: the frame its commands wait for (Int.min: none).
  @usableFromInline var groupFrame = Int.min
  @usableFromInline var collecting = false
  /// While a group is being received: where its commands start in `entries` (`abortGroup`).
  @usableFromInline var groupStart = 0

  /// Allocates the entries (freed by `RenderState.destroy`).
  init() { entries = .allocate(capacity: capacity) }
}

extension RenderState {
  /// How many grouped commands may wait for their frame at once (the control side refuses a
  /// group that would not fit: `Mixer.send`).
  public var scheduleLimit: Int { schedule.capacity }
}

/// A song change waiting for its voices to be primed, and the old song's voices detached from
/// the transport during a crossfade (SongChange.swift).
public struct RenderSongChange {
  @usableFromInline var pending = false
  @usableFromInline var song = 0
  @usableFromInline var frame = 0
  @usableFromInline var epoch = 0
  @usableFromInline var fadeFrames = 0
  @usableFromInline var waitLeft = 0
  /// Old songs' voices after a crossfade switch, mixed after the transport fade.
  @usableFromInline let detachedLeft: UnsafeMutablePointer<Float>
  @usableFromInline let detachedRight: UnsafeMutablePointer<Float>
  @usableFromInline var detachedCount = 0
  /// The detached voices' clock: advances with every pass, whatever the transport does.
  @usableFromInline var detachedClock = 0

  init(detachedLeft: UnsafeMutablePointer<Float>, detachedRight: UnsafeMutablePointer<Float>) {
    self.detachedLeft = detachedLeft
    self.detachedRight = detachedRight
  }
}

/// The take recorded from the input ports and the input meter (Recording.swift).
public struct RenderRecording {
  @usableFromInline var take: UnsafeMutablePointer<RecordTake>?
  @usableFromInline var paused = false
  @usableFromInline var inputMeter: MeterAccumulator

  init(inputMeter: MeterAccumulator) { self.inputMeter = inputMeter }
}
