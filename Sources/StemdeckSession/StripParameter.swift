// The strip controls, one row each (issue 34's parameter table): what a control is called in
// the session file, at the console, over OSC and in a MIDI mapping, what value it takes, which
// kinds of strip have it, whether it glides and whether a group may hold it. Front ends read
// the table instead of spelling the control themselves: the session file's strip keys
// (SessionDecoder+Strip.swift, SessionEncoder.swift), OSC's strip addresses
// (`/stemdeck/KIND/NAME/WORD`, OSCServer.swift), MIDI mappings' words (Commands+Midi.swift) and
// the console's groupable words (Groups.swift) so far; docs/architecture.md, *How to add a strip control*, says what a new row needs.

/// The kinds of mixer strip: what a control is offered on.
public enum StripKind: String, Sendable, CaseIterable {
  case stem, bus, input, master
}

/// One strip control.
public struct StripParameter: Sendable {
  /// What value the control takes.
  public enum Value: Sendable {
    /// A level: a linear gain in the session and at the console (which also reads dB), dB over
    /// OSC (`-inf` turns it down to 0).
    case gain
    /// A plain number under `rule`; `what` names it in a refusal (`the pan position -1…1`).
    case number(what: String)
    /// On or off: the console word turns it on, `un` + the word off.
    case toggle

    public var isGain: Bool {
      if case .gain = self { return true }
      return false
    }
  }

  /// Where a strip's settings keep the value (StripSettings.swift).
  public enum Field: Sendable {
    case number(WritableKeyPath<StripSettings, Double> & Sendable)
    case toggle(WritableKeyPath<StripSettings, Bool> & Sendable)
  }

  /// The session file's key (`"volume"`, `"pan"`, …) and the control's name.
  public let key: String
  /// Where every strip keeps it; nil for a control one kind keeps in its own settings (a
  /// stem's `rate`, StemSettings.swift), which that kind reads and writes itself.
  public let field: Field?
  /// The console command (`vol`) and its other spellings (`volume`).
  public let word: String
  public let aliases: [String]
  /// The last part of its OSC address (`/stemdeck/stem/drums/vol`), and how OSC's refusals list it.
  public let osc: [String]
  public let oscLabel: String
  public let value: Value
  /// The range and the words of a refusal (numbers and gains).
  public let rule: SettingRule?
  /// The strips that have it.
  public let kinds: Set<StripKind>
  /// Whether `… over TIME` glides it.
  public let glides: Bool
  /// The MIDI mapping's action that drives it, if one does.
  public let midi: MidiMapping.Action?
  /// Its line in the console's `help` (for a toggle, the word that turns it on; `un` + the word
  /// is "undo WORD"), and what `help WORD` adds.
  public let summary: String
  public var details: String = ""
  /// Whether a glide may go in equal dB steps (`over 4s exp`): the console's usage offers it.
  public var exponentialGlide = false
  /// Whether the session file always has the key; false: only where the value is not the
  /// kind's default (`StripSettings.defaults(of:)`), so a new row leaves older files byte for byte.
  public var alwaysWritten = true
  /// For a toggle: whether the console word also takes `on` or `off` after the name
  /// (`safe mic off`), besides `un` + the word.
  public var takesOnOff = false
  /// The mixer view's keys that step it down and up, and the step (`{` `}` for width).
  public var viewKeys: ViewKeys? = nil

  /// Two keys of the mixer view and the step they move a value by.
  public struct ViewKeys: Sendable {
    public let down: Character
    public let up: Character
    public let step: Double
  }

  /// The row whose view keys include `key`, and whether `key` steps it up.
  public static func row(viewKey key: Character) -> (StripParameter, up: Bool)? {
    for control in all {
      guard let keys = control.viewKeys, key == keys.down || key == keys.up else { continue }
      return (control, key == keys.up)
    }
    return nil
  }

