import Foundation
import StemdeckControl
import StemdeckJack
import StemdeckSession
import Testing

@testable import StemdeckConsole
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

/// A command's refusal keeps the typed error it came from (`CommandError.reason`: the control
/// layer's `MixerError`, the JACK driver's `JackError`, or the console's own usage and unknown
/// command), and the console makes the words the REPL always printed (issue 34, item 5).
@Suite struct TypedCommandErrorTests {
  func refusal(_ console: Console, _ line: String) -> CommandError? {
    do throws(CommandError) {
      for words in try Tokenizer.commands(in: line) { try console.run(words) }
      return nil
    } catch { return error }
  }

  @Test("a refusal of the mixer stays a MixerError case; usage and unknown commands are cases too")
  func reasons() throws {
    let h = try ConsoleHarness()
    defer { h.shutdown() }
    #expect(h.run("bus add verb").ok)
    let unknown = refusal(h.console, "vol verv -6dB")
    #expect(unknown?.mixerError?.reason == .unknown(kind: .strip(withInputs: false), name: "verv", known: ["verb"], suggestion: "verb"))
    #expect(unknown?.message == "unknown stem or bus 'verv' — did you mean 'verb'?")
    let range = refusal(h.console, "pan verb 7")
    #expect(range?.mixerError?.reason == .outOfRange(what: "pan", rule: .pan, got: "7"))
    let command = refusal(h.console, "paly")
    guard case .unknownCommand("paly", let guess)? = command?.reason else {
      Issue.record("not an unknown command: \(String(describing: command))")
      return
    }
    #expect(guess == "play")
    #expect(command?.message == "unknown command 'paly' — did you mean 'play'? (type 'help' for the list)")
    let usage = refusal(h.console, "midi on now")
    guard case .usage("midi on|off")? = usage?.reason else {
      Issue.record("not a usage: \(String(describing: usage))")
      return
    }
  }

  @Test("a JACK refusal is a case; the console names its flags and commands, the neutral words none")
  func jackWords() {
    let taken = JackError.clientNameTaken(server: "live")
    #expect(taken.consoleWords == "a JACK client with this name already exists on server 'live'; choose another with --name")
    #expect(!taken.description.contains("--"))
    let port = JackError.unknownPort(name: "x:y", suggestion: nil)
    #expect(port.consoleWords == "unknown port 'x:y' (list ports with 'ports')")
    #expect(port.description == "unknown port 'x:y'")
    #expect(JackError.notAnswering(server: "s", call: "jack_connect", earlierOpen: false).serverNotAnswering)
    #expect(!JackError.noEngine.serverNotAnswering)
    let name = JackError.badClientName(name: "a:b", problem: "may not contain ':'")
    #expect(name.consoleWords == "JACK client name 'a:b' (--name) may not contain ':'")
    #expect(CommandError(name).jackError == name)
  }
}
