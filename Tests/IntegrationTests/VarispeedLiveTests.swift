import Foundation
import StemdeckTestSupport
import Testing

extension JackIntegrationTests {
  /// `fast` varispeed stems holding rates 1.2 and 0.9 convert with zita's VResampler set up for
  /// each rate (StemdeckEngine, HeldConverter.swift): its output depends only on its input, so
  /// live at a 128-frame period equals the offline render (1,024-frame blocks) bit for bit.
  @Test("fast varispeed stems at held rates (zita): the live master equals the offline render bit for bit")
  func heldRatesLiveEqualOffline() async throws {
    let binary = try StemdeckBinary.require()
    let dir = try IntegrationTempDir()
    try writeSine(dir.file("up.wav"), sampleRate: 48000, seconds: 3, frequencies: [330, 4400], amplitude: 0.3)
    try writeSine(dir.file("down.wav"), sampleRate: 48000, seconds: 2.5, frequencies: [550], amplitude: 0.3)
    try writeSine(dir.file("cd.wav"), sampleRate: 44100, seconds: 2.5, frequencies: [770], amplitude: 0.2)
    let session = dir.file("session.json")
    try writeSession(
      session,
      stems: [
        SessionStem(name: "up", file: "up.wav", volume: 0.7, pan: -0.3, rate: 1.2),
        SessionStem(name: "down", file: "down.wav", volume: 0.7, pan: 0.3, rate: 0.9),
        SessionStem(name: "cd", file: "cd.wav", volume: 0.6, rate: 1.1)
      ])
    let render = try await renderOffline(binary, session, to: dir.file("render.wav"))
    try #require(render.frames > 2 * 48000, "render length \(render.frames) frames")
    let server = try await PrivateJackServer(period: 128)
    defer { server.stop() }
    let (live, captureXruns) = try await captureLive(
      server: server, session: session, stems: 3, seconds: 5, dir: dir, name: "live.wav", baseline: nil)
    try expectBitExact(render: render, live: live, captureXruns: captureXruns, period: server.period, dir: dir, name: "live.wav")
  }
}
