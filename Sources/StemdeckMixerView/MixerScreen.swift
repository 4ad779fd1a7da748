import Foundation
import StemdeckControl
import StemdeckLive
import StemdeckSession
import StemdeckText

/// A character grid with a style per cell: what the mixer view draws into. Pure Swift (no
/// terminal), so the layout is tested without one (`MixerScreenTests`); `MixerView` copies it to
/// ncurses, which sends only what changed.
package struct Canvas {
  package enum Style: UInt8 {
    case normal, bold, selected, meterLow, meterMid, meterHigh, clip, dim, bar
  }

  package let columns: Int
  package let rows: Int
  /// Unicode scalar values, row by row; 0 is the right half of a wide character.
  package private(set) var cells: [UInt32]
  package private(set) var styles: [Style]

  package init(columns: Int, rows: Int) {
    self.columns = max(0, columns)
    self.rows = max(0, rows)
    cells = [UInt32](repeating: 32, count: self.columns * self.rows)
    styles = [Style](repeating: .normal, count: self.columns * self.rows)
  }

  /// Writes `text` at (`row`, `column`), cut at `width` columns (default: the right edge).
  /// Returns the columns used.
  @discardableResult
  package mutating func put(_ text: String, row: Int, column: Int, width: Int? = nil, style: Style = .normal) -> Int {
    guard row >= 0, row < rows, column < columns else { return 0 }
    let limit = min(columns, column + (width ?? columns))
    var x = column
    // Printable ASCII (the figures, most names): a cell per byte, without breaking the text into
    // characters (which was most of the view's drawing cost).
    if text.utf8.allSatisfy({ $0 >= 32 && $0 < 127 }) {
      for b in text.utf8 {
        if x + 1 > limit { break }
        if x >= 0 {
          cells[row * columns + x] = UInt32(b)
          styles[row * columns + x] = style
        }
        x += 1
      }
      return x - column
    }
    for c in text {
      guard let first = c.unicodeScalars.first else { continue }
      var v = first.value
      if v < 32 || v == 127 { v = 63 }  // '?': nothing that moves the cursor reaches the screen
      let w = c.unicodeScalars.count == 1 && v < 0x300 ? 1 : max(1, TerminalInfo.displayWidth(String(c)))
      if x + w > limit { break }
      if x >= 0 {
        cells[row * columns + x] = v
        styles[row * columns + x] = style
        if w == 2 { cells[row * columns + x + 1] = 0; styles[row * columns + x + 1] = style }
      }
      x += w
    }
    return x - column
  }

  /// One cell.
  package mutating func set(_ scalar: Unicode.Scalar, row: Int, column: Int, style: Style = .normal) {
    guard row >= 0, row < rows, column >= 0, column < columns else { return }
    cells[row * columns + column] = scalar.value
    styles[row * columns + column] = style
  }

  /// Changes the style of `width` cells.
  package mutating func style(row: Int, column: Int, width: Int, _ style: Style) {
    guard row >= 0, row < rows else { return }
    for x in max(0, column)..<min(columns, column + width) { styles[row * columns + x] = style }
  }

  /// Clears a row.
  package mutating func clear(row: Int) {
    guard row >= 0, row < rows else { return }
    for x in 0..<columns { cells[row * columns + x] = 32; styles[row * columns + x] = .normal }
  }

  package func cell(row: Int, column: Int) -> (scalar: UInt32, style: Style) {
    (cells[row * columns + column], styles[row * columns + column])
  }

  /// Whether `row` holds the same cells and styles as in `other` (of the same size).
  package func sameRow(_ row: Int, as other: Canvas) -> Bool {
    let range = (row * columns)..<((row + 1) * columns)
    return cells[range] == other.cells[range] && styles[range] == other.styles[range]
  }

  /// The text of each row (trailing spaces kept), as the terminal shows it.
  package var lines: [String] {
    (0..<rows).map { r in
      var s = String.UnicodeScalarView()
      for x in 0..<columns {
        let v = cells[r * columns + x]
        if v != 0, let scalar = Unicode.Scalar(v) { s.append(scalar) }
      }
      return String(s)
    }
  }
}

