import Foundation
import StemdeckControl
import StemdeckSession
import StemdeckText

// `plugins` and `insert`: LV2 effects hosted through lilv on any strip (PluginHost.swift,
// Mixer+Inserts.swift). docs/architecture.md, *Plugin inserts*.

extension CommandTable {
  package static let insertCommands: [CommandSpec] = [
    CommandSpec(
      name: "plugins", usage: "plugins [FILTER]",
      summary: "installed LV2 effects (name, URI, class, audio ins/outs, realtime safe); FILTER matches name, URI or class",
      details: """
        Read through lilv once (the first call reads every bundle), then kept.
        rt: 'yes' when the plugin declares lv2:hardRTCapable; others are refused live unless forced.
        A plugin needing a feature stemdeck lacks is listed with 'needs FEATURE'.
        """,
      argumentCount: 0...1
    ) { (c, a) throws(CommandError) in
      let filter = a.first?.lowercased()
      let found = PluginHost.shared.plugins().filter { p in
        guard let filter else { return true }
        return p.name.lowercased().contains(filter) || p.uri.lowercased().contains(filter) || p.className.lowercased().contains(filter)
      }
      for line in Display.pluginsTable(found, filtered: filter != nil) { c.write(line) }
    },
    insertCommand
  ]

  package static let insertUsage =
    "insert add STRIP PLUGIN [at N] [force] | remove STRIP N | move STRIP N TO | bypass STRIP N [on|off] | list STRIP | params STRIP N | set STRIP N SYMBOL VALUE | preset STRIP N [NAME | save NAME]"

