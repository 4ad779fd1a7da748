// Issue 23: the master's loudness measured live — `meters master` of a stemdeck playing on a
// private jackd reads EBU R 128 figures of what it plays, and `meters reset` restarts them.

import Foundation
import Testing

@Suite("live loudness: meters master on a running stemdeck", .serialized, .timeLimit(.minutes(2)))
struct LiveLoudnessIntegrationTests {
  /// The figures of a "master loudness: M … S … I … LUFS  LRA … LU  TP … dBTP (over m:ss.mmm)" line.
  func figures(_ lines: [String]) -> (m: Double, s: Double, i: Double, tp: Double, seconds: Double)? {
    guard let line = lines.first(where: { $0.hasPrefix("master loudness: ") }) else { return nil }
    func number(after label: String) -> Double? {
      guard let r = line.range(of: label) else { return nil }
      let rest = line[r.upperBound...].prefix { !$0.isWhitespace }
      return rest == "-inf" ? -.infinity : Double(rest)
    }
    guard let m = number(after: "M "), let s = number(after: "S "), let i = number(after: "I "),
      let tp = number(after: "TP "), let over = line.range(of: "(over ")
    else { return nil }
    let time = line[over.upperBound...].prefix { $0 != ")" && $0 != "," }.split(separator: ":")
    guard time.count == 2, let minutes = Double(time[0]), let secs = Double(time[1]) else { return nil }
    return (m, s, i, tp, minutes * 60 + secs)
  }

  @Test("a -23 dBFS 1 kHz stereo sine playing live reads -23 LUFS (M, S, I within 0.2) and -23 dBTP; meters reset restarts the integration")
  func liveTone() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir("stemdeck-lufs")
    defer { dir.remove() }
    let amplitude = pow(10, -23.0 / 20)
    try writeSine(dir.file("sine.wav"), sampleRate: 48000, seconds: 1, frequencies: [1000, 1000], amplitude: amplitude)
    try writeSession(dir.file("tone.json"), stems: [SessionStem(name: "sine", file: "sine.wav", loops: -1)])
    let deck = try StemdeckProcess(server: server, session: dir.file("tone.json"))
    defer { deck.kill() }
    try await deck.run("play")
    // Wait on the meter's own clock: 4 s measured (short-term needs 3 s).
    var latest: (m: Double, s: Double, i: Double, tp: Double, seconds: Double)?
    let measured = try await eventually(timeout: 30, interval: 0.25) {
      latest = figures(try await deck.run("meters master"))
      return (latest?.seconds ?? 0) >= 4
    }
    #expect(measured, "no 4 s of loudness: \(String(describing: latest))")
    let l = try #require(latest)
    // A dummy server on a shared machine may xrun; a lost period moves these by far less than 0.2.
    #expect(abs(l.m + 23) <= 0.2 && abs(l.s + 23) <= 0.2 && abs(l.i + 23) <= 0.2, "\(l)")
    #expect(abs(l.tp + 23) <= 0.3, "\(l)")

    // The reset restarts the integration: the meter then counts from 0 what it measured since,
    // fewer seconds than the reading just before the reset (which only grows without one).
    let before = try #require(figures(try await deck.run("meters master")))
    try await deck.run("meters reset")
    let after = try #require(figures(try await deck.run("meters master")))
    #expect(after.seconds < before.seconds, "reset: \(after.seconds) s measured, \(before.seconds) s just before the reset")
    #expect(!after.i.isFinite || after.seconds >= 0.4, "integrated starts again: \(after)")
  }
}
