import Foundation
import Glibc
import StemdeckTestSupport
import Testing

/// `--start-server net:HOST:PORT`: stemdeck starts a NetJack2 slave of its own, linked to a
/// master, and stops it; with no master there, a clear error after its 10 s. Its own suite
/// because it times nothing and is mostly waiting (the launcher's 10 s): it runs beside the unit
/// tests (scripts/test, lane 'light'), not with the NetJack2 tests that measure what the master
/// hears (NetJackTests).
@Suite("NetJack2: the slave stemdeck starts itself", .serialized, .timeLimit(.minutes(3)))
struct NetJackLauncherTests {
  @Test(
    "--start-server net:127.0.0.1:PORT starts a NetJack2 slave linked to the master, status shows it, and it stops with stemdeck; with no master there, a clear error"
  )
  func launcherStartsSlave() async throws {
    let binary = try StemdeckBinary.require()
    let dir = try IntegrationTempDir("stemdeck-netjack-launch")
    let port = try freeUDPPort()
    let master = try await PrivateJackServer()
    defer { master.stop() }
    try await NetJackPair.loadManager(on: master, port: port)
    let slaveName = "stemdeck-test-\(getpid())-netslave"
    defer { PrivateJackServer.removeStaleFiles(of: slaveName) }
    // The launcher's jackd log goes to the state folder: a private one.
    let environment = ["XDG_STATE_HOME": dir.path, "JACK_NO_START_SERVER": "1"]
    let run = try await runTool(
      binary,
      [
        "--server", slaveName, "--start-server", "net:127.0.0.1:\(port)", "--no-control",
        "-c", "status; connect master_L system:playback_1; play; wait 0.3"
      ],
      environment: environment, timeout: 40)
    #expect(run.status == 0, "\(run.text)")
    #expect(
      run.stdout.contains {
        $0.hasPrefix("started JACK server '\(slaveName)' (net driver") && $0.contains("-d net -a 127.0.0.1 -p \(port)")
      },
      "\(run.text)")
    #expect(run.stdout.contains("driver: net (linked to master 127.0.0.1, UDP port \(port), network latency 5 periods)"), "\(run.text)")
    // The slave linked to the master (its client there is named after this machine), and it
    // stopped with stemdeck: the master's client for it goes away.
    let log = (try? String(contentsOfFile: "\(dir.path)/stemdeck/jackd-\(slaveName).log", encoding: .utf8)) ?? ""
    #expect(log.contains("Initializing connection with"), "slave log:\n\(log.suffix(2000))")
    let gone = await eventually(timeout: 15, interval: 0.1) {
      (try? await master.ports())?.contains { $0.hasSuffix(":from_slave_1") } == false
    }
    let left = (try? await master.ports()) ?? []
    #expect(gone, "the slave's client is still on the master: \(left)")
    // The slave's jackd itself is gone (stemdeck's launcher stops the server it started).
    let slaveEnded = await eventually(timeout: 30, interval: 0.1) { jackdProcesses(named: slaveName).isEmpty }
    #expect(slaveEnded, "the slave jackd stemdeck started still runs: pids \(jackdProcesses(named: slaveName))")
    for pid in jackdProcesses(named: slaveName) { kill(pid, SIGKILL) }  // this test's own server

    // No master on that port: the launcher says what to do, within its 10 s.
    let lonely = try freeUDPPort()
    let failed = try await runTool(
      binary, ["--server", slaveName + "-2", "--start-server", "net:127.0.0.1:\(lonely)", "--no-control", "-c", "status"],
      environment: environment, timeout: 40)
    PrivateJackServer.removeStaleFiles(of: slaveName + "-2")
    #expect(failed.status == 1, "\(failed.text)")
    #expect(
      failed.stderr.contains {
        $0.contains("the NetJack2 slave found no master at 127.0.0.1 (UDP port \(lonely)) within 10 s")
          && $0.contains("jack_load netmanager -i \"-p \(lonely)\"")
      },
      "\(failed.text)")
    // The slave it started and gave up on is stopped too (SIGTERM: waited for, bounded).
    let failedEnded = await eventually(timeout: 30, interval: 0.1) { jackdProcesses(named: slaveName + "-2").isEmpty }
    #expect(failedEnded, "the slave jackd stemdeck gave up on still runs: pids \(jackdProcesses(named: slaveName + "-2"))")
    for pid in jackdProcesses(named: slaveName + "-2") { kill(pid, SIGKILL) }
    master.stopAndExpectGone()
  }
}
