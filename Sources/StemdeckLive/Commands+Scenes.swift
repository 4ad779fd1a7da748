import StemdeckControl
import StemdeckSession
import StemdeckText

// `scene` (issue 41): stored mixes recalled by name, with a fade, a scope and recall-safe strips
// (Mixer+Scenes.swift). Saved in the session; a recall is one undo step.
extension CommandTable {
  package static let sceneUsage =
    "scene [list] | scene save|update|remove NAME | scene rename NAME NEW | scene recall NAME [fade TIME] [--only vol,pan,mute,solo,safe,eq,inserts] [--strips A,B] | scene safe STRIP [on|off]"

  package static let sceneCommand = CommandSpec(
    name: "scene", aliases: ["scenes"], usage: sceneUsage,
    summary: "stored mixes: 'scene save chorus', 'scene recall chorus fade 2s'",
    details: """
      A scene stores every strip's mix (volume, pan, mute, solo, solo-safe, EQ, its plugin
      inserts' bypass and values) and the master's level, EQ and inserts; not routes, sends,
      rates or which plugins are inserted. 'scene recall NAME' changes every
      strip whose mix differs, all on one frame; 'fade TIME' glides volume and pan (and the
      master's level) there together, landing on the fade's last frame (the rest switches at
      its start). '--only'
      limits it to some controls, '--strips' to some strips (the master then stays).
      'scene safe mic' keeps a strip out of every recall. Scenes are saved in the session;
      a recall is one undo step.
      """,
    argumentCount: 0...9, completions: [.keyword(["list", "save", "update", "recall", "remove", "rename", "safe"])]
  ) { (c, a) throws(CommandError) in
    let verb = a.first?.lowercased() ?? "list"
    let rest = Array(a.dropFirst())
    func one() throws(CommandError) -> String {
      guard rest.count == 1 else { throw CommandError("scene \(verb): usage: scene \(verb) NAME") }
      return rest[0]
    }
    switch verb {
    case "list":
      guard rest.isEmpty else { throw CommandError("scene list takes nothing more") }
      for line in c.sceneLines() { c.write(line) }
    case "save", "update":
      let name = try one()
      try c.mixerCall { () throws(MixerError) in try c.mixer.scenes.save(name, update: verb == "update") }
      c.write("scene '\(name)' \(verb == "save" ? "saved" : "updated"): the mix now")
    case "remove":
      let name = try one()
      try c.mixerCall { () throws(MixerError) in try c.mixer.scenes.remove(name) }
      c.write("scene '\(name)' removed")
    case "rename":
      guard rest.count == 2 else { throw CommandError("scene rename: usage: scene rename NAME NEW") }
      try c.mixerCall { () throws(MixerError) in try c.mixer.scenes.rename(rest[0], to: rest[1]) }
      c.write("scene '\(rest[0])' is now '\(rest[1])'")
    case "safe":
      guard rest.count == 1 || (rest.count == 2 && ["on", "off"].contains(rest[1].lowercased())) else {
        throw CommandError("scene safe: usage: scene safe STRIP [on|off]")
      }
      let on = rest.count == 1 || rest[1].lowercased() == "on"
      try c.mixerCall { () throws(MixerError) in try c.mixer.scenes.setRecallSafe(rest[0], on) }
      c.write("\(rest[0]) \(on ? "is left alone by" : "follows") scene recalls")
    case "recall":
      guard let name = rest.first else {
        throw CommandError("scene recall: usage: scene recall NAME [fade TIME] [--only LIST] [--strips LIST]")
      }
      let (fade, scope) = try recallOptions(Array(rest.dropFirst()))
      let r = try c.mixerCall { () throws(MixerError) in try c.mixer.scenes.recall(name, fade: fade, scope: scope) }
      var line = "recalled '\(name)': "
      line +=
        r.changed.isEmpty
        ? "nothing differed" : "\(r.changed.count) strip\(r.changed.count == 1 ? "" : "s") changed (\(r.changed.joined(separator: ", ")))"
      if fade > 0 && !r.changed.isEmpty { line += ", gliding over \(NumberFormat.plain(fade)) s" }
      if !r.safe.isEmpty { line += "; left alone (recall-safe): \(r.safe.joined(separator: ", "))" }
      if !r.missing.isEmpty { line += "; not in this session: \(r.missing.joined(separator: ", "))" }
      c.write(line)
    default:
      throw CommandError("scene: unknown '\(ValueParser.printable(verb))' — usage: \(sceneUsage)")
    }
  }

  /// `fade TIME`, `--only LIST` and `--strips LIST`, in any order.
  package static func recallOptions(_ words: [String]) throws(CommandError) -> (fade: Double, scope: SceneScope) {
    var fade = 0.0
    var scope = SceneScope()
    var i = 0
    while i < words.count {
      let word = words[i].lowercased()
      guard i + 1 < words.count else { throw CommandError("scene recall: '\(ValueParser.printable(words[i]))' needs a value after it") }
      let value = words[i + 1]
      switch word {
      case "fade": fade = try ValueParser.duration(value)
      case "--only", "only":
        let items = value.lowercased().split(separator: ",").map { $0 == "volume" ? "vol" : String($0) }
        if let bad = items.first(where: { !SceneScope.words.contains($0) }) {
          throw CommandError(
            "scene recall --only: '\(ValueParser.printable(bad))' is not a scene's control (\(SceneScope.words.joined(separator: ", ")))")
        }
        scope.controls = Set(items)
      case "--strips", "strips":
        scope.strips = Set(value.split(separator: ",").map(String.init))
      default:
        throw CommandError("scene recall: unexpected '\(ValueParser.printable(words[i]))' (fade TIME, --only LIST, --strips LIST)")
      }
      i += 2
    }
    return (fade, scope)
  }
}

extension Console {
  /// `scene list`: one line per scene, then the recall-safe strips.
  package func sceneLines() -> [String] {
    let scenes = mixer.scenes.list
    var lines =
      scenes.isEmpty
      ? ["no scenes ('scene save NAME' stores the mix now)"]
      : scenes.map { s in
        let counts = s.lists.filter { !$0.strips.isEmpty }.map { "\($0.strips.count) \($0.strips.count == 1 ? $0.kind.rawValue : $0.key)" }
        return
          "\(s.name): \(counts.isEmpty ? "no strips" : counts.joined(separator: ", ")), master \(MixerText.db(Decibels.fromAmplitude(s.masterVolume))) dB"
      }
    let safe = mixer.scenes.safeStrips
    if !safe.isEmpty { lines.append("recall-safe: \(safe.joined(separator: ", "))") }
    return lines
  }
}
