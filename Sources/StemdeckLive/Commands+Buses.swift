import StemdeckControl
import StemdeckSession
import StemdeckText

// The `bus` and `route` commands: buses (subgroups) and where each stem and bus goes
// (Mixer+Buses.swift). A bus also answers `vol`, `pan`, `mute`, `solo`, `eq`, `directout` and
// `meters` by its name, as a stem does. docs/architecture.md, *Buses*.

extension CommandTable {
  package static let busUsage = "bus [add NAME [to BUS|master] | remove NAME | NAME]"
  package static let routeUsage = "route SOURCE BUS|master"

  package static let busCommands: [CommandSpec] = [
    CommandSpec(
      name: "bus", aliases: ["buses"], usage: busUsage,
      summary: "buses (subgroups): 'bus add drums_bus', 'bus remove NAME'; 'bus' lists them",
      details: """
        bus add drums_bus            a stereo bus feeding the master (or 'to BUS': another bus)
        route kick drums_bus         send a stem (or a bus) to it; 'route kick master' back
        vol|pan|mute|solo|eq|directout drums_bus …   as for a stem
        bus remove drums_bus         what fed it goes where the bus went (it says where)
        Soloing a bus plays what feeds it; soloing a stem keeps its buses open. A bus's
        direct outs are stemdeck:NAME_L/R (it then leaves its destination). At most 64 buses.
        """,
      argumentCount: 0...4, completions: [.keyword(["add", "remove"]), .bus, .keyword(["to"]), .bus]
    ) { (c, a) throws(CommandError) in
      guard let word = a.first else {
        for line in Display.busLines(c.mixer.buses.statuses(), sends: c.mixer.sends.all) { c.write(line) }
        return
      }
      switch word.lowercased() {
      case "add":
        guard a.count == 2 || (a.count == 4 && a[2].lowercased() == "to") else {
          throw CommandError("bus: usage: bus add NAME [to BUS|master]")
        }
        var settings = BusSettings(name: a[1])
        if a.count == 4 { settings.bus = a[3] == "master" ? nil : a[3] }
        try c.mixerCall { () throws(MixerError) in try c.mixer.buses.add(settings) }
        c.write("bus '\(a[1])' added, feeding \(settings.bus.map { "'\($0)'" } ?? "the master")")
      case "remove", "rm":
        guard a.count == 2 else { throw CommandError("bus: usage: bus remove NAME") }
        let result = try c.mixerCall { () throws(MixerError) in try c.mixer.buses.remove(a[1]) }
        let target = result.destination.map { "bus '\($0)'" } ?? "the master"
        if result.members.isEmpty {
          c.write("bus '\(a[1])' removed")
        } else {
          c.write(
            "bus '\(a[1])' removed; \(result.members.joined(separator: ", ")) now feed\(result.members.count == 1 ? "s" : "") \(target)")
        }
      default:
        guard a.count == 1 else { throw CommandError("bus: usage: " + busUsage) }
        guard let status = c.mixer.buses.statuses().first(where: { $0.settings.name == word }) else {
          throw CommandError(c.mixerError { () throws(MixerError) in _ = try c.mixer.buses.setting(word) })
        }
        for line in Display.busLines([status], sends: c.mixer.sends.all) { c.write(line) }
      }
    },
    CommandSpec(
      name: "route", usage: routeUsage,
      summary: "send a stem, a live input or a bus to a bus, or to the master: 'route kick drums_bus'",
      details: """
        route kick drums_bus      the stem kick now feeds drums_bus (its EQ, fader, meter)
        route mic vox_bus         a live input too (on a bus it follows the transport, as the bus)
        route drums_bus band      buses feed buses; a loop is refused, naming it
        route kick master         back to the master
        route kick                where it goes;  route  the whole graph
        """,
      argumentCount: 0...2, completions: [.stem, .bus]
    ) { (c, a) throws(CommandError) in
      if a.isEmpty {
        for line in Display.graphLines(c.mixer) { c.write(line) }
        return
      }
      if a.count == 1 {
        let target = try c.mixerCall { () throws(MixerError) in try c.mixer.buses.destination(of: a[0]) }
        c.write("\(a[0]) → \(target ?? "master")")
        return
      }
      let target: String? = a[1] == "master" ? nil : a[1]
      try c.mixerCall { () throws(MixerError) in try c.mixer.buses.route(a[0], to: target) }
      c.write("\(a[0]) → \(target ?? "master")")
    }
  ]
}

extension Console {
  /// The console's words for the error `body` throws (or a plain one if it does not).
  package func mixerError(_ body: () throws(MixerError) -> Void) -> String {
    do { try body() } catch { return error.consoleWords }
    return "no such bus"
  }
}

extension Display {
  /// `bus` and `stems`: one line per bus (volume, pan, flags, where it goes, what feeds it, peak).
  package static func busLines(_ buses: [BusStatus], sends: [AuxSend] = []) -> [String] {
    if buses.isEmpty { return ["no buses (add one with 'bus add NAME')"] }
    return buses.map { b in
      let s = b.settings
      var flags = ""
      if s.mute { flags += "M" }
      if s.solo { flags += "S" }
      if !b.audible && !s.mute { flags += "s" }  // silenced by a solo elsewhere
      if s.directOut { flags += "D" }
      if !s.eq.isBypassed { flags += "Q" }
      if b.gliding.any { flags += "G" }
      if s.soloSafe { flags += "L" }
      let peaks = b.meter.channels.map { Display.db($0.peak) }.joined(separator: "/")
      let from = b.members.isEmpty ? "(nothing routed)" : b.members.joined(separator: ", ")
      let to = s.directOut ? "\(s.name)_L/R" : (s.bus ?? "master")
      func dB(_ v: Double) -> String { NumberFormat.fixed(Decibels.fromAmplitude(v), 1) }
      let vol = gliding(reached: b.glidingVolume, setting: s.volume, dB)
      let pan = gliding(reached: b.glidingPan, setting: s.pan, fixed2)
      return "bus \(s.name)  vol \(vol) dB  pan \(pan)"
        + "  \(flags.isEmpty ? "-" : flags)  → \(to)  ← \(from)  peak \(peaks) dB"
        + (sendSummary(sends, stem: s.name).map { "  sends \($0)" } ?? "")
    }
  }

  /// `route` and `routes`: the mixer graph, from the master down (`master ← bass`, then
  /// `  ← bus drums_bus: kick, snare`, nested buses indented further).
  package static func graphLines(_ mixer: Mixer) -> [String] {
    let routing = mixer.buses.routing()
    var lines: [String] = []
    func children(_ bus: String?) -> (buses: [String], stems: [String]) {
      let fed = routing.filter { $0.bus == bus }
      // A stem or input with direct outs goes to its own ports rather than here.
      return (
        fed.filter(\.isBus).map(\.name), fed.filter { !$0.isBus }.map { $0.directOut ? "\($0.name) (direct outs \($0.name)_L/R)" : $0.name }
      )
    }
    func walk(_ name: String, depth: Int) {
      let kids = children(name)
      let out = routing.first { $0.name == name }?.directOut == true ? " (direct outs \(name)_L/R)" : ""
      let indent = String(repeating: "  ", count: depth)
      lines.append(indent + "← bus \(name)\(out)" + (kids.stems.isEmpty ? "" : ": " + kids.stems.joined(separator: ", ")))
      for sub in kids.buses { walk(sub, depth: depth + 1) }
    }
    let top = children(nil)
    lines.append("master" + (top.stems.isEmpty ? "" : " ← " + top.stems.joined(separator: ", ")))
    for bus in top.buses { walk(bus, depth: 1) }
    return lines
  }
}
