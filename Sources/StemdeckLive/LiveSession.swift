import Foundation
import StemdeckControl
import StemdeckJack
import StemdeckSession

/// What one service step of a `LiveSession` reports, in order. A front end turns it into words
/// (`EventText.swift`) or acts on it (`songEnded`: a setlist advances).
public enum LiveEvent: Sendable, Equatable {
  /// An event of the mixer (a stem finished, an underrun, a take recorded…).
  case mixer(MixerEvent)
  /// An event of the JACK driver (server lost or back, xruns, transport followed, auto-pause…).
  case driver(DriverEvent)
  /// The current song has played to its end and the transport has stopped there (reported once
  /// per end, a period or two after `MixerEvent.allFinished`).
  case songEnded
}

/// The live session: the one owner of the control loop and of the session's state. It owns the
/// mixer (replaced by the one rebuilt here when the server comes back at another rate) and is the
/// JACK driver's host (`JackHost`, LiveSession+Host.swift: the driver runs the mixer's render
/// state and registers the ports it asks for, but owns none of it), the session file's path,
/// autosave, and the intended connections as last saved; its
/// `serviceOnce(_:)` step runs the driver's bookkeeping (`JackDriver.poll`: reconnects,
/// transport follow/lead, routing that heals), its own policies on what the driver reports
/// (auto-pause: `apply`; the engine rebuilt when the server comes back at another rate:
/// `followServerRate`),
/// notices connection changes, the end of a song, and writes the autosave when it is due.
///
/// Front ends (the REPL and the script runner through `Console`; a control socket or a mixer view
/// later) call `serviceOnce` between their own work, on the control thread only: it is not
/// thread-safe. It writes no words: what it reports is `LiveEvent`s.
public final class LiveSession {
  public let driver: JackDriver?
  /// Whether a session that saves no master connections gets the master connected on open
  /// (`masterRouting`); off with `--no-connect` or `connect = no`.
  public var autoConnect = false
  /// The mixer now: never keep it across `serviceOnce` (a rate change replaces it).
  public internal(set) var mixer: Mixer
  /// The session file saved to by default (absolute); nil for a session never saved.
  public internal(set) var path: String?
  /// Seconds between autosaves of unsaved changes (0 = off).
  public var autosaveInterval: Double = 30
  package var lastAutosave = Date()
  /// The intended connections when last looked at: a change (connect, disconnect, or another
  /// patchbay) is an unsaved change of the session.
  package var connectionsSeen: [String: [String]] = [:]
  /// The song's part (`Session.songLayer`) as opened or last saved: a setlist's `next` refuses
  /// only when that changed (`songLayerDirty`); routing, inputs, buses and sends are the rig's,
  /// carried to the next song, so a change of them never blocks the show (issue 35, item 5).
  package var savedSongLayer = Session().songLayer
  /// `mixer.transport.songEnds` when last looked at.
  package var songEndsSeen = 0
  /// When the current song ended, while `songEnded` waits for the renderer to stop.
  package var advanceDue: Date?
  /// Failed engine rebuilds (a server back at another rate) in a row, and the last one reported.
  package var rebuildFailures = 0
  package var lastRebuildFailure: DriverEvent?

  /// A session driving `mixer` live through `driver` (opened, not yet started): the driver is
  /// started with this session as its host.
  public init(driver: JackDriver, mixer: Mixer) throws(JackError) {
    self.driver = driver
    self.mixer = mixer
    mixer.engine.stallLimit = Self.liveStallTolerance
    try driver.start(self)
  }

  /// A live renderer's longest pause between JACK periods before a wait for it gives up: a
  /// server without realtime scheduling on a loaded machine can miss 50 ms (Mixer.swift,
  /// `engine.waitForApplication`); a server that stopped is still noticed within a quarter second.
  static let liveStallTolerance = 0.25

  /// A session driving a mixer without JACK (tests, offline use).
  public init(mixer: Mixer) {
    driver = nil
    self.mixer = mixer
  }

  // MARK: - The service step

  /// One step of the control loop; call every 10–50 ms. Reports the mixer's and the driver's
  /// events, then does the bookkeeping of `afterEvents(_:)`.
  public func serviceOnce(_ report: (LiveEvent) -> Void) {
    pollEvents(report)
    if let driver { followServerRate(driver, report) }
    afterEvents(report)
  }

