import Foundation

/// The rules a session must follow, each with the sentence that explains it. The decoder (which
/// reads files) and `Session.validate()` (which checks values set in code) share these, so both
/// accept the same sessions and word their errors the same way.
enum SessionRules {
  /// The value of the top-level `"format"` field.
  static let formatName = "stemdeck-session"

  static let topLevelFields = [
    "format", "version", "quality", "master", "options", "recording",
    "tempo", "click", "marks", "position", "connections", "stems", "effects", "midi", "buses", "inputs", "sends", "scenes", "recallSafe"
  ]
  static let masterFields = ["volume", "eq", "inserts"]
  static let optionFields = [
    "autoPauseOnDisconnect", "meterPoint", "songChange", "crossfadeSeconds",
    "transportSync", "effectsOutput"
  ]
  static let recordingFields = ["format", "takesMuted", "folder"]
  static let tempoFields = ["bpm", "beatsPerBar"]
  /// A stem's fields: its name and file, its strip controls (the table's keys, StripParameter.swift)
  /// and its own.
  static let stemFields =
    ["name", "file"] + StripParameter.sessionKeys(of: .stem) + [
      "loops", "directOut", "startOffset", "loopStart", "loopEnd", "crossfade", "mode", "stretch", "pitch", "eq", "bus", "sends", "inserts"
    ]
  static let effectFields = ["name", "file", "volume", "pan"]

  /// What a named list element is, for messages: `"stem"` or `"effect"`.
  enum ElementKind: String {
    case stem
    case effect
    case bus
    case scene
    case mark

    /// The list's field name and its location prefix: `"stems"`, `"effects"`, `"buses"`.
    var listName: String { self == .bus ? "buses" : rawValue + "s" }

    /// The noun with its indefinite article: `"a stem"`, `"an effect"`, `"a bus"`.
    var withArticle: String {
      switch self {
      case .effect: "an effect"
      case .stem: "a stem"
      case .bus: "a bus"
      case .scene: "a scene"
      case .mark: "a mark"
      }
    }
  }

  // MARK: Numbers

  // The numeric rules (range and sentence) are `SettingRule`s (SettingRule.swift), shared with the
  // mixer and the console.

  static let boolRule = "must be true or false"
  /// A pitch shift in varispeed mode (the REPL's `pitch` refuses it the same way).
  static func pitchNeedsStretchMessage(_ pitch: Double) -> String {
    "a pitch shift needs \"mode\" : \"stretch\" (in varispeed the pitch follows the rate; 0 is the only "
      + "pitch allowed) (got \(number(pitch)) in varispeed mode)"
  }

  /// The message for a loop region given by only one of its ends, reported at the missing one:
  /// `is missing: a loop region needs both "loopStart" and "loopEnd" (only "loopStart" is given)`.
  static func loopHalfMissingMessage(given: String) -> String {
    "is missing: a loop region needs both \"loopStart\" and \"loopEnd\" (only \"\(given)\" is given; "
      + "remove it for no loop region)"
  }

  /// The message for a loop region that ends at or before its start, reported at `loopEnd`.
  static func loopOrderMessage(start: Double, end: Double) -> String {
    "must be greater than loopStart (got loopStart \(number(start)), loopEnd \(number(end)))"
  }

  /// Formats a Double the way the session file writes it: integral values without a decimal point
  /// (`0`, `1`, `3`), others as the shortest text that reads back to the same Double (`0.45`).
  /// Non-finite values (never written to a file) print as `nan`, `inf`, `-inf`.
  static func number(_ value: Double) -> String {
    guard value.isFinite else { return value.isNaN ? "nan" : (value < 0 ? "-inf" : "inf") }
    if value == value.rounded(.towardZero) && abs(value) < 1e15 {
      return String(Int64(value))
    }
    return value.description
  }

  // MARK: Names and paths

  /// The characters allowed in a stem or effect name, as the error message says them.
  static let nameAlphabet = "letters, digits, '_', '-' and '.'"

