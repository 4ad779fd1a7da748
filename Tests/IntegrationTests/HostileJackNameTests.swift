// Issue 16 item 23: another JACK client's port names are whatever that client made them; stemdeck
// prints them with their control characters escaped (`ports`, `connections`).
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Hostile JACK names (issue 16)", .serialized, .timeLimit(.minutes(2)))
struct HostileJackNameTests {
  static func hasRawControl(_ line: String) -> Bool {
    line.unicodeScalars.contains { ($0.value < 0x20 && $0.value != 0x09) || (0x7F...0x9F).contains($0.value) }
  }

  @Test("23: a client named with a terminal escape (jack_metro -n $'evil\\e]2;HACKED\\a') is listed escaped by ports and connections")
  func escapedPortNames() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let evil = "evil\u{1B}]2;HACKED\u{07}"
    let metro = try ChildProcess("jack_metro", ["-n", evil, "-b", "120"], environment: server.environment,
                                 stdout: .null, stderr: .null)
    defer { metro.terminate(grace: 1) }
    var evilPort: String?
    _ = try await eventually(timeout: 10) {
      evilPort = try await server.ports().first { $0.hasPrefix(evil + ":") }
      return evilPort != nil
    }
    let port = try #require(evilPort, "jack_metro did not register its port")
    let deck = try StemdeckProcess(server: server)
    defer { deck.kill() }
    let listed = try await deck.run("ports")
    #expect(listed.contains { $0.contains(#"evil\u{1b}]2;HACKED\u{7}:"#) }, "ports: \(listed)")
    try await server.connect(port, "system:playback_1")
    try await deck.run("connect master_L system:playback_1")
    let routes = try await deck.run("ports system")
    let connections = try await deck.run("connections")
    for line in listed + routes + connections + deck.lines + deck.stderrLines {
      #expect(!Self.hasRawControl(line), "raw control character in: \(line.debugDescription)")
    }
    #expect(routes.contains { $0.contains(#"evil\u{1b}]2;HACKED\u{7}:"#) }, "ports system: \(routes)")
    #expect(try await deck.finish() == 0, "\(deck.transcript)")
  }
}
