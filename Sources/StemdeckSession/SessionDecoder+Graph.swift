// The mixer graph's sections of a session (SessionDecoder.swift): aux sends, buses, live inputs
// and the MIDI map.

extension SessionDecoder {
  /// The optional "sends" section (SendSettings.swift): names and return volumes; the stems'
  /// levels are checked against it by `Session.sendProblem` once both are read.
  func sends(_ node: JSONNode) throws(SessionError) -> [SendSettings] {
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
  func stemSends(_ node: JSONNode, at path: String) throws(SessionError) -> [StemSend] {
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
  func sendNode(_ location: String, _ fields: [String: JSONNode]) -> JSONNode? {
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
  func buses(_ node: JSONNode) throws(SessionError) -> [BusSettings] {
    try namedList(
      node, of: .bus, allowed: BusSettings.fields, arrayExample: "{ \"name\" : \"drums_bus\" }",
      example: "{ \"name\" : \"drums_bus\", \"volume\" : 0.8 }", maximum: BusSettings.maximumBuses
    ) { (object) throws(SessionError) -> BusSettings in
      var bus = BusSettings(name: object.name)
      try stripControls(object.fields, of: .bus, into: &bus.strip, at: object.base)
      if let n = object.fields["directOut"] { bus.directOut = try bool(n, at: object.base + ".directOut") }
      try stripRouting(object.fields, into: &bus.strip, at: object.base)
      return bus
    }
  }

  /// A `"bus"` field: the name of the bus fed, in double quotes ("master" is the same as leaving it out).
  func destination(_ node: JSONNode, at path: String) throws(SessionError) -> String? {
    let name = try string(node, at: path, rule: "must be the name of a bus in double quotes (leave it out for the master)")
    if name == "master" { return nil }
    if let problem = SessionRules.nameProblem(name, of: .bus) { throw fail(path, node, problem) }
    return name
  }

  /// The node a route problem's location (`buses[2].bus`, `stems[0].bus`) points at, for its line.
  func routeNode(_ location: String, _ fields: [String: JSONNode]) -> JSONNode? {
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
  func inputs(_ node: JSONNode, stems: [StemSettings], buses: [BusSettings]) throws(SessionError) -> [InputSettings] {
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
      try stripControls(fields, of: .input, into: &input.strip, at: base)
      if let n = fields["eq"] { input.eq = try eq(n, at: base + ".eq") }
      if let n = fields["inserts"] { input.strip.inserts = try inserts(n, at: base + ".inserts") }
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
  func midi(_ node: JSONNode) throws(SessionError) -> MidiSettings {
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
      if let p = f["parameter"] {
        guard action == .insert, send.isEmpty else {
          throw fail(base + ".parameter", p, "only an insert mapping names a parameter (alone, without \"send\")")
        }
        send = try string(p, at: base + ".parameter", rule: "must be \"N/SYMBOL\" in double quotes (e.g. \"1/gain\")")
      }
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
}
