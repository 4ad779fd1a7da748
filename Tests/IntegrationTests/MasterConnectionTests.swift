// The master stays connected through `open`, `setlist` and song changes when the sessions save
// no connections of their own (issue 35, item 1: the example setlist played into nothing).

import Foundation
import Testing

@Suite("the master stays connected across open, setlist and next", .serialized, .timeLimit(.minutes(2)))
struct MasterConnectionTests {
  static func song(_ file: String) -> String {
    """
    { "format" : "stemdeck-session", "version" : 3,
      "stems" : [ { "name" : "x", "file" : "\(file)", "loops" : -1 } ] }
    """
  }

  @Test(
    "sessions without connections: the master goes to the playback ports at start, stays there on open, setlist and next (playing), keeps a patchbay's change, and --no-connect leaves it alone"
  )
  func masterSurvivesSongChanges() async throws {
    let dir = try IntegrationTempDir()
    defer { dir.remove() }
    for name in ["one", "two", "three"] {
      try SetlistIntegrationTests.writeConstant(dir.file("\(name).wav"), value: 0.25, seconds: 1)
      try Self.song("\(name).wav").write(toFile: dir.file("\(name).json"), atomically: true, encoding: .utf8)
    }
    try "two.json\nthree.json\n".write(toFile: dir.file("show.txt"), atomically: true, encoding: .utf8)
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let playback: Set = ["system:playback_1"], playbackRight: Set = ["system:playback_2"]

    let deck = try StemdeckProcess(server: server, session: dir.file("one.json"), connect: true)
    defer { deck.kill() }
    func master() async throws -> (Set<String>, Set<String>) {
      let graph = try await server.connections()
      return (graph["stemdeck:master_L"] ?? [], graph["stemdeck:master_R"] ?? [])
    }
    try await deck.run("echo started")
    var now = try await master()
    #expect(now == (playback, playbackRight), "at start: \(now)\n\(deck.transcript)")
    for step in ["open \(dir.file("two.json"))", "play", "setlist \(dir.file("show.txt"))", "next"] {
      try await deck.run(step)
      now = try await master()
      #expect(now == (playback, playbackRight), "after '\(step)': \(now)\n\(deck.transcript)")
    }
    // Moved by hand (here with stemdeck's own commands; any patchbay is folded in the same way),
    // the master keeps its new place through the next open.
    try await deck.run("disconnect master_L system:playback_1; connect master_L system:playback_2")
    try await deck.run("open \(dir.file("one.json"))")
    now = try await master()
    #expect(now == (playbackRight, playbackRight), "after a patchbay change and open: \(now)\n\(deck.transcript)")
    #expect(!deck.lines.contains { $0.hasPrefix("error") }, "\(deck.transcript)")

    // --no-connect holds on open too.
    let quiet = try StemdeckProcess(server: server, session: dir.file("one.json"), extra: ["--name", "quiet"])
    defer { quiet.kill() }
    try await quiet.run("open \(dir.file("two.json"))")
    let graph = try await server.connections()
    #expect(graph["quiet:master_L"] == [] && graph["quiet:master_R"] == [], "--no-connect, after open: \(graph)")
    #expect(try await quiet.finish() == 0, "\(quiet.transcript)")
    #expect(try await deck.finish() == 0, "\(deck.transcript)")
  }
}
