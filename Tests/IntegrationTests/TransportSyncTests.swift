import Foundation
import Testing

/// JACK transport: following another client's start/stop/locate, and leading with bar/beat/tick.
@Suite("JACK transport sync", .serialized, .timeLimit(.minutes(2)))
struct TransportSyncTests {
  /// Sends commands to `jack_transport` (it reads them from standard input).
  func transportCommand(_ server: PrivateJackServer, _ commands: [String]) async throws {
    let script = commands.joined(separator: "\n") + "\nquit\n"
    let path = NSTemporaryDirectory() + "/jt-\(getpid()).txt"
    try script.write(toFile: path, atomically: true, encoding: .utf8)
    _ = try await runTool("sh", ["-c", "jack_transport < \(path)"], environment: server.environment, timeout: 10)
  }

  @Test("follow: jack_transport's play, locate and stop drive stemdeck's transport")
  func follow() async throws {
    let dir = try IntegrationTempDir()
    let server = try await PrivateJackServer()
    defer { server.stop() }
    try writeSine(dir.file("loop.wav"), sampleRate: 48000, seconds: 1, frequencies: [220], amplitude: 0.2)
    try writeSession(dir.file("s.json"), stems: [SessionStem(name: "loop", file: "loop.wav", loops: -1)])
    let deck = try StemdeckProcess(server: server, session: dir.file("s.json"))
    defer { deck.kill() }
    try await deck.run("transport follow")
    try await transportCommand(server, ["play"])
    let playing = try await eventually(timeout: 3, interval: 0.1) { try await deck.status()["state"] == "playing" }
    #expect(playing, "stemdeck did not start with JACK transport\n\(deck.transcript)")
    try await transportCommand(server, ["locate 240000"])  // 5 s
    let located = try await eventually(timeout: 3, interval: 0.1) {
      guard let p = statusPosition(try await deck.status()) else { return false }
      return p >= 5 && p < 7
    }
    #expect(located, "stemdeck did not follow the locate\n\(deck.transcript)")
    try await transportCommand(server, ["stop"])
    let stopped = try await eventually(timeout: 3, interval: 0.1) { try await deck.status()["state"] != "playing" }
    #expect(stopped, "stemdeck did not stop with JACK transport\n\(deck.transcript)")
    #expect(try await deck.finish() == 0)
  }

  @Test("lead: stemdeck's play starts JACK transport and jack_showtime sees bar/beat/tick from the tempo")
  func lead() async throws {
    let dir = try IntegrationTempDir()
    let server = try await PrivateJackServer()
    defer { server.stop() }
    try writeSine(dir.file("loop.wav"), sampleRate: 48000, seconds: 1, frequencies: [220], amplitude: 0.2)
    try writeSession(dir.file("s.json"), stems: [SessionStem(name: "loop", file: "loop.wav", loops: -1)])
    let deck = try StemdeckProcess(server: server, session: dir.file("s.json"))
    defer { deck.kill() }
    try await deck.run("tempo 120 4; transport lead; play; wait 2.2")
    // jack_showtime prints the transport state and BBT continuously; take one second of it.
    // On a loaded machine jack_showtime can take most of a second just to connect: try again.
    var show: ToolResult?
    var lines: [String] = []
    for _ in 0..<3 where lines.isEmpty {
      show = try? await runTool("timeout", ["-k", "1", "1.5", "jack_showtime"], environment: server.environment, timeout: 5)
      lines = (show?.stdout ?? []).filter { $0.contains("BBT") }
    }
    let last = try #require(lines.last, "jack_showtime printed nothing: \(show?.text ?? "")")
    #expect(last.contains("Rolling"), "\(last)")
    // 2.2 s or more at 120 bpm in 4/4: bar 2 or later, a beat from 1 to 4.
    let bbt = last.components(separatedBy: "BBT:").last?.trimmingCharacters(in: .whitespaces) ?? ""
    let parts = bbt.split(separator: "|").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
    #expect(parts.count == 3, "BBT field: \(bbt)")
    if parts.count == 3 {
      #expect(parts[0] >= 2 && parts[0] <= 5, "bar \(parts[0])")  // 2.2 s, plus up to three tries of 1.5 s
      #expect((1...4).contains(parts[1]), "beat \(parts[1])")
      #expect((0..<1920).contains(parts[2]), "tick \(parts[2])")
    }
    try await deck.run("pause")
    _ = await eventually(timeout: 3, interval: 0.1) {
      let s = try? await runTool("timeout", ["-k", "1", "0.3", "jack_showtime"], environment: server.environment, timeout: 5)
      return s?.stdout.last?.contains("Stopped") == true
    }
    #expect(try await deck.finish() == 0)
  }
}
