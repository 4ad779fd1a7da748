import StemdeckControl
import StemdeckEngine
import StemdeckJack
import StemdeckSession

/// `midi`: JACK MIDI control (docs/architecture.md, *MIDI control*).
extension CommandTable {
  package static let midiCommands: [CommandSpec] = [
    CommandSpec(
      name: "midi",
      usage: "midi [on|off | map SOURCE ACTION | learn ACTION NAME | unmap SOURCE|all | maps | out on|off]",
      summary: "JACK MIDI control: map controllers, notes and pitch bend to stems, buses, inputs, effects and the transport",
      details: """
        midi on | off          register (or remove) the MIDI input port midi_in; it exists anyway
                               while there are mappings or a learn waits
        midi map SOURCE ACTION     SOURCE: cc N [ch C] | note N [ch C] | pc N [ch C] | bend [ch C]
                               (N 0-127, C 1-16; no channel: any; pc: a program change,
                               a press). ACTION:
                                 vol NAME        volume of a stem, bus or input: CC 0 -> -inf,
                                                 100 -> 0 dB, 127 -> +6 dB
                                                 (gain = (CC/100)^2.9; in dB 58 x log10(CC/100));
                                                 vol master: the master fader
                                 pan NAME        pan: 0 left, 64 centre, 127 right
                                 rate NAME       stem rate from pitch bend: 2^((bend-8192)/8192),
                                                 one octave down to one up
                                 sfx fire NAME   fire a sound effect on each press
                                 toggle mute|solo|safe NAME   toggle a stem, bus or input on
                                                 each press (safe: solo-safe)
                                 toggle eq NAME  switch its channel EQ off/on on each press
                                 send NAME SEND  a stem's, bus's or input's level into an aux
                                                 send, as vol (its pre/post tap kept)
                                 insert NAME N SYMBOL  a plugin insert's control across its
                                                 range (logarithmic where the plugin says)
                                 eq low|mid|high NAME    an EQ band's gain from a CC:
                                                 0 -> -18 dB, 64 -> 0 dB, 127 -> +18 dB
                                 play            play/pause on each press
                                 next | prev | stop   the show: the next or previous song
                                                 of the setlist, or stop, on each press
                                 undo | redo     take back (or do again) the last change
                                 scene NAME      recall a scene on each press
                                 do "LINE"       run any command line on each press
                                                 (not those that read or write files)
                               A press is a note on, or a controller rising to 64 or more.
                               vol and pan land at the event's frame, in the same period; a
                               controller that disagrees with the stem does not move it until it
                               reaches or crosses the stem's value (soft takeover). A controller
                               0-31 whose partner 32-63 also sends is read as one 14-bit value
                               (position = MSB + LSB/128). A bus's or an input's vol and pan
                               move on the control thread (within milliseconds, 7-bit, with
                               the same soft takeover); midi out sends the stems' values.
        midi learn ACTION NAME bind the next control moved (a CC; a note for sfx/toggle/play; pitch
                               bend for rate): e.g. midi learn vol drums.  midi learn cancel
        midi unmap SOURCE | all    remove the mappings of a source (e.g. cc 7, note 36 ch 10, bend)
        midi maps              list the mappings (saved in the session's "midi" section)
        midi out on | off      register (or remove) the MIDI output midi_out, which sends the
                               mapped volumes and pans back as their CCs whenever they change
                               (motorised faders, LED rings); saved in the session
        midi                   the port, counts of mappings and of events read
        """,
      argumentCount: 0...9, completions: [.keyword(["on", "off", "map", "learn", "unmap", "maps", "out"])],
      accessWhenGiven: ["on": .rig, "off": .rig, "map": .rig, "learn": .rig, "unmap": .rig, "out": .rig]
    ) { (c, a) throws(CommandError) in
      guard let verb = a.first?.lowercased() else {
        let status = c.driver?.midiStatus ?? (port: false, events: 0)
        let name = c.driver?.clientName ?? "stemdeck"
        let out = c.driver?.midiOutputPort ?? false
        c.write(
          "midi: port \(status.port ? "\(name):midi_in" : "none")  out \(out ? "\(name):midi_out" : "off")  mappings \(c.mixer.midi.mappings.count)  events read \(status.events)  held by takeover \(c.mixer.midi.heldMoves)"
        )
        if let learning = c.mixer.midi.learning {
          c.write("midi: learning \(learning.action.rawValue) \(learning.target): move a control")
        }
        return
      }
      let rest = Array(a.dropFirst())
      switch verb {
      case "on", "off":
        guard rest.isEmpty else { throw CommandError(usage: "midi on|off") }
        c.mixer.midi.setEnabled(verb == "on")
        c.driver?.updateMidiPort()
        let port = c.driver?.midiStatus.port ?? false
        let kept = verb == "off" && c.mixer.midi.portWanted ? " (kept: the session has mappings)" : ""
        c.write((port ? "midi input: \(c.driver?.clientName ?? "stemdeck"):midi_in" : "midi input: none") + kept)
      case "map":
        let (mapping, used) = try MidiWords.source(rest, usage: "midi map SOURCE ACTION")
        let action = try MidiWords.action(Array(rest.dropFirst(used)))
        let full = MidiMapping(
          source: mapping.source, number: mapping.number, channel: mapping.channel,
          action: action.action, target: action.target, send: action.send)
        if let problem = full.problem() { throw CommandError("midi map: \(problem.field) \(problem.message)") }
        try c.mixerCall { () throws(MixerError) in try c.mixer.midi.add(full) }
        c.driver?.updateMidiPort()
        c.write("midi: \(full.description)")
      case "learn":
        if rest.count == 1 && rest[0].lowercased() == "cancel" {
          c.mixer.midi.cancelLearn()
          c.driver?.updateMidiPort()
          c.write("midi learn cancelled")
          return
        }
        let action = try MidiWords.action(rest)
        try c.mixerCall { () throws(MixerError) in
          try c.mixer.midi.learn(action: action.action, target: action.target, send: action.send)
        }
        c.driver?.updateMidiPort()
        let what =
          action.action == .rate
          ? "pitch bend" : action.action.isContinuous || action.action.isEQGain ? "a controller" : "a key or button"
        let named = [action.target, action.send].filter { !$0.isEmpty }.map { " " + $0 }.joined()
        c.write("midi learn: move \(what) to bind it to \(action.action.rawValue)\(named)")
      case "unmap":
        var removed: [MidiMapping] = []
        if rest.count == 1 && rest[0].lowercased() == "all" {
          try c.mixerCall { () throws(MixerError) in removed = try c.mixer.midi.remove { _ in true } }
        } else {
          let (source, used) = try MidiWords.source(rest, usage: "midi unmap SOURCE|all")
          guard used == rest.count else {
            throw CommandError("midi unmap: unexpected '\(ValueParser.printable(rest[used]))' (usage: midi unmap SOURCE|all)")
          }
          try c.mixerCall { () throws(MixerError) in
            removed = try c.mixer.midi.remove {
              $0.source == source.source && $0.number == source.number && (source.channel == nil || $0.channel == source.channel)
            }
          }
          if removed.isEmpty {
            throw CommandError("midi unmap: no mapping on \(source.description.trimmingTrailingAction) ('midi maps' lists them)")
          }
        }
        c.driver?.updateMidiPort()
        for m in removed { c.write("midi: removed \(m.description)") }
      case "out", "feedback":
        guard rest.count <= 1 else { throw CommandError(usage: "midi out on|off") }
        guard let word = rest.first?.lowercased() else {
          c.write("midi out: \(c.mixer.midi.feedback ? "on" : "off")")
          return
        }
        guard word == "on" || word == "off" else {
          throw CommandError("midi out must be on or off (got '\(ValueParser.printable(word))')")
        }
        c.mixer.midi.setFeedback(word == "on")
        c.driver?.updateMidiPort()
        c.write(word == "on" ? "midi feedback: \(c.driver?.clientName ?? "stemdeck"):midi_out" : "midi feedback off")
      case "maps", "list":
        guard rest.isEmpty else { throw CommandError(usage: "midi maps") }
        let maps = c.mixer.midi.mappings
        if maps.isEmpty { c.write("no MIDI mappings ('midi map cc 7 vol NAME', 'midi learn vol NAME')") }
        for m in maps { c.write(m.description) }
      default:
        throw CommandError("midi: unknown action '\(ValueParser.printable(verb))' (on, off, map, learn, unmap, maps, out)")
      }
    }
  ]
}

