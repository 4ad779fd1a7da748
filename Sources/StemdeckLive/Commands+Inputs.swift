import StemdeckControl
import StemdeckSession

// Live input channels (issue 22, item 3): `input add|remove` and `inputs`. Once added, an input
// is a strip name for `vol`, `pan`, `mute`, `solo`, `eq` and `meters` (Console.stems accepts it);
// `all` still means every stem. docs/architecture.md, *Live inputs*.

extension CommandTable {
  package static let inputUsage = "input add NAME mono|stereo | input remove NAME|all"

  package static let inputCommands: [CommandSpec] = [
    CommandSpec(
      name: "input", usage: inputUsage,
      summary: "a live input strip: JACK input NAME_in (mono) or NAME_in_L/R (stereo) into the master",
      details: """
        input add mic mono        registers stemdeck:mic_in; 'input add keys stereo' keys_in_L/R
        input remove mic          fades it out (10 ms) and removes its ports
        The input is a strip like a stem's: vol, pan (balance for stereo), mute, solo, eq and
        meters take its name ('all' still means every stem). It plays whatever the transport
        does: pause and stop leave it open, as a console's input channel. Connect a source with
        'connect system:capture_1 mic_in'; the connections are saved with the session.
        """,
      argumentCount: 2...3, completions: [.keyword(["add", "remove"]), .none, .keyword(["mono", "stereo"])],
      accessWhenGiven: ["add": .rig, "remove": .rig]
    ) { (c, a) throws(CommandError) in
      switch a[0].lowercased() {
      case "add":
        guard a.count == 3 else { throw CommandError("input: usage: \(inputUsage)") }
        guard let channels = InputChannels(rawValue: a[2].lowercased()) else {
          throw CommandError("input channels must be mono or stereo (got '\(ValueParser.printable(a[2]))')")
        }
        try c.mixerCall { () throws(MixerError) in try c.mixer.inputs.add(InputSettings(name: a[1], channels: channels)) }
        c.driver?.updateLiveInputs()
        let ports = InputSettings(name: a[1], channels: channels).portNames
        c.write("added input \(a[1]) (\(ports.joined(separator: ", ")))")
      case "remove", "rm":
        guard a.count == 2 else { throw CommandError("input: usage: \(inputUsage)") }
        let names = a[1] == "all" ? c.mixer.inputs.names : [a[1]]
        if names.isEmpty { throw CommandError("there are no live inputs (add one with 'input add NAME mono|stereo')") }
        try c.mixerCall { () throws(MixerError) in for n in names { try c.mixer.inputs.remove(n) } }
        c.driver?.updateLiveInputs()
        c.write("removed input \(names.joined(separator: ", "))")
      default:
        throw CommandError("input: usage: \(inputUsage) (got '\(ValueParser.printable(a[0]))')")
      }
    },
    CommandSpec(
      name: "inputs", usage: "inputs", summary: "list live inputs with their ports, settings and meters", argumentCount: 0...0
    ) { (c, _) throws(CommandError) in
      let inputs = c.mixer.inputs.statuses()
      for line in Display.inputsTable(inputs) { c.write(line) }
      // What each input sends, after the table (its columns stay as they are, for scripts).
      let sends = c.mixer.sends.all
      for input in inputs {
        if let summary = Display.sendSummary(sends, stem: input.settings.name) { c.write("\(input.settings.name) sends \(summary)") }
      }
    }
  ]
}

extension Display {
  /// The `inputs` table: a row per live input (stable columns, for scripts).
  package static func inputsTable(_ inputs: [InputStatus]) -> [String] {
    if inputs.isEmpty { return ["no live inputs (add one with 'input add NAME mono|stereo')"] }
    let header = ["name", "ch", "ports", "vol", "pan", "flags", "eq", "to", "peak dB"]
    var rows: [[String]] = [header]
    for input in inputs {
      let s = input.settings
      var flags = ""
      if s.mute { flags += "M" }
      if s.solo { flags += "S" }
      if s.directOut { flags += "D" }
      if input.gliding.any { flags += "G" }
      if s.soloSafe { flags += "L" }
      let eq = s.eq.enabled && s.eq != EQSettings() ? "on" : "-"
      rows.append([
        s.name, s.channels.rawValue, input.ports.joined(separator: ","),
        gliding(reached: input.glidingVolume, setting: s.volume, volume), gliding(reached: input.glidingPan, setting: s.pan, fixed2),
        flags.isEmpty ? "-" : flags, eq, s.directOut ? "\(s.name)_L/R" : input.destination,
        input.meter.channels.map { db($0.peak) }.joined(separator: "/")
      ])
    }
    var widths = [Int](repeating: 0, count: header.count)
    for r in rows { for (i, cell) in r.enumerated() { widths[i] = max(widths[i], TerminalInfo.displayWidth(cell)) } }
    return rows.map { r in
      r.enumerated().map { i, cell in i == r.count - 1 ? cell : cell.padded(widths[i]) }.joined(separator: "  ")
    }
  }

  /// `meters` lines of the live inputs (all, or the one named).
  package static func inputMeterLines(_ c: Console, only: String?, width: Int?) -> [String] {
    c.mixer.inputs.statuses().filter { only == nil || only == $0.settings.name }.flatMap {
      meterLines($0.settings.name, MixerViewModel.meter($0.meter), width: width)
    }
  }
}
