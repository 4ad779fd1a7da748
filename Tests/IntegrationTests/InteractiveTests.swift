import Foundation
import StemdeckTestSupport
import Testing

/// The interactive REPL through a real pseudo-terminal (tmux): tab completion and history that
/// survives a restart.
@Suite("interactive REPL in a terminal", .serialized, .timeLimit(.minutes(2)))
struct InteractiveTests {
  /// Runs tmux with the given arguments.
  func tmux(_ args: [String]) async throws -> ToolResult {
    try await runTool("tmux", args, timeout: 10)
  }

  /// The visible screen of the tmux session.
  func screen(_ session: String) async throws -> String {
    try await tmux(["capture-pane", "-p", "-t", session]).stdout.joined(separator: "\n")
  }

  func waitFor(_ text: String, in session: String, timeout: Double = 10) async throws -> Bool {
    try await eventually(timeout: timeout, interval: 0.1) { try await screen(session).contains(text) }
  }

  /// The shell command that runs stemdeck at its prompt on `server`, its history in `state`.
  func promptCommand(_ binary: String, server: PrivateJackServer, state: IntegrationTempDir) -> String {
    "env XDG_STATE_HOME=\(state.path) JACK_DEFAULT_SERVER=\(server.name) NO_COLOR=1 "
      + "\(binary) --server \(server.name) --no-start-server --no-connect"
  }

  @Test("tab completes a command; history comes back after a restart")
  func completionAndHistory() async throws {
    let binary = try StemdeckBinary.require()
    try #require(findOnPath("tmux") != nil, "tmux is not installed (scripts/install-deps installs it)")
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let state = try IntegrationTempDir("stemdeck-tty")
    let session = "stemdeck-tty-\(getpid())"
    let command = promptCommand(binary, server: server, state: state)
    defer { _ = try? runToolSync("tmux", ["kill-session", "-t", session]) }

    _ = try await tmux(["new-session", "-d", "-s", session, "-x", "120", "-y", "40", command])
    let prompted = try await waitFor("stemdeck>", in: session)
    let first = try await screen(session)
    #expect(prompted, "no prompt: \(first)")
    // "sta" + Tab completes to the only command starting so: status.
    _ = try await tmux(["send-keys", "-t", session, "sta", "Tab"])
    let completed = try await waitFor("stemdeck> status", in: session)
    let afterTab = try await screen(session)
    #expect(completed, "no completion: \(afterTab)")
    _ = try await tmux(["send-keys", "-t", session, "Enter"])
    let ran = try await waitFor("state: stopped", in: session)
    let afterStatus = try await screen(session)
    #expect(ran, "status did not run: \(afterStatus)")
    _ = try await tmux(["send-keys", "-t", session, "echo remembered-line", "Enter"])
    let echoed = try await waitFor("remembered-line", in: session)
    #expect(echoed)
    _ = try await tmux(["send-keys", "-t", session, "quit", "Enter"])
    let ended = try await eventually(timeout: 5, interval: 0.1) {
      (try? await tmux(["has-session", "-t", session]))?.status != 0
    }
    #expect(ended, "stemdeck did not quit")
    let history = (try? String(contentsOfFile: state.file("stemdeck/history"), encoding: .utf8)) ?? ""
    #expect(history.contains("remembered-line"), "history file: \(history)")  // libedit escapes spaces as \\040

    // A new run: Up twice recalls the line typed in the previous run (the last one was 'quit').
    _ = try await tmux(["new-session", "-d", "-s", session, "-x", "120", "-y", "40", command])
    let prompted2 = try await waitFor("stemdeck>", in: session)
    #expect(prompted2)
    _ = try await tmux(["send-keys", "-t", session, "Up", "Up"])
    let recalled = try await waitFor("stemdeck> echo remembered-line", in: session)
    let afterUp = try await screen(session)
    #expect(recalled, "history not recalled: \(afterUp)")
    _ = try await tmux(["send-keys", "-t", session, "C-u", "quit", "Enter"])
    _ = await eventually(timeout: 5, interval: 0.1) { (try? await tmux(["has-session", "-t", session]))?.status != 0 }
  }
}

