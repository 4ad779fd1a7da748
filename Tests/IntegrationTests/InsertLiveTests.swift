import Foundation
import StemdeckTestSupport
import Testing

// LV2 inserts live: added, bypassed, moved and removed while a looping tone plays on a private
// JACK server, each change heard on the master meter (swh's amp, Debian swh-lv2; x42's nodelay,
// x42-plugins), and a latency-reporting insert's latency on stemdeck's JACK ports.
extension JackIntegrationTests {
  @Test("live: inserts added, bypassed and removed while playing change the master's level; a non-RT plugin needs 'force'")
  func insertsWhilePlaying() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir()
    try writeSine(dir.file("tone.wav"), sampleRate: 48000, seconds: 1, frequencies: [1000], amplitude: 0.25)
    let p = try StemdeckProcess(server: server, extra: ["--keep-going"])
    defer { p.kill() }
    let amp = "http://plugin.org.uk/swh-plugins/amp"
    try await p.run("add \(dir.file("tone.wav")) as tone")
    try await p.run("loops tone -1")
    try await p.run("play")

    /// Resets the meters and polls the master's left peak until it is within 0.3 dB of
    /// `expected` (a mono 0.25 sine in the centre: −15.05 dB per side); records the last reading.
    func expectMaster(_ expected: Double, _ what: String) async throws {
      var last: Double?
      let reached = try await eventually(timeout: 5, interval: 0.05) {
        try await p.run("meters reset")
        last = Self.masterPeak(try await p.run("meters master"))
        return last.map { abs($0 - expected) < 0.3 } ?? false
      }
      #expect(reached, "\(what): master peak \(String(describing: last)) dB, expected \(expected)\n\(p.transcript)")
    }

    try await expectMaster(-15.05, "no insert")
    let refused = try await p.attempt("insert add tone \(amp)")
    #expect(refused.contains { $0.hasPrefix("error: ") && $0.contains("hardRTCapable") && $0.contains("force") }, "\(refused)")
    try await p.run("insert add tone \(amp) force")
    try await p.run("insert set tone 1 gain -6")
    try await expectMaster(-21.05, "amp at -6 dB")
    try await p.run("insert add master http://gareus.org/oss/lv2/nodelay")
    try await p.run("insert add master \(amp) at 1 force")
    try await p.run("insert set master 1 gain 3")
    try await expectMaster(-18.05, "amp -6 dB on the stem, +3 dB on the master")
    // nodelay at 64 frames reports 64 frames of latency: stemdeck says so in `status` and on
    // its JACK ports (every output's capture latency; the latency callback, jack_lsp -l).
    try await p.run("insert set master 2 delay 64")
    var seen: [String] = []
    let reported = try await eventually(timeout: 5, interval: 0.05) {
      let status = try await p.run("status")
      seen = try await server.tool("jack_lsp", ["-s", server.name, "-l", "master_L"]).stdout
      return status.contains("latency: 64 frames (plugin inserts, strips compensated)")
        && seen.contains { $0.contains("port capture latency = [ 64 64 ]") }
    }
    #expect(reported, "jack_lsp -l: \(seen)\n\(p.transcript)")
    try await p.run("insert bypass tone 1")
    try await expectMaster(-12.05, "stem amp bypassed")
    // Churn while playing: every add is instantiated on the control thread and every removed
    // instance freed there once the renderer hands its chain back.
    for _ in 0..<20 {
      try await p.run("insert add tone \(amp) force")
      try await p.run("insert remove tone 2")
    }
    try await p.run("insert remove master 1")
    try await p.run("insert remove tone 1")
    let list = try await p.run("insert list tone") + p.run("insert list master")
    #expect(list.contains("tone: no inserts") && list.contains { $0.contains("No Delay Line") }, "\(list)")
    try await expectMaster(-15.05, "inserts removed")
    // The latent insert removed: the mix has no latency, and the JACK ports say so at once (the
    // plan is made again when an insert changes, not at every poll).
    try await p.run("insert remove master 1")
    let cleared = try await eventually(timeout: 5, interval: 0.05) {
      seen = try await server.tool("jack_lsp", ["-s", server.name, "-l", "master_L"]).stdout
      return seen.contains { $0.contains("port capture latency = [ 0 0 ]") }
    }
    #expect(cleared, "jack_lsp -l: \(seen)\n\(p.transcript)")
    #expect(!(try await p.run("status")).contains { $0.hasPrefix("latency:") }, "\(p.transcript)")
    // 1: the refused add failed (--keep-going goes on but keeps the status); nothing else did.
    #expect(try await p.finish(timeout: 20) == 1, "\(p.transcript)")
    #expect(!p.lines.contains { $0.hasPrefix("error: ") && !$0.contains("hardRTCapable") }, "\(p.transcript)")
  }
}
