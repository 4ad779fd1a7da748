import Foundation
import StemdeckJack
import StemdeckSession

/// What happens to an event line (the mixer's and the JACK driver's) before it is shown: a
/// class the user can hide with `events`, and repeated ones of the bursty classes (xruns and
/// disk trouble under load) folded so that a burst gives at most one line a second per kind. README *Events* documents the classes and
/// the folded line's form.
package struct EventGate {
  package enum Class: String, CaseIterable, Sendable {
    case xrun, disk, end, server, transport, record, other

    /// Classes that come in bursts, folded to one line a second. The others are state changes
    /// (the server went away, a song ended), each shown when it happens.
    package var folds: Bool { self == .xrun || self == .disk }

    package var summary: String {
      switch self {
      case .xrun: return "JACK xruns"
      case .disk: return "underruns, slow or unreadable files, bad samples"
      case .end: return "a stem or the song finished"
      case .server: return "the JACK server went away, came back, changed rate"
      case .transport: return "JACK transport follow, auto-pause"
      case .record: return "takes recorded or failed"
      case .other: return "anything else"
      }
    }
  }

  /// The class of an event line, by how it starts (`MixerEvent.description`, `JackDriver.poll`).
  package static func classify(_ line: String) -> Class {
    func starts(_ prefixes: String...) -> Bool { prefixes.contains { line.hasPrefix($0) } }
    if starts("xrun:") { return .xrun }
    if starts("underrun:", "the disk was slow") || (line.hasPrefix("stem '") && !line.hasSuffix("' finished")) { return .disk }
    if starts("all stems finished") || (line.hasPrefix("stem '") && line.hasSuffix("' finished")) { return .end }
    if starts("JACK server", "reconnected to JACK", "reconnect failed", "resuming playback", "the JACK server", "cannot follow the server")
    {
      return .server
    }
    if starts("JACK transport", "paused:") { return .transport }
    if starts("take '", "recording '") { return .record }
    return .other
  }

  /// Repeated events within this many seconds are folded into one line.
  package static let interval = 1.0

  package var shown = Set(Class.allCases)
  /// By repeat key (the line with its digits removed): when one was last written.
  private var lastWritten: [String: Double] = [:]
  /// By repeat key: the latest line held back and how many were.
  private var held: [String: (line: String, count: Int)] = [:]
  private var heldOrder: [String] = []

  /// The lines to write now for the event `line` at time `now` (seconds, monotonic).
  package mutating func admit(_ line: String, now: Double) -> [String] {
    let kind = Self.classify(line)
    guard shown.contains(kind) else { return [] }
    guard kind.folds else { return [line] }
    let key = String(line.unicodeScalars.filter { !CharacterSet.decimalDigits.contains($0) })
    if let last = lastWritten[key], now - last < Self.interval {
      if let h = held[key] { held[key] = (line, h.count + 1) } else { held[key] = (line, 1); heldOrder.append(key) }
      return []
    }
    lastWritten[key] = now
    return [line]
  }

  /// Held lines whose second is over (all of them with `all`), folded: the latest, then
  /// ` [+N more like it]` when more than one was held.
  package mutating func flush(now: Double, all: Bool = false) -> [String] {
    var out: [String] = []
    heldOrder.removeAll { key in
      guard let h = held[key] else { return true }
      guard all || now - (lastWritten[key] ?? 0) >= Self.interval else { return false }
      out.append(h.count > 1 ? "\(h.line) [+\(h.count - 1) more like it]" : h.line)
      lastWritten[key] = now
      held[key] = nil
      return true
    }
    // Keys not seen for a while are forgotten (the table stays small).
    if lastWritten.count > 64 { lastWritten = lastWritten.filter { now - $0.value < Self.interval } }
    return out
  }
}

extension Console {
  /// Shows events through the gate (`events`): hidden classes dropped, repeats folded. Call with
  /// no lines regularly, so folded lines come out when their second is over.
  public func report(_ lines: [String], final: Bool = false) {
    let now = ProcessInfo.processInfo.systemUptime
    var out: [String] = []
    for line in lines { out += eventGate.admit(line, now: now) }
    out += eventGate.flush(now: now, all: final)
    for line in out { writeEvent(line) }
  }

  /// `events [on|off|CLASS…|-CLASS…|+CLASS…]`: on an interactive console the choice is kept
  /// for the next run (`eventsChoicePath`).
  package func eventsCommand(_ args: [String]) throws(CommandError) {
    let all = EventGate.Class.allCases
    if !args.isEmpty {
      eventGate.shown = try Self.eventClasses(args, current: eventGate.shown)
      if interactive, let path = eventsChoicePath, let problem = Self.saveEventsChoice(eventGate.shown, to: path) {
        write("warning: the choice of events cannot be kept for the next run (\(problem))")
      }
    }
    for c in all {
      write(
        "\(c.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0))\(eventGate.shown.contains(c) ? "shown " : "hidden")  \(c.summary)"
      )
    }
  }

  /// The classes `events WORDS…` leaves shown: `on`, `off`, exactly the CLASSes named, or the
  /// current ones with each `-CLASS` hidden and each `+CLASS` shown.
  package static func eventClasses(_ args: [String], current: Set<EventGate.Class>) throws(CommandError) -> Set<EventGate.Class> {
    let all = EventGate.Class.allCases
    let words = args.map { $0.lowercased() }
    if words == ["on"] { return Set(all) }
    if words == ["off"] { return [] }
    func named(_ word: Substring) throws(CommandError) -> EventGate.Class {
      guard let c = EventGate.Class(rawValue: String(word)) else {
        throw CommandError(
          "events: unknown class '\(ValueParser.printable(String(word)))' (allowed: on, off, CLASS…, -CLASS or +CLASS, the classes being \(all.map(\.rawValue).joined(separator: ", ")))"
        )
      }
      return c
    }
    let signed = words.filter { $0.hasPrefix("-") || $0.hasPrefix("+") }
    if signed.isEmpty {
      var chosen = Set<EventGate.Class>()
      for word in words { chosen.insert(try named(word[...])) }
      return chosen
    }
    guard signed.count == words.count else {
      throw CommandError("events: give the classes to show (events xrun disk) or changes (events -xrun +disk), not both")
    }
    var shown = current
    for word in words {
      let c = try named(word.dropFirst())
      if word.hasPrefix("-") { shown.remove(c) } else { shown.insert(c) }
    }
    return shown
  }

  /// Where an interactive console keeps its `events` choice: `$XDG_STATE_HOME/stemdeck/events`.
  package static func defaultEventsChoicePath() -> String { StatePaths.stateDirectory() + "/events" }

  /// The classes kept at `path` (one line: the shown classes, space-separated); nil when there is
  /// no such file or it holds something else (then all are shown, as by default).
  package static func loadEventsChoice(from path: String) -> Set<EventGate.Class>? {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
    let words = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
    var shown = Set<EventGate.Class>()
    for word in words {
      guard let c = EventGate.Class(rawValue: String(word)) else { return nil }
      shown.insert(c)
    }
    return shown
  }

  /// Writes the choice (0600, replaced atomically); the problem when it cannot be, else nil.
  package static func saveEventsChoice(_ shown: Set<EventGate.Class>, to path: String) -> String? {
    let line = EventGate.Class.allCases.filter { shown.contains($0) }.map(\.rawValue).joined(separator: " ") + "\n"
    do {
      try AtomicFile.replace(path, newMode: 0o600) { temporary in
        FileManager.default.createFile(atPath: temporary, contents: Data(line.utf8))
      }
      return nil
    } catch {
      return "\(error)"
    }
  }
}
