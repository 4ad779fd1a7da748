import Foundation
import StemdeckAudioFile
import StemdeckTestSupport
import Testing

// A live input's direct outs and takes (issue 22, item 3) on a private JACK server: a JACK peer
// feeds `stemdeck:mic_in`; jack_capture records `mic_L/R`, a bus's direct outs and the master at
// once; `record from mic` records the strip into a take.
extension JackIntegrationTests {
  @Test(
    "an input's direct outs: ports stemdeck:mic_L/R carry the strip post-fader and take it out of the master (a bus's direct outs beside it); saved and reopened; off brings it back"
  )
  func inputDirectOut() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir()
    let peer = try await Self.startTonePeer(server, dir)
    defer { peer.terminate(grace: 2) }
    try writeSine(dir.file("stem.wav"), sampleRate: 48000, seconds: 1, frequencies: [500], amplitude: 0.25)

    let deck = try StemdeckProcess(server: server)
    defer { deck.kill() }
    for line in [
      "input add mic mono", "connect tone:out mic_in", "vol mic 0.5", "directout mic on",
      "add \(dir.file("stem.wav")) as stem", "loops stem -1", "bus add b", "route stem b", "directout b on", "play"
    ] {
      try await deck.run(line)
    }
    let appeared = try await eventually(timeout: 5, interval: 0.05) {
      let ports = try await server.ports()
      return ["mic_L", "mic_R", "b_L", "b_R"].allSatisfy { ports.contains("stemdeck:" + $0) }
    }
    let portList = try await server.ports()
    #expect(appeared, "\(portList)")
    func capture(_ name: String, _ ports: [String]) async throws -> AudioData {
      let path = dir.file(name)
      let run = try server.startCapture(ports: ports.map { "stemdeck:" + $0 }, seconds: 1, to: path, hookDir: dir)
      _ = try await run.finish(timeout: 15)
      return try readAudio(path)
    }
    func peak(_ audio: AudioData, _ channel: Int) -> Float {
      var p: Float = 0
      for f in 4800..<audio.frames { p = max(p, abs(audio.sample(f, channel))) }
      return p
    }
    let path = dir.file("direct.wav")
    let run = try server.startCapture(
      ports: ["mic_L", "mic_R", "b_L", "b_R", "master_L", "master_R"].map { "stemdeck:" + $0 }, seconds: 1, to: path, hookDir: dir)
    let captureXruns = try await run.finish(timeout: 15).xruns
    let audio = try readAudio(path)
    try #require(audio.channels == 6 && audio.frames > 24000, "capture: \(audio.channels) channels, \(audio.frames) frames")
    // Mono at the centre, constant power: 0.5 (tone) × 0.5 (volume) × cos(π/4); the stem through
    // the bus: 0.25 × cos(π/4). The master hears neither.
    let centre = Float(cos(Double.pi / 4))
    for (channel, expected) in [(0, 0.25 * centre), (1, 0.25 * centre), (2, 0.25 * centre), (3, 0.25 * centre)] {
      #expect(abs(peak(audio, channel) - expected) < 0.003, "channel \(channel): \(peak(audio, channel)), expected \(expected)")
    }
    #expect(peak(audio, 4) == 0 && peak(audio, 5) == 0, "master: \(peak(audio, 4)), \(peak(audio, 5))")
    // The strip's samples are the tone's, scaled: a 1 kHz sine at 48 kHz repeats every 48 frames.
    // A period the server reported missed (an xrun: the Python peer was late) breaks the tone's
    // phase there; anywhere else a difference is stemdeck's.
    let glitches = toneGlitches(audio, channel: 0, from: 4800, framesPerCycle: 48, blockSize: server.period)
    #expect(
      glitches.count <= 2 * captureXruns,
      "mic_L is not the tone in \(glitches.count) periods (at frames \(glitches.prefix(8))); the capture saw \(captureXruns) xruns")

    // `routes`: the mixer graph, with the input and the bus on their direct outs.
    let routes = try await deck.run("routes")
    #expect(
      routes.contains("mixer graph:") && routes.contains("master ← mic (direct outs mic_L/R)")
        && routes.contains("  ← bus b (direct outs b_L/R): stem"), "\(routes)")
    let session = dir.file("direct.json")
    try await deck.run("save \(session)")
    let text = try String(contentsOfFile: session, encoding: .utf8)
    #expect(text.contains(#""name" : "mic""#) && text.contains(#""directOut" : true"#), "\(text)")
    try await deck.run("directout mic off")
    let gone = try await eventually(timeout: 5, interval: 0.05) { try await !server.ports().contains("stemdeck:mic_L") }
    #expect(gone)
    try await deck.run("wait 0.1")
    let back = try await capture("back.wav", ["master_L", "master_R"])
    #expect(abs(peak(back, 0) - 0.25 * centre) < 0.003, "master after directout off: \(peak(back, 0))")
    #expect(!deck.lines.contains { $0.hasPrefix("error: ") }, "\(deck.transcript)")
    #expect(try await deck.finish() == 0, "\(deck.transcript)")

    // The saved session registers the direct outs again.
    let reopened = try StemdeckProcess(server: server, session: session)
    defer { reopened.kill() }
    let again = try await eventually(timeout: 5, interval: 0.05) {
      let ports = try await server.ports()
      return ports.contains("stemdeck:mic_L") && ports.contains("stemdeck:mic_R")
    }
    let reopenedPorts = try await server.ports()
    #expect(again, "\(reopenedPorts)")
    #expect(try await reopened.finish() == 0, "\(reopened.transcript)")
  }

  @Test(
    "a take recorded from an input strip (record t1 from mic, record mic): the fed tone after the EQ, before the fader and pan; kept as a stem"
  )
  func inputStripTake() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir()
    let peer = try await Self.startTonePeer(server, dir)
    defer { peer.terminate(grace: 2) }
    try writeSession(dir.file("takes.json"), stems: [])
    let deck = try StemdeckProcess(server: server, session: dir.file("takes.json"))
    defer { deck.kill() }
    // The fader, pan and mute do not reach the take; the strip's signal is the tone itself.
    for line in ["input add mic mono", "connect tone:out mic_in", "vol mic 0.25", "pan mic -1", "mute mic"] {
      try await deck.run(line)
    }
    try await deck.run("record t1 from mic")
    try await deck.run("wait 1.2")
    try await deck.run("record stop")
    let recorded = await deck.waitForLine(containing: "take 't1' recorded", timeout: 5)
    #expect(recorded != nil, "\(deck.transcript)")
    let stems = try await deck.run("stems")
    #expect(stems.contains { $0.hasPrefix("t1 ") }, "\(stems)")
    let take = try readAudio(dir.file("t1.wav"))
    try #require(take.channels == 2 && take.frames > 36000, "take: \(take.channels) channels, \(take.frames) frames")
    // What was fed: 0.5 · sin(2π · 1000 · n / 48000 + φ), both sides. A quarter period (12
    // frames) apart, sin² + cos² gives the amplitude back at every frame, whatever φ is.
    // Periods the server reported missed (xruns: the Python peer was late) break the tone's phase
    // there; anywhere else a difference is stemdeck's.
    var off: Set<Int> = []
    for f in 0..<(take.frames - 12) {
      let a = take.sample(f, 0), b = take.sample(f + 12, 0)
      if max(abs((a * a + b * b).squareRoot() - 0.5), abs(take.sample(f, 1) - a)) >= 1e-4 { off.insert(f / server.period) }
    }
    let xruns = Int(try await deck.status()["xruns"] ?? "") ?? 0
    #expect(
      off.count <= 2 * xruns,
      "the take differs from the fed tone in \(off.count) periods (\(off.sorted().prefix(8))); stemdeck saw \(xruns) xruns")

    // `record mic`: the next take name, the same strip.
    let started = try await deck.run("record mic")
    #expect(started.contains { $0.contains("recording 'take-1' from input mic") }, "\(deck.transcript)")
    try await deck.run("wait 0.3")
    try await deck.run("record stop")
    let second = await deck.waitForLine(containing: "take 'take-1' recorded", timeout: 5)
    #expect(second != nil, "\(deck.transcript)")
    #expect(!deck.lines.contains { $0.hasPrefix("error: ") }, "\(deck.transcript)")
    #expect(try await deck.finish() == 0, "\(deck.transcript)")
  }
}

/// The blocks (frame / `blockSize`) of `channel` from frame `from` on where the signal differs from
/// itself one cycle later (a steady tone of `framesPerCycle` frames) by 1e-4 or more.
func toneGlitches(_ audio: AudioData, channel: Int, from: Int, framesPerCycle: Int, blockSize: Int) -> [Int] {
  var blocks: Set<Int> = []
  for f in from..<max(from, audio.frames - framesPerCycle)
  where abs(audio.sample(f, channel) - audio.sample(f + framesPerCycle, channel)) >= 1e-4 {
    blocks.insert(f / blockSize)
  }
  return blocks.sorted()
}
