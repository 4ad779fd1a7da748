// Turning a parsed JSON document into a `Session`, checking every field on the way.
//
// Order of checks: the document must be an object; duplicate top-level keys are rejected; then
// "format" and "version" are read before anything else, so that a file from a newer stemdeck is
// reported as such rather than as a list of unknown fields; the document is migrated to the current
// version; then every section is validated. The first problem found is thrown.

/// Reads a `Session` out of a parsed document, reporting problems against `source`.
struct SessionDecoder {
  /// The file path or source name for error messages.
  let source: String

  func decode(_ root: JSONNode) throws(SessionError) -> Session {
    guard case .object(let rootMembers) = root.value else {
      throw fail(nil, root, "a session file must be a JSON object { ... } (got \(describe(root)))")
    }
    try rejectDuplicates(rootMembers, path: "")
    try checkFormat(rootMembers, root: root)
    let version = try readVersion(rootMembers, root: root)
    if let newer = SessionMigration.newerThanDeclared(rootMembers, version: version) {
      throw fail(newer.location, newer.node, newer.message)
    }
    let members = SessionMigration.upgrade(rootMembers, from: version)
    let fields = try knownFields(members, path: "", allowed: SessionRules.topLevelFields)

    var session = Session()
    if let node = fields["quality"] { session.quality = try choice(node, at: "quality", what: "resampler quality") }
    if let node = fields["master"] {
      let master = try object(
        node, at: "master", allowed: SessionRules.masterFields,
        example: "{ \"volume\" : 1 }")
      if let volume = master["volume"] { session.masterVolume = try self.volume(volume, at: "master.volume") }
      if let eq = master["eq"] { session.masterEQ = try self.eq(eq, at: "master.eq") }
      if let n = master["inserts"] { session.masterInserts = try inserts(n, at: "master.inserts") }
    }
    if let node = fields["options"] {
      let options = try object(
        node, at: "options", allowed: SessionRules.optionFields,
        example: "{ \"autoPauseOnDisconnect\" : false, \"meterPoint\" : \"post\" }")
      if let value = options["autoPauseOnDisconnect"] {
        session.options.autoPauseOnDisconnect = try bool(value, at: "options.autoPauseOnDisconnect")
      }
      if let value = options["meterPoint"] {
        session.options.meterPoint = try choice(value, at: "options.meterPoint", what: "meter point")
      }
      if let value = options["songChange"] {
        session.options.songChange = try choice(value, at: "options.songChange", what: "song change")
      }
      if let value = options["crossfadeSeconds"] {
        session.options.crossfadeSeconds = try number(
          value, at: "options.crossfadeSeconds",
          rule: .crossfadeSeconds)
      }
      if let value = options["transportSync"] {
        session.options.transportSync = try choice(value, at: "options.transportSync", what: "transport sync")
      }
      if let value = options["effectsOutput"] {
        session.options.effectsOutput = try choice(value, at: "options.effectsOutput", what: "effects output")
      }
    }
    if let node = fields["recording"] { session.recording = try recording(node) }
    if let node = fields["tempo"] { session.tempo = try tempo(node) }
    if let node = fields["click"] { session.click = try click(node) }
    if let node = fields["marks"] { session.marks = try marks(node) }
    if let node = fields["position"] {
      session.position = try number(node, at: "position", rule: .position)
    }
    if let node = fields["connections"] { session.connections = try connections(node) }
    if let node = fields["stems"] { session.stems = try stems(node) }
    if let node = fields["effects"] { session.effects = try effects(node) }
    if let node = fields["midi"] { session.midi = try midi(node) }
    if let node = fields["buses"] { session.buses = try buses(node) }
    if let problem = session.busProblem() {
      throw fail(problem.location, routeNode(problem.location, fields) ?? root, problem.message)
    }
    if let node = fields["inputs"] { session.inputs = try inputs(node, stems: session.stems, buses: session.buses) }
    if let node = fields["sends"] { session.sends = try sends(node) }
    if let problem = session.sendProblem() ?? session.portProblem() {
      throw fail(problem.location, sendNode(problem.location, fields) ?? root, problem.message)
    }
    if let node = fields["scenes"] { session.scenes = try scenes(node) }
    if let node = fields["recallSafe"] { session.recallSafe = try recallSafe(node) }
    return session
  }

