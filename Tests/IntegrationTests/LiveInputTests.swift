import Foundation
import StemdeckAudioFile
import StemdeckTestSupport
import Testing

// Live input channels (issue 22, item 3) on a private JACK server: a real JACK peer (a
// python3-jack-client tone generator) feeds `stemdeck:mic_in`, jack_capture records the master.
extension JackIntegrationTests {
  /// A JACK client with one output, `NAME:out`, playing a sine (FREQ Hz, amplitude AMP) from
  /// its first period; it prints "ready" once active and runs until its stdin closes.
  static let tonePeer = #"""
    import jack, sys
    import numpy as np
    client = jack.Client(sys.argv[1], no_start_server=True)
    out = client.outports.register("out")
    freq, amp = float(sys.argv[2]), float(sys.argv[3])
    phase = [0]
    @client.set_process_callback
    def process(frames):
        n = np.arange(phase[0], phase[0] + frames)
        out.get_array()[:] = amp * np.sin(2 * np.pi * freq * n / client.samplerate)
        phase[0] += frames
    client.activate()
    print("ready", flush=True)
    sys.stdin.read()
    """#

  /// The tone peer as JACK client `tone`, a 1 kHz sine at 0.5 on `tone:out`, running and ready.
  static func startTonePeer(_ server: PrivateJackServer, _ dir: IntegrationTempDir) async throws -> ChildProcess {
    try await startPythonPeer(
      tonePeer, file: dir.file("tone.py"), arguments: ["tone", "1000", "0.5"], server: server, what: "the tone peer")
  }

  /// The largest |sample| of each channel after the first `skip` frames.
  static func peaks(_ audio: AudioData, skip: Int) -> (left: Float, right: Float) {
    var peak: (Float, Float) = (0, 0)
    for f in skip..<audio.frames { peak = (max(peak.0, abs(audio.sample(f, 0))), max(peak.1, abs(audio.sample(f, 1)))) }
    return peak
  }

  @Test(
    "a live input: a JACK peer into stemdeck:mic_in (and keys_in_R) reaches the master at its volume and pan with the transport stopped; mute silences it; the session reopens its port and connection"
  )
  func liveInputReachesMaster() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir()
    let peer = try await Self.startTonePeer(server, dir)
    defer { peer.terminate(grace: 2) }

    let deck = try StemdeckProcess(server: server)
    defer { deck.kill() }
    try await deck.run("input add mic mono")
    try await deck.run("input add keys stereo")
    let ports = try await server.ports()
    #expect(ports.contains("stemdeck:mic_in") && ports.contains("stemdeck:keys_in_L") && ports.contains("stemdeck:keys_in_R"), "\(ports)")
    try await deck.run("connect tone:out mic_in")
    try await deck.run("vol mic 0.5")
    try await deck.run("pan mic -0.5")
    let session = dir.file("inputs.json")
    try await deck.run("save \(session)")
    #expect(try await deck.status()["state"] != "playing")

    // Mono constant power at pan -0.5: θ = π/8; 0.5 (tone) × 0.5 (volume) × (cos θ, sin θ).
    let expected = (left: Float(0.25 * cos(Double.pi / 8)), right: Float(0.25 * sin(Double.pi / 8)))
    func capture(_ name: String) async throws -> AudioData {
      let path = dir.file(name)
      let run = try server.startCapture(ports: ["stemdeck:master_L", "stemdeck:master_R"], seconds: 1, to: path, hookDir: dir)
      _ = try await run.finish(timeout: 15)
      return try readAudio(path)
    }
    let open = try await capture("open.wav")
    try #require(open.frames > 24000, "capture too short: \(open.frames) frames")
    let heard = Self.peaks(open, skip: 4800)
    #expect(abs(heard.left - expected.left) < 0.003, "left \(heard.left), expected \(expected.left)")
    #expect(abs(heard.right - expected.right) < 0.003, "right \(heard.right), expected \(expected.right)")
    // What the mixer reads on the strip's meter agrees (post-fader; a mono strip shows its left
    // side, as a mono stem's: 20·log10(0.231) = -12.7 dB).
    let meter = try await deck.run("meters mic").first { $0.hasPrefix("mic ") } ?? ""
    #expect(meter.contains("M peak  -12.7"), "\(meter)")

    // The stereo input's right port alone (balance at the centre passes it unchanged): the right
    // side only, while the microphone is muted.
    try await deck.run("mute mic")
    try await deck.run("connect tone:out keys_in_R")
    try await deck.run("vol keys 0.5")
    try await deck.run("wait 0.1")
    let right = Self.peaks(try await capture("keys.wav"), skip: 4800)
    #expect(right.left == 0 && abs(right.right - 0.25) < 0.003, "keys_in_R alone: \(right)")
    try await deck.run("mute keys")
    try await deck.run("wait 0.1")
    let muted = try await capture("muted.wav")
    let silent = Self.peaks(muted, skip: 0)
    #expect(silent.left == 0 && silent.right == 0, "muted: \(silent)")

    try await deck.run("input remove keys")
    let gone = try await eventually(timeout: 5) { !(try await server.ports()).contains("stemdeck:keys_in_L") }
    #expect(gone, "keys_in_L still registered")
    #expect(try await deck.finish() == 0, "\(deck.transcript)")

    // The saved session registers the input again and restores its connection.
    let reopened = try StemdeckProcess(server: server, session: session)
    defer { reopened.kill() }
    let lines = try await reopened.run("inputs")
    #expect(lines.contains { $0.hasPrefix("mic ") && $0.contains("0.50") && $0.contains("-0.50") }, "\(reopened.transcript)")
    var graph: [String: Set<String>] = [:]
    let restored = try await eventually(timeout: 5) {
      graph = try await server.connections()
      return graph["stemdeck:mic_in"] == ["tone:out"]
    }
    #expect(restored, "\(graph)")
    let again = Self.peaks(try await capture("again.wav"), skip: 4800)
    #expect(abs(again.left - expected.left) < 0.003, "after reopening: \(again)")
    #expect(try await reopened.finish() == 0, "\(reopened.transcript)")
  }
}
