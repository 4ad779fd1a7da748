import Foundation
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

  @Test("tab completes a command; history comes back after a restart")
  func completionAndHistory() async throws {
    let binary = try StemdeckBinary.require()
    try #require(findOnPath("tmux") != nil, "tmux is not installed (scripts/install-deps installs it)")
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let state = try IntegrationTempDir("stemdeck-tty")
    let session = "stemdeck-tty-\(getpid())"
    let command = "env XDG_STATE_HOME=\(state.path) JACK_DEFAULT_SERVER=\(server.name) NO_COLOR=1 "
      + "\(binary) --server \(server.name) --no-start-server --no-connect"
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

/// Runs a tool synchronously (for cleanup in `defer`).
func runToolSync(_ tool: String, _ arguments: [String]) throws -> Int32 {
  let p = Process()
  p.executableURL = URL(fileURLWithPath: findOnPath(tool) ?? "/usr/bin/\(tool)")
  p.arguments = arguments
  p.standardOutput = FileHandle.nullDevice
  p.standardError = FileHandle.nullDevice
  try p.run()
  p.waitUntilExit()
  return p.terminationStatus
}
