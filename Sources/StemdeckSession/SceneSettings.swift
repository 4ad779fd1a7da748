// Scenes (issue 41): stored mixes, recalled by name (the console's `scene`), and the strips a
// recall leaves alone. In the session file, after "sends", each only when there are some:
//
//   "scenes" : [
//     { "name" : "chorus", "master" : { "volume" : 1 }, "stems" : [      <- "buses", "inputs" too
//       { "name" : "drums", "volume" : 0.8, "pan" : 0, "mute" : false, "solo" : false },
//       ...
//     ] }
//   ],
//   "recallSafe" : [ "mic" ]
//
// A scene strip holds the strip's mix: the strip controls that every strip keeps
// (StripParameter.swift, the rows with a `field`, written as a stem's are), its "eq" and its
// plugin inserts' bypass and values ("inserts", as a strip's in the session; the master's too);
// not its route, direct outs or sends, nor a stem's rate. A recall sets an insert's values only
// where the strip has that plugin at that position: a scene does not add or remove plugins. A strip named in a scene need not exist (a
// stem removed since): a recall skips it and says so.

/// One strip's mix in a scene.
public struct SceneStrip: Equatable, Sendable {
  public var name: String
  /// The mix fields count (`StripSettings.withMix`), and `inserts` (bypass and values); route,
  /// direct outs and sends are not kept.
  public var strip: StripSettings

  public init(name: String, strip: StripSettings) {
    self.name = name
    self.strip = strip
  }
}

/// A stored mix of every strip and the master.
public struct SceneSettings: Equatable, Sendable {
  public var name: String
  public var masterVolume: Double = 1
  public var masterEQ = EQSettings()
  /// The master's plugin inserts (bypass and values).
  public var masterInserts: [InsertSettings] = []
  public var stems: [SceneStrip] = []
  public var buses: [SceneStrip] = []
  public var inputs: [SceneStrip] = []

  public init(name: String) {
    self.name = name
  }

  /// The fields of a scene object and of its strips.
  static let fields = ["name", "master", "stems", "buses", "inputs"]
  static func stripFields(of kind: StripKind) -> [String] {
    ["name"] + StripParameter.all.filter { $0.field != nil && $0.kinds.contains(kind) }.map(\.key) + ["eq", "inserts"]
  }

  /// The strips by kind, as the file lists them.
  public var lists: [(key: String, kind: StripKind, strips: [SceneStrip])] {
    [("stems", .stem, stems), ("buses", .bus, buses), ("inputs", .input, inputs)]
  }
}

extension SessionDecoder {
  /// The optional "scenes" section.
  func scenes(_ node: JSONNode) throws(SessionError) -> [SceneSettings] {
    let example = "{ \"name\" : \"chorus\", \"master\" : { \"volume\" : 1 }, \"stems\" : [ { \"name\" : \"drums\", \"volume\" : 0.8 } ] }"
    return try namedList(node, of: .scene, allowed: SceneSettings.fields, arrayExample: example, example: example) {
      (object) throws(SessionError) -> SceneSettings in
      let base = object.base, fields = object.fields
      var scene = SceneSettings(name: object.name)
      if let master = fields["master"] {
        let m = try self.object(master, at: base + ".master", allowed: SessionRules.masterFields, example: "{ \"volume\" : 1 }")
        if let v = m["volume"] { scene.masterVolume = try volume(v, at: base + ".master.volume") }
        if let e = m["eq"] { scene.masterEQ = try eq(e, at: base + ".master.eq") }
        if let x = m["inserts"] { scene.masterInserts = try inserts(x, at: base + ".master.inserts") }
      }
      if let n = fields["stems"] { scene.stems = try sceneStrips(n, of: .stem, at: base + ".stems") }
      if let n = fields["buses"] { scene.buses = try sceneStrips(n, of: .bus, at: base + ".buses") }
      if let n = fields["inputs"] { scene.inputs = try sceneStrips(n, of: .input, at: base + ".inputs") }
      return scene
    }
  }