  /// Why `name` is not a valid stem (or effect) name, or nil if it is. Stems and effects follow
  /// the same rules (stems also avoid the port names in `NameRules.reservedForPorts`); only the
  /// wording names the kind. The mixer and the console use these through `NameRules`.
  static func nameProblem(_ name: String, of kind: ElementKind = .stem) -> String? {
    let quoted = quote(name)
    let noun = kind.rawValue
    let length = name.unicodeScalars.count
    if length < SettingRange.nameLength.lowerBound {
      return "\(kind.withArticle) name must not be empty (allowed: 1 to \(SettingRange.nameLength.upperBound) "
        + "\(nameAlphabet))"
    }
    if length > SettingRange.nameLength.upperBound {
      return "\(noun) name \(quoted) is too long (\(length) characters; at most "
        + "\(SettingRange.nameLength.upperBound))"
    }
    if let bad = name.unicodeScalars.first(where: { !isNameScalar($0) }) {
      return "invalid \(noun) name \(quoted): \(describe(bad)) is not allowed (allowed: 1 to "
        + "\(SettingRange.nameLength.upperBound) ASCII \(nameAlphabet))"
    }
    if let first = name.first, first == "." || first == "-" {
      return "invalid \(noun) name \(quoted): it may not start with '\(first)' (a stem's name is also its file's "
        + "in 'render --stems': '.' and '..' are folders and '.x' a hidden file; a word starting with '-' reads as an "
        + "option); start it with a letter, a digit or '_'"
    }
    if name.lowercased() == "all" {
      return "the \(noun) name \(quoted) is reserved (it means every \(noun) in console commands); "
        + "choose another name"
    }
    if kind != .effect, kind != .scene, kind != .mark, NameRules.reservedForPorts.contains(name.lowercased()) {
      let lowered = name.lowercased()
      return "the \(noun) name \(quoted) is reserved: a \(noun)'s direct outs are NAME_L/NAME_R, and "
        + "\(lowered)_L/R are stemdeck's own ports (master_L/R, in_L/R, sfx_L/R); choose another name"
    }
    return nil
  }

  /// The message for a name used twice in one list: `duplicate effect name 'horn' (also effects[0])`.
  static func duplicateNameMessage(_ name: String, of kind: ElementKind, earlier: Int) -> String {
    "duplicate \(kind.rawValue) name '\(name)' (also \(kind.listName)[\(earlier)])"
  }

  /// The names of one list of a session (its stems, effects, buses, scenes or marks) as they are
  /// read or checked in order, each with the index it first stands at: what tells a name the
  /// rules refuse (`nameProblem`) or one the list used before (`duplicateNameMessage`).
  struct NameList {
    let kind: ElementKind
    /// The index each name first stood at.
    private(set) var firstIndexByName: [String: Int] = [:]

    init(of kind: ElementKind) { self.kind = kind }

    /// What is wrong with `name`, the name of the list's element `index`, or nil (then it is
    /// noted, so that a later element of the same name is a duplicate).
    mutating func problem(_ name: String, at index: Int) -> String? {
      if let problem = SessionRules.nameProblem(name, of: kind) { return problem }
      if let earlier = firstIndexByName[name] { return SessionRules.duplicateNameMessage(name, of: kind, earlier: earlier) }
      firstIndexByName[name] = index
      return nil
    }
  }

  private static func isNameScalar(_ scalar: Unicode.Scalar) -> Bool {
    StemSettings.isNameCharacter(scalar)
  }

  /// Why `file` is not a usable audio file path (of a stem or an effect), or nil if it is.
  static func audioFileProblem(_ file: String) -> String? {
    if file.isEmpty {
      return "must not be empty (the audio file's path, relative to the session file's folder "
        + "or absolute)"
    }
    if file.utf8.contains(0) { return "must not contain a NUL character" }
    return nil
  }

  /// Why `folder` is not a usable recording folder, or nil if it is. Empty is allowed (the
  /// session file's own folder).
  static func recordingFolderProblem(_ folder: String) -> String? {
    if folder.utf8.contains(0) { return "must not contain a NUL character" }
    let bytes = folder.utf8.count
    if !SettingRange.recordingFolderBytes.contains(bytes) {
      return "is too long (\(bytes) bytes; at most \(SettingRange.recordingFolderBytes.upperBound))"
    }
    return nil
  }

