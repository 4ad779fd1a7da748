import Foundation
import StemdeckControl

// The commands that wait (`wait SECONDS`, `wait end`, `sfx wait`; issue 43, fair scheduling).
// What each waits for is a `Waiter`, polled between service steps. At the prompt and in a script
// the command polls it in a loop (`Console.waitFor`), serving the engine and every front end in
// between. A remote request's wait is parked instead (`Console.parkable`): its front end keeps
// it (`RemoteRun`, RemoteRun.swift) and polls it on each step, so a socket client's or an OSC
// sender's `wait` makes only that client wait, never the terminal or anyone else.

/// One thing a command waits for.
package struct Waiter {
  /// True when it is over, false while it waits; throws when it failed.
  package var poll: (Console) throws(CommandError) -> Bool
  /// When the wait is cut short (Ctrl-C, SIGTERM, `quit`): an error, or nothing (the wait just ends).
  package var interrupted: (Console) throws(CommandError) -> Void = { _ throws(CommandError) in }
  /// Seconds to sleep between polls, at most.
  package var step = 0.01
}

extension Console {
  /// Waits for `waiter`: parked for the front end when a remote request runs (`parkable`),
  /// else polled here with the engine served in between, until it is over, fails, or is cut
  /// short by a signal or a `quit` (from the socket during a script's `wait`).
  package func waitFor(_ waiter: Waiter, parking: Bool = true) throws(CommandError) {
    if parkable && parking {
      parked = waiter
      return
    }
    let start = interruptRequests.load(ordering: .relaxed)
    while true {
      if interruptRequests.load(ordering: .relaxed) != start || quitRequested {
        try waiter.interrupted(self)
        break
      }
      if try waiter.poll(self) { break }
      idle()
      pauseForWork(waiter.step)
    }
    idle()
  }

  /// `wait SECONDS`: lets audio play that long.
  package func wait(seconds: Double) throws(CommandError) {
    let deadline = Date().addingTimeInterval(seconds)
    try waitFor(Waiter(poll: { _ throws(CommandError) in Date() >= deadline }, step: min(0.01, max(0, seconds))))
  }

  /// `sfx wait [NAME]` (and, not parked, the wait of `sfx fire` in a script): until the effects
  /// loading in the background (all, or `name`) are done: loaded, or failed (an error naming
  /// them; their events say why). Cut short, it cancels what was waited for.
  package func waitForEffects(_ name: String?, parking: Bool = true) throws(CommandError) {
    let pending = mixer.effects.stillLoading
    if let name, !pending.contains(name) {
      if mixer.effects.statuses().contains(where: { $0.settings.name == name }) { return }
      throw CommandError("sfx wait: no effect '\(ValueParser.printable(name))' is loading or loaded")
    }
    let waited = name.map { [$0] } ?? pending
    let waiter = Waiter(
      poll: { c throws(CommandError) in
        c.serviceOnce()  // what installs a finished load and reports its event, whatever `idle` is
        guard Set(c.mixer.effects.stillLoading).isDisjoint(with: waited) else { return false }
        let loaded = Set(c.mixer.effects.statuses().map(\.settings.name))
        let failed = waited.filter { !loaded.contains($0) }
        if !failed.isEmpty { throw CommandError("sfx wait: not loaded: \(failed.map { "'\($0)'" }.joined(separator: ", "))") }
        return true
      },
      interrupted: { c throws(CommandError) in
        // Ctrl-C (or SIGTERM) while waiting cancels what was waited for: nothing of it stays.
        let unfinished = c.mixer.effects.stillLoading.filter { waited.contains($0) }
        guard !unfinished.isEmpty else { return }
        for name in unfinished { try? c.mixer.effects.unload(name) }
        throw CommandError(
          "sfx wait: interrupted; cancelled loading \(unfinished.map { "'\($0)'" }.joined(separator: ", ")) (nothing of it is loaded)")
      },
      step: 0.005)
    try waitFor(waiter, parking: parking)
  }

  /// `wait end`: until every finite stem has finished (the song's end), and a setlist that
  /// advances has opened the next song.
  package func waitForEnd() throws(CommandError) {
    let statuses = mixer.stems.statuses()
    if statuses.isEmpty { throw CommandError("wait end: there are no stems") }
    if statuses.allSatisfy({ $0.settings.loops < 0 }) {
      throw CommandError("wait end: every stem loops forever (loops -1), so the end never comes; use 'wait SECONDS'")
    }
    // A 'play' just sent takes a period to reach the renderer: give it a moment.
    let startDeadline = Date().addingTimeInterval(2)
    // The song's end is reported once; a setlist that advances opens the next song in the same
    // `idle`, so the end counter, not the stems, says this song has ended.
    var ends: Int?
    var pausedSeen = false
    // A setlist that advances opens the next song a period or two after the end: wait for it,
    // so the next 'wait end' waits for that song.
    var advanceDeadline: Date?
    let waiter = Waiter(
      poll: { c throws(CommandError) in
        if let advanceDeadline { return c.live.advanceDue == nil || Date() >= advanceDeadline }
        let m = c.mixer
        if ends == nil {
          if m.transport.state == .paused && !m.transport.allFiniteStemsFinished {
            if Date() < startDeadline { return false }
            throw CommandError("wait end: the transport is paused; 'play' first")
          }
          ends = m.transport.songEnds
        }
        if m.transport.songEnds != ends || m.transport.allFiniteStemsFinished {
          advanceDeadline = Date().addingTimeInterval(1)
          return false
        }
        if m.transport.state == .paused {
          // Paused at the very end is the end: one more step to see it.
          if pausedSeen { throw CommandError("wait end: the transport was paused before the end") }
          pausedSeen = true
        }
        return false
      }, step: 0.005)
    try waitFor(waiter)
  }
}
