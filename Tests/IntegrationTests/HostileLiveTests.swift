// Issue 16, live: another JACK client's port names are whatever that client made them (stemdeck
// prints them escaped, item 23), and playing a song again after its end (item 27).
import Foundation
import StemdeckTestSupport
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
    let metro = try ChildProcess(
      "jack_metro", ["-n", evil, "-b", "120"], environment: server.environment,
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

@Suite("Playing a song again (issue 16 item 27)", .serialized, .timeLimit(.minutes(2)))
struct PlayAgainTests {
  @Test("27: after a song has ended, 'play; wait end' plays it again to its end (no stale 'all stems finished')")
  func playAgainWaitsForTheEnd() async throws {
    let dir = try IntegrationTempDir()
    try writeSine(dir.file("song.wav"), sampleRate: 48000, seconds: 1.0, frequencies: [220], amplitude: 0.3)
    let session = dir.file("song.json")
    try writeSession(session, stems: [SessionStem(name: "song", file: "song.wav")])
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let deck = try StemdeckProcess(server: server, session: session)
    defer { deck.kill() }
    try await deck.run("play; wait end", timeout: 15)
    for round in 1...2 {
      let started = monotonicSeconds()
      let lines = try await deck.run("play; wait end", timeout: 15)
      let took = monotonicSeconds() - started
      #expect(took > 0.9, "round \(round): 'wait end' returned after \(took) s of a 1 s song: \(lines)")
      #expect(lines.filter { $0 == "event: all stems finished" }.count == 1, "round \(round): \(lines)")
    }
    let status = try await deck.status()
    #expect(status["state"] != "playing", "\(status)")
    #expect(try await deck.finish() == 0, "\(deck.transcript)")
  }
}

@Suite("Full file systems for writers (issue 16)", .serialized, .timeLimit(.minutes(2)))
struct FullDiskWriterTests {
  @Test("widen the net: 'save' under a file-size limit fails with the reason, keeps the session file and leaves no temporary")
  func saveUnderSizeLimit() async throws {
    let dir = try IntegrationTempDir()
    try writeSine(dir.file("a.wav"), sampleRate: 48000, seconds: 0.2, frequencies: [220], amplitude: 0.3)
    let session = dir.file("song.json")
    try writeSession(session, stems: (0..<40).map { SessionStem(name: "stem\($0)", file: "a.wav") })
    let original = try #require(FileManager.default.contents(atPath: session))
    try #require(original.count > 3000)
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let deck = try StemdeckProcess(server: server, session: session, launcher: ["prlimit", "--fsize=2000"])
    defer { deck.kill() }
    deck.send("vol stem0 0.5")
    deck.send("save")
    deck.send("echo not reached")
    #expect(try await deck.finish() == 1, "\(deck.transcript)")
    let error = deck.lines.first { $0.hasPrefix("error: ") } ?? ""
    #expect(error.contains("song.json") && error.contains("File too large"), "\(deck.transcript)")
    #expect(!deck.lines.contains("not reached"))
    #expect(FileManager.default.contents(atPath: session) == original)
    let left = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.contains(".tmp-") }
    #expect(left.isEmpty, "\(left)")
  }
}