/// The REPL as a person uses it, in real terminals (tmux): every line edited by libedit, history,
/// Ctrl-R, completion with quoting, UTF-8, events above a half-typed line, the terminal's width,
/// and leaving: Ctrl-D, SIGTERM, SIGHUP, the terminal closed.
@Suite("the REPL in a real terminal", .serialized, .timeLimit(.minutes(3)))
struct TerminalSessionTests {
  /// A folder with a session `show.json` (stem `short`, 2 s) and the audio files the lines use.
  func material() throws -> IntegrationTempDir {
    let dir = try IntegrationTempDir("stemdeck-term")
    for name in ["short.wav", "my loop (take 2).wav", "café.wav"] {
      try writeSine(dir.file(name), sampleRate: 48000, seconds: 2, frequencies: [440, 660], amplitude: 0.2)
    }
    try writeSession(dir.file("show.json"), stems: [SessionStem(name: "short", file: "short.wav")])
    return dir
  }

  func command(_ binary: String, state: IntegrationTempDir, server: String, extra: String = "") -> String {
    "env XDG_STATE_HOME=\(state.path) JACK_DEFAULT_SERVER=\(server) NO_COLOR=1 JACK_NO_START_SERVER=1 "
      + "\(binary) show.json --server \(server) --no-connect \(extra)"
  }

  /// stemdeck on `show.json` of `material()` (its own server, `--no-start-server`) in a new
  /// terminal of `columns` × `rows`, at its prompt (an issue when the prompt does not come).
  func atPrompt(columns: Int, rows: Int, sourceLocation: SourceLocation = #_sourceLocation) async throws -> TerminalRun {
    let run = try await TerminalRun.start(material: material, state: "stemdeck-term-state", columns: columns, rows: rows) {
      command($0, state: $2, server: $1.name, extra: "--no-start-server")
    }
    try await run.term.check(run.term.waitForCursorRow("stemdeck>"), "no prompt: ", sourceLocation: sourceLocation)
    return run
  }

