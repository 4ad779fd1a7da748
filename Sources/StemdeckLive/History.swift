import Foundation
import StemdeckControl
import StemdeckSession
import StemdeckText

// Undo and redo (issue 41; docs/architecture.md, *Undo and redo*): every change to the mix, from
// any front end, becomes one step holding the mix before and after it (`Mixer.snapshot`).
// The console notes a step after each command it runs (the REPL, a script, the control socket,
// OSC's `/stemdeck/cmd`, a MIDI show command), after each key of the mixer view, and after a
// service step that moved something by itself (a MIDI controller): `mixer.history.changeCount` says
// whether anything may have changed, so a command that changed nothing costs no snapshot.

/// One undoable step.
package struct HistoryStep {
  /// The mix before and after it.
  package var before: Session
  package var after: Session
  /// What made it: a command line as typed, "mixer view", "MIDI".
  package var text: String
  /// Where it came from: repl, socket, osc, midi, view, web.
  package var source: String
  /// What it changed, cheaply (`HistoryStep.parts`), for the front ends whose moves come as
  /// streams (`UndoHistory.streams`): the steps of one controller sweep change the same parts,
  /// so they join into one. Empty for the others.
  package var parts: [String]
  package var last: ContinuousClock.Instant
  /// The mixer view's drag it belongs to, if one.
  package var drag: Int?

  /// The parts two snapshots differ in: `stem drums volume`, `bus verb`, `master volume`, … —
  /// a strip's field when only its strip changed, the element otherwise.
  package static func parts(from a: Session, to b: Session) -> [String] {
    var out: [String] = []
    if a.masterVolume != b.masterVolume { out.append("master volume") }
    if a.masterEQ != b.masterEQ { out.append("master eq") }
    if a.scenes != b.scenes || a.recallSafe != b.recallSafe { out.append("scenes") }
    if a.quality != b.quality || a.options != b.options || a.recording != b.recording || a.tempo != b.tempo || a.click != b.click
      || a.midi != b.midi
    {
      out.append("session")
    }
    // A strip's controls from the strip table (StripParameter.swift), its EQ and its route.
    func compare<T: Equatable & StripSettingsHolder>(_ kind: String, _ x: [T], _ y: [T]) {
      let old = Dictionary(x.map { ($0.name, $0) }, uniquingKeysWith: { p, _ in p })
      for element in y {
        let n = element.name
        guard let was = old[n] else { out.append("\(kind) \(n) added"); continue }
        guard was != element else { continue }
        var bareWas = was, bare = element
        bareWas.strip = StripSettings()
        bare.strip = StripSettings()
        guard bareWas == bare else { out.append("\(kind) \(n)"); continue }
        let s0 = was.strip, s1 = element.strip
        var fields = StripParameter.all.filter { $0.field != nil && $0.reading(in: s0) != $0.reading(in: s1) }.map(\.key)
        if s0.eq != s1.eq { fields.append("eq") }
        if s1.withMix(of: s0) != s0 { fields.append("route") }
        for field in fields.isEmpty ? ["strip"] : fields { out.append("\(kind) \(n) \(field)") }
      }
      let names = Set(y.map(\.name))
      for element in x where !names.contains(element.name) { out.append("\(kind) \(element.name) removed") }
    }
    compare("stem", a.stems, b.stems)
    compare("bus", a.buses, b.buses)
    compare("input", a.inputs, b.inputs)
    if a.sends != b.sends { out.append("sends") }
    if a.stems.map(\.name) != b.stems.map(\.name) { out.append("stem order") }
    return out
  }
}

