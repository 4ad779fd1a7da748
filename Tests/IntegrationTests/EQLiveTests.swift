import Foundation
import StemdeckAudioFile
import StemdeckTestSupport
import Testing

// The channel EQ live: a session with EQ'd stems and master played on a private JACK server
// (dummy driver) and recorded with jack_capture equals its offline render.
extension JackIntegrationTests {
  @Test("EQ'd stems and master: the live master (jack_capture) equals the offline render")
  func eqLiveEqualsOffline() async throws {
    let binary = try StemdeckBinary.require()
    let dir = try IntegrationTempDir()
    try writeSine(dir.file("mono.wav"), sampleRate: 48000, seconds: 1.5, frequencies: [110], amplitude: 0.5)
    try writeSine(dir.file("stereo.wav"), sampleRate: 48000, seconds: 2, frequencies: [330, 4400], amplitude: 0.4)
    try writeSine(dir.file("cd.wav"), sampleRate: 44100, seconds: 1, frequencies: [1000], amplitude: 0.3)
    let session = dir.file("session.json")
    try writeSession(
      session, masterVolume: 0.9, masterEQ: #"{ "mid" : { "frequency" : 2000, "gain" : 4, "q" : 1.2 } }"#,
      stems: [
        SessionStem(
          name: "mono", file: "mono.wav", volume: 0.8, pan: -0.4, loops: 1,
          eq: #"{ "hpf" : { "frequency" : 150, "slope" : 24 }, "low" : { "frequency" : 100, "gain" : 6 } }"#),
        SessionStem(
          name: "stereo", file: "stereo.wav", volume: 0.7, pan: 0.25,
          eq: #"{ "mid" : { "frequency" : 400, "gain" : -9, "q" : 2 }, "high" : { "frequency" : 3000, "gain" : -12 } }"#),
        SessionStem(name: "cd", file: "cd.wav", volume: 0.6, pan: 0.5, loops: 2, eq: #"{ "hpf" : { "frequency" : 300 } }"#)
      ])
    let render = try await renderOffline(binary, session, to: dir.file("render.wav"))
    #expect(abs(render.frames - 3 * 48000) <= 1, "render length \(render.frames) frames")

    _ = try await playLiveAndCompare(session, stems: 3, with: render, dir: dir)
  }
}

extension JackIntegrationTests {
  /// The master's left peak in dB from a `meters master` line (`master … L peak  -15.1 avg …`).
  static func masterPeak(_ lines: [String]) -> Double? {
    guard let line = lines.last(where: { $0.hasPrefix("master ") && $0.contains("L peak") }), let range = line.range(of: "L peak ") else {
      return nil
    }
    return Double(line[range.upperBound...].drop { $0 == " " }.prefix { $0 != " " })
  }

  @Test("script mode, live: eq commands change what plays (a +12 dB mid at the tone's frequency), eq off restores it")
  func eqCommandsLive() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir()
    try writeSine(dir.file("tone.wav"), sampleRate: 48000, seconds: 1, frequencies: [1000], amplitude: 0.25)
    let p = try StemdeckProcess(server: server)
    defer { p.kill() }
    // Each meter reading follows a reset and a wait, so it sees only the setting before it.
    for line in [
      "add \(dir.file("tone.wav")) as tone", "loops tone -1", "play", "wait 0.3",
      "meters reset", "wait 0.4", "meters master",
      "eq tone mid 1k +12dB q 1", "eq tone", "wait 0.2", "meters reset", "wait 0.4", "meters master",
      "eq tone off", "wait 0.2", "meters reset", "wait 0.4", "meters master", "stems"
    ] { p.send(line) }
    #expect(try await p.finish(timeout: 20) == 0, "\(p.transcript)")
    let readings = p.lines.indices.filter { p.lines[$0].hasPrefix("master ") && p.lines[$0].contains("L peak") }.map {
      Self.masterPeak(Array(p.lines[...$0]))
    }
    try #require(readings.count == 3 && readings.allSatisfy { $0 != nil }, "\(p.transcript)")
    let plain = readings[0]!, boosted = readings[1]!, off = readings[2]!
    // A mono 0.25 sine in the centre: -15 dB per side; +12 dB at its own frequency: -3 dB.
    #expect(abs(plain - -15.05) < 0.3, "\(p.transcript)")
    #expect(abs(boosted - plain - 12) < 0.3, "\(p.transcript)")
    #expect(abs(off - plain) < 0.3, "\(p.transcript)")
    #expect(p.lines.contains("tone eq: mid 1000 Hz +12 dB q 1"), "\(p.transcript)")
    #expect(!p.lines.contains { $0.hasPrefix("error: ") }, "\(p.transcript)")
  }
}
