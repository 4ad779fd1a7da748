import Foundation

// Who may do what (issue 43; docs/security.md, *Who may do what*). Every command has an access
// level (`CommandSpec.access`, raised by some of its words: `accessWhenGiven`, a `word!`), every
// front end a ceiling (`Surface.ceiling`); `Console.run` compares the two before anything else,
// so a refusal is the same whoever asks, a group's commands are checked as they are queued, and
// a line from a remote surface is checked whole before any of it runs (`Console.refusal`).

/// How much a command can do, from least to most.
package enum CommandAccess: Int, Comparable, Sendable, CaseIterable {
  /// Mix, transport and show: values, queries, play/stop/seek, next/prev/goto, scenes, undo.
  case mix
  /// What can silence the show or lose unsaved changes: quitting, discarding (`new`, any
  /// `word!`), JACK routing and live inputs, direct outs, hiding events, autosave, leading the
  /// JACK transport, MIDI mappings.
  case rig
  /// Reads or writes files: sessions, setlists, stems, effects, takes.
  case files
  /// Takes the terminal: the full-screen views.
  case terminal

  package static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }

  /// Why a command of this level is kept from a surface, as a refusal says it.
  package var what: String {
    switch self {
    case .mix: "changes the mix"
    case .rig:
      "can silence the show or lose unsaved changes (quit, discards, routing, live inputs, events, autosave, transport lead, MIDI mappings)"
    case .files: "reads or writes files"
    case .terminal: "takes the terminal"
    }
  }
}

/// The front end a command comes from: its words in the undo history (`history`), and how far
/// it may reach (`ceiling`).
package enum Surface: String, Sendable {
  /// The prompt and script mode (stdin, `-c`, `--script`): the operator.
  case repl
  /// The mixer view's keys and its `:` line.
  case view
  /// The control socket (`stemdeck ctl`, `--json`): its owner only (0600).
  case socket
  /// OSC: any local user can send a UDP datagram.
  case osc
  /// A MIDI mapping's `do` line: whatever can reach the JACK MIDI port.
  case midi
  /// The web mixer's WebSocket (`--http`): any local user (loopback), or anyone with the token.
  case web

  /// The most a command from here may do; `oscAllowsAll` is `--osc-allow all`.
  package func ceiling(oscAllowsAll: Bool) -> CommandAccess {
    switch self {
    case .repl, .view: .terminal
    case .socket: .files
    case .midi: .rig
    case .osc: oscAllowsAll ? .files : .mix
    case .web: .mix
    }
  }

  /// The surface as a refusal names it.
  package var described: String {
    switch self {
    case .repl: "at the prompt"
    case .view: "in the mixer view"
    case .socket: "over the control socket (it would take the operator's terminal)"
    case .osc: "over OSC (any local user can send to its UDP port; OSC may mix, run the transport and the show)"
    case .midi: "from a MIDI mapping (a mapping may mix, run the transport, the show and the rig, but not touch files)"
    case .web: "from the web mixer (a browser may mix, run the transport and the show)"
    }
  }

  /// How to get more, when there is a way.
  package var remedy: String {
    switch self {
    case .osc: "; start stemdeck with --osc-allow all to allow it (docs/security.md)"
    case .socket: "; run it at stemdeck's prompt"
    default: ""
    }
  }
}

extension CommandSpec {
  /// The level of this command given these arguments: its own, raised by an argument listed in
  /// `accessWhenGiven` (`*`: any argument at all) or by `accessOfArguments`, and a `word!` (it
  /// discards) at least `.rig`.
  package func access(word: String, arguments: [String]) -> CommandAccess {
    var level = access
    if !arguments.isEmpty, let any = accessWhenGiven["*"] { level = max(level, any) }
    for a in arguments { if let raised = accessWhenGiven[a.lowercased()] { level = max(level, raised) } }
    if word.hasSuffix("!") { level = max(level, .rig) }
    if let accessOfArguments { level = max(level, accessOfArguments(arguments)) }
    return level
  }
}

extension Console {
  /// The most the running command's front end may do.
  package var ceiling: CommandAccess { commandSource.ceiling(oscAllowsAll: oscAllowsAll) }

  /// Throws the refusal when `spec` run as `words` is beyond the running front end's ceiling.
  package func checkAccess(_ spec: CommandSpec, _ words: [String]) throws(CommandError) {
    if let refused = Self.refusal(of: words, spec, from: commandSource, ceiling: ceiling) { throw CommandError(refused) }
  }

  /// Throws the refusal when the running command, given as `words`, needs `level` (known only
  /// once it runs: a plugin's file parameter) beyond the front end's ceiling.
  package func require(_ level: CommandAccess, _ words: [String]) throws(CommandError) {
    guard level > ceiling else { return }
    throw CommandError("'\(Self.commandText(words))' \(level.what): refused \(commandSource.described)\(commandSource.remedy)")
  }

  /// Why `words` (a command of `spec`) is beyond `ceiling`, in the words every refusal uses; nil
  /// when it is within it.
  package static func refusal(of words: [String], _ spec: CommandSpec, from surface: Surface, ceiling: CommandAccess) -> String? {
    let level = spec.access(word: words[0].lowercased(), arguments: Array(words.dropFirst()))
    guard level > ceiling else { return nil }
    return "'\(commandText(words))' \(level.what): refused \(surface.described)\(surface.remedy)"
  }

  /// Why `line` may not run from `surface`, or nil: the first command beyond its ceiling, so a
  /// remote line is refused whole before any of it runs. A line that does not parse is left to
  /// the run, which says what is wrong.
  package func refusal(of line: String, from surface: Surface) -> String? {
    Self.refusal(of: line, from: surface, oscAllowsAll: oscAllowsAll)
  }

  package static func refusal(of line: String, from surface: Surface, oscAllowsAll: Bool = false) -> String? {
    guard let commands = try? Tokenizer.commands(in: line) else { return nil }
    let ceiling = surface.ceiling(oscAllowsAll: oscAllowsAll)
    for words in commands {
      guard let first = words.first, let spec = CommandTable.lookup(first.lowercased()) else { continue }
      if let refused = refusal(of: words, spec, from: surface, ceiling: ceiling) { return refused }
      // An `at TIME { … }` body is commands too.
      for body in words.dropFirst() where body.hasPrefix("{") && body.hasSuffix("}") {
        if let inner = refusal(of: String(body.dropFirst().dropLast()), from: surface, oscAllowsAll: oscAllowsAll) { return inner }
      }
    }
    return nil
  }
}
