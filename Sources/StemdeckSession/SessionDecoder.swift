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
    if let problem = session.sendProblem() {
      throw fail(problem.location, sendNode(problem.location, fields) ?? root, problem.message)
    }
    return session
  }

  /// The optional "sends" section (SendSettings.swift): names and return volumes; the stems'
  /// levels are checked against it by `Session.sendProblem` once both are read.
  private func sends(_ node: JSONNode) throws(SessionError) -> [SendSettings] {
    let example = "{ \"name\" : \"verb\", \"returnVolume\" : 1 }"
    guard case .array(let elements) = node.value else {
      throw fail("sends", node, "must be an array of aux sends [ \(example), ... ] (got \(describe(node)))")
    }
    var sends: [SendSettings] = []
    for (index, element) in elements.enumerated() {
      let base = "sends[\(index)]"
      let fields = try object(element, at: base, allowed: SendSettings.fields, example: example)
      guard let nameNode = fields["name"] else { throw fail(base + ".name", element, "is missing (every send needs a name)") }
      var send = SendSettings(name: try string(nameNode, at: base + ".name", rule: "must be a send name in double quotes"))
      if let n = fields["returnVolume"] { send.returnVolume = try volume(n, at: base + ".returnVolume") }
      sends.append(send)
    }
    return sends
  }

  /// A stem's "sends": its levels into the aux sends, `[ { "to" : "verb", "level" : 0.25, "pre" : true } ]`.
  private func stemSends(_ node: JSONNode, at path: String) throws(SessionError) -> [StemSend] {
    let example = "{ \"to\" : \"verb\", \"level\" : 0.25 }"
    guard case .array(let elements) = node.value else {
      throw fail(path, node, "must be an array of send levels [ \(example), ... ] (got \(describe(node)))")
    }
    var levels: [StemSend] = []
    for (index, element) in elements.enumerated() {
      let base = "\(path)[\(index)]"
      let fields = try object(element, at: base, allowed: SendSettings.stemFields, example: example)
      guard let toNode = fields["to"] else { throw fail(base + ".to", element, "is missing (the send this level feeds, e.g. \(example))") }
      guard let levelNode = fields["level"] else {
        throw fail(base + ".level", element, "is missing (a gain like a volume, e.g. \(example))")
      }
      var level = StemSend(
        to: try string(toNode, at: base + ".to", rule: "must be the name of a send in double quotes"),
        level: try volume(levelNode, at: base + ".level"))
      if let n = fields["pre"] { level.preFader = try bool(n, at: base + ".pre") }
      levels.append(level)
    }
    return levels
  }

  /// The node a send problem's location (`sends[1].name`, `stems[0].sends[2].to`) points at, for its line.
  private func sendNode(_ location: String, _ fields: [String: JSONNode]) -> JSONNode? {
    func element(_ node: JSONNode?, _ index: Int) -> JSONNode? {
      guard let node, case .array(let elements) = node.value, elements.indices.contains(index) else { return node }
      return elements[index]
    }
    func member(_ node: JSONNode?, _ key: String) -> JSONNode? {
      guard let node, case .object(let members) = node.value else { return node }
      return members.first(where: { $0.key == key })?.value ?? node
    }
    // "list[i].field" or "stems[i].sends[j].field": walk down as far as the location names.
    var node: JSONNode? = nil
    var rest = Substring(location)
    var first = true
    while !rest.isEmpty {
      let end = rest.firstIndex(where: { $0 == "." || $0 == "[" }) ?? rest.endIndex
      let key = String(rest[..<end])
      rest = rest[end...]
      node = first ? fields[key] : member(node, key)
      first = false
      if rest.hasPrefix("["), let close = rest.firstIndex(of: "]"), let index = Int(rest[rest.index(after: rest.startIndex)..<close]) {
        node = element(node, index)
        rest = rest[rest.index(after: close)...]
      }
      if rest.hasPrefix(".") { rest = rest.dropFirst() }
    }
    return node
  }

  /// The optional "buses" section (BusSettings.swift). Names, ranges and the EQ are checked here;
  /// routes (known buses, no loop, no stem of the same name) by `Session.busProblem` once the
  /// stems are read too.
  private func buses(_ node: JSONNode) throws(SessionError) -> [BusSettings] {
    guard case .array(let elements) = node.value else {
      throw fail("buses", node, "must be an array of buses [ { \"name\" : \"drums_bus\" }, ... ] (got \(describe(node)))")
    }
    if elements.count > BusSettings.maximumBuses {
      throw fail("buses", node, "has \(elements.count) buses; at most \(BusSettings.maximumBuses)")
    }
    var buses: [BusSettings] = []
    var firstIndexByName: [String: Int] = [:]
    for (index, element) in elements.enumerated() {
      let base = "buses[\(index)]"
      let fields = try object(element, at: base, allowed: BusSettings.fields, example: "{ \"name\" : \"drums_bus\", \"volume\" : 0.8 }")
      guard let nameNode = fields["name"] else { throw fail(base + ".name", element, "is missing (every bus needs a name)") }
      let name = try string(nameNode, at: base + ".name", rule: "must be a bus name in double quotes")
      if let problem = SessionRules.nameProblem(name, of: .bus) { throw fail(base + ".name", nameNode, problem) }
      if let earlier = firstIndexByName[name] {
        throw fail(base + ".name", nameNode, SessionRules.duplicateNameMessage(name, of: .bus, earlier: earlier))
      }
      firstIndexByName[name] = index
      var bus = BusSettings(name: name)
      if let n = fields["volume"] { bus.volume = try volume(n, at: base + ".volume") }
      if let n = fields["pan"] { bus.pan = try number(n, at: base + ".pan", rule: .pan) }
      if let n = fields["mute"] { bus.mute = try bool(n, at: base + ".mute") }
      if let n = fields["solo"] { bus.solo = try bool(n, at: base + ".solo") }
      if let n = fields["directOut"] { bus.directOut = try bool(n, at: base + ".directOut") }
      if let n = fields["eq"] { bus.eq = try eq(n, at: base + ".eq") }
      if let n = fields["bus"] { bus.bus = try destination(n, at: base + ".bus") }
      if let n = fields["sends"] { bus.sends = try stemSends(n, at: base + ".sends") }
      buses.append(bus)
    }
    return buses
  }

  /// A `"bus"` field: the name of the bus fed, in double quotes ("master" is the same as leaving it out).
  private func destination(_ node: JSONNode, at path: String) throws(SessionError) -> String? {
    let name = try string(node, at: path, rule: "must be the name of a bus in double quotes (leave it out for the master)")
    if name == "master" { return nil }
    if let problem = SessionRules.nameProblem(name, of: .bus) { throw fail(path, node, problem) }
    return name
  }

  /// The node a route problem's location (`buses[2].bus`, `stems[0].bus`) points at, for its line.
  private func routeNode(_ location: String, _ fields: [String: JSONNode]) -> JSONNode? {
    for list in ["buses", "stems"] where location.hasPrefix(list + "[") {
      guard let node = fields[list], case .array(let elements) = node.value,
        let close = location.firstIndex(of: "]"),
        let index = Int(location[location.index(location.startIndex, offsetBy: list.count + 1)..<close]),
        elements.indices.contains(index)
      else { return fields[list] }
      let element = elements[index]
      if location.hasSuffix(".bus"), case .object(let members) = element.value,
        let member = members.first(where: { $0.key == "bus" })
      {
        return member.value
      }
      return element
    }
    return nil
  }

  /// The optional "inputs" section: live input strips (InputSettings.swift).
  private func inputs(_ node: JSONNode, stems: [StemSettings], buses: [BusSettings]) throws(SessionError) -> [InputSettings] {
    let example = "{ \"name\" : \"mic\", \"channels\" : \"mono\" }"
    guard case .array(let elements) = node.value else {
      throw fail("inputs", node, "must be an array of live inputs [ \(example), ... ] (got \(describe(node)))")
    }
    if elements.count > InputSettings.maximumCount {
      throw fail("inputs", node, "has \(elements.count) inputs; at most \(InputSettings.maximumCount)")
    }
    let stemNames = Set(stems.map(\.name))
    let busNames = Set(buses.map(\.name))
    var firstIndexByName: [String: Int] = [:]
    var inputs: [InputSettings] = []
    for (index, element) in elements.enumerated() {
      let base = "inputs[\(index)]"
      let fields = try object(element, at: base, allowed: InputSettings.fields, example: example)
      guard let nameNode = fields["name"] else {
        throw fail(base + ".name", element, "is missing (every input needs a name and its channels, e.g. \(example))")
      }
      let name = try string(nameNode, at: base + ".name", rule: "must be an input name in double quotes")
      if let problem = InputSettings.nameProblem(name) { throw fail(base + ".name", nameNode, problem) }
      if let earlier = firstIndexByName[name] {
        throw fail(base + ".name", nameNode, "duplicate input name \(SessionRules.quote(name)) (also inputs[\(earlier)])")
      }
      if stemNames.contains(name) {
        throw fail(
          base + ".name", nameNode, "\(SessionRules.quote(name)) is also a stem's name; inputs and stems share one set of names")
      }
      if busNames.contains(name) {
        throw fail(
          base + ".name", nameNode, "\(SessionRules.quote(name)) is also a bus's name; inputs, buses and stems share one set of names")
      }
      firstIndexByName[name] = index
      guard let channelsNode = fields["channels"] else {
        throw fail(base + ".channels", element, "is missing (an input is \"mono\" or \"stereo\", e.g. \(example))")
      }
      var input = InputSettings(name: name, channels: try choice(channelsNode, at: base + ".channels", what: "input channels"))
      if let n = fields["volume"] { input.volume = try volume(n, at: base + ".volume") }
      if let n = fields["pan"] { input.pan = try number(n, at: base + ".pan", rule: .pan) }
      if let n = fields["mute"] { input.mute = try bool(n, at: base + ".mute") }
      if let n = fields["solo"] { input.solo = try bool(n, at: base + ".solo") }
      if let n = fields["eq"] { input.eq = try eq(n, at: base + ".eq") }
      if let n = fields["bus"], let target = try destination(n, at: base + ".bus") {
        guard busNames.contains(target) else { throw fail(base + ".bus", n, InputSettings.unknownBus(target, buses: buses)) }
        input.bus = target
      }
      if let n = fields["sends"] { input.sends = try stemSends(n, at: base + ".sends") }
      if let n = fields["directOut"] { input.directOut = try bool(n, at: base + ".directOut") }
      inputs.append(input)
    }
    return inputs
  }

  /// The optional "midi" section (MidiMapping.swift).
  private func midi(_ node: JSONNode) throws(SessionError) -> MidiSettings {
    let example = "{ \"source\" : \"cc\", \"number\" : 7, \"action\" : \"volume\", \"target\" : \"drums\" }"
    let fields = try object(node, at: "midi", allowed: MidiSettings.fields, example: "{ \"mappings\" : [ \(example) ] }")
    var settings = MidiSettings()
    if let value = fields["feedback"] { settings.feedback = try bool(value, at: "midi.feedback") }
    guard let list = fields["mappings"] else { return settings }
    guard case .array(let elements) = list.value else {
      throw fail("midi.mappings", list, "must be an array of mappings [ \(example), ... ] (got \(describe(list)))")
    }
    if elements.count > MidiSettings.maximumMappings {
      throw fail("midi.mappings", list, "has \(elements.count) mappings; at most \(MidiSettings.maximumMappings)")
    }
    for (index, element) in elements.enumerated() {
      let base = "midi.mappings[\(index)]"
      let f = try object(element, at: base, allowed: MidiMapping.fields, example: example)
      func need(_ key: String) throws(SessionError) -> JSONNode {
        guard let n = f[key] else {
          throw fail(base + "." + key, element, "is missing (every mapping needs a source and an action, e.g. \(example))")
        }
        return n
      }
      func whole(_ key: String, rule: String, _ range: ClosedRange<Int>) throws(SessionError) -> Int? {
        guard let n = f[key] else { return nil }
        guard case .number(let literal) = n.value, let v = JSONNumber.integer(literal), range.contains(v) else {
          throw fail(base + "." + key, n, rule + " (got \(describe(n)))")
        }
        return v
      }
      let source: MidiMapping.Source = try choice(try need("source"), at: base + ".source", what: "MIDI source")
      let action: MidiMapping.Action = try choice(try need("action"), at: base + ".action", what: "MIDI action")
      let number = try whole("number", rule: MidiMapping.numberRule, 0...127)
      if number == nil && source != .bend {
        throw fail(
          base + ".number", element,
          "is missing (a \(source.rawValue) mapping needs its \(source == .cc ? "controller" : "note") number 0…127)")
      }
      let channel = try whole("channel", rule: MidiMapping.channelRule, 1...16)
      var target = ""
      if let t = f["target"] {
        target = try string(t, at: base + ".target", rule: "must be a stem or effect name in double quotes")
      }
      var send = ""
      if let s = f["send"] { send = try string(s, at: base + ".send", rule: "must be a send name in double quotes") }
      let mapping = MidiMapping(
        source: source, number: number ?? 0, channel: channel, action: action, target: target, send: send)
      if let problem = mapping.problem() {
        throw fail(base + "." + problem.field, f[problem.field] ?? element, problem.message)
      }
      if let earlier = settings.mappings.firstIndex(of: mapping) {
        throw fail(base, element, "repeats midi.mappings[\(earlier)] (\(mapping.description)); keep one")
      }
      settings.mappings.append(mapping)
    }
    return settings
  }

  // MARK: Header

  private func checkFormat(_ members: [JSONMember], root: JSONNode) throws(SessionError) {
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

  private func readVersion(_ members: [JSONMember], root: JSONNode) throws(SessionError) -> Int {
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

  private func stems(_ node: JSONNode) throws(SessionError) -> [StemSettings] {
    guard case .array(let elements) = node.value else {
      throw fail(
        "stems", node,
        "must be an array of stems [ { \"name\" : ..., \"file\" : ... }, ... ] "
          + "(got \(describe(node)))")
    }
    var stems: [StemSettings] = []
    stems.reserveCapacity(elements.count)
    var firstIndexByName: [String: Int] = [:]
    for (index, element) in elements.enumerated() {
      let base = "stems[\(index)]"
      let fields = try object(
        element, at: base, allowed: SessionRules.stemFields,
        example: "{ \"name\" : \"drums\", \"file\" : \"drums.flac\" }")
      let (name, file) = try nameAndFile(
        fields, of: .stem, in: element, at: base, index: index,
        firstIndexByName: &firstIndexByName)
      var stem = StemSettings(name: name, file: file)
      if let node = fields["volume"] { stem.volume = try volume(node, at: base + ".volume") }
      if let node = fields["pan"] {
        stem.pan = try number(node, at: base + ".pan", rule: .pan)
      }
      if let node = fields["rate"] {
        stem.rate = try number(node, at: base + ".rate", rule: .rate)
      }
      if let node = fields["loops"] { stem.loops = try loops(node, at: base + ".loops") }
      if let node = fields["mute"] { stem.mute = try bool(node, at: base + ".mute") }
      if let node = fields["solo"] { stem.solo = try bool(node, at: base + ".solo") }
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
      if let node = fields["eq"] { stem.eq = try eq(node, at: base + ".eq") }
      if let node = fields["bus"] { stem.bus = try destination(node, at: base + ".bus") }
      if let node = fields["sends"] { stem.sends = try stemSends(node, at: base + ".sends") }
      stems.append(stem)
    }
    return stems
  }

  /// A channel EQ (`"eq"` of a stem or of the master; EQSettings.swift): every part optional.
  private func eq(_ node: JSONNode, at base: String) throws(SessionError) -> EQSettings {
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
  private func loopRegion(
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

  private func effects(_ node: JSONNode) throws(SessionError) -> [EffectSettings] {
    guard case .array(let elements) = node.value else {
      throw fail(
        "effects", node,
        "must be an array of effects [ { \"name\" : ..., \"file\" : ... }, ... ] "
          + "(got \(describe(node)))")
    }
    var effects: [EffectSettings] = []
    effects.reserveCapacity(elements.count)
    var firstIndexByName: [String: Int] = [:]
    for (index, element) in elements.enumerated() {
      let base = "effects[\(index)]"
      let fields = try object(
        element, at: base, allowed: SessionRules.effectFields,
        example: "{ \"name\" : \"horn\", \"file\" : \"horn.wav\" }")
      let (name, file) = try nameAndFile(
        fields, of: .effect, in: element, at: base, index: index,
        firstIndexByName: &firstIndexByName)
      var effect = EffectSettings(name: name, file: file)
      if let node = fields["volume"] { effect.volume = try volume(node, at: base + ".volume") }
      if let node = fields["pan"] {
        effect.pan = try number(node, at: base + ".pan", rule: .pan)
      }
      effects.append(effect)
    }
    return effects
  }

  /// The required `"name"` and `"file"` of a stem or effect, checked, with the name recorded in
  /// `firstIndexByName` so a later duplicate is caught.
  private func nameAndFile(
    _ fields: [String: JSONNode], of kind: SessionRules.ElementKind,
    in element: JSONNode, at base: String, index: Int,
    firstIndexByName: inout [String: Int]
  ) throws(SessionError) -> (String, String) {
    let nameNode = try required(fields, "name", in: element, at: base, of: kind)
    let name = try string(nameNode, at: base + ".name", rule: "must be \(kind.withArticle) name in double quotes")
    if let problem = SessionRules.nameProblem(name, of: kind) { throw fail(base + ".name", nameNode, problem) }
    if let earlier = firstIndexByName[name] {
      throw fail(base + ".name", nameNode, SessionRules.duplicateNameMessage(name, of: kind, earlier: earlier))
    }
    firstIndexByName[name] = index

    let fileNode = try required(fields, "file", in: element, at: base, of: kind)
    let file = try string(fileNode, at: base + ".file", rule: "must be the audio file's path in double quotes")
    if let problem = SessionRules.audioFileProblem(file) { throw fail(base + ".file", fileNode, problem) }
    return (name, file)
  }

  private func recording(_ node: JSONNode) throws(SessionError) -> RecordingSettings {
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

  private func tempo(_ node: JSONNode) throws(SessionError) -> Tempo {
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

  private func connections(_ node: JSONNode) throws(SessionError) -> [String: [String]] {
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

  // MARK: Objects and fields

  /// The members of an object node, after rejecting duplicate and unknown keys.
  private func object(
    _ node: JSONNode, at path: String, allowed: [String],
    example: String
  ) throws(SessionError) -> [String: JSONNode] {
    guard case .object(let members) = node.value else {
      throw fail(path, node, "must be an object such as \(example) (got \(describe(node)))")
    }
    try rejectDuplicates(members, path: path)
    return try knownFields(members, path: path, allowed: allowed)
  }

  private func rejectDuplicates(_ members: [JSONMember], path: String) throws(SessionError) {
    var firstByKey: [String: TextPosition] = [:]
    for member in members {
      if let first = firstByKey[member.key] {
        throw fail(
          SessionRules.path(path, member.key), member.keyPosition,
          "appears more than once (first at line \(first.line), column \(first.column)); "
            + "keep one")
      }
      firstByKey[member.key] = member.keyPosition
    }
  }

  private func knownFields(
    _ members: [JSONMember], path: String,
    allowed: [String]
  ) throws(SessionError) -> [String: JSONNode] {
    var fields: [String: JSONNode] = [:]
    for member in members {
      guard allowed.contains(member.key) else {
        var message = "unknown field (allowed: \(allowed.joined(separator: ", ")))"
        if let guess = closestMatch(member.key, in: allowed) { message += "; did you mean \"\(guess)\"?" }
        throw fail(SessionRules.path(path, member.key), member.keyPosition, message)
      }
      fields[member.key] = member.value
    }
    return fields
  }

  private func required(
    _ fields: [String: JSONNode], _ key: String, in object: JSONNode,
    at path: String, of kind: SessionRules.ElementKind
  ) throws(SessionError) -> JSONNode {
    guard let node = fields[key] else {
      throw fail(
        SessionRules.path(path, key), object,
        "is missing (every \(kind.rawValue) needs a name and a file)")
    }
    return node
  }

  // MARK: Values

  private func number(_ node: JSONNode, at path: String, rule: SettingRule) throws(SessionError) -> Double {
    guard case .number(let literal) = node.value, let value = JSONNumber.double(literal),
      rule.accepts(value)
    else {
      throw fail(path, node, rule.rule + " (got \(describe(node)))")
    }
    return value
  }

  /// A volume: a linear number, or a string in dB ("-6dB"), which is converted to linear gain.
  private func volume(_ node: JSONNode, at path: String) throws(SessionError) -> Double {
    if case .string(let text) = node.value {
      guard let gain = Decibels.linearGain(text: text) else {
        throw fail(path, node, SettingRule.volume.rule + " (got \(describe(node)))")
      }
      guard SettingRule.volume.accepts(gain) else {
        throw fail(path, node, SettingRule.volume.rule + " (got \(describe(node))\(Decibels.gainNote(gain)))")
      }
      return gain
    }
    return try number(node, at: path, rule: .volume)
  }

  private func loops(_ node: JSONNode, at path: String) throws(SessionError) -> Int {
    guard case .number(let literal) = node.value, let value = JSONNumber.integer(literal),
      SettingRule.loops.accepts(value)
    else {
      throw fail(path, node, SettingRule.loops.rule + " (got \(describe(node)))")
    }
    return value
  }

  private func bool(_ node: JSONNode, at path: String) throws(SessionError) -> Bool {
    guard case .bool(let value) = node.value else {
      throw fail(path, node, SessionRules.boolRule + " (got \(describe(node)))")
    }
    return value
  }

  private func string(_ node: JSONNode, at path: String, rule: String) throws(SessionError) -> String {
    guard case .string(let value) = node.value else {
      throw fail(path, node, rule + " (got \(describe(node)))")
    }
    return value
  }

  /// One of an enum's raw values.
  private func choice<Choice: RawRepresentable & CaseIterable>(
    _ node: JSONNode, at path: String, what: String
  ) throws(SessionError) -> Choice where Choice.RawValue == String {
    let allowed = Choice.allCases.map(\.rawValue).joined(separator: ", ")
    guard case .string(let text) = node.value else {
      throw fail(path, node, "must be one of \(allowed) (got \(describe(node)))")
    }
    guard let value = Choice(rawValue: text) else {
      throw fail(path, node, "unknown \(what) \(SessionRules.quote(text)) (allowed: \(allowed))")
    }
    return value
  }

  // MARK: Messages

  /// How a value appears in a "(got …)" clause: strings quoted, numbers as written, containers by kind.
  private func describe(_ node: JSONNode) -> String {
    switch node.value {
    case .null: return "null"
    case .bool(let value): return value ? "true" : "false"
    case .number(let literal):
      return literal.count <= 40 ? literal : String(literal.prefix(40)) + "…"
    case .string(let text): return SessionRules.quote(text)
    case .array: return "an array"
    case .object: return "an object"
    }
  }

  private func fail(_ location: String?, _ node: JSONNode, _ message: String) -> SessionError {
    fail(location, node.position, message)
  }

  private func fail(_ location: String?, _ position: TextPosition, _ message: String) -> SessionError {
    SessionError(
      file: source, location: location, line: position.line, column: position.column,
      message: message)
  }

  /// The allowed word a mistyped field name most likely meant: one it is a prefix of (`vol` →
  /// `volume`), else the closest by edit distance if that is small for the word's length.
  private func closestMatch(_ word: String, in candidates: [String]) -> String? {
    let lowered = word.lowercased()
    if lowered.count >= 2, let extended = candidates.first(where: { $0.lowercased().hasPrefix(lowered) }) {
      return extended
    }
    var best: (candidate: String, distance: Int)?
    for candidate in candidates {
      let distance = editDistance(lowered, candidate.lowercased())
      if let current = best, current.distance <= distance { continue }
      best = (candidate, distance)
    }
    guard let best, best.distance <= max(1, min(2, lowered.count / 3)) else { return nil }
    return best.candidate
  }

  /// Levenshtein distance, capped in cost by only being used on short field names.
  private func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a.unicodeScalars.prefix(64))
    let b = Array(b.unicodeScalars.prefix(64))
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
      current[0] = i
      for j in 1...b.count {
        current[j] = min(
          previous[j] + 1, current[j - 1] + 1,
          previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
      }
      swap(&previous, &current)
    }
    return previous[b.count]
  }
}

/// Upgrading documents written by older stemdeck versions.
///
/// A session file states its format version. When the format changes (a field renamed, a unit
/// changed, a section restructured), `Session.currentVersion` goes up by one and `migrate` gets a
/// case that rewrites a document of the previous version into the new shape. Loading then applies
/// the steps in order (1→2, 2→3, …), so every step is written once and only knows its neighbours.
/// Migration works on the parsed document (before validation), so the validator only ever knows the
/// current format.
///
/// Versions: 1 (the first); 2 adds the channel EQ (`"eq"` on stems and on the master); 3 adds the
/// mixer graph's new parts (buses, live inputs, stretch quality; every one optional). A version 1
/// document is a valid version 2 document without EQ (flat), and a version 2 document a valid
/// version 3 document without those parts, so both steps change nothing; older files are saved as
/// the current version.
enum SessionMigration {
  /// Applies every migration step from `version` up to `Session.currentVersion`.
  static func upgrade(_ document: [JSONMember], from version: Int) -> [JSONMember] {
    var document = document
    var version = version
    while version < Session.currentVersion {
      document = migrate(document, from: version)
      version += 1
    }
    return document
  }

  /// Rewrites a document of format `version` into format `version + 1`.
  ///
  /// Example of a future step, if version 2 renamed "master" to "main":
  ///
  ///     case 1:
  ///       return document.map { member in
  ///         var member = member
  ///         if member.key == "master" { member.key = "main" }
  ///         return member
  ///       }
  static func migrate(_ document: [JSONMember], from version: Int) -> [JSONMember] {
    switch version {
    case 1:
      return document  // 1 → 2: "eq" is new and optional; nothing is renamed
    case 2:
      return document  // 2 → 3: the new sections are optional; nothing is renamed
    default:
      return document
    }
  }
}