/// The words of a MIDI source and action.
package enum MidiWords {
  /// `cc N [ch C]`, `note N [ch C]`, `bend [ch C]` at the start of `words`; the words used.
  package static func source(_ words: [String], usage: String) throws(CommandError) -> (MidiMapping, Int) {
    guard let first = words.first?.lowercased() else { throw CommandError(usage: "\(usage)") }
    let source: MidiMapping.Source
    switch first {
    case "cc", "control": source = .cc
    case "note": source = .note
    case "bend", "pitchbend": source = .bend
    case "pc", "program": source = .pc
    default:
      throw CommandError("MIDI source must be cc N, note N, pc N (a program change) or bend (got '\(ValueParser.printable(first))')")
    }
    var used = 1
    var number = 0
    if source != .bend {
      guard words.count > 1 else { throw CommandError("\(source.rawValue) needs its number 0-127 (e.g. \(source.rawValue) 7)") }
      guard let n = Int(words[1]), (0...127).contains(n) else {
        throw CommandError("\(source.rawValue) number \(MidiMapping.numberRule) (got '\(ValueParser.printable(words[1]))')")
      }
      number = n
      used = 2
    }
    var channel: Int?
    if words.count > used, ["ch", "channel"].contains(words[used].lowercased()) {
      guard words.count > used + 1 else { throw CommandError("ch needs a channel 1-16") }
      guard let ch = Int(words[used + 1]), (1...16).contains(ch) else {
        throw CommandError("channel \(MidiMapping.channelRule) (got '\(ValueParser.printable(words[used + 1]))')")
      }
      channel = ch
      used += 2
    }
    return (MidiMapping(source: source, number: number, channel: channel, action: .play, target: ""), used)
  }

  /// `vol NAME`, `pan NAME`, `rate NAME`, `sfx [fire] NAME`, `[toggle] mute|solo|eq NAME`, `play`,
  /// `eq low|mid|high NAME` (or `eqlow NAME` …, as `midi maps` writes them), `send NAME SEND`.
  /// The strip controls' words come from their table (StripParameter.swift): a row with a MIDI
  /// action is mapped by its console word or an alias, a toggle also as `toggle WORD`.
  package static func action(_ words: [String]) throws(CommandError) -> (action: MidiMapping.Action, target: String, send: String) {
    var w = words
    let levels = StripParameter.all.filter { $0.midi != nil && !$0.isToggle }.map(\.word)
    let toggles = StripParameter.all.filter { $0.midi != nil && $0.isToggle }.map(\.word) + ["eq"]
    guard let first = w.first?.lowercased() else {
      let forms = levels.map { "\($0) NAME" } + ["sfx fire NAME", "toggle \(toggles.joined(separator: "|")) NAME"]
      throw CommandError(
        "a MIDI action is missing: \(forms.joined(separator: ", ")), eq low|mid|high NAME, send NAME SEND, play, next, prev, stop, undo, redo, scene NAME or do LINE"
      )
    }
    w.removeFirst()
    let action: MidiMapping.Action
    if let mapped = StripParameter.all.first(where: { $0.midi != nil && ([$0.word] + $0.aliases).contains(first) })?.midi {
      return try target(of: mapped, in: w)
    }
    switch first {
    case "sfx":
      if w.first?.lowercased() == "fire" { w.removeFirst() }
      action = .sfx
    case "toggle":
      guard let what = w.first?.lowercased(), toggles.contains(what) else {
        let choices = toggles.dropLast().joined(separator: ", ") + " or " + toggles[toggles.count - 1]
        throw CommandError("toggle takes \(choices) (e.g. toggle mute bass)")
      }
      w.removeFirst()
      action = StripParameter.all.first { $0.isToggle && $0.word == what }?.midi ?? .eq
    case "play": action = .play
    case "next": action = .next
    case "prev", "previous": action = .prev
    case "stop": action = .stop
    case "undo": action = .undo
    case "redo": action = .redo
    case "scene":
      if w.first?.lowercased() == "recall" { w.removeFirst() }
      action = .scene
    case "do":
      return (.command, try doLine(w), "")
    case "eq":
      guard let band = w.first?.lowercased(), ["low", "mid", "high"].contains(band) else {
        throw CommandError("eq takes a band: eq low|mid|high NAME (a CC sets its gain), or toggle eq NAME")
      }
      w.removeFirst()
      action = band == "low" ? .eqlow : band == "mid" ? .eqmid : .eqhigh
    case "eqlow": action = .eqlow
    case "eqmid": action = .eqmid
    case "eqhigh": action = .eqhigh
    case "send":
      guard w.count == 2 else {
        throw CommandError(
          w.count < 2
            ? "send needs the sending stem, bus or input and the send: send NAME SEND (e.g. send drums verb)"
            : "unexpected '\(ValueParser.printable(w[2]))' after the send's name")
      }
      return (.send, w[0], w[1])
    case "insert":
      guard w.count == 3, let n = Int(w[1]), n >= 1 else {
        throw CommandError("insert needs the strip, the insert's position and the control: insert NAME N SYMBOL (e.g. insert drums 1 gain)")
      }
      return (.insert, w[0], "\(n)/\(w[2])")
    default:
      let known = levels + ["sfx fire"] + toggles.map { "toggle \($0)" }
      throw CommandError(
        "unknown MIDI action '\(ValueParser.printable(first))' (\(known.joined(separator: ", ")), eq low|mid|high, send, play, next, prev, stop, undo, redo, scene NAME, do LINE)"
      )
    }
    return try target(of: action, in: w)
  }

  /// A `do` mapping's command line: the words after `do` (one quoted word, or several), which
  /// must name commands and touch no files (a session file could hold it).
  package static func doLine(_ words: [String]) throws(CommandError) -> String {
    let line = words.joined(separator: " ")
    if let problem = MidiMapping.commandLineProblem(line) { throw CommandError(problem) }
    let commands: [[String]]
    do { commands = try Tokenizer.commands(in: line) } catch { throw CommandError("do: \(error)") }
    for command in commands {
      guard let first = command.first, CommandTable.lookup(first.lowercased()) != nil else {
        throw CommandError("do: unknown command '\(ValueParser.printable(command.first ?? ""))' in '\(ValueParser.printable(line))'")
      }
    }
    // Checked as it will be run: a mapping's line does what a MIDI mapping may (Access.swift).
    if let refused = Console.refusal(of: line, from: .midi) { throw CommandError("do: \(refused)") }
    return line
  }

  /// The name after a MIDI action's words: none for the transport's and the show's presses, one
  /// (an effect for `sfx`, a strip otherwise) for the rest.
  package static func target(
    of action: MidiMapping.Action, in w: [String]
  ) throws(CommandError) -> (
    action: MidiMapping.Action, target: String, send: String
  ) {
    if action.takesNoTarget {
      guard w.isEmpty else { throw CommandError("\(action.rawValue) takes no name (got '\(ValueParser.printable(w[0]))')") }
      return (action, "", "")
    }
    guard w.count == 1 else {
      throw CommandError(
        w.isEmpty
          ? "\(action.rawValue) needs \(action == .sfx ? "an effect" : action == .scene ? "a scene" : "a stem") name"
          : "unexpected '\(ValueParser.printable(w[1]))' after the name")
    }
    return (action, w[0], "")
  }
}