  // MARK: Header

  func checkFormat(_ members: [JSONMember], root: JSONNode) throws(SessionError) {
    guard let member = members.first(where: { $0.key == "format" }) else {
      throw fail(
        "format", root,
        "is missing; a stemdeck session file has "
          + "\"format\" : \"\(SessionRules.formatName)\" (is this a session file?)")
    }
    guard case .string(let format) = member.value.value, format == SessionRules.formatName else {
      throw fail(
        "format", member.value,
        "must be \"\(SessionRules.formatName)\" "
          + "(got \(describe(member.value))); this is not a stemdeck session file")
    }
  }

  func readVersion(_ members: [JSONMember], root: JSONNode) throws(SessionError) -> Int {
    guard let member = members.first(where: { $0.key == "version" }) else {
      throw fail(
        "version", root,
        "is missing; a session file says which format version it uses, "
          + "e.g. \"version\" : \(Session.currentVersion)")
    }
    guard case .number(let literal) = member.value.value, let version = JSONNumber.integer(literal) else {
      throw fail(
        "version", member.value,
        "must be an integer format version such as "
          + "\(Session.currentVersion) (got \(describe(member.value)))")
    }
    if version > Session.currentVersion {
      throw fail(
        nil, member.value,
        "was made by a newer version of stemdeck (format \(version); "
          + "this one reads up to \(Session.currentVersion)); nothing was changed")
    }
    if version < 1 {
      throw fail("version", member.value, "must be at least 1 (got \(version))")
    }
    return version
  }

  // MARK: Sections

  func stems(_ node: JSONNode) throws(SessionError) -> [StemSettings] {
    try namedList(
      node, of: .stem, allowed: SessionRules.stemFields, arrayExample: "{ \"name\" : ..., \"file\" : ... }",
      example: "{ \"name\" : \"drums\", \"file\" : \"drums.flac\" }", needs: "a name and a file"
    ) { (object) throws(SessionError) -> StemSettings in
      let base = object.base, fields = object.fields, element = object.node
      var stem = StemSettings(name: object.name, file: try audioFile(of: object, .stem))
      try stripControls(fields, of: .stem, into: &stem.strip, at: base)
      if let node = fields["rate"] {
        stem.rate = try number(node, at: base + ".rate", rule: .rate)
      }
      if let node = fields["loops"] { stem.loops = try loops(node, at: base + ".loops") }
      if let node = fields["directOut"] { stem.directOut = try bool(node, at: base + ".directOut") }
      if let node = fields["startOffset"] {
        stem.startOffset = try number(node, at: base + ".startOffset", rule: .startOffset)
      }
      try loopRegion(fields, of: &stem, in: element, at: base)
      if let node = fields["crossfade"] {
        stem.crossfade = try number(node, at: base + ".crossfade", rule: .crossfade)
      }
      if let node = fields["mode"] { stem.mode = try choice(node, at: base + ".mode", what: "rate mode") }
      if let node = fields["stretch"] {
        stem.stretch = try choice(node, at: base + ".stretch", what: "stretch quality")
      }
      if let node = fields["pitch"] {
        stem.pitch = try number(node, at: base + ".pitch", rule: .pitch)
      }
      if let node = fields["pitch"], stem.mode == .varispeed, stem.pitch != 0 {
        throw fail(base + ".pitch", node, SessionRules.pitchNeedsStretchMessage(stem.pitch))
      }
      try stripRouting(fields, into: &stem.strip, at: base)
      return stem
    }
  }

