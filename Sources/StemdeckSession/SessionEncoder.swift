import StemdeckText
// Writing a session as text. The layout is fixed and hand-made (not JSONSerialization's), so a
// file diffs well under version control and Sessions/demo.json round-trips byte for byte:
//
//   {
//     "format" : "stemdeck-session",
//     "version" : 2,
//     "quality" : "fast",
//     "master" : { "volume" : 0.9 },                     <- "eq" (EQSettings.swift) only when not flat
//     "options" : { "autoPauseOnDisconnect" : false, "meterPoint" : "post" },
//     "recording" : { "format" : "wav24", "takesMuted" : true, "folder" : "takes" },   <- only when
//                                                                   not the default; all three keys
//     "tempo" : { "bpm" : 100, "beatsPerBar" : 4 },        <- only when set; both keys
//     "click" : { "on" : true, "countIn" : 2 },            <- only when not the default; only the
//                                                             keys not at theirs (ClickSettings.swift)
//     "marks" : [                                          <- only when not empty (MarkSettings.swift)
//       { "name" : "chorus", "at" : 61.5 }                 <- one per line
//     ],
//     "position" : 12.5,                                   <- only when not 0
//     "connections" : {                                    <- only when not empty; keys sorted
//       "master_L" : [ "system:playback_1" ]
//     },
//     "stems" : [
//       { "name" : "drums", "file" : "../Samples/drums.flac", "volume" : 0.8, ... },   <- one per line
//       ...
//     ],
//     "effects" : [                                        <- only when not empty
//       { "name" : "horn", "file" : "../Samples/horn.wav", "volume" : 1, "pan" : 0 }  <- one per line
//     ],
//     "buses" : [                                          <- only when not empty (BusSettings.swift)
//       { "name" : "drums_bus", "volume" : 1, "pan" : 0, "mute" : false, "solo" : false }  <- one per line
//     ],
//     "midi" : { "mappings" : [                            <- only when not empty (MidiMapping.swift)
//       { "source" : "cc", "number" : 7, "action" : "volume", "target" : "drums" }   <- one per line
//     ] },
//     "inputs" : [                                         <- only when not empty (InputSettings.swift)
//       { "name" : "mic", "channels" : "mono", "volume" : 1, "pan" : 0, "mute" : false, "solo" : false }
//     ]
//   }
//
// A stem's "directOut", "startOffset", "loopStart", "loopEnd", "crossfade", "mode", "stretch", "pitch", "eq" and "bus" are
// written (in that order, after "solo") only when they differ from the defaults, and so are the
// options "songChange", "crossfadeSeconds", "transportSync" and "effectsOutput" (appended after "meterPoint").

/// JSON text fragments.
enum JSONText {
  /// `text` as a JSON string literal. Quotes, backslashes and control characters are escaped;
  /// everything else (including non-ASCII) is written as UTF-8.
  static func string(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      case "\u{08}": out += "\\b"
      case "\u{0C}": out += "\\f"
      case _ where RawFileName.byte(of: scalar) != nil:
        // A byte of a file name that is not UTF-8 (RawFileName): its UTF-16 pair, \udbff\udeNN.
        out += "\\udbff\\ude" + String(scalar.value & 0xFF, radix: 16)
      case _ where scalar.value < 0x20:
        let hex = String(scalar.value, radix: 16)
        out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      default: out.unicodeScalars.append(scalar)
      }
    }
    return out + "\""
  }

  /// A JSON number. Non-finite values cannot be written as JSON; they become `null`, which the
  /// decoder rejects with a clear message. (`save` validates first, so it never writes one.)
  static func number(_ value: Double) -> String {
    value.isFinite ? SessionRules.number(value) : "null"
  }

  /// A gain (a volume, a send's level): the number when it is short (0.8, 1, 0.25); else the
  /// level in dB with at most two decimals when that, read back, is the same gain to the last bit
  /// (`"-3dB"`, not 0.7079457843841379: what `vol drums -3dB` set); else the number in full. A
  /// session file is read and edited by people too; the decoder takes both forms.
  static func gain(_ value: Double) -> String {
    let plain = number(value)
    guard value.isFinite, value > 0, plain.count > 6 else { return plain }
    let decibels = Decibels.fromAmplitude(value)
    for decimals in 0...2 {
      let scale = [1.0, 10, 100][decimals]
      let text = SessionRules.number((decibels * scale).rounded() / scale) + "dB"
      if Decibels.linearGain(text: text) == value { return string(text) }
    }
    return plain
  }
}