/// The steps, the ones in effect first: `steps[..<done]` are done (the last is what `undo`
/// takes back), `steps[done...]` were undone (what `redo` does again, until a new change drops them).
package struct UndoHistory {
  /// How many steps are kept: the oldest goes when a new one would make more (README,
  /// *Undo*). A step holds two snapshots, shared with its neighbours (copy on write), so the
  /// history holds about `limit` sessions at most, whatever number of changes was made.
  package static let limit = 100
  /// How long after a controller's (or an OSC fader's) last move a move of the same parts from
  /// the same front end still joins its step.
  package static let joinSeconds = 1.5
  /// The front ends whose moves come as streams and join.
  package static let streams: Set<String> = ["midi", "osc", "web"]  // web: a fader dragged in the page

  package var steps: [HistoryStep] = []
  package var done = 0
  /// The mix as last noted, and the mixer's change count then; nil before the first note.
  package var current: Session?
  package var changeCount = -1
  /// How many times the history started again (a session opened, a song change): with the
  /// change count, what tells the web mixer's pages the whole mix may be new (ControlSocket+Push.swift).
  package var epoch = 0
}

extension Console {
  /// Notes a step if the mix changed since the last note: `text` and `source` say what made it.
  /// The front ends whose changes come as streams (a MIDI controller, an OSC fader) join a move
  /// of the same parts within `UndoHistory.joinSeconds` to the step before it (one sweep, one
  /// step; a key of the mixer view is a step of its own, as a typed command is);
  /// `drag` names a fader drag of the mixer view: its moves are one step, however long it takes.
  package func noteChanges(source: String, text: String, drag: Int? = nil) {
    let count = mixer.history.changeCount
    guard count != history.changeCount || history.current == nil else { return }
    let now = mixer.history.snapshot()
    history.changeCount = count
    guard let before = history.current else {
      history.current = now
      return
    }
    guard now != before else { return }
    history.current = now
    let stream = UndoHistory.streams.contains(source)
    let parts = stream ? HistoryStep.parts(from: before, to: now) : []
    let clock = ContinuousClock.now
    if history.done == history.steps.count, let top = history.steps.last, top.source == source,
      (drag != nil && top.drag == drag)
        || (stream && top.parts == parts && top.last.duration(to: clock) < .seconds(UndoHistory.joinSeconds))
    {
      if now == top.before {  // moved back where it started: no step at all
        history.steps.removeLast()
        history.done -= 1
      } else {
        history.steps[history.steps.count - 1].after = now
        history.steps[history.steps.count - 1].last = clock
      }
      return
    }
    history.steps.removeSubrange(history.done...)
    history.steps.append(HistoryStep(before: before, after: now, text: text, source: source, parts: parts, last: clock, drag: drag))
    if history.steps.count > UndoHistory.limit { history.steps.removeFirst(history.steps.count - UndoHistory.limit) }
    history.done = history.steps.count
  }

  /// Notes a change nobody noted yet (between commands: a MIDI controller's move) as a step of
  /// its own, before a command, a service step's end, `undo` or `history` looks at the history.
  package func noteStrayChanges() {
    noteChanges(source: "midi", text: "MIDI")
  }

  /// Starts the history again from the mix as it is (a session opened, a new one, a song change).
  package func resetHistory() {
    let epoch = history.epoch &+ 1
    history = UndoHistory()
    history.epoch = epoch
    history.current = mixer.history.snapshot()
    history.changeCount = mixer.history.changeCount
  }

  /// Runs `body` with commands coming from `source` (`socket`, `osc`, `midi`): noted so in the
  /// history, and held to what that front end may do (Access.swift).
  package func from<T>(_ source: Surface, _ body: () -> T) -> T {
    let outer = commandSource
    commandSource = source
    defer { commandSource = outer }
    return body()
  }