  @Test("ten lines at 80×24: history, Ctrl-R, completion with quoting, UTF-8, an event mid-line, Ctrl-D, width")
  func tenLines() async throws {
    let run = try await atPrompt(columns: 80, rows: 24)
    defer { run.close() }
    let term = run.term
    // Start-up names the control socket other programs reach (`stemdeck ctl`).
    #expect(try await term.screen().contains("listening: control socket for stemdeck ctl ('status' shows its path)"))

    // 1. A path with spaces, completed: inserted escaped, so the line parses.
    try await term.type("add my")
    try await term.send("Tab")
    let completedPath = try await term.waitForCursorRow("stemdeck> add my\\ loop\\ (take\\ 2).wav")
    try await term.check(completedPath, "path completion: ")
    try await term.type("as loop")
    try await term.send("Enter")
    try await term.check(try await term.waitFor("added loop"), "line 1: ")
    #expect(try await term.waitForCursorRow("stemdeck>"))

    // 2. A path with é, typed: libedit keeps it (the locale is set).
    try await term.type("add café.wav as cafe")
    try await term.check(try await term.waitForCursorRow("stemdeck> add café.wav as cafe"), "é typed: ")
    try await term.send("Enter")
    try await term.check(try await term.waitFor("added cafe"), "line 2: ")

    // 3, 4. Plain lines: one echo each.
    try await term.type("vol loop 0.5")
    try await term.send("Enter")
    #expect(try await term.waitForCursorRow("stemdeck>"))
    try await term.type("pan cafe 0.1")
    try await term.send("Enter")
    #expect(try await term.waitForCursorRow("stemdeck>"))

    // 5. A stem name completed on line 5.
    try await term.type("mute lo")
    try await term.send("Tab")
    try await term.check(try await term.waitForCursorRow("stemdeck> mute loop"), "stem completion on line 5: ")
    try await term.send("Enter")
    #expect(try await term.waitForCursorRow("stemdeck>"))

    // 6.
    try await term.type("unmute loop")
    try await term.send("Enter")
    #expect(try await term.waitForCursorRow("stemdeck>"))

    // 7. Up Up recalls line 5 (N−2), shown on the screen before Enter.
    try await term.send("Up", "Up")
    try await term.check(try await term.waitForCursorRow("stemdeck> mute loop"), "history: ")
    try await term.send("Enter")
    #expect(try await term.waitForCursorRow("stemdeck>"))

    // 8. Ctrl-R finds line 3 (by a part of it); Enter runs it, once.
    try await term.send("C-r")
    try await term.type("loop 0")
    try await term.check(try await term.waitFor("bck:loop 0"), "Ctrl-R: ")
    try await term.check(try await term.waitFor("stemdeck> vol loop 0.5"), "Ctrl-R found: ")
    let promptsBefore = try await term.joinedLines().filter { $0.hasPrefix("stemdeck>") }.count
    try await term.send("Enter")
    #expect(try await term.waitForCursorRow("stemdeck>"))
    let promptsAfter = try await term.joinedLines().filter { $0.hasPrefix("stemdeck>") }.count
    #expect(promptsAfter == promptsBefore + 1, "Enter after Ctrl-R: \(promptsBefore) → \(promptsAfter) prompts")

    // 9, 10. An event arrives while a line is half typed: it is printed above, and the line is
    // redrawn intact and runs as typed.
    try await term.type("play")
    try await term.send("Enter")
    #expect(try await term.waitForCursorRow("stemdeck>"))
    try await term.type("echo half-typed")
    #expect(try await term.waitForCursorRow("stemdeck> echo half-typed"))
    let typedFirst = try await term.screen()
    #expect(!typedFirst.contains { $0.contains("all stems finished") }, "the event came before the line was typed")
    let event = try await term.waitFor("* all stems finished", timeout: 15)
    try await term.check(event, "no event: ")
    try await term.check(try await term.waitForCursorRow("stemdeck> echo half-typed"), "line after the event: ")
    try await term.send("Enter")
    try await term.check(try await term.waitForScreen { $0.contains("half-typed") }, "line 10: ")
    #expect(try await term.waitForCursorRow("stemdeck>"))

    // 11. A table at 80 columns.
    try await term.type("stems")
    try await term.send("Enter")
    try await term.check(try await term.waitFor("flags:"), "stems: ")
    #expect(try await term.waitForCursorRow("stemdeck>"))

    // 12. Ctrl-D with unsaved changes: refused, still running.
    try await term.send("C-d")
    try await term.check(try await term.waitFor("there are unsaved changes"), "Ctrl-D: ")
    #expect(try await term.waitForCursorRow("stemdeck>"))

    // Ctrl-C forgets a half-typed line; during a wait it ends the wait and the rest of the line.
    try await term.type("echo never-run")
    try await term.send("C-c")
    #expect(try await term.waitForCursorRow("stemdeck>"), "Ctrl-C on a half line")
    // A paste right behind Ctrl-C (one tmux command: microseconds apart) arrives whole on the
    // fresh line: its first key is not read into the line Ctrl-C forgets.
    for n in 1...3 {
      try await term.type("echo half-\(n)")
      try await term.tmux(["send-keys", "-t", term.session, "C-c", ";", "send-keys", "-t", term.session, "-l", "echo pasted-\(n)"])
      try await term.send("Enter")
      try await term.check(term.waitForScreen { $0.contains("pasted-\(n)") }, "paste \(n) right after Ctrl-C: ")
      #expect(try await term.waitForCursorRow("stemdeck>"))
    }
    try await term.type("wait 30; echo after-the-wait")
    try await term.send("Enter")
    #expect(try await term.waitForCursorRow(""))
    try await term.send("C-c")
    try await term.check(term.waitForCursorRow("stemdeck>", timeout: 3), "Ctrl-C during wait")

    // Keys typed while a command runs wait for the next prompt, shown once.
    try await term.type("wait 1")
    try await term.send("Enter")
    #expect(try await term.waitForCursorRow(""))
    try await term.type("echo typed-ahead")
    try await term.send("Enter")
    try await term.check(term.waitForScreen { $0.contains("typed-ahead") }, "typeahead")
    #expect(try await term.waitForCursorRow("stemdeck>"))

    // 13. help fits too.
    try await term.type("help")
    try await term.send("Enter")
    try await term.check(try await term.waitFor("NAME may be 'all'"), "help: ")
    #expect(try await term.waitForCursorRow("stemdeck>"))

    let all = try await term.joinedLines()
    let transcript = all.joined(separator: "\n")
    // One echo per line: no typed line shows up again without its prompt, no raw escapes.
    for typed in ["vol loop 0.5", "pan cafe 0.1", "unmute loop", "echo typed-ahead"] {
      #expect(!all.contains { $0.trimmingTrailingBlanks() == typed }, "'\(typed)' echoed twice:\n\(transcript)")
    }
    #expect(!transcript.contains("^[["), "raw escape sequence on screen:\n\(transcript)")
    #expect(!all.contains("never-run") && !all.contains("after-the-wait"), "\(transcript)")
    #expect(!all.contains { ["half-1", "half-2", "half-3"].contains($0) }, "Ctrl-C then a paste:\n\(transcript)")
    let errors = all.filter { $0.hasPrefix("error:") && !$0.contains("there are unsaved changes") }
    #expect(errors.isEmpty, "a line failed:\n\(transcript)")
    let long = all.filter { TerminalWidth.columns($0) > 80 }
    #expect(long.isEmpty, "lines wider than 80 columns:\n\(long.joined(separator: "\n"))")

    // The lines ran: loop muted (line 7 muted it again), volume 0.5, cafe panned.
    try await term.type("stems")
    try await term.send("Enter")
    #expect(try await term.waitForCursorRow("stemdeck>"))
    let table = try await term.joinedLines()
    let loopRow = table.last { $0.hasPrefix("loop ") } ?? ""
    #expect(loopRow.contains("0.50") && loopRow.contains("M"), "loop row: \(loopRow)")
    #expect(table.last { $0.hasPrefix("cafe ") }?.contains("0.10") == true, "\(table.joined(separator: "\n"))")
    try await term.type("quit!")
    try await term.send("Enter")
  }

