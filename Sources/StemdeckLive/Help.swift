import Foundation
import StemdeckControl
import StemdeckEngine
import StemdeckJack
import StemdeckSession

/// `help` text, generated from the command table so it never drifts from the commands.
package enum Help {
  /// The list's headings, the words `help WORD` finds each by (when WORD is not a command; `help
  /// group WORD` always), and their commands.
  package static let groups: [(title: String, words: [String], specs: [CommandSpec])] = [
    ("stems", ["stems", "stem"], CommandTable.stemCommands), ("buses", ["buses"], CommandTable.busCommands),
    ("live inputs", ["inputs", "live", "input"], CommandTable.inputCommands),
    ("aux sends", ["sends", "aux"], CommandTable.sendCommands), ("transport", ["transport"], CommandTable.transportCommands),
    (
      "click, count-in, cue and marks", ["monitoring", "metronome", "marks"],
      CommandTable.clickCommands + CommandTable.cueCommands + CommandTable.markCommands
    ),
    ("meters", ["meters"], CommandTable.meterCommands),
    ("effects and recording", ["effects", "recording", "sfx"], CommandTable.effectAndRecordCommands),
    ("MIDI control", ["midi"], CommandTable.midiCommands), ("routing", ["routing"], CommandTable.routingCommands),
    ("plugin inserts", ["inserts", "plugins"], CommandTable.insertCommands),
    ("session", ["session", "sessions"], CommandTable.sessionCommands), ("other", ["other"], CommandTable.otherCommands)
  ]
  /// The column the summaries start at, after a two-space indent.
  package static let column = 34

  package static func group(named word: String) -> (title: String, words: [String], specs: [CommandSpec])? {
    let w = word.lowercased()
    return groups.first { $0.title.lowercased() == w || $0.words.contains(w) }
  }

  package static func unknownGroup(_ word: String) -> CommandError {
    CommandError(
      "help: no group '\(ValueParser.printable(word))' (groups: \(groups.map { $0.words[0] }.joined(separator: ", ")))")
  }

  /// With `width` (interactive mode: the terminal's columns), every line fits: in a list, a
  /// summary too long for the line goes on under its column ("help COMMAND" has it all); a
  /// command's own help is wrapped.
  package static func text(for topic: String?, width: Int?) throws(CommandError) -> [String] {
    let lines = try text(for: topic)
    guard let width else { return lines }
    if let topic, !topic.lowercased().hasPrefix("group "), CommandTable.lookup(topic.lowercased()) != nil {
      return lines.flatMap { Display.wrapped($0, width: width, indent: 4) }
    }
    return lines.flatMap { line -> [String] in
      guard TerminalInfo.displayWidth(line) > width else { return [line] }
      guard line.hasPrefix("  ") else { return Display.wrapped(line, width: width) }
      // Too narrow to keep a readable summary column: the row is cut instead.
      guard width >= column + 3 + 24 else { return [Display.shortened(line, toEnd: width)] }
      return Display.wrapped(line, width: width, indent: column + 3)
    }
  }

  package static func text(for topic: String?) throws(CommandError) -> [String] {
    if let topic {
      let word = topic.lowercased()
      if word.hasPrefix("group "), let g = group(named: String(word.dropFirst(6))) { return rows(g.title, g.specs) }
      guard let spec = CommandTable.lookup(word) else {
        if let g = group(named: word) { return rows(g.title, g.specs) }
        throw CommandError("no help for '\(ValueParser.printable(topic))': unknown command (type 'help' for the list)")
      }
      var lines = ["usage: \(spec.usage)", "  \(spec.summary)"]
      if !spec.aliases.isEmpty { lines.append("  aliases: \(spec.aliases.joined(separator: ", "))") }
      for d in spec.details.split(separator: "\n") { lines.append("  " + String(d).trimmingSpaces()) }
      return lines
    }
    var lines = groups.flatMap { rows($0.title, $0.specs) }
    lines.append("NAME may be 'all' where shown. '#' starts a comment; ';' separates commands.")
    return lines
  }

  /// A heading and one line per command; a usage longer than the column pushes its summary right.
  package static func rows(_ title: String, _ specs: [CommandSpec]) -> [String] {
    ["\(title):"] + specs.map { "  \($0.usage.padded(column)) \($0.summary)" }
  }
}
