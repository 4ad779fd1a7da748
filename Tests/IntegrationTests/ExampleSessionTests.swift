// The example sessions in Sessions/ (issue 26 item 7) are used here, so they never rot: each is
// rendered offline from the real Samples/ audio, opened live against a private jackd, and saved
// back byte for byte (they are in the encoder's own layout).

import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("the example sessions in Sessions/", .serialized, .timeLimit(.minutes(3)))
struct ExampleSessionTests {
  static let examples = ["example-song1", "example-song2", "example-rehearsal", "example-effects-recording"]

  var sessionsDirectory: String {
    URL(fileURLWithPath: samplesDirectory).deletingLastPathComponent().appendingPathComponent("Sessions").path
  }

  @Test("each renders offline: 3 s of sound, nothing clipped", arguments: examples)
  func renders(_ name: String) async throws {
    let binary = try StemdeckBinary.require()
    let dir = try IntegrationTempDir("stemdeck-example-render")
    defer { dir.remove() }
    let r = try await runTool(
      binary, ["render", "\(sessionsDirectory)/\(name).json", "--output", dir.file("out.wav"), "--duration", "3"], timeout: 120)
    #expect(r.status == 0, "\(name): \(r.text)")
    #expect(r.stdout.contains { $0.contains("clipped samples 0") }, "\(name): \(r.text)")
    let audio = try readAudio(dir.file("out.wav"))
    #expect(audio.frames == 3 * 48000, "\(name): \(audio.frames) frames")
    let peak = audio.samples.reduce(Float(0)) { max($0, abs($1)) }
    #expect(peak > 0.1 && peak < 1, "\(name): peak \(peak)")
  }

  /// A copy of Sessions/ and a link to Samples/ side by side, as in the repository, so that
  /// saving does not touch the repository's files.
  func copyOfSessions() throws -> IntegrationTempDir {
    let dir = try IntegrationTempDir("stemdeck-examples")
    let fm = FileManager.default
    try fm.createDirectory(atPath: dir.file("Sessions"), withIntermediateDirectories: true)
    for entry in try fm.contentsOfDirectory(atPath: sessionsDirectory) where entry.hasPrefix("example-") {
      try fm.copyItem(atPath: "\(sessionsDirectory)/\(entry)", toPath: dir.file("Sessions/\(entry)"))
    }
    try fm.createSymbolicLink(atPath: dir.file("Samples"), withDestinationPath: samplesDirectory)
    return dir
  }

  @Test("each opens live without a warning and saves back byte for byte")
  func opensAndRoundTrips() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try copyOfSessions()
    defer { dir.remove() }
    let deck = try StemdeckProcess(server: server)
    defer { deck.kill() }
    for name in Self.examples {
      let path = dir.file("Sessions/\(name).json")
      let original = try String(contentsOfFile: path, encoding: .utf8)
      let opened = try await deck.run("open \(path)")
      #expect(opened.contains { $0.hasPrefix("opened ") } && !opened.contains { $0.hasPrefix("warning") }, "\(name): \(opened)")
      try await deck.run("save")
      #expect(try String(contentsOfFile: path, encoding: .utf8) == original, "\(name) changed when saved back")
    }
    #expect(try await deck.finish() == 0, "\(deck.transcript)")
  }

  @Test("rehearsal: voice muted, lead looping a region 8 times, every stem stretched to 0.85")
  func rehearsal() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let deck = try StemdeckProcess(server: server, session: "\(sessionsDirectory)/example-rehearsal.json")
    defer { deck.kill() }
    let rows = try await deck.run("stems").filter { !$0.hasPrefix("event: ") }
    func cells(_ stem: String) -> [String] { rows.first { $0.hasPrefix(stem + " ") }?.split(separator: " ").map(String.init) ?? [] }
    #expect(cells("voice").count > 9 && cells("voice")[9].contains("M"), "\(rows)")
    #expect(cells("lead").count > 8 && cells("lead")[8] == "7", "\(rows)")
    for stem in ["drums", "bass", "chords", "lead", "voice"] {
      #expect(cells(stem).count > 7 && cells(stem)[7] == "0.85", "\(stem): \(rows)")
    }
    try await deck.run("play")
    let moving = try await eventually(timeout: 5, interval: 0.05) { (statusPosition(try await deck.status()) ?? 0) > 0.2 }
    #expect(moving, "\(deck.transcript)")
    #expect(try await deck.finish() == 0, "\(deck.transcript)")
  }

  @Test("effects and recording: two effects on their own ports, inputs routed from capture, an effect fires")
  func effectsAndRecording() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let deck = try StemdeckProcess(server: server, session: "\(sessionsDirectory)/example-effects-recording.json")
    defer { deck.kill() }
    let effects = try await deck.run("sfx")
    #expect(effects.contains { $0.hasPrefix("count ") } && effects.contains { $0.hasPrefix("hit ") }, "\(effects)")
    let routed = try await eventually(timeout: 5, interval: 0.05) {
      let routes = try await deck.run("routes")
      return routes.contains("connected  in_L ← system:capture_1") && routes.contains("connected  sfx_R → system:playback_2")
    }
    let routes = try await deck.run("routes")
    #expect(routed, "\(routes)")
    try await deck.run("sfx fire count")
    #expect(try await deck.finish() == 0, "\(deck.transcript)")
  }

  @Test("setlist: two songs, the first hands over with a 3 s crossfade; next while playing brings song 2's stems")
  func setlist() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let deck = try StemdeckProcess(server: server)
    defer { deck.kill() }
    try await deck.run("setlist \(sessionsDirectory)/example-setlist.txt")
    let change = try await deck.run("songchange")
    #expect(change.contains("songchange: crossfade 3 s"), "\(change)")
    try await deck.run("play")
    try await deck.run("next")
    let second = try await eventually(timeout: 5, interval: 0.05) {
      try await deck.run("stems").contains { $0.hasPrefix("lead ") }
    }
    #expect(second, "\(deck.transcript)")
    #expect(try await deck.finish() == 0, "\(deck.transcript)")
  }
}
