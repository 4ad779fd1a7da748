import Testing
@testable import StemdeckConsole
import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

/// The full-screen mixer's model, drawing and keys, without a terminal: the model is built from a
/// real mixer (`ConsoleHarness`), drawn into a `Canvas`, and keys are handed to `MixerView.handle`
/// (which makes the same `Mixer` calls the commands make). The terminal side is
/// `IntegrationTests/MixerViewTerminalTests` (tmux, jackd).
@Suite("mixer view: model, layout and keys")
struct MixerViewTests {
  static func strip(_ name: String, volume: Double = 1) -> MixerViewModel.Strip {
    MixerViewModel.Strip(
      name: name, volume: volume, pan: 0, rate: 1, loop: 1, loops: 1,
      meters: [.init(peak: -6, rms: -9, hold: -3, clipped: false), .init(peak: -6, rms: -9, hold: -3, clipped: true)])
  }

  static func model(_ names: [String]) -> MixerViewModel {
    MixerViewModel(
      strips: names.map { strip($0) }, master: MixerViewModel.Strip(name: "master", kind: .master, volume: 1, meters: []),
      transport: .init(state: .playing, position: 1, length: 10, endless: false, session: "show.json", unsaved: true))
  }

  @Test("at 80×24 at least 8 strips and the master fit; every line fits the width", arguments: [(80, 24), (120, 40), (200, 60)])
  func stripsFit(_ size: (Int, Int)) {
    let names = (1...40).map { "stem\($0)" }
    var state = MixerViewState()
    let canvas = MixerScreen.draw(Self.model(names), &state, columns: size.0, rows: size.1, unicode: true)
    let layout = MixerScreen.layout(count: names.count, columns: size.0, rows: size.1)
    #expect(layout.shown >= 8)
    let text = canvas.lines
    #expect(text.count == size.1)
    #expect(text.allSatisfy { TerminalInfo.displayWidth($0) == size.0 })
    for name in names.prefix(layout.shown) { #expect(text[1].contains(name), "\(name) not on \(text[1])") }
    #expect(text[1].contains("master"))
    // The ticks of the scale.
    for mark in ["+6", "0", "-6", "-12", "-24", "-48"] {
      #expect(text.contains { $0.hasPrefix(mark.padLeft(4)) }, "tick \(mark)")
    }
  }

  @Test("the loop shown is the pass of how many: loops 3 plays 4 times, the last is 4/4")
  func loopPasses() {
    #expect(MixerText.loop(1, of: 0, unicode: true) == "1/1")
    #expect(MixerText.loop(4, of: 3, unicode: true) == "4/4")
    #expect(MixerText.loop(7, of: -1, unicode: true) == "7/∞" && MixerText.loop(7, of: -1, unicode: false) == "7/inf")
  }

  @Test("the strips scroll with the selection; the master stays")
  func scrolls() {
    let names = (1...20).map { "s\($0)" }
    var state = MixerViewState()
    state.selected = 15
    let canvas = MixerScreen.draw(Self.model(names), &state, columns: 80, rows: 24, unicode: false)
    #expect(state.firstShown <= 15 && 15 < state.firstShown + 8)
    #expect(canvas.lines[1].contains("s16") && canvas.lines[1].contains("master"))
    #expect(!canvas.lines[1].contains("s1 "))
    // ASCII glyphs only without UTF-8.
    #expect(canvas.lines.joined().unicodeScalars.allSatisfy { $0.isASCII })
  }

  @Test("a column maps to the strip drawn there (mouse clicks and wheel)")
  func hitColumns() {
    // 80 columns, 20 stems: strips of 7 columns from column 5, 8 of them, the master at 72.
    #expect(MixerScreen.strip(atColumn: 5, count: 20, firstShown: 0, columns: 80, rows: 24) == 0)
    #expect(MixerScreen.strip(atColumn: 11, count: 20, firstShown: 0, columns: 80, rows: 24) == 0)
    #expect(MixerScreen.strip(atColumn: 12, count: 20, firstShown: 0, columns: 80, rows: 24) == nil)
    #expect(MixerScreen.strip(atColumn: 13, count: 20, firstShown: 3, columns: 80, rows: 24) == 4)
    #expect(MixerScreen.strip(atColumn: 75, count: 20, firstShown: 0, columns: 80, rows: 24) == 20)
    #expect(MixerScreen.strip(atColumn: 2, count: 20, firstShown: 0, columns: 80, rows: 24) == nil)
    // With the effects' strip the right edge holds two: effects at 64, the master at 72; 7 stems.
    #expect(MixerScreen.layout(count: 20, columns: 80, rows: 24, fixed: 2).shown == 7)
    #expect(MixerScreen.strip(atColumn: 65, count: 20, firstShown: 0, columns: 80, rows: 24, fixed: 2) == 20)
    #expect(MixerScreen.strip(atColumn: 75, count: 20, firstShown: 0, columns: 80, rows: 24, fixed: 2) == 21)
    #expect(MixerScreen.strip(atColumn: 71, count: 20, firstShown: 0, columns: 80, rows: 24, fixed: 2) == nil)
  }

  @Test(
    "a click on a fader's track: the level of that row, the handle drawn on it; the bottom row is silence",
    arguments: [6, 12, 28, 48])
  func clickLevels(_ h: Int) {
    for r in 0..<h {
      let v = MixerScreen.volume(atRow: r, rows: h)
      let handleRow = v <= 0 ? h - 1 : MixerScreen.rowFor(MixerScreen.fraction(Decibels.fromAmplitude(v)), rows: h)
      #expect(handleRow == r, "row \(r) of \(h): \(Decibels.fromAmplitude(v)) dB")
    }
    #expect(MixerScreen.volume(atRow: h - 1, rows: h) == 0)
    // A row with a mark of the scale is that mark exactly.
    #expect(MixerScreen.volume(atRow: MixerScreen.rowFor(MixerScreen.fraction(0), rows: h), rows: h) == 1)
    let minus6 = MixerScreen.volume(atRow: MixerScreen.rowFor(MixerScreen.fraction(-6), rows: h), rows: h)
    #expect(abs(Decibels.fromAmplitude(minus6) + 6) < 1e-9)
  }

  @Test("hits: the fader's three columns in the meter rows set a level; elsewhere a click only selects")
  func hits() {
    // 80×24, 20 stems: the first strip at column 5, 7 wide; its fader at 8…10; 12 meter rows from row 5.
    let top = MixerScreen.hit(column: 9, row: 5, count: 20, firstShown: 0, columns: 80, rows: 24)
    #expect(top?.strip == 0 && top?.volume.map { abs(Decibels.fromAmplitude($0) - 6) < 1e-9 } == true)
    #expect(
      MixerScreen.hit(column: 8, row: 16, count: 20, firstShown: 0, columns: 80, rows: 24).map { $0.strip == 0 && $0.volume == 0 } == true)
    #expect(
      MixerScreen.hit(column: 6, row: 8, count: 20, firstShown: 0, columns: 80, rows: 24).map { $0.strip == 0 && $0.volume == nil } == true)
    #expect(
      MixerScreen.hit(column: 9, row: 1, count: 20, firstShown: 0, columns: 80, rows: 24).map { $0.strip == 0 && $0.volume == nil } == true)
    #expect(MixerScreen.hit(column: 9, row: 17, count: 20, firstShown: 0, columns: 80, rows: 24).map { $0.volume == nil } == true)
    // The master's fader (strip at 72: fader at 75…77), on the 0 dB mark's row.
    #expect(
      MixerScreen.hit(column: 76, row: 7, count: 20, firstShown: 0, columns: 80, rows: 24).map { $0.strip == 20 && $0.volume == 1 } == true)
  }

  @Test("the mouse: a click on a fader's track sets the level (undoable), the wheel moves the fader under it")
  func mouse() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let view = MixerView(console: h.console)
    // Two stems at 80×24: strips 12 wide from column 5 (bass at 18, its fader at 27…29); the
    // -12 dB mark on row 5 + rowFor(2/6 · …).
    let layout = MixerScreen.layout(count: 2, columns: 80, rows: 24)
    #expect(layout.stripWidth == 12)
    let bassFader = MixerScreen.faderColumn(stripX: MixerScreen.scaleWidth + layout.stripWidth + 1, width: layout.stripWidth)
    let row = MixerScreen.meterTop + MixerScreen.rowFor(MixerScreen.fraction(-12), rows: layout.meterRows)
    view.mouse(column: bassFader + 1, row: row, kind: 1, columns: 80, rows: 24)
    #expect(view.state.selected == 1)
    #expect(abs(Decibels.fromAmplitude(try h.mixer.stems.status("bass").settings.volume) + 12) < 1e-9)
    view.handle(.character("u"))
    #expect(try h.mixer.stems.status("bass").settings.volume == 1)
    // The wheel over drums (anywhere in its strip): up 1 dB.
    view.mouse(column: MixerScreen.scaleWidth + 1, row: 2, kind: 4, columns: 80, rows: 24)
    #expect(view.state.selected == 0)
    #expect(abs(Decibels.fromAmplitude(try h.mixer.stems.status("drums").settings.volume) - 1) < 1e-9)
    // A click on the name selects only.
    view.mouse(column: bassFader, row: 1, kind: 1, columns: 80, rows: 24)
    #expect(view.state.selected == 1)
    #expect(try h.mixer.stems.status("bass").settings.volume == 1)
  }

  @Test("a drag: the press holds the fader, motion moves it to the pointer's row anywhere, the release lets go; one u undoes it")
  func drag() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let view = MixerView(console: h.console)
    let faders = TwoStripFaders(), bassFader = faders.bass
    func row(_ db: Double) -> Int { faders.row(db) }
    func bassDB() throws -> Double { Decibels.fromAmplitude(try h.mixer.stems.status("bass").settings.volume) }
    // Pressed at 0 dB, where it is: held, nothing to undo yet.
    view.mouse(column: bassFader + 1, row: row(0), kind: 1, columns: 80, rows: 24)
    let steps = h.console.history.steps.count
    #expect(view.drag?.strip == 1 && view.drag?.name == "bass")
    #expect(h.console.history.steps.count == steps)
    view.mouse(column: bassFader + 1, row: row(-6), kind: 3, columns: 80, rows: 24)
    #expect(abs(try bassDB() + 6) < 1e-9)
    // Over drums's strip and below the track: the held fader (bass) goes to silence.
    view.mouse(column: MixerScreen.scaleWidth + 1, row: 23, kind: 3, columns: 80, rows: 24)
    #expect(try h.mixer.stems.status("bass").settings.volume == 0)
    #expect(try h.mixer.stems.status("drums").settings.volume == 1)
    view.mouse(column: bassFader, row: row(-12), kind: 3, columns: 80, rows: 24)
    #expect(abs(try bassDB() + 12) < 1e-9)
    view.mouse(column: bassFader, row: row(-12), kind: 2, columns: 80, rows: 24)
    #expect(view.drag == nil)
    // Motion after the release moves nothing.
    view.mouse(column: bassFader, row: row(0), kind: 3, columns: 80, rows: 24)
    #expect(abs(try bassDB() + 12) < 1e-9)
    #expect(h.console.history.steps.count == steps + 1)
    view.handle(.character("u"))
    #expect(try h.mixer.stems.status("bass").settings.volume == 1)
    #expect(h.console.history.done == steps)
    // A key lets go too.
    view.mouse(column: bassFader + 1, row: row(-6), kind: 1, columns: 80, rows: 24)
    view.handle(.left)
    view.mouse(column: bassFader + 1, row: row(-24), kind: 3, columns: 80, rows: 24)
    #expect(abs(try bassDB() + 6) < 1e-9)
  }

  @Test("stems and meters are drawn from the model's strips: glides, offline stems, clip counts")
  func textFromModel() {
    var gliding = Self.strip("pad", volume: 0.5)
    gliding.volumeTarget = 1
    gliding.flags = [.mute, .gliding, .ended]
    gliding.file = "pad.wav"
    gliding.length = 2
    gliding.position = 0.5
    gliding.loops = -1
    var offline = Self.strip("gone")
    offline.offline = "no such file"
    offline.path = "/x/gone.wav"
    offline.flags = [.unreadable]
    let table = Display.stemsTable([gliding, offline])
    #expect(table[1].hasPrefix("pad   pad.wav"), "\(table)")
    #expect(table[1].contains("0.50→1.00") && table[1].contains(" forever ") && table[1].contains(" MEG "), "\(table[1])")
    #expect(table[1].hasSuffix("0:00.500  -6.0/-6.0"), "\(table[1])")
    #expect(table[2] == "offline: gone (/x/gone.wav: no such file)")
    #expect(Display.stemsTable([offline]) == ["offline: gone (/x/gone.wav: no such file)"])
    var meters = Self.strip("pad").meters
    meters[1].clips = 3
    #expect(
      Display.meterLine("pad", meters)
        == "pad          L peak   -6.0 avg   -9.0 hold   -3.0 clips 0 | R peak   -6.0 avg   -9.0 hold   -3.0 clips 3")
  }

  /// A harness with `drums`, the offline `gone` (its file missing) and `bass`, opened from a session.
  static func withOffline() throws -> (ConsoleHarness, String) {
    let h = try ConsoleHarness.withStems()
    let session = """
      { "format" : "stemdeck-session", "version" : 1,
        "stems" : [
          { "name" : "drums", "file" : "drums.wav" },
          { "name" : "gone", "file" : "gone.wav", "volume" : 0.5, "mute" : true },
          { "name" : "bass", "file" : "bass.wav" }
        ] }
      """
    let path = try h.folder.write(session, to: "offline.json")
    let opened = h.run("open! \(path)")
    guard opened.ok else { throw CommandError("setup failed: \(opened.output)") }
    return (h, path)
  }

  @Test("an offline stem: its strip in its place with the ! flag; its fader sets the level kept in the session, the rest refuses")
  func offlineStrip() throws {
    let (h, path) = try Self.withOffline()
    defer { h.shutdown() }
    let model = MixerViewModel.make(h.console)
    #expect(model.strips.map(\.name) == ["drums", "gone", "bass"])
    let gone = model.strips[1]
    #expect(gone.offline == "no such file" && gone.flags.text == "M!" && gone.meters.isEmpty, "\(gone)")
    #expect(abs(gone.volume - 0.5) < 1e-12)
    var state = MixerViewState()
    state.selected = 1
    let canvas = MixerScreen.draw(model, &state, columns: 80, rows: 24, unicode: true)
    #expect(canvas.lines[1].contains("gone") && canvas.lines[3].contains("M!"), "\(canvas.lines[1...3])")
    #expect(canvas.lines[22].contains("offline") && canvas.lines[22].contains("gone.wav"), "\(canvas.lines[22])")
    // `stems` still lists it on its own line.
    #expect(h.run("stems").output.contains("offline: gone (\(h.folder.file("gone.wav")): no such file)"))

    let view = MixerView(console: h.console)
    view.handle(.right)
    view.handle(.up)
    #expect(abs(Decibels.fromAmplitude(h.mixer.offlineStems[0].settings.volume) - (Decibels.fromAmplitude(0.5) + 1)) < 0.06)
    #expect(view.state.status.contains("kept in the session") && !view.state.statusIsError, "\(view.state.status)")
    #expect(h.mixer.isDirty)
    view.handle(.end)
    #expect(h.mixer.offlineStems[0].settings.volume == 0)
    view.handle(.character("u"))
    #expect(h.mixer.offlineStems[0].settings.volume > 0.5)
    for key in [MixerView.Key.character("m"), .character("s"), .character("["), .character(">")] {
      view.state.status = ""
      view.handle(key)
      #expect(view.state.statusIsError && view.state.status.contains("offline"), "\(key): \(view.state.status)")
    }
    #expect(h.mixer.offlineStems[0].settings.mute)
    // Saved back with the new level.
    #expect(h.run("save").ok)
    let saved = try SessionFile.load(path: path)
    #expect(saved.stems.map(\.name) == ["drums", "gone", "bass"])
    #expect(abs(saved.stems[1].volume - h.mixer.offlineStems[0].settings.volume) < 1e-9)
  }

  @Test("sfx out master: an effects strip with their meter and no fader; the keys it lacks refuse; sfx out ports: none")
  func effectsStrip() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(MixerViewModel.make(h.console).effects == nil)
    let hit = try h.folder.wav("hit.wav", channels: 1, sampleRate: 48000, seconds: 1)
    #expect(h.run("sfx load hit \(hit); sfx wait").ok)
    let silent = try #require(MixerViewModel.make(h.console).effects)
    #expect(silent.isEffects && silent.meters.count == 2 && silent.meters.allSatisfy { $0.peak <= -160 })
    #expect(h.run("sfx fire hit").ok)
    h.render(blocks: 10)
    let model = MixerViewModel.make(h.console)
    let effects = try #require(model.effects)
    #expect(effects.meters.allSatisfy { $0.peak > -12 && $0.peak < 0.1 }, "\(effects.meters)")
    // The stems are paused: what the master meters is the effects.
    #expect(model.strips.allSatisfy { $0.meters.allSatisfy { $0.peak <= -160 } })

    var state = MixerViewState()
    let canvas = MixerScreen.draw(model, &state, columns: 80, rows: 24, unicode: true)
    // Drawn before the master at the right edge, with meters and no fader handle.
    #expect(canvas.lines[1].contains("effects") && canvas.lines[1].contains("master"))
    let layout = MixerScreen.layout(count: 2, columns: 80, rows: 24, fixed: 2)
    let x = MixerScreen.fixedStart(columns: 80, width: layout.stripWidth, fixed: 2)
    #expect(MixerScreen.strip(atColumn: x, count: 2, firstShown: 0, columns: 80, rows: 24, fixed: 2) == 2)
    let effectsRows = canvas.lines[5..<(5 + layout.meterRows)].map { String(Array($0)[x..<(x + layout.stripWidth)]) }
    #expect(effectsRows.contains { $0.contains("█") } && !effectsRows.contains { $0.contains("◆") }, "\(effectsRows)")

    let view = MixerView(console: h.console)
    for _ in 0..<2 { view.handle(.right) }
    #expect(view.state.selected == 2)
    let before = h.mixer.master.volume
    for key in [MixerView.Key.up, .home, .end, .character("m"), .character("s"), .character("]"), .character("<")] {
      view.state.status = ""
      view.handle(key)
      #expect(view.state.statusIsError && view.state.status.contains("effects strip has no"), "\(key): \(view.state.status)")
    }
    #expect(h.mixer.master.volume == before)
    view.handle(.right)
    view.handle(.up)
    #expect(abs(Decibels.fromAmplitude(h.mixer.master.volume) - 1) < 1e-9)

    #expect(h.run("sfx out ports").ok)
    #expect(MixerViewModel.make(h.console).effects == nil)
    var after = MixerViewState()
    after.selected = 3
    let drawn = MixerScreen.draw(MixerViewModel.make(h.console), &after, columns: 80, rows: 24, unicode: true)
    #expect(!drawn.lines[1].contains("effects") && after.selected == 2)
  }

  @Test("':wait' in the view: the command keeps the view served while it waits, then reports")
  func waitInPrompt() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let view = MixerView(console: h.console)
    view.runCommand("wait 0.3")
    #expect(view.busyTicks >= 10, "\(view.busyTicks)")
    #expect(view.busy == nil && view.state.status == "ok: wait 0.3" && !view.state.statusIsError, "\(view.state.status)")
    // The hook is gone once it has returned.
    let ticks = view.busyTicks
    h.console.idle()
    #expect(view.busyTicks == ticks)
  }

  @Test("long names that share their beginning and end never look alike")
  func namesStayApart() {
    let names = ["vocals-harmony-left-close", "vocals-harmony-right-close", "vocals-harmony-left-far-close", "drums"]
    let shown = MixerScreen.shownNames(names, width: 7, unicode: true)
    #expect(Set(shown).count == names.count, "\(shown)")
    #expect(shown.allSatisfy { $0.count <= 14 })
    #expect(shown[3] == "drums")
  }

  @Test("a terminal too small says so instead of drawing wreckage")
  func tooSmall() {
    var state = MixerViewState()
    let canvas = MixerScreen.draw(Self.model(["a"]), &state, columns: 30, rows: 10, unicode: true)
    #expect(canvas.lines[1].contains("40×18"))
    #expect(canvas.lines.allSatisfy { TerminalInfo.displayWidth($0) == 30 })
  }

  @Test("the scale: +6 dB at the top, -72 dB and silence at the bottom, the marks evenly spaced")
  func scale() {
    #expect(MixerScreen.fraction(6) == 1)
    #expect(MixerScreen.fraction(-160) == 0)
    #expect(abs(MixerScreen.fraction(0) - 5.0 / 6) < 1e-9)
    #expect(abs(MixerScreen.fraction(-18) - 2.5 / 6) < 1e-9)
  }

  @Test("the model reads the mixer: names, volume, flags, loops")
  func model() throws {
    let h = try ConsoleHarness.withStems()
    #expect(h.run("vol drums -6dB; mute bass; loops bass 3").ok)
    let m = MixerViewModel.make(h.console)
    #expect(m.strips.map(\.name) == ["drums", "bass"])
    #expect(abs(m.strips[0].volumeDB + 6) < 0.01)
    #expect(m.strips[1].flags.contains(.mute) && m.strips[1].flags.text == "M")
    #expect(m.strips[1].loops == 3 && m.strips[1].loop == 1)
    #expect(m.strips[0].meters.count == 2 && !m.strips[1].meters.isEmpty)
    #expect(m.master.isMaster && m.transport.unsaved)
  }

  @Test("keys: Right Up Up is 2 dB on the second stem, u undoes, m mutes, End silences, Home unity, [ ] pan, < > rate")
  func keys() throws {
    let h = try ConsoleHarness.withStems()
    let view = MixerView(console: h.console)
    for key in [MixerView.Key.right, .up, .up] { view.handle(key) }
    #expect(abs(Decibels.fromAmplitude(try h.mixer.stems.status("bass").settings.volume) - 2) < 1e-9)
    view.handle(.character("u"))
    #expect(abs(Decibels.fromAmplitude(try h.mixer.stems.status("bass").settings.volume) - 1) < 1e-9)
    view.handle(.character("m"))
    #expect(try h.mixer.stems.status("bass").settings.mute)
    view.handle(.character("m"))
    #expect(try !h.mixer.stems.status("bass").settings.mute)
    view.handle(.character("L"))
    #expect(try h.mixer.stems.status("bass").settings.soloSafe)
    #expect(view.state.status == "bass is solo-safe: heard whatever is soloed")
    view.handle(.character("L"))
    #expect(try !h.mixer.stems.status("bass").settings.soloSafe)
    view.handle(.pageDown)
    #expect(abs(Decibels.fromAmplitude(try h.mixer.stems.status("bass").settings.volume) + 5) < 1e-9)
    view.handle(.end)
    #expect(try h.mixer.stems.status("bass").settings.volume == 0)
    view.handle(.up)  // from -inf, to the bottom mark
    #expect(abs(Decibels.fromAmplitude(try h.mixer.stems.status("bass").settings.volume) + 72) < 1e-9)
    view.handle(.home)
    #expect(try h.mixer.stems.status("bass").settings.volume == 1)
    view.handle(.character("]"))
    view.handle(.character(">"))
    #expect(try h.mixer.stems.status("bass").settings.pan == 0.1)
    #expect(try h.mixer.stems.status("bass").settings.rate == 1.05)
    view.handle(.character("0"))
    #expect(try h.mixer.stems.status("bass").settings.pan == 0 && h.mixer.stems.status("bass").settings.rate == 1)
    // The fader stops at +6 dB (volume 2).
    for _ in 0..<10 { view.handle(.pageUp) }
    #expect(try h.mixer.stems.status("bass").settings.volume == 2)
    // The master: its own fader; no mute.
    view.handle(.right)
    view.handle(.down)
    #expect(abs(Decibels.fromAmplitude(h.mixer.master.volume) + 1) < 1e-9)
    view.handle(.character("m"))
    #expect(view.state.statusIsError)
    view.handle(.character("q"))
    #expect(view.leaving)
  }

  @Test("':' runs any command; its result or error shows in the status line")
  func commandPrompt() throws {
    let h = try ConsoleHarness.withStems()
    let view = MixerView(console: h.console)
    view.handle(.character(":"))
    #expect(view.state.prompt == "")
    for c in "vol drums -6dB" { view.handle(.character(c)) }
    view.handle(.enter)
    #expect(view.state.prompt == nil)
    #expect(abs(Decibels.fromAmplitude(try h.mixer.stems.status("drums").settings.volume) + 6) < 1e-9)
    view.handle(.character(":"))
    for c in "vol drms 1" { view.handle(.character(c)) }
    view.handle(.enter)
    #expect(view.state.statusIsError && view.state.status.contains("did you mean 'drums'"), "\(view.state.status)")
    // Esc closes the prompt without running it.
    view.handle(.character(":"))
    for c in "mute drums" { view.handle(.character(c)) }
    view.handle(.escape)
    #expect(view.state.prompt == nil && !view.leaving)
    #expect(try !h.mixer.stems.status("drums").settings.mute)
  }

  @Test("'mixer' refuses outside a terminal, with what to use instead")
  func scriptMode() throws {
    let h = try ConsoleHarness.withStems()
    let r = h.run("mixer")
    #expect(!r.ok && r.output.joined().contains("needs a terminal"))
  }
}

/// The two stems' view (`ConsoleHarness.withStems`) at 80×24: the second strip's (bass's) fader
/// column and the row of a level on the meters' scale, for the mouse tests.
struct TwoStripFaders {
  let layout = MixerScreen.layout(count: 2, columns: 80, rows: 24)
  var bass: Int { MixerScreen.faderColumn(stripX: MixerScreen.scaleWidth + layout.stripWidth + 1, width: layout.stripWidth) }
  func row(_ db: Double) -> Int { MixerScreen.meterTop + MixerScreen.rowFor(MixerScreen.fraction(db), rows: layout.meterRows) }
}
