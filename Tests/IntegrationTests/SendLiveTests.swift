import Foundation
import StemdeckAudioFile
import StemdeckTestSupport
import Testing

// Aux sends live: `send add verb` registers stemdeck:verb_send_L/R and verb_return_L/R on a private
// JACK server (dummy driver); jack_capture records the send at the stem's level −12 dB.
extension JackIntegrationTests {
  /// One second of `stemdeck:verb_send_L/R` recorded with jack_capture: each side's peak.
  /// The peaks of 1 s of stemdeck:verb_send_L/R (jack_capture), from frame `from` of the take on
  /// (after a change's 10 ms ramps).
  static func sendPeaks(_ server: PrivateJackServer, _ dir: IntegrationTempDir, from: Int = 0) async throws -> (Float, Float) {
    let path = dir.file("send-\(UInt32.random(in: 0...UInt32.max)).wav")
    let capture = try server.startCapture(ports: ["stemdeck:verb_send_L", "stemdeck:verb_send_R"], seconds: 1, to: path, hookDir: dir)
    _ = try await capture.finish(timeout: 15)
    let audio = try readAudio(path)
    #expect(audio.channels == 2 && audio.frames > 24000, "\(audio.frames) frames")
    var peakL: Float = 0, peakR: Float = 0
    for frame in min(from, audio.frames)..<audio.frames {
      peakL = max(peakL, abs(audio.sample(frame, 0)))
      peakR = max(peakR, abs(audio.sample(frame, 1)))
    }
    return (peakL, peakR)
  }

