import StemdeckLive

/// Boxes drawn over the strips: the key help (`?`) and what a ':' command printed when it was
/// more than one line (docs/mixer-view.md). Any key closes either.
extension MixerScreen {
  package static func help(_ canvas: inout Canvas, unicode: Bool) {
    var lines: [String] = []
    for k in keys { lines.append("\(k.key.padded(10)) \(k.help)") }
    lines += [
      "?".padded(10) + " this help (any key closes it); q or Esc: back",
      "Meters: \(unicode ? "█ RMS, ▒ peak, ─ 3-s hold, ▲ clipped" : "# RMS, : peak, - 3-s hold, ! clipped")",
      "Flags: M mute S solo D direct out G gliding E ended U underruns Q EQ L solo-safe C cue",
      "! unreadable or offline. hp80: EQ high-pass. effects: the effects' sum",
      "Mouse: click a strip to select it, click or drag a fader"
    ]
    panel(&canvas, title: "stemdeck mixer: keys", lines: lines, footer: nil, unicode: unicode)
  }

  /// A box in the middle of the screen: `title`, then `lines`, then `footer`. Lines that do not
  /// fit are cut at the box's edge; when there are more lines than rows, the last ones are shown
  /// and the first row says how many are above (a command's result is at its end).
  package static func panel(_ canvas: inout Canvas, title: String, lines: [String], footer: String?, unicode: Bool) {
    let tail = footer.map { [$0] } ?? []
    let room = max(1, canvas.rows - 4 - tail.count)
    var body = lines
    if body.count > room {
      let hidden = body.count - room + 1
      body = ["(\(hidden) lines above: run it at the prompt to see them all)"] + body.suffix(room - 1)
    }
    let all = [title] + body + tail
    let width = min(canvas.columns - 2, (all.map { TerminalInfo.displayWidth($0) }.max() ?? 20) + 4)
    let height = min(canvas.rows - 2, all.count + 2)
    let left = max(0, (canvas.columns - width) / 2)
    let top = max(0, (canvas.rows - height) / 2)
    for r in 0..<height {
      canvas.put(String(repeating: " ", count: width), row: top + r, column: left, style: .bar)
    }
    for (i, line) in all.prefix(height - 2).enumerated() {
      canvas.put(plain(line, unicode: unicode), row: top + 1 + i, column: left + 2, width: width - 4, style: .bar)
    }
  }
}