enum SessionEncoder {
  static func encode(_ session: Session) -> String {
    var lines: [String] = []
    lines.append("{")
    var fields: [String] = []
    fields.append("\"format\" : " + JSONText.string(SessionRules.formatName))
    fields.append("\"version\" : \(Session.currentVersion)")
    fields.append("\"quality\" : " + JSONText.string(session.quality.rawValue))
    var master = ["\"volume\" : \(JSONText.gain(session.masterVolume))"]
    if session.masterEQ != EQSettings() { master.append("\"eq\" : " + eq(session.masterEQ)) }
    if let x = inserts(session.masterInserts) { master.append(x) }
    fields.append("\"master\" : { " + master.joined(separator: ", ") + " }")
    fields.append("\"options\" : " + options(session.options))
    if session.recording != RecordingSettings() {
      fields.append("\"recording\" : " + recording(session.recording))
    }
    if let tempo = session.tempo {
      fields.append("\"tempo\" : { \"bpm\" : \(JSONText.number(tempo.bpm)), \"beatsPerBar\" : \(tempo.beatsPerBar) }")
    }
    if session.click != ClickSettings() { fields.append("\"click\" : " + session.click.encoded()) }
    if !session.marks.isEmpty { fields.append(marks(session.marks)) }
    if session.position != 0 {
      fields.append("\"position\" : \(JSONText.number(session.position))")
    }
    if !session.connections.isEmpty {
      let entries = session.connections.sorted { $0.key < $1.key }.map { port, peers in
        "    " + JSONText.string(port) + " : " + list(peers.map(JSONText.string))
      }
      fields.append("\"connections\" : {\n" + entries.joined(separator: ",\n") + "\n  }")
    }
    if session.stems.isEmpty {
      fields.append("\"stems\" : []")
    } else {
      let entries = session.stems.map { "    " + stem($0) }
      fields.append("\"stems\" : [\n" + entries.joined(separator: ",\n") + "\n  ]")
    }
    if !session.effects.isEmpty {
      let entries = session.effects.map { "    " + effect($0) }
      fields.append("\"effects\" : [\n" + entries.joined(separator: ",\n") + "\n  ]")
    }
    if !session.buses.isEmpty {
      let entries = session.buses.map { "    " + bus($0) }
      fields.append("\"buses\" : [\n" + entries.joined(separator: ",\n") + "\n  ]")
    }
    if !session.midi.mappings.isEmpty || session.midi.feedback {
      let feedback = session.midi.feedback ? "\"feedback\" : true" : ""
      if session.midi.mappings.isEmpty {
        fields.append("\"midi\" : { " + feedback + " }")
      } else {
        let entries = session.midi.mappings.map { "    " + midiMapping($0) }
        fields.append(
          "\"midi\" : { " + (feedback.isEmpty ? "" : feedback + ", ") + "\"mappings\" : [\n"
            + entries.joined(separator: ",\n") + "\n  ] }")
      }
    }
    if !session.inputs.isEmpty {
      let entries = session.inputs.map { "    " + input($0) }
      fields.append("\"inputs\" : [\n" + entries.joined(separator: ",\n") + "\n  ]")
    }
    if !session.sends.isEmpty {
      let entries = session.sends.map {
        "    { \"name\" : " + JSONText.string($0.name) + ", \"returnVolume\" : " + JSONText.gain($0.returnVolume) + " }"
      }
      fields.append("\"sends\" : [\n" + entries.joined(separator: ",\n") + "\n  ]")
    }
    if !session.scenes.isEmpty { fields.append(scenes(session.scenes)) }
    if !session.recallSafe.isEmpty { fields.append("\"recallSafe\" : " + list(session.recallSafe.map(JSONText.string))) }
    lines.append(fields.map { "  " + $0 }.joined(separator: ",\n"))
    lines.append("}")
    return lines.joined(separator: "\n") + "\n"
  }

