import Foundation
import StemdeckControl
import StemdeckEngine
import StemdeckJack
import StemdeckSession
import StemdeckText
import Synchronization

/// Set by SIGINT/SIGTERM/SIGHUP handlers; read by the console's loops.
public let interruptRequests = Atomic<Int>(0)

/// The command interpreter shared by interactive and script mode: one line in, output lines
/// out. It drives the same `Mixer` API as everything else, and never changes engine state when
/// a command is rejected.
public final class Console {
  /// Where output goes: normal lines, and event lines that may arrive while the user types.
  /// Every line is passed through `lineSafe` first (paths and port names may hold escapes and
  /// line breaks).
  public var write: (String) -> Void {
    get { writeSink }
    set { writeSink = { newValue(lineSafe($0)) } }
  }
  public var writeEvent: (String) -> Void {
    get { writeEventSink }
    set { writeEventSink = { newValue(lineSafe($0)) } }
  }
  private var writeSink: (String) -> Void
  private var writeEventSink: (String) -> Void
  /// The live session this console is a front end of: mixer, driver, session path, autosave,
  /// connections, and the service step (`serviceOnce`).
  public let live: LiveSession
  public var driver: JackDriver? { live.driver }
  /// The session file this console saves to by default.
  public var sessionPath: String? { live.path }
  /// Interactive mode: risky commands refuse when there are unsaved changes.
  public var interactive = false
  /// Where other programs reach this stemdeck (`status` says): the control socket's path and the
  /// OSC server's `HOST:PORT`; nil when off. Set by the live start-up.
  public var listening: (control: String?, osc: String?) = (nil, nil)
  /// Called while `wait` waits, to keep events flowing (the host's poll).
  public var idle: () -> Void = {}
  /// Where the waits block between `idle` steps (live: poll(2) on stdin, the sockets and the
  /// wake-up eventfd, so a request is served at once; ControlLoop.swift). nil: they sleep.
  public var loop: ControlLoop?
  /// Called with every live event of a service step, before it is shown (pushes to remote
  /// subscribers: `ControlServer`, `OSCServer`).
  public var eventObservers: [(LiveEvent) -> Void] = []
  /// The control socket, OSC and the session manager, served in this order after the engine in
  /// each step of the live loop (`attach`, FrontEnd.swift).
  public internal(set) var frontEnds: [any FrontEnd] = []
  /// The terminal's width, in interactive mode: tables, meters and help fit it. nil in script
  /// mode, whose output formats stay as documented.
  public var terminalColumns: (() -> Int)?
  /// Set by `watch` in interactive mode; the host runs the live view.
  public var watchRequested = false
  /// Set by `mixer` in interactive mode; the host runs the full-screen mixer view (MixerView/).
  public var mixerRequested = false
  public var quitRequested = false
  /// The loaded setlist and the current song in it.
  package var setlist: Setlist?
  package var setlistIndex = 0
  /// What happens when a setlist song ends (`advance`).
  package var advance = SetlistAdvance.off
  /// Seconds between autosaves of unsaved changes (0 = off).
  public var autosaveInterval: Double {
    get { live.autosaveInterval }
    set { live.autosaveInterval = newValue }
  }
  package var lastAutosave: Date {
    get { live.lastAutosave }
    set { live.lastAutosave = newValue }
  }
  /// Set while a remote request runs (RemoteRun.swift): a command that waits parks its `Waiter`
  /// in `parked` and returns, and the line stops there until its front end sees the wait over.
  package var parkable = false
  package var parked: Waiter?
  /// Commands of an open `begin … commit` group.
  package var pendingGroup: [[String]]?
  /// Strict mode: a session whose audio file is missing does not open at all.
  public var strict = false
  /// The command word being run (lets "open!" differ from "open").
  package var commandWord = ""
  /// Which events are shown, and repeats being folded (`events`, Events.swift).
  package var eventGate = EventGate()
  /// Where an interactive console keeps its `events` choice for the next run (nil: not kept).
  package var eventsChoicePath: String?
  /// Undo and redo (History.swift): the steps, and the front end the running command came from.
  package var history = UndoHistory()
  package var commandSource = Surface.repl
  /// `--osc-allow all`: OSC may do what the control socket does (Access.swift).
  public var oscAllowsAll = false
  /// The commands of the group the running `commit` landed (Groups.swift), for its step's text.
  package var committedGroup: [[String]]?
  /// Commands running inside one another (`commit` runs its group's): a step is noted when the
  /// outermost ends.
  private var runDepth = 0

