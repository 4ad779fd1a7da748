import Testing
@testable import StemdeckConsole
import StemdeckControl
import StemdeckSession

/// The full-screen mixer's model, drawing and keys, without a terminal: the model is built from a
/// real mixer (`ConsoleHarness`), drawn into a `Canvas`, and keys are handed to `MixerView.handle`
/// (which makes the same `Mixer` calls the commands make). The terminal side is
/// `IntegrationTests/MixerViewTerminalTests` (tmux, jackd).
@Suite("mixer view: model, layout and keys")
struct MixerViewTests {
  static func strip(_ name: String, volume: Double = 1) -> MixerViewModel.Strip {
    MixerViewModel.Strip(name: name, volume: volume, pan: 0, rate: 1, loop: 1, loops: 1,
                         meters: [.init(peak: -6, rms: -9, hold: -3, clipped: false), .init(peak: -6, rms: -9, hold: -3, clipped: true)])
  }

  static func model(_ names: [String]) -> MixerViewModel {
    MixerViewModel(strips: names.map { strip($0) }, master: MixerViewModel.Strip(name: "master", isMaster: true, volume: 1, meters: []),
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
    #expect(abs(Decibels.fromAmplitude(try h.mixer.stemStatus("bass").settings.volume) - 2) < 1e-9)
    view.handle(.character("u"))
    #expect(abs(Decibels.fromAmplitude(try h.mixer.stemStatus("bass").settings.volume) - 1) < 1e-9)
    view.handle(.character("m"))
    #expect(try h.mixer.stemStatus("bass").settings.mute)
    view.handle(.character("m"))
    #expect(try !h.mixer.stemStatus("bass").settings.mute)
    view.handle(.pageDown)
    #expect(abs(Decibels.fromAmplitude(try h.mixer.stemStatus("bass").settings.volume) + 5) < 1e-9)
    view.handle(.end)
    #expect(try h.mixer.stemStatus("bass").settings.volume == 0)
    view.handle(.up)  // from -inf, to the bottom mark
    #expect(abs(Decibels.fromAmplitude(try h.mixer.stemStatus("bass").settings.volume) + 72) < 1e-9)
    view.handle(.home)
    #expect(try h.mixer.stemStatus("bass").settings.volume == 1)
    view.handle(.character("]"))
    view.handle(.character(">"))
    #expect(try h.mixer.stemStatus("bass").settings.pan == 0.1)
    #expect(try h.mixer.stemStatus("bass").settings.rate == 1.05)
    view.handle(.character("0"))
    #expect(try h.mixer.stemStatus("bass").settings.pan == 0 && h.mixer.stemStatus("bass").settings.rate == 1)
    // The fader stops at +6 dB (volume 2).
    for _ in 0..<10 { view.handle(.pageUp) }
    #expect(try h.mixer.stemStatus("bass").settings.volume == 2)
    // The master: its own fader; no mute.
    view.handle(.right)
    view.handle(.down)
    #expect(abs(Decibels.fromAmplitude(h.mixer.masterVolumeSetting) + 1) < 1e-9)
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
    #expect(abs(Decibels.fromAmplitude(try h.mixer.stemStatus("drums").settings.volume) + 6) < 1e-9)
    view.handle(.character(":"))
    for c in "vol drms 1" { view.handle(.character(c)) }
    view.handle(.enter)
    #expect(view.state.statusIsError && view.state.status.contains("did you mean 'drums'"), "\(view.state.status)")
    // Esc closes the prompt without running it.
    view.handle(.character(":"))
    for c in "mute drums" { view.handle(.character(c)) }
    view.handle(.escape)
    #expect(view.state.prompt == nil && !view.leaving)
    #expect(try !h.mixer.stemStatus("drums").settings.mute)
  }

  @Test("'mixer' refuses outside a terminal, with what to use instead")
  func scriptMode() throws {
    let h = try ConsoleHarness.withStems()
    let r = h.run("mixer")
    #expect(!r.ok && r.output.joined().contains("needs a terminal"))
  }
}
