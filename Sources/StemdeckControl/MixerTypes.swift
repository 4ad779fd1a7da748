import Foundation
import StemdeckAudioFile
import StemdeckEngine
import StemdeckSession
import StemdeckText

/// A rejected control request: why, as a typed `reason` (what was unknown, out of range or full,
/// with its values), and about which `file` when a session being opened or rendered names one,
/// apart from the reason, so a front end can name the file as its user gave it
/// (`naming(_:as:)`). Tests and programs match on `reason`; words are made from it only for a
/// front end: `text` keeps a render option or a suggested step as data (`ControlText`, worded by
/// the front end with `words(option:action:)`); `message` words them neutrally.
public struct MixerError: Error, CustomStringConvertible, Equatable, Sendable {
  /// Why a request was refused.
  public enum Reason: Equatable, Sendable {
    /// `name` (as given) names no `kind`; `known` are the names there are (the list a refusal
    /// shows), `suggestion` the closest of them.
    case unknown(kind: NameKind, name: String, known: [String], suggestion: String?)
    /// `got` (the value as given) is outside `rule` for the setting `what`.
    case outOfRange(what: String, rule: SettingRule, got: String)
    /// `what` is full: at most `max`; `adding` is the name refused, when the request named one.
    case limit(what: Capacity, max: Int, adding: String?)
    /// Any other refusal: the fact in words, with the front end's parts as data.
    case refused(ControlText)
  }

  /// What kind of name was not found.
  public enum NameKind: Equatable, Sendable {
    case stem, bus, input, effect, mark
    /// Any strip (`withInputs`: live inputs exist, so the words name them too).
    case strip(withInputs: Bool)
  }

  /// A fixed capacity of the engine or the control layer.
  public enum Capacity: String, Equatable, Sendable {
    case midiMappings, sends, buses, liveInputs
  }

  /// The file the error is about, as the mixer was given it (absolute), or nil.
  public let file: String?
  /// Why.
  public let reason: Reason
  public init(_ text: ControlText) { self.init(reason: .refused(text)) }
  public init(file: String, _ text: ControlText) { self.init(file: file, reason: .refused(text)) }
  public init(file: String? = nil, reason: Reason) {
    self.file = file
    self.reason = reason
  }
  /// The reason as words, with a render option or a suggested step kept as data.
  public var text: ControlText { reason.text }
  /// `text` in neutral words.
  public var detail: String { text.plain }
  /// The whole line in neutral words: `FILE: detail`, or the detail alone.
  public var message: String { file.map { "\($0): \(detail)" } ?? detail }
  public var description: String { message }

  /// The whole line with the options and actions worded by a front end.
  public func words(option: (RenderOption) -> String, action: (MixerAction) -> String) -> String {
    let d = text.words(option: option, action: action)
    return file.map { "\($0): \(d)" } ?? d
  }

  /// The same error with `file` shown as `shown` when it is `file` (the path as typed).
  public func naming(_ file: String, as shown: String) -> MixerError {
    self.file == file ? MixerError(file: shown, reason: reason) : self
  }

  /// Checks `value` against a setting's rule (StemdeckSession's `SettingRule`, the one the session
  /// format and the console use): `pan must be a number between -1 and 1 (got 7)`.
  static func check(_ value: Double, _ rule: SettingRule, _ what: String) throws(MixerError) {
    guard rule.accepts(value) else { throw outOfRange(what, rule, got: value) }
  }

  /// `check` for an integer setting (`loops`).
  static func check(_ value: Int, _ rule: SettingRule, _ what: String) throws(MixerError) {
    guard rule.accepts(value) else { throw MixerError(reason: .outOfRange(what: what, rule: rule, got: String(value))) }
  }

  /// `value` refused by `rule` for `what`.
  static func outOfRange(_ what: String, _ rule: SettingRule, got value: Double) -> MixerError {
    MixerError(reason: .outOfRange(what: what, rule: rule, got: SettingRule.shown(value)))
  }

  /// `name` names no `kind` among `known` (the closest one suggested).
  public static func unknown(_ kind: NameKind, _ name: String, known: [String]) -> MixerError {
    MixerError(reason: .unknown(kind: kind, name: name, known: known, suggestion: Suggestion.closest(to: name, in: known)))
  }

  /// "unknown stem 'drms' — did you mean 'drums'?"
  public static func unknownStem(_ rawName: String, known: [String]) -> MixerError { unknown(.stem, rawName, known: known) }
}

