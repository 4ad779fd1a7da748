import Foundation
import StemdeckControl
import StemdeckEngine
import StemdeckJack
import StemdeckSession
import StemdeckText

/// What a command's arguments are, for tab completion.
package enum ArgumentKind: Sendable {
  case stem, stemOrAll, file, port, keyword([String]), command, none
  /// A bus's name, or `master` (Commands+Buses.swift).
  case bus
  /// Any strip's name (a stem, bus or live input) or `master`: where inserts go.
  case strip
}

/// One REPL command: its name, aliases, usage, help text and implementation.
package struct CommandSpec: Sendable {
  package let name: String
  package var aliases: [String] = []
  package let usage: String
  package let summary: String
  package var details: String = ""
  /// Allowed argument counts (nil: the command checks itself).
  package var argumentCount: ClosedRange<Int>?
  package var completions: [ArgumentKind] = []
  /// Who may run it (Access.swift): the level of the command as such, and the levels its
  /// arguments raise it to (`"*"`: any argument; a subcommand's word: `"load": .files`).
  package var access = CommandAccess.mix
  package var accessWhenGiven: [String: CommandAccess] = [:]
  /// The level the arguments raise it to when no single word says it (`insert set STRIP N
  /// SYMBOL FILE`: a value that is not a number names a file).
  package var accessOfArguments: (@Sendable ([String]) -> CommandAccess)? = nil
  package let run: @Sendable (Console, [String]) throws(CommandError) -> Void
}