  /// Takes back the last `count` steps (`redo`: does the last `count` undone steps again).
  /// Returns one line per step: what it was and what it put back.
  package func undo(_ count: Int, redo: Bool) throws(CommandError) -> [String] {
    noteStrayChanges()
    var lines: [String] = []
    for _ in 0..<count {
      let index = redo ? history.done : history.done - 1
      guard history.steps.indices.contains(index) else { break }
      let step = history.steps[index]
      let (from, to) = redo ? (step.before, step.after) : (step.after, step.before)
      // A front end that may not change the rig may not undo or redo it either: OSC's `undo`
      // must not take the operator's mic input away (Access.swift).
      if ceiling < .rig, let part = Self.rigChange(from: from, to: to) {
        throw CommandError(
          "\(redo ? "redo" : "undo") of '\(printableText(step.text))' \(part), which \(CommandAccess.rig.what): refused \(commandSource.described)\(commandSource.remedy)"
        )
      }
      do { try mixer.history.revert(from: from, to: to) } catch {
        throw CommandError(
          "\(redo ? "redo" : "undo") of '\(printableText(step.text))': \(error.consoleWords) — nothing was changed\(lines.isEmpty ? "" : " by this step (\(lines.count) before it were \(redo ? "redone" : "undone"))")"
        )
      }
      history.done += redo ? 1 : -1
      history.current = mixer.history.snapshot()
      history.changeCount = mixer.history.changeCount
      let changes = Self.shortForm(SessionDiff.changes(from: from, to: to), shown: 2)
      lines.append("\(redo ? "redone" : "undone"): \(printableText(step.text))\(changes.isEmpty ? "" : " (\(changes))")")
    }
    if lines.isEmpty {
      throw CommandError(
        redo
          ? "nothing to redo\(history.done > 0 ? " (a change after an undo ends what can be redone)" : "")"
          : "nothing to undo\(history.steps.isEmpty ? " since the session was opened" : " (the oldest of the last \(UndoHistory.limit) steps is reached)")"
      )
    }
    return lines
  }

  /// What a move from `a` to `b` would do to the rig, in words, or nil: a live input, a bus or an
  /// aux send added or removed, a strip's direct outs switched.
  package static func rigChange(from a: Session, to b: Session) -> String? {
    if Set(a.inputs.map(\.name)) != Set(b.inputs.map(\.name)) { return "adds or removes a live input" }
    if Set(a.sends.map(\.name)) != Set(b.sends.map(\.name)) { return "adds or removes an aux send" }
    if Set(a.buses.map(\.name)) != Set(b.buses.map(\.name)) { return "adds or removes a bus" }
    func directOuts(_ s: Session) -> Set<String> {
      Set(
        s.stems.filter(\.strip.directOut).map(\.name) + s.inputs.filter(\.strip.directOut).map(\.name)
          + s.buses.filter(\.strip.directOut).map(\.name))
    }
    if directOuts(a) != directOuts(b) { return "switches a strip's direct outs" }
    return nil
  }

  /// The first `shown` changes and how many more: `drums volume 0dB → -6dB; bass pan 0 → 0.3;
  /// and 2 more` (a step's line, and `quit`'s `unsaved:` line with its `more` hint).
  package static func shortForm(_ changes: [SessionChange], shown: Int, more: String = "") -> String {
    var parts = changes.prefix(shown).map(\.line)
    if changes.count > shown { parts.append("and \(changes.count - shown) more" + more) }
    return parts.joined(separator: "; ")
  }

  /// The steps for the control socket's `history` reply: number, text, source, undone, and the
  /// changes as `diff` words.
  package func historySteps() -> [[String: Any]] {
    history.steps.enumerated().map { i, step in
      [
        "number": i + 1, "text": step.text, "source": step.source, "undone": i >= history.done,
        "changes": SessionDiff.changes(from: step.before, to: step.after).map(\.line)
      ]
    }
  }

  /// `history`: the steps, oldest first, numbered; the undone ones marked.
  package func historyLines() -> [String] {
    noteStrayChanges()
    guard !history.steps.isEmpty else { return ["no changes since the session was opened"] }
    var lines: [String] = []
    for (i, step) in history.steps.enumerated() {
      let mark = i < history.done ? " " : "~"
      let changes = Self.shortForm(SessionDiff.changes(from: step.before, to: step.after), shown: 3)
      lines.append(
        "\(mark)\(String(i + 1).padLeft(3))  \(printableText(step.text)) [\(step.source)]\(changes.isEmpty ? "" : " (\(changes))")")
    }
    if history.done < history.steps.count {
      lines.append("(~: undone; 'redo' does \(history.steps.count - history.done == 1 ? "it" : "them") again)")
    }
    return lines
  }
}
