import StemdeckEngine
import StemdeckSession
import StemdeckText

// Marks and quantised jumps (issue 42, item 2), on the control side: the song's named positions
// (saved as the session's "marks") and `goto NAME now|bar|end`, which picks the frame the jump
// lands on and asks every stem's disk stream for the target after a cut in the stream playing
// now. The renderer's side and the protocol: StemdeckEngine's Renderer/Jump.swift;
// docs/architecture.md, *Marks and quantised jumps*.

/// Where a `goto` lands.
public enum JumpLanding: String, CaseIterable, Sendable {
  /// At once: a seek (a 5 ms fade, then the stems resume together when they have audio).
  case now
  /// On the next bar line of the session's tempo, at least `Mixer.Marks.jumpLead` ahead.
  case bar
  /// At the end of the current pass of the looping stems (the earliest seam), or the song's end.
  case end
}

/// A jump sent to the renderer and not yet performed.
public struct WaitingJump: Equatable, Sendable {
  /// The mark it goes to.
  public var mark: String
  /// Transport seconds it lands on, and where the transport goes on from.
  public var atSeconds: Double
  public var toSeconds: Double
}

/// The control thread's record of the last quantised jump sent.
struct PendingJump {
  var epoch: Int
  var frame: Int
  var target: Int
  var mark: String
  /// Each stem's cut (by slot): a jump replaced on the same frame keeps them.
  var cuts: [Int32: Int]
}

extension Mixer {
  /// Source frames of the old stream kept past a stem's position on the jump's frame, so a
  /// converter or stretcher reading ahead never reads the target early (dropped at the jump).
  static let jumpCutMargin = 8192

  func findMark(_ rawName: String) throws(MixerError) -> Mark {
    if let mark = markList.first(where: { $0.name == rawName }) { return mark }
    throw MixerError.unknown(.mark, rawName, known: markList.map(\.name))
  }

  func waitingJumpLocked() -> WaitingJump? {
    guard let jump = transportTracking.jump, jump.epoch == transportTracking.epoch,
      renderState.pointee.status.pointee.appliedEpoch.load(ordering: .relaxed) != jump.epoch
    else { return nil }
    return WaitingJump(mark: jump.mark, atSeconds: Double(jump.frame) / sampleRate, toSeconds: Double(jump.target) / sampleRate)
  }

  /// Refuses what would break a waiting jump (a stem added now would not follow it).
  func checkNoJumpWaiting(_ what: String) throws(MixerError) {
    guard let jump = waitingJumpLocked() else { return }
    throw MixerError(
      "\(what): a jump to '\(jump.mark)' waits for \(NumberFormat.time(jump.atSeconds)); try again after it, or jump at once ('goto \(jump.mark) now')"
    )
  }

  /// The first frame at or after `earliest` that `landing` names: a bar line of the tempo, or
  /// the looping stems' earliest seam (the song's end when none loops).
  func landingFrame(_ landing: JumpLanding, atOrAfter earliest: Int) throws(MixerError) -> Int {
    let leadText = "\(NumberFormat.plain(Mixer.Marks.jumpLead)) s"
    if landing == .bar {
      guard let tempo = tempoSetting else {
        throw MixerError(
          "goto … bar lands on a bar line of the tempo, and there is none: set one ('tempo BPM [BEATS_PER_BAR]') or jump at once ('goto NAME now')"
        )
      }
      let perBar = 60 * sampleRate / tempo.bpm * Double(tempo.beatsPerBar)
      let click = Self.clickParameters(clickSetting, tempo: tempo, sampleRate: sampleRate)
      // The click's own rounding: bar k's line is beat k × beatsPerBar's onset.
      var bar = max(0, Int(Double(earliest) / perBar) - 1)
      while click.onset(ofBeat: bar * tempo.beatsPerBar) < earliest { bar += 1 }
      return click.onset(ofBeat: bar * tempo.beatsPerBar)
    }
    var best: Int?
    for stem in table.stems where stem.settings.loops != 0 {
      let perFrame = Double(stem.info.sampleRate) * stem.settings.rate / sampleRate
      let pass = Double(stem.loopFrames) / perFrame
      var seam = nextLoopSeamLocked(stem)
      var frame = Int((seam * sampleRate).rounded())
      while frame < earliest && pass >= 1 {
        seam += pass / sampleRate
        frame = Int((seam * sampleRate).rounded())
      }
      if best == nil || frame < best! { best = frame }
    }
    if let best { return best }
    guard let end = table.stems.compactMap(\.duration).max() else {
      throw MixerError("goto … end lands at the song's end, and there are no stems")
    }
    let frame = Int((end * sampleRate).rounded())
    guard frame >= earliest else {
      throw MixerError("goto … end: the song ends in less than \(leadText) (at \(NumberFormat.time(end))); jump at once ('goto NAME now')")
    }
    return frame
  }

  /// The stem's frame in its disk stream (loops counted) as heard on transport frame `f`,
  /// carried on at its rate from where the renderer last heard it (as `stems.nextLoopSeam`).
  func streamFrame(of stem: Stem, atTransportFrame f: Int, now: Int) -> Int {
    let s = stem.shared.pointer
    let synced = s.pointee.synced.load(ordering: .relaxed)
    let perTransportFrame = Double(stem.info.sampleRate) * stem.settings.rate / sampleRate
    if !synced {
      let join = max(now, Int(stem.settings.startOffset * sampleRate))
      return s.pointee.epochStartFrame.load(ordering: .relaxed) + Int(Double(max(0, f - join)) * perTransportFrame)
    }
    let heard = s.pointee.heardPosition()
    let source = Double(s.pointee.heardStartFrame.load(ordering: .relaxed)) + heard.sourceFrames
    return Int(source + Double(max(0, f - heard.transportFrame)) * perTransportFrame)
  }
}

