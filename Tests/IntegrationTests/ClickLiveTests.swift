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
}
