import StemdeckRing
import Synchronization

// The master's loudness tap (issue 23): the renderer copies each pass's master output,
// interleaved L/R, into a ring that the control thread drains into libebur128 (StemdeckControl's
// `LiveLoudness`). Nothing of EBU R 128 runs on the realtime thread; the copy is a few hundred
// floats a period. The tap is off until a control thread turns it on (offline renders never do,
// so they pay nothing). When the control thread falls behind and the ring is full, the pass is
// dropped whole and counted, never half-written (see docs/architecture.md, "Rings").

/// The tap's switch and its dropped-frame count, shared by the renderer and the control thread.
public struct LoudnessTapStatus: ~Copyable, @unchecked Sendable {
  /// Set by the control thread: copy the master into the tap ring.
  public let enabled = Atomic<Bool>(false)
  /// Frames the renderer could not copy (the ring was full): gaps in the measurement.
  public let droppedFrames = Atomic<Int>(0)
  public init() {}
}

/// Copies `n` frames of the master into the tap ring, interleaved, when the tap is on.
@_noLocks
@inline(__always)
func tapMaster(
  _ state: UnsafeMutablePointer<RenderState>,
  left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, frameCount n: Int
) {
  let tap = state.pointee.status.pointee.loudnessTap
  guard tap.pointee.enabled.load(ordering: .relaxed) else { return }
  let segments = state.pointee.loudnessTap.writableSegments()
  guard segments.count >= 2 &* n else {
    tap.pointee.droppedFrames.add(n, ordering: .relaxed)
    return
  }
  // The capacity is even and the ring only ever advances by whole frames (two samples), so a
  // frame never straddles the wrap.
  let first = segments.first.baseAddress!
  let firstFrames = Swift.min(n, segments.first.count / 2)
  for i in 0..<firstFrames {
    first[2 &* i] = left[i]
    first[2 &* i &+ 1] = right[i]
  }
  if firstFrames < n, let second = segments.second.baseAddress {
    for i in firstFrames..<n {
      let j = 2 &* (i &- firstFrames)
      second[j] = left[i]
      second[j &+ 1] = right[i]
    }
  }
  state.pointee.loudnessTap.commit(count: 2 &* n)
}