/// The view's state that is not the mixer's: the selection, the scroll, the help overlay, the
/// command prompt and the status line.
package struct MixerViewState {
  /// The selected strip: 0..<strips.count for a stem, then the strips at the right edge in
  /// their order (`MixerScreen.fixedStrips`: the effects when shown, the master last).
  package var selected = 0
  /// The first stem strip shown.
  package var firstShown = 0
  package var showHelp = false
  /// What a ':' command printed when it was more than one line, shown over the strips until a
  /// key is pressed (nil: nothing shown).
  package var output: (title: String, lines: [String])?
  /// The command line being typed after ':' (nil: no prompt).
  package var prompt: String?
  /// The status line: a command's result, an event, a refusal.
  package var status = ""
  package var statusIsError = false
}

/// Draws a `MixerViewModel` into a `Canvas`: a transport line, one strip per stem (as many as
/// fit, scrolled to the selection), the effects (when they play into the master) and the master
/// at the right edge, a status line and a footer with the keys.
///
///     row 0        transport: state, position / length, loop, tempo, DSP load, xruns, server, session
///     rows 1–2     names (never cut so that two look alike)
///     row 3        flags (M S D G E U !, as `stems`; Q: EQ on) and the EQ's high-pass ("hp80")
///     row 4        clip markers
///     rows 5…      meters (peak ▒, RMS █, 3-s hold ─) and the fader, scaled +6 … −∞ dB with ticks
///                  at 0, −6, −12, −24, −48
///     5 rows       fader dB, pan, rate, loop, peak dB
///     last 2 rows  status line (or the ':' prompt), keys
package enum MixerScreen {
  /// Columns of the scale on the left.
  package static let scaleWidth = 5
  /// Rows that are not the meters.
  package static let fixedRows = 12
  /// The meters' (and faders') top row.
  package static let meterTop = 5
  package static let minimumColumns = 40
  package static let minimumRows = fixedRows + 6
  /// The narrowest strip (columns of content; one more separates it from the next).
  package static let narrowest = 7
  package static let widest = 12

  /// The dB marks of the scale, top to bottom; the meters and faders map dB to rows through them,
  /// each step the same height (like a console's fader scale).
  package static let marks: [Double] = [6, 0, -6, -12, -24, -48, -72]

  /// Where `db` lies on the scale: 1 at +6 dB, 0 at −72 dB and below.
  package static func fraction(_ db: Double) -> Double {
    guard db.isFinite, db > marks.last! else { return 0 }
    if db >= marks[0] { return 1 }
    let steps = Double(marks.count - 1)
    for i in 1..<marks.count where db >= marks[i] {
      let within = (db - marks[i]) / (marks[i - 1] - marks[i])
      return (steps - Double(i) + within) / steps
    }
    return 0
  }

  package struct Layout: Equatable {
    package var stripWidth: Int
    /// How many stem strips are shown.
    package var shown: Int
    package var meterRows: Int
    package var tooSmall: Bool
  }

  /// The strip width and how many strips fit `columns` × `rows` for `count` stems and `fixed`
  /// strips at the right edge (the master, and the effects when shown): the widest strips (up
  /// to `widest`) with which every strip fits, else the narrowest and a scroll.
  package static func layout(count: Int, columns: Int, rows: Int, fixed: Int = 1) -> Layout {
    let tooSmall = columns < minimumColumns || rows < minimumRows
    // Strips start after the scale, each `width` + 1 columns; the strips at the right edge take
    // `width` + 1 each after a separator (the last column stays blank).
    func fitting(_ width: Int) -> Int { max(0, (columns - scaleWidth - fixed * (width + 1) - 1) / (width + 1)) }
    var width = narrowest
    while width < widest && count > 0 && fitting(width + 1) >= count { width += 1 }
    let shown = min(count, fitting(width))
    return Layout(stripWidth: width, shown: shown, meterRows: max(0, rows - fixedRows), tooSmall: tooSmall)
  }

  /// The strips at the right edge, left to right: the live inputs, the effects (when shown) and
  /// the master.
  package static func fixedStrips(_ model: MixerViewModel) -> [MixerViewModel.Strip] {
    model.inputs + (model.effects.map { [$0] } ?? []) + [model.master]
  }

  /// The strip at selection index `index` (`MixerViewState.selected`).
  package static func strip(_ model: MixerViewModel, at index: Int) -> MixerViewModel.Strip {
    if index < model.strips.count { return model.strips[max(0, index)] }
    let fixed = fixedStrips(model)
    return fixed[min(fixed.count - 1, index - model.strips.count)]
  }

  /// The first column of the strips at the right edge.
  package static func fixedStart(columns: Int, width: Int, fixed: Int) -> Int { columns - fixed * (width + 1) }

  /// The column of a fader's left side (its handle is one further) in a strip at `x`.
  package static func faderColumn(stripX x: Int, width w: Int) -> Int { x + 2 * max(1, (w - 4) / 2) + 1 }

  /// Keeps the selection among the strips shown.
  package static func scroll(_ state: inout MixerViewState, count: Int, shown: Int, fixed: Int = 1) {
    state.selected = max(0, min(state.selected, count + fixed - 1))
    if shown <= 0 { state.firstShown = 0; return }
    if state.selected < count {
      if state.selected < state.firstShown { state.firstShown = state.selected }
      if state.selected >= state.firstShown + shown { state.firstShown = state.selected - shown + 1 }
    }
    state.firstShown = max(0, min(state.firstShown, count - shown))
  }

  /// The strip under column `x` (0..<count for a stem, `count`… for the strips at the right
  /// edge, as `MixerViewState.selected`; nil: none there).
  package static func strip(atColumn x: Int, count: Int, firstShown: Int, columns: Int, rows: Int, fixed: Int = 1) -> Int? {
    let l = layout(count: count, columns: columns, rows: rows, fixed: fixed)
    let right = fixedStart(columns: columns, width: l.stripWidth, fixed: fixed)
    if x >= right {
      let k = (x - right) / (l.stripWidth + 1)
      guard (x - right) % (l.stripWidth + 1) < l.stripWidth, k < fixed else { return nil }
      return count + k
    }
    guard x >= scaleWidth else { return nil }
    let k = (x - scaleWidth) / (l.stripWidth + 1)
    guard (x - scaleWidth) % (l.stripWidth + 1) < l.stripWidth, k < l.shown, firstShown + k < count else { return nil }
    return firstShown + k
  }

  /// What a click at (`x`, `y`) hits: the strip (as `strip(atColumn:…)`), and when it is on a
  /// fader's track (the three columns of its handle, the meter rows), the level there: a linear
  /// volume (0 on the bottom row: silence). The fader's handle is then drawn on the row clicked.
  package static func hit(
    column x: Int, row y: Int, count: Int, firstShown: Int, columns: Int, rows: Int,
    fixed: Int = 1
  ) -> (strip: Int, volume: Double?)? {
    guard let index = strip(atColumn: x, count: count, firstShown: firstShown, columns: columns, rows: rows, fixed: fixed) else {
      return nil
    }
    let l = layout(count: count, columns: columns, rows: rows, fixed: fixed)
    let stripX =
      index < count
      ? scaleWidth + (index - firstShown) * (l.stripWidth + 1)
      : fixedStart(columns: columns, width: l.stripWidth, fixed: fixed) + (index - count) * (l.stripWidth + 1)
    let fx = faderColumn(stripX: stripX, width: l.stripWidth)
    let meterRow = y - meterTop
    guard !l.tooSmall, x >= fx, x <= fx + 2, meterRow >= 0, meterRow < l.meterRows else { return (index, nil) }
    return (index, volume(atRow: meterRow, rows: l.meterRows))
  }

  /// The level a fader dragged with the mouse takes when the pointer is on screen row `y`: what
  /// a click on its track at that row sets, the row kept within the track (above it the top,
  /// below it silence), wherever the pointer's column. nil when the screen is too small.
  package static func dragVolume(row y: Int, count: Int, columns: Int, rows: Int, fixed: Int = 1) -> Double? {
    let l = layout(count: count, columns: columns, rows: rows, fixed: fixed)
    guard !l.tooSmall, l.meterRows > 0 else { return nil }
    return volume(atRow: max(0, min(l.meterRows - 1, y - meterTop)), rows: l.meterRows)
  }

  /// The fader level a click on row `r` (0 = top) of a track `h` rows high sets: the bottom row
  /// is silence, a row with a scale mark is that mark exactly, any other row the level at its
  /// middle (to 0.1 dB). As a linear volume.
  package static func volume(atRow r: Int, rows h: Int) -> Double {
    if r >= h - 1 { return 0 }
    if let mark = marks.dropLast().first(where: { rowFor(fraction($0), rows: h) == r }) { return Decibels.toAmplitude(mark) }
    let steps = Double(marks.count - 1)
    let position = (1 - (Double(r) + 0.5) / Double(h)) * steps  // 0 … steps, from the bottom
    let k = min(marks.count - 2, max(0, Int(position.rounded(.down))))
    let lower = marks[marks.count - 1 - k], upper = marks[marks.count - 2 - k]
    let db = ((lower + (position - Double(k)) * (upper - lower)) * 10).rounded() / 10
    return Decibels.toAmplitude(db)
  }

  /// The names as shown in strips `width` columns wide over two rows: in full when they fit,
  /// else the beginning, "…" and the end, with the cut moved until no two look alike.
  package static func shownNames(_ names: [String], width: Int, unicode: Bool) -> [String] {
    let room = 2 * width
    let ellipsis = unicode ? "…" : "~"
    func cut(_ name: String, tail: Int) -> String {
      String(name.prefix(room - 1 - tail)) + ellipsis + String(name.suffix(tail))
    }
    var shown = names.map { $0.count <= room ? $0 : cut($0, tail: width - 1) }
    var counts: [String: Int] = [:]
    for s in shown { counts[s, default: 0] += 1 }
    for (i, name) in names.enumerated() where counts[shown[i]]! > 1 && name.count > room {
      // Another cut that no other strip shows.
      let others = Set(shown.enumerated().filter { $0.offset != i }.map(\.element))
      for tail in (0...(room - 2)).reversed() where !others.contains(cut(name, tail: tail)) {
        counts[shown[i]]! -= 1
        shown[i] = cut(name, tail: tail)
        counts[shown[i], default: 0] += 1
        break
      }
    }
    return shown
  }

  /// A shown name in two rows of `width`: broken after '-', '_' or '.' when that fits.
  package static func nameRows(_ name: String, width: Int) -> (String, String) {
    let characters = Array(name)
    guard characters.count > width else { return (name, "") }
    var split = width
    if let p = characters.prefix(width).lastIndex(where: { "-_.".contains($0) }), p >= width / 2, characters.count - (p + 1) <= width {
      split = p + 1
    }
    return (String(characters.prefix(split)), String(characters.dropFirst(split).prefix(width)))
  }

  package struct Glyphs {
    package var rms: Unicode.Scalar, peak: Unicode.Scalar, hold: Unicode.Scalar, track: Unicode.Scalar
    package var handle: Unicode.Scalar, handleSide: Unicode.Scalar, separator: Unicode.Scalar, clip: Unicode.Scalar
    package var tick: Unicode.Scalar
    package var play: String, pause: String, stop: String, left: String, right: String

    package static let unicode = Glyphs(
      rms: "█", peak: "▒", hold: "─", track: "│", handle: "◆", handleSide: "═", separator: "│", clip: "▲",
      tick: "·", play: "▶", pause: "‖", stop: "■", left: "◀", right: "▶")
    package static let ascii = Glyphs(
      rms: "#", peak: ":", hold: "-", track: "|", handle: "O", handleSide: "=", separator: "|", clip: "!",
      tick: ".", play: ">", pause: "=", stop: "#", left: "<", right: ">")
  }

  /// The keys of the strip controls' rows that have some (`viewKeys`: `{ }` width).
  package static let rowKeys: [(key: String, what: String, help: String)] = StripParameter.all.compactMap { row in
    row.viewKeys.map { ("\($0.down) \($0.up)", row.word, "\(row.word) down/up by \(NumberFormat.plain($0.step)): \(row.summary)") }
  }

  /// The keys, shortest description first, for the footer (fitted to the width) and `?`.
  package static let keys: [(key: String, what: String, help: String)] =
    [
      ("←→", "strip", "select a strip (h/l too)"),
      ("↑↓", "±1dB", "fader up/down 1 dB (k/j too)"),
      ("PgUp/PgDn", "±6dB", "fader up/down 6 dB (also Shift+↑/↓, +/-)"),
      ("Home", "0dB", "fader to 0 dB (unity)"),
      ("End", "-inf", "fader to −inf (silent)"),
      ("[ ]", "pan", "pan left/right by 0.1")
    ] + rowKeys + [
      ("< >", "rate", "rate (varispeed) down/up by 0.05"),
      ("m", "mute", "mute on/off"),
      ("s", "solo", "solo on/off"),
      ("L", "safe", "solo-safe on/off: heard whatever is soloed"),
      ("c", "cue", "cue (pfl) on/off: the strip on cue_L/R, the master unchanged"),
      ("0", "unity", "back to unity: 0 dB, centre, rate 1"),
      ("space", "play", "play / pause"),
      ("Enter", "stop", "stop (back to the start)"),
      (":", "cmd", "a command line: any REPL command"),
      ("u U", "undo", "undo / redo the last change (from any front end; 'history' lists them)"),
      ("e", "eq", "channel EQ on/off (settings kept; set it with ':eq NAME …')"),
      ("x", "inserts", "the strip's plugin inserts in/out: all bypassed, or all in again ('insert list NAME')")
    ]

  /// Draws one frame.
  package static func draw(_ model: MixerViewModel, _ state: inout MixerViewState, columns: Int, rows: Int, unicode: Bool) -> Canvas {
    var canvas = Canvas(columns: columns, rows: rows)
    let g = unicode ? Glyphs.unicode : Glyphs.ascii
    let fixed = fixedStrips(model)
    let layout = layout(count: model.strips.count, columns: columns, rows: rows, fixed: fixed.count)
    scroll(&state, count: model.strips.count, shown: layout.shown, fixed: fixed.count)
    if layout.tooSmall {
      canvas.put(plain("mixer: \(columns)×\(rows) is", unicode: unicode), row: 0, column: 0)
      canvas.put(plain("too small: \(minimumColumns)×\(minimumRows)+", unicode: unicode), row: 1, column: 0)
      canvas.put("q: back", row: 2, column: 0)
      return canvas
    }
    transportLine(model, state, &canvas, glyphs: g, unicode: unicode)
    let w = layout.stripWidth
    let h = layout.meterRows
    let valuesTop = meterTop + h

    // The scale: dB ticks beside the meters, the value rows' labels below them.
    for mark in marks.dropFirst().dropLast() {
      let row = meterTop + rowFor(fraction(mark), rows: h)
      canvas.put(String(Int(mark)).padLeft(scaleWidth - 1), row: row, column: 0, style: .dim)
    }
    canvas.put("+6".padLeft(scaleWidth - 1), row: meterTop, column: 0, style: .dim)
    for (i, label) in ["dB", "pan", "rate", "loop", "peak"].enumerated() {
      canvas.put(label, row: valuesTop + i, column: 0, style: .dim)
    }
    canvas.put("clip", row: 4, column: 0, style: .dim)
    if state.firstShown > 0 { canvas.put("\(g.left)\(state.firstShown)", row: 1, column: 0, style: .bold) }
    let after = model.strips.count - state.firstShown - layout.shown
    if after > 0 { canvas.put("\(after)\(g.right)", row: 2, column: 0, style: .bold) }

    let names = shownNames(model.strips.map(\.name), width: w, unicode: unicode)
    var x = scaleWidth
    for i in state.firstShown..<(state.firstShown + layout.shown) {
      strip(
        model.strips[i], name: names[i], selected: state.selected == i, &canvas, x: x, width: w, meterTop: meterTop,
        meterRows: h, glyphs: g, unicode: unicode)
      x += w + 1
    }
    // The effects (when shown) and the master, at the right edge after a separator.
    let right = fixedStart(columns: columns, width: w, fixed: fixed.count)
    for row in 1..<(valuesTop + 5) { canvas.set(g.separator, row: row, column: right - 1, style: .dim) }
    for (k, s) in fixed.enumerated() {
      strip(
        s, name: s.name, selected: state.selected == model.strips.count + k, &canvas, x: right + k * (w + 1), width: w,
        meterTop: meterTop, meterRows: h, glyphs: g, unicode: unicode)
    }

    statusLine(model, state, &canvas, row: rows - 2)
    footer(&canvas, row: rows - 1, unicode: unicode)
    if let output = state.output {
      panel(&canvas, title: output.title, lines: output.lines, footer: "any key closes this", unicode: unicode)
    } else if state.showHelp {
      help(&canvas, unicode: unicode)
    }
    return canvas
  }

  /// The row (0 = top) of a level at `fraction` in a meter `rows` high: each row covers
  /// 1/`rows` of the scale, so the marks, evenly spaced on the scale, are evenly spaced rows.
  package static func rowFor(_ fraction: Double, rows: Int) -> Int {
    max(0, min(rows - 1, Int(((1 - fraction) * Double(rows) + 1e-9).rounded(.down))))
  }

  package static func strip(
    _ s: MixerViewModel.Strip, name: String, selected: Bool, _ canvas: inout Canvas, x: Int, width w: Int,
    meterTop: Int, meterRows h: Int, glyphs g: Glyphs, unicode: Bool
  ) {
    let (first, second) = nameRows(name, width: w)
    let nameStyle: Canvas.Style = selected ? .selected : (s.isPlain ? .normal : .bold)
    canvas.put(first.padded(w), row: 1, column: x, width: w, style: nameStyle)
    canvas.put(second.padded(w), row: 2, column: x, width: w, style: nameStyle)
    var flags = s.flags.text
    // The EQ's high-pass at the right of the flags, where it fits.
    if let hp = s.eqHighPass {
      let hint = "hp" + String(Int(hp.rounded()))
      if flags.count + 1 + hint.count <= w { flags += String(repeating: " ", count: w - flags.count - hint.count) + hint }
    }
    canvas.put(
      flags.isEmpty ? (s.isPlain ? "-" : "") : flags, row: 3, column: x, width: w,
      style: s.flags.contains(.unreadable) || s.flags.contains(.underrun) ? .clip : (flags.isEmpty ? .dim : .bold))

    // Meters: one column per channel (two for a mono one), as wide as the strip allows.
    let meterWidth = max(1, (w - 4) / 2)
    let channels = s.meters.isEmpty ? [MixerViewModel.Meter(peak: -160, rms: -160, hold: -160, clipped: false)] : s.meters
    // The colour zones' bounds, once a strip (not for each of its rows).
    let zeroDB = fraction(0), minus6 = fraction(-6)
    for (c, meter) in (channels.count == 1 ? [channels[0], channels[0]] : Array(channels.prefix(2))).enumerated() {
      let mx = x + c * meterWidth
      let peakRows = Double(h) * fraction(meter.peak)
      let rmsRows = Double(h) * fraction(meter.rms)
      let holdRow = meter.hold > marks.last! ? rowFor(fraction(meter.hold), rows: h) : -1
      for r in 0..<h {
        let fromBottom = Double(h - 1 - r) + 0.5
        let level = 1 - (Double(r) + 0.5) / Double(h)
        let zone: Canvas.Style = level > zeroDB ? .meterHigh : level > minus6 ? .meterMid : .meterLow
        let glyph: Unicode.Scalar? = rmsRows >= fromBottom ? g.rms : peakRows >= fromBottom ? g.peak : r == holdRow ? g.hold : nil
        for dx in 0..<meterWidth {
          if let glyph { canvas.set(glyph, row: meterTop + r, column: mx + dx, style: zone) }
        }
      }
      if meter.clipped {
        for dx in 0..<meterWidth { canvas.set(g.clip, row: 4, column: mx + dx, style: .clip) }
      } else {
        for dx in 0..<meterWidth { canvas.set(g.tick, row: 4, column: mx + dx, style: .dim) }
      }
    }
    // The fader: a track with the handle at its dB value (none on the effects' strip).
    let fx = faderColumn(stripX: x, width: w)
    let handleRow = s.volume <= 0 ? h - 1 : rowFor(fraction(s.volumeDB), rows: h)
    for r in 0..<h where s.hasFader {
      if r == handleRow {
        let style: Canvas.Style = selected ? .selected : .bold
        canvas.set(g.handleSide, row: meterTop + r, column: fx, style: style)
        canvas.set(g.handle, row: meterTop + r, column: fx + 1, style: style)
        canvas.set(g.handleSide, row: meterTop + r, column: fx + 2, style: style)
      } else {
        canvas.set(g.track, row: meterTop + r, column: fx + 1, style: .dim)
      }
    }
    let valuesTop = meterTop + h
    if s.hasFader {
      canvas.put(MixerText.db(s.volumeDB).padLeft(w), row: valuesTop, column: x, width: w, style: selected ? .bold : .normal)
    }
    if let pan = s.pan { canvas.put(MixerText.pan(pan).padLeft(w), row: valuesTop + 1, column: x, width: w) }
    if let rate = s.rate { canvas.put(NumberFormat.fixed(rate, 2).padLeft(w), row: valuesTop + 2, column: x, width: w) }
    if let loop = s.loop, let loops = s.loops {
      canvas.put(MixerText.loop(loop, of: loops, unicode: unicode).padLeft(w), row: valuesTop + 3, column: x, width: w)
    }
    let peak = channels.map(\.peak).max() ?? -160
    canvas.put(
      MixerText.db(peak).padLeft(w), row: valuesTop + 4, column: x, width: w,
      style: channels.contains { $0.clipped } ? .clip : .normal)
  }
}
