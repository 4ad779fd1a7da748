import Foundation
import StemdeckControl
import StemdeckEngine
import StemdeckSession

// The structured replies the web mixer builds its sends, inserts, cue and setlist from (issue 40;
// docs/remote-control.md, reply shapes): `sends`, `insert list STRIP`, `insert params STRIP N`,
// `cue`, `setlist`; and the same sends, inserts and cues in `stems`' reply, so one request gives a
// page the whole mix.

extension QueryJSON {
  /// The data of the mix commands beyond the queries of `data(for:)`, or nil.
  package static func mixData(for name: String, _ args: [String], _ c: Console) -> [String: Any]? {
    switch name {
    case "send" where args.isEmpty, "sends": return ["sends": sends(c.mixer.sends.all)]
    case "insert":
      guard let action = args.first?.lowercased(), args.count >= 2 else { return nil }
      switch action {
      case "list" where args.count == 2:
        return (try? c.mixer.inserts.list(of: args[1])).map { ["inserts": $0.map(insert)] as [String: Any] }
      case "params" where args.count == 3:
        guard let n = Int(args[2]), let controls = try? c.mixer.inserts.controls(of: args[1], position: n) else { return nil }
        let files = (try? c.mixer.inserts.fileParameters(of: args[1], position: n)) ?? []
        return ["params": controls.map(param), "files": files.map(file)]
      default: return nil
      }
    case "cue": return ["cues": cues(c.mixer)]
    case "setlist" where args.isEmpty:
      guard let list = c.setlist else { return nil }
      return ["setlist": ["songs": list.songs.map(Setlist.name(of:)), "current": c.setlistIndex + 1] as [String: Any]]
    default: return nil
    }
  }

  /// The aux sends in the order added: name, return volume and the strips feeding each (gain,
  /// dB, pre or post).
  package static func sends(_ sends: [AuxSend]) -> [[String: Any]] {
    sends.map { aux in
      var levels: [String: Any] = [:]
      for (strip, level) in aux.levels {
        levels[strip] = ["gain": number(level.gain), "db": db(Decibels.fromAmplitude(level.gain)), "pre": level.preFader] as [String: Any]
      }
      return [
        "name": aux.name, "returnVolume": number(aux.returnVolume), "returnDB": db(Decibels.fromAmplitude(aux.returnVolume)),
        "levels": levels
      ]
    }
  }

  package static func insert(_ x: InsertStatus) -> [String: Any] {
    var o: [String: Any] = [
      "position": x.position, "uri": x.uri, "name": x.name.map { $0 as Any } ?? NSNull(), "bypass": x.bypass,
      "values": x.values.mapValues { number($0) }
    ]
    if let latency = x.latency { o["latency"] = latency }
    return o
  }

  /// One control port of an insert, as `insert params` lists it.
  package static func param(_ control: (PluginControl, Double)) -> [String: Any] {
    let (c, v) = control
    var o: [String: Any] = [
      "symbol": c.symbol, "name": c.name, "value": number(v), "min": number(c.minimum), "max": number(c.maximum),
      "default": number(c.defaultValue), "unit": c.unit, "properties": c.properties
    ]
    if !c.scalePoints.isEmpty { o["scalePoints"] = c.scalePoints.map { ["value": number($0.value), "label": $0.label] as [String: Any] } }
    return o
  }

  /// One file parameter of an insert, as `insert params` lists it: the file it was last set to
  /// here, or null.
  package static func file(_ f: InsertFileValue) -> [String: Any] {
    ["symbol": f.parameter.symbol, "uri": f.parameter.uri, "label": f.parameter.label, "path": f.path.map { $0 as Any } ?? NSNull()]
  }

  package static func cues(_ mixer: Mixer) -> [[String: Any]] {
    mixer.cues.all.map { ["name": $0.name, "tap": $0.tap == .afterFader ? "afl" : "pfl"] as [String: Any] }
  }

  /// What `stems` adds for a front end that shows the whole mix: the sends, every strip's
  /// inserts by strip name (`stripInserts`; "master" for the master's), and the cue; each only when there is one.
  package static func mixExtras(_ c: Console, strips: [String]) -> [String: Any] {
    var o: [String: Any] = [:]
    let auxSends = c.mixer.sends.all
    if !auxSends.isEmpty { o["sends"] = sends(auxSends) }
    var racks: [String: Any] = [:]
    for name in strips + ["master"] {
      if let list = try? c.mixer.inserts.list(of: name), !list.isEmpty { racks[name] = list.map(insert) }
    }
    if !racks.isEmpty { o["stripInserts"] = racks }
    let cued = cues(c.mixer)
    if !cued.isEmpty { o["cues"] = cued }
    return o
  }
}
