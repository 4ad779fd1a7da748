import CSampleRate
import Foundation
import StemdeckAudioFile
import StemdeckEngine
import StemdeckSession
import StemdeckText
import Synchronization

/// The transport as the control side drives it: play, stop, seek, position and the song's end.
extension Mixer {

  func locate(toFrame frame: Int) throws(MixerError) {
    transportTracking.endReported = false
    // A jump still waiting is cancelled (the renderer drops it on this seek): its stems' join
    // frames are sent again, whatever they are, so none of the jump's is left for this seek.
    let jumpWaiting = waitingJumpLocked() != nil
    transportTracking.jump = nil
    transportTracking.epoch += 1
    transportTracking.seekTarget = frame
    for stem in table.stems {
      let place = placement(for: stem, atTransportFrame: frame)
      let shared = stem.shared.pointer
      shared.pointee.requestedFrame.store(place.sourceFrame, ordering: .relaxed)
      shared.pointee.requestedCut.store(-1, ordering: .relaxed)
      shared.pointee.requestedEpoch.store(transportTracking.epoch, ordering: .releasing)
      if place.joinFrame != frame || jumpWaiting {
        try send(.setJoinFrameAfterSeek(slot: stem.slot, frame: place.joinFrame))
      }
    }
    try send(.seek(frame: frame, epoch: transportTracking.epoch))
  }

  /// The transport position the control thread should assume: a seek not yet applied by the
  /// renderer counts as done.
  func currentTransportFrame() -> Int {
    let status = renderState.pointee.status
    // A jump waiting for its frame (Mixer+Marks.swift) has not moved the transport yet.
    if status.pointee.appliedEpoch.load(ordering: .relaxed) != transportTracking.epoch
      && transportTracking.jump?.epoch != transportTracking.epoch
    {
      return transportTracking.seekTarget
    }
    return status.pointee.transportFrame.load(ordering: .relaxed)
  }

  /// Where a stem added now joins: the current position when paused, a little ahead when playing.
  func joinTransportFrame() -> Int {
    let frame = currentTransportFrame()
    let state = renderState.pointee.status.pointee.transportState.load(ordering: .relaxed)
    return state == TransportState.paused.rawValue ? frame : frame + Int(Self.joinMargin * sampleRate)
  }

  /// The source frame (in the looped stream) and the transport frame where a stem should be at
  /// transport frame `t`, accounting for its start offset and rate.
  func placement(for stem: Stem, atTransportFrame t: Int) -> (sourceFrame: Int, joinFrame: Int) {
    let start = Int((stem.settings.startOffset * sampleRate).rounded())
    if t <= start { return (0, start) }
    let source = Double(t - start) * Double(stem.info.sampleRate) * stem.settings.rate / sampleRate
    return (Int(source.rounded()), t)
  }

}

struct TransportTracking {
  /// Bumped by every seek and song change; voices and the renderer follow the newest.
  var epoch = 0
  /// Where the last seek lands (what `position` says until the renderer has applied it).
  var seekTarget = 0
  /// Setlist song changes sent to the renderer (compare with `EngineStatus.songChanges`).
  var songChangesSent = 0
  /// Set once the end of the song has been reported; cleared by seeks.
  var endReported = false
  /// How many times the end of a song has been reported (`MixerEvent.allFinished`).
  var songEnds = 0
  /// The last quantised jump sent (Mixer+Marks.swift); waiting while the renderer has not
  /// applied its epoch.
  var jump: PendingJump?
}

extension Mixer.Transport {
  public func play() throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      let seekPending = mixer.renderState.pointee.status.pointee.appliedEpoch.load(ordering: .relaxed) != mixer.transportTracking.epoch
      if mixer.transportTracking.endReported
        || (!seekPending && !mixer.table.stems.isEmpty && !mixer.table.stems.contains { $0.settings.loops < 0 }
          && mixer.allFiniteStemsFinishedLocked())
      {
        try mixer.locate(toFrame: 0)  // played to the end: start again from the top
      }
      try mixer.syncClick()
      try mixer.send(.play(fadeIn: mixer.currentTransportFrame() > 0))
    }
  }

  public func pause() throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in try mixer.send(.pause) }
  }

  /// Stops and rewinds to 0.
  public func stop() throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      try mixer.send(.pause)
      try mixer.locate(toFrame: 0)
    }
  }

  /// Moves the transport to `seconds` (clamped at 0). Every stem keeps its own loop phase.
  public func seek(toSeconds seconds: Double) throws(MixerError) {
    // Below 0 is clamped (a relative seek past the start), not refused.
    guard seconds.isFinite, seconds <= SettingRule.position.range.upperBound else {
      throw MixerError.outOfRange("seek position", .position, got: seconds)
    }
    try mixer.lock.locked { () throws(MixerError) in
      try mixer.locate(toFrame: Int((max(0, seconds) * mixer.sampleRate).rounded()))
    }
  }

  public var state: TransportState {
    TransportState(rawValue: mixer.renderState.pointee.status.pointee.transportState.load(ordering: .relaxed)) ?? .paused
  }

  /// Transport position in seconds.
  public var position: Double { mixer.lock.locked { Double(mixer.currentTransportFrame()) / mixer.sampleRate } }

  /// Length of the longest finite stem (all loops, at its rate, after its start offset), or nil
  /// when there are no stems. Stems looping forever are left out; `transport.hasEndlessStems` says so.
  public var duration: Double? {
    mixer.lock.locked {
      let finite = mixer.table.stems.compactMap { $0.duration }
      return finite.max()
    }
  }

  public var hasEndlessStems: Bool { mixer.lock.locked { mixer.table.stems.contains { $0.settings.loops < 0 } } }

  /// True when every stem that can finish has finished (and there is at least one such stem).
  /// Counts the ends of songs reported by `pump` (the transport stopped there); the console's
  /// setlist auto-advance and `wait end` watch it change.
  public var songEnds: Int { mixer.lock.locked { mixer.transportTracking.songEnds } }

  /// Whether the song has played to its end (reported, and not moved since).
  public var songHasEnded: Bool { mixer.lock.locked { mixer.transportTracking.endReported } }

  public var allFiniteStemsFinished: Bool {
    mixer.lock.locked { mixer.allFiniteStemsFinishedLocked() }
  }
}
