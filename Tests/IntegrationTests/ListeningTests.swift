// What other programs reach, said where a person looks: `status` (text and JSON) names the
// control socket and the OSC port (issue 35, item 9).

import Foundation
import Testing

/// Leaves a stale Unix socket at `path`, as a killed program does: bound, never listened on,
/// closed, so nobody answers on it. True when the socket file is there.
func placeStaleSocket(at path: String) -> Bool {
  let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
  guard fd >= 0 else { return false }
  defer { close(fd) }
  var address = sockaddr_un()
  address.sun_family = sa_family_t(AF_UNIX)
  withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: Array(path.utf8)) }
  let bound = withUnsafePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
  }
  return bound == 0 && FileManager.default.fileExists(atPath: path)
}

@Suite("status names the control socket and the OSC port", .serialized, .timeLimit(.minutes(1)))
struct ListeningTests {
  @Test("status says 'control socket: PATH' and 'OSC: 127.0.0.1:PORT (UDP)'; --json carries both; without them, neither line")
  func statusNamesWhatListens() async throws {
    let dir = try IntegrationTempDir()
    defer { dir.remove() }
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let socket = dir.file("deck.sock")
    let port = try freeUDPPort()
    let deck = try StemdeckProcess(server: server, extra: ["--control", socket, "--osc", "\(port)"])
    defer { deck.kill() }
    let status = try await deck.run("status")
    #expect(status.contains("control socket: \(socket)"), "\(deck.transcript)")
    #expect(status.contains("OSC: 127.0.0.1:\(port) (UDP)"), "\(deck.transcript)")
    // The same through the socket, as JSON.
    let reply = try await runTool(
      try StemdeckBinary.require(), ["ctl", "--socket", socket, "--json", "status"], environment: server.environment, timeout: 10)
    let line = try #require(reply.stdout.first { $0.contains("\"status\"") }, "\(reply.text)")
    let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    let fields = try #require((object["data"] as? [String: Any])?["status"] as? [String: Any] ?? object["status"] as? [String: Any])
    #expect(fields["control"] as? String == socket && fields["osc"] as? String == "127.0.0.1:\(port)", "\(line)")
    #expect(try await deck.finish() == 0, "\(deck.transcript)")

    let quiet = try StemdeckProcess(server: server, extra: ["--no-control", "--name", "quiet"])
    defer { quiet.kill() }
    let plain = try await quiet.run("status")
    #expect(!plain.contains { $0.hasPrefix("control socket:") || $0.hasPrefix("OSC:") }, "\(quiet.transcript)")
    #expect(try await quiet.finish() == 0, "\(quiet.transcript)")
  }
}

@Suite("ctl finds the running stemdecks", .serialized, .timeLimit(.minutes(1)))
struct CtlListTests {
  @Test(
    "ctl --list names each running stemdeck (a stale socket is left out); ctl with no name takes the only one, and with two says which run"
  )
  func listAndPick() async throws {
    let runtime = try IntegrationTempDir("stemdeck-runtime")
    defer { runtime.remove() }
    let binary = try StemdeckBinary.require()
    let server = try await PrivateJackServer()
    defer { server.stop() }
    // A stale socket file left by a killed stemdeck: bound, then its listener gone.
    try FileManager.default.createDirectory(atPath: runtime.file("stemdeck"), withIntermediateDirectories: true)
    let stale = runtime.file("stemdeck/ghost.sock")
    try #require(placeStaleSocket(at: stale))

    let env = ["XDG_RUNTIME_DIR": runtime.path]
    func ctl(_ args: [String]) async throws -> ToolResult {
      try await runTool(binary, ["ctl"] + args, environment: env, timeout: 10)
    }
    let launcher = ["env", "XDG_RUNTIME_DIR=\(runtime.path)"]
    let alpha = try StemdeckProcess(server: server, extra: ["--name", "alpha"], launcher: launcher)
    defer { alpha.kill() }
    try await alpha.run("echo up")
    let one = try await ctl(["echo via-ctl"])
    #expect(one.status == 0 && one.stdout == ["via-ctl"], "the only one: \(one.text)")

    let beta = try StemdeckProcess(server: server, extra: ["--name", "beta"], launcher: launcher)
    defer { beta.kill() }
    try await beta.run("echo up")
    let list = try await ctl(["--list"])
    #expect(
      list.status == 0
        && list.stdout == [
          "alpha on server \(server.name): \(runtime.path)/stemdeck/alpha@\(server.name).sock",
          "beta on server \(server.name): \(runtime.path)/stemdeck/beta@\(server.name).sock"
        ], "\(list.text)")
    let two = try await ctl(["echo which"])
    #expect(two.status == 2 && two.stdout.isEmpty, "\(two.text)")
    #expect(two.stderr.first?.contains("2 others run: alpha on \(server.name), beta on \(server.name)") == true, "\(two.text)")
    #expect(try await alpha.finish() == 0, "\(alpha.transcript)")
    #expect(try await beta.finish() == 0, "\(beta.transcript)")
    let none = try await ctl(["--list"])
    #expect(
      none.status == 2 && none.stderr == ["no stemdeck is running (no control socket answers in \(runtime.path)/stemdeck)"], "\(none.text)")
  }
}