  @Test("events -xrun at the prompt is kept: the next run starts with xrun hidden and says so")
  func eventsChoiceKept() async throws {
    let run = try await atPrompt(columns: 100, rows: 30)
    defer { run.close() }
    try await run.term.type("events -xrun")
    try await run.term.send("Enter")
    try await run.term.check(run.term.waitFor("xrun      hidden  JACK xruns"), "events -xrun: ")
    try await run.term.type("quit")
    try await run.term.send("Enter")
    let quit = await eventually(timeout: 10, interval: 0.05) {
      (try? await run.term.tmux(["has-session", "-t", run.term.session]))?.status != 0
    }
    #expect(quit, "stemdeck did not quit")
    // The next run, with the same state folder.
    let binary = try StemdeckBinary.require()
    let again = try await TmuxTerminal(
      command(binary, state: run.state, server: run.server.name, extra: "--no-start-server"), columns: 100, rows: 30,
      directory: run.dir.path)
    defer { again.close() }
    try await again.check(again.waitFor("events hidden since the last run: xrun ('events on' shows them all)"), "the next run: ")
    try await again.check(again.waitForCursorRow("stemdeck>"), "prompt: ")
    try await again.type("events on")
    try await again.send("Enter")
    try await again.check(again.waitFor("xrun      shown   JACK xruns"), "events on: ")
    try await again.type("quit")
    try await again.send("Enter")
  }