  static let recordingFolderRule =
    "must be the takes folder's path in double quotes, relative to the "
    + "session file's folder (\"\" for that folder itself)"

  /// The longest JACK port name accepted (JACK's own limit is 320 bytes for "client:port").
  static let maximumPortNameBytes = 320

  /// Why `name` is not a valid stemdeck port short name (a key of `connections`), or nil.
  static func localPortProblem(_ name: String) -> String? {
    if name.isEmpty { return "a stemdeck port name must not be empty (e.g. \"master_L\")" }
    if name.utf8.count > maximumPortNameBytes {
      return "port name is too long (at most \(maximumPortNameBytes) bytes)"
    }
    if name.contains(":") {
      return "\(quote(name)) must be a stemdeck port's short name without a client part, "
        + "e.g. \"master_L\""
    }
    if let bad = name.unicodeScalars.first(where: { $0.value < 0x20 || $0.value == 0x7F }) {
      return "port name \(quote(name)) contains \(describe(bad))"
    }
    return nil
  }

  static let peerPortRule = "must be a full JACK port name \"client:port\", e.g. \"system:playback_1\""

  /// Why `name` is not a full JACK port name (an element of a `connections` list), or nil.
  static func peerPortProblem(_ name: String) -> String? {
    guard let colon = name.firstIndex(of: ":"), colon != name.startIndex,
      name.index(after: colon) != name.endIndex
    else {
      return peerPortRule + " (got \(quote(name)))"
    }
    if name.utf8.count > maximumPortNameBytes {
      return "port name is too long (at most \(maximumPortNameBytes) bytes)"
    }
    if let bad = name.unicodeScalars.first(where: { $0.value < 0x20 || $0.value == 0x7F }) {
      return "port name \(quote(name)) contains \(describe(bad))"
    }
    return nil
  }

  // MARK: Text helpers

  /// `text` as a JSON string literal, cut to 40 characters (with "…") so messages stay short.
  static func quote(_ text: String) -> String {
    let limit = 40
    if text.unicodeScalars.count <= limit { return JSONText.string(text) }
    var scalars = String.UnicodeScalarView()
    scalars.append(contentsOf: text.unicodeScalars.prefix(limit))
    return JSONText.string(String(scalars)) + "…"
  }

  /// A human name for a character in an error message.
  static func describe(_ scalar: Unicode.Scalar) -> String {
    switch scalar {
    case " ": return "a space"
    case "\t": return "a tab"
    case _ where scalar.value < 0x20 || scalar.value == 0x7F:
      return "a control character (code \(scalar.value))"
    default: return "'\(Character(scalar))'"
    }
  }

  /// Joins a document path and a field name: `stems[2]` + `pan` → `stems[2].pan`. Keys that are not
  /// plain words are quoted: `connections["odd key"]`.
  static func path(_ base: String, _ key: String) -> String {
    let plain = !key.isEmpty && key.unicodeScalars.allSatisfy(isNameScalar)
    if !plain { return base + "[" + quote(key) + "]" }
    return base.isEmpty ? key : base + "." + key
  }
}

