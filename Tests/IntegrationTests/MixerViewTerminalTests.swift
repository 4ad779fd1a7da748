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
    Case(columns: 200, rows: 60, term: "xterm-256color", noColor: true, resized: (100, 30)),
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
    let binary = try StemdeckBinary.require()
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try material()
    let state = try IntegrationTempDir("stemdeck-mixerview-state")
    let command = "env TERM=\(c.term) \(c.noColor ? "NO_COLOR=1 " : "")XDG_STATE_HOME=\(state.path) JACK_DEFAULT_SERVER=\(server.name) "
      + "JACK_NO_START_SERVER=1 \(binary) show.json --server \(server.name) --no-start-server --no-connect --mixer"
    let term = try await TmuxTerminal(command, columns: c.columns, rows: c.rows, directory: dir.path)
    defer { Task { await term.close() } }
    try await term.check(allNamesShown(term, columns: c.columns), "names at \(c): ")
    try await term.check(term.waitFor("show.json"), "transport line: ")
    // Wide enough, the transport line carries the master's live loudness (issue 23).
    if c.columns >= 120 { try await term.check(term.waitFor(" LUFS TP "), "loudness on the transport line: ") }

    // The third strip 2 dB up; `m` mutes it (the flags row shows M).
    try await term.send("Right", "Right", "Up", "Up")
    try await term.check(term.waitFor("+2.0"), "Right Right Up Up: ")
    try await term.type("m")
    try await term.check(term.waitForScreen { rows in rows.contains { $0.range(of: #"^\s+-\s+-\s+M\s+-"#, options: .regularExpression) != nil } }, "m: ")

    // ':' runs any command; the result shows in the status line.
    try await term.type(":vol drums -6dB")
    try await term.check(term.waitFor(":vol drums -6dB"), "the prompt: ")
    try await term.send("Enter")
    try await term.check(term.waitFor("ok: vol drums -6dB"), "':vol drums -6dB': ")
    try await term.check(term.waitFor("-6.0"), "drums at -6 dB: ")

    // A resize reflows: every name still there, nothing wider than the new width.
    try await term.tmux(["resize-window", "-t", term.session, "-x", "\(c.resized.columns)", "-y", "\(c.resized.rows)"])
    try await term.check(term.waitForScreen { $0.count <= c.resized.rows && $0.allSatisfy { TerminalWidth.columns($0) <= c.resized.columns } },
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
}
