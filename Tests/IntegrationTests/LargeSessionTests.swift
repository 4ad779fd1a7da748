// Large sessions against the real `stemdeck` binary and a private jackd (issue 16, items 12
// and 13): a session of 150 soloed stems opens and plays live, and when jackd is killed and
// comes back at another sample rate while one stem's file has been deleted, stemdeck rebuilds
// its engine once (the stem goes offline, nothing else changes) instead of failing and leaking
// a half-built engine with its disk threads every 250 ms.
//
// Run: swift build && STEMDECK_BIN=$PWD/.build/debug/stemdeck \
//      swift test --no-parallel --filter IntegrationTests.LargeSessionLiveTests

import Foundation
import StemdeckTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("large sessions live", .serialized, .timeLimit(.minutes(3)))
struct LargeSessionLiveTests {
  /// Threads of a process (`/proc/PID/task`).
  func threadCount(_ pid: pid_t) throws -> Int {
    try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task").count
  }

  @Test(
    "150 soloed stems, jackd killed and back at 44.1 kHz with one stem file deleted: one rebuild, the stem goes offline, threads and memory stay put"
  )
  func rebuildAfterRateChangeWithAFileGone() async throws {
    let dir = try IntegrationTempDir("stemdeck-large")
    defer { dir.remove() }
    try writeSine(dir.file("tone.wav"), sampleRate: 48000, seconds: 2, frequencies: [440], amplitude: 0.001)
    try writeSine(dir.file("gone.wav"), sampleRate: 48000, seconds: 2, frequencies: [440], amplitude: 0.001)
    let count = 150
    let stems = (0..<count).map { i in SessionStem(name: "s\(i)", file: i == 7 ? "gone.wav" : "tone.wav", loops: -1) }
    let session = dir.file("S.json")
    try writeSession(session, stems: stems)
    let text = try String(contentsOfFile: session, encoding: .utf8)
    try text.replacingOccurrences(of: "\"solo\" : false", with: "\"solo\" : true").write(toFile: session, atomically: true, encoding: .utf8)

    let server = try await PrivateJackServer(sampleRate: 48000)
    defer { server.stop() }
    let deck = try StemdeckProcess(server: server, session: session)
    defer { deck.kill() }
    try await deck.run("play")
    let table = try await deck.stemsTable()
    try #require(table.count == count, "\(table.count) stems listed\n\(deck.transcript.suffix(2000))")
    let threadsBefore = try threadCount(deck.pid)
    let memoryBefore = try deck.memory()["VmRSS"]!

    try FileManager.default.removeItem(atPath: dir.file("gone.wav"))
    server.kill9()
    server.removeStaleFiles()
    let gone = try await deck.waitForEvents("went away", count: 1, timeout: 5)
    try #require(gone, "stemdeck did not notice the server dying\n\(deck.transcript.suffix(2000))")
    server.sampleRate = 44100
    try await server.start()
    let back = try await deck.waitForEvents("reconnected to JACK server", count: 1, timeout: 15)
    try #require(back, "no reconnect at 44100 Hz\n\(deck.transcript.suffix(3000))")
    #expect(deck.eventCount("now runs at 44100 Hz") == 1, "\(deck.events.suffix(10))")
    #expect(deck.eventCount("cannot follow") == 0, "\(deck.events.suffix(10))")
    #expect(deck.events.contains { $0.contains("'s7' is offline") && $0.contains("gone.wav") }, "\(deck.events.suffix(10))")

    // The old engine's threads are gone and no failed rebuild left any behind: over a second of
    // service loop (four reconnect intervals) the count stays where it was before the kill.
    var threadsAfter: [Int] = [], memoryAfter: [Int] = []
    let until = monotonicSeconds() + 1
    while monotonicSeconds() < until {
      try await deck.run("wait 0.1")
      threadsAfter.append(try threadCount(deck.pid))
      memoryAfter.append(try deck.memory()["VmRSS"]!)
    }
    #expect(threadsAfter.allSatisfy { $0 <= threadsBefore + 2 }, "threads \(threadsBefore) before the kill, then \(threadsAfter)")
    // The new engine is built while the old one still exists (the allocator keeps some of that
    // peak); what must not happen is growth after it.
    let mb = memoryAfter.map { $0 >> 20 }
    #expect(
      memoryAfter.last! < 2 * memoryBefore && memoryAfter.max()! - memoryAfter.first! < 16 << 20,
      "VmRSS \(memoryBefore >> 20) MB before the kill, then \(mb) MB")

    let status = try await deck.status()
    #expect(status["sample rate"] == "44100 Hz", "\(status)")
    let lines = try await deck.run("stems")
    let after = parseStemsTable(lines)
    #expect(after.count == count - 1 && after["s7"] == nil, "\(after.count) stems playing after the rebuild")
    #expect(lines.contains { $0.hasPrefix("offline: s7 (") }, "\(lines.suffix(3))")
    try await deck.run("save")
    let saved = try String(contentsOfFile: session, encoding: .utf8)
    #expect(saved.contains("gone.wav"), "the offline stem was dropped from the saved session")
    print(
      "150 soloed stems, rebuild at 44.1 kHz: threads \(threadsBefore) → \(threadsAfter.max() ?? 0), VmRSS \(memoryBefore >> 20) → \(memoryAfter.max()! >> 20) MB"
    )
  }
}
