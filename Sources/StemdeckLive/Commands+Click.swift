import Foundation
import StemdeckControl
import StemdeckSession
import StemdeckText

// The click and the count-in (issue 42, item 1): `click on|off`, `click to click|master`,
// `click level DB`, `click countin N` (also `countin N`), and `click` alone to show them.
// docs/architecture.md, *Click and count-in*.

extension CommandTable {
  package static let clickUsage = "click [on|off | to click|master | level DB | countin BARS | sample FILE|off | accent FILE|off]"

  package static let clickCommands: [CommandSpec] = [
    CommandSpec(
      name: "click", usage: clickUsage,
      summary: "a click on the session's tempo, on its own ports click_L/R (or in the master), and a count-in",
      details: """
        click on                  clicks on every beat while the transport plays (needs a
                                  tempo: 'tempo 120 4'); the bar's first beat is accented
        click off                 no click while playing (a count-in still clicks)
        click to click            the click on stemdeck:click_L/R, never in the master (default)
        click to master           the click in the master, after the master volume
        click level -6            the click's level in dB, -60 to 6 (0: the accent peaks at
                                  -6 dBFS, the other beats at -9 dBFS)
        click countin 2           'play' from a stop clicks 2 bars first; the stems start on
                                  the downbeat after them (0: none; also 'countin 2')
        click sample wood.wav     play an audio file (at most 2 s, mono-folded) on every beat
                                  instead of the synthesized burst ('click sample off': back)
        click accent cow.wav      another for the bar's first beat (needs a sample; 'off')
        The synthesized click is a sine burst (1,500 Hz accent, 1,000 Hz beat, 15 ms). Solo
        never mutes it. Saved in the session (per song in a setlist).
        """,
      argumentCount: 0...2, completions: [.keyword(["on", "off", "to", "level", "countin", "sample", "accent"])],
      accessWhenGiven: ["to": .rig, "sample": .files, "accent": .files]
    ) { (c, a) throws(CommandError) in
      if a.isEmpty {
        c.write(clickLine(c.mixer))
        return
      }
      var settings = c.mixer.click.settings
      switch a[0].lowercased() {
      case "on" where a.count == 1: settings.on = true
      case "off" where a.count == 1: settings.on = false
      case "to" where a.count == 2:
        guard let output = ClickSettings.Output(rawValue: a[1].lowercased()) else {
          throw CommandError("click to: the click goes to 'click' (its own ports) or 'master' (got '\(ValueParser.printable(a[1]))')")
        }
        settings.output = output
      case "level" where a.count == 2: settings.level = try clickLevel(a[1])
      case "countin" where a.count == 2: settings.countIn = try countIn(a[1])
      case "sample" where a.count == 2:
        settings.sample = a[1].lowercased() == "off" ? nil : absolutePath(a[1])
        if settings.sample == nil { settings.accentSample = nil }
      case "accent" where a.count == 2:
        guard a[1].lowercased() == "off" || settings.sample != nil else {
          throw CommandError(
            "click accent: set the beats' sample first ('click sample FILE'); the accent replaces it on the bar's first beat")
        }
        settings.accentSample = a[1].lowercased() == "off" ? nil : absolutePath(a[1])
      default: throw CommandError("click: usage: \(clickUsage)")
      }
      try c.mixerCall { () throws(MixerError) in try c.mixer.click.set(settings) }
      c.write(clickLine(c.mixer))
    },
    CommandSpec(
      name: "countin", usage: "countin [BARS]",
      summary: "bars of click before 'play' starts the stems (0: none); the same as 'click countin'",
      argumentCount: 0...1, completions: []
    ) { (c, a) throws(CommandError) in
      if let first = a.first {
        var settings = c.mixer.click.settings
        settings.countIn = try countIn(first)
        try c.mixerCall { () throws(MixerError) in try c.mixer.click.set(settings) }
      }
      c.write(clickLine(c.mixer))
    }
  ]

  /// "click: on, to its ports click_L/R, level -6 dB, count-in 2 bars (4 s at 120 bpm)".
  package static func clickLine(_ mixer: Mixer) -> String {
    let click = mixer.click.settings
    var parts = [click.on ? "on" : "off"]
    parts.append(click.output == .master ? "in the master" : "on its ports click_L/R")
    parts.append("level \(NumberFormat.plain(click.level)) dB")
    if click.countIn == 0 {
      parts.append("no count-in")
    } else {
      let frames = mixer.click.countInFrames
      let seconds = frames > 0 ? " (\(NumberFormat.plain((Double(frames) / mixer.sampleRate * 100).rounded() / 100)) s)" : ""
      parts.append("count-in \(click.countIn) bar\(click.countIn == 1 ? "" : "s")\(seconds)")
    }
    if let sample = click.sample {
      parts.append("sample \(sample)" + (click.accentSample.map { ", accent \($0)" } ?? ""))
      if let problem = mixer.click.sampleWarning { parts.append("(\(problem.plain): the synthesized click plays)") }
    }
    var line = "click: " + parts.joined(separator: ", ")
    let left = mixer.click.countInSecondsLeft
    if left > 0 { line += "; counting in, the stems start in \(NumberFormat.plain((left * 100).rounded() / 100)) s" }
    if (click.on || click.countIn > 0) && mixer.tempo == nil {
      line += "; no tempo yet: it clicks once there is one ('tempo BPM [BEATS_PER_BAR]')"
    }
    return line
  }

  /// A path as typed, absolute (relative to the working directory).
  package static func absolutePath(_ path: String) -> String {
    path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
  }

  /// A click level in dB: "-6", "-6dB".
  package static func clickLevel(_ text: String) throws(CommandError) -> Double {
    let lower = text.lowercased()
    let number = lower.hasSuffix("db") ? String(text.dropLast(2)) : text
    let level = try ValueParser.number(number, "click level")
    guard SettingRule.clickLevel.accepts(level) else { throw CommandError(SettingRule.clickLevel.refusal("click level", got: level)) }
    return level
  }

  /// Bars of count-in.
  package static func countIn(_ text: String) throws(CommandError) -> Int {
    let bars = try ValueParser.integer(text, "count-in")
    guard SettingRule.countIn.accepts(bars) else {
      throw CommandError(SettingRule.countIn.refusal("count-in", got: Double(bars)))
    }
    return bars
  }
}
