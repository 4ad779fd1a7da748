import StemdeckEngine
import StemdeckText

/// The master's live loudness (issue 23): the renderer copies the master into its tap ring
/// (StemdeckEngine's LoudnessTap.swift) once the meter is started; `pump` hands what it holds to
/// the meter's own thread (LoudnessWorker.swift), which owns libebur128. Costs nothing until
/// started.
extension Mixer {

  var droppedTapFrames: Int {
    renderState.pointee.status.pointee.loudnessTap.pointee.droppedFrames.load(ordering: .relaxed)
  }

  /// Hands what the tap holds to the meter thread (under the lock; from `pump`). The renderer
  /// only ever commits whole frames, so the segments hold whole frames.
  func drainLoudnessLocked() {
    guard let live = liveLoudness else { return }
    let segments = rings.loudnessTap.readableSegments()
    guard segments.count > 0 else { return }
    live.worker.add(segments, droppedSoFar: droppedTapFrames)
    rings.loudnessTap.release(count: segments.count)
  }

  /// Restarts the integration: what the tap holds from before is dropped, not measured.
  func resetLoudnessLocked() {
    guard let live = liveLoudness else { return }
    let stale = rings.loudnessTap.availableCount()
    rings.loudnessTap.release(count: stale - stale % 2)
    live.worker.reset(droppedSoFar: droppedTapFrames)
  }
}

extension Mixer.MasterLoudness {
  /// Starts measuring the master's loudness live (idempotent). Live sessions start it; offline
  /// renders never do (they measure their own output).
  public func start() throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      guard mixer.liveLoudness == nil else { return }
      let tap = mixer.renderState.pointee.status.pointee.loudnessTap
      // What the tap held from an earlier start is stale: drop it before measuring.
      let stale = mixer.rings.loudnessTap.availableCount()
      mixer.rings.loudnessTap.release(count: stale - stale % 2)
      mixer.liveLoudness = try LiveLoudnessMeter(
        sampleRate: Int(mixer.sampleRate.rounded()),
        droppedSoFar: tap.pointee.droppedFrames.load(ordering: .relaxed))
      tap.pointee.enabled.store(true, ordering: .relaxed)
    }
  }

  /// Stops the live loudness meter (the tap is switched off; the figures are gone).
  public func stop() {
    mixer.lock.locked {
      mixer.renderState.pointee.status.pointee.loudnessTap.pointee.enabled.store(false, ordering: .relaxed)
      mixer.liveLoudness = nil
    }
  }

  /// The master's loudness since the last `meters reset`, or nil when it is not measured.
  /// Drains the tap first and waits for the meter thread to measure it, so the figures are as
  /// fresh as the last rendered period (`meters master`, the socket's meter stream).
  public func current() -> LiveLoudness? {
    let worker = mixer.lock.locked { () -> LoudnessWorker? in
      mixer.drainLoudnessLocked()
      return mixer.liveLoudness?.worker
    }
    return worker?.fresh()
  }

  /// The master's loudness as the meter thread last published it (at most about 300 ms old
  /// while it is read), or nil when it is not measured: for the mixer view, which reads it 30
  /// times a second and must not wait for libebur128. After `meters reset`, never the figures
  /// from before it.
  public func published() -> LiveLoudness? {
    mixer.lock.locked { mixer.liveLoudness?.worker }?.published
  }
}