  /// The mixer's events, then the driver's (its bookkeeping: reconnects, ports, routing).
  package func pollEvents(_ report: (LiveEvent) -> Void) {
    for event in mixer.pump() { report(.mixer(event)) }
    for event in driver?.poll() ?? [] { apply(event, report) }
  }

  /// The server came back at another sample rate: the engine is rebuilt at that rate
  /// (`Mixer.copy(atSampleRate:warnings:)`: the same stems, settings and transport position) and
  /// the driver resumes with it. A rebuild that fails has freed what it built; it is tried again
  /// later, less and less often (a rebuild opens every stem's file), and each distinct reason is
  /// reported once rather than at every attempt.
  package func followServerRate(_ driver: JackDriver, _ report: (LiveEvent) -> Void) {
    guard let newRate = driver.rateAwaitingEngine else { return }
    let oldRate = Int(mixer.sampleRate)
    do {
      var warnings: [ControlText] = []
      let replacement = try mixer.copy(atSampleRate: Double(newRate), warnings: &warnings)
      report(.driver(.sampleRateFollowed(newRate: newRate, oldRate: oldRate)))
      for warning in warnings { report(.driver(.rebuildWarning(warning.consoleWords))) }
      rebuildFailures = 0
      lastRebuildFailure = nil
      let old = mixer
      replacement.engine.stallLimit = Self.liveStallTolerance
      mixer = replacement
      old.shutdown()
      for event in driver.resume() { apply(event, report) }
    } catch {
      rebuildFailures += 1
      driver.retryLater(after: min(5, JackDriver.reconnectInterval * Double(1 << min(rebuildFailures, 5))))
      let failure = DriverEvent.rebuildFailed(newRate: newRate, reason: error.consoleWords)
      guard failure != lastRebuildFailure else { return }
      lastRebuildFailure = failure
      report(.driver(failure))
    }
  }

  /// Passes a driver event on, after the policies that act on it: auto-pause (the master lost
  /// its last connection while playing and `autoPauseOnDisconnect` is on).
  package func apply(_ event: DriverEvent, _ report: (LiveEvent) -> Void) {
    switch event {
    case .masterDisconnected:
      guard mixer.options.autoPauseOnDisconnect && mixer.transport.state == .playing else { return }
      try? mixer.transport.pause()
      report(.driver(.autoPaused))
    default: report(.driver(event))
    }
  }

  /// The part of the step after the events are shown: notes connection changes, reports the end
  /// of a song (`.songEnded`) once the renderer has stopped, then writes unsaved changes to the
  /// sidecar every `autosaveInterval` (after the report, so a setlist that moved on is not
  /// autosaved as the song it left).
  public func afterEvents(_ report: (LiveEvent) -> Void) {
    noteConnectionChanges()
    let ends = mixer.transport.songEnds
    if ends != songEndsSeen {
      songEndsSeen = ends
      advanceDue = Date()
    }
    // The mixer stops the transport at the end; the next song is opened once the renderer has
    // (a period or two later), so it starts from silence rather than after a seek's 5 ms fade.
    if let due = advanceDue, mixer.transport.state == .paused || Date().timeIntervalSince(due) > 0.5 {
      advanceDue = nil
      report(.songEnded)
    }
    autosaveIfDue()
  }

  // MARK: - Connections

  /// The intended connections (empty without JACK), as a session saves them.
  public var connections: [String: [String]] { driver?.intendedConnections ?? [:] }

  /// Takes the current connections as the saved ones (after the start-up auto-connect).
  public func markConnectionsSaved() {
    if let driver { connectionsSeen = driver.intendedConnections }
  }

  /// A connection made or removed (with connect/disconnect, or by another patchbay, which the
  /// driver folds into the intended routing) marks the session dirty: `quit` asks, and autosave
  /// and save keep it.
  package func noteConnectionChanges() {
    guard let driver else { return }
    let now = driver.intendedConnections
    if now != connectionsSeen {
      connectionsSeen = now
      mixer.markDirty()
    }
  }

  /// Connects the master outputs to the first two physical playback ports when nothing is
  /// intended yet (a session without connections); the result is the saved state. Returns the
  /// physical ports found (the master goes to the first two).
  public func autoConnectMaster() -> [String] {
    guard let driver, driver.intendedConnections.isEmpty else { return [] }
    let physical = Self.playbackPorts(driver)
    for (mine, peer) in zip(["master_L", "master_R"], physical) { try? driver.connect(mine, peer) }
    mixer.markSaved()
    markConnectionsSaved()
    return physical
  }

  // MARK: - Session state

