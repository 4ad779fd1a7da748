import Synchronization

/// A take being recorded: the renderer writes the input ports' frames (interleaved stereo) into
/// `ring`; a writer thread on the control side drains it to a file. The realtime thread never
/// touches a file.
///
/// - Thread: allocated by the control thread, handed to the renderer with
///   `EngineCommand.startRecording`, and freed by the control thread after the renderer reports
///   `recordingStopped`.
public struct RecordTake: ~Copyable, @unchecked Sendable {
  @usableFromInline var ring: Producer<Float>
  /// Transport frame of the take's first frame (`Int.min` until a frame is captured; negative
  /// when recording was armed before the transport rolled from near 0). Frames captured
  /// before the transport first rolls (recording armed before `play`) come before it: the take
  /// is anchored at the first frame captured while the transport rolls, so a take started
  /// either way lines up with the stems it was played against.
  public let startFrame = Atomic<Int>(Int.min)
  /// Renderer only: the start frame is anchored to a rolling transport.
  @usableFromInline var anchored = false
  /// Frames captured into the ring.
  public let captured = Atomic<Int>(0)
  /// Frames lost because the writer fell behind (the ring was full).
  public let dropped = Atomic<Int>(0)
  /// What is recorded: the input ports `in_L`/`in_R` (−1), or live input strip `index`'s signal
  /// after its EQ and before its fader and pan (InputStrips.swift `mixInputs`; a mono strip on
  /// both sides of the take). Set by the control thread before the take is handed over.
  public var inputStrip = -1

  public init(ring: consuming Producer<Float>) {
    self.ring = ring
  }
}

extension RenderState {
  /// Records (and meters) one pass of the input ports, if the driver supplied them. `rolling`:
  /// the transport advances over this pass (its first frame is `transport.frame`).
  @_noLocks
  mutating func captureInputs(frameCount n: Int, rolling: Bool) {
    guard let inL = inputLeft, let inR = inputRight else { return }
    let l = inL + passOffset
    let r = inR + passOffset
    recording.inputMeter.accumulate(left: l, right: r, count: n, into: status.pointee.inputMeters)
    guard let take = recording.take, take.pointee.inputStrip < 0 else { return }
    captureTake(left: l, right: r, frameCount: n, rolling: rolling)
  }

  /// Writes one pass of a take's source (`l`/`r`: `n` frames) into its ring, anchoring the take
  /// on the transport (see `RecordTake.startFrame`).
  @_noLocks
  mutating func captureTake(left l: UnsafeMutablePointer<Float>, right r: UnsafeMutablePointer<Float>, frameCount n: Int, rolling: Bool) {
    guard let take = recording.take, !recording.paused else { return }
    if !take.pointee.anchored {
      let before = take.pointee.captured.load(ordering: .relaxed) &+ take.pointee.dropped.load(ordering: .relaxed)
      if rolling {
        take.pointee.startFrame.store(transport.frame &- before, ordering: .relaxed)
        take.pointee.anchored = true
      } else if before == 0 {
        take.pointee.startFrame.store(transport.frame, ordering: .relaxed)
      }
    }
    let segments = take.pointee.ring.writableSegments()
    let fit = Swift.min(n, segments.count / 2)
    let firstFrames = Swift.min(fit, segments.first.count / 2)
    if let a = segments.first.baseAddress {
      for i in 0..<firstFrames {
        a[2 &* i] = l[i]
        a[2 &* i &+ 1] = r[i]
      }
    }
    if fit > firstFrames, let b = segments.second.baseAddress {
      for i in firstFrames..<fit {
        let k = i &- firstFrames
        b[2 &* k] = l[i]
        b[2 &* k &+ 1] = r[i]
      }
    }
    take.pointee.ring.commit(count: fit &* 2)
    take.pointee.captured.add(fit, ordering: .relaxed)
    if fit < n { take.pointee.dropped.add(n &- fit, ordering: .relaxed) }
  }
}
