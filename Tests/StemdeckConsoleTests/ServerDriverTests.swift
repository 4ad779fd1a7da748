import Foundation
import Testing
@testable import StemdeckConsole
@testable import StemdeckJack
@testable import StemdeckRemote
@testable import StemdeckLive

/// `--start-server DRIVER` and the `driver:` line of `status` read from a jackd command line
/// (issue 24, NetJack2). The live behaviour is in IntegrationTests.NetJackTests.
@Suite("server driver: --start-server and the driver read from jackd's command line")
struct ServerDriverTests {

  @Test(
    "--start-server accepts dummy, alsa, net, net:HOST and net:HOST:PORT",
    arguments: [
      ("dummy", ServerLauncher.Launch.dummy),
      ("alsa", .alsa),
      ("net", .net(master: "225.3.19.154", port: nil)),
      ("net:192.168.1.20", .net(master: "192.168.1.20", port: nil)),
      ("net:fohbox.local:19001", .net(master: "fohbox.local", port: 19001))
    ])
  func startServer(_ spec: String, _ launch: ServerLauncher.Launch) throws {
    var expected = Arguments()
    expected.launch = launch
    #expect(try Arguments.parse(["--start-server", spec]) == expected)
  }

  @Test(
    "--start-server rejects anything else with the forms it takes",
    arguments: ["jack", "net:", "net:1.2.3.4:0", "net:1.2.3.4:70000", "net:1.2.3.4:x", "net:-a", "net:a b", "net:1:2:3"])
  func startServerRejects(_ spec: String) {
    #expect(throws: CommandError("--start-server: '\(spec)' is not a server to start; give \(ServerLauncher.Launch.forms)")) {
      try Arguments.parse(["--start-server", spec])
    }
  }

  @Test("--start-server with --no-start-server is a contradiction")
  func contradiction() {
    #expect(throws: CommandError("--start-server and --no-start-server contradict each other: give one")) {
      try Arguments.parse(["--start-server", "dummy", "--no-start-server"])
    }
    #expect(Arguments.usage.contains("--start-server "))
  }

  @Test("the driver and, for net, the master, port and latency from jackd's arguments")
  func parseCommandLines() {
    let cases: [([String], String?)] = [
      (["-n", "x", "--no-realtime", "-d", "dummy", "-r", "48000", "-p", "256"], "dummy"),
      (["-R", "-dalsa", "-dhw:0", "-r48000"], "alsa"),
      (["--driver=alsa", "-n", "3"], "alsa"),
      (
        ["-n", "deck", "-d", "net", "-a", "192.168.1.20", "-p", "19001", "-l", "2"],
        "net (master 192.168.1.20, UDP port 19001, network latency 2 periods)"
      ),
      (["-d", "net", "-a10.0.0.5", "--latency=1"], "net (master 10.0.0.5, UDP port 19000, network latency 1 period)"),
      (["-d", "net"], "net (master found by multicast on 225.3.19.154, UDP port 19000, network latency 5 periods)"),
      (["-n", "x"], nil)
    ]
    for (arguments, expected) in cases {
      #expect(ServerDriverInfo.parse(arguments: arguments)?.description == expected, "\(arguments)")
    }
    var linked = ServerDriverInfo.parse(arguments: ["-d", "net", "-a", "10.0.0.2"])
    linked?.linked = true
    #expect(linked?.description == "net (linked to master 10.0.0.2, UDP port 19000, network latency 5 periods)")
    linked?.linked = false
    #expect(linked?.description == "net (waiting for master 10.0.0.2, UDP port 19000, network latency 5 periods)")
    // The net driver's defaults from the server's environment; the options win over them.
    let environment = ["JACK_NETJACK_PORT": "19005", "JACK_NETJACK_MULTICAST": "225.3.19.160"]
    #expect(
      ServerDriverInfo.parse(arguments: ["-d", "net"], environment: environment)?.description
        == "net (master found by multicast on 225.3.19.160, UDP port 19005, network latency 5 periods)")
    #expect(
      ServerDriverInfo.parse(arguments: ["-d", "net", "-a", "10.0.0.2", "-p", "19001"], environment: environment)?.description
        == "net (master 10.0.0.2, UDP port 19001, network latency 5 periods)")
  }

  @Test("a server that is not running has no driver to show")
  func notRunning() {
    #expect(ServerDriverInfo.of(server: "no-such-server-\(getpid())") == nil)
    #expect(ServerDriverInfo.serverProcess(named: "x", registry: "/nonexistent/registry") == nil)
  }
}