  /// The session to save to `path`: the mixer's state and the intended connections.
  /// `writing`: it is written there now (files its plugins' state names are copied beside it:
  /// `Mixer.session(savingTo:copyingFiles:)`); otherwise it is only compared or shown.
  package func sessionForSaving(to path: String, writing: Bool = false) -> Session {
    var session = mixer.session(savingTo: path, copyingFiles: writing)
    if driver != nil { session.connections = connections }
    return session
  }

  /// After a save to `path`: nothing is unsaved, and the session's file is `path` (its stale
  /// autosave removed; after a save under another name, the old name's too: its unsaved changes
  /// are in the new file, and opening the old one must not offer them back).
  package func saved(to path: String) {
    mixer.markSaved()
    savedSongLayer = mixer.session(savingTo: path).songLayer
    if let driver { connectionsSeen = driver.intendedConnections }
    if let old = self.path, old != path { discardAutosave(for: old) }
    self.path = path
    discardAutosave(for: path)
  }

  /// After the mixer loaded `session` from `path`: the path, the autosave clock, and the
  /// session's connections (made where their peers exist), the master's as `masterRouting`
  /// says. Returns the connections still waiting for a port (`JackDriver.setIntendedConnections`)
  /// and the playback ports the master was newly connected to.
  package func opened(_ session: Session, at path: String) -> (missing: [String], masterConnected: [String]) {
    self.path = path
    lastAutosave = Date()
    savedSongLayer = mixer.session(savingTo: path).songLayer
    guard let driver else { return ([], []) }
    var (wanted, added) = masterRouting(for: session.connections, driver: driver)
    keepControlPorts(in: &wanted, saved: session.connections, driver: driver)
    let missing = driver.setIntendedConnections(wanted)
    // Not a change of the user's: the routing a session opens with is its saved state.
    connectionsSeen = driver.intendedConnections
    return (missing, added)
  }

  /// The connections to make for a session that saves `connections`. When it saves none for the
  /// master and `autoConnect` is on (not `--no-connect`), the master is not left unconnected:
  /// it keeps where it goes now (a song change, an `open` during a show: `open` and `setlist`
  /// used to disconnect it, and the example setlist played into nothing), or else goes to the
  /// first two physical playback ports (`added`).
  package func masterRouting(
    for connections: [String: [String]], driver: JackDriver
  ) -> (connections: [String: [String]], added: [String]) {
    let master = ["master_L", "master_R"]
    guard autoConnect, master.allSatisfy({ connections[$0]?.isEmpty ?? true }) else { return (connections, []) }
    var wanted = connections
    let now = driver.intendedConnections
    if master.contains(where: { !(now[$0]?.isEmpty ?? true) }) {
      for port in master { wanted[port] = now[port] }
      return (wanted, [])
    }
    let physical = Self.playbackPorts(driver)
    for (mine, peer) in zip(master, physical) { wanted[mine] = [peer] }
    return (wanted, physical)
  }

  /// The MIDI ports belong to the console, not to a song: a session that saves no connections
  /// for `midi_in` (or `midi_out`) and still has the port keeps it wired as it is now, so that a
  /// controller or footswitch stays connected through `next`, `open` and `setlist` (issue 35:
  /// the second press of a footswitch's `next` went nowhere). Not `--no-connect`'s to stop: this
  /// keeps a connection, it makes none.
  package func keepControlPorts(in wanted: inout [String: [String]], saved: [String: [String]], driver: JackDriver) {
    let now = driver.intendedConnections
    for (port, exists) in [("midi_in", mixer.midi.portWanted), ("midi_out", mixer.midi.feedback)] where exists {
      guard saved[port]?.isEmpty ?? true, let peers = now[port], !peers.isEmpty else { continue }
      wanted[port] = peers
    }
  }

  /// The first two physical playback ports: where an unrouted master goes.
  package static func playbackPorts(_ driver: JackDriver) -> [String] {
    let physical = (try? driver.ports(matching: nil))?.filter { $0.isPhysical && $0.isInput && $0.isAudio } ?? []
    return physical.prefix(2).map(\.name)
  }

  /// After the mixer was emptied (`new`): no file, no connections, nothing unsaved.
  package func cleared() {
    driver?.setIntendedConnections([:])
    path = nil
    mixer.markSaved()
    savedSongLayer = mixer.session(savingTo: "").songLayer
    markConnectionsSaved()
  }