  @Test(
    "script mode, live: a post-fader send at -12 dB reaches stemdeck:verb_send_L/R (jack_capture) at the stem's level -12 dB, after its fader and pan; pre-fader, before them and its mute"
  )
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
    let (peakL, peakR) = try await Self.sendPeaks(server, dir)
    // A centred mono 0.25 sine: 0.25 · cos(π/4) a side, then −12 dB.
    let expected = Float(0.25 * cos(Double.pi / 4) * pow(10, -12.0 / 20))
    #expect(abs(peakL - expected) < expected * 0.01 && abs(peakR - expected) < expected * 0.01, "L \(peakL) R \(peakR), want \(expected)")
    // The law with the fader and pan moved (issue 37, item 7): post follows the fader and the pan
    // (constant power: θ = (pan + 1)·π/4, L cos θ, R sin θ); pre takes the stem after its EQ,
    // before its fader, pan and mute: a mono stem at the send's level on both sides.
    let send = pow(10, -12.0 / 20), fader = pow(10, -6.0 / 20), theta = 1.5 * Double.pi / 4
    try await deck.run("vol tone -6dB")
    try await deck.run("pan tone 0.5")
    let (postL, postR) = try await Self.sendPeaks(server, dir, from: 12000)
    let wantL = Float(0.25 * fader * cos(theta) * send), wantR = Float(0.25 * fader * sin(theta) * send)
    #expect(
      abs(postL - wantL) < wantL * 0.01 && abs(postR - wantR) < wantR * 0.01,
      "post, fader -6 dB, pan 0.5: L \(postL) R \(postR), want \(wantL) \(wantR)")
    try await deck.run("send tone verb -12dB pre")
    try await deck.run("mute tone")
    let (preL, preR) = try await Self.sendPeaks(server, dir, from: 12000)
    let wantPre = Float(0.25 * send)
    #expect(
      abs(preL - wantPre) < wantPre * 0.01 && abs(preR - wantPre) < wantPre * 0.01,
      "pre, the stem muted at -6 dB and panned: L \(preL) R \(preR), want \(wantPre) on both")
    try await deck.run("send remove verb")
    let gone = try await eventually(timeout: 5, interval: 0.05) { try await !server.ports().contains("stemdeck:verb_send_L") }
    #expect(gone)
    #expect(!deck.lines.contains { $0.hasPrefix("error: ") }, "\(deck.transcript)")
  }

  @Test(
    "live: a bus's post-fader send at -6 dB reaches stemdeck:verb_send_L/R at the bus's level -6 dB; a pre-fader one ignores the bus's fader"
  )
  func busSendLive() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir()
    try writeSine(dir.file("tone.wav"), sampleRate: 48000, seconds: 1, frequencies: [1000], amplitude: 0.25)
    let deck = try StemdeckProcess(server: server)
    defer { deck.kill() }
    for line in [
      "add \(dir.file("tone.wav")) as tone", "loops tone -1", "bus add drums_bus", "route tone drums_bus", "send add verb",
      "send drums_bus verb -6dB post", "play"
    ] {
      try await deck.run(line)
    }
    let appeared = try await eventually(timeout: 5, interval: 0.05) { try await server.ports().contains("stemdeck:verb_send_L") }
    #expect(appeared)
    // The bus at unity and centred passes the stem's 0.25 · cos(π/4) a side; then −6 dB.
    let expected = Float(0.25 * cos(Double.pi / 4) * pow(10, -6.0 / 20))
    let post = try await Self.sendPeaks(server, dir)
    #expect(abs(post.0 - expected) < expected * 0.01 && abs(post.1 - expected) < expected * 0.01, "\(post), want \(expected)")
    // Pre-fader: the bus at -20 dB changes nothing in the send.
    try await deck.run("vol drums_bus -20dB")
    try await deck.run("send drums_bus verb -6dB pre")
    let pre = try await Self.sendPeaks(server, dir)
    #expect(abs(pre.0 - expected) < expected * 0.01 && abs(pre.1 - expected) < expected * 0.01, "\(pre), want \(expected)")
    #expect(!deck.lines.contains { $0.hasPrefix("error: ") }, "\(deck.transcript)")
  }

  @Test(
    "live: 'sends' shows the external loop's latency JACK reports (jack_latent_client 256 between send and return), 'not connected' before")
  func returnLatencyLive() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let deck = try StemdeckProcess(server: server)
    defer { deck.kill() }
    try await deck.run("send add verb")
    let before = try await deck.run("sends")
    #expect(before.contains { $0.hasPrefix("verb: loop not connected") }, "\(before)")
    // jackd2's example client: latent:input → latent:output, declaring 256 frames through its
    // latency callback. It connects itself to the system ports; those links are taken away.
    let effect = try ChildProcess("/usr/bin/jack_latent_client", ["256"], environment: server.environment)
    defer { effect.terminate(grace: 2) }
    let up = try await eventually(timeout: 10, interval: 0.05) {
      let ports = try await server.ports()
      return ports.contains("latent:input") && ports.contains("latent:output")
    }
    try #require(up, "jack_latent_client did not start: \(effect.stderrLines.joined(separator: "\n"))")
    _ = try await eventually(timeout: 5, interval: 0.05) {
      let links = try await server.connections()
      return !(links["latent:input"] ?? []).isEmpty && !(links["latent:output"] ?? []).isEmpty
    }
    let links = try await server.connections()
    for port in links["latent:input"] ?? [] { try await deck.run("disconnect \(port) latent:input") }
    for port in links["latent:output"] ?? [] { try await deck.run("disconnect latent:output \(port)") }
    try await deck.run("connect verb_send_L latent:input")
    let half = try await deck.run("sends")
    #expect(half.contains { $0.hasPrefix("verb: loop not connected") }, "\(half)")
    try await deck.run("connect latent:output verb_return_L")
    var last: [String] = []
    let shown = try await eventually(timeout: 5, interval: 0.1) {
      last = try await deck.run("sends")
      return last.contains("verb: return latency 256 frames (5.3 ms)")
    }
    #expect(shown, "\(last)")
    #expect(!deck.lines.contains { $0.hasPrefix("error: ") }, "\(deck.transcript)")
  }
}
