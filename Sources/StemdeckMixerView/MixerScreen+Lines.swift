import Foundation
import StemdeckControl
import StemdeckLive
import StemdeckSession
import StemdeckText

// The view's text lines: the transport at the top, the status line (the selected strip in full,
// or what a key or ':' command said) and the footer of keys.

extension MixerScreen {
  package static func transportLine(
    _ model: MixerViewModel, _ state: MixerViewState, _ canvas: inout Canvas, glyphs g: Glyphs, unicode: Bool
  ) {
    let t = model.transport
    let stateText: String
    switch t.state {
    case .playing: stateText = "\(g.play) playing"
    case .paused: stateText = "\(g.pause) paused"
    case .stopped: stateText = "\(g.stop) stopped"
    case .starting: stateText = "\(g.play) starting"
    }
    // Most important first; what does not fit is left out from the end.
    var parts = [
      stateText + (t.soloActive ? "  SOLO" : ""), NumberFormat.time(t.position) + " / " + (t.length.map(NumberFormat.time) ?? "-"),
      (t.session ?? "(no session file)") + (t.unsaved ? " *" : "")
    ]
    // A jump waiting for its bar line, then the mark the song is in (Commands+Marks.swift).
    if let jump = t.jump { parts.insert("\(unicode ? "→" : "->") \(jump.mark) at \(NumberFormat.time(jump.atSeconds))", at: 2) }
    if let mark = t.mark { parts.append("at mark \(mark)") }
    if state.selected < model.strips.count, model.strips[state.selected].offline == nil,
      let loop = model.strips[state.selected].loop, let loops = model.strips[state.selected].loops
    {
      parts.append("loop " + MixerText.loop(loop, of: loops, unicode: unicode))
    }
    if let tempo = t.tempo { parts.append("\(NumberFormat.plain(tempo.bpm)) bpm \(MixerText.barBeat(t.position, tempo))") }
    if let l = t.loudness {
      func lufs(_ v: Double) -> String { NumberFormat.level(v) }
      parts.append("S \(lufs(l.shortTerm)) I \(lufs(l.integrated)) LUFS TP \(lufs(l.truePeakDecibels))")
    }
    if let load = t.dspLoad { parts.append("dsp \(NumberFormat.fixed(load, 1))%") }
    if let xruns = t.xruns { parts.append("xruns \(xruns)") }
    if let server = t.server { parts.append("server \(server)" + (t.serverConnected ? "" : " (lost)")) }
    var line = ""
    for p in parts {
      let candidate = line.isEmpty ? p : line + "  " + p
      if TerminalInfo.displayWidth(candidate) > canvas.columns { continue }
      line = candidate
    }
    canvas.put(line.padded(canvas.columns), row: 0, column: 0, style: .bar)
  }

  package static func statusLine(_ model: MixerViewModel, _ state: MixerViewState, _ canvas: inout Canvas, row: Int) {
    if let prompt = state.prompt {
      // The end of a long line stays visible, with the cursor after it.
      let room = canvas.columns - 2
      var shown = prompt
      while TerminalInfo.displayWidth(shown) > room { shown.removeFirst() }
      canvas.put(":" + shown, row: row, column: 0, style: .bold)
      return
    }
    if !state.status.isEmpty {
      canvas.put(Display.shortened(state.status, toEnd: canvas.columns), row: row, column: 0, style: state.statusIsError ? .clip : .normal)
      return
    }
    // Nothing to say: the selected strip in full.
    let s = strip(model, at: state.selected)
    if s.isEffects {
      let peak = s.meters.map(\.peak).max() ?? -160
      canvas.put(
        Display.shortened(
          "effects: what the sound effects add to the master, peak \(MixerText.db(peak)) dB (no fader: each effect has its own volume)",
          toEnd: canvas.columns), row: row, column: 0, style: .dim)
      return
    }
    var text = "\(s.name): \(MixerText.db(s.volumeDB)) dB (\(Display.volume(s.volume)))"
    if let reason = s.offline {
      text += "  offline: \(s.file ?? ""): \(reason) (the fader sets its level in the session)"
      canvas.put(Display.shortened(text, toEnd: canvas.columns), row: row, column: 0, style: .clip)
      return
    }
    if let pan = s.pan { text += "  pan \(NumberFormat.fixed(pan, 2))" }
    if let rate = s.rate { text += "  rate \(NumberFormat.fixed(rate, 2))" }
    if let file = s.file { text += "  \(file)" }
    if !s.inserts.isEmpty { text += "  inserts: " + s.inserts.map { $0.name + ($0.bypassed ? " (out)" : "") }.joined(separator: ", ") }
    canvas.put(Display.shortened(text, toEnd: canvas.columns), row: row, column: 0, style: .dim)
  }

  package static func footer(_ canvas: inout Canvas, row: Int, unicode: Bool) {
    let end = "?:help q:back"
    let endWidth = TerminalInfo.displayWidth(end)
    var line = ""
    var width = 0  // of `line`, kept as it grows (drawn every frame)
    for k in keys {
      let part = plain("\(k.key):\(k.what)", unicode: unicode)
      let partWidth = TerminalInfo.displayWidth(part)
      if width + partWidth + endWidth + 2 > canvas.columns { break }
      line += part + " "
      width += partWidth + 1
    }
    canvas.put(line + end, row: row, column: 0, style: .bar)
  }

  /// `text` in ASCII when the terminal is not UTF-8 (arrows, ±, −, ×, …).
  package static func plain(_ text: String, unicode: Bool) -> String {
    guard !unicode else { return text }
    var out = text
    for (from, to) in [
      ("←→", "<-/->"), ("↑↓", "up/dn"), ("±", "+-"), ("−", "-"), ("×", "x"), ("…", "~"), ("↑/↓", "up/dn"),
      ("█", "#"), ("▒", ":"), ("─", "-"), ("▲", "!")
    ] {
      out = out.replacingOccurrences(of: from, with: to)
    }
    return out
  }
}
