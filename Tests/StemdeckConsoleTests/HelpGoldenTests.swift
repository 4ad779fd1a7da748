// Golden tests of the help text, in the style of swift-argument-parser's AssertHelp: the expected
// text lives here; when the help changes on purpose, update these strings deliberately.
import Foundation
import Testing
@testable import StemdeckConsole
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

@Suite("Help text (golden)")
struct HelpGoldenTests {
  static let helpHead = """
    stems:
      add PATH [as NAME]                 add a stem from an audio file (WAV, AIFF, FLAC, Ogg, Opus, MP3)
      remove NAME|all                    remove a stem (it fades out)
      stems                              list stems with their settings, position and meters
      vol NAME|all VALUE [over TIME [exp]] stem volume: linear 0…2 or dB (-6dB, +3dB, -inf dB); 'over 4s' glides
      pan NAME|all VALUE [over TIME]     stem pan -1 (left) … 0 … 1 (right); constant power for mono, balance for stereo
    """

  static let helpTail = """
    other:
      help [COMMAND|GROUP]               list commands, or explain one, or list a group
      echo TEXT…                         print text (for scripts)
      debug heap                         diagnostic: memory in use (heap after malloc_trim, own resident)
      quit                               leave stemdeck (quit! discards unsaved changes)
    NAME may be 'all' where shown. '#' starts a comment; ';' separates commands.
    """

  static let groupTitles = [
    "stems:", "buses:", "live inputs:", "aux sends:", "transport:", "click, count-in, cue and marks:", "meters:", "effects and recording:",
    "MIDI control:", "routing:", "plugin inserts:", "session:", "other:"
  ]

  func help(_ line: String) throws -> (ok: Bool, output: [String]) {
    let h = try ConsoleHarness()
    defer { h.shutdown() }
    return h.run(line)
  }

  @Test("help: first and last lines")
  func helpHeadAndTail() throws {
    let result = try help("help")
    #expect(result.ok)
    let head = Self.helpHead.split(separator: "\n").map(String.init)
    let tail = Self.helpTail.split(separator: "\n").map(String.init)
    #expect(Array(result.output.prefix(head.count)) == head)
    #expect(Array(result.output.suffix(tail.count)) == tail)
  }

  @Test("help: group titles in order, and every command once, in table order")
  func helpListsEveryCommand() throws {
    let lines = try help("help").output
    #expect(lines.filter { !$0.hasPrefix(" ") && $0.hasSuffix(":") } == Self.groupTitles)
    let rows = lines.filter { $0.hasPrefix("  ") }
    #expect(rows.count == CommandTable.all.count)
    for (row, spec) in zip(rows, CommandTable.all) {
      #expect(row.hasPrefix("  \(spec.usage) "), "row '\(row)' is not for \(spec.name)")
      #expect(row.hasSuffix(" \(spec.summary)"))
    }
  }

  @Test("'help', '?' and 'HELP' print the same text")
  func helpAliases() throws {
    let reference = try help("help").output
    #expect(try help("?").output == reference)
    #expect(try help("HELP").output == reference)
  }

  static let commandHelp: [(String, String)] = [
    (
      "help pan",
      """
      usage: pan NAME|all VALUE [over TIME]
        stem pan -1 (left) … 0 … 1 (right); constant power for mono, balance for stereo
      """
    ),
    (
      "help PAN",
      """
      usage: pan NAME|all VALUE [over TIME]
        stem pan -1 (left) … 0 … 1 (right); constant power for mono, balance for stereo
      """
    ),
    (
      "help rm",
      """
      usage: remove NAME|all
        remove a stem (it fades out)
        aliases: rm
      """
    ),
    (
      "help add",
      """
      usage: add PATH [as NAME]
        add a stem from an audio file (WAV, AIFF, FLAC, Ogg, Opus, MP3)
        The stem joins sample-aligned with the others: at the current position when paused,
        a moment ahead when playing. NAME defaults to the file name without extension.
        Relative paths are relative to the current directory.
      """
    ),
    (
      "help vol",
      """
      usage: vol NAME|all VALUE [over TIME [exp]]
        stem volume: linear 0…2 or dB (-6dB, +3dB, -inf dB); 'over 4s' glides
        aliases: volume
        Changes are smoothed over 10 ms: no clicks or zipper noise.
        'vol drums 0 over 4s' glides linearly; add 'exp' to glide in equal dB steps.
      """
    ),
    (
      "help quit",
      """
      usage: quit
        leave stemdeck (quit! discards unsaved changes)
        aliases: exit, quit!, exit!, q
      """
    ),
    (
      "help open!",
      """
      usage: open PATH
        open a session file (open! discards unsaved changes)
        aliases: open!, load
      """
    )
  ]

  @Test("help COMMAND (golden)", arguments: commandHelp)
  func commandHelpText(_ line: String, _ expected: String) throws {
    let result = try help(line)
    #expect(result.ok)
    #expect(result.output == expected.split(separator: "\n").map(String.init))
  }

  @Test("help COMMAND works for every command and alias", arguments: CommandTable.allNames)
  func helpForEveryName(_ name: String) throws {
    let result = try help("help \(name)")
    let spec = try #require(CommandTable.lookup(name))
    #expect(result.ok)
    #expect(result.output.first == "usage: \(spec.usage)")
    #expect(result.output.dropFirst().first == "  \(spec.summary)")
  }

  @Test("help for an unknown command")
  func unknownCommandHelp() throws {
    #expect(try help("help nosuch") == (false, ["error: no help for 'nosuch': unknown command (type 'help' for the list)"]))
    #expect(try help("help 'a\u{1B}b'") == (false, ["error: no help for 'a\\u{1b}b': unknown command (type 'help' for the list)"]))
  }

  @Test("help GROUP lists one group; 'help group NAME' where a command has the name; at 80 columns nothing is cut")
  func groupsAndWidth() throws {
    let session = try help("help session").output
    #expect(session.first == "session:" && session.count == CommandTable.sessionCommands.count + 1, "\(session)")
    #expect(try help("help routing").output.first == "routing:")
    let stems = try help("help group stems").output
    #expect(stems.first == "stems:" && stems.count == CommandTable.stemCommands.count + 1, "\(stems)")
    #expect(try help("help stems").output.first == "usage: stems", "a command wins over a group")
    // At a width every line fits, and no summary is cut: each is there in full once the
    // continuation lines are joined back.
    let lines = try Help.text(for: nil, width: 80)
    #expect(lines.allSatisfy { TerminalInfo.displayWidth($0) <= 80 }, "\(lines.filter { TerminalInfo.displayWidth($0) > 80 })")
    let joined = lines.map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
    for spec in CommandTable.all {
      let words = spec.summary.split(separator: " ").joined(separator: " ")
      #expect(joined.contains(words), "\(spec.name)'s summary is cut: \(spec.summary)")
    }
  }

  @Test("help: each row is the usage padded to 34 columns, a space, then the summary")
  func rowLayout() throws {
    let rows = try help("help").output.filter { $0.hasPrefix("  ") }
    for (row, spec) in zip(rows, CommandTable.all) {
      let padded = spec.usage.count >= 34 ? spec.usage : spec.usage + String(repeating: " ", count: 34 - spec.usage.count)
      #expect(row == "  \(padded) \(spec.summary)")
    }
  }
}
