import StemdeckControl
import StemdeckJack
import StemdeckEngine
import StemdeckSession
import StemdeckText

// Aux sends and returns (issue 22, item 2): `send add|remove NAME`, `send return NAME VOLUME`,
// `send STRIP NAME LEVEL [pre|post]` / `send STRIP NAME off` (a stem, a bus or a live input), and
// `send`/`sends` to list them.
// docs/architecture.md, *Aux sends*.

extension CommandTable {
  package static let sendUsage =
    "send add NAME | send remove NAME|all | send return NAME VOLUME | send STEM NAME LEVEL [pre|post] | send STEM NAME off | send"

  package static let sendCommands: [CommandSpec] = [
    CommandSpec(
      name: "send", usage: sendUsage,
      summary: "aux sends: JACK outputs NAME_send_L/R fed from stems, buses and inputs, returns NAME_return_L/R into the master",
      details: """
        send add verb             registers stemdeck:verb_send_L/R (not in the master) and the
                                  return inputs verb_return_L/R (summed into the master)
        send drums verb -12dB post  the drums into verb at -12 dB after their fader and pan
                                  ('pre': before the fader; the default is post)
        send drums verb off       stops the drums' send
        send drums_bus verb -6dB  a bus sends too (post: after its fader and balance; pre:
                                  after its EQ), and so does a live input: send mic verb -10dB pre
        send return verb -6dB     the return's volume (default 0 dB)
        send remove verb          removes the send and its ports
        At most 8 sends. Level changes ramp over 10 ms. Close the loop with an effect in any
        JACK host: 'connect verb_send_L carla:in_1', 'connect carla:out_1 verb_return_L'.
        """,
      argumentCount: 0...4, completions: []
    ) { (c, a) throws(CommandError) in
      if a.isEmpty {
        for line in Display.sendLines(c.mixer.sends.all, latencies: c.driver?.returnLatencies(), sampleRate: c.driver?.sampleRate) {
          c.write(line)
        }
        return
      }
      switch a[0].lowercased() {
      case "add" where a.count == 2:
        try c.mixerCall { () throws(MixerError) in try c.mixer.sends.add(a[1]) }
        c.driver?.updateSends()
        c.write(
          "added send \(a[1]) (\(["\(a[1])_send_L", "\(a[1])_send_R", "\(a[1])_return_L", "\(a[1])_return_R"].joined(separator: ", ")))")
      case "remove" where a.count == 2, "rm" where a.count == 2:
        let names = a[1] == "all" ? c.mixer.sends.all.map(\.name) : [a[1]]
        if names.isEmpty { throw CommandError("there are no sends (add one with 'send add NAME')") }
        try c.mixerCall { () throws(MixerError) in for n in names { try c.mixer.sends.remove(n) } }
        c.driver?.updateSends()
        c.write("removed send \(names.joined(separator: ", "))")
      case "return" where a.count == 3:
        let volume = try ValueParser.volume(a[2])
        try c.mixerCall { () throws(MixerError) in try c.mixer.sends.setReturnVolume(a[1], volume) }
        c.write("\(a[1]) return: \(Display.sendLevel(volume))")
      default:
        guard a.count == 3 || a.count == 4 else { throw CommandError("send: usage: \(sendUsage)") }
        let stems = try c.stems(a[0])
        var level: SendLevel? = nil
        if a[2].lowercased() != "off" {
          var pre = false
          if a.count == 4 {
            switch a[3].lowercased() {
            case "pre": pre = true
            case "post": pre = false
            default: throw CommandError("send: the tap point must be pre or post (got '\(ValueParser.printable(a[3]))')")
            }
          }
          let gain = try ValueParser.volume(a[2])
          level = SendLevel(gain: gain, preFader: pre)
        } else if a.count == 4 {
          throw CommandError("send: usage: \(sendUsage)")
        }
        try c.mixerCall { () throws(MixerError) in
          for stem in stems { try c.mixer.sends.set(stem: stem, send: a[1], level: level) }
        }
        let what = level.map { "\(Display.sendLevel($0.gain)) \($0.preFader ? "pre" : "post")" } ?? "off"
        c.write("\(stems.joined(separator: ", ")) → \(a[1]): \(what)")
      }
    },
    CommandSpec(
      name: "sends", usage: "sends", summary: "list the aux sends, their ports, return volumes and the stems feeding them",
      argumentCount: 0...0
    ) {
      (c, _) throws(CommandError) in
      for line in Display.sendLines(c.mixer.sends.all, latencies: c.driver?.returnLatencies(), sampleRate: c.driver?.sampleRate) {
        c.write(line)
      }
    }
  ]
}

