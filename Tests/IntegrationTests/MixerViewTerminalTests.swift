import Foundation
import Testing

/// The full-screen mixer view (`stemdeck --mixer SESSION`, the `mixer` command) in real
/// terminals (tmux) on a private jackd: every name visible, keys that move a fader and mute, the
/// ':' prompt, a resize, and the way back to a prompt whose line editing still works.
@Suite("the mixer view in a real terminal", .serialized, .timeLimit(.minutes(3)))
struct MixerViewTerminalTests {
  static let names = ["drums", "bass", "guitar", "keys", "vocals", "pad", "strings", "brass"]

  /// A folder with `show.json`: eight stems of 2 s (names of at most 7 letters, so that each
  /// stands whole on one row even in the narrowest strips).
  func material() throws -> IntegrationTempDir {
    let dir = try IntegrationTempDir("stemdeck-mixerview")
    for name in Self.names {
      try writeSine(dir.file("\(name).wav"), sampleRate: 48000, seconds: 2, frequencies: [440], amplitude: 0.2)
    }
    try writeSession(dir.file("show.json"), stems: Self.names.map { SessionStem(name: $0, file: "\($0).wav") })
    return dir
  }

  struct Case: CustomStringConvertible, Sendable {
    var columns: Int, rows: Int, term: String, noColor: Bool
    /// The size it is resized to midway.
    var resized: (columns: Int, rows: Int)
    var description: String { "\(columns)×\(rows) TERM=\(term)\(noColor ? " NO_COLOR" : "")" }
  }

  static let cases = [
    Case(columns: 80, rows: 24, term: "vt100", noColor: true, resized: (120, 40)),
    Case(columns: 120, rows: 40, term: "xterm-256color", noColor: false, resized: (80, 24)),
    Case(columns: 200, rows: 60, term: "xterm-256color", noColor: true, resized: (100, 30))
  ]

  /// Waits until every stem name and the master stand on the screen, and no row is wider than
  /// `columns`.
  func allNamesShown(_ term: TmuxTerminal, columns: Int) async throws -> Bool {
    try await term.waitForScreen { rows in
      rows.allSatisfy { TerminalWidth.columns($0) <= columns }
        && (Self.names + ["master"]).allSatisfy { name in rows.contains { $0.contains(name) } }
    }
  }

