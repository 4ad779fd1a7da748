import Foundation
import StemdeckControl
import StemdeckSession

/// Structured replies of the control socket and of `--json` script mode (README, *Control
/// socket*, reply shapes): the queries `status`, `stems`, `inputs`, `meters`, `routes` and `connections`
/// add their data as JSON values (numbers as numbers), a transport command the frame it took
/// effect at, and an error its hint. The text lines stay in `"output"`.
///
/// `stems` and `meters` are built from the mixer view's model (`MixerViewModel`), `status`,
/// `routes` and `connections` from `Display`'s reports, so the JSON and the text agree.
package enum QueryJSON {
  /// Commands whose reply carries the frame the engine applied them at (`Console.appliedFrame`).
  package static let transportCommands: Set<String> = ["play", "pause", "stop", "seek"]

  /// A number as JSON: rounded to `places` decimals; null when not finite.
  package static func number(_ v: Double, _ places: Int = 6) -> Any {
    guard v.isFinite else { return NSNull() }
    let scale = pow(10.0, Double(places))
    let r = (v * scale).rounded() / scale
    return r == 0 ? 0.0 : r  // never -0
  }

  /// A level in dB: two decimals, null for silence (the meter floor, −160 dB, and below:
  /// `Decibels.isSilent`, the rule the text output's `-inf` follows).
  package static func db(_ v: Double) -> Any { v.isFinite && !Decibels.isSilent(v, decimals: 2) ? number(v, 2) : NSNull() }

  package static func meter(_ m: MixerViewModel.Meter) -> [String: Any] {
    ["peak": db(m.peak), "rms": db(m.rms), "hold": db(m.hold), "clipped": m.clipped]
  }

  /// One stem (a strip of the mixer view's model; `status` adds the file's facts and position).
  package static func stem(_ s: MixerViewModel.Strip, _ status: StemStatus?) -> [String: Any] {
    var o: [String: Any] = [
      "name": s.name, "volume": number(s.volume), "volumeDB": db(s.volumeDB),
      "flags": s.flags.text, "meters": s.meters.map(meter),
      "mute": s.flags.contains(.mute), "solo": s.flags.contains(.solo), "soloSafe": s.flags.contains(.soloSafe),
      "directOut": s.flags.contains(.directOut), "gliding": s.flags.contains(.gliding), "ended": s.flags.contains(.ended),
      "underrun": s.flags.contains(.underrun), "unreadable": s.flags.contains(.unreadable)
    ]
    if let pan = s.pan { o["pan"] = number(pan) }
    if let rate = s.rate { o["rate"] = number(rate) }
    if let loop = s.loop { o["loop"] = loop }
    if let loops = s.loops { o["loops"] = loops }
    if let file = s.file { o["file"] = file }
    if let status {
      // The table's other controls (`width`, …): as set.
      for (key, value) in controls(status.settings.strip, of: .stem) where o[key] == nil { o[key] = value }
      o["path"] = status.path
      o["channels"] = status.info.channelCount
      o["sampleRate"] = status.info.sampleRate
      o["length"] = number(status.length, 3)
      o["position"] = number(status.positionInFile, 3)
      o["underruns"] = status.underruns
    }
    return o
  }

  /// `stems`: every stem in console order; stems whose file could not be opened under `offline`.
  package static func stems(_ c: Console) -> [String: Any] {
    let model = MixerViewModel.make(c)
    var statuses: [String: StemStatus] = [:]
    for s in c.mixer.stems.statuses() { statuses[s.settings.name] = s }
    var o: [String: Any] = [
      "stems": model.strips.filter { !$0.isBus }.map { stem($0, statuses[$0.name]) }, "controls": controlTable
    ]
    if !model.inputs.isEmpty { o["inputs"] = inputs(c) }
    if !c.mixer.buses.names.isEmpty { o["buses"] = buses(c) }
    let offline = c.mixer.offlineStems
    if !offline.isEmpty {
      o["offline"] = offline.map { ["name": $0.settings.name, "path": $0.path, "reason": $0.reason] as [String: Any] }
    }
    o.merge(mixExtras(c, strips: model.strips.map(\.name) + model.inputs.map(\.name))) { old, _ in old }
    return o
  }

  /// The strip controls' table (StripParameter.swift) as a front end builds its controls from it
  /// (the web mixer): each control's key in a strip's object, its command word, its kind
  /// (`gain`, `number`, `toggle`), its range and default, and the kinds of strip that have it.
  package static var controlTable: [[String: Any]] {
    StripParameter.all.map { control in
      var o: [String: Any] = [
        "key": control.key, "word": control.word, "strips": StripKind.allCases.filter { control.kinds.contains($0) }.map(\.rawValue)
      ]
      switch control.value {
      case .gain: o["kind"] = "gain"
      case .number: o["kind"] = "number"
      case .toggle: o["kind"] = "toggle"
      }
      if let rule = control.rule {
        o["min"] = number(rule.range.lowerBound)
        o["max"] = number(rule.range.upperBound)
      }
      switch control.reading(in: StripSettings.defaults(of: .stem)) {
      case .gain(let v)?, .number(let v)?: o["default"] = number(v)
      case .toggle(let on)?: o["default"] = on
      case nil where control.key == "rate": o["default"] = number(StemSettings(name: "", file: "").rate)  // a stem's own setting
      case nil: break
      }
      if control.takesOnOff { o["onOff"] = true }
      return o
    }
  }

  /// The strip controls a strip of `kind` keeps in its settings, from their table
  /// (StripParameter.swift): each under its session key (`"volume"`, `"pan"`, `"mute"`, …), a
  /// level also in dB (`"volumeDB"`).
  package static func controls(_ strip: StripSettings, of kind: StripKind) -> [String: Any] {
    var o: [String: Any] = [:]
    for control in StripParameter.all where control.kinds.contains(kind) {
      switch control.reading(in: strip) {
      case .toggle(let on)?: o[control.key] = on
      case .gain(let v)?:
        o[control.key] = number(v)
        o[control.key + "DB"] = db(Decibels.fromAmplitude(v))
      case .number(let v)?: o[control.key] = number(v)
      case nil: break
      }
    }
    return o
  }

  /// `inputs` (and `stems`): every live input strip, in the order added: its settings, ports,
  /// where it goes and its meters.
  package static func inputs(_ c: Console) -> [[String: Any]] {
    c.mixer.inputs.statuses().map { i in
      let s = i.settings
      return controls(s.strip, of: .input).merging([
        "name": s.name, "channels": s.channels.rawValue, "directOut": s.directOut, "eq": !s.eq.isBypassed,
        "gliding": i.gliding.any,
        "destination": s.directOut ? "\(s.name)_L/R" : i.destination, "ports": i.ports,
        "meters": MixerViewModel.meter(i.meter).map(meter)
      ]) { $1 }
    }
  }

  /// `bus` (and `stems`): every bus in console order: its settings, whether it is heard (a solo
  /// elsewhere silences it), what feeds it, where it goes and its meters.
  package static func buses(_ c: Console) -> [[String: Any]] {
    c.mixer.buses.statuses().map { b in
      let s = b.settings
      return controls(s.strip, of: .bus).merging([
        "name": s.name, "directOut": s.directOut, "eq": !s.eq.isBypassed, "audible": b.audible,
        "gliding": b.gliding.any,
        "destination": s.directOut ? "\(s.name)_L/R" : (s.bus ?? "master"), "members": b.members,
        "meters": MixerViewModel.meter(b.meter).map(meter)
      ]) { $1 }
    }
  }

  package static func loudness(_ l: LiveLoudness) -> [String: Any] {
    [
      "momentary": db(l.momentary), "shortTerm": db(l.shortTerm), "integrated": db(l.integrated),
      "range": number(l.range, 2), "truePeak": db(l.truePeakDecibels), "seconds": number(l.seconds, 3),
      "droppedFrames": l.droppedFrames
    ]
  }

  /// `meters [NAME|master|input]`: the master (its fader and, when measured, its loudness), the
  /// input while recording or when asked, and the stems; `only` keeps one of them.
  package static func meters(_ c: Console, only: String?) -> [String: Any] {
    let model = MixerViewModel.make(c)
    var o: [String: Any] = [:]
    if only == nil || only == "master" {
      var master: [String: Any] = [
        "channels": model.master.meters.map(meter), "volume": number(model.master.volume),
        "volumeDB": db(model.master.volumeDB)
      ]
      if let l = model.transport.loudness { master["loudness"] = loudness(l) }
      o["master"] = master
    }
    if only == "input" || (only == nil && c.mixer.recorder.status != nil) {
      o["input"] = ["channels": MixerViewModel.meter(c.mixer.recorder.meter()).map(meter)] as [String: Any]
    }
    if only != "master" && only != "input" {
      o["stems"] = model.strips.filter { !$0.isBus && (only == nil || $0.name == only) }.map {
        ["name": $0.name, "channels": $0.meters.map(meter)] as [String: Any]
      }
      let buses = model.strips.filter { $0.isBus && (only == nil || $0.name == only) }
      if !buses.isEmpty { o["buses"] = buses.map { ["name": $0.name, "channels": $0.meters.map(meter)] as [String: Any] } }
      let inputs = model.inputs.filter { only == nil || $0.name == only }
      if !inputs.isEmpty { o["inputs"] = inputs.map { ["name": $0.name, "channels": $0.meters.map(meter)] as [String: Any] } }
      let returns = c.mixer.sends.returnMeters().filter { only == nil || $0.name == only }
      if !returns.isEmpty {
        o["returns"] = returns.map { ["name": $0.name, "channels": MixerViewModel.meter($0.meter).map(meter)] as [String: Any] }
      }
    }
    return o
  }

  package static func status(_ r: Display.StatusReport) -> [String: Any] {
    var o: [String: Any] = [
      "state": r.state, "position": number(r.position, 3), "length": r.length.map { number($0, 3) } ?? NSNull(),
      "endless": r.endless, "sampleRate": r.sampleRate, "underruns": r.underruns, "stems": r.stems,
      "master": ["volume": number(r.masterVolume), "volumeDB": db(Decibels.fromAmplitude(r.masterVolume))] as [String: Any],
      "quality": r.quality, "session": r.session.map { $0 as Any } ?? NSNull(), "unsaved": r.unsaved,
      "control": r.control.map { $0 as Any } ?? NSNull(), "osc": r.osc.map { $0 as Any } ?? NSNull(),
      "solo": ["active": !r.soloed.isEmpty, "soloed": r.soloed] as [String: Any], "insertLatency": r.insertLatency,
      "marks": r.marks.map { ["name": $0.name, "at": number($0.at, 3)] as [String: Any] },
      "jump": r.jump.map { ["mark": $0.mark, "at": number($0.atSeconds, 3), "to": number($0.toSeconds, 3)] as Any } ?? NSNull()
    ]
    if let d = r.server {
      var server: [String: Any] = [
        "name": d.name, "connected": d.connected, "answering": d.answering, "bufferSize": d.bufferSize, "dspLoad": number(d.dspLoad, 2),
        "xruns": d.xruns, "driver": d.driver.map { $0 as Any } ?? NSNull(), "client": d.client,
        "transportSync": d.transportSync ?? "off"
      ]
      if let locked = d.transportLocked { server["transportLocked"] = locked }
      if let corrections = d.transportCorrections { server["transportCorrections"] = corrections }
      o["server"] = server
    } else {
      o["server"] = NSNull()
    }
    return o
  }

  package static func routes(_ routes: [Display.RouteReport]) -> [[String: Any]] {
    routes.map { ["port": $0.port, "peer": $0.peer, "connected": $0.connected, "direction": $0.isInput ? "in" : "out"] }
  }

  /// The data command `name` (a command table name) with `args` adds to its reply, as
  /// (key, value); nil for a command without structured data.
  package static func data(for name: String, _ args: [String], _ c: Console) -> [String: Any]? {
    switch name {
    case "status": return ["status": status(Display.statusReport(c))]
    case "stems": return stems(c)
    case "inputs": return args.isEmpty ? ["inputs": inputs(c)] : nil
    case "bus": return args.isEmpty ? ["buses": buses(c)] : nil
    case "meters":
      if args.first == "reset" { return nil }
      let only = args.first { $0 != "--watch" }
      return ["meters": meters(c, only: args.contains("--watch") ? nil : only)]
    case "routes": return (try? Display.routes(c, connectedOnly: false)).map { ["routes": routes($0)] as [String: Any] }
    case "diff":
      return (try? c.diff(against: args.first)).map { result in
        let changes = result.changes.map { change -> [String: Any] in
          [
            "subject": change.subject, "field": change.field.map { $0 as Any } ?? NSNull(),
            "from": change.from.map { $0 as Any } ?? NSNull(), "to": change.to.map { $0 as Any } ?? NSNull(), "text": change.line
          ]
        }
        return ["diff": changes, "file": result.file] as [String: Any]
      }
    case "connections": return (try? Display.routes(c, connectedOnly: true)).map { ["connections": routes($0)] as [String: Any] }
    case "history": return ["history": c.historySteps(), "done": c.history.done]
    case "scene", "scenes":
      guard args.isEmpty || args.first?.lowercased() == "list" else { return nil }
      return ["scenes": c.mixer.scenes.list.map { $0.name }, "recallSafe": c.mixer.scenes.safeStrips]
    default: return mixData(for: name, args, c)
    }
  }

  /// An error message split into what went wrong and the hint that follows it in the console's
  /// words: " — did you mean 'drums'?", " — usage: …", "(type 'help' for the list)",
  /// "(stems: a, b)". Messages without a hint come back whole.
  package static func split(_ message: String) -> (error: String, hint: String?) {
    for marker in [" — did you mean ", " — usage: "] {
      if let r = message.range(of: marker) {
        return (String(message[..<r.lowerBound]), String(message[r.lowerBound...].dropFirst(" — ".count)))
      }
    }
    // "unknown command 'x' (type 'help' for the list)", "unknown stem 'x' (stems: a, b)".
    if message.hasPrefix("unknown "), message.hasSuffix(")"), let r = message.range(of: "' (") {
      return (
        String(message[..<message.index(after: r.lowerBound)]),
        String(message[r.upperBound...].dropLast())
      )
    }
    return (message, nil)
  }

  /// The console's words for an error and its hint, as the REPL shows them (`ctl`).
  package static func joined(_ error: String, _ hint: String?) -> String {
    guard let hint else { return error }
    return hint.hasPrefix("did you mean ") || hint.hasPrefix("usage: ") ? error + " — " + hint : error + " (" + hint + ")"
  }
}
