// MIDI control mappings: the session's optional "midi" section (docs/architecture.md, *MIDI
// control*). A file without it loads unchanged; the encoder writes it only when there are
// mappings:
//
//   "midi" : { "feedback" : true, "mappings" : [          <- "feedback" only when true
//     { "source" : "cc", "number" : 7, "channel" : 1, "action" : "volume", "target" : "drums" },
//     { "source" : "note", "number" : 36, "action" : "sfx", "target" : "kick" },
//     { "source" : "cc", "number" : 64, "action" : "play" },
//     { "source" : "note", "number" : 60, "action" : "next" },            <- next, prev, stop, undo, redo: the show
//     { "source" : "cc", "number" : 8, "action" : "volume", "target" : "master" },
//     { "source" : "cc", "number" : 20, "action" : "eqlow", "target" : "drums" },
//     { "source" : "cc", "number" : 21, "action" : "send", "target" : "drums", "send" : "verb" }
//   ] }

/// One MIDI mapping: a source (a controller, a note or pitch bend, on one channel or any) and what
/// it does.
public struct MidiMapping: Equatable, Sendable {
  /// The kind of MIDI message.
  public enum Source: String, CaseIterable, Sendable {
    case cc, note, bend
    /// A program change (a preset button on a pedal board or a keyboard): every one is a press.
    case pc
  }

  /// What the mapping does. `volume`, `pan` and `rate` follow the controller (in the renderer, at
  /// the event's frame); the others act once per press (a note on, or a controller rising to 64
  /// or more) on the control thread: `sfx` fires an effect, `mute`/`solo`/`eq` toggle a stem
  /// (`eq`: its channel EQ on/off), `play` toggles play/pause; `next`, `prev` and `stop` are the
  /// show's own commands (the front end runs them as the REPL's `next`, `prev`, `stop`). A
  /// `volume` mapping's target may be `master`, the master fader (on the control thread). `eqlow`, `eqmid` and `eqhigh`
  /// follow a controller on the control thread: the band's gain, CC 0 → −18 dB, 64 → 0 dB,
  /// 127 → +18 dB (`eqGain(value:)`; the EQ glides to it, so the control loop's pace is smooth).
  /// `send` follows a controller on the control thread too: a strip's level into the aux send
  /// `MidiMapping.send`, through the volume fader curve, with soft takeover.
  public enum Action: String, CaseIterable, Sendable {
    case volume, pan, rate, sfx, mute, solo, play, eq, eqlow, eqmid, eqhigh, send, next, prev, stop, undo, redo, scene, safe
    /// A strip's stereo width (StripParameter.width), following a controller on the control thread.
    case width
    /// A plugin insert's control (`parameter`: "N/SYMBOL"), across its range, on the control thread.
    case insert
    /// Any console command line (the target), run on each press: `midi map cc 64 do next`.
    case command = "do"

    /// Whether its target is a stem (an effect for `sfx`, nothing for the transport and the show).
    public var targetsStem: Bool { self != .sfx && self != .scene && self != .command && !takesNoTarget }
    /// The transport's and the show's presses: `play`, `next`, `prev`, `stop` name nothing.
    public var takesNoTarget: Bool { self == .play || isShowCommand }
    /// A press the front end runs as the REPL command of the same name (`next`, `prev`, `stop`,
    /// `undo`, `redo`).
    public var isShowCommand: Bool { [.next, .prev, .stop, .undo, .redo].contains(self) }
    /// Whether it follows a continuous value (and so has soft takeover).
    public var isContinuous: Bool {
      self == .send || self == .insert || StripParameter.row(midi: self).map { !$0.isToggle } == true
    }
    /// Whether it sets an EQ band's gain (a controller's value, no takeover).
    public var isEQGain: Bool { self == .eqlow || self == .eqmid || self == .eqhigh }
  }

  public var source: Source
  /// Controller or note number 0…127 (0 for pitch bend).
  public var number: Int
  /// MIDI channel 1…16, or nil for any channel.
  public var channel: Int?
  public var action: Action
  /// The stem (or, for `sfx`, the effect) it drives; empty for `play`.
  public var target: String
  /// For `send`: the aux send whose level it sets (the target is the strip sending); for
  /// `insert`: the parameter, "N/SYMBOL" (the file's "parameter"); empty otherwise.
  public var send: String

  public init(source: Source, number: Int, channel: Int? = nil, action: Action, target: String, send: String = "") {
    self.source = source
    self.number = number
    self.channel = channel
    self.action = action
    self.target = target
    self.send = send
  }

  /// The target of a `volume` mapping that moves the master fader.
  public static let master = "master"

  /// The fields of a mapping object in the session file.
  static let fields = ["source", "number", "channel", "action", "target", "send", "parameter"]

  /// An `insert` mapping's insert position (1-based) and control symbol, or nil.
  public var insertParameter: (position: Int, symbol: String)? {
    guard action == .insert, let slash = send.firstIndex(of: "/"), let n = Int(send[..<slash]), n >= 1 else { return nil }
    let symbol = String(send[send.index(after: slash)...])
    return symbol.isEmpty ? nil : (n, symbol)
  }
  public static let numberRule = "must be a whole number between 0 and 127"
  public static let channelRule = "must be a whole number between 1 and 16 (leave it out for any channel)"