  /// A console as a front end of `live`.
  public init(session live: LiveSession, write: @escaping (String) -> Void) {
    self.live = live
    writeSink = { write(lineSafe($0)) }
    writeEventSink = writeSink
    // An event line (class other), e.g. "autosave failed: …/.song.json.autosave.json: cannot
    // create a temporary file next to it: Read-only file system; the changes are still unsaved".
    live.autosaveFailed = { [weak self] reason in self?.report(["autosave failed: \(reason); the changes are still unsaved"]) }
  }

  /// A console driving a mixer without JACK (tests, offline use).
  public convenience init(mixer: Mixer, write: @escaping (String) -> Void) {
    self.init(session: LiveSession(mixer: mixer), write: write)
  }

  public var mixer: Mixer { live.mixer }

  /// Runs `body` with the command output lines going to `sink` as they are (the control socket's
  /// JSON escapes them), not through `write`; event lines still go to `writeEvent`.
  package func capturingOutput<T>(_ sink: @escaping (String) -> Void, _ body: () -> T) -> T {
    let saved = writeSink
    writeSink = sink
    defer { writeSink = saved }
    return body()
  }

  // MARK: - The service step

  /// One step of the live session (`LiveSession.serviceOnce`), its events written as event
  /// lines; the end of a song advances the setlist.
  public func serviceOnce() {
    live.serviceOnce(handle)
    // A MIDI controller moved a fader (a command's own service steps, in a `wait`, are its own).
    if runDepth == 0 { noteStrayChanges() }
    report([])  // folded event lines whose second is over
  }

  /// The front end's part of a live event: words for the user, or the setlist's advance.
  package func handle(_ event: LiveEvent) {
    for observe in eventObservers { observe(event) }  // subscribers of the control socket and OSC
    if case .songEnded = event { songEnded(); return }
    if case .mixer(.midiCommand(let command)) = event { runMidiCommand(command); return }
    if let text = event.text { report([text]) }  // through the gate: `events` classes, folding
  }

  /// Runs one input line (possibly several `;`-separated commands). Returns false if any failed.
  /// With `stopOnError`, the commands after a failed one on the same line are not run, as in a
  /// script or over the control socket; `sayingSkipped` then writes which ones (at the prompt,
  /// where the line's author is reading).
  @discardableResult
  public func execute(line: String, stopOnError: Bool = false, sayingSkipped: Bool = false) -> Bool {
    let commands: [[String]]
    do { commands = try Tokenizer.commands(in: line) } catch {
      write("error: \(error)")
      return false
    }
    return execute(commands: commands[...], stopOnError: stopOnError, sayingSkipped: sayingSkipped).ok
  }

  /// Runs commands as `execute(line:)` does; stops after one that parked a wait (`parkable`)
  /// and returns the commands after it, to be run when the wait is over.
  package func execute(
    commands: ArraySlice<[String]>, stopOnError: Bool = false, sayingSkipped: Bool = false
  ) -> (ok: Bool, rest: ArraySlice<[String]>) {
    var ok = true
    // A signal (Ctrl-C, SIGTERM) during one command, e.g. a 'wait', stops the line there: the
    // commands after it are not run.
    let interruptsAtStart = interruptRequests.load(ordering: .relaxed)
    for index in commands.indices {
      let words = commands[index]
      if quitRequested { break }
      if interruptRequests.load(ordering: .relaxed) != interruptsAtStart { ok = false; break }
      do { try run(words) } catch {
        write("error: \(error)")
        ok = false
        afterCommand?(words, false)
        guard stopOnError else { continue }
        let rest = commands[(index + 1)...]
        if sayingSkipped && !rest.isEmpty {
          write("not run after the error: \(rest.map { Self.commandText($0) }.joined(separator: "; "))")
        }
        break
      }
      afterCommand?(words, true)
      if parked != nil { return (ok, commands[(index + 1)...]) }
    }
    return (ok, [])
  }

  /// A command's words as one would type them: a word with a space, quote or `;` in quotes.
  package static func commandText(_ words: [String]) -> String {
    words.map { word in
      if word.hasPrefix("{") && word.hasSuffix("}") { return word }  // an `at` body, as typed
      guard word.isEmpty || word.contains(where: { " \t;'\"{}".contains($0) }) else { return ValueParser.printable(word) }
      return "\"" + ValueParser.printable(word).replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }.joined(separator: " ")
  }

