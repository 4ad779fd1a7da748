import Foundation
import StemdeckTestSupport
import Testing

// Live inputs at the interactive prompt (Commands+Inputs.swift, Completion.swift): Tab completes
// the new words and an input's name, in a real terminal (tmux).
extension InteractiveTests {
  @Test("tab completes input's words and an input's name at the prompt; the input is added")
  func inputCompletion() async throws {
    let binary = try StemdeckBinary.require()
    try #require(findOnPath("tmux") != nil, "tmux is not installed (scripts/install-deps installs it)")
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let state = try IntegrationTempDir("stemdeck-tty")
    let session = "stemdeck-inputs-\(getpid())"
    let command = promptCommand(binary, server: server, state: state)
    defer { _ = try? runToolSync("tmux", ["kill-session", "-t", session]) }
    _ = try await tmux(["new-session", "-d", "-s", session, "-x", "120", "-y", "40", command])
    func expectScreen(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
      let shown = try await waitFor(text, in: session)
      let seen = try await screen(session)
      #expect(shown, "'\(text)' not on the screen: \(seen)", sourceLocation: sourceLocation)
    }
    try await expectScreen("stemdeck>")
    // "input a" + Tab: the only subcommand starting so (libedit adds the space after it).
    _ = try await tmux(["send-keys", "-t", session, "input a", "Tab"])
    try await expectScreen("stemdeck> input add")
    _ = try await tmux(["send-keys", "-t", session, "mic st", "Tab"])
    try await expectScreen("stemdeck> input add mic stereo")
    _ = try await tmux(["send-keys", "-t", session, "Enter"])
    try await expectScreen("added input mic (mic_in_L, mic_in_R)")
    // The input's name where a strip name goes.
    _ = try await tmux(["send-keys", "-t", session, "mute mi", "Tab"])
    try await expectScreen("stemdeck> mute mic")
    _ = try await tmux(["send-keys", "-t", session, "Enter", "inputs", "Enter"])
    let listed = try await eventually(timeout: 10, interval: 0.1) {
      // M muted, L solo-safe (as every input is from the start).
      try await screen(session).split(separator: "\n").contains { $0.hasPrefix("mic ") && $0.contains(" ML ") }
    }
    let seen = try await screen(session)
    #expect(listed, "\(seen)")
    _ = try await tmux(["send-keys", "-t", session, "quit!", "Enter"])
    _ = await eventually(timeout: 5, interval: 0.1) { (try? await tmux(["has-session", "-t", session]))?.status != 0 }
  }
}