extension String {
  /// A mapping's description without its action words, for "no mapping on cc 7 ch 1".
  fileprivate var trimmingTrailingAction: String {
    split(separator: " ").dropLast().joined(separator: " ")
  }
}

extension Console {
  /// A MIDI press of a show command (`MixerEvent.midiCommand`: `next`, `prev`, `stop`, `undo`,
  /// `redo`, `scene recall NAME`, a `do` line), run as typed at the prompt: it refuses what the
  /// REPL refuses (`next` with unsaved changes in interactive mode), and what it says is shown
  /// as event lines, "midi next: …".
  package func runMidiCommand(_ command: String) {
    // A `do` line from a session file is checked as it was when mapped, whole, before any of it runs.
    if let refused = refusal(of: command, from: .midi) {
      writeEvent("midi \(command): \(refused)")
      return
    }
    // Its own group, always empty: a pedal pressed while the operator has a `begin` open is
    // not captured into it (a `do` line cannot hold a `begin`: commandLineProblem).
    var noGroup: [[String]]?
    // Never parked: run inside a remote request's step (an `sfx fire` waiting in it serves the
    // engine), a `wait` here must not be taken for that request's.
    let outerParkable = parkable
    parkable = false
    defer { parkable = outerParkable }
    let r = from(.midi) { withOwnGroup(&noGroup) { captured { execute(line: command, stopOnError: true) } } }
    for line in r.output { writeEvent("midi \(command): \(line)") }
    if !r.ok { writeEvent("midi \(command): \(r.errors.isEmpty ? "the command failed" : r.errors.joined(separator: "; "))") }
  }
}
