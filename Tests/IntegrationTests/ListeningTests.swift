// What other programs reach, said where a person looks: `status` (text and JSON) names the
// control socket and the OSC port (issue 35, item 9).

import Foundation
import Testing

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
