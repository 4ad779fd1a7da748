import Foundation
import StemdeckAudioFile
import StemdeckTestSupport
import Testing

// Aux sends live: `send add verb` registers stemdeck:verb_send_L/R and verb_return_L/R on a private
// JACK server (dummy driver); jack_capture records the send at the stem's level −12 dB.
extension JackIntegrationTests {
  @Test("script mode, live: a post-fader send at -12 dB reaches stemdeck:verb_send_L/R (jack_capture) at the stem's level -12 dB")
  func sendLive() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir()
    try writeSine(dir.file("tone.wav"), sampleRate: 48000, seconds: 1, frequencies: [1000], amplitude: 0.25)
    let deck = try StemdeckProcess(server: server)
    defer { deck.kill() }
    for line in ["add \(dir.file("tone.wav")) as tone", "loops tone -1", "send add verb", "send tone verb -12dB post", "play"] {
      try await deck.run(line)
    }
    let appeared = try await eventually(timeout: 5, interval: 0.05) {
      let ports = try await server.ports()
      return ["verb_send_L", "verb_send_R", "verb_return_L", "verb_return_R"].allSatisfy { ports.contains("stemdeck:\($0)") }
    }
    let ports = try await server.ports()
    #expect(appeared, "\(ports)")
    let listing = try await deck.run("sends")
    #expect(listing.contains { $0.contains("tone") && $0.contains("post") }, "\(deck.transcript)")
    let routes = try await deck.run("routes")
    #expect(routes.contains("sends:") && routes.contains("  tone -12.0 dB post"), "\(routes)")
    let capture = try server.startCapture(
      ports: ["stemdeck:verb_send_L", "stemdeck:verb_send_R"], seconds: 1, to: dir.file("send.wav"), hookDir: dir)
    _ = try await capture.finish(timeout: 15)
    let audio = try readAudio(dir.file("send.wav"))
    #expect(audio.channels == 2)
    var peakL: Float = 0, peakR: Float = 0
    for frame in 0..<audio.frames {
      peakL = max(peakL, abs(audio.sample(frame, 0)))
      peakR = max(peakR, abs(audio.sample(frame, 1)))
    }
    // A centred mono 0.25 sine: 0.25 · cos(π/4) a side, then −12 dB.
    let expected = Float(0.25 * cos(Double.pi / 4) * pow(10, -12.0 / 20))
    #expect(abs(peakL - expected) < expected * 0.01 && abs(peakR - expected) < expected * 0.01, "L \(peakL) R \(peakR), want \(expected)")
    try await deck.run("send remove verb")
    let gone = try await eventually(timeout: 5, interval: 0.05) { try await !server.ports().contains("stemdeck:verb_send_L") }
    #expect(gone)
    #expect(!deck.lines.contains { $0.hasPrefix("error: ") }, "\(deck.transcript)")
  }
}
