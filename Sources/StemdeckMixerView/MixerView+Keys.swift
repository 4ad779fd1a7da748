import CNcurses
import Foundation
import StemdeckControl
import StemdeckLive
import StemdeckSession
import StemdeckText

// The mixer view's keys and mouse: each becomes the same `Mixer` call a command makes, its result
// or refusal in the status line (docs/mixer-view.md, *Keys*).

extension MixerView {

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
      let now = try console.mixer.strips.value(of: control, of: strip.name)
      let stepped = ((now + (up ? keys.step : -keys.step)) * scale).rounded() / scale
      let next = Swift.min(range.upperBound, Swift.max(range.lowerBound, stepped))
      try console.mixer.strips.set(control, of: strip.name, to: next)
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
      act { () throws(MixerError) in try console.mixer.strips.setPan(strip.name, max(-1, min(1, ((pan + step) * 10).rounded() / 10))) }
    case .character("<"), .character(">"):
      if let refused = refusal("rate", strip) { say(refused, error: true); return }
      guard let rate = strip.rate else { return }
      let step = key == .character("<") ? -0.05 : 0.05
      act { () throws(MixerError) in try console.mixer.stems.setRate(strip.name, max(0.5, min(2, ((rate + step) * 100).rounded() / 100))) }
    case .character(let c) where StripParameter.row(viewKey: c) != nil:
      if let (control, up) = StripParameter.row(viewKey: c) { step(control, of: strip, up: up) }
    case .character("m"):
      if let refused = refusal("mute", strip) { say(refused, error: true); return }
      act { () throws(MixerError) in try console.mixer.strips.setMute(strip.name, !strip.flags.contains(.mute)) }
    case .character("s"):
      if let refused = refusal("solo", strip) { say(refused, error: true); return }
      act { () throws(MixerError) in try console.mixer.strips.setSolo(strip.name, !strip.flags.contains(.solo)) }
    case .character("L"):
      if let refused = refusal("solo-safe", strip) { say(refused, error: true); return }
      let on = !strip.flags.contains(.soloSafe)
      if act({ () throws(MixerError) in try console.mixer.strips.set(.soloSafe, of: strip.name, to: on ? 1 : 0) }) {
        say("\(strip.name) \(on ? "is solo-safe: heard whatever is soloed" : "follows solo again")")
      }
    case .character("c"):
      if let refused = refusal("cue", strip) { say(refused, error: true); return }
      let on = !strip.flags.contains(.cue)
      if act({ () throws(MixerError) in try console.mixer.cues.set(strip.name, on ? .preFader : .off) }) {
        say(on ? "\(strip.name) on the cue (pfl: ':cue \(strip.name) afl' for after its fader)" : "\(strip.name) off the cue")
      }
    case .character("e"):
      if strip.isEffects || strip.offline != nil { say(refusal("EQ", strip) ?? "", error: true); return }
      act { () throws(MixerError) in
        var eq = strip.isMaster ? console.mixer.master.eq : try console.mixer.strips.eq(strip.name)
        eq.enabled.toggle()
        if strip.isMaster { try console.mixer.master.setEQ(eq) } else { try console.mixer.strips.setEQ(strip.name, eq) }
        say("\(strip.name) eq \(eq.enabled ? "on" : "off")" + (eq.isFlat ? " (flat: set a band with ':eq \(strip.name)')" : ""))
      }
    case .character("x"): toggleInserts(strip)
    case .character("0"):
      setVolume(strip, 1)
      if strip.isInput {
        act { () throws(MixerError) in try console.mixer.strips.setPan(strip.name, 0) }
      } else if strip.isStem && strip.offline == nil {
        act { () throws(MixerError) in
          try console.mixer.strips.setPan(strip.name, 0)
          try console.mixer.stems.setRate(strip.name, 1)
        }
      }
    case .character(" "):
      act { () throws(MixerError) in
        if console.mixer.transport.state == .paused { try console.mixer.transport.play() } else { try console.mixer.transport.pause() }
      }
    case .enter: act { () throws(MixerError) in try console.mixer.transport.stop() }
    case .character("u"), .character("U"):
      // The console's history: any front end's change, not only this view's (History.swift).
      do { say(try console.undo(1, redo: key == .character("U")).joined(separator: "; ")) } catch { say("error: \(error)", error: true) }
    case .character(":"): state.prompt = ""
    case .character("?"): state.showHelp = true
    case .character("q"), .escape: leaving = true
    default: break
    }
  }

  /// `x`: the strip's plugin inserts out (every one bypassed) while any is in, else all in again,
  /// as a desk's insert switch; each insert's own bypass stays `:insert bypass NAME N`.
  package func toggleInserts(_ strip: MixerViewModel.Strip) {
    guard !strip.inserts.isEmpty else {
      say("\(strip.name) has no inserts (':insert add \(strip.name) PLUGIN' adds one)", error: true)
      return
    }
    let out = strip.inserts.contains { !$0.bypassed }
    let name = strip.isMaster ? "master" : strip.name
    if act({ () throws(MixerError) in try console.mixer.inserts.setOut(name, out) }) {
      say("\(strip.name) inserts \(out ? "out (all \(strip.inserts.count) bypassed)" : "in")")
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
      case .master: try console.mixer.master.setVolume(volume)
      case .stem: try console.mixer.strips.setVolume(strip.name, volume)
      case .offline: try console.mixer.stems.setOfflineVolume(strip.name, volume)
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