/// Every command, in the order `help` lists them.
package enum CommandTable {
  package static let all: [CommandSpec] =
    stemCommands + busCommands + inputCommands + sendCommands + transportCommands + clickCommands + cueCommands + markCommands
    + meterCommands
    + effectAndRecordCommands + midiCommands + routingCommands + insertCommands
    + sessionCommands
    + otherCommands

  package static func lookup(_ name: String) -> CommandSpec? {
    all.first { $0.name == name || $0.aliases.contains(name) }
  }

  package static var allNames: [String] { all.flatMap { [$0.name] + $0.aliases } }

  // MARK: Stems

  package static let stemCommands: [CommandSpec] =
    [
      CommandSpec(
        name: "add", usage: "add PATH [as NAME]",
        summary: "add a stem from an audio file (WAV, AIFF, FLAC, Ogg, Opus, MP3)",
        details: """
          The stem joins sample-aligned with the others: at the current position when paused,
          a moment ahead when playing. NAME defaults to the file name without extension.
          Relative paths are relative to the current directory.
          """,
        argumentCount: 1...3, completions: [.file, .keyword(["as"])], access: .files
      ) { (c, a) throws(CommandError) in
        var name: String?
        if a.count > 1 {
          guard a.count == 3, a[1].lowercased() == "as" else { throw CommandError("add: usage: add PATH [as NAME]") }
          name = a[2]
        }
        let path = Console.absolutePath(a[0])
        let stemName = name ?? StemName.derived(fromPath: a[0], taken: c.mixer.stems.names)
        try c.mixerCall { () throws(MixerError) in
          try c.mixer.stems.add(path: path, settings: StemSettings(name: stemName, file: path))
        }
        c.write("added \(stemName)")
      },
      CommandSpec(
        name: "remove", aliases: ["rm"], usage: "remove NAME|all", summary: "remove a stem (it fades out)",
        argumentCount: 1...1, completions: [.stemOrAll]
      ) { (c, a) throws(CommandError) in
        let names = try c.stems(a[0], includeOffline: true)
        try c.mixerCall { () throws(MixerError) in for n in names { try c.mixer.stems.remove(n) } }
        c.write("removed \(names.joined(separator: ", "))")
      },
      CommandSpec(
        name: "stems", aliases: ["ls"], usage: "stems", summary: "list stems with their settings, position and meters",
        argumentCount: 0...0
      ) { (c, _) throws(CommandError) in
        for line in Display.stemsTable(MixerViewModel.stemStrips(c.mixer), width: c.terminalColumns?()) { c.write(line) }
        let buses = c.mixer.buses.statuses()
        if !buses.isEmpty { for line in Display.busLines(buses, sends: c.mixer.sends.all) { c.write(line) } }
        let sends = c.mixer.sends.all
        if !sends.isEmpty { for line in Display.sendLines(sends).map({ $0.hasPrefix(" ") ? $0 : "send " + $0 }) { c.write(line) } }
      }
    ] + stripLevelCommands + [
      CommandSpec(
        name: "mode", usage: "mode NAME|all varispeed|stretch [fine|fast]",
        summary: "varispeed: rate changes pitch too (tape); stretch: rate changes tempo only (Rubber Band; 'fast': light)",
        details: """
          stretch fine (the default): Rubber Band R3, the best sound, about 4 % of a core per stereo stem.
          stretch fast: stemdeck's own WSOLA, pitch as exact, about 0.1 % of a core; a little rougher
          on dense material. A pitch-shifted stem uses Rubber Band whatever the quality.
          """,
        argumentCount: 2...3,
        completions: [.stemOrAll, .keyword(["varispeed", "stretch"]), .keyword(StretchQuality.allCases.map(\.rawValue))]
      ) { (c, a) throws(CommandError) in
        guard let mode = RateMode(rawValue: a[1].lowercased()) else {
          throw CommandError("mode must be varispeed or stretch (got '\(ValueParser.printable(a[1]))')")
        }
        var stretch: StretchQuality? = nil
        if a.count == 3 {
          guard mode == .stretch else {
            throw CommandError("mode: a quality (\(ValueParser.printable(a[2]))) goes with stretch only: mode NAME stretch fine|fast")
          }
          guard let quality = StretchQuality(rawValue: a[2].lowercased()) else {
            throw CommandError("stretch quality must be fine or fast (got '\(ValueParser.printable(a[2]))')")
          }
          stretch = quality
        }
        try c.each(a[0]) { (n: String) throws(MixerError) in try c.mixer.stems.setMode(n, mode, stretch: stretch) }
      },
      CommandSpec(
        name: "pitch", usage: "pitch NAME|all SEMITONES", summary: "pitch shift −24…24 semitones (stretch mode)",
        argumentCount: 2...2, completions: [.stemOrAll]
      ) { (c, a) throws(CommandError) in
        let v = try ValueParser.number(a[1], "pitch")
        try c.each(a[0]) { (n: String) throws(MixerError) in try c.mixer.stems.setPitch(n, v) }
      },
      CommandSpec(
        name: "glide", usage: "glide cancel NAME|all", summary: "stop a strip's glides where they are",
        argumentCount: 2...2, completions: [.keyword(["cancel"]), .stemOrAll]
      ) { (c, a) throws(CommandError) in
        guard a[0].lowercased() == "cancel" else {
          throw CommandError("glide: usage: glide cancel NAME|all (start a glide with 'vol NAME VALUE over TIME')")
        }
        try c.each(a[1]) { (n: String) throws(MixerError) in try c.mixer.strips.cancelGlides(n) }
      },
      CommandSpec(
        name: "loops", usage: "loops NAME|all N", summary: "0 plays once, N plays N+1 times, -1 loops forever",
        argumentCount: 2...2, completions: [.stemOrAll]
      ) { (c, a) throws(CommandError) in
        let v = try ValueParser.integer(a[1], "loops")
        try c.each(a[0]) { (n: String) throws(MixerError) in try c.mixer.stems.setLoops(n, v) }
      }
    ] + stripToggleCommands + [
      CommandSpec(
        name: "loop", usage: "loop NAME START END [xfade TIME] | loop NAME off",
        summary: "loop a region of the stem's file (seconds or m:ss), with an optional equal-power crossfade",
        details: "'loop drums 1.25 9.25 xfade 5ms' loops 1.25 s to 9.25 s of drums, crossfading 5 ms at the seam.",
        argumentCount: 2...5, completions: [.stemOrAll, .keyword(["off"])]
      ) { (c, a) throws(CommandError) in
        if a.count == 2 {
          guard a[1].lowercased() == "off" else { throw CommandError("loop: usage: loop NAME START END [xfade TIME] | loop NAME off") }
          try c.each(a[0]) { (n: String) throws(MixerError) in try c.mixer.stems.setLoopRegion(n, start: nil, end: nil, crossfade: 0) }
          return
        }
        guard a.count == 3 || (a.count == 5 && a[3].lowercased() == "xfade") else {
          throw CommandError("loop: usage: loop NAME START END [xfade TIME] | loop NAME off")
        }
        let start = try ValueParser.position(a[1]), end = try ValueParser.position(a[2])
        guard !start.relative, !end.relative else { throw CommandError("loop: start and end are positions in the file (no + or -)") }
        let xfade = a.count == 5 ? try ValueParser.duration(a[4]) : 0
        try c.each(a[0]) { (n: String) throws(MixerError) in
          try c.mixer.stems.setLoopRegion(n, start: start.seconds, end: end.seconds, crossfade: xfade)
        }
      },
      CommandSpec(
        name: "xfade", usage: "xfade NAME TIME", summary: "set the crossfade at a stem's loop-region seam (e.g. 5ms; 0 for none)",
        argumentCount: 2...2, completions: [.stemOrAll]
      ) { (c, a) throws(CommandError) in
        let xfade = try ValueParser.duration(a[1])
        for n in try c.stems(a[0]) {
          let s: StemStatus
          do { s = try c.mixer.stems.status(n) } catch { throw CommandError(consoleWords(error)) }
          guard let start = s.settings.loopStart, let end = s.settings.loopEnd else {
            throw CommandError("xfade: '\(n)' has no loop region (set one with 'loop \(n) START END')")
          }
          try c.mixerCall { () throws(MixerError) in try c.mixer.stems.setLoopRegion(n, start: start, end: end, crossfade: xfade) }
        }
      },
      CommandSpec(
        name: "offset", usage: "offset NAME SECONDS", summary: "when a stem starts on the transport (applies at the next seek/stop)",
        argumentCount: 2...2, completions: [.stemOrAll]
      ) { (c, a) throws(CommandError) in
        // A negative number reaches the mixer, which refuses it with the start offset's range.
        let v = a[1].hasPrefix("-") ? try ValueParser.number(a[1], "start offset") : try ValueParser.duration(a[1])
        try c.each(a[0]) { (n: String) throws(MixerError) in try c.mixer.stems.setStartOffset(n, v) }
      },
      CommandSpec(
        name: "directout", usage: "directout NAME|all on|off",
        summary: "give a stem its own JACK outputs NAME_L/NAME_R (instead of the master)",
        argumentCount: 2...2, completions: [.stemOrAll, .keyword(["on", "off"])], access: .rig
      ) { (c, a) throws(CommandError) in
        let on = try ValueParser.onOff(a[1], "directout")
        try c.each(a[0]) { (n: String) throws(MixerError) in try c.mixer.strips.setDirectOut(n, on) }
      },
      CommandSpec(
        name: "master", usage: "master VALUE", summary: "master volume: linear 0…2 or dB",
        argumentCount: 1...2
      ) { (c, a) throws(CommandError) in
        let v = try ValueParser.volume(a.joined())
        try c.mixerCall { () throws(MixerError) in try c.mixer.master.setVolume(v) }
      },
      CommandSpec(
        name: "quality", usage: "quality linear|fast|medium|best",
        summary: "resampler quality for rate and sample-rate conversion (default fast)",
        argumentCount: 0...1, completions: [.keyword(ResamplerQuality.allCases.map(\.rawValue))]
      ) { (c, a) throws(CommandError) in
        guard let word = a.first else { c.write("quality: \(c.mixer.quality.rawValue)"); return }
        guard let q = ResamplerQuality(rawValue: word.lowercased()) else {
          throw CommandError("quality must be one of linear, fast, medium, best (got '\(ValueParser.printable(word))')")
        }
        try c.mixerCall { () throws(MixerError) in try c.mixer.setQuality(q) }
      },
      eqCommand
    ]

  // MARK: Transport

  package static let transportCommands: [CommandSpec] = [
    CommandSpec(name: "play", usage: "play", summary: "start the transport (all stems on the same frame)", argumentCount: 0...0) {
      (c, _) throws(CommandError) in
      try c.mixerCall { () throws(MixerError) in try c.mixer.transport.play() }
      c.settleTransport()
    },
    CommandSpec(name: "pause", usage: "pause", summary: "stop where it is (with a 5 ms fade)", argumentCount: 0...0) {
      (c, _) throws(CommandError) in
      try c.mixerCall { () throws(MixerError) in try c.mixer.transport.pause() }
      c.settleTransport()
    },
    CommandSpec(name: "stop", usage: "stop", summary: "stop and rewind to 0", argumentCount: 0...0) { (c, _) throws(CommandError) in
      try c.mixerCall { () throws(MixerError) in try c.mixer.transport.stop() }
      c.settleTransport()
    },
    CommandSpec(
      name: "tempo", usage: "tempo [BPM [BEATS_PER_BAR] | off]",
      summary: "the session's tempo, for bar positions (seek bar 17.1) and JACK transport",
      argumentCount: 0...2, completions: [.keyword(["off"])]
    ) { (c, a) throws(CommandError) in
      guard let first = a.first else {
        c.write(c.mixer.tempo.map { "tempo: \(NumberFormat.plain($0.bpm)) bpm, \($0.beatsPerBar) beats per bar" } ?? "tempo: off")
        return
      }
      if first.lowercased() == "off" { c.mixer.tempo = nil; return }
      let bpm = try ValueParser.number(first, "tempo")
      guard SettingRule.bpm.accepts(bpm) else { throw CommandError(SettingRule.bpm.refusal("tempo", got: bpm)) }
      var beats = c.mixer.tempo?.beatsPerBar ?? 4
      if a.count == 2 {
        beats = try ValueParser.integer(a[1], "beats per bar")
        guard SettingRule.beatsPerBar.accepts(beats) else {
          throw CommandError(SettingRule.beatsPerBar.refusal("beats per bar", got: String(beats)))
        }
      }
      c.mixer.tempo = Tempo(bpm: bpm, beatsPerBar: beats)
    },
    CommandSpec(
      name: "seek", usage: "seek POSITION | seek bar N[.BEAT]", summary: "go to 1:23.5, 83.5, +10 or -5 (relative), or to a bar",
      details: "Each stem keeps its own loop phase; playback resumes when every stem has audio.",
      argumentCount: 1...2, completions: [.keyword(["bar"])]
    ) { (c, a) throws(CommandError) in
      if a.count == 2 {
        guard a[0].lowercased() == "bar" else { throw CommandError("seek: usage: seek POSITION | seek bar N[.BEAT]") }
        let seconds = try c.barTime(a[1])
        try c.mixerCall { () throws(MixerError) in try c.mixer.transport.seek(toSeconds: seconds) }
        c.settleTransport()
        return
      }
      let p = try ValueParser.position(a[0])
      let target = p.relative ? c.mixer.transport.position + p.seconds : p.seconds
      try c.mixerCall { () throws(MixerError) in try c.mixer.transport.seek(toSeconds: max(0, target)) }
      c.settleTransport()
    },
    CommandSpec(name: "status", usage: "status", summary: "transport, position, sample rate, load, xruns, server", argumentCount: 0...0) {
      (c, _) throws(CommandError) in
      for line in Display.status(c) { c.write(line) }
    },
    CommandSpec(
      name: "begin", usage: "begin", summary: "start a group of changes that land on one frame (then 'commit')",
      details: """
        Until 'commit', vol, pan, rate, mute, solo, safe (and their un-), master, glide and eq are held.
        commit                  apply them all at the start of the next period
        commit at 1:23.5        … when the transport reaches 1:23.5
        commit at bar 33        … at bar 33 (needs a tempo)
        commit at next-loop STEM  … at the stem's next loop seam
        abort                   forget the group
        On one line: at next-loop drums { vol bass 0; unmute lead }
        """,
      argumentCount: 0...0
    ) { (c, _) throws(CommandError) in
      if c.pendingGroup != nil { throw CommandError("a group is already open ('commit' or 'abort' it)") }
      c.pendingGroup = []
    },
    CommandSpec(
      name: "commit", usage: "commit [now|at POSITION|at bar N|at next-loop STEM]", summary: "apply the open group on one frame",
      argumentCount: 0...3, completions: [.keyword(["now", "at"])]
    ) { (c, a) throws(CommandError) in
      guard let group = c.pendingGroup else { throw CommandError("no group is open (start one with 'begin')") }
      var words = a
      if words.first?.lowercased() == "at" { words.removeFirst() }
      let when = try c.landingTime(words)
      c.pendingGroup = nil
      try c.commitGroup(group, at: when)
    },
    CommandSpec(
      name: "at", usage: "at POSITION { CMD; CMD }", summary: "apply changes together at a time: m:ss, seconds, bar N, next-loop STEM",
      argumentCount: 2...4, completions: [.keyword(["next-loop", "bar"])]
    ) { (c, a) throws(CommandError) in
      try c.runAt(a)
    },
    CommandSpec(name: "abort", usage: "abort", summary: "forget the open group", argumentCount: 0...0) { (c, _) throws(CommandError) in
      guard let group = c.pendingGroup else { throw CommandError("no group is open") }
      c.pendingGroup = nil
      c.write("dropped \(group.count) queued change\(group.count == 1 ? "" : "s")")
    },
    CommandSpec(
      name: "latency", usage: "latency", summary: "measure how many JACK periods a command takes to reach the audio thread",
      argumentCount: 0...0
    ) { (c, _) throws(CommandError) in
      let d = try c.jack()
      var samples: [Int] = []
      for _ in 0..<10 {
        let p0 = d.periods
        let sent: Int
        do { sent = try c.mixer.engine.probeCommand() } catch { throw CommandError(consoleWords(error)) }
        let deadline = Date().addingTimeInterval(1)
        while c.mixer.engine.commandCounts.applied < sent && Date() < deadline { usleep(100) }
        guard c.mixer.engine.commandCounts.applied >= sent else {
          throw CommandError("latency: the audio thread did not answer within 1 s")
        }
        samples.append(d.periods - p0)
        usleep(7_000)
      }
      let worst = samples.max() ?? 0
      let ms = Double(worst) * Double(d.bufferSize) / Double(max(1, d.sampleRate)) * 1000
      c.write(
        "latency: a command reached the audio thread within \(worst) period\(worst == 1 ? "" : "s") (worst of 10; \(NumberFormat.fixed(ms, 1)) ms at \(d.bufferSize) frames)"
      )
    },
    CommandSpec(
      name: "wait", usage: "wait SECONDS|end", summary: "let audio play: for a time, or until every finite stem has finished",
      argumentCount: 1...1, completions: [.keyword(["end"])]
    ) { (c, a) throws(CommandError) in
      if a[0].lowercased() == "end" { try c.waitForEnd(); return }
      let seconds = try ValueParser.duration(a[0])
      guard seconds <= 86400 else { throw CommandError("wait: at most 86400 seconds (got \(NumberFormat.plain(seconds)))") }
      try c.wait(seconds: seconds)
    }
  ]

  // MARK: Meters

  package static let meterCommands: [CommandSpec] = [
    CommandSpec(
      name: "meters", usage: "meters [NAME|master|input|reset] [--watch]",
      summary: "peak / average dB per channel, peak hold and clips",
      argumentCount: 0...2, completions: [.stem], accessWhenGiven: ["--watch": .terminal]
    ) { (c, a) throws(CommandError) in
      if a.count == 2 && !a.contains("--watch") {
        throw CommandError("meters: usage: meters [NAME|master|input|reset] [--watch] (one name at a time)")
      }
      if a.contains("--watch") {
        c.watchRequested = true; if !c.interactive { for l in Display.meters(c, only: nil) { c.write(l) } }; return
      }
      if a.first == "reset" { c.mixer.resetMeters(); c.write("meters reset"); return }
      let only = a.first
      // A stem, bus or live input, or a send's return (`meters verb`).
      if let only, only != "master", only != "input", !c.mixer.sends.all.contains(where: { $0.name == only }) { _ = try c.stems(only) }
      for line in Display.meters(c, only: only, width: c.terminalColumns?()) { c.write(line) }
    },
    CommandSpec(name: "watch", usage: "watch", summary: "live meter view until a key is pressed", argumentCount: 0...0, access: .terminal) {
      (c, _) throws(CommandError) in
      c.watchRequested = true
      if !c.interactive { for l in Display.meters(c, only: nil) { c.write(l) } }
    },
    CommandSpec(
      name: "mixer", usage: "mixer", summary: "full-screen mixer: strips, faders, live meters; keys move faders ('?' lists them)",
      details: """
        Left/Right select a strip, Up/Down move its fader 1 dB (PgUp/PgDn 6 dB), Home 0 dB, End -inf,
        [ ] pan, < > rate, m mute, s solo, 0 unity, space play/pause, Enter stop, u undo,
        ':' runs any command, q or Esc goes back to the prompt. Also: stemdeck --mixer SESSION.
        """,
      argumentCount: 0...0, access: .terminal
    ) { (c, _) throws(CommandError) in
      guard c.interactive else {
        throw CommandError("mixer: the full-screen view needs a terminal (interactive mode); 'stems' and 'meters' print the same values")
      }
      c.mixerRequested = true
    }
  ]

  // MARK: Routing

  package static let routingCommands: [CommandSpec] = [
    CommandSpec(
      name: "ports", usage: "ports [PATTERN]", summary: "list JACK ports (PATTERN is a regular expression)",
      argumentCount: 0...1
    ) { (c, a) throws(CommandError) in
      let list = try c.jackCall { (d: JackDriver) throws(JackError) in try d.ports(matching: a.first) }
      if list.isEmpty { c.write("no ports match"); return }
      for p in list {
        let dir = p.isOutput ? "out" : "in "
        // The arrow is the signal's direction: an output feeds its peers, an input is fed by them.
        let peers = p.connections.isEmpty ? "" : (p.isInput ? "  ← " : "  → ") + p.connections.joined(separator: ", ")
        c.write("\(dir)  \(p.name)\(peers)")
      }
    },
    CommandSpec(
      name: "connect", usage: "connect SRC DST", summary: "connect two ports (stemdeck's own may be short: master_L)",
      argumentCount: 2...2, completions: [.port, .port], access: .rig
    ) { (c, a) throws(CommandError) in
      try c.jackCall { (d: JackDriver) throws(JackError) in try d.connect(a[0], a[1]) }
    },
    CommandSpec(
      name: "disconnect", usage: "disconnect SRC DST", summary: "disconnect two ports",
      argumentCount: 2...2, completions: [.port, .port], access: .rig
    ) { (c, a) throws(CommandError) in
      try c.jackCall { (d: JackDriver) throws(JackError) in try d.disconnect(a[0], a[1]) }
    },
    CommandSpec(name: "connections", usage: "connections", summary: "stemdeck's port connections", argumentCount: 0...0) {
      (c, _) throws(CommandError) in
      for line in Display.connectionLines(try Display.routes(c, connectedOnly: true)) { c.write(line) }
    },
    CommandSpec(
      name: "routes", usage: "routes", summary: "intended versus actual connections (missing ones heal when the port appears)",
      argumentCount: 0...0
    ) { (c, _) throws(CommandError) in
      for line in Display.routeLines(try Display.routes(c, connectedOnly: false)) { c.write(line) }
      if !c.mixer.buses.names.isEmpty || !c.mixer.inputs.names.isEmpty {
        for line in ["mixer graph:"] + Display.graphLines(c.mixer) { c.write(line) }
      }
      let sends = c.mixer.sends.all
      if !sends.isEmpty { for line in ["sends:"] + Display.sendLines(sends) { c.write(line) } }
    },
    CommandSpec(
      name: "events", usage: "events [on|off|CLASS…|-CLASS…|+CLASS…]",
      summary: "choose which events are shown (repeats are folded to one line a second)",
      details: "Classes: " + EventGate.Class.allCases.map { "\($0.rawValue) (\($0.summary))" }.joined(separator: "; ")
        + ". 'events CLASS…' shows only those; 'events -CLASS' hides one and 'events +CLASS' shows one again;"
        + " 'events on' all (the default), 'events off' none. At the prompt the choice is kept for the next run.",
      argumentCount: 0...99,
      completions: Array(
        repeating: .keyword(["on", "off"] + EventGate.Class.allCases.flatMap { [$0.rawValue, "-" + $0.rawValue, "+" + $0.rawValue] }),
        count: 7), accessWhenGiven: ["*": .rig]
    ) { (c, a) throws(CommandError) in
      try c.eventsCommand(a)
    }
  ]

  // MARK: Other

  package static let otherCommands: [CommandSpec] = [
    CommandSpec(
      name: "help", aliases: ["?"], usage: "help [COMMAND|GROUP]", summary: "list commands, or explain one, or list a group",
      details: """
        GROUP is a heading of the list: stems, buses, inputs, sends, transport, meters, effects,
        midi, routing, session, other ('help group stems' where a command has the same name).
        """,
      argumentCount: 0...2, completions: [.command]
    ) { (c, a) throws(CommandError) in
      var topic = a.first
      if a.count == 2 {
        guard a[0].lowercased() == "group" else { throw CommandError("help: usage: help [COMMAND], help GROUP or help group GROUP") }
        guard Help.group(named: a[1]) != nil else { throw Help.unknownGroup(a[1]) }
        topic = "group " + a[1]
      }
      for line in try Help.text(for: topic, width: c.terminalColumns?()) { c.write(line) }
    },
    CommandSpec(name: "echo", usage: "echo TEXT…", summary: "print text (for scripts)", argumentCount: 0...99) {
      (c, a) throws(CommandError) in
      c.write(a.joined(separator: " "))
    },
    CommandSpec(
      name: "debug", usage: "debug heap", summary: "diagnostic: memory in use (heap after malloc_trim, own resident)",
      details: """
        heap in use    bytes held from glibc's allocator after free pages were handed back
                       (malloc_trim(0), then mallinfo2: in-use blocks plus mmapped blocks)
        own resident   VmRSS minus RssShmem (JACK's shared memory is not stemdeck's own)
        anonymous      RssAnon: heap, thread stacks, anonymous mappings (not code pages)
        For leak hunting: the figures stay flat when the same session is opened again and again.
        Trimming takes the allocator's locks on the control thread only; the audio never waits.
        """,
      argumentCount: 1...1, completions: [.keyword(["heap"])]
    ) { (c, a) throws(CommandError) in
      guard a[0].lowercased() == "heap" else { throw CommandError("debug: unknown diagnostic '\(a[0])' (there is: heap)") }
      let m = ProcessMemory.measure()
      c.write("heap in use: \(m.heapInUse) bytes (\(NumberFormat.fixed(Double(m.heapInUse) / 1_048_576, 1)) MB)")
      for (label, value) in [("own resident", m.ownResident), ("anonymous resident", m.anonymousResident)] {
        if let value {
          c.write("\(label): \(value) bytes (\(NumberFormat.fixed(Double(value) / 1_048_576, 1)) MB)")
        } else {
          c.write("\(label): unknown (/proc/self/status unreadable)")
        }
      }
    },
    CommandSpec(
      name: "quit", aliases: ["exit", "quit!", "exit!", "q"], usage: "quit", summary: "leave stemdeck (quit! discards unsaved changes)",
      argumentCount: 0...0, access: .rig
    ) { (c, _) throws(CommandError) in
      let discard = c.commandWord.hasSuffix("!")
      let remote = c.commandSource != .repl && c.commandSource != .view
      if c.interactive && c.mixer.isDirty && !discard && !remote {
        if let summary = c.unsavedSummary() { c.write(summary) }
        throw CommandError("there are unsaved changes: 'save' them first, or use 'quit!' to discard them")
      }
      // From another program (the socket, OSC with --osc-allow all, a pedal) quit is quit, and
      // nothing is lost: the unsaved changes go to the autosave first (an autosave that fails
      // keeps stemdeck running, and says so), and the operator reads why stemdeck left.
      if remote && !discard && c.mixer.isDirty {
        switch c.live.autosaveNow() {
        case .failed(let target, let reason)?:
          throw CommandError(
            "not quitting: the unsaved changes could not be written to \(target) (\(reason)); 'save PATH' them, or 'quit!' to discard them")
        case .written(let target, let sessionPath)?: c.write(Console.autosavedText(target, sessionPath))
        case nil: break
        }
      }
      // quit! discards the unsaved changes: their autosave too, or every later open offers it back.
      if discard, let path = c.live.path { c.live.discardAutosave(for: path) }
      if remote {
        c.writeEvent(
          "quitting: asked \(c.commandSource.rawValue == "socket" ? "over the control socket" : "from \(c.commandSource.rawValue)")")
      }
      c.quitRequested = true
    }
  ]
}