  /// Called after each command `execute` runs, with its words and whether it succeeded (the
  /// control socket adds a query's data and a transport command's frame to its reply).
  package var afterCommand: (([String], Bool) -> Void)?
  /// The transport frame at which the engine applied the last command's change (`settleTransport`,
  /// live only); nil when the command sent the engine nothing or the engine did not take it.
  package var appliedFrame: Int?
  /// Commands sent to the engine before the running command started (`settleTransport`).
  private var commandsSentBefore = 0

  /// Runs one command given as words.
  public func run(_ words: [String]) throws(CommandError) {
    guard let first = words.first else { return }
    let name = first.lowercased()
    // Who may run it is checked first: a refused command is not even queued in a group.
    if let spec = CommandTable.lookup(name) { try checkAccess(spec, words) }
    if !["commit", "abort", "begin"].contains(name), try queueInGroup(words) { return }
    guard let spec = CommandTable.lookup(name) else {
      throw CommandError(unknownCommand: first, suggestion: Suggestion.closest(to: name, in: CommandTable.allNames))
    }
    // One step per command, however many commands it runs (a group's `commit`); a change no one
    // noted before it (a MIDI move in between) is a step of its own.
    if runDepth == 0 { noteStrayChanges() }
    runDepth += 1
    defer {
      runDepth -= 1
      if runDepth == 0 {
        // A group's step says what it held: `commit: vol bass 0.5; pan bass -0.2`.
        let group = committedGroup.map { ": " + $0.map { Self.commandText($0) }.joined(separator: "; ") } ?? ""
        committedGroup = nil
        noteChanges(source: commandSource.rawValue, text: Self.commandText(words) + (name == "commit" ? group : ""))
      }
    }
    commandWord = name
    appliedFrame = nil
    commandsSentBefore = mixer.engine.commandCounts.sent
    live.noteConnectionChanges()
    defer { live.noteConnectionChanges() }
    let args = Array(words.dropFirst())
    if let count = spec.argumentCount, !count.contains(args.count) {
      throw CommandError("\(spec.name): expected \(Self.describe(count)), got \(args.count) — usage: \(spec.usage)")
    }
    // A strip's name is checked before what follows it: `vol nope 3` says the name is unknown
    // (with a suggestion), not that 3 is out of range. `master` is `eq`'s own word.
    if case .stemOrAll = spec.completions.first, let strip = args.first, strip.lowercased() != "master" {
      _ = try stems(strip, includeOffline: true)
    }
    try spec.run(self, args)
  }

  package static func describe(_ range: ClosedRange<Int>) -> String {
    func n(_ k: Int) -> String { k == 1 ? "1 argument" : "\(k) arguments" }
    if range.lowerBound == range.upperBound { return n(range.lowerBound) }
    if range.upperBound >= 99 { return "at least \(n(range.lowerBound))" }
    return "\(range.lowerBound) to \(range.upperBound) arguments"
  }

  // MARK: - Helpers the commands use

  /// The stems a name argument means: one stem, or every stem for "all".
  package func stems(_ name: String, includeOffline: Bool = false) throws(CommandError) -> [String] {
    let names = includeOffline ? mixer.stems.allNames : mixer.stems.names
    if name == "all" {
      if names.isEmpty { throw CommandError("there are no stems (add one with 'add PATH')") }
      return names
    }
    if mixer.buses.contains(name) { return [name] }  // a bus answers the strip commands (Commands+Buses.swift)
    let known = mixer.stems.allNames
    // A live input is a strip name too (vol, pan, mute, solo, eq, meters; Commands+Inputs.swift).
    if !known.contains(name), mixer.inputs.names.contains(name) { return [name] }
    guard known.contains(name) else { throw CommandError(mixer.strips.unknownError(name)) }
    return [name]
  }

  /// Applies `body` to each named stem, after validating the first so an invalid value changes
  /// nothing (validation is per value, so the first stem's check stands for all).
  package func each(_ name: String, _ body: (String) throws(MixerError) -> Void) throws(CommandError) {
    for stem in try stems(name) {
      do { try body(stem) } catch { throw CommandError(error) }
    }
  }

  @discardableResult
  package func mixerCall<T>(_ body: () throws(MixerError) -> T) throws(CommandError) -> T {
    do { return try body() } catch { throw CommandError(error) }
  }

  package func jack() throws(CommandError) -> JackDriver {
    guard let driver else { throw CommandError("not running with JACK (routing commands need the live client)") }
    return driver
  }