  @Test("keys, the ':' prompt, a resize and q back to a working prompt", arguments: cases)
  func view(_ c: Case) async throws {
    let run = try await TerminalRun.start(material: material, state: "stemdeck-mixerview-state", columns: c.columns, rows: c.rows) {
      viewCommand(c, "show.json", binary: $0, server: $1, state: $2)
    }
    defer { run.close() }
    let term = run.term
    try await term.check(allNamesShown(term, columns: c.columns), "names at \(c): ")
    try await term.check(term.waitFor("show.json"), "transport line: ")
    // Wide enough, the transport line carries the master's live loudness (issue 23).
    if c.columns >= 120 { try await term.check(term.waitFor(" LUFS TP "), "loudness on the transport line: ") }

    // The third strip 2 dB up; `m` mutes it (the flags row shows M).
    try await term.send("Right", "Right", "Up", "Up")
    try await term.check(term.waitFor("+2.0"), "Right Right Up Up: ")
    try await term.type("m")
    try await term.check(
      term.waitForScreen { rows in rows.contains { $0.range(of: #"^\s+-\s+-\s+M\s+-"#, options: .regularExpression) != nil } }, "m: ")

    // ':' runs any command; the result shows in the status line.
    try await term.type(":vol drums -6dB")
    try await term.check(term.waitFor(":vol drums -6dB"), "the prompt: ")
    try await term.send("Enter")
    try await term.check(term.waitFor("ok: vol drums -6dB"), "':vol drums -6dB': ")
    try await term.check(term.waitFor("-6.0"), "drums at -6 dB: ")
    // A result of more than one line: whole, in a box over the strips, until a key is pressed.
    try await term.type(":stems")
    try await term.send("Enter")
    try await term.check(
      term.waitForScreen { rows in
        rows.contains { $0.contains(":stems") } && rows.contains { $0.contains("name") && $0.contains("vol") && $0.contains("pan") }
      },
      "':stems' in a box: ")
    try await term.send("Space")  // any key closes it (and does nothing else: play stays off)
    try await term.check(term.waitForScreen { rows in !rows.contains { $0.contains(":stems") } }, "the box closed: ")

    // A resize reflows: every name still there, nothing wider than the new width.
    try await term.tmux(["resize-window", "-t", term.session, "-x", "\(c.resized.columns)", "-y", "\(c.resized.rows)"])
    try await term.check(
      term.waitForScreen { $0.count <= c.resized.rows && $0.allSatisfy { TerminalWidth.columns($0) <= c.resized.columns } },
      "after the resize: ")
    try await term.check(allNamesShown(term, columns: c.resized.columns), "names after the resize: ")

    // q: back to the prompt, on the screen the view came over, with line editing intact.
    try await term.type("q")
    try await term.check(term.waitForCursorRow("stemdeck>"), "q: ")
    try await term.type("stems")
    try await term.send("Enter")
    try await term.check(term.waitFor("flags:"), "stems: ")
    #expect(try await term.waitForCursorRow("stemdeck>"))
    let table = try await term.joinedLines()
    let guitar = table.last { $0.hasPrefix("guitar ") } ?? ""
    let drums = table.last { $0.hasPrefix("drums ") } ?? ""
    #expect(guitar.contains(" 1.26 ") && guitar.contains(" M "), "guitar: \(guitar)")  // +2 dB = 1.2589
    #expect(drums.contains(" 0.50 "), "drums: \(drums)")
    #expect(!table.joined(separator: "\n").contains("^[["), "raw escape sequence on screen:\n\(table.joined(separator: "\n"))")
    // History (Up) and editing (Ctrl-A) work: libedit has the terminal back in its mode.
    try await term.send("Up")
    try await term.check(term.waitForCursorRow("stemdeck> stems"), "history after the view: ")
    try await term.send("C-a")
    try await term.type("echo ")
    try await term.check(term.waitForCursorRow("stemdeck> echo stems"), "editing after the view: ")
    try await term.send("Enter")
    #expect(try await term.waitForCursorRow("stemdeck>"))
    // The `mixer` command opens it again; Esc leaves it too.
    try await term.type("mixer")
    try await term.send("Enter")
    try await term.check(allNamesShown(term, columns: c.resized.columns), "mixer command: ")
    try await term.send("Escape")
    try await term.check(term.waitForCursorRow("stemdeck>"), "Esc: ")
    try await term.type("quit!")
    try await term.send("Enter")
  }

  // MARK: - Mouse, the effects strip, an offline stem, ':wait'

  /// A folder with `offline.json`: drums (looping forever), bass, gone (its file missing) and
  /// guitar, and the effect `hit.wav` (3 s) next to it.
  func offlineMaterial() throws -> IntegrationTempDir {
    let dir = try IntegrationTempDir("stemdeck-mixerview-more")
    for name in ["drums", "bass", "guitar"] {
      try writeSine(dir.file("\(name).wav"), sampleRate: 48000, seconds: 2, frequencies: [440], amplitude: 0.2)
    }
    try writeSine(dir.file("hit.wav"), sampleRate: 48000, seconds: 3, frequencies: [660], amplitude: 0.5)
    try writeSession(
      dir.file("offline.json"),
      stems: [
        SessionStem(name: "drums", file: "drums.wav", loops: -1),
        SessionStem(name: "bass", file: "bass.wav"),
        SessionStem(name: "gone", file: "gone.wav"),
        SessionStem(name: "guitar", file: "guitar.wav")
      ])
    return dir
  }

  /// The values of a row of the strips ("dB", "peak"): one per strip shown, left to right (the
  /// separator before the right edge's strips left out).
  static func values(_ rows: [String], _ label: String) -> [String] {
    (rows.first { $0.hasPrefix(label + " ") } ?? "").split(separator: " ").dropFirst().map(String.init).filter { $0 != "│" && $0 != "|" }
  }

  /// An SGR mouse report (xterm 1006; ncurses asks for it where terminfo's XM says so, as for
  /// xterm-256color): `button` at 0-based (`column`, `row`), pressed or released.
  static func mouse(_ button: Int, column: Int, row: Int, release: Bool = false) -> String {
    "\u{1B}[<\(button);\(column + 1);\(row + 1)\(release ? "m" : "M")"
  }

  /// The command line that opens `session` in the view, in `c`'s terminal, on `server`, with its
  /// state (history) in `state`.
  func viewCommand(_ c: Case, _ session: String, binary: String, server: PrivateJackServer, state: IntegrationTempDir) -> String {
    "env TERM=\(c.term) \(c.noColor ? "NO_COLOR=1 " : "")XDG_STATE_HOME=\(state.path) JACK_DEFAULT_SERVER=\(server.name) "
      + "JACK_NO_START_SERVER=1 \(binary) \(session) --server \(server.name) --no-start-server --no-connect --mixer"
  }

  static let sizes = [(80, 24), (120, 40), (200, 60)].map {
    Case(columns: $0.0, rows: $0.1, term: "xterm-256color", noColor: false, resized: ($0.0, $0.1))
  }

  @Test("mouse on faders, the effects strip, an offline stem's strip and ':wait' that goes on drawing", arguments: sizes)
  func mouseEffectsOfflineWait(_ c: Case) async throws {
    let run = try await TerminalRun.start(material: offlineMaterial, state: "stemdeck-mixerview-state", columns: c.columns, rows: c.rows) {
      viewCommand(c, "offline.json", binary: $0, server: $1, state: $2)
    }
    defer { run.close() }
    let term = run.term
    // The first draw waits on the server and the client opening: a ceiling of 30 s (a CI run saw
    // a blank screen for the whole of 10 s once, 2026-12-02, with nothing else wrong).
    try await term.check(
      term.waitForScreen(timeout: 30) { rows in
        ["drums", "bass", "gone", "guitar", "master"].allSatisfy { n in rows.count > 1 && rows[1].contains(n) }
      },
      "names at \(c): ")
    // The offline stem: shown in its place with the ! flag.
    let first = try await term.screen()
    #expect(first.count > 3 && first[3].contains("!"), "flags row: \(first.count > 3 ? first[3] : "")")

    // A click on drums's fader track, on the row of the -6 tick: drums at -6 dB.
    let handleColumn = first.first { $0.hasPrefix("   0") }.flatMap { row in
      row.firstIndex { $0 == "◆" || $0 == "O" }.map { row.distance(from: row.startIndex, to: $0) }
    }
    let minus6 = first.firstIndex { $0.hasPrefix("  -6") }
    let (column, row) = (try #require(handleColumn, "no fader handle on the 0 dB row"), try #require(minus6, "no -6 tick"))
    try await term.type(Self.mouse(0, column: column, row: row) + Self.mouse(0, column: column, row: row, release: true))
    try await term.check(term.waitForScreen { Self.values($0, "dB").first == "-6.0" }, "click on drums's fader at -6: ")

    // The wheel over bass's name: bass 1 dB up.
    let bassColumn = try #require(first[1].range(of: "bass").map { first[1].distance(from: first[1].startIndex, to: $0.lowerBound) })
    try await term.type(Self.mouse(64, column: bassColumn + 1, row: 1))
    try await term.check(term.waitForScreen { Self.values($0, "dB").prefix(2) == ["-6.0", "+1.0"] }, "wheel over bass: ")

    // The offline strip: a click on its name selects it (the status line says why it is
    // offline); Up moves its fader, for the level kept in the session.
    let goneColumn = try #require(first[1].range(of: "gone").map { first[1].distance(from: first[1].startIndex, to: $0.lowerBound) })
    try await term.type(Self.mouse(0, column: goneColumn, row: 1) + Self.mouse(0, column: goneColumn, row: 1, release: true))
    try await term.check(term.waitFor("offline: gone.wav"), "the offline strip selected: ")
    try await term.send("Up")
    try await term.check(term.waitFor("kept in the session"), "Up on the offline strip: ")
    try await term.check(term.waitForScreen { Self.values($0, "dB").prefix(3) == ["-6.0", "+1.0", "+1.0"] }, "the offline fader: ")
    try await term.type("m")
    try await term.check(term.waitFor("only its fader works"), "m on the offline strip: ")

    // Effects into the master: a strip with their meter, and no fader.
    try await term.type(":sfx load hit hit.wav")
    try await term.send("Enter")
    try await term.check(term.waitForScreen { $0.count > 1 && $0[1].contains("effects") }, "the effects strip: ")
    try await term.type(":sfx wait")
    try await term.send("Enter")
    try await term.type(":sfx fire hit")
    try await term.send("Enter")
    // peak: drums, bass, gone, guitar, effects, master.
    try await term.check(
      term.waitForScreen { rows in
        let peaks = Self.values(rows, "peak")
        return peaks.count == 6 && peaks[4] != "-inf" && peaks[2] == "-inf"
      }, "the effects' meter: ")
    let withEffects = try await term.screen()
    let effectsColumn = try #require(
      withEffects[1].range(of: "effects").map { withEffects[1].distance(from: withEffects[1].startIndex, to: $0.lowerBound) })
    try await term.type(Self.mouse(0, column: effectsColumn, row: 1) + Self.mouse(0, column: effectsColumn, row: 1, release: true))
    try await term.check(term.waitFor("effects: what the sound effects add"), "the effects strip selected: ")
    try await term.send("Up")
    try await term.check(term.waitFor("effects strip has no fader"), "Up on the effects strip: ")
    #expect(Self.values(try await term.screen(), "dB").count == 5, "no fader value under the effects")
    try await term.type(":sfx out ports")
    try await term.send("Enter")
    try await term.check(term.waitForScreen { $0.count > 1 && !$0[1].contains("effects") && $0[1].contains("master") }, "sfx out ports: ")

    // ':wait 30' keeps the view drawing (the position moves) and Esc stops it.
    try await term.send("Space")
    try await term.check(term.waitFor("playing"), "space: ")
    try await term.type(":wait 30")
    try await term.send("Enter")
    try await term.check(term.waitFor("running: wait 30"), "the wait running: ")
    let during = try await term.screen().first ?? ""
    try await term.check(
      term.waitForScreen { rows in
        (rows.first ?? "") != during && rows.contains { $0.contains("running: wait 30") }
      }, "the transport line moves during the wait: ")
    // Stopped by Esc (the line says so), not ended by its own 30 s: waitFor gives up after 10 s.
    try await term.send("Escape")
    try await term.check(term.waitFor("stopped: wait 30"), "Esc during the wait: ")
    // Still in the view; q back to the prompt.
    #expect(try await term.screen().contains { $0.contains("master") })
    try await term.type("q")
    try await term.check(term.waitForCursorRow("stemdeck>"), "q: ")
    try await term.type("quit!")
    try await term.send("Enter")
  }

  // MARK: - Dragging a fader

  @Test(
    "a fader dragged with the mouse follows the pointer, the release lets go, one u undoes the whole drag, U redoes it", arguments: sizes)
  func dragFader(_ c: Case) async throws {
    let run = try await TerminalRun.start(material: material, state: "stemdeck-mixerview-state", columns: c.columns, rows: c.rows) {
      viewCommand(c, "show.json", binary: $0, server: $1, state: $2)
    }
    defer { run.close() }
    let term = run.term
    try await term.check(allNamesShown(term, columns: c.columns), "names at \(c): ")
    // The view asked the terminal for motion while a button is held (xterm's mode 1002).
    let modes = try await term.tmux(["display-message", "-p", "-t", term.session, "#{mouse_button_flag}#{mouse_any_flag}"])
    #expect(modes.stdout.first?.contains("1") == true, "the pane's motion modes (1002, 1003): \(modes.stdout)")

    let first = try await term.screen()
    let handleColumn = first.first { $0.hasPrefix("   0") }.flatMap { row in
      row.firstIndex { $0 == "◆" || $0 == "O" }.map { row.distance(from: row.startIndex, to: $0) }
    }
    let column = try #require(handleColumn, "no fader handle on the 0 dB row")
    let zero = try #require(first.firstIndex { $0.hasPrefix("   0") }, "no 0 tick")
    let minus6 = try #require(first.firstIndex { $0.hasPrefix("  -6") }, "no -6 tick")
    let minus12 = try #require(first.firstIndex { $0.hasPrefix(" -12") }, "no -12 tick")

    // Press on drums's handle at 0 dB (no change yet), drag down to -6, then to -12 with the
    // pointer off the track (a held fader follows the row wherever the column), release.
    try await term.type(Self.mouse(0, column: column, row: zero))
    try await term.type(Self.mouse(32, column: column, row: minus6))
    try await term.check(term.waitForScreen { Self.values($0, "dB").first == "-6.0" }, "dragged to -6: ")
    try await term.type(Self.mouse(32, column: column + 2, row: minus12))
    try await term.check(term.waitForScreen { Self.values($0, "dB").first == "-12.0" }, "dragged to -12: ")
    try await term.type(Self.mouse(0, column: column + 2, row: minus12, release: true))
    // After the release, motion (no button: 32 + 3) moves nothing; the wheel over bass shows
    // the events after it were read.
    try await term.type(Self.mouse(35, column: column, row: minus6))
    let bassColumn = try #require(first[1].range(of: "bass").map { first[1].distance(from: first[1].startIndex, to: $0.lowerBound) })
    try await term.type(Self.mouse(64, column: bassColumn + 1, row: 1))
    try await term.check(
      term.waitForScreen { Self.values($0, "dB").prefix(2) == ["-12.0", "+1.0"] }, "released: drums stays at -12, the wheel moves bass: ")

    // u undoes the wheel, then the whole drag at once: drums back to 0 dB.
    try await term.type("u")
    try await term.check(term.waitForScreen { Self.values($0, "dB").prefix(2) == ["-12.0", "0.0"] }, "u undoes the wheel: ")
    try await term.type("u")
    try await term.check(term.waitFor("undone: mixer view (drums volume"), "u undoes the drag: ")
    #expect(Self.values(try await term.screen(), "dB").first == "0.0")
    try await term.type("u")
    try await term.check(term.waitFor("nothing to undo"), "one undo step for the drag: ")
    // U does the drag again (the console's redo), u takes it back once more.
    try await term.type("U")
    try await term.check(term.waitForScreen { Self.values($0, "dB").first == "-12.0" }, "U redoes the drag: ")
    try await term.type("u")
    try await term.check(term.waitForScreen { Self.values($0, "dB").first == "0.0" }, "u after U: ")

    // Drag again, from -6 up past the top of the track (the top of the scale: +6 dB) and back
    // down to -12; then q: `stems` has drums at -12 dB (0.25).
    try await term.type(Self.mouse(0, column: column, row: minus6))
    try await term.type(Self.mouse(32, column: column, row: 0))
    try await term.check(term.waitForScreen { Self.values($0, "dB").first == "+6.0" }, "dragged above the track: ")
    try await term.type(Self.mouse(32, column: column, row: minus12) + Self.mouse(0, column: column, row: minus12, release: true))
    try await term.check(term.waitForScreen { Self.values($0, "dB").first == "-12.0" }, "dragged back to -12: ")
    try await term.type("q")
    try await term.check(term.waitForCursorRow("stemdeck>"), "q: ")
    try await term.type("stems")
    try await term.send("Enter")
    try await term.check(term.waitFor("flags:"), "stems: ")
    let drums = try await term.joinedLines().last { $0.hasPrefix("drums ") } ?? ""
    #expect(drums.contains(" 0.25 "), "drums: \(drums)")  // -12 dB = 0.2512
    try await term.type("quit!")
    try await term.send("Enter")
  }

  // MARK: - Channel EQ

  @Test(
    "e switches the selected strip's EQ off and on; the strip shows Q and its high-pass while it is on",
    arguments: [cases[0], cases[1]])
  func eqKey(_ c: Case) async throws {
    let run = try await TerminalRun.start(material: material, state: "stemdeck-mixerview-state", columns: c.columns, rows: c.rows) {
      viewCommand(c, "show.json", binary: $0, server: $1, state: $2)
    }
    defer { run.close() }
    let term = run.term
    try await term.check(allNamesShown(term, columns: c.columns), "names at \(c): ")
    #expect(try await !term.joinedLines().contains { $0.contains("hp120") })

    // Set with ':eq': bass's flags row shows Q and "hp120" (the narrowest strip holds both).
    try await term.type(":eq bass hpf 120 24")
    try await term.send("Enter")
    try await term.check(term.waitFor("ok: eq bass hpf 120 24"), "':eq bass hpf 120 24': ")
    try await term.check(
      term.waitForScreen { rows in rows.contains { $0.range(of: #"^\s+-\s+Q\s+hp120\s+-"#, options: .regularExpression) != nil } },
      "Q hp120 on bass's strip: ")

    // bass selected, e: off (the flags row back to "-"), e: on again.
    try await term.send("Right")
    try await term.type("e")
    try await term.check(
      term.waitForScreen { rows in
        rows.contains { $0.contains("bass eq off") } && !rows.contains { $0.contains("hp120") || $0.contains(" Q ") }
      }, "e (off): ")
    try await term.type("e")
    try await term.check(
      term.waitForScreen { rows in rows.contains { $0.contains("bass eq on") } && rows.contains { $0.contains("hp120") } },
      "e (on): ")

    // The master (the last strip) has an EQ too: flat, so e says how to set it.
    for _ in 0..<Self.names.count { try await term.send("Right") }
    try await term.type("e")
    try await term.check(term.waitFor("master eq off (flat: set a band with ':eq master')"), "e on the master: ")

    // The REPL agrees.
    try await term.type("q")
    try await term.check(term.waitForCursorRow("stemdeck>"), "q: ")
    try await term.type("eq bass")
    try await term.send("Enter")
    try await term.check(term.waitFor("bass eq: hpf 120 Hz 24 dB/oct"), "eq bass: ")
    try await term.type("eq master")
    try await term.send("Enter")
    try await term.check(term.waitFor("master eq: off (flat)"), "eq master: ")
    try await term.type("quit!")
    try await term.send("Enter")
  }
}