  /// One MIDI mapping on one line; "number" not for pitch bend, "channel" and "target" only when set.
  private static func midiMapping(_ m: MidiMapping) -> String {
    var members = ["\"source\" : " + JSONText.string(m.source.rawValue)]
    if m.source != .bend { members.append("\"number\" : \(m.number)") }
    if let channel = m.channel { members.append("\"channel\" : \(channel)") }
    members.append("\"action\" : " + JSONText.string(m.action.rawValue))
    if !m.target.isEmpty { members.append("\"target\" : " + JSONText.string(m.target)) }
    if !m.send.isEmpty { members.append("\"\(m.action == .insert ? "parameter" : "send")\" : " + JSONText.string(m.send)) }
    return "{ " + members.joined(separator: ", ") + " }"
  }

  /// One live input on one line (InputSettings.swift); "eq" only when not flat, "bus" only when not the master.
  private static func input(_ input: InputSettings) -> String {
    var members = [
      "\"name\" : " + JSONText.string(input.name),
      "\"channels\" : " + JSONText.string(input.channels.rawValue)
    ]
    members += stripControls(input.strip, of: .input)
    if input.eq != EQSettings() { members.append("\"eq\" : " + eq(input.eq)) }
    if let target = input.bus { members.append("\"bus\" : " + JSONText.string(target)) }
    if let levels = sendLevels(input.sends) { members.append(levels) }
    if input.directOut { members.append("\"directOut\" : true") }
    if let x = inserts(input.strip.inserts) { members.append(x) }
    return "{ " + members.joined(separator: ", ") + " }"
  }

  private static func options(_ options: SessionOptions) -> String {
    var members = [
      "\"autoPauseOnDisconnect\" : \(options.autoPauseOnDisconnect)",
      "\"meterPoint\" : " + JSONText.string(options.meterPoint.rawValue)
    ]
    let defaults = SessionOptions()
    if options.songChange != defaults.songChange {
      members.append("\"songChange\" : " + JSONText.string(options.songChange.rawValue))
    }
    if options.crossfadeSeconds != defaults.crossfadeSeconds {
      members.append("\"crossfadeSeconds\" : " + JSONText.number(options.crossfadeSeconds))
    }
    if options.transportSync != defaults.transportSync {
      members.append("\"transportSync\" : " + JSONText.string(options.transportSync.rawValue))
    }
    if options.effectsOutput != defaults.effectsOutput {
      members.append("\"effectsOutput\" : " + JSONText.string(options.effectsOutput.rawValue))
    }
    return "{ " + members.joined(separator: ", ") + " }"
  }

  private static func recording(_ recording: RecordingSettings) -> String {
    let members = [
      "\"format\" : " + JSONText.string(recording.format.rawValue),
      "\"takesMuted\" : \(recording.takesMuted)",
      "\"folder\" : " + JSONText.string(recording.folder)
    ]
    return "{ " + members.joined(separator: ", ") + " }"
  }

  private static func effect(_ effect: EffectSettings) -> String {
    let members = [
      "\"name\" : " + JSONText.string(effect.name),
      "\"file\" : " + JSONText.string(effect.file),
      "\"volume\" : " + JSONText.gain(effect.volume),
      "\"pan\" : " + JSONText.number(effect.pan)
    ]
    return "{ " + members.joined(separator: ", ") + " }"
  }

  private static func stem(_ stem: StemSettings) -> String {
    var members = [
      "\"name\" : " + JSONText.string(stem.name),
      "\"file\" : " + JSONText.string(stem.file)
    ]
    // The stem's own controls where its rate row stands: "rate", then "loops".
    members += stripControls(stem.strip, of: .stem) { control in
      control.key == StripParameter.rate.key ? ["\"rate\" : " + JSONText.number(stem.rate), "\"loops\" : \(stem.loops)"] : []
    }
    if stem.directOut { members.append("\"directOut\" : true") }
    if stem.startOffset != 0 { members.append("\"startOffset\" : " + JSONText.number(stem.startOffset)) }
    // Each end is written when set; validate() (and the decoder) require both or neither.
    if let start = stem.loopStart { members.append("\"loopStart\" : " + JSONText.number(start)) }
    if let end = stem.loopEnd { members.append("\"loopEnd\" : " + JSONText.number(end)) }
    if stem.crossfade != 0 { members.append("\"crossfade\" : " + JSONText.number(stem.crossfade)) }
    if stem.mode != .varispeed { members.append("\"mode\" : " + JSONText.string(stem.mode.rawValue)) }
    if stem.stretch != .fine { members.append("\"stretch\" : " + JSONText.string(stem.stretch.rawValue)) }
    if stem.pitch != 0 { members.append("\"pitch\" : " + JSONText.number(stem.pitch)) }
    if stem.eq != EQSettings() { members.append("\"eq\" : " + eq(stem.eq)) }
    if let bus = stem.bus { members.append("\"bus\" : " + JSONText.string(bus)) }
    if let levels = sendLevels(stem.sends) { members.append(levels) }
    if let x = inserts(stem.strip.inserts) { members.append(x) }
    return "{ " + members.joined(separator: ", ") + " }"
  }

