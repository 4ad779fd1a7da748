import Synchronization

/// The state of one stem that more than one thread touches, all of it atomic. Allocated by the
/// control thread (`UnsafeMutablePointer<StemShared>`), freed by it after the voice is retired
/// and the disk thread has dropped the stream.
///
/// The seek protocol (counters are ring sample counters, monotonically increasing):
/// 1. control: writes `requestedFrame`, then `requestedEpoch` (releasing);
///    and sends `.seek(frame:epoch:)` to the renderer.
/// 2. disk: sees a new requested epoch; notes its current write counter as `boundary`, writes
///    `epochStartFrame`, then publishes `publishedEpoch` (releasing); everything it writes after
///    the boundary is the new stream.
/// 3. realtime: once `publishedEpoch` equals the epoch it waits for, discards up to `boundary`
///    and plays on from there. No thread ever waits for another.
public struct StemShared: ~Copyable, @unchecked Sendable {
  // control → disk
  public let requestedEpoch = Atomic<Int>(0)
  public let requestedFrame = Atomic<Int>(0)
  /// A quantised jump's cut (Renderer/Jump.swift): the requested epoch's stream starts only once
  /// the stream being written has reached this frame (-1: at once, a seek). Stored before
  /// `requestedEpoch`, like `requestedFrame`.
  public let requestedCut = Atomic<Int>(-1)
  /// Loop count with AVAudioPlayer's meaning (0 once, N → N+1 plays, -1 forever).
  public let loops: Atomic<Int>
  /// Loop region in file frames (regionStart < 0: the whole file), the equal-power crossfade at
  /// its seam in frames, and a version the control thread bumps after changing them.
  public let regionStart = Atomic<Int>(-1)
  public let regionEnd = Atomic<Int>(0)
  public let crossfadeFrames = Atomic<Int>(0)
  public let regionVersion = Atomic<Int>(0)
  /// Set by the control thread when the stem is being removed: the disk thread stops reading.
  public let closing = Atomic<Bool>(false)

  // disk → realtime
  public let publishedEpoch = Atomic<Int>(-1)
  public let boundary = Atomic<Int>(0)
  /// Source frame (within the looped stream) at `boundary`.
  public let epochStartFrame = Atomic<Int>(0)
  /// When `endEpoch` equals the current epoch, the stream ends at write counter `endCounter`.
  public let endEpoch = Atomic<Int>(-1)
  public let endCounter = Atomic<Int>(0)
  /// Set when the file can no longer be read (deleted, truncated, garbage); the stem goes silent.
  public let readFailed = Atomic<Bool>(false)
  /// Set by the disk reader when the file held NaN or infinite samples (they were replaced by
  /// silence); the control thread mutes the stem and reports it.
  public let badSamples = Atomic<Bool>(false)

  // realtime → control
  /// Separately allocated so the renderer can hold a plain pointer to it.
  public let meters: UnsafeMutablePointer<MeterCells> = MeterCells.allocate()
  public let underruns = Atomic<Int>(0)
  public let finished = Atomic<Bool>(false)
  /// The voice's read counter (samples), for position display.
  public let readCounter = Atomic<Int>(0)
  /// Which glides run and where they have got to (`GlideCells.reading()`). Separately
  /// allocated, as `meters`.
  public let glides: UnsafeMutablePointer<GlideCells> = GlideCells.allocate()
  /// `epochStartFrame` as it was when the voice reached its epoch's boundary: where the heard
  /// position counts from (the disk may publish a jump's epoch before the voice gets there).
  public let heardStartFrame = Atomic<Int>(0)
  /// True once the voice has reached the current epoch's boundary.
  public let synced = Atomic<Bool>(false)
  /// Where the stem is in its source as heard at the output, not as read from the ring (a
  /// converter or stretcher reads ahead of what it has output): source frames heard since the
  /// boundary (a Double bit pattern), and the transport frame at which that point sounds.
  /// Written by the renderer as a pair under `heardSequence` (odd while writing); read with
  /// `heardPosition()`.
  public let heardSequence = Atomic<Int>(0)
  public let heardSourceFrames = Atomic<UInt64>(0)
  public let heardTransportFrame = Atomic<Int>(0)

  deinit {
    meters.deinitialize(count: 1)
    meters.deallocate()
    glides.deinitialize(count: 1)
    glides.deallocate()
  }

  /// Publishes the heard position (renderer only).
  @_noLocks
  public func publishHeard(sourceFrames: Double, transportFrame: Int) {
    let sequence = heardSequence.load(ordering: .relaxed)
    heardSequence.store(sequence &+ 1, ordering: .relaxed)
    // Releasing stores: a reader that acquires a new value also sees the odd sequence before it
    // (and so retries), without a fence.
    heardSourceFrames.store(sourceFrames.bitPattern, ordering: .releasing)
    heardTransportFrame.store(transportFrame, ordering: .releasing)
    heardSequence.store(sequence &+ 2, ordering: .releasing)
  }

  /// The last heard position the renderer published, read consistently (control thread).
  public func heardPosition() -> (sourceFrames: Double, transportFrame: Int) {
    while true {
      let before = heardSequence.load(ordering: .acquiring)
      let frames = heardSourceFrames.load(ordering: .acquiring)
      let transport = heardTransportFrame.load(ordering: .acquiring)
      if before & 1 == 0 && heardSequence.load(ordering: .acquiring) == before {
        return (Double(bitPattern: frames), transport)
      }
    }
  }

  public init(loops: Int) {
    self.loops = Atomic(loops)
  }
}

/// A `Sendable` wrapper for a pointer to shared stem state, for handing between threads.
public struct StemSharedRef: @unchecked Sendable {
  public let pointer: UnsafeMutablePointer<StemShared>
  public init(_ pointer: UnsafeMutablePointer<StemShared>) { self.pointer = pointer }
}
