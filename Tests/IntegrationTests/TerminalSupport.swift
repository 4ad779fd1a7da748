import Foundation
import StemdeckTestSupport
import Testing

/// Runs a tool synchronously (for cleanup in `defer`), for at most 30 s.
func runToolSync(_ tool: String, _ arguments: [String]) throws -> Int32 {
  try runProcess(findOnPath(tool) ?? "/usr/bin/\(tool)", arguments, timeout: 30).status
}

/// A terminal for stemdeck: a tmux session on a private tmux server (its own socket, so that
/// closing it closes only this test's terminal), driven by keys, read back as screen text.
final class TmuxTerminal: @unchecked Sendable {
  let socket: String
  let session = "t"
  let columns: Int
  let rows: Int
  /// The process tmux started in the pane (sh, or the program it became), nil if tmux did not say.
  private(set) var panePid: pid_t?

  /// Starts `command` (run by sh) in a new terminal of `columns` × `rows`.
  init(_ command: String, columns: Int = 80, rows: Int = 24, directory: String) async throws {
    try #require(findOnPath("tmux") != nil, "tmux is not installed (scripts/install-deps installs it)")
    socket = "stemdeck-test-\(getpid())-\(Int.random(in: 0..<1_000_000))"
    self.columns = columns
    self.rows = rows
    let r = try await tmux(["new-session", "-d", "-s", session, "-x", "\(columns)", "-y", "\(rows)", "-c", directory, command])
    guard r.status == 0 else { throw HarnessError("tmux new-session failed: \(r.text)") }
    panePid = try await tmux(["display-message", "-p", "-t", session, "#{pane_pid}"]).stdout.first.flatMap { pid_t($0) }
  }

  @discardableResult
  func tmux(_ args: [String]) async throws -> ToolResult {
    // -u: the terminal is UTF-8 whatever the test's locale.
    try await runTool("tmux", ["-u", "-L", socket] + args, environment: ["LANG": "C.UTF-8"], timeout: 10)
  }

  /// Sends keys: tmux key names ("Enter", "Tab", "Up", "C-r") or literal text.
  func send(_ keys: String...) async throws {
    try await tmux(["send-keys", "-t", session] + keys)
  }

  /// Sends literal text (no key-name lookup).
  func type(_ text: String) async throws {
    try await tmux(["send-keys", "-t", session, "-l", text])
  }

  /// The visible screen, one string per row (trailing blank rows dropped).
  func screen() async throws -> [String] {
    var lines = try await tmux(["capture-pane", "-p", "-t", session]).stdout
    while lines.last?.isEmpty == true { lines.removeLast() }
    return lines
  }

  /// The screen and the scrollback with wrapped rows joined back into the lines the program
  /// wrote (`capture-pane -J`): a line longer than the terminal is one long line here.
  func joinedLines() async throws -> [String] {
    try await tmux(["capture-pane", "-p", "-J", "-S", "-1000", "-t", session]).stdout
  }

  /// The row the cursor is on.
  func cursorRow() async throws -> String {
    let y = try await tmux(["display-message", "-p", "-t", session, "#{cursor_y}"]).stdout.first.flatMap { Int($0) } ?? -1
    let rows = try await tmux(["capture-pane", "-p", "-t", session]).stdout
    return y >= 0 && y < rows.count ? rows[y] : ""
  }

  /// Waits until the screen satisfies `condition` (deadline `timeout` seconds).
  func waitForScreen(timeout: Double = 10, _ condition: @escaping ([String]) -> Bool) async throws -> Bool {
    try await eventually(timeout: timeout, interval: 0.05) { condition(try await self.screen()) }
  }

  /// Waits until some row of the screen contains `text`.
  func waitFor(_ text: String, timeout: Double = 10) async throws -> Bool {
    try await waitForScreen(timeout: timeout) { $0.contains { $0.contains(text) } }
  }

  /// Waits until the row the cursor is on is exactly `text` (trailing spaces ignored).
  func waitForCursorRow(_ text: String, timeout: Double = 10) async throws -> Bool {
    try await eventually(timeout: timeout, interval: 0.05) {
      try await self.cursorRow().trimmingTrailingBlanks() == text
    }
  }

  var text: String {
    get async { ((try? await screen()) ?? []).joined(separator: "\n") }
  }

  /// Records a failure with the screen's text when `ok` is false.
  func check(_ ok: Bool, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) async {
    if !ok { Issue.record("\(what)\n\(await text)\nin the terminal:\n\(programsReport)", sourceLocation: sourceLocation) }
  }

  /// Closes the terminal: the tmux server closes the pty master (the program's terminal hangs up).
  func hangUp() async {
    _ = try? await tmux(["kill-server"])
  }

