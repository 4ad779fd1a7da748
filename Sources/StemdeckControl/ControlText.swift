/// The words of a control error or warning, with the places where a front end speaks its own
/// language kept as data: a render setting (`RenderOption`: the CLI says `--dither`) and a step
/// the user can take (`MixerAction`: the REPL says `'sfx unload horn'`). The control layer states
/// the fact; each front end words the parts (StemdeckConsole's ErrorText.swift: the console's
/// flags and command syntax). `plain` words them neutrally, for anything that is no front end.
///
/// Written as a string with typed interpolations:
/// `"\(option: .dither) is for integer outputs"`, `"(\(action: .unloadEffect(name)) first)"`;
/// a `MixerError` interpolated keeps its parts.
public struct ControlText: Equatable, Sendable, ExpressibleByStringInterpolation, CustomStringConvertible {
  public enum Part: Equatable, Sendable {
    case text(String)
    case option(RenderOption)
    case action(MixerAction)
  }
  public private(set) var parts: [Part]

  public init(_ text: String) { parts = [.text(text)] }
  public init(stringLiteral value: String) { parts = [.text(value)] }
  public init(stringInterpolation: Interpolation) { parts = stringInterpolation.parts }

  public struct Interpolation: StringInterpolationProtocol {
    var parts: [Part] = []
    public init(literalCapacity: Int, interpolationCount: Int) {}
    mutating func append(_ part: Part) {
      if case .text(let s) = part, case .text(let t)? = parts.last {
        parts[parts.count - 1] = .text(t + s)
      } else {
        parts.append(part)
      }
    }
    public mutating func appendLiteral(_ literal: String) { append(.text(literal)) }
    public mutating func appendInterpolation(option: RenderOption) { append(.option(option)) }
    public mutating func appendInterpolation(action: MixerAction) { append(.action(action)) }
    public mutating func appendInterpolation(_ text: ControlText) { for p in text.parts { append(p) } }
    public mutating func appendInterpolation(_ error: MixerError) {
      if let file = error.file { append(.text(file + ": ")) }
      appendInterpolation(error.text)
    }
    public mutating func appendInterpolation<T>(_ value: T) { append(.text("\(value)")) }
  }

  /// The text with each option and action worded by a front end.
  public func words(option: (RenderOption) -> String, action: (MixerAction) -> String) -> String {
    var s = ""
    for part in parts {
      switch part {
      case .text(let t): s += t
      case .option(let o): s += option(o)
      case .action(let a): s += action(a)
      }
    }
    return s
  }

  /// Neutral words: an option by its name (`dither`), an action as a plain instruction.
  public var plain: String { words(option: \.name, action: \.plain) }
  public var description: String { plain }

  /// The options this text names, in order (a front end may point at them: a usage line).
  public var options: [RenderOption] { parts.compactMap { if case .option(let o) = $0 { o } else { nil } } }
  /// The actions this text suggests, in order.
  public var actions: [MixerAction] { parts.compactMap { if case .action(let a) = $0 { a } else { nil } } }
}

/// A setting of an offline render (`OfflineRenderer.render`/`analyze`) an error is about.
public enum RenderOption: String, Equatable, Sendable, CaseIterable {
  case output, stems, from, duration, sampleRate, dither, normalize, truePeak, input, click

  /// The neutral name: `sample rate`, `true-peak ceiling`.
  public var name: String {
    switch self {
    case .output: return "output"
    case .stems: return "stems"
    case .from: return "start"
    case .duration: return "duration"
    case .sampleRate: return "sample rate"
    case .dither: return "dither"
    case .normalize: return "normalize"
    case .truePeak: return "true-peak ceiling"
    case .input: return "input"
    case .click: return "click file"
    }
  }
}

/// A step a refusal suggests, with what it acts on; the front end says how to take it (the REPL:
/// its command syntax).
public enum MixerAction: Equatable, Sendable {
  /// Add a stem (there are none).
  case addStem
  /// Pick another name for a stem being added.
  case nameNewStem
  /// Remove stem NAME.
  case removeStem(String)
  /// Open the session file again (after fixing a stem's file).
  case reopenSession
  /// Set stem NAME's pitch to 0.
  case resetPitch(String)
  /// Put stem NAME in stretch mode.
  case stretchMode(String)
  /// Load an effect (there are none).
  case loadEffect
  /// Load the effect named (it is not loaded).
  case loadThatEffect
  /// Unload effect NAME (or, when nil, some effect).
  case unloadEffect(String?)
  /// Wait until effect NAME has loaded.
  case waitForEffect(String)
  /// Start a take.
  case startRecording
  /// Stop the take.
  case stopRecording
  /// Remove a MIDI mapping.
  case unmapMidi
  /// Not a step but a term of the front end's: an exponential glide's shape, as it names it
  /// (the REPL's `'exp'`).
  case exponentialGlide
  /// The settings an exponential glide is for, named as the front end names them (volume, rate).
  case exponentialGlideSettings
  /// Add a live input (there are none).
  case addInput
  /// Remove a live input (to make room).
  case removeInput
  /// Add a bus (there are none).
  case addBus
  /// Add a mark (the song has none).
  case addMark

  /// Neutral words for the step.
  public var plain: String {
    switch self {
    case .addStem: return "add a stem"
    case .nameNewStem: return "give it another name"
    case .removeStem(let n): return "remove stem '\(n)'"
    case .reopenSession: return "open the session again"
    case .resetPitch(let n): return "set the pitch of '\(n)' to 0"
    case .stretchMode(let n): return "put '\(n)' in stretch mode"
    case .loadEffect: return "load an effect"
    case .loadThatEffect: return "load it"
    case .unloadEffect(let n): return n.map { "unload effect '\($0)'" } ?? "unload an effect"
    case .waitForEffect(let n): return "wait for effect '\(n)'"
    case .startRecording: return "start a take"
    case .stopRecording: return "stop the take"
    case .unmapMidi: return "remove a MIDI mapping"
    case .exponentialGlide: return "exponential"
    case .exponentialGlideSettings: return "volume and rate"
    case .addInput: return "add a live input"
    case .removeInput: return "remove an input"
    case .addBus: return "add a bus"
    case .addMark: return "add a mark"
    }
  }
}