extension Session {
  /// Checks every value against the session rules (ranges, the tempo, stem loop regions, stem and
  /// effect names and their uniqueness, file paths, the recording folder, connection port names) and
  /// throws the first problem found.
  ///
  /// `SessionFile.save` calls this before writing, so a saved file always loads again.
  /// - Parameter source: the name used as `SessionError.file` (e.g. the path being saved to).
  public func validate(source: String = "session") throws(SessionError) {
    func fail(_ location: String, _ message: String) -> SessionError {
      SessionError(file: source, location: location, message: message)
    }
    func check(_ value: Double, _ rule: SettingRule, _ location: String) throws(SessionError) {
      if !rule.accepts(value) { throw fail(location, rule.rule + " (got \(SessionRules.number(value)))") }
    }

    try check(masterVolume, .volume, "master.volume")
    if let problem = masterEQ.problem() { throw fail("master.eq." + problem.field, problem.message) }
    try check(options.crossfadeSeconds, .crossfadeSeconds, "options.crossfadeSeconds")
    if let problem = SessionRules.recordingFolderProblem(recording.folder) {
      throw fail("recording.folder", problem)
    }
    if let tempo {
      try check(tempo.bpm, .bpm, "tempo.bpm")
      if !SettingRule.beatsPerBar.accepts(tempo.beatsPerBar) {
        throw fail("tempo.beatsPerBar", SettingRule.beatsPerBar.rule + " (got \(tempo.beatsPerBar))")
      }
    }
    if let problem = click.problem() { throw fail("click." + problem.field, problem.message) }
    if let problem = markProblem() { throw fail(problem.location, problem.message) }
    try check(position, .position, "position")
    var stemNames = SessionRules.NameList(of: .stem)
    for (index, stem) in stems.enumerated() {
      let base = "stems[\(index)]"
      if let problem = stemNames.problem(stem.name, at: index) { throw fail(base + ".name", problem) }
      if let problem = SessionRules.audioFileProblem(stem.file) { throw fail(base + ".file", problem) }
      if let p = stem.strip.ruleProblem(of: .stem) { throw fail(base + "." + p.key, p.message) }
      try check(stem.rate, .rate, base + ".rate")
      if !SettingRule.loops.accepts(stem.loops) {
        throw fail(base + ".loops", SettingRule.loops.rule + " (got \(stem.loops))")
      }
      try check(stem.startOffset, .startOffset, base + ".startOffset")
      if let start = stem.loopStart { try check(start, .loopPoint, base + ".loopStart") }
      if let end = stem.loopEnd { try check(end, .loopPoint, base + ".loopEnd") }
      switch (stem.loopStart, stem.loopEnd) {
      case (nil, nil): break
      case (_?, nil): throw fail(base + ".loopEnd", SessionRules.loopHalfMissingMessage(given: "loopStart"))
      case (nil, _?): throw fail(base + ".loopStart", SessionRules.loopHalfMissingMessage(given: "loopEnd"))
      case let (start?, end?):
        if start >= end { throw fail(base + ".loopEnd", SessionRules.loopOrderMessage(start: start, end: end)) }
      }
      try check(stem.crossfade, .crossfade, base + ".crossfade")
      try check(stem.pitch, .pitch, base + ".pitch")
      if stem.mode == .varispeed && stem.pitch != 0 {
        throw fail(base + ".pitch", SessionRules.pitchNeedsStretchMessage(stem.pitch))
      }
      if let problem = stem.eq.problem() { throw fail(base + ".eq." + problem.field, problem.message) }
    }
    var effectNames = SessionRules.NameList(of: .effect)
    for (index, effect) in effects.enumerated() {
      let base = "effects[\(index)]"
      if let problem = effectNames.problem(effect.name, at: index) { throw fail(base + ".name", problem) }
      if let problem = SessionRules.audioFileProblem(effect.file) { throw fail(base + ".file", problem) }
      try check(effect.volume, .volume, base + ".volume")
      try check(effect.pan, .pan, base + ".pan")
    }
    if let problem = busProblem() { throw fail(problem.location, problem.message) }
    if let problem = midi.problem() { throw fail(problem.location, problem.message) }
    try validateInputs(fail)
    if let problem = sendProblem() ?? portProblem() { throw fail(problem.location, problem.message) }
    for (port, peers) in connections.sorted(by: { $0.key < $1.key }) {
      let base = SessionRules.path("connections", port)
      if let problem = SessionRules.localPortProblem(port) { throw fail(base, problem) }
      var seen = Set<String>()
      for (index, peer) in peers.enumerated() {
        if let problem = SessionRules.peerPortProblem(peer) { throw fail(base + "[\(index)]", problem) }
        if !seen.insert(peer).inserted {
          throw fail(base + "[\(index)]", "duplicate connection to \(SessionRules.quote(peer))")
        }
      }
    }
  }
}