extension MixerError.Reason {
  /// The neutral words of the reason (`refused` is its own words).
  public var text: ControlText {
    switch self {
    case .refused(let text): return text
    case .outOfRange(let what, let rule, let got): return ControlText(rule.refusal(what, got: got))
    case .limit(let what, let max, let adding): return Self.limitText(what, max, adding)
    case .unknown(let kind, let name, let known, let suggestion):
      let shown = printableText(name)
      let head: ControlText = "unknown \(kind.noun) '\(shown)'"
      if let guess = suggestion { return "\(head) — did you mean '\(guess)'?" }
      if known.isEmpty { return "\(head) (\(kind.noneText))" }
      let list = known.joined(separator: ", ") + (kind == .bus ? ", or master" : "")
      return "\(head) (\(kind.plural): \(list))"
    }
  }

  static func limitText(_ what: MixerError.Capacity, _ max: Int, _ adding: String?) -> ControlText {
    switch what {
    case .midiMappings: return "at most \(max) MIDI mappings (\(action: .unmapMidi))"
    case .sends: return "cannot add send '\(adding ?? "")': stemdeck has at most \(max) sends"
    case .buses: return "cannot add bus '\(adding ?? "")': stemdeck has at most \(max) buses"
    case .liveInputs: return "stemdeck has at most \(max) live inputs (\(max) are in use; \(action: .removeInput))"
    }
  }
}

extension MixerError.NameKind {
  /// As in "unknown stem".
  public var noun: String {
    switch self {
    case .stem: return "stem"
    case .bus: return "bus"
    case .input: return "input"
    case .effect: return "effect"
    case .mark: return "mark"
    case .strip(let withInputs): return withInputs ? "stem, input or bus" : "stem or bus"
    }
  }

  /// As in "(stems: a, b)".
  var plural: String {
    switch self {
    case .stem: return "stems"
    case .bus: return "buses"
    case .input: return "inputs"
    case .effect: return "effects"
    case .mark: return "marks"
    case .strip: return "strips"
    }
  }

  /// Why none was found when there are none, with the step that makes one.
  var noneText: ControlText {
    switch self {
    case .stem: return "there are no stems; \(action: .addStem)"
    case .bus: return "there are no buses; \(action: .addBus)"
    case .input: return "there are no live inputs; \(action: .addInput)"
    case .effect: return "no effects are loaded; \(action: .loadEffect)"
    case .mark: return "this song has no marks; \(action: .addMark)"
    case .strip: return "there are no strips; \(action: .addStem)"
    }
  }
}

/// Stem names made up for files (the rules themselves are StemdeckSession's `NameRules`).
public enum StemName {
  /// A valid, unused stem name derived from a file path ("Drums Loop.wav" → "Drums_Loop").
  public static func derived(fromPath path: String, taken: [String]) -> String {
    var base = String(path.split(separator: "/").last ?? "stem")
    if let dot = base.lastIndex(of: "."), dot != base.startIndex { base = String(base[..<dot]) }
    var cleaned = String(
      base.unicodeScalars.map { c -> Character in
        StemSettings.isNameCharacter(c) ? Character(c) : "_"
      })
    // Not '.' or '-' first (hidden files, folders, options: `SessionRules.nameProblem`).
    while let first = cleaned.first, first == "." || first == "-" { cleaned.removeFirst() }
    if cleaned.isEmpty || cleaned.lowercased() == "all" { cleaned = "stem" }
    if NameRules.reservedForPorts.contains(cleaned.lowercased()) { cleaned += "-stem" }
    if cleaned.count > 60 { cleaned = String(cleaned.prefix(60)) }
    var name = cleaned
    var n = 2
    while taken.contains(name) { name = "\(cleaned)-\(n)"; n += 1 }
    return name
  }
}

/// A reading of a meter, in dB (AVAudioPlayer's scale: -160 … 0 and above for overs).
public struct MeterReading: Sendable, Equatable {
  public struct Channel: Sendable, Equatable {
    public var peak: Double
    public var average: Double
    public var hold: Double
    public var clips: Int
  }
  public var channels: [Channel]

  init(cells: UnsafeMutablePointer<MeterCells>, channels count: Int) {
    func read(_ c: borrowing MeterCell) -> Channel {
      Channel(
        peak: Decibels.fromAmplitude(Double(c.peak)), average: Decibels.fromAmplitude(Double(c.rms)),
        hold: Decibels.fromAmplitude(Double(c.hold)), clips: c.clips)
    }
    var list = [read(cells.pointee.left)]
    if count > 1 { list.append(read(cells.pointee.right)) }
    channels = list
  }
}

