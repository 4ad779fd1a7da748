import Foundation
import StemdeckAudioFile
import StemdeckTestSupport
import Testing

// The click and the count-in live (issue 42, item 1): on a private JACK server (dummy driver),
// jack_capture records stemdeck:click_L and master_L in one take, so their frames line up.
extension JackIntegrationTests {
  @Test(
    "live: 'click on' + 'countin 1' at 240 bpm puts the click on stemdeck:click_L/R (not the master) and the stems start 48,000 frames (1 bar) after the first click, to the sample; 'cue dc' puts the stem on cue_L at unity from the same frame"
  )
  func clickCountInLive() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir()
    // A constant stem: non-zero from its first frame, so the first sound on the master is its start.
    let frames = 48000
    let dc = [Float](repeating: 0.5, count: frames)
    let writer = try SoundFileWriter(path: dir.file("dc.wav"), format: .wavFloat, sampleRate: 48000, channelCount: 1)
    try dc.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frameCount: frames) }
    writer.flush()
    let deck = try StemdeckProcess(server: server)
    defer { deck.kill() }
    for line in ["add \(dir.file("dc.wav")) as dc", "tempo 240 4", "click on", "countin 1", "vol dc -6dB", "cue dc"] {
      try await deck.run(line)
    }
    let appeared = try await eventually(timeout: 5, interval: 0.05) {
      let ports = try await server.ports()
      return ["click_L", "click_R", "cue_L", "cue_R"].allSatisfy { ports.contains("stemdeck:" + $0) }
    }
    let ports = try await server.ports()
    try #require(appeared, "no click ports: \(ports)\n\(deck.transcript)")
    let path = dir.file("click-and-master.wav")
    let captured = ["stemdeck:click_L", "stemdeck:master_L", "stemdeck:cue_L"]
    let capture = try server.startCapture(ports: captured, seconds: 3, to: path, hookDir: dir)
    for port in captured {
      let hooked = try await server.waitForConnection(port, timeout: 5) { $0.hasPrefix("jack_capture") }
      try #require(hooked, "jack_capture did not connect to \(port); log:\n\(capture.log)")
    }
    try await deck.run("play")
    _ = try await capture.finish(timeout: 15)
    let audio = try readAudio(path)
    try #require(audio.channels == 3 && audio.frames > 100_000, "\(audio.channels) channels, \(audio.frames) frames")
    let click = (0..<audio.frames).map { audio.sample($0, 0) }
    let master = (0..<audio.frames).map { audio.sample($0, 1) }
    // A burst starts on a zero sample (sin 0): the first click is one frame before its first sound.
    let firstSound = try #require(click.firstIndex { $0 != 0 }, "no click captured\n\(deck.transcript)")
    let firstClick = firstSound - 1
    let stemStart = try #require(master.firstIndex { $0 != 0 }, "the stem never started\n\(deck.transcript)")
    // 240 bpm: 12,000 frames a beat; 1 bar of 4 is 48,000 frames.
    #expect(stemStart - firstClick == 48000, "the stems start \(stemStart - firstClick) frames after the first click")
    // The click's beats: 4 of the count-in, then the song's from its start (the master holds none).
    var bursts: [Int] = []
    var quiet = firstClick
    for i in firstClick..<click.count where click[i] != 0 {
      if bursts.isEmpty || i - quiet > 1000 { bursts.append(i - 1) }
      quiet = i
    }
    let expected = (0..<6).map { firstClick + 12000 * $0 }
    #expect(Array(bursts.prefix(6)) == expected, "click onsets \(bursts)")
    #expect(master[stemStart...].allSatisfy { $0 == master[stemStart] || $0 == 0 }, "the master holds the stem alone, no click")
    // The cue (PFL): the stem before its -6 dB fader and pan, from the frame it starts on.
    let cue = (0..<audio.frames).map { audio.sample($0, 2) }
    #expect(cue.firstIndex { $0 != 0 } == stemStart)
    #expect(cue[stemStart..<(stemStart + 48000)].allSatisfy { $0 == 0.5 }, "PFL: the stem's 0.5 at unity")
    #expect(!deck.lines.contains { $0.hasPrefix("error: ") }, "\(deck.transcript)")
  }

  @Test(
    "live: 'goto chorus' while playing at 240 bpm jumps on the next bar line: on master_L the frame before it is the old position's, the bar line's the mark's (issue 42, item 2)"
  )
  func gotoBarLive() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir()
    // A ramp: frame i is (i + 1) / 2^19, so every captured frame says where the stem is.
    let frames = 192_000
    let ramp = (0..<frames).map { Float($0 + 1) / 524288 }
    let writer = try SoundFileWriter(path: dir.file("ramp.wav"), format: .wavFloat, sampleRate: 48000, channelCount: 1)
    try ramp.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frameCount: frames) }
    writer.flush()
    let deck = try StemdeckProcess(server: server)
    defer { deck.kill() }
    // 240 bpm in 4/4: a bar is 48,000 frames; the mark is bar 4's first frame (3 s: 144,000).
    for line in ["add \(dir.file("ramp.wav")) as ramp", "tempo 240 4", "mark add chorus at bar 4"] {
      try await deck.run(line)
    }
    let path = dir.file("jump.wav")
    let capture = try server.startCapture(ports: ["stemdeck:master_L"], seconds: 2.5, to: path, hookDir: dir)
    let hooked = try await server.waitForConnection("stemdeck:master_L", timeout: 5) { $0.hasPrefix("jack_capture") }
    try #require(hooked, "jack_capture did not connect to master_L; log:\n\(capture.log)")
    try await deck.run("play")
    let playing = try await eventually(timeout: 5) { try await deck.run("status").contains("state: playing") }
    try #require(playing, "the transport never started\n\(deck.transcript)")
    // Well before bar 2 (the 0.25 s lead passes by 1 s): it lands there, on transport frame 48,000.
    let said = try await deck.run("goto chorus")
    try #require(said.contains { $0.hasPrefix("jumping to 'chorus' (0:03.000) at 0:01.000") }, "\(said)\n\(deck.transcript)")
    let recorded = try await capture.finish(timeout: 15)
    let underruns = try await deck.status()["underruns"] ?? "?"
    let audio = try readAudio(path)
    let master = (0..<audio.frames).map { audio.sample($0, 0) }
    let start = try #require(master.firstIndex { $0 != 0 }, "the stem never started\n\(deck.transcript)")
    let gain = Double(master[start]) * 524288  // the pan law's gain on the mono stem
    func heard(_ t: Int) -> Double { gain * Double(t + 1) / 524288 }
    func near(_ i: Int, _ t: Int) -> Bool { i >= 0 && i < master.count && abs(Double(master[i]) - heard(t)) < 1e-7 }
    // Every captured frame says which transport frame it is (the ramp), so the jump's frame is
    // read from the audio itself, whatever periods jack_capture may have lost elsewhere on a
    // loaded machine: the frame before the mark's first must be transport frame 47,999.
    let why = "jack_capture xruns \(recorded.xruns), stemdeck underruns \(underruns)"
    let landed = try #require(master.indices.first { near($0, 144_000) }, "the mark's first frame never came (\(why))")
    #expect(
      near(landed - 1, 47_999), "the frame before the jump is \(master[landed - 1]), not transport frame 47,999's \(heard(47_999)) (\(why))"
    )
    #expect((1..<2_400).allSatisfy { near(landed - $0, 48_000 - $0) && near(landed + $0, 144_000 + $0) }, "gapless around it (\(why))")
    if recorded.xruns == 0 { #expect(landed - start == 48_000, "with no frame lost, it is 48,000 frames (1 bar) after the start") }
    #expect(!deck.lines.contains { $0.hasPrefix("error: ") }, "\(deck.transcript)")
  }
}
