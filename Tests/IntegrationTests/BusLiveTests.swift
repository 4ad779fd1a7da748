import Foundation
import StemdeckAudioFile
import StemdeckTestSupport
import Testing

// Buses live: a session with stems routed into nested buses (EQ, volume, balance) played on a
// private JACK server (dummy driver) and recorded with jack_capture equals its offline render;
// a bus's direct outs are real JACK ports that take the bus out of the master.
extension JackIntegrationTests {
  @Test("stems into nested buses with EQ, volume and pan: the live master (jack_capture) equals the offline render")
  func busesLiveEqualOffline() async throws {
    let binary = try StemdeckBinary.require()
    let dir = try IntegrationTempDir()
    try writeSine(dir.file("kick.wav"), sampleRate: 48000, seconds: 1.5, frequencies: [110], amplitude: 0.5)
    try writeSine(dir.file("snare.wav"), sampleRate: 48000, seconds: 2, frequencies: [330, 4400], amplitude: 0.4)
    try writeSine(dir.file("bass.wav"), sampleRate: 44100, seconds: 1, frequencies: [1000], amplitude: 0.3)
    let session = dir.file("session.json")
    try writeSession(
      session, masterVolume: 0.9, masterEQ: #"{ "mid" : { "frequency" : 2000, "gain" : 4, "q" : 1.2 } }"#,
      stems: [
        SessionStem(name: "kick", file: "kick.wav", volume: 0.8, pan: -0.4, loops: 1, bus: "drums_bus"),
        SessionStem(
          name: "snare", file: "snare.wav", volume: 0.7, pan: 0.25, eq: #"{ "mid" : { "frequency" : 400, "gain" : -9, "q" : 2 } }"#,
          bus: "drums_bus"),
        SessionStem(name: "bass", file: "bass.wav", volume: 0.6, pan: 0.5, loops: 2)
      ],
      buses: [
        #"{ "name" : "drums_bus", "volume" : 0.7, "pan" : -0.3, "mute" : false, "solo" : false, "eq" : { "hpf" : { "frequency" : 150, "slope" : 24 }, "high" : { "frequency" : 3000, "gain" : -6 } }, "bus" : "band" }"#,
        #"{ "name" : "band", "volume" : 1.2, "pan" : 0.2, "mute" : false, "solo" : false, "eq" : { "low" : { "frequency" : 100, "gain" : 5 } } }"#
      ])
    let render = try await renderOffline(binary, session, to: dir.file("render.wav"))
    #expect(abs(render.frames - 3 * 48000) <= 1, "render length \(render.frames) frames")

    let compared = try await playLiveAndCompare(session, stems: 3, with: render, dir: dir)
    print("buses live vs offline: max difference \(compared.maxDiff) over \(compared.overlap) frames")
  }

  @Test("script mode, live: bus commands; a bus's direct outs are ports stemdeck:NAME_L/R and take it out of the master")
  func busCommandsLive() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir()
    try writeSine(dir.file("tone.wav"), sampleRate: 48000, seconds: 1, frequencies: [1000], amplitude: 0.25)
    let deck = try StemdeckProcess(server: server)
    defer { deck.kill() }
    for line in ["add \(dir.file("tone.wav")) as tone", "loops tone -1", "bus add drums_bus", "route tone drums_bus", "play", "wait 0.3"] {
      try await deck.run(line)
    }
    // Through the bus, at unity: the tone on the master (a centred mono 0.25 sine: -15 dB a side).
    try await deck.run("meters reset")
    try await deck.run("wait 0.4")
    let before = try await deck.run("meters master")
    let plain = try #require(Self.masterPeak(before), "\(deck.transcript)")
    #expect(abs(plain - -15.05) < 0.3, "\(deck.transcript)")
    try await deck.run("vol drums_bus -6dB")
    try await deck.run("wait 0.1")
    try await deck.run("meters reset")
    try await deck.run("wait 0.4")
    let lowered = try await deck.run("meters master")
    let lower = try #require(Self.masterPeak(lowered), "\(deck.transcript)")
    #expect(abs(lower - plain + 6) < 0.3, "\(deck.transcript)")
    // Direct outs: the ports appear, the master goes silent, the bus meter still reads the tone.
    try await deck.run("directout drums_bus on")
    let appeared = try await eventually(timeout: 5, interval: 0.05) {
      let ports = try await server.ports()
      return ports.contains("stemdeck:drums_bus_L") && ports.contains("stemdeck:drums_bus_R")
    }
    let ports = try await server.ports()
    #expect(appeared, "\(ports)")
    try await deck.run("wait 0.1")
    try await deck.run("meters reset")
    try await deck.run("wait 0.4")
    let quiet = try await deck.run("meters master")
    let silent = try #require(Self.masterPeak(quiet), "\(deck.transcript)")
    #expect(silent < -100, "\(deck.transcript)")
    let bus = try await deck.run("meters drums_bus")
    let busLine = try #require(bus.first { $0.hasPrefix("bus drums_bus") && $0.contains("L peak ") }, "\(deck.transcript)")
    let busPeak = Double(busLine[busLine.range(of: "L peak ")!.upperBound...].drop { $0 == " " }.prefix { $0 != " " })
    #expect(busPeak.map { abs($0 - lower) < 0.3 } == true, "\(busLine)")
    try await deck.run("directout drums_bus off")
    let gone = try await eventually(timeout: 5, interval: 0.05) { try await !server.ports().contains("stemdeck:drums_bus_L") }
    #expect(gone)
    #expect(!deck.lines.contains { $0.hasPrefix("error: ") }, "\(deck.transcript)")
  }
}