extension Mixer.Marks {
  /// The least time between a `goto … bar|end` and the frame it lands on: the disk has that long
  /// to put the target's audio behind the stream playing now (a bar line closer than this is
  /// skipped for the next).
  public static let jumpLead = 0.25

  /// The song's marks, in the order they were added.
  public var all: [Mark] { mixer.lock.locked { mixer.markList } }

  /// Adds mark `name` at transport `seconds`. Refused: a bad or taken name, a time outside
  /// `SettingRule.position`, or past the end of the song (when no stem loops forever).
  public func add(_ name: String, at seconds: Double) throws(MixerError) {
    if let problem = SettingRule.markProblem(name) { throw MixerError(ControlText(problem)) }
    try MixerError.check(seconds, .position, "mark position")
    try mixer.lock.locked { () throws(MixerError) in
      if let taken = mixer.markList.first(where: { $0.name == name }) {
        throw MixerError(
          "there is already a mark '\(name)' (at \(NumberFormat.time(taken.at))): remove it first ('mark remove \(name)') or choose another name"
        )
      }
      let endless = mixer.table.stems.contains { $0.settings.loops < 0 }
      if !endless, let end = mixer.table.stems.compactMap(\.duration).max(), seconds > end + 1e-9 {
        throw MixerError("mark '\(name)' at \(NumberFormat.time(seconds)) is past the end of the song (\(NumberFormat.time(end)))")
      }
      mixer.markList.append(Mark(name: name, at: seconds))
      mixer.isDirty = true
    }
  }

  /// Removes mark `name` (unknown: refused, with the closest name).
  public func remove(_ name: String) throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      let mark = try mixer.findMark(name)
      mixer.markList.removeAll { $0.name == mark.name }
      mixer.isDirty = true
    }
  }

  /// The jump still waiting for its frame, if any.
  public var waitingJump: WaitingJump? { mixer.lock.locked { mixer.waitingJumpLocked() } }

  /// Goes to mark `name`: at once (`now`, or whenever the transport is not playing: a seek), or
  /// on the frame `landing` picks, frame-exactly (Renderer/Jump.swift). Returns the jump (nil:
  /// it was a seek, done now). A second jump before the first lands replaces it only on the same
  /// frame; one elsewhere is refused.
  @discardableResult
  public func goto(mark name: String, landing: JumpLanding) throws(MixerError) -> WaitingJump? {
    try mixer.lock.locked { () throws(MixerError) -> WaitingJump? in
      let mark = try mixer.findMark(name)
      let target = Int((mark.at * mixer.sampleRate).rounded())
      let status = mixer.renderState.pointee.status
      let playing = status.pointee.transportState.load(ordering: .relaxed) == TransportState.playing.rawValue
      let seekPending =
        status.pointee.appliedEpoch.load(ordering: .relaxed) != mixer.transportTracking.epoch
        && mixer.transportTracking.jump?.epoch != mixer.transportTracking.epoch
      if landing == .now || !playing || seekPending {
        try mixer.locate(toFrame: target)
        return nil
      }
      if status.pointee.songChanges.load(ordering: .relaxed) < mixer.transportTracking.songChangesSent {
        throw MixerError("goto: the song is changing; jump once the next song plays")
      }
      let now = status.pointee.transportFrame.load(ordering: .relaxed)
      let earliest = now + Int((Self.jumpLead * mixer.sampleRate).rounded())
      let frame = try mixer.landingFrame(landing, atOrAfter: earliest)
      var cuts: [Int32: Int] = [:]
      if let waiting = mixer.waitingJumpLocked(), let pending = mixer.transportTracking.jump {
        guard pending.frame == frame else {
          throw MixerError(
            "goto: a jump to '\(waiting.mark)' already waits for \(NumberFormat.time(waiting.atSeconds)); another can replace it only on that frame (this one lands at \(NumberFormat.time(Double(frame) / mixer.sampleRate))), or jump at once ('goto \(name) now')"
          )
        }
        cuts = pending.cuts  // the old stream is still the one cut there
      }
      mixer.transportTracking.endReported = false
      mixer.transportTracking.epoch += 1
      for stem in mixer.table.stems {
        let cut = cuts[stem.slot] ?? (max(0, mixer.streamFrame(of: stem, atTransportFrame: frame, now: now)) + Mixer.jumpCutMargin)
        cuts[stem.slot] = cut
        let place = mixer.placement(for: stem, atTransportFrame: target)
        let shared = stem.shared.pointer
        shared.pointee.requestedFrame.store(place.sourceFrame, ordering: .relaxed)
        shared.pointee.requestedCut.store(cut, ordering: .relaxed)
        shared.pointee.requestedEpoch.store(mixer.transportTracking.epoch, ordering: .releasing)
        if place.joinFrame != target { try mixer.send(.setJoinFrameAfterSeek(slot: stem.slot, frame: place.joinFrame)) }
      }
      mixer.transportTracking.jump = PendingJump(
        epoch: mixer.transportTracking.epoch, frame: frame, target: target, mark: mark.name, cuts: cuts)
      mixer.transportTracking.seekTarget = target
      try mixer.send(.jump(atFrame: frame, toFrame: target, epoch: mixer.transportTracking.epoch))
      return WaitingJump(mark: mark.name, atSeconds: Double(frame) / mixer.sampleRate, toSeconds: mark.at)
    }
  }
}