  package static let insertCommand = CommandSpec(
    name: "insert", usage: "insert add|remove|move|bypass|list|params|set|preset STRIP …",
    summary: "LV2 plugin inserts on a stem, bus, live input or the master (after the EQ, before the fader)",
    details: """
      insert add drums "Simple amplifier"   by name (a unique part will do) or URI; 'at N' places it
      insert add master URI force      a plugin not declared realtime safe, live, at your own risk
      insert list drums                the strip's inserts in order (B: bypassed, ?: plugin missing)
      insert params drums 1            every control: symbol, range, default, unit, value
      insert set drums 1 gain -6       a control by symbol, checked against its range
      insert set verb 1 impulse FILE   a file parameter (params lists them): the plugin loads it
      insert bypass drums 1 [on|off]   pass audio by (toggles without on/off)
      insert move drums 2 1            reorder;  insert remove drums 1
      insert preset drums 1            the plugin's LV2 presets; 'insert preset drums 1 NAME' loads one
      insert preset drums 1 save NAME  its control values as a preset in ~/.lv2 (any LV2 host reads it)
      A mono plugin on a stereo strip runs as two linked instances (one per side).
      """,
    completions: [.keyword(["add", "remove", "move", "bypass", "list", "params", "set", "preset"]), .strip],
    accessWhenGiven: ["add": .rig, "remove": .rig, "move": .rig], accessOfArguments: insertAccess
  ) { (c, a) throws(CommandError) in
    let usage = CommandError("insert: usage: " + insertUsage)
    guard a.count >= 2 else { throw usage }
    let verb = a[0].lowercased(), strip = a[1]
    func position(_ i: Int) throws(CommandError) -> Int {
      guard i < a.count else { throw usage }
      return try ValueParser.integer(a[i], "insert position")
    }
    switch verb {
    case "add":
      guard a.count >= 3 else { throw usage }
      var rest = Array(a.dropFirst(3))
      let force = rest.last?.lowercased() == "force"
      if force { rest.removeLast() }
      var at: Int?
      if rest.count == 2, rest[0].lowercased() == "at" {
        at = try ValueParser.integer(rest[1], "insert position")
        rest.removeAll()
      }
      guard rest.isEmpty else { throw usage }
      let added = try c.mixerCall { () throws(MixerError) in try c.mixer.inserts.add(strip, plugin: a[2], at: at, force: force) }
      c.write("\(strip) insert \(added.position): \(added.name ?? added.uri)")
    case "remove":
      guard a.count == 3 else { throw usage }
      let n = try position(2)
      try c.mixerCall { () throws(MixerError) in try c.mixer.inserts.remove(strip, position: n) }
    case "move":
      guard a.count == 4 else { throw usage }
      let from = try position(2), to = try position(3)
      try c.mixerCall { () throws(MixerError) in try c.mixer.inserts.move(strip, from: from, to: to) }
    case "bypass":
      guard (3...4).contains(a.count) else { throw usage }
      let n = try position(2)
      let on = a.count == 4 ? try ValueParser.onOff(a[3], "insert bypass") : nil
      let now = try c.mixerCall { () throws(MixerError) in try c.mixer.inserts.bypass(strip, position: n, on) }
      c.write("\(strip) insert \(n): \(now ? "bypassed" : "active")")
    case "list":
      guard a.count == 2 else { throw usage }
      let list = try c.mixerCall { () throws(MixerError) in try c.mixer.inserts.list(of: strip) }
      if list.isEmpty { c.write("\(strip): no inserts") }
      for x in list {
        let flags = (x.bypass ? "B" : "") + (x.name == nil ? "?" : "")
        let latency = x.latency.map { "  latency \($0) frames" } ?? ""
        c.write("\(x.position)  \(flags.isEmpty ? "-" : flags)  \(x.name ?? "(not installed)")  \(x.uri)\(latency)")
      }
      let delay = try c.mixerCall { () throws(MixerError) in try c.mixer.inserts.compensationDelay(of: strip) }
      if delay > 0 { c.write("compensation: \(strip) is delayed \(delay) frames to meet strips with more latency") }
    case "params":
      guard a.count == 3 else { throw usage }
      let n = try position(2)
      let controls = try c.mixerCall { () throws(MixerError) in try c.mixer.inserts.controls(of: strip, position: n) }
      for line in Display.insertParams(controls) { c.write(line) }
      let files = try c.mixerCall { () throws(MixerError) in try c.mixer.inserts.fileParameters(of: strip, position: n) }
      for f in files { c.write("\(f.parameter.symbol)  file  \(f.path ?? "(not set here)")  \(f.parameter.label) <\(f.parameter.uri)>") }
    case "preset":
      guard a.count >= 3 else { throw usage }
      let n = try position(2)
      try insertPreset(c, strip, n, Array(a.dropFirst(3)), usage: usage)
    case "set":
      guard a.count == 5 else { throw usage }
      let n = try position(2)
      let files = try c.mixerCall { () throws(MixerError) in try c.mixer.inserts.fileParameters(of: strip, position: n) }
      if files.contains(where: { $0.parameter.symbol == a[3] || $0.parameter.uri == a[3] || $0.parameter.label == a[3] }) {
        try c.require(.files, ["insert"] + a)  // the plugin reads the file: not for a surface that may only mix
        try c.mixerCall { () throws(MixerError) in try c.mixer.inserts.setFile(strip, position: n, parameter: a[3], path: a[4]) }
        return
      }
      let v = try ValueParser.number(a[4], "insert value")
      try c.mixerCall { () throws(MixerError) in try c.mixer.inserts.setValue(strip, position: n, symbol: a[3], v) }
    default:
      throw CommandError(
        "insert: unknown action '\(ValueParser.printable(a[0]))' (allowed: add, remove, move, bypass, list, params, set, preset)")
    }
  }
}

extension CommandTable {
  /// The level `insert`'s arguments raise it to (`accessOfArguments`, Access.swift): `.files` for `set STRIP N SYMBOL
  /// FILE` (a control's value is a number: anything else names a file the plugin reads; a file
  /// parameter given a number-like name is refused when it runs, `Console.require`) and `preset
  /// STRIP N save NAME` (it writes a preset bundle in ~/.lv2).
  package static func insertAccess(_ a: [String]) -> CommandAccess {
    guard let verb = a.first?.lowercased() else { return .mix }
    if verb == "set", a.count == 5, (try? ValueParser.number(a[4], "insert value")) == nil { return .files }
    if verb == "preset", a.count >= 4, a[3].lowercased() == "save" { return .files }
    return .mix
  }