  /// The strip controls of a stem, bus or input in the table's order (StripParameter.swift),
  /// each under its session key; `own` writes those the kind keeps itself (a row without a
  /// `field`), where that row stands.
  static func stripControls(
    _ strip: StripSettings, of kind: StripKind, own: (StripParameter) -> [String] = { _ in [] }
  ) -> [String] {
    let defaults = StripSettings.defaults(of: kind)
    return StripParameter.all.filter { $0.kinds.contains(kind) }.flatMap { control -> [String] in
      let name = "\"\(control.key)\" : "
      let value = control.reading(in: strip)
      if !control.alwaysWritten && value == control.reading(in: defaults) { return [] }
      switch value {
      case nil: return own(control)
      case .toggle(let on)?: return [name + "\(on)"]
      case .gain(let v)?: return [name + JSONText.gain(v)]
      case .number(let v)?: return [name + JSONText.number(v)]
      }
    }
  }

  /// A strip's "sends" member (a stem's, a bus's, an input's; SendSettings.swift), nil when empty.
  private static func sendLevels(_ sends: [StemSend]) -> String? {
    if sends.isEmpty { return nil }
    let levels = sends.map { level in
      "{ \"to\" : " + JSONText.string(level.to) + ", \"level\" : " + JSONText.gain(level.level)
        + (level.preFader ? ", \"pre\" : true" : "") + " }"
    }
    return "\"sends\" : [ " + levels.joined(separator: ", ") + " ]"
  }

  /// One bus on one line (BusSettings.swift): "directOut", "eq" and "bus" only when used.
  private static func bus(_ bus: BusSettings) -> String {
    var members = [
      "\"name\" : " + JSONText.string(bus.name)
    ]
    members += stripControls(bus.strip, of: .bus)
    if bus.directOut { members.append("\"directOut\" : true") }
    if bus.eq != EQSettings() { members.append("\"eq\" : " + eq(bus.eq)) }
    if let target = bus.bus { members.append("\"bus\" : " + JSONText.string(target)) }
    if let levels = sendLevels(bus.sends) { members.append(levels) }
    if let x = inserts(bus.strip.inserts) { members.append(x) }
    return "{ " + members.joined(separator: ", ") + " }"
  }

  /// A channel EQ on one line: "enabled" only when off, "hpf" only when on, a band only when it
  /// is not the default (EQSettings.swift).
  static func eq(_ eq: EQSettings) -> String {
    var members: [String] = []
    if !eq.enabled { members.append("\"enabled\" : false") }
    if let hpf = eq.highPass {
      members.append("\"hpf\" : { \"frequency\" : \(JSONText.number(hpf.frequency)), \"slope\" : \(hpf.slope) }")
    }
    func band(_ key: String, _ band: EQBand, _ defaults: EQBand) {
      guard band != defaults else { return }
      var parts = ["\"frequency\" : " + JSONText.number(band.frequency), "\"gain\" : " + JSONText.number(band.gain)]
      if key == "mid" { parts.append("\"q\" : " + JSONText.number(band.q)) }
      members.append("\"\(key)\" : { " + parts.joined(separator: ", ") + " }")
    }
    band("low", eq.low, EQSettings.defaultLow)
    band("mid", eq.mid, EQSettings.defaultMid)
    band("high", eq.high, EQSettings.defaultHigh)
    return "{ " + members.joined(separator: ", ") + " }"
  }

  private static func list(_ items: [String]) -> String {
    items.isEmpty ? "[]" : "[ " + items.joined(separator: ", ") + " ]"
  }
}
