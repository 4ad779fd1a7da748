import CLiblo
import Foundation
import StemdeckControl
import StemdeckLive
import StemdeckSession
import StemdeckText

/// One OSC message being answered (`OSCServer.handle`): the parts of its address after
/// `/stemdeck`, the readers of its arguments every address shares (with their refusals' words),
/// and the addresses that need nothing of the server's own state: the transport, the setlist, the
/// master, sends and the strips' controls (from the table, StripParameter.swift). Each answers a
/// reply, or nil for a value set without error; docs/remote-control.md lists the addresses.
package struct OSCRequest {
  package typealias Reply = (ok: Bool, text: String)

  package let message: OSCMessage
  package let console: Console
  /// `/stemdeck/stem/drums/vol` → `stem`, `drums`, `vol`.
  package let parts: [String]
  package var path: String { message.path }

  package init(_ message: OSCMessage, _ console: Console) {
    self.message = message
    self.console = console
    parts = message.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst(2).map(String.init)
  }

  /// The answer to an address stemdeck does not have.
  package var unknown: Reply {
    (false, "unknown address \(path) (see docs/remote-control.md for stemdeck's OSC addresses; /stemdeck/cmd s runs any command)")
  }

  // MARK: - Arguments

  /// nil when the message's type tags are `,` + `tags`; else why not (`what` says what it takes).
  package func expect(_ tags: String, _ what: String) -> String? {
    message.typeTags == "," + tags ? nil : "\(path) takes \(what) (type tags ,\(tags)); got \(message.typeTags)"
  }

  /// One number (`,f`, `,i` or `,d`; not NaN), `what` naming it in the refusal.
  package func number(_ what: String) -> Result<Double, OSCServer.Refusal> {
    let a = message.arguments
    guard a.count == 1, let v = a[0].number, a[0].tag != "T", a[0].tag != "F" else {
      return .failure(.init("\(path) takes one number, \(what) (type tag ,f, ,i or ,d); got \(message.typeTags)"))
    }
    guard !v.isNaN else { return .failure(.init("\(path): \(what) must be a number, not NaN")) }
    return .success(v)
  }

  /// A switch: 1 (or no argument) on, 0 off.
  package func flag() -> Result<Bool, OSCServer.Refusal> {
    let a = message.arguments
    if a.isEmpty { return .success(true) }
    guard a.count == 1, let v = a[0].number, !v.isNaN, v == 0 || v == 1 else {
      let given = a.count == 1 ? a[0].number.map { " with \(NumberFormat.plain($0))" } ?? "" : ""
      return .failure(.init("\(path) takes 1 (on) or 0 (off) (type tag ,i, ,f, ,T or ,F); got \(message.typeTags)" + given))
    }
    return .success(v == 1)
  }

  /// A button's press: nil when there is no argument or a 1, else the refusal.
  package func button() -> Reply? {
    let a = message.arguments
    if a.isEmpty || (a.count == 1 && a[0].number == 1) { return nil }
    return (false, "\(path) takes no arguments (or 1, as a button sends); got \(message.typeTags)")
  }

  /// Runs a command's words as the REPL would: its errors if refused; its output only if `reply`.
  package func run(_ words: [String], reply: Bool = false) -> Reply? {
    let r = console.runCaptured(words)
    if !r.ok { return (false, r.errors.isEmpty ? "the command failed" : r.errors.joined(separator: "; ")) }
    return reply ? (true, r.output.joined(separator: "\n")) : nil
  }

  /// A level in dB as a command's words: `-inf` is 0 (off), else `VALUEdB`.
  package static func decibels(_ v: Double) -> String { v == -.infinity ? "0" : NumberFormat.plain(v) + "dB" }

  // MARK: - Addresses

  /// `/stemdeck/transport/play|pause|stop` (a button) and `/stemdeck/transport/locate SECONDS`.
  package func transport() -> Reply? {
    switch parts[1] {
    case "play", "pause", "stop":
      if let refusal = button() { return refusal }
      return run([parts[1]])
    case "locate":
      switch number("the position in seconds") {
      case .failure(let r): return (false, r.text)
      case .success(let v):
        guard v >= 0, v.isFinite else { return (false, "\(path): the position must be 0 or more seconds (got \(NumberFormat.plain(v)))") }
        return run(["seek", NumberFormat.plain(v)])
      }
    default: return unknown
    }
  }

  /// `/stemdeck/next`, `/stemdeck/prev` (no argument, or a button's 1; its release, 0, does
  /// nothing) and `/stemdeck/goto` (a song number from 1, ,i or ,f, or its name, ,s; or a mark's
  /// name and where the jump lands, ,ss chorus bar): the setlist's commands of those names (also
  /// as `/stemdeck/song/next` …) and the mark's jump. Answered only when refused.
  package func song(_ verb: String) -> Reply? {
    let a = message.arguments
    if verb == "goto", a.count == 2, case .string(let name) = a[0], case .string(let landing) = a[1] {
      return run(["goto", name, landing])
    }
    if verb == "goto" {
      guard a.count == 1 else {
        return (
          false, "\(path) takes the song: its number from 1 (,i) or its name (,s), or a mark and now|bar|end (,ss); got \(message.typeTags)"
        )
      }
      if case .string(let name) = a[0] { return run(["goto", name]) }
      guard let n = a[0].number, n.isFinite, n == n.rounded(), n >= 1, n <= 1_000_000 else {
        return (false, "\(path): the song number must be a whole number from 1; got \(message.typeTags)")
      }
      return run(["goto", String(Int(n))])
    }
    if a.count == 1, a[0].number == 0 { return nil }  // a button's release
    if let refusal = button() { return refusal }
    return run([verb])
  }

  /// `/stemdeck/scene/recall NAME [FADE]`: the scene (,s) and a fade in seconds (,f, ,d or ,i).
  package func sceneRecall() -> Reply? {
    let a = message.arguments
    guard (1...2).contains(a.count), case .string(let name) = a[0] else {
      return (false, "\(path) takes the scene's name (,s) and a fade in seconds (,f), e.g. ,sf chorus 2; got \(message.typeTags)")
    }
    guard a.count == 2 else { return run(["scene", "recall", name]) }
    guard let fade = a[1].number, fade.isFinite, fade >= 0 else {
      return (false, "\(path): the fade must be a number of seconds, 0 or more; got \(message.typeTags)")
    }
    return run(["scene", "recall", name] + (fade > 0 ? ["fade", NumberFormat.plain(fade)] : []))
  }

  /// `/stemdeck/master/vol DB` (`-inf`: off).
  package func masterVolume() -> Reply? {
    switch number("the master level in dB") {
    case .failure(let r): return (false, r.text)
    case .success(let v): return run(["master", Self.decibels(v)])
    }
  }

  /// `/stemdeck/send/STRIP/SEND dB` (`-inf`: off) and `/stemdeck/return/SEND dB`: the `send`
  /// command's.
  package func sendLevel() -> Reply? {
    switch number("the level in dB") {
    case .failure(let r): return (false, r.text)
    case .success(let v):
      guard v != .infinity else { return (false, "\(path): the level must be at most +6 dB (got inf)") }
      if parts[0] == "return" { return run(["send", "return", parts[1], Self.decibels(v)]) }
      guard v != -.infinity else { return run(["send", parts[1], parts[2], "off"]) }
      // A fader moves the level; the tap point stays what it is (post for a new level).
      let aux = console.mixer.sends.all.first { $0.name == parts[2] }
      let pre = aux?.levels[parts[1]]?.preFader ?? false
      return run(["send", parts[1], parts[2], NumberFormat.plain(v) + "dB", pre ? "pre" : "post"])
    }
  }

  /// `/stemdeck/KIND/NAME/WORD VALUE`: a strip control of the table on the stems, buses or
  /// inputs NAME names (a name, `all`, or an OSC pattern).
  package func stripControl() -> Reply? {
    let names: [String]
    switch Self.strips(matching: parts[1], kind: parts[0], console.mixer) {
    case .failure(let r): return (false, r.text)
    case .success(let n): names = n
    }
    let kind = StripKind(rawValue: parts[0]) ?? .stem
    guard let control = StripParameter.osc(parts[2]) else {
      return (false, "unknown address \(path): a \(parts[0])'s addresses are \(StripParameter.oscAddresses(on: kind))")
    }
    let words: (String) -> [String]
    switch control.value {
    case .gain:
      switch number("the level in dB") {
      case .failure(let r): return (false, r.text)
      case .success(let v):
        guard v != .infinity else { return (false, "\(path): the level must be at most +6 dB (got inf)") }
        words = { [control.word, $0, Self.decibels(v)] }
      }
    case .number(let what):
      switch number(what) {
      case .failure(let r): return (false, r.text)
      case .success(let v): words = { [control.word, $0, NumberFormat.plain(v)] }
      }
    case .toggle:
      switch flag() {
      case .failure(let r): return (false, r.text)
      case .success(let on): words = { [(on ? "" : "un") + control.word, $0] }
      }
    }
    // The value is the same for every strip a pattern names: a refused one stops at the first.
    for n in names {
      if let refusal = run(words(n)) { return refusal }
    }
    return nil
  }

  /// The strips an address names: one by name ("all" for all), or an OSC pattern (`*`, `?`,
  /// `[…]`, `{…}`) matched by liblo.
  package static func strips(matching name: String, kind: String, _ mixer: Mixer) -> Result<[String], OSCServer.Refusal> {
    let names = kind == "bus" ? mixer.buses.names : kind == "input" ? mixer.inputs.names : mixer.stems.names
    let plural = kind == "bus" ? "buses" : kind + "s"
    if name == "all" {
      // The commands' `all` means every stem; buses and inputs are named one by one.
      return names.isEmpty ? .failure(.init("no \(plural) to change")) : .success(kind == "stem" ? ["all"] : names)
    }
    if name.contains(where: { "*?[]{}".contains($0) }) {
      let matched = names.filter { lo_pattern_match($0, name) != 0 }
      return matched.isEmpty ? .failure(.init("no \(kind) matches the pattern '\(name)'")) : .success(matched)
    }
    return .success([name])  // an unknown name is refused by the command, with a suggestion
  }
}