  /// For `defer`: closes the terminal and waits (up to `seconds`) until every process that ran
  /// in it has ended, so that a test stops its JACK server only after stemdeck has quit. A
  /// server stopped under a stemdeck still quitting makes it reconnect to a server that is going
  /// away, while the next test's jackd sets up jackd2's metadata database (shared by the user's
  /// JACK processes, and deleted by every jackd that exits): two CI runs saw the next test's
  /// stemdeck never draw (docs/architecture.md, *JACK metadata*).
  func close(within seconds: Double = 15) {
    let programs = panePid.map { [$0] + ProcFS.descendants(of: $0) } ?? []
    _ = try? runToolSync("tmux", ["-L", socket, "kill-server"])
    let deadline = monotonicSeconds() + seconds
    while programs.contains(where: { !ProcFS.ended($0) }) && monotonicSeconds() < deadline { usleep(10_000) }
  }

  /// The processes in the terminal, a line each: pid, command, state and, per thread, its name
  /// and what the kernel says it waits in (for a test that found the screen not as it expected).
  var programsReport: String {
    guard let panePid else { return "(no pane pid)" }
    return ([panePid] + ProcFS.descendants(of: panePid)).map(ProcFS.report).joined(separator: "\n")
  }

  deinit { _ = try? runToolSync("tmux", ["-L", socket, "kill-server"]) }
}

/// stemdeck in a real terminal (tmux) on a private JACK server of its own, what a terminal test
/// holds to its end: `defer { run.close() }` closes the terminal and stops the server.
struct TerminalRun {
  let server: PrivateJackServer
  let dir: IntegrationTempDir
  let state: IntegrationTempDir
  let term: TmuxTerminal

  /// The shell command `command(binary, server, state)` in a new terminal of `columns` × `rows`,
  /// in the folder `material()` makes, with a state folder of its own (named `stateName`).
  static func start(
    material: () throws -> IntegrationTempDir, state stateName: String, columns: Int, rows: Int,
    command: (String, PrivateJackServer, IntegrationTempDir) -> String
  ) async throws -> TerminalRun {
    let binary = try StemdeckBinary.require()
    let server = try await PrivateJackServer()
    let dir = try material()
    let state = try IntegrationTempDir(stateName)
    let term = try await TmuxTerminal(command(binary, server, state), columns: columns, rows: rows, directory: dir.path)
    return TerminalRun(server: server, dir: dir, state: state, term: term)
  }

  /// Closes the terminal, waits for stemdeck to quit, then stops the server.
  func close() {
    term.close()
    server.stop()
  }
}

extension String {
  func trimmingTrailingBlanks() -> String {
    var s = Substring(self)
    while s.last == " " { s = s.dropLast() }
    return String(s)
  }
}

/// Process facts from /proc, for processes the test did not start itself.
enum ProcFS {
  /// The state letter of `pid` ("R", "S", "Z"…), nil when it no longer exists.
  static func state(_ pid: pid_t) -> String? {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
      let close = stat.lastIndex(of: ")")
    else { return nil }
    return stat[stat.index(close, offsetBy: 2)...].split(separator: " ").first.map(String.init)
  }

  /// Gone: no such process, or a zombie nobody has reaped yet (it has ended).
  static func ended(_ pid: pid_t) -> Bool {
    let s = state(pid)
    return s == nil || s == "Z" || s == "X"
  }

  /// Every process below `pid` (children, their children…), read from /proc.
  static func descendants(of pid: pid_t) -> [pid_t] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    var parent: [pid_t: pid_t] = [:]
    for child in entries.compactMap({ Int32($0) }) {
      guard let stat = try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
      else { continue }
      let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
      if fields.count > 1, let ppid = Int32(fields[1]) { parent[child] = ppid }
    }
    var found: [pid_t] = []
    var frontier = [pid]
    while let next = frontier.popLast() {
      let children = parent.filter { $0.value == next }.map(\.key).sorted()
      found += children
      frontier += children
    }
    return found
  }

  /// `pid command state`, then each thread's name and kernel wait channel.
  static func report(_ pid: pid_t) -> String {
    func read(_ path: String) -> String {
      ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "?").trimmingCharacters(in: .whitespacesAndNewlines)
    }
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
    let threads = tasks.sorted().map { "\(read("/proc/\(pid)/task/\($0)/comm"))@\(read("/proc/\(pid)/task/\($0)/wchan"))" }
    return "\(pid) \(read("/proc/\(pid)/comm")) \(state(pid) ?? "gone"): \(threads.joined(separator: " "))"
  }

  /// Children of `pid` whose command name is `name`.
  static func children(of pid: pid_t, named name: String) -> [pid_t] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { Int32($0) }.filter { child in
      guard let stat = try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8),
        let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")")
      else { return false }
      let comm = stat[stat.index(after: open)..<close]
      let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
      return comm == name && fields.count > 1 && Int32(fields[1]) == pid
    }
  }
}