  /// `insert preset STRIP N [NAME | save NAME]`: lists, loads or saves a preset.
  package static func insertPreset(_ c: Console, _ strip: String, _ n: Int, _ rest: [String], usage: CommandError) throws(CommandError) {
    if rest.isEmpty {
      let presets = try c.mixerCall { () throws(MixerError) in try c.mixer.inserts.presets(of: strip, position: n) }
      if presets.isEmpty { c.write("\(strip) insert \(n): no presets") }
      for p in presets { c.write("\(p.label)  \(p.uri)") }
    } else if rest[0].lowercased() == "save" {
      guard rest.count == 2 else { throw usage }
      let home = ProcessInfo.processInfo.environment["HOME"] ?? NSHomeDirectory()
      let bundle = try c.mixerCall { () throws(MixerError) in
        try c.mixer.inserts.savePreset(strip, position: n, label: rest[1], directory: (home as NSString).appendingPathComponent(".lv2"))
      }
      c.write("\(strip) insert \(n): preset '\(rest[1])' saved in \(bundle)")
    } else {
      guard rest.count == 1 else { throw usage }
      let label = try c.mixerCall { () throws(MixerError) in try c.mixer.inserts.loadPreset(strip, position: n, preset: rest[0]) }
      c.write("\(strip) insert \(n): preset '\(label)' loaded")
    }
  }
}

extension Display {
  /// The `plugins` table: a row per effect (stable columns, for scripts).
  package static func pluginsTable(_ plugins: [PluginInfo], filtered: Bool) -> [String] {
    if plugins.isEmpty {
      return [filtered ? "no installed LV2 effect matches" : "no LV2 effects are installed (Debian: x42-plugins, swh-lv2, lsp-plugins-lv2)"]
    }
    var rows: [[String]] = [["name", "class", "in", "out", "rt", "uri"]]
    for p in plugins {
      var rt = p.hardRTCapable ? "yes" : "no"
      if let missing = p.missingFeature { rt += " (needs \(missing))" }
      rows.append([p.name, p.className, String(p.audioInputs), String(p.audioOutputs), rt, p.uri])
    }
    var widths = [Int](repeating: 0, count: rows[0].count)
    for r in rows { for (i, cell) in r.enumerated() { widths[i] = max(widths[i], TerminalInfo.displayWidth(cell)) } }
    return rows.map { r in
      r.enumerated().map { i, cell in i == r.count - 1 ? cell : cell.padded(widths[i]) }.joined(separator: "  ")
    }
  }
}

extension Display {
  /// `insert params`: a row per control port.
  package static func insertParams(_ controls: [(PluginControl, Double)]) -> [String] {
    if controls.isEmpty { return ["no control ports"] }
    var rows: [[String]] = [["symbol", "value", "min", "max", "default", "unit", "kind", "name"]]
    for (c, v) in controls {
      var kind = c.properties.joined(separator: ",")
      if !c.scalePoints.isEmpty {
        kind += (kind.isEmpty ? "" : " ") + c.scalePoints.map { "\(NumberFormat.plain($0.value))=\($0.label)" }.joined(separator: "; ")
      }
      rows.append([
        c.symbol, NumberFormat.plain(v), NumberFormat.plain(c.minimum), NumberFormat.plain(c.maximum), NumberFormat.plain(c.defaultValue),
        c.unit.isEmpty ? "-" : c.unit, kind.isEmpty ? "-" : kind, c.name
      ])
    }
    var widths = [Int](repeating: 0, count: rows[0].count)
    for r in rows { for (i, cell) in r.enumerated() { widths[i] = max(widths[i], TerminalInfo.displayWidth(cell)) } }
    return rows.map { r in
      r.enumerated().map { i, cell in i == r.count - 1 ? cell : cell.padded(widths[i]) }.joined(separator: "  ")
    }
  }
}