  @Test("at 200×50 nothing is wider than the terminal, and watch takes the whole screen and leaves on any key")
  func wideTerminalAndWatch() async throws {
    let run = try await atPrompt(columns: 200, rows: 50)
    defer { run.close() }
    let term = run.term
    // A connection is an unsaved change: quit asks.
    try await term.type("connect master_L system:playback_1")
    try await term.send("Enter")
    #expect(try await term.waitForCursorRow("stemdeck>"))
    try await term.type("quit")
    try await term.send("Enter")
    try await term.check(term.waitFor("there are unsaved changes"), "quit after connect")
    #expect(try await term.waitForCursorRow("stemdeck>"))
    for line in [
      "add my\\ loop\\ (take\\ 2).wav as a-rather-long-stem-name-one", "add café.wav as a-rather-long-stem-name-two", "stems", "meters",
      "help", "status"
    ] {
      try await term.type(line)
      try await term.send("Enter")
      try await term.check(try await term.waitForCursorRow("stemdeck>"), "\(line): ")
    }
    let all = try await term.joinedLines()
    let long = all.filter { TerminalWidth.columns($0) > 200 }
    #expect(long.isEmpty, "lines wider than 200 columns:\n\(long.joined(separator: "\n"))")
    #expect(!all.contains { $0.hasPrefix("error:") && !$0.contains("unsaved changes") }, "\(all.joined(separator: "\n"))")

    // watch: the alternate screen (the prompt's screen comes back after), both names in full.
    try await term.type("watch")
    try await term.send("Enter")
    try await term.check(try await term.waitFor("press any key"), "watch: ")
    let view = try await term.screen()
    #expect(
      view.contains { $0.contains("a-rather-long-stem-name-one") } && view.contains { $0.contains("a-rather-long-stem-name-two") },
      "names cut in watch:\n\(view.joined(separator: "\n"))")
    #expect(!view.contains { $0.contains("stemdeck>") }, "watch is not on its own screen:\n\(view.joined(separator: "\n"))")
    try await term.tmux(["resize-window", "-t", term.session, "-x", "90", "-y", "30"])
    try await term.check(
      term.waitForScreen { rows in rows.allSatisfy { TerminalWidth.columns($0) <= 90 } && rows.contains { $0.contains("press any key") } },
      "watch after a resize")
    try await term.send("Up")  // an arrow key (three bytes) leaves it and types nothing
    try await term.check(try await term.waitForCursorRow("stemdeck>"), "after watch: ")
    let after = try await term.text
    #expect(!after.contains("unknown command"), "\(after)")
    #expect(!after.contains("press any key"), "watch left wreckage:\n\(after)")
    try await term.type("quit!")
    try await term.send("Enter")
  }

  enum Ending: String, CaseIterable, CustomStringConvertible {
    case sigterm, sighup, terminalClosed, terminalClosedDuringWait
    var description: String { rawValue }
  }

  @Test(
    "SIGTERM, SIGHUP and a closed terminal end stemdeck (waited for, up to 5 s): take finished, autosave written, its jackd stopped",
    arguments: Ending.allCases)
  func ending(_ how: Ending) async throws {
    let binary = try StemdeckBinary.require()
    let dir = try material()
    let state = try IntegrationTempDir("stemdeck-term-state")
    // A server name nobody runs: stemdeck starts (and must stop) its own jackd.
    let serverName = "stemdeck-test-\(getpid())-end-\(how)"
    defer { PrivateJackServer.removeStaleFiles(of: serverName) }
    let shell = "\(command(binary, state: state, server: serverName)) 2>\(dir.file("stderr.txt")); echo $? > \(dir.file("status.txt"))"
    let term = try await TmuxTerminal(shell, columns: 100, rows: 30, directory: dir.path)
    defer { term.close() }
    try await term.check(try await term.waitForCursorRow("stemdeck>", timeout: 20), "no prompt: ")
    let shellPid =
      try await term.tmux(["display-message", "-p", "-t", term.session, "#{pane_pid}"]).stdout.first.flatMap { Int32($0) } ?? -1
    let stemdeck = ProcFS.children(of: shellPid, named: "stemdeck").first ?? -1
    try #require(stemdeck > 0, "stemdeck's process not found under the shell \(shellPid)")
    let jackd = ProcFS.children(of: stemdeck, named: "jackd").first ?? -1
    try #require(jackd > 0, "the jackd stemdeck started was not found")
    try await term.check(term.waitFor("started JACK server"), "no start-up line")

    // An unsaved change, and half a line typed.
    try await term.type("vol short 0.25")
    try await term.send("Enter")
    #expect(try await term.waitForCursorRow("stemdeck>"))
    if how == .sigterm {
      // A take in progress: finished, and in the autosave as a stem.
      try await term.type("record")
      try await term.send("Enter")
      try await term.check(term.waitFor("recording 'take-1'"), "record")
      try await term.type("play")
      try await term.send("Enter")
      #expect(try await term.waitForCursorRow("stemdeck>"))
    }
    if how == .terminalClosedDuringWait {
      try await term.type("wait 60")
      try await term.send("Enter")
      #expect(try await term.waitForCursorRow(""))
    } else {
      try await term.type("pan sho")
    }

    let start = monotonicSeconds()
    switch how {
    case .sigterm: kill(stemdeck, SIGTERM)
    case .sighup: kill(stemdeck, SIGHUP)
    case .terminalClosed, .terminalClosedDuringWait: await term.hangUp()
    }
    // Waited for as an event (a bound of 30 s against a stuck process, not a timing).
    let ended = await eventually(timeout: 30, interval: 0.01) { ProcFS.ended(stemdeck) }
    let seconds = monotonicSeconds() - start
    #expect(ended, "stemdeck did not end within \(seconds) s (\(how))")
    let jackdGone = await eventually(timeout: 30, interval: 0.01) { ProcFS.ended(jackd) }
    #expect(jackdGone, "the jackd stemdeck started is still running after \(how)")
    if !jackdGone { kill(jackd, SIGKILL) }

    let autosave = dir.file(".show.json.autosave.json")
    let saved = (try? String(contentsOfFile: autosave, encoding: .utf8)) ?? ""
    #expect(saved.contains("0.25"), "autosave after \(how): '\(saved)'")
    if how == .sigterm {
      #expect(saved.contains("take-1"), "the take is not in the autosave: \(saved)")
      let take = try? readAudio(dir.file("take-1.wav"))
      #expect((take?.frames ?? 0) > 0, "the take was not finished")
    }
    let stderr = (try? String(contentsOfFile: dir.file("stderr.txt"), encoding: .utf8)) ?? ""
    #expect(!stderr.contains("Fatal error") && !stderr.contains("Illegal instruction"), "crash report: \(stderr)")
    #expect(stderr.contains("unsaved changes written to"), "stderr: \(stderr)")
    if how == .sigterm || how == .sighup {
      // The shell survives a signal sent to stemdeck alone, and reports its status.
      var code = ""
      _ = await eventually(timeout: 2) {
        code = ((try? String(contentsOfFile: dir.file("status.txt"), encoding: .utf8)) ?? "").trimmingCharacters(
          in: .whitespacesAndNewlines)
        return !code.isEmpty
      }
      #expect(code == "\(128 + (how == .sigterm ? SIGTERM : SIGHUP))", "exit status '\(code)'")
    }
  }
}

/// Terminal columns of a line (wide characters count two).
enum TerminalWidth {
  static func columns(_ line: String) -> Int {
    line.unicodeScalars.reduce(0) { w, s in
      let v = s.value
      let wide =
        (0x1100...0x115F).contains(v) || (0x2E80...0xA4CF).contains(v) || (0xAC00...0xD7A3).contains(v)
        || (0xF900...0xFAFF).contains(v) || (0xFF00...0xFF60).contains(v) || (0x1F300...0x1FAFF).contains(v)
      let zero = (0x0300...0x036F).contains(v) || v == 0x200B
      return w + (zero ? 0 : wide ? 2 : 1)
    }
  }
}
