import Foundation
import Testing

/// The configuration file (`$XDG_CONFIG_HOME/stemdeck/config`) as a live stemdeck reads it: the
/// server it starts takes the file's driver, rate and period (issue 36); a flag still wins.
@Suite("the configuration file, live", .serialized, .timeLimit(.minutes(2)))
struct ConfigLiveTests {
  @Test("stemdeck starts the file's server at the file's rate and period, and stops it; --no-start-server still wins")
  func startedServer() async throws {
    let binary = try StemdeckBinary.require()
    let dir = try IntegrationTempDir("stemdeck-config")
    defer { dir.remove() }
    // A server name nobody runs: stemdeck starts (and must stop) its own jackd.
    let name = "stemdeck-config-\(getpid())"
    defer { PrivateJackServer.removeStaleFiles(of: name) }
    try FileManager.default.createDirectory(atPath: dir.file("stemdeck"), withIntermediateDirectories: true)
    try """
    # a rig for a laptop
    server = \(name)
    start-server = dummy
    server-rate = 44100
    server-period = 128
    control = off
    connect = no
    """.write(toFile: dir.file("stemdeck/config"), atomically: true, encoding: .utf8)
    let environment = ["XDG_CONFIG_HOME": dir.path, "XDG_STATE_HOME": dir.path]

    let refused = try await runTool(binary, ["--no-start-server", "-c", "status"], environment: environment, timeout: 60)
    #expect(refused.status == 1, "\(refused.text)")
    #expect(!refused.stdout.contains { $0.hasPrefix("started JACK server") }, "\(refused.text)")
    #expect(jackdProcesses(named: name).isEmpty)

    let result = try await runTool(binary, ["-c", "status"], environment: environment, timeout: 60)
    #expect(result.status == 0, "\(result.text)")
    #expect(
      result.stdout.contains {
        $0.hasPrefix("started JACK server '\(name)' (dummy driver, 44100 Hz: jackd -n \(name) --no-realtime -d dummy -r 44100 -p 128)")
      },
      "\(result.text)")
    for line in ["sample rate: 44100 Hz", "buffer: 128 frames", "server: \(name) (connected)"] {
      #expect(result.stdout.contains(line), "\(line)\n\(result.text)")
    }
    let gone = await eventually(timeout: 10, interval: 0.05) { jackdProcesses(named: name).isEmpty }
    #expect(gone, "the jackd stemdeck started still runs")
  }
}