  package func jackCall<T>(_ body: (JackDriver) throws(JackError) -> T) throws(CommandError) -> T {
    let d = try jack()
    do { return try body(d) } catch { throw CommandError(error) }
  }

  // MARK: - Session commands

  package func save(to path: String?) throws(CommandError) {
    guard let target = path ?? sessionPath else {
      throw CommandError("no session file yet: give a path, e.g. 'save Sessions/mysong.json'")
    }
    let absolute = Self.absolutePath(target)
    // Unsaved changes go to ".NAME.autosave.json" (and its ".bak"): that name must fit too.
    let name = absolute.split(separator: "/").last.map(String.init) ?? absolute
    if name.utf8.count > Self.longestSessionName {
      throw CommandError(
        "\(printableText(target)): the file name is \(name.utf8.count) bytes long; the longest stemdeck saves is \(Self.longestSessionName) bytes (room for its autosave, .NAME.autosave.json)"
      )
    }
    let session = live.sessionForSaving(to: absolute, writing: true)
    // Never over one of the session's own audio files (a typo like 'save drums.wav').
    for file in session.stems.map(\.file) + session.effects.map(\.file)
    where AtomicFile.sameFile(absolute, SessionFile.resolve(file: file, sessionPath: absolute)) {
      throw CommandError(
        "\(printableText(target)): is an audio file of this session (\(printableText(file))); a session is never saved over its own audio — choose another name"
      )
    }
    do { try SessionFile.save(session, to: absolute) } catch { throw CommandError(error.description) }
    live.saved(to: absolute)
    write("saved \(target)")
  }

  /// What the live session changed from the session file at `path` (nil: the session's own file),
  /// and the file's name as given, for `diff`.
  package func diff(against path: String?) throws(CommandError) -> (changes: [SessionChange], file: String) {
    guard let target = path ?? sessionPath else {
      throw CommandError("diff: this session has no file yet: give one to compare with (diff FILE), or save it first")
    }
    let absolute = Self.absolutePath(target)
    let saved: Session
    do { saved = try SessionFile.load(path: absolute) } catch {
      throw CommandError("diff: " + error.naming(target, for: absolute).description)
    }
    return (SessionDiff.changes(from: saved, to: live.sessionForSaving(to: absolute)), target)
  }

  /// The short form of `diff` that `quit` shows before refusing: `unsaved: drums volume 0.8 → 0.5;
  /// bass pan 0 → 0.3; and 2 more ('diff' lists them)`. Nil when the session has no file or the
  /// file cannot be read (the refusal says enough), or nothing differs from it.
  package func unsavedSummary(shown: Int = 3) -> String? {
    guard sessionPath != nil, let changes = try? diff(against: nil).changes, !changes.isEmpty else { return nil }
    return "unsaved: " + Self.shortForm(changes, shown: shown, more: " ('diff' lists them)")
  }

  /// Opens a session file, replacing the current session only if everything in it is valid.
  /// With `asSongChange` (setlists) a playing transport moves to it as the current session's
  /// `songChange` option says (gapless or crossfade; `mixer.songs.change`).
  /// `throughRig`: a setlist's song, played through the rig that is live (`Session.playedThrough`).
  public func open(_ path: String, force: Bool = false, asSongChange: Bool = false, throughRig: Bool = false) throws(CommandError) {
    if interactive && mixer.isDirty && !force {
      throw CommandError("there are unsaved changes: 'save' them first, or use 'open! \(path)' to discard them")
    }
    let absolute = Self.absolutePath(path)
    var session: Session
    do { session = try SessionFile.load(path: absolute) } catch {
      throw CommandError(error.naming(path, for: absolute).description)
    }
    if throughRig { session = session.playedThrough(rig: live.sessionForSaving(to: absolute)) }
    let warnings: [MixerWarning]
    do {
      warnings =
        asSongChange
        ? try mixer.songs.change(to: session, sessionPath: absolute, strict: strict)
        : try mixer.load(session, sessionPath: absolute, strict: strict)
    } catch {
      throw CommandError(error.naming(absolute, as: path))
    }
    for w in warnings { write("warning: \(w.naming(absolute, as: path).consoleWords)") }
    var line = "opened \(path): \(session.stems.count) stem\(session.stems.count == 1 ? "" : "s")"
    if !warnings.isEmpty && !mixer.offlineStems.isEmpty { line += " (\(mixer.offlineStems.count) offline)" }
    let (missing, masterConnected) = live.opened(session, at: absolute)
    if !missing.isEmpty {
      line += "; waiting for port\(missing.count == 1 ? "" : "s") to connect: \(missing.joined(separator: ", "))"
    }
    write(line)
    if !masterConnected.isEmpty && interactive { write("connected master to \(masterConnected.joined(separator: ", "))") }
    resetHistory()
    if let side = live.newerAutosave(of: absolute) {
      write("an autosave of unsaved changes exists (\(side)): type 'recover' to open it, or 'recover discard' to delete it")
    }
  }