  public static let volume = StripParameter(
    key: "volume", field: .number(\.volume), word: "vol", aliases: ["volume"], osc: ["vol", "volume"], oscLabel: "vol (dB)", value: .gain,
    rule: .volume, kinds: [.stem, .bus, .input, .master], glides: true, midi: .volume,
    summary: "stem volume: linear 0…2 or dB (-6dB, +3dB, -inf dB); 'over 4s' glides",
    details: """
      Changes are smoothed over 10 ms: no clicks or zipper noise.
      'vol drums 0 over 4s' glides linearly; add 'exp' to glide in equal dB steps.
      """, exponentialGlide: true)
  public static let pan = StripParameter(
    key: "pan", field: .number(\.pan), word: "pan", aliases: [], osc: ["pan"], oscLabel: "pan",
    value: .number(what: "the pan position -1…1"),
    rule: .pan, kinds: [.stem, .bus, .input], glides: true, midi: .pan,
    summary: "stem pan -1 (left) … 0 … 1 (right); constant power for mono, balance for stereo")
  public static let width = StripParameter(
    key: "width", field: .number(\.width), word: "width", aliases: [], osc: ["width"], oscLabel: "width",
    value: .number(what: "the width 0…2"), rule: .width, kinds: [.stem, .bus, .input], glides: true, midi: .width,
    summary: "stereo width 0 (mono) … 1 (as is) … 2 (wider); mid/side, loudness kept",
    details: """
      Mid/side: 0 folds a stereo strip to mono, 1 leaves it as recorded, 2 doubles its side.
      Equal power for uncorrelated left and right, so a wide pad keeps its loudness; a
      centred sound rises 3 dB at 0 and falls 4 dB at 2. A mono strip has no width.
      Applied after the EQ and any inserts, before the fader, pan and pre-fader sends' tap.
      """, alwaysWritten: false, viewKeys: ViewKeys(down: "{", up: "}", step: 0.1))
  public static let rate = StripParameter(
    key: "rate", field: nil, word: "rate", aliases: [], osc: ["rate"], oscLabel: "rate", value: .number(what: "the rate 0.5…2"),
    rule: .rate, kinds: [.stem], glides: true, midi: .rate,
    summary: "varispeed 0.5…2 (pitch follows, like tape); 'over 2s' glides", exponentialGlide: true)
  public static let mute = StripParameter(
    key: "mute", field: .toggle(\.mute), word: "mute", aliases: [], osc: ["mute"], oscLabel: "mute", value: .toggle, rule: nil,
    kinds: [.stem, .bus, .input], glides: false, midi: .mute, summary: "silence a stem")
  public static let solo = StripParameter(
    key: "solo", field: .toggle(\.solo), word: "solo", aliases: [], osc: ["solo"], oscLabel: "solo", value: .toggle, rule: nil,
    kinds: [.stem, .bus, .input], glides: false, midi: .solo, summary: "hear only soloed stems")
  public static let soloSafe = StripParameter(
    key: "soloSafe", field: .toggle(\.soloSafe), word: "safe", aliases: [], osc: ["safe"], oscLabel: "safe", value: .toggle,
    rule: nil, kinds: [.stem, .bus, .input], glides: false, midi: .safe,
    summary: "solo-safe: heard whatever is soloed (live inputs are, until 'safe NAME off')",
    details: """
      A solo-safe strip is never silenced by another strip's solo, and a bus it feeds stays
      open (the other strips on that bus still follow solo). Live inputs are solo-safe from
      the start, so soloing a backing track keeps the singer's mic; 'safe verb' keeps a reverb
      bus. 'safe NAME on|off' or 'unsafe NAME'; 'status' says when a solo is active.
      """, alwaysWritten: false, takesOnOff: true)

  /// Every row, in the order front ends list them.
  public static let all: [StripParameter] = [.volume, .pan, .width, .rate, .mute, .solo, .soloSafe]

  /// The session file's keys of a strip of `kind`, in the table's order.
  public static func sessionKeys(of kind: StripKind) -> [String] {
    all.filter { $0.kinds.contains(kind) }.map(\.key)
  }

  /// The row a MIDI mapping's action drives, if a row names it.
  public static func row(midi action: MidiMapping.Action) -> StripParameter? {
    all.first { $0.midi == action }
  }

  /// The control an OSC address ends with (nil: no control is called that). A kind of strip
  /// without it refuses it by name when the change runs (`'grp' is a bus; …`).
  public static func osc(_ word: String) -> StripParameter? {
    all.first { $0.osc.contains(word) }
  }

  /// What OSC offers on a strip of `kind`, for its refusals: `vol (dB), pan, mute, solo`.
  public static func oscAddresses(on kind: StripKind) -> String {
    all.filter { $0.kinds.contains(kind) }.map(\.oscLabel).joined(separator: ", ")
  }

  /// A strip's value of this control, as its kind says to show it.
  public enum Reading: Equatable, Sendable {
    case gain(Double), number(Double), toggle(Bool)
  }

  /// This control's value in `strip`; nil for a control a kind keeps itself (no `field`).
  public func reading(in strip: StripSettings) -> Reading? {
    switch (field, value) {
    case (.toggle(let keyPath)?, _): return .toggle(strip[keyPath: keyPath])
    case (.number(let keyPath)?, .gain): return .gain(strip[keyPath: keyPath])
    case (.number(let keyPath)?, _): return .number(strip[keyPath: keyPath])
    case (nil, _): return nil
    }
  }

  /// Whether it is switched on and off (`mute`, `solo`) rather than set to a value.
  public var isToggle: Bool {
    if case .toggle = value { return true }
    return false
  }

  /// The console words that change it: the word, its aliases, and `un` + the word of a toggle.
  public var consoleWords: [String] {
    [word] + aliases + (isToggle ? ["un" + word] : [])
  }
}

extension StripSettings {
  /// The first control of a strip of `kind` whose value breaks its rule (a session built in
  /// code, `Session.validate()`): its key and the rule's words.
  public func ruleProblem(of kind: StripKind) -> (key: String, message: String)? {
    for control in StripParameter.all where control.kinds.contains(kind) {
      guard case .number(let keyPath)? = control.field, let rule = control.rule else { continue }
      let value = self[keyPath: keyPath]
      if !rule.accepts(value) { return (control.key, rule.rule + " (got \(SessionRules.number(value)))") }
    }
    return nil
  }
}

extension SettingRange {
  /// Stereo width: 0 is mono, 1 as recorded, 2 twice as wide (mid/side; StereoWidth.swift).
  public static let width: ClosedRange<Double> = 0...2
}

extension SettingRule {
  /// A strip's stereo width (`StripParameter.width`).
  public static let width = between(SettingRange.width)
}