  /// The song's own part has unsaved changes (its stems, their mix, its options, scenes…): what
  /// a setlist's song change would lose. Rig changes do not count: the rig goes on to the next song.
  package var songLayerDirty: Bool {
    mixer.isDirty && mixer.session(savingTo: path ?? "").songLayer != savedSongLayer
  }

  /// After the mixer loaded an autosave of this session: its connections, and all of it unsaved.
  package func recovered(_ session: Session) {
    if let driver { driver.setIntendedConnections(session.connections) }
    markConnectionsSaved()
    mixer.markDirty()
  }

  // MARK: - Autosave

  /// The sidecar file that holds unsaved changes of `session`: ".NAME.autosave.json" beside it.
  public static func autosavePath(for session: String) -> String {
    let url = URL(fileURLWithPath: session)
    return url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).autosave.json").path
  }

  /// What `autosaveNow` did.
  public enum AutosaveResult: Sendable, Equatable {
    /// Written to `target`; `sessionPath` is the session it belongs to (nil: never saved).
    case written(target: String, sessionPath: String?)
    case failed(target: String, reason: String)
  }

  /// Writes unsaved changes to the autosave file at once (SIGTERM, SIGHUP, a terminal that went
  /// away): beside the session (`recover` loads it), or for a session never saved, as
  /// `untitled.autosave.json` in stemdeck's state folder. nil when there was nothing unsaved.
  public func autosaveNow() -> AutosaveResult? {
    noteConnectionChanges()
    guard mixer.isDirty else { return nil }
    let target = path.map(Self.autosavePath(for:)) ?? StatePaths.stateDirectory() + "/untitled.autosave.json"
    let session = sessionForSaving(to: path ?? target, writing: true)
    do { try SessionFile.save(session, to: target, backup: false) } catch {
      return .failed(target: target, reason: "\(error)")
    }
    return .written(target: target, sessionPath: path)
  }

  package func autosaveIfDue() {
    guard autosaveInterval > 0, let path, mixer.isDirty,
      Date().timeIntervalSince(lastAutosave) >= autosaveInterval
    else { return }
    lastAutosave = Date()
    // The sidecar sits beside the session, so its relative paths resolve the same way.
    do { try SessionFile.save(sessionForSaving(to: path, writing: true), to: Self.autosavePath(for: path), backup: false) } catch {
      // A read-only or full file system: said at every attempt (once an interval), never
      // silently; the changes stay in memory, unsaved, and the files on disk as they were.
      autosaveFailed?(error.description)
    }
  }

  /// Told why a periodic autosave failed (the error names the file and the OS's reason).
  public var autosaveFailed: ((String) -> Void)?

  /// Removes the sidecar (after a save, `quit!`, or when the user discards it), and a backup of
  /// it older versions kept.
  package func discardAutosave(for path: String) {
    let side = Self.autosavePath(for: path)
    // Only regular files: a folder or device planted at these names is never removed.
    AtomicFile.removeRegularFile(side)
    AtomicFile.removeRegularFile(side + ".bak")
  }

  /// The autosave sidecar of `path` when it is newer than the session (after a crash): a regular
  /// file only (a folder or device planted at that name is no autosave, and `recover` would fail).
  package func newerAutosave(of path: String) -> String? {
    let side = Self.autosavePath(for: path)
    guard let attributes = try? FileManager.default.attributesOfItem(atPath: side),
      attributes[.type] as? FileAttributeType == .typeRegular,
      let sideDate = attributes[.modificationDate] as? Date
    else { return nil }
    let mainDate = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date ?? .distantPast
    return sideDate > mainDate ? side : nil
  }

  // MARK: - Ending

  /// A take in progress is stopped and finished while the client still runs (the renderer lets
  /// go of it within a period), so the file is complete even if closing the client is what kills
  /// the process; it becomes a stem of the session. Events meanwhile go to `report`.
  public func finishTake(_ report: (LiveEvent) -> Void) {
    guard driver != nil, mixer.recorder.status != nil, (try? mixer.recorder.stop()) != nil else { return }
    let deadline = Date().addingTimeInterval(1)
    while mixer.recorder.status != nil && Date() < deadline {
      pollEvents(report)
      usleep(2_000)
    }
  }

  /// Fades out, closes the JACK client (stopping a server stemdeck started), then frees the engine.
  public func shutdown() {
    try? mixer.transport.pause()
    guard let driver else { mixer.shutdown(); return }
    usleep(30_000)
    driver.shutdown()
    mixer.shutdown()
  }
}