  package func newSession(force: Bool) throws(CommandError) {
    if interactive && mixer.isDirty && !force {
      throw CommandError("there are unsaved changes: 'save' them first, or use 'new!' to discard them")
    }
    try mixerCall { () throws(MixerError) in
      try mixer.stems.removeAll()
      try mixer.transport.stop()
      try mixer.master.setVolume(1)
      try mixer.setOptions(SessionOptions())
      try mixer.setQuality(.fast)
    }
    live.cleared()
    resetHistory()
    write("new empty session")
  }

  // MARK: - Autosave

  /// The longest session file name (bytes) whose autosave, ".NAME.autosave.json", still fits in
  /// a file name (NAME_MAX, 255 bytes). Autosaves keep no backup of themselves.
  package static let longestSessionName = 255 - ".".utf8.count - ".autosave.json".utf8.count

  /// The sidecar file that holds unsaved changes of `session`: ".NAME.autosave.json" beside it.
  public static func autosavePath(for session: String) -> String { LiveSession.autosavePath(for: session) }

  /// Takes the current connections as the saved ones (after the start-up auto-connect).
  public func markConnectionsSaved() { live.markConnectionsSaved() }

  /// Writes unsaved changes to the autosave file at once (`LiveSession.autosaveNow`). Returns
  /// what it did, for the user; nil when there was nothing unsaved.
  public func autosaveNow() -> String? {
    switch live.autosaveNow() {
    case nil: return nil
    case .failed(let target, let reason)?: return "could not write the unsaved changes to \(target): \(reason)"
    case .written(let target, let sessionPath)?: return Self.autosavedText(target, sessionPath)
    }
  }

  /// Where the unsaved changes went, and how to get them back.
  package static func autosavedText(_ target: String, _ sessionPath: String?) -> String {
    let hint = sessionPath.map { "open \($0) and type 'recover' to get them back" } ?? "'open \(target)' gets them back"
    return "unsaved changes written to \(target) (\(hint))"
  }

  /// Called regularly by the host, after it has printed the mixer's events
  /// (`LiveSession.afterEvents`): advances the setlist when a song has ended, and writes unsaved
  /// changes to the sidecar every `autosaveInterval`.
  public func periodic() {
    live.afterEvents(handle)
  }

  /// Opens the autosave sidecar in place of the session (the session path stays the original).
  package func recover(discard: Bool) throws(CommandError) {
    guard let path = sessionPath else { throw CommandError("recover: no session is open") }
    let side = Self.autosavePath(for: path)
    var isFolder: ObjCBool = false
    guard FileManager.default.fileExists(atPath: side, isDirectory: &isFolder) else {
      throw CommandError("recover: there is no autosave for \(path)")
    }
    if isFolder.boolValue { throw CommandError("recover: \(side) is a folder, not an autosave; there is no autosave for \(path)") }
    if discard { live.discardAutosave(for: path); write("autosave discarded"); return }
    let session: Session
    do { session = try SessionFile.load(path: side) } catch { throw CommandError(error.description) }
    do { try mixer.load(session, sessionPath: path, strict: strict) } catch { throw CommandError(error) }
    live.recovered(session)
    resetHistory()
    write("recovered unsaved changes from the autosave; 'save' to keep them")
  }

  package static func absolutePath(_ path: String) -> String {
    if path.hasPrefix("/") { return path }
    return FileManager.default.currentDirectoryPath + "/" + path
  }

  // MARK: - Waiting

  /// After a transport command, live: waits (a period or two, at most half a second) until the
  /// engine has applied it, so the next command sees its effect (`play; status` says playing or
  /// starting, never stopped), whether it came from a script, the prompt or the control socket.
  package func settleTransport() {
    guard let driver, driver.connected else { return }
    let frame = mixer.engine.waitForApplication()
    if mixer.engine.commandCounts.sent != commandsSentBefore { appliedFrame = frame }
  }
}
