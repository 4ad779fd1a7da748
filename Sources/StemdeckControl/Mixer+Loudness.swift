import StemdeckEngine

/// The master's live loudness (issue 23): the renderer copies the master into its tap ring
/// (StemdeckEngine's LoudnessTap.swift) once the meter is started; `pump` drains it into
/// libebur128 here, on the control thread. Costs nothing until started.
extension Mixer {
  /// Starts measuring the master's loudness live (idempotent). Live sessions start it; offline
  /// renders never do (they measure their own output).
  public func startLoudnessMeter() throws(MixerError) {
    try lock.locked { () throws(MixerError) in
      guard liveLoudness == nil else { return }
      let tap = renderState.pointee.status.pointee.loudnessTap
      // What the tap held from an earlier start is stale: drop it before measuring.
      let stale = rings.loudnessTap.availableCount()
      rings.loudnessTap.release(count: stale - stale % 2)
      liveLoudness = try LiveLoudnessMeter(
        sampleRate: Int(sampleRate.rounded()),
        droppedSoFar: tap.pointee.droppedFrames.load(ordering: .relaxed))
      tap.pointee.enabled.store(true, ordering: .relaxed)
    }
  }

  /// Stops the live loudness meter (the tap is switched off; the figures are gone).
  public func stopLoudnessMeter() {
    lock.locked {
      renderState.pointee.status.pointee.loudnessTap.pointee.enabled.store(false, ordering: .relaxed)
      liveLoudness = nil
    }
  }

  /// The master's loudness since the last `meters reset`, or nil when it is not measured.
  /// Drains the tap first, so the figures are as fresh as the last rendered period.
  public func masterLoudness() -> LiveLoudness? {
    lock.locked {
      drainLoudnessLocked()
      return liveLoudness?.reading(droppedSoFar: droppedTapFrames)
    }
  }

  var droppedTapFrames: Int {
    renderState.pointee.status.pointee.loudnessTap.pointee.droppedFrames.load(ordering: .relaxed)
  }

  /// Feeds what the tap holds to the meter (under the lock; from `pump`).
  func drainLoudnessLocked() {
    guard let live = liveLoudness else { return }
    let segments = rings.loudnessTap.readableSegments()
    var taken = 0
    for part in [segments.first, segments.second] {
      let frames = part.count / 2
      guard frames > 0, let base = part.baseAddress else { continue }
      // libebur128 fails only on allocation; the frames are then simply not measured.
      try? live.meter.add(base, frames: frames)
      live.frames += frames
      taken += frames * 2
    }
    if taken > 0 { rings.loudnessTap.release(count: taken) }
  }

  func resetLoudnessLocked() {
    guard let live = liveLoudness else { return }
    drainLoudnessLocked()
    live.reset(droppedSoFar: droppedTapFrames)
  }
}