  /// A channel EQ (`"eq"` of a stem or of the master; EQSettings.swift): every part optional.
  func eq(_ node: JSONNode, at base: String) throws(SessionError) -> EQSettings {
    let example = "{ \"hpf\" : { \"frequency\" : 80, \"slope\" : 24 }, \"mid\" : { \"frequency\" : 1000, \"gain\" : -4, \"q\" : 1.4 } }"
    let fields = try object(node, at: base, allowed: EQSettings.fields, example: example)
    var eq = EQSettings()
    if let value = fields["enabled"] { eq.enabled = try bool(value, at: base + ".enabled") }
    if let value = fields["hpf"] {
      let path = base + ".hpf"
      let f = try object(value, at: path, allowed: EQSettings.highPassFields, example: "{ \"frequency\" : 80, \"slope\" : 24 }")
      guard let frequency = f["frequency"] else {
        throw fail(path + ".frequency", value, "is missing (a high-pass needs its frequency, e.g. { \"frequency\" : 80 })")
      }
      var hpf = EQHighPass(frequency: try number(frequency, at: path + ".frequency", rule: .eqHighPass))
      if let slope = f["slope"] {
        guard case .number(let literal) = slope.value, let s = JSONNumber.integer(literal), EQSettings.slopes.contains(s) else {
          throw fail(path + ".slope", slope, SettingRule.eqSlopeRule + " (got \(describe(slope)))")
        }
        hpf.slope = s
      }
      eq.highPass = hpf
    }
    func band(_ key: String, _ band: inout EQBand) throws(SessionError) {
      guard let value = fields[key] else { return }
      let path = base + "." + key
      let f = try object(
        value, at: path, allowed: key == "mid" ? EQSettings.midFields : EQSettings.shelfFields,
        example: key == "mid" ? "{ \"frequency\" : 1000, \"gain\" : -4, \"q\" : 1.4 }" : "{ \"frequency\" : 120, \"gain\" : 3 }")
      if let n = f["frequency"] { band.frequency = try number(n, at: path + ".frequency", rule: .eqFrequency) }
      if let n = f["gain"] { band.gain = try number(n, at: path + ".gain", rule: .eqGain) }
      if let n = f["q"] { band.q = try number(n, at: path + ".q", rule: .eqQ) }
    }
    try band("low", &eq.low)
    try band("mid", &eq.mid)
    try band("high", &eq.high)
    return eq
  }

  /// A stem's `"loopStart"` and `"loopEnd"`: each in range, both or neither, start before end.
  func loopRegion(
    _ fields: [String: JSONNode], of stem: inout StemSettings, in element: JSONNode,
    at base: String
  ) throws(SessionError) {
    let startNode = fields["loopStart"]
    let endNode = fields["loopEnd"]
    if let startNode {
      stem.loopStart = try number(startNode, at: base + ".loopStart", rule: .loopPoint)
    }
    if let endNode {
      stem.loopEnd = try number(endNode, at: base + ".loopEnd", rule: .loopPoint)
    }
    switch (stem.loopStart, stem.loopEnd) {
    case (nil, nil):
      return
    case (_?, nil):
      throw fail(base + ".loopEnd", element, SessionRules.loopHalfMissingMessage(given: "loopStart"))
    case (nil, _?):
      throw fail(base + ".loopStart", element, SessionRules.loopHalfMissingMessage(given: "loopEnd"))
    case let (start?, end?):
      if start >= end {
        throw fail(base + ".loopEnd", endNode ?? element, SessionRules.loopOrderMessage(start: start, end: end))
      }
    }
  }

  func effects(_ node: JSONNode) throws(SessionError) -> [EffectSettings] {
    try namedList(
      node, of: .effect, allowed: SessionRules.effectFields, arrayExample: "{ \"name\" : ..., \"file\" : ... }",
      example: "{ \"name\" : \"horn\", \"file\" : \"horn.wav\" }", needs: "a name and a file"
    ) { (object) throws(SessionError) -> EffectSettings in
      var effect = EffectSettings(name: object.name, file: try audioFile(of: object, .effect))
      if let node = object.fields["volume"] { effect.volume = try volume(node, at: object.base + ".volume") }
      if let node = object.fields["pan"] { effect.pan = try number(node, at: object.base + ".pan", rule: .pan) }
      return effect
    }
  }