/// What one stem is doing, for `stems` and `status`.
public struct StemStatus: Sendable {
  public var settings: StemSettings
  public var path: String
  public var info: SoundFileInfo
  public var loopIndex: Int
  /// Seconds into the file (within the current loop).
  public var positionInFile: Double
  /// The file's length in seconds.
  public var length: Double
  public var finished: Bool
  public var underruns: Int
  public var failed: Bool
  public var meter: MeterReading
  /// Where its running glides have got to (nil: that parameter is not gliding); the settings
  /// hold the targets.
  public var gliding = GlideReading()
  public var glidingVolume: Double? { gliding.volume }
  public var glidingPan: Double? { gliding.pan }
  public var glidingRate: Double? { gliding.rate }
  public var isGliding: Bool { gliding.any }
}

/// A session stem whose audio file could not be opened. It stays in the session (and is saved
/// back unchanged) so nothing is lost; it plays nothing until the session is opened again.
public struct OfflineStem: Sendable, Equatable {
  public var settings: StemSettings
  /// The path stemdeck looked at.
  public var path: String
  public var reason: String
  /// Its place among the session's stems, so a save puts it back where it was.
  public var index: Int = 0
}

/// A session's sound effect whose file could not be loaded: kept so a save writes it back.
struct OfflineEffect {
  var settings: EffectSettings
  var path: String
  /// Its place among the session's effects.
  var index: Int
}

/// Things that happened, reported to the user.
public enum MixerEvent: Sendable, Equatable, CustomStringConvertible {
  case stemFinished(String)
  case allFinished
  case underrun(String)
  case primeTimeout
  case badSamples(String)
  case readFailed(String, String)
  case takeRecorded(String, String, Double, Int)
  case recordingFailed(String, String)
  /// A background `sfx load` finished (the effect can be fired) or failed (nothing was loaded).
  case effectLoaded(String)
  case effectFailed(String, ControlText)
  /// `midi learn` bound a control (the mapping as `midi maps` shows it), or a MIDI action failed.
  case midiLearned(String)
  case midiFailed(ControlText)
  /// A MIDI press of a show command (`next`, `prev`, `stop`): the front end runs it as its
  /// command of that name, and reports what it says.
  case midiCommand(String)
  /// Insert (strip, 1-based position, plugin name) put out NaN or infinity and was bypassed.
  case insertFaulted(String, Int, String)

  public var description: String {
    switch self {
    case .stemFinished(let name): return "stem '\(name)' finished"
    case .allFinished: return "all stems finished"
    case .underrun(let name): return "underrun: stem '\(name)' ran out of audio from disk (playing silence until it catches up)"
    case .primeTimeout: return "the disk was slow to fill after a start or seek; some stems started late"
    case .badSamples(let name): return "stem '\(name)' produced NaN or infinite samples and was muted"
    case .insertFaulted(let strip, let position, let plugin):
      return "insert \(position) of '\(strip)' (\(plugin)) put out NaN or infinite samples and was bypassed"
    case .readFailed(let name, let message): return "stem '\(name)' can no longer be read: \(message)"
    case .takeRecorded(let name, let path, let seconds, let dropped):
      return "take '\(name)' recorded: \(NumberFormat.time(seconds)) in \(path), added as a stem"
        + (dropped > 0 ? " (\(dropped) frames dropped: the disk was too slow)" : "")
    case .recordingFailed(let name, let message): return "recording '\(name)': \(message)"
    case .effectLoaded(let name): return "effect '\(name)' loaded"
    case .effectFailed(let name, let message): return "effect '\(name)' failed: \(message.plain)"
    case .midiLearned(let mapping): return "midi learned: \(mapping)"
    case .midiFailed(let message): return "midi: \(message.plain)"
    case .midiCommand(let command): return "midi: \(command)"
    }
  }
}

/// Something a session load let through but the user should know (a stem left offline, an
/// effect not loaded, a recording folder outside the session's folder), about `file` (the
/// session file, absolute) when it names one.
public struct MixerWarning: CustomStringConvertible, Equatable, Sendable {
  public let file: String?
  /// What happened, with options and actions as data (`ControlText`).
  public let text: ControlText
  public init(file: String?, _ text: ControlText) {
    self.file = file
    self.text = text
  }
  /// `text` in neutral words.
  public var detail: String { text.plain }
  public var description: String { file.map { "\($0): \(detail)" } ?? detail }

  /// The whole line with the options and actions worded by a front end.
  public func words(option: (RenderOption) -> String, action: (MixerAction) -> String) -> String {
    let d = text.words(option: option, action: action)
    return file.map { "\($0): \(d)" } ?? d
  }

  /// The same warning with `file` shown as `shown` when it is `file` (the path as typed).
  public func naming(_ file: String, as shown: String) -> MixerWarning {
    self.file == file ? MixerWarning(file: shown, text) : self
  }
}
