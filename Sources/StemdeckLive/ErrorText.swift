import StemdeckControl
import StemdeckJack
import StemdeckText

// The console's words for what the control layer reports as data (StemdeckControl's
// ControlText.swift): a render setting is named by its `stemdeck render` flag, a suggested step by
// the REPL's command syntax. The control socket runs REPL lines, so it says the same, and its
// JSON reply carries the step apart as `hint` where `QueryJSON.split` finds one.

extension RenderOption {
  /// The `stemdeck render` flag that sets it.
  package var flag: String {
    switch self {
    case .output: return "--output"
    case .stems: return "--stems"
    case .from: return "--from"
    case .duration: return "--duration"
    case .sampleRate: return "--sample-rate"
    case .dither: return "--dither"
    case .normalize: return "--normalize"
    case .truePeak: return "--true-peak"
    case .input: return "--input"
    case .click: return "--click"
    }
  }
}

extension MixerAction {
  /// The step in the REPL's words: its command syntax.
  package var replWords: String {
    switch self {
    case .addStem: return "add one with 'add PATH'"
    case .nameNewStem: return "choose another name with 'as NAME'"
    case .removeStem(let n): return "'remove \(n)'"
    case .reopenSession: return "'open' the session again"
    case .resetPitch(let n): return "'pitch \(n) 0'"
    case .stretchMode(let n): return "'mode \(n) stretch'"
    case .loadEffect: return "'sfx load NAME PATH'"
    case .loadThatEffect: return "load it with 'sfx load'"
    case .unloadEffect(let n): return n.map { "'sfx unload \($0)'" } ?? "'sfx unload'"
    case .waitForEffect(let n): return "'sfx wait \(n)'"
    case .startRecording: return "start with 'record [NAME]'"
    case .stopRecording: return "'record stop'"
    case .unmapMidi: return "remove one with 'midi unmap'"
    case .exponentialGlide: return "'exp'"
    case .exponentialGlideSettings: return "vol and rate"
    case .addInput: return "add one with 'input add NAME mono|stereo'"
    case .removeInput: return "'input remove NAME'"
    case .addBus: return "add one with 'bus add NAME'"
    case .addMark: return "add one with 'mark add NAME'"
    }
  }
}

extension ControlText {
  /// The text in the console's words (flags, REPL syntax).
  package var consoleWords: String { words(option: \.flag, action: \.replWords) }
}

extension MixerError {
  /// The error in the console's words (flags, REPL syntax), `FILE: ` first when it names one.
  package var consoleWords: String { words(option: \.flag, action: \.replWords) }
}

extension JackError {
  /// The error in the console's words: the flags that change the client name (`--name`) and let
  /// stemdeck start a server (leaving out `--no-start-server`), and the REPL's `ports`.
  public var consoleWords: String {
    if case .badClientName(let name, let problem) = self { return "JACK client name '\(printableText(name))' (--name) \(problem)" }
    return words(
      clientNameFlag: "another with --name", startHint: "let stemdeck start it by leaving out --no-start-server",
      portsHint: "list ports with 'ports'")
  }
}

/// Any error as the console prints it: a `MixerError` or `JackError` in the console's words,
/// others as they describe themselves.
package func consoleWords(_ error: any Error) -> String {
  if let e = error as? MixerError { return e.consoleWords }
  if let e = error as? JackError { return e.consoleWords }
  return "\(error)"
}

extension MixerWarning {
  /// The warning in the console's words, `FILE: ` first when it names one.
  package var consoleWords: String { words(option: \.flag, action: \.replWords) }
}

extension MixerEvent {
  /// The line shown for the mixer's event: its description, with the error of a MIDI action or
  /// of a background effect load in the console's words.
  package var text: String {
    switch self {
    case .midiFailed(let message): return "midi: \(message.consoleWords)"
    case .effectFailed(let name, let message): return "effect '\(name)' failed: \(message.consoleWords)"
    default: return description
    }
  }
}