  /// The first thing wrong with the mapping: the field and what is allowed; nil when valid.
  public func problem() -> (field: String, message: String)? {
    if source != .bend && !(0...127).contains(number) { return ("number", Self.numberRule + " (got \(number))") }
    if source == .bend && number != 0 { return ("number", "must be 0 or left out for pitch bend (got \(number))") }
    if let channel, !(1...16).contains(channel) { return ("channel", Self.channelRule + " (got \(channel))") }
    if action == .rate {
      if source != .bend { return ("action", "rate follows pitch bend only (use source bend)") }
    } else if action.isEQGain {
      if source != .cc { return ("action", "\(action.rawValue) follows a controller only (use source cc)") }
    } else if action.isContinuous {
      // volume, pan, width (the table's value rows), send
      if source == .note || source == .pc {
        return (
          "action",
          "\(action.rawValue) follows a controller or pitch bend, not a \(source == .pc ? "program change" : "note") (use source cc or bend)"
        )
      }
    } else if source == .bend {
      return ("action", "\(action.rawValue) acts on a note or a controller press, not pitch bend")
    }
    if action.takesNoTarget {
      if !target.isEmpty { return ("target", "\(action.rawValue) takes no target (got \(SessionRules.quote(target)))") }
    } else if action == .command {
      if let problem = Self.commandLineProblem(target) { return ("target", problem) }
    } else if (action == .volume || action == .insert) && target == Self.master {
      // The master fader: a name no stem, bus or input may take.
    } else if let problem = SessionRules.nameProblem(target, of: action == .sfx ? .effect : action == .scene ? .scene : .stem) {
      return ("target", problem)
    }
    if action == .send {
      if let problem = SendSettings.nameProblem(send) { return ("send", problem) }
    } else if action == .insert {
      if insertParameter == nil {
        return ("parameter", "must be the insert's position and the control's symbol, as \"1/gain\" (got \(SessionRules.quote(send)))")
      }
    } else if !send.isEmpty {
      return ("send", "only a send mapping names a send (got \(SessionRules.quote(send)) on \(action.rawValue))")
    }
    return nil
  }

  /// The longest command line a `do` mapping holds.
  public static let longestCommandLine = 1000

  /// Why `line` cannot be a `do` mapping's command line, or nil (whether its commands exist is
  /// the console's to say, when it is mapped and when it runs).
  public static func commandLineProblem(_ line: String) -> String? {
    if line.allSatisfy({ $0 == " " || $0 == "\t" }) { return "do needs a command line (e.g. \"next\")" }
    if line.unicodeScalars.count > longestCommandLine {
      return "the command line is \(line.unicodeScalars.count) characters long; at most \(longestCommandLine)"
    }
    if let bad = line.unicodeScalars.first(where: { $0.value < 0x20 || $0.value == 0x7F }) {
      return "the command line holds a control character (U+\(String(bad.value, radix: 16, uppercase: true))); one line of text"
    }
    return nil
  }

  /// How the console writes it: `cc 7 ch 1 volume drums`, `note 36 sfx kick`, `bend rate lead`,
  /// `cc 64 do "goto chorus"` (a command line of several words in double quotes).
  public var description: String {
    var words = [source.rawValue]
    if source != .bend { words.append(String(number)) }
    if let channel { words += ["ch", String(channel)] }
    words.append(action.rawValue)
    if action == .command {
      let plain = !target.contains { " \t;'\"{}\\".contains($0) }
      words.append(
        plain ? target : "\"" + target.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"")
    } else if !target.isEmpty {
      words.append(target)
    }
    if let p = insertParameter {
      words += [String(p.position), p.symbol]
    } else if !send.isEmpty {
      words.append(send)
    }
    return words.joined(separator: " ")
  }

  /// The gain (dB) of an `eqlow`/`eqmid`/`eqhigh` controller at `value` (0…127): −18 at 0, 0 at
  /// 64, +18 at 127, linear in dB on either side, to 0.1 dB.
  public static func eqGain(value: Int) -> Double {
    let v = max(0, min(127, value)) - 64
    let gain = Double(v) * 18 / (v >= 0 ? 63 : 64)
    return (gain * 10).rounded() / 10
  }

  /// Whether both listen to the same messages (same source and number, overlapping channels).
  public func sharesSource(with other: MidiMapping) -> Bool {
    source == other.source && number == other.number
      && (channel == nil || other.channel == nil || channel == other.channel)
  }
}

/// The session's MIDI section.
public struct MidiSettings: Equatable, Sendable {
  public var mappings: [MidiMapping] = []
  /// `midi out on`: the values of mapped volume and pan controllers are sent back on `midi_out`
  /// (motorised faders, LED rings). Written only when true.
  public var feedback = false
  public init(mappings: [MidiMapping] = [], feedback: Bool = false) {
    self.mappings = mappings
    self.feedback = feedback
  }
  static let fields = ["feedback", "mappings"]
  /// The renderer's table size (`MidiTable.capacity` in StemdeckEngine).
  public static let maximumMappings = 256

  /// The first problem, with its location (`midi.mappings[2].channel`), or nil.
  public func problem() -> (location: String, message: String)? {
    if mappings.count > Self.maximumMappings {
      return ("midi.mappings", "has \(mappings.count) mappings; at most \(Self.maximumMappings)")
    }
    for (index, mapping) in mappings.enumerated() {
      if let p = mapping.problem() { return ("midi.mappings[\(index)].\(p.field)", p.message) }
      if let earlier = mappings[..<index].firstIndex(of: mapping) {
        return ("midi.mappings[\(index)]", "repeats midi.mappings[\(earlier)] (\(mapping.description)); keep one")
      }
    }
    return nil
  }
}
