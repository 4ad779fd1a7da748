import StemdeckLive
import CNcurses
import Foundation
import StemdeckControl
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
  package private(set) var drag: Drag?
  /// The ncurses screen is open (false in tests, which hand keys to `handle` without one).
  private var screenOpen = false
  /// `interruptRequests` when the view last looked: a change is Ctrl-C (or a signal), which
  /// leaves the view.
  private var interruptBaseline = 0
  /// A ':' command that is running (a `wait`, `sfx wait`): frames go on being drawn from the
  /// console's `idle` while it waits, and Esc stops it (`whileBusy`).
  package private(set) var busy: String?
  /// `idle` calls while a command ran (tests check that a waiting command keeps the view served).
  package private(set) var busyTicks = 0
  private var nextBusyFrame = 0.0
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

  // MARK: - Keys

  package enum Key: Equatable {
    case character(Character)
    case left, right, up, down, shiftUp, shiftDown, pageUp, pageDown, home, end, enter, escape, backspace, other
  }

  /// Reads every key waiting (ncurses decodes the terminal's sequences; those it does not know
  /// for this TERM, e.g. Home on a vt100, are decoded here so that they never read as Esc).
  package func readKeys() {
    var pending: [UInt8] = []
    while true {
      let c = wgetch(stemdeck_stdscr())
      if c == ERR { break }
      switch c {
      case KEY_LEFT: handle(.left)
      case KEY_RIGHT: handle(.right)
      case KEY_UP: handle(.up)
      case KEY_DOWN: handle(.down)
      case KEY_SR: handle(.shiftUp)
      case KEY_SF: handle(.shiftDown)
      case KEY_PPAGE: handle(.pageUp)
      case KEY_NPAGE: handle(.pageDown)
      case KEY_HOME: handle(.home)
      case KEY_END: handle(.end)
      case KEY_ENTER, 10, 13: handle(.enter)
      case KEY_BACKSPACE, 8, 127: handle(.backspace)
      case KEY_RESIZE: terminalResized.store(true, ordering: .relaxed)
      case KEY_MOUSE:
        var event = MEVENT()
        if getmouse(&event) == OK { mouse(column: Int(event.x), row: Int(event.y), kind: stemdeck_mouse_kind(event.bstate)) }
      case 27: handle(escapeSequence())
      case 0..<256:
        // UTF-8: gather a character's bytes.
        pending.append(UInt8(c))
        if let text = String(validating: pending, as: UTF8.self), let ch = text.first {
          pending.removeAll()
          handle(.character(ch))
        } else if pending.count >= 4 {
          pending.removeAll()
        }
      default: handle(.other)
      }
      if leaving { break }
    }
  }

  /// A click or press (kind 1) selects the strip under (`column`, `row`), and on a fader's track
  /// sets its level there (`MixerScreen.hit`) and holds the fader: motion with the button held
  /// (kind 3) moves it to the pointer's row, the release (kind 2) lets it go, and one `u` undoes
  /// the whole drag. The wheel (4 up, 5 down) selects the strip and moves its fader 1 dB.
  /// `columns`/`rows`: the screen's size (ncurses's when nil).
  package func mouse(column: Int, row: Int, kind: Int32, columns: Int? = nil, rows: Int? = nil) {
    if kind == 2 || kind == 1 { drag = nil }
    guard !state.showHelp, state.output == nil, state.prompt == nil, kind != 0, kind != 2 else { return }
    // Motion with no fader held (a terminal that reports every move): nothing to do.
    if kind == 3 && drag == nil { return }
    let model = MixerViewModel.make(console, freshLoudness: false)
    let count = model.strips.count
    if kind == 3, let held = drag {
      let fixed = MixerScreen.fixedStrips(model).count
      // The strips changed under the pointer (a stem removed): the drag ends.
      guard held.strip < count + fixed, MixerScreen.strip(model, at: held.strip).name == held.name,
        let volume = MixerScreen.dragVolume(
          row: row, count: count, columns: columns ?? Int(stemdeck_cols()), rows: rows ?? Int(stemdeck_lines()),
          fixed: fixed)
      else {
        drag = nil
        return
      }
      setVolume(MixerScreen.strip(model, at: held.strip), volume, drag: held.id)
      return
    }
    guard
      let hit = MixerScreen.hit(
        column: column, row: row, count: count, firstShown: state.firstShown,
        columns: columns ?? Int(stemdeck_cols()), rows: rows ?? Int(stemdeck_lines()),
        fixed: MixerScreen.fixedStrips(model).count)
    else { return }
    state.selected = hit.strip
    state.status = ""
    if kind == 4 {
      handle(.up)
    } else if kind == 5 {
      handle(.down)
    } else if let volume = hit.volume {
      let strip = MixerScreen.strip(model, at: hit.strip)
      if strip.hasFader {
        drags += 1
        setVolume(strip, volume, drag: drags)
        drag = Drag(strip: hit.strip, name: strip.name, id: drags)
      }
    }
  }

  /// After ESC: nothing more is Esc itself; otherwise a sequence ncurses did not decode.
  package func escapeSequence() -> Key {
    var sequence: [UInt8] = []
    while true {
      let c = wgetch(stemdeck_stdscr())
      if c == ERR || c < 0 || c > 255 { break }
      sequence.append(UInt8(c))
      // CSI/SS3 end at a final byte; ESC followed by one other character is Alt+key.
      if sequence.count >= 2 && (0x40...0x7E).contains(c) { break }
      if sequence.count == 1 && c != 0x5B && c != 0x4F { break }
    }
    if sequence.isEmpty { return .escape }
    switch String(decoding: sequence, as: UTF8.self) {
    case "[A", "OA": return .up
    case "[B", "OB": return .down
    case "[C", "OC": return .right
    case "[D", "OD": return .left
    case "[1;2A", "[a": return .shiftUp
    case "[1;2B", "[b": return .shiftDown
    case "[5~": return .pageUp
    case "[6~": return .pageDown
    case "[1~", "[7~", "[H", "OH": return .home
    case "[4~", "[8~", "[F", "OF": return .end
    case "OM": return .enter
    default: return .other
    }
  }

  /// Why the selected strip refuses `what` (nil: it has it). The master has no pan, rate, mute
  /// or solo; the effects' strip only a meter; an offline stem only its fader.
  package func refusal(_ what: String, _ strip: MixerViewModel.Strip) -> String? {
    if strip.isEffects {
      return
        "the effects strip has no \(what): it shows what the sound effects add to the master (each effect has its own volume: 'sfx fire NAME VOL')"
    }
    if strip.isMaster { return what == "mute" ? "the master has no mute (End silences it)" : "the master has no \(what)" }
    if strip.isBus && what == "rate" { return "'\(strip.name)' is a bus: it has no rate (its fader, pan, mute and solo work)" }
    if strip.isInput && what == "rate" { return "'\(strip.name)' is a live input: it has no rate" }
    if let reason = strip.offline {
      return "'\(strip.name)' is offline (\(reason)): only its fader works, for the level kept in the session"
    }
    return nil
  }

  /// A table row's view key (`{` `}`: width): one step, rounded to the step's decimals, kept
  /// in the row's range.
  package func step(_ control: StripParameter, of strip: MixerViewModel.Strip, up: Bool) {
    if let refused = refusal(control.key, strip) { say(refused, error: true); return }
    guard let keys = control.viewKeys, let range = control.rule?.range else { return }
    let scale = Foundation.pow(10, (-Foundation.log10(keys.step)).rounded(.up))
    act { () throws(MixerError) in
      let now = try console.mixer.value(of: control, of: strip.name)
      let stepped = ((now + (up ? keys.step : -keys.step)) * scale).rounded() / scale
      let next = Swift.min(range.upperBound, Swift.max(range.lowerBound, stepped))
      try console.mixer.set(control, of: strip.name, to: next)
      say("\(strip.name) \(control.word) \(NumberFormat.plain(next))")
    }
  }

  package func handle(_ key: Key) {
    // A key lets go of a fader held with the mouse (its release may never come: `u` undoes).
    drag = nil
    if state.showHelp || state.output != nil {
      state.showHelp = false
      state.output = nil
      return
    }
    if busy != nil && busyKey(key) { return }
    if state.prompt != nil { promptKey(key); return }
    let model = MixerViewModel.make(console, freshLoudness: false)
    let count = model.strips.count
    let last = count + MixerScreen.fixedStrips(model).count - 1
    state.selected = max(0, min(state.selected, last))
    let strip = MixerScreen.strip(model, at: state.selected)
    state.status = ""
    switch key {
    case .left, .character("h"): state.selected = max(0, state.selected - 1)
    case .right, .character("l"): state.selected = min(last, state.selected + 1)
    case .up, .character("k"): fader(strip, by: 1)
    case .down, .character("j"): fader(strip, by: -1)
    case .pageUp, .shiftUp, .character("+"): fader(strip, by: 6)
    case .pageDown, .shiftDown, .character("-"): fader(strip, by: -6)
    case .home: setVolume(strip, 1)
    case .end: setVolume(strip, 0)
    case .character("["), .character("]"):
      if let refused = refusal("pan", strip) { say(refused, error: true); return }
      guard let pan = strip.pan else { return }
      let step = key == .character("[") ? -0.1 : 0.1
      act { () throws(MixerError) in try console.mixer.setPan(strip.name, max(-1, min(1, ((pan + step) * 10).rounded() / 10))) }
    case .character("<"), .character(">"):
      if let refused = refusal("rate", strip) { say(refused, error: true); return }
      guard let rate = strip.rate else { return }
      let step = key == .character("<") ? -0.05 : 0.05
      act { () throws(MixerError) in try console.mixer.setRate(strip.name, max(0.5, min(2, ((rate + step) * 100).rounded() / 100))) }
    case .character(let c) where StripParameter.row(viewKey: c) != nil:
      if let (control, up) = StripParameter.row(viewKey: c) { step(control, of: strip, up: up) }
    case .character("m"):
      if let refused = refusal("mute", strip) { say(refused, error: true); return }
      act { () throws(MixerError) in try console.mixer.setMute(strip.name, !strip.flags.contains(.mute)) }
    case .character("s"):
      if let refused = refusal("solo", strip) { say(refused, error: true); return }
      act { () throws(MixerError) in try console.mixer.setSolo(strip.name, !strip.flags.contains(.solo)) }
    case .character("L"):
      if let refused = refusal("solo-safe", strip) { say(refused, error: true); return }
      let on = !strip.flags.contains(.soloSafe)
      if act({ () throws(MixerError) in try console.mixer.set(.soloSafe, of: strip.name, to: on ? 1 : 0) }) {
        say("\(strip.name) \(on ? "is solo-safe: heard whatever is soloed" : "follows solo again")")
      }
    case .character("c"):
      if let refused = refusal("cue", strip) { say(refused, error: true); return }
      let on = !strip.flags.contains(.cue)
      if act({ () throws(MixerError) in try console.mixer.setCue(strip.name, on ? .preFader : .off) }) {
        say(on ? "\(strip.name) on the cue (pfl: ':cue \(strip.name) afl' for after its fader)" : "\(strip.name) off the cue")
      }
    case .character("e"):
      if strip.isEffects || strip.offline != nil { say(refusal("EQ", strip) ?? "", error: true); return }
      act { () throws(MixerError) in
        var eq = strip.isMaster ? console.mixer.masterEQSetting : try console.mixer.eqSettings(strip.name)
        eq.enabled.toggle()
        if strip.isMaster { try console.mixer.setMasterEQ(eq) } else { try console.mixer.setEQ(strip.name, eq) }
        say("\(strip.name) eq \(eq.enabled ? "on" : "off")" + (eq.isFlat ? " (flat: set a band with ':eq \(strip.name)')" : ""))
      }
    case .character("0"):
      setVolume(strip, 1)
      if strip.isInput {
        act { () throws(MixerError) in try console.mixer.setPan(strip.name, 0) }
      } else if strip.isStem && strip.offline == nil {
        act { () throws(MixerError) in
          try console.mixer.setPan(strip.name, 0)
          try console.mixer.setRate(strip.name, 1)
        }
      }
    case .character(" "):
      act { () throws(MixerError) in
        if console.mixer.transportState == .paused { try console.mixer.play() } else { try console.mixer.pause() }
      }
    case .enter: act { () throws(MixerError) in try console.mixer.stop() }
    case .character("u"), .character("U"):
      // The console's history: any front end's change, not only this view's (History.swift).
      do { say(try console.undo(1, redo: key == .character("U")).joined(separator: "; ")) } catch { say("error: \(error)", error: true) }
    case .character(":"): state.prompt = ""
    case .character("?"): state.showHelp = true
    case .character("q"), .escape: leaving = true
    default: break
    }
  }

  /// A key while a ':' command runs: Esc (or Ctrl-C) stops it, q stops it and leaves, ':' waits
  /// for it. Returns true when the key was taken here; the others (faders, selection, transport:
  /// plain `Mixer` calls) work as usual.
  package func busyKey(_ key: Key) -> Bool {
    guard let busy else { return false }
    switch key {
    case .escape, .character("q"):
      if key == .character("q") { leaving = true }
      // What Ctrl-C does: the waits end on it (`Console.wait`, `waitForEnd`, `waitForEffects`).
      interruptRequests.add(1, ordering: .relaxed)
      return true
    case .character(":"):
      say("'\(busy)' is still running (Esc stops it)", error: true)
      return true
    default:
      return false
    }
  }

  /// Runs a key's mixer call; a refusal goes to the status line. Returns whether it was done.
  /// What it changed is a step of the undo history, of its own or, while a fader is dragged
  /// (`drag`), of the drag's.
  @discardableResult
  package func act(drag: Int? = nil, _ body: () throws(MixerError) -> Void) -> Bool {
    defer { console.noteChanges(source: "view", text: "mixer view", drag: drag) }
    do { try body(); return true } catch { say("error: \(consoleWords(error))", error: true); return false }
  }

  /// Moves a fader by `db` (from −inf: up to −72 dB first), on a 0.1 dB grid, within 0 … 2.
  package func fader(_ strip: MixerViewModel.Strip, by db: Double) {
    guard strip.hasFader else { say(refusal("fader", strip) ?? "", error: true); return }
    let current = strip.volume <= 0 ? nil : (strip.volumeDB * 10).rounded() / 10
    var target: Double
    if let current {
      target = Decibels.toAmplitude(current + db)
    } else {
      target = db > 0 ? Decibels.toAmplitude(MixerScreen.marks.last!) : 0
    }
    if let current, current + db < MixerScreen.marks.last! { target = 0 }
    setVolume(strip, min(2, target))
  }

  /// Sets a fader: a stem's, the master's, or the level an offline stem keeps in the session.
  /// `drag`: a move of that drag, one undo step with its moves before.
  package func setVolume(_ strip: MixerViewModel.Strip, _ volume: Double, drag: Int? = nil) {
    guard strip.hasFader else { say(refusal("fader", strip) ?? "", error: true); return }
    let target: FaderTarget = strip.isMaster ? .master : (strip.offline != nil ? .offline : .stem)
    let done = act(drag: drag) { () throws(MixerError) in
      switch target {
      case .master: try console.mixer.setMasterVolume(volume)
      case .stem: try console.mixer.setVolume(strip.name, volume)
      case .offline: try console.mixer.setOfflineVolume(strip.name, volume)
      }
    }
    if done && target == .offline {
      say("\(strip.name) is offline: \(MixerText.db(Decibels.fromAmplitude(volume))) dB kept in the session for when its file is back")
    }
  }

  /// A key while the ':' prompt is open: edit the line, Enter runs it, Esc cancels.
  package func promptKey(_ key: Key) {
    switch key {
    case .escape: state.prompt = nil
    case .backspace:
      if state.prompt!.isEmpty { state.prompt = nil } else { state.prompt!.removeLast() }
    case .enter:
      let line = state.prompt!
      state.prompt = nil
      runCommand(line)
    case .character(let c): state.prompt!.append(c)
    default: break
    }
  }

  /// Runs a REPL line; its last line of output (or its first error) goes to the status line.
  /// A command that waits (`wait 10`, `wait end`, `sfx wait`) calls the console's `idle` while
  /// it does: the view hooks in there (`whileBusy`) and goes on drawing and taking keys, so the
  /// meters move and Esc stops the wait.
  package func runCommand(_ line: String) {
    guard !line.trimmingSpaces().isEmpty else { return }
    var output: [String] = []
    let savedIdle = console.idle
    busy = line
    let interruptsBefore = interruptRequests.load(ordering: .relaxed)
    say("running: \(line)  (Esc stops it)")
    console.idle = { [unowned self] in
      savedIdle()
      self.whileBusy()
    }
    let ok = console.capturingOutput({ output.append(lineSafe($0)) }) {
      console.from(.view) { console.execute(line: line, stopOnError: true, sayingSkipped: true) }
    }
    console.idle = savedIdle
    busy = nil
    // Esc or Ctrl-C while it ran stopped the command, not the view.
    let stopped = interruptRequests.load(ordering: .relaxed) != interruptsBefore
    if screenOpen { interruptBaseline = interruptRequests.load(ordering: .relaxed) }
    // A full-screen command run from here would draw over the view: `watch`/`mixer` are no-ops.
    console.watchRequested = false
    console.mixerRequested = false
    // More than one line: all of them in a box over the strips until a key is pressed.
    if output.count > 1 { state.output = (title: ":" + line, lines: output) }
    let error = output.first { $0.hasPrefix("error:") }
    if let error {
      say(error, error: true)
    } else if stopped {
      say("stopped: \(line)")
    } else if let last = output.last(where: { !$0.trimmingSpaces().isEmpty }) {
      say(last)
    } else {
      say(ok ? "ok: \(line)" : "failed: \(line)", error: !ok)
    }
  }

  /// Called from the console's `idle` while a ':' command waits: a frame when one is due, and
  /// the keys waiting.
  package func whileBusy() {
    busyTicks += 1
    guard screenOpen else { return }
    let now = Date.timeIntervalSinceReferenceDate
    guard now >= nextBusyFrame else { return }
    nextBusyFrame = now + 1 / Self.framesPerSecond
    drawFrame()
    var fds = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
    if poll(&fds, 1, 0) > 0 && fds.revents & Int16(POLLIN) != 0 { readKeys() }
  }
}
