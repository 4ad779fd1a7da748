import Foundation
import StemdeckAudioFile
import StemdeckTestSupport
import Testing

// The click and the count-in live (issue 42, item 1): on a private JACK server (dummy driver),
// jack_capture records stemdeck:click_L and master_L in one take, so their frames line up.
extension JackIntegrationTests {
  @Test(
    "live: 'click on' + 'countin 1' at 240 bpm puts the click on stemdeck:click_L/R (not the master) and the stems start 48,000 frames (1 bar) after the first click, to the sample"
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
    for line in ["add \(dir.file("dc.wav")) as dc", "tempo 240 4", "click on", "countin 1"] { try await deck.run(line) }
    let appeared = try await eventually(timeout: 5, interval: 0.05) {
      let ports = try await server.ports()
      return ports.contains("stemdeck:click_L") && ports.contains("stemdeck:click_R")
    }
    let ports = try await server.ports()
    try #require(appeared, "no click ports: \(ports)\n\(deck.transcript)")
    let path = dir.file("click-and-master.wav")
    let capture = try server.startCapture(ports: ["stemdeck:click_L", "stemdeck:master_L"], seconds: 3, to: path, hookDir: dir)
    for port in ["stemdeck:click_L", "stemdeck:master_L"] {
      let hooked = try await server.waitForConnection(port, timeout: 5) { $0.hasPrefix("jack_capture") }
      try #require(hooked, "jack_capture did not connect to \(port); log:\n\(capture.log)")
    }
    try await deck.run("play")
    _ = try await capture.finish(timeout: 15)
    let audio = try readAudio(path)
    try #require(audio.channels == 2 && audio.frames > 100_000, "\(audio.frames) frames")
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
    #expect(!deck.lines.contains { $0.hasPrefix("error: ") }, "\(deck.transcript)")
  }
}