extension Display {
  /// A send level or return volume in decibels ("-12.0 dB", "-inf dB").
  package static func sendLevel(_ gain: Double) -> String {
    gain <= 0 ? "-inf dB" : NumberFormat.fixed(Decibels.fromAmplitude(gain), 1) + " dB"
  }

  /// The `send`/`sends` lines: one per send (ports, return volume), with JACK (`latencies`) the
  /// external loop's latency ("verb: return latency 256 frames (5.3 ms)", or "verb: loop not
  /// connected"), then one per strip feeding it.
  package static func sendLines(_ sends: [AuxSend], latencies: [String: ReturnLatency]? = nil, sampleRate: Int? = nil) -> [String] {
    if sends.isEmpty { return ["no sends (add one with 'send add NAME')"] }
    var lines: [String] = []
    for aux in sends {
      lines.append(
        "\(aux.name): out \(aux.outputPorts.joined(separator: ",")), return \(aux.returnPorts.joined(separator: ",")) at \(sendLevel(aux.returnVolume))"
      )
      switch latencies?[aux.name] {
      case .notConnected:
        lines.append(
          "\(aux.name): loop not connected (connect \(aux.name)_send_L/R to an effect and its outputs to \(aux.name)_return_L/R)")
      case .frames(let n):
        let ms = sampleRate.map { " (" + NumberFormat.fixed(Double(n) * 1000 / Double(max(1, $0)), 1) + " ms)" } ?? ""
        lines.append("\(aux.name): return latency \(n) frames\(ms)")
      case nil: break
      }
      for stem in aux.levels.keys.sorted() {
        if let level = aux.levels[stem] { lines.append("  \(stem) \(sendLevel(level.gain)) \(level.preFader ? "pre" : "post")") }
      }
    }
    return lines
  }

  /// What a strip (a stem, a bus, an input) sends, for `buses` and `inputs`: "verb -12.0 dB
  /// post, delay …", or nil.
  package static func sendSummary(_ sends: [AuxSend], stem: String) -> String? {
    let parts = sends.compactMap { aux in
      aux.levels[stem].map { "\(aux.name) \(sendLevel($0.gain)) \($0.preFader ? "pre" : "post")" }
    }
    return parts.isEmpty ? nil : parts.joined(separator: ", ")
  }
}

extension Completion {
  /// `send` words: the first is a keyword or a strip (stem, bus, input); then a send's name; then
  /// a level, `off`, `pre`/`post`.
  package static func sendCompletions(console: Console, words: [String], index: Int) -> [String]? {
    let sends = console.mixer.sends.all.map(\.name)
    switch index {
    case 0:
      return ["add", "remove", "return"] + console.mixer.stems.names + console.mixer.buses.names + console.mixer.inputs.names + ["all"]
    case 1:
      let first = words[1].lowercased()
      if first == "add" { return [] }
      return sends + (first == "remove" ? ["all"] : [])
    case 2: return ["add", "remove", "return"].contains(words[1].lowercased()) ? [] : ["off", "0dB", "-6dB", "-12dB"]
    case 3: return ["pre", "post"]
    default: return []
    }
  }
}