  func sceneStrips(_ node: JSONNode, of kind: StripKind, at path: String) throws(SessionError) -> [SceneStrip] {
    let example = "{ \"name\" : \"drums\", \"volume\" : 0.8, \"mute\" : false }"
    guard case .array(let elements) = node.value else {
      throw fail(path, node, "must be an array of strips [ \(example), ... ] (got \(describe(node)))")
    }
    var strips: [SceneStrip] = []
    var seen: Set<String> = []
    for (index, element) in elements.enumerated() {
      let base = "\(path)[\(index)]"
      let fields = try object(element, at: base, allowed: SceneSettings.stripFields(of: kind), example: example)
      guard let nameNode = fields["name"] else { throw fail(base + ".name", element, "is missing (the strip's name)") }
      let name = try string(nameNode, at: base + ".name", rule: "must be a strip's name in double quotes")
      if let problem = SessionRules.nameProblem(name, of: kind == .bus ? .bus : .stem) { throw fail(base + ".name", nameNode, problem) }
      guard seen.insert(name).inserted else { throw fail(base + ".name", nameNode, "names '\(name)' a second time in this list") }
      var strip = StripSettings.defaults(of: kind)
      try stripControls(fields, of: kind, into: &strip, at: base)
      if let n = fields["eq"] { strip.eq = try eq(n, at: base + ".eq") }
      if let n = fields["inserts"] { strip.inserts = try inserts(n, at: base + ".inserts") }
      strips.append(SceneStrip(name: name, strip: strip))
    }
    return strips
  }

  /// The optional "recallSafe" list: the strips a scene's recall leaves alone.
  func recallSafe(_ node: JSONNode) throws(SessionError) -> [String] {
    guard case .array(let elements) = node.value else {
      throw fail("recallSafe", node, "must be an array of strip names [ \"mic\", ... ] (got \(describe(node)))")
    }
    var names: [String] = []
    for (index, element) in elements.enumerated() {
      let path = "recallSafe[\(index)]"
      let name = try string(element, at: path, rule: "must be a strip's name in double quotes")
      if let problem = SessionRules.nameProblem(name) { throw fail(path, element, problem) }
      if names.contains(name) { throw fail(path, element, "names '\(name)' a second time") }
      names.append(name)
    }
    return names
  }
}

extension SessionEncoder {
  /// The "scenes" member: a scene's head on one line, its strips one per line.
  static func scenes(_ scenes: [SceneSettings]) -> String {
    let entries = scenes.map { scene -> String in
      var text =
        "    { \"name\" : " + JSONText.string(scene.name) + ", \"master\" : "
        + master(scene.masterVolume, scene.masterEQ, scene.masterInserts)
      for (key, kind, strips) in scene.lists where !strips.isEmpty {
        let lines = strips.map { s -> String in
          var members = ["\"name\" : " + JSONText.string(s.name)] + stripControls(s.strip, of: kind)
          if s.strip.eq != EQSettings() { members.append("\"eq\" : " + eq(s.strip.eq)) }
          if let x = inserts(s.strip.inserts) { members.append(x) }
          return "      { " + members.joined(separator: ", ") + " }"
        }
        text += ", \"\(key)\" : [\n" + lines.joined(separator: ",\n") + "\n    ]"
      }
      return text + " }"
    }
    return "\"scenes\" : [\n" + entries.joined(separator: ",\n") + "\n  ]"
  }

  /// `{ "volume" : 1 }`, with "eq" when it is not flat and "inserts" when there are some: a
  /// scene's master member.
  static func master(_ volume: Double, _ masterEQ: EQSettings, _ masterInserts: [InsertSettings] = []) -> String {
    var members = ["\"volume\" : \(JSONText.gain(volume))"]
    if masterEQ != EQSettings() { members.append("\"eq\" : " + eq(masterEQ)) }
    if let x = inserts(masterInserts) { members.append(x) }
    return "{ " + members.joined(separator: ", ") + " }"
  }
}
