import CNcurses
import Foundation
import StemdeckControl
import StemdeckLive
import StemdeckSession
import StemdeckText

/// The full-screen mixer view (`mixer`, `stemdeck --mixer SESSION`; docs/architecture.md, "The
/// console"): a front end of the console's `LiveSession` like `MeterView`. Each frame (30 a
/// second) it runs one service step (`Console.idle`), builds a `MixerViewModel` on this (the
/// control) thread, draws it (`MixerScreen`) and hands the grid to ncurses, which sends the
/// terminal only what changed; keys between frames become the same `Mixer` calls the commands
/// make. The audio thread never waits for it: the view only reads the mixer's published state.
///
/// ncurses gets its own screen (`newterm`) for the time the view is open; `endwin` gives the
/// terminal back in the mode it had, and the REPL's line editor takes it again after.
package final class MixerView {
  package let console: Console
  package var state = MixerViewState()
  /// Which fader a value belongs to.
  package enum FaderTarget: Equatable { case stem, master, offline }
  package var leaving = false
  /// A fader held with the mouse (pressed on its track; motion moves it; the release lets go):
  /// which strip. Its moves are one step of the console's undo history (History.swift).
  package struct Drag: Equatable {
    package var strip: Int
    package var name: String
    /// Which drag, for the history (`Console.noteChanges(drag:)`).
    package var id = 0
  }
  /// Drags so far: the next one's `id`.
  package var drags = 0
  package internal(set) var drag: Drag?
  /// The ncurses screen is open (false in tests, which hand keys to `handle` without one).
  var screenOpen = false
  /// `interruptRequests` when the view last looked: a change is Ctrl-C (or a signal), which
  /// leaves the view.
  var interruptBaseline = 0
  /// A ':' command that is running (a `wait`, `sfx wait`): frames go on being drawn from the
  /// console's `idle` while it waits, and Esc stops it (`whileBusy`).
  package internal(set) var busy: String?
  /// `idle` calls while a command ran (tests check that a waiting command keeps the view served).
  package internal(set) var busyTicks = 0
  var nextBusyFrame = 0.0
  package let unicode: Bool
  package let color: Bool
  /// Frames drawn.
  package private(set) var frames = 0
  package static let framesPerSecond = 30.0

  package init(console: Console) {
    self.console = console
    unicode = TerminalInfo.isUTF8()
    color = ProcessInfo.processInfo.environment["NO_COLOR"] == nil
  }

  /// Runs the view until q/Esc, `quit`, a signal or a terminal that went away. Returns an error
  /// message when it could not start (TERM unknown to ncurses).
  @discardableResult
  package static func run(_ console: Console) -> String? {
    MixerView(console: console).run()
  }

  package func run() -> String? {
    guard isatty(1) != 0 else { return "mixer: standard output is not a terminal (the view draws on the terminal stemdeck runs in)" }
    TerminalInfo.setUTF8Locale()
    guard let screen = stemdeck_newterm() else {
      let term = ProcessInfo.processInfo.environment["TERM"] ?? ""
      return "mixer: ncurses does not know the terminal type '\(printableText(term))' (set TERM, e.g. TERM=xterm-256color or TERM=vt100)"
    }
    defer { delscreen(screen) }
    screenOpen = true
    defer { screenOpen = false }
    set_escdelay(25)
    cbreak()
    noecho()
    nonl()
    intrflush(stemdeck_stdscr(), false)
    keypad(stemdeck_stdscr(), true)
    nodelay(stemdeck_stdscr(), true)
    curs_set(0)
    // Clicks select a strip (and on a fader's track set its level), the wheel moves its fader,
    // a press on a fader's track and motion with the button held drag it (where the terminal
    // reports the mouse; with REPORT_MOUSE_POSITION ncurses asks an xterm-like one for motion).
    mousemask(stemdeck_mouse_buttons(), nil)
    mouseinterval(0)
    if color && has_colors() {
      start_color()
      use_default_colors()
      init_pair(1, Int16(COLOR_GREEN), -1)
      init_pair(2, Int16(COLOR_YELLOW), -1)
      init_pair(3, Int16(COLOR_RED), -1)
      init_pair(4, Int16(COLOR_WHITE), Int16(COLOR_RED))
      init_pair(5, Int16(COLOR_BLACK), Int16(COLOR_CYAN))
    }
    // While the view is open, the console's words go to its status line, not over the screen.
    let savedWrite = console.write, savedEvent = console.writeEvent, savedColumns = console.terminalColumns
    console.write = { [weak self] in self?.say($0) }
    // xruns are counted on the transport line; other events show in the status line.
    console.writeEvent = { [weak self] in if !$0.hasPrefix("xrun") { self?.say("* " + $0) } }
    console.terminalColumns = nil
    defer {
      console.write = savedWrite
      console.writeEvent = savedEvent
      console.terminalColumns = savedColumns
      // No wreckage on a terminal without an alternate screen: clear it on the way out.
      werase(stemdeck_stdscr())
      wrefresh(stemdeck_stdscr())
      endwin()
      // The line editor learns the terminal's size again (it may have changed in the view).
      terminalResized.store(true, ordering: .relaxed)
    }
    interruptBaseline = interruptRequests.load(ordering: .relaxed)
    let frame = 1 / Self.framesPerSecond
    var next = Date.timeIntervalSinceReferenceDate
    while !leaving && !console.quitRequested && !Output.stdoutLost && terminationSignal.load(ordering: .relaxed) == 0 {
      if interruptRequests.load(ordering: .relaxed) != interruptBaseline { break }  // Ctrl-C leaves too
      console.idle()
      drawFrame()
      // Keys until the next frame is due.
      next += frame
      let now = Date.timeIntervalSinceReferenceDate
      if next < now { next = now }
      var fds = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
      if poll(&fds, 1, Int32(((next - now) * 1000).rounded(.up))) > 0 {
        if fds.revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 { break }
        readKeys()
      }
    }
    return nil
  }

  /// The status line's message (a command's result, an event).
  package func say(_ text: String, error: Bool = false) {
    state.status = lineSafe(text)
    state.statusIsError = error || text.hasPrefix("error:")
  }

  /// Follows a resize, then draws.
  package func drawFrame() {
    if terminalResized.exchange(false, ordering: .relaxed), let size = TerminalInfo.size(1) ?? TerminalInfo.size(0) {
      resizeterm(Int32(size.rows), Int32(size.columns))
      wclear(stemdeck_stdscr())
      previous = nil
    }
    draw()
  }

  package func draw() {
    let model = MixerViewModel.make(console, freshLoudness: false)
    let rows = Int(stemdeck_lines()), columns = Int(stemdeck_cols())
    let canvas = MixerScreen.draw(model, &state, columns: columns, rows: rows, unicode: unicode)
    blit(canvas)
    frames += 1
  }

  package func attributes(_ style: Canvas.Style) -> attr_t {
    let useColor = color && has_colors()
    switch style {
    case .normal: return stemdeck_a_normal()
    case .bold: return stemdeck_a_bold()
    case .selected: return useColor ? stemdeck_color_pair(5) | stemdeck_a_bold() : stemdeck_a_reverse() | stemdeck_a_bold()
    case .bar: return stemdeck_a_reverse()
    case .dim: return useColor ? stemdeck_a_dim() : stemdeck_a_normal()
    case .meterLow: return useColor ? stemdeck_color_pair(1) : stemdeck_a_normal()
    case .meterMid: return useColor ? stemdeck_color_pair(2) : stemdeck_a_normal()
    case .meterHigh: return useColor ? stemdeck_color_pair(3) | stemdeck_a_bold() : stemdeck_a_bold()
    case .clip: return useColor ? stemdeck_color_pair(4) | stemdeck_a_bold() : stemdeck_a_reverse()
    }
  }

  /// The grid copied last time: rows that did not change are not copied again.
  private var previous: Canvas?

  /// Copies the grid to ncurses's screen (the rows that changed, in runs of one style) and
  /// updates the terminal.
  package func blit(_ canvas: Canvas) {
    let window = stemdeck_stdscr()
    let old = previous.flatMap { $0.columns == canvas.columns && $0.rows == canvas.rows ? $0 : nil }
    previous = canvas
    var bytes: [CChar] = []
    bytes.reserveCapacity(canvas.columns * 4 + 1)
    for row in 0..<canvas.rows {
      if let old, old.sameRow(row, as: canvas) { continue }
      var x = 0
      while x < canvas.columns {
        let style = canvas.cell(row: row, column: x).style
        let start = x
        bytes.removeAll(keepingCapacity: true)
        while x < canvas.columns, canvas.cell(row: row, column: x).style == style {
          Self.appendUTF8(canvas.cell(row: row, column: x).scalar, to: &bytes)
          x += 1
        }
        bytes.append(0)
        stemdeck_attrset(attributes(style))
        // The last cell of the screen scrolls a terminal without automatic margins: ncurses
        // returns an error after writing it, which is harmless.
        _ = bytes.withUnsafeBufferPointer { mvwaddnstr(window, Int32(row), Int32(start), $0.baseAddress, -1) }
      }
    }
    stemdeck_attrset(stemdeck_a_normal())
    if let prompt = state.prompt {
      let shown = min(canvas.columns - 1, 1 + TerminalInfo.displayWidth(prompt))
      wmove(window, Int32(canvas.rows - 2), Int32(shown))
      curs_set(1)
    } else {
      curs_set(0)
    }
    wrefresh(window)
  }

  /// Appends the UTF-8 bytes of scalar value `v` (0, the right half of a wide character: none).
  package static func appendUTF8(_ v: UInt32, to bytes: inout [CChar]) {
    func byte(_ b: UInt32) { bytes.append(CChar(bitPattern: UInt8(truncatingIfNeeded: b))) }
    switch v {
    case 0: break
    case ..<0x80: byte(v)
    case ..<0x800: byte(0xC0 | v >> 6); byte(0x80 | v & 0x3F)
    case ..<0x10000: byte(0xE0 | v >> 12); byte(0x80 | (v >> 6) & 0x3F); byte(0x80 | v & 0x3F)
    default: byte(0xF0 | v >> 18); byte(0x80 | (v >> 12) & 0x3F); byte(0x80 | (v >> 6) & 0x3F); byte(0x80 | v & 0x3F)
    }
  }
}