  /// The required `"file"` of a stem or effect (`kind`): an audio file's path, checked.
  func audioFile(of object: NamedObject, _ kind: SessionRules.ElementKind) throws(SessionError) -> String {
    let fileNode = try required(object.fields, "file", in: object.node, at: object.base, of: kind)
    let file = try string(fileNode, at: object.base + ".file", rule: "must be the audio file's path in double quotes")
    if let problem = SessionRules.audioFileProblem(file) { throw fail(object.base + ".file", fileNode, problem) }
    return file
  }

  func recording(_ node: JSONNode) throws(SessionError) -> RecordingSettings {
    let fields = try object(
      node, at: "recording", allowed: SessionRules.recordingFields,
      example: "{ \"format\" : \"flac24\", \"takesMuted\" : false, \"folder\" : \"takes\" }")
    var recording = RecordingSettings()
    if let value = fields["format"] {
      recording.format = try choice(value, at: "recording.format", what: "take format")
    }
    if let value = fields["takesMuted"] { recording.takesMuted = try bool(value, at: "recording.takesMuted") }
    if let value = fields["folder"] {
      let folder = try string(value, at: "recording.folder", rule: SessionRules.recordingFolderRule)
      if let problem = SessionRules.recordingFolderProblem(folder) { throw fail("recording.folder", value, problem) }
      recording.folder = folder
    }
    return recording
  }

  func tempo(_ node: JSONNode) throws(SessionError) -> Tempo {
    let fields = try object(
      node, at: "tempo", allowed: SessionRules.tempoFields,
      example: "{ \"bpm\" : 120, \"beatsPerBar\" : 4 }")
    guard let bpmNode = fields["bpm"] else {
      throw fail(
        "tempo.bpm", node,
        "is missing (a tempo needs its beats per minute, e.g. "
          + "{ \"bpm\" : 120, \"beatsPerBar\" : 4 })")
    }
    var tempo = Tempo(bpm: try number(bpmNode, at: "tempo.bpm", rule: .bpm))
    if let value = fields["beatsPerBar"] {
      guard case .number(let literal) = value.value, let beats = JSONNumber.integer(literal),
        SettingRule.beatsPerBar.accepts(beats)
      else {
        throw fail("tempo.beatsPerBar", value, SettingRule.beatsPerBar.rule + " (got \(describe(value)))")
      }
      tempo.beatsPerBar = beats
    }
    return tempo
  }

  func connections(_ node: JSONNode) throws(SessionError) -> [String: [String]] {
    let shape =
      "must be an object mapping stemdeck port names to lists of JACK ports, "
      + "e.g. { \"master_L\" : [ \"system:playback_1\" ] }"
    guard case .object(let members) = node.value else {
      throw fail("connections", node, shape + " (got \(describe(node)))")
    }
    try rejectDuplicates(members, path: "connections")
    var result: [String: [String]] = [:]
    for member in members {
      let base = SessionRules.path("connections", member.key)
      if let problem = SessionRules.localPortProblem(member.key) {
        throw fail(base, member.keyPosition, problem)
      }
      guard case .array(let elements) = member.value.value else {
        throw fail(
          base, member.value,
          "must be a list of JACK port names such as "
            + "[ \"system:playback_1\" ] (got \(describe(member.value)))")
      }
      var peers: [String] = []
      for (index, element) in elements.enumerated() {
        let location = base + "[\(index)]"
        let peer = try string(element, at: location, rule: SessionRules.peerPortRule)
        if let problem = SessionRules.peerPortProblem(peer) { throw fail(location, element, problem) }
        if peers.contains(peer) {
          throw fail(location, element, "duplicate connection to \(SessionRules.quote(peer))")
        }
        peers.append(peer)
      }
      result[member.key] = peers
    }
    return result
  }

}
