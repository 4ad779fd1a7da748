import StemdeckControl
import StemdeckSession
import StemdeckText

/// Changes that land together on one sample frame: `begin`, then stem or master changes, then
/// `commit [now | at POSITION | at bar N[.B] | at next-loop STEM]`; or on one line,
/// `at POSITION { cmd; cmd }`.
extension Console {
  /// Commands that can wait for a frame (they change what the renderer does, nothing else): the
  /// strip controls' console words (StripParameter.swift), the master's fader, glides and EQ.
  package static let groupable: Set<String> = Set(StripParameter.all.flatMap(\.consoleWords) + ["master", "glide", "eq"])

  /// Runs `body` with `group` as the open `begin … commit` group: each front end (the REPL or
  /// script, every control-socket client, OSC) keeps its own, so one client's `begin` never
  /// queues another's commands. Nothing is sent to the renderer before `commit`, so a group left
  /// open by a client that goes away is simply dropped.
  package func withOwnGroup<T>(_ group: inout [[String]]?, _ body: () -> T) -> T {
    let outer = pendingGroup
    pendingGroup = group
    defer {
      group = pendingGroup
      pendingGroup = outer
    }
    return body()
  }

  /// Queues a command of an open group; false if no group is open.
  package func queueInGroup(_ words: [String]) throws(CommandError) -> Bool {
    guard pendingGroup != nil else { return false }
    let name = words[0].lowercased()
    guard Self.groupable.contains(name) else {
      throw CommandError(
        "'\(ValueParser.printable(words[0]))' cannot be part of a group (only \(Self.groupable.sorted().joined(separator: ", "))); 'commit' or 'abort' the group first"
      )
    }
    pendingGroup!.append(words)
    return true
  }

  /// The transport time a `commit at …` / `at …` position names (nil: now).
  package func landingTime(_ words: [String]) throws(CommandError) -> Double? {
    guard let first = words.first?.lowercased() else { return nil }
    switch first {
    case "now":
      guard words.count == 1 else { throw CommandError("commit now: nothing may follow 'now'") }
      return nil
    case "next-loop":
      guard words.count == 2 else { throw CommandError(usage: "at next-loop STEM") }
      do { return try mixer.stems.nextLoopSeam(of: words[1]) } catch { throw CommandError(error) }
    case "bar":
      guard words.count == 2 else { throw CommandError(usage: "at bar N[.BEAT]") }
      return try barTime(words[1])
    default:
      guard words.count == 1 else { throw CommandError(usage: "commit [now | at POSITION | at bar N | at next-loop STEM]") }
      let p = try ValueParser.position(words[0])
      return p.relative ? mixer.transport.position + p.seconds : p.seconds
    }
  }

  /// Sends the queued commands between the renderer's group markers. All or nothing: when one
  /// is rejected, the settings the ones before it changed are put back and the group is aborted
  /// (the renderer drops all of it, so a glide in flight runs on exactly as before) and the error
  /// says nothing changed.
  package func commitGroup(_ commands: [[String]], at seconds: Double?) throws(CommandError) {
    if commands.isEmpty { throw CommandError("the group is empty: nothing to commit") }
    let before = mixer.strips.snapshot()
    let dirtyBefore = mixer.isDirty
    let now = mixer.transport.position
    try mixerCall { () throws(MixerError) in try mixer.beginGroup(atSeconds: seconds) }
    var failure: String?
    for words in commands {
      do { try run(words) } catch {
        failure = "\(ValueParser.printable(words.joined(separator: " "))): \(error)"
        break
      }
    }
    if failure != nil { mixer.strips.restore(before) }
    try mixerCall { () throws(MixerError) in try failure == nil ? mixer.endGroup() : mixer.abortGroup() }
    if let failure {
      if !dirtyBefore { mixer.markSaved() }
      throw CommandError("nothing changed: the group is all or nothing, and \(failure)")
    }
    var when = seconds.map { "at \(NumberFormat.time($0))" } ?? "now"
    if let seconds, seconds < now {
      when = "now: \(NumberFormat.time(seconds)) has already passed (the transport is at \(NumberFormat.time(now)))"
    }
    committedGroup = commands
    write("\(commands.count) change\(commands.count == 1 ? "" : "s") land \(when)")
  }

  /// `at POSITION { cmd; cmd }`: `words` are the position words and the braced body.
  package func runAt(_ words: [String]) throws(CommandError) {
    guard let body = words.last, body.hasPrefix("{"), body.hasSuffix("}"), words.count >= 2 else {
      throw CommandError(usage: "at POSITION { CMD; CMD } (POSITION: m:ss, seconds, bar N, next-loop STEM)")
    }
    let when = try landingTime(Array(words.dropLast()))
    let inner = String(body.dropFirst().dropLast())
    let commands = try Tokenizer.commands(in: inner)
    for command in commands where !Self.groupable.contains(command[0].lowercased()) {
      throw CommandError(
        "'\(ValueParser.printable(command[0]))' cannot land at a time (only \(Self.groupable.sorted().joined(separator: ", ")))")
    }
    try commitGroup(commands, at: when)
  }
}

extension Console {
  /// Transport seconds of "N" or "N.B" (bar N, beat B, both from 1) at the session's tempo.
  package func barTime(_ text: String) throws(CommandError) -> Double {
    guard let tempo = mixer.tempo else {
      throw CommandError("bar positions need a tempo: set one with 'tempo BPM [BEATS_PER_BAR]'")
    }
    let parts = text.split(separator: ".", omittingEmptySubsequences: false)
    guard (1...2).contains(parts.count), let bar = Int(parts[0]), bar >= 1, bar <= 100_000 else {
      throw CommandError("bar must be N or N.BEAT with N from 1 (got '\(ValueParser.printable(text))')")
    }
    var beat = 1
    if parts.count == 2 {
      guard let b = Int(parts[1]), (1...tempo.beatsPerBar).contains(b) else {
        throw CommandError("beat must be from 1 to \(tempo.beatsPerBar) (got '\(ValueParser.printable(String(parts[1])))')")
      }
      beat = b
    }
    let beats = Double((bar - 1) * tempo.beatsPerBar + (beat - 1))
    return beats * 60 / tempo.bpm
  }
}
