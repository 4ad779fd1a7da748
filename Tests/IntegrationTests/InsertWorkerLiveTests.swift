import Foundation
import StemdeckAudioFile
import StemdeckTestSupport
import Testing

// The LV2 worker live: convoLV2 (x42-plugins) loads its impulse response on stemdeck's worker
// thread while a tone plays on a private JACK server (the file named through a patch:Set on
// its control input, the plugin's `work` off the audio thread, its response back in `run`), and
// `save` keeps the file beside the session (the plugin's own state, mapped to a relative path).
extension JackIntegrationTests {
  @Test("live: convoLV2 loads an impulse response on the worker thread while playing; save keeps it beside the session")
  func workerLoadsWhilePlaying() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir()
    let elsewhere = try IntegrationTempDir()
    try writeSine(dir.file("tone.wav"), sampleRate: 48000, seconds: 1, frequencies: [1000], amplitude: 0.25)
    // A unit impulse: convoLV2 then plays the input at its own impulse gain (0.5, −6.02 dB).
    let ir = elsewhere.file("room.wav")
    var impulse = [Float](repeating: 0, count: 64)
    impulse[0] = 1
    let writer = try SoundFileWriter(path: ir, format: .wavFloat, sampleRate: 48000, channelCount: 1)
    try impulse.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frameCount: 64) }
    writer.flush()

    let p = try StemdeckProcess(server: server, extra: ["--keep-going"])
    defer { p.kill() }
    try await p.run("add \(dir.file("tone.wav")) as tone")
    try await p.run("loops tone -1")
    try await p.run("play")
    try await p.run("insert add master http://gareus.org/oss/lv2/convoLV2#Mono")  // two linked instances
    // Silent until it has an impulse response.
    var last: Double?
    let silent = try await eventually(timeout: 5, interval: 0.05) {
      try await p.run("meters reset")
      last = Self.masterPeak(try await p.run("meters master"))
      return last.map { $0 < -100 } ?? true
    }
    #expect(silent, "before the impulse response: master peak \(String(describing: last)) dB\n\(p.transcript)")
    try await p.run("insert set master 1 impulse \(ir)")
    // A mono 0.25 sine in the centre is −15.05 dB per side; through the convolver, −21.07.
    let loaded = try await eventually(timeout: 10, interval: 0.05) {
      try await p.run("meters reset")
      last = Self.masterPeak(try await p.run("meters master"))
      return last.map { abs($0 - -21.07) < 0.3 } ?? false
    }
    #expect(loaded, "after the impulse response: master peak \(String(describing: last)) dB\n\(p.transcript)")
    try await p.run("save \(dir.file("show.json"))")
    let kept = dir.file("show-files/room.wav")
    #expect(FileManager.default.contentsEqual(atPath: kept, andPath: ir), "the impulse response is not beside the session")
    let text = try String(contentsOfFile: dir.file("show.json"), encoding: .utf8)
    #expect(text.contains("\"text\" : \"show-files/room.wav\""), "\(text)")
    #expect(try await p.finish(timeout: 20) == 0, "\(p.transcript)")
  }
}
