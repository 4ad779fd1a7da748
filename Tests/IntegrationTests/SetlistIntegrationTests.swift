// A setlist song change live: the real stemdeck against a private jackd, recorded by
// jack_capture through the connections the sessions themselves ask for.

import Foundation
import StemdeckAudioFile
import Testing

@Suite("setlist song changes against a private JACK server", .serialized, .timeLimit(.minutes(2)))
struct SetlistIntegrationTests {
  /// A constant-valued mono float WAV of `seconds`.
  static func writeConstant(_ path: String, value: Float, seconds: Double) throws {
    let frames = Int(seconds * 48000)
    let data = [Float](repeating: value, count: frames)
    let writer = try SoundFileWriter(path: path, format: .wavFloat, sampleRate: 48000, channelCount: 1)
    try data.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frameCount: frames) }
    writer.flush()
  }

  static func song(file: String, connections: String) -> String {
    """
    {
      "format" : "stemdeck-session",
      "version" : 1,
      "connections" : { \(connections) },
      "stems" : [ { "name" : "x", "file" : "\(file)", "pan" : -1, "loops" : -1 } ]
    }
    """
  }

  @Test("gapless next, live: the captured master goes from song 1's last frame to song 2's first; song 2's connections are restored and master_L never drops")
  func gaplessLive() async throws {
    let dir = try IntegrationTempDir()
    defer { dir.remove() }
    try Self.writeConstant(dir.file("one.wav"), value: 0.25, seconds: 2)
    try Self.writeConstant(dir.file("two.wav"), value: 0.5, seconds: 2)
    try Self.song(file: "one.wav", connections: #""master_L" : [ "jack_capture:input1" ]"#)
      .write(toFile: dir.file("one.json"), atomically: true, encoding: .utf8)
    try Self.song(file: "two.wav", connections: #""master_L" : [ "jack_capture:input1" ], "master_R" : [ "jack_capture:input2" ]"#)
      .write(toFile: dir.file("two.json"), atomically: true, encoding: .utf8)
    try "one.json\ntwo.json\n".write(toFile: dir.file("show.txt"), atomically: true, encoding: .utf8)

    let server = try await PrivateJackServer()
    defer { server.stop() }
    let capture = try server.startCapture(ports: [], seconds: 5, to: dir.file("live.wav"), hookDir: dir, manualConnections: true)
    defer { capture.child.terminate(grace: 2) }
    let registered = try await eventually(timeout: 5, interval: 0.1) { try await server.ports().contains("jack_capture:input2") }
    try #require(registered, "jack_capture did not register its inputs; log:\n\(capture.log)")

    let deck = try StemdeckProcess(server: server)
    defer { deck.kill() }
    let opened = try await deck.run("setlist \(dir.file("show.txt"))")
    #expect(opened.last == "song 1/2: one", "\(deck.transcript)")
    var graph = try await server.connections()
    #expect(graph["stemdeck:master_L"] == ["jack_capture:input1"], "\(graph)")
    #expect(graph["stemdeck:master_R"] == [], "\(graph)")
    try await deck.run("play")
    try await deck.run("wait 1")
    let switched = try await deck.run("next")
    #expect(switched.last == "song 2/2: two (gapless)", "\(deck.transcript)")
    graph = try await server.connections()
    #expect(graph["stemdeck:master_L"] == ["jack_capture:input1"], "\(graph)")
    #expect(graph["stemdeck:master_R"] == ["jack_capture:input2"], "song 2's connection restored: \(graph)")
    try await deck.run("wait 1")
    _ = try await capture.finish(timeout: 15)
    #expect(try await deck.finish() == 0, "\(deck.transcript)")

    let live = try readAudio(dir.file("live.wav"))
    let left = (0..<live.frames).map { live.sample($0, 0) }
    let first = try #require(left.firstIndex(of: 0.25), "song 1 never reached the capture")
    let lastOne = try #require(left.lastIndex(of: 0.25))
    let firstTwo = try #require(left.firstIndex(of: 0.5), "song 2 never reached the capture")
    #expect(firstTwo == lastOne + 1, "\(firstTwo - lastOne - 1) frames between song 1's last frame and song 2's first")
    let end = try #require(left.lastIndex(of: 0.5))
    let stray = left[first...end].filter { $0 != 0.25 && $0 != 0.5 }.count
    #expect(stray == 0, "\(stray) frames from neither song between the first and the last")
    print("setlist live: song 1 from frame \(first), switch at \(firstTwo), song 2 until \(end); frames from neither: \(stray)")
  }
}
