// Integration tests: the real `stemdeck` binary in script mode against a private JACK server
// (dummy driver), checked with real peers (jack_lsp, jack_connect, jack_disconnect, jack_capture).
//
// Run: swift build --product stemdeck && swift test --filter IntegrationTests
// (or set STEMDECK_BIN to the binary to test). Each test starts its own server
// `stemdeck-test-<pid>-<n>`; the default server is never used.

import Foundation
import StemdeckAudioFile
import StemdeckTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("stemdeck against a private JACK server", .serialized, .timeLimit(.minutes(2)))
struct JackIntegrationTests {

  // MARK: 1. Ports and routing

  @Test("registers master ports; connect works; bad connections fail with a helpful error")
  func portsAndRouting() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }

    // --no-connect: the ports exist and are not connected.
    let deck = try StemdeckProcess(server: server)
    defer { deck.kill() }
    try await deck.run("echo ready")
    let ports = try await server.ports()
    #expect(ports.contains("stemdeck:master_L"), "jack_lsp: \(ports)")
    #expect(ports.contains("stemdeck:master_R"), "jack_lsp: \(ports)")
    var graph = try await server.connections()
    #expect(graph["stemdeck:master_L"] == [], "--no-connect, yet: \(graph)")
    #expect(graph["stemdeck:master_R"] == [], "--no-connect, yet: \(graph)")

    // connect with a short name for our own port.
    try await deck.run("connect master_L system:playback_1")
    graph = try await server.connections()
    #expect(graph["stemdeck:master_L"] == ["system:playback_1"], "jack_lsp -c: \(graph)")
    #expect(graph["system:playback_1"]?.contains("stemdeck:master_L") == true)
    let listed = try await deck.run("connections")
    #expect(listed.contains("master_L → system:playback_1"), "connections: \(listed)")

    // Two outputs: an error line, and script mode stops with status 1.
    let before = deck.lineCount
    deck.send("connect master_L master_R")
    deck.send("echo not reached")
    let status = try await deck.finish()
    let output = Array(deck.lines.dropFirst(before))
    #expect(status == 1, "\(deck.transcript)")
    let error = output.first { $0.hasPrefix("error: ") }
    #expect(error?.contains("both are outputs") == true, "\(output)")
    #expect(!output.contains("not reached"))
    // The client is gone with the process.
    let after = try await server.ports()
    #expect(!after.contains { $0.hasPrefix("stemdeck:") }, "ports left behind: \(after)")

    // An unknown port: the error suggests the close name.
    let typo = try StemdeckProcess(server: server)
    defer { typo.kill() }
    typo.send("connect master_L system:playbak_1")
    #expect(try await typo.finish() == 1, "\(typo.transcript)")
    let typoError = typo.lines.first { $0.hasPrefix("error: ") }
    #expect(typoError?.contains("unknown port 'system:playbak_1'") == true, "\(typo.transcript)")
    #expect(typoError?.contains("did you mean 'system:playback_1'") == true, "\(typo.transcript)")

    // --name changes the port prefix.
    let named = try StemdeckProcess(server: server, extra: ["--name", "deck2"])
    defer { named.kill() }
    try await named.run("connect master_R system:playback_2")
    graph = try await server.connections()
    #expect(graph["deck2:master_L"] != nil, "\(graph)")
    #expect(graph["deck2:master_R"] == ["system:playback_2"], "\(graph)")
    #expect(try await named.finish() == 0, "\(named.transcript)")
  }

  /// A peer whose input ports go away and come back, as JACK does it: the connection is
  /// removed first (the port-connect callback), the port a moment later. A net slave losing its
  /// master does that to system:playback_1/2; the routing must heal when they return.
  static let vanishingPeer = #"""
    import jack, sys, time
    client = jack.Client(sys.argv[1], no_start_server=True)
    client.activate()
    ports = []
    print("ready", flush=True)
    for line in sys.stdin:
        w = line.split()
        if not w:
            continue
        if w[0] == "register":
            ports = [client.inports.register("in_%d" % (i + 1)) for i in range(2)]
            print("registered", flush=True)
        elif w[0] == "vanish":
            for p in ports:
                for other in p.connections:
                    client.disconnect(other, p)
            time.sleep(0.05)  # the disconnects are seen while the ports still exist
            for p in ports:
                p.unregister()
            ports = []
            print("vanished", flush=True)
    """#

  @Test(
    "a peer's ports disconnected, gone and back, for a while or at once (as a net slave's system ports when its master is lost): stemdeck's connections to them heal"
  )
  func routingHealsWhenPeerPortsReturn() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir()
    try Self.vanishingPeer.write(toFile: dir.file("peer.py"), atomically: true, encoding: .utf8)
    let peer = try ChildProcess("/usr/bin/python3", ["-u", dir.file("peer.py"), "peer"], environment: server.environment, stdinPipe: true)
    defer { peer.terminate(grace: 2) }
    func ask(_ command: String, _ answer: String) async throws {
      let start = peer.stdoutLineCount
      if !command.isEmpty { _ = peer.writeToStdin(command + "\n") }
      let answered = await eventually(timeout: 10) { peer.stdoutLines.dropFirst(start).contains(answer) || !peer.isRunning }
      try #require(
        answered && peer.isRunning,
        "peer: no '\(answer)' after '\(command)': \(peer.stdoutLines) \(peer.stderrLines.joined(separator: "\n"))")
    }
    try await ask("", "ready")
    try await ask("register", "registered")
    let deck = try StemdeckProcess(server: server)
    defer { deck.kill() }
    try await deck.run("connect master_L peer:in_1")
    try await deck.run("connect master_R peer:in_2")
    let wanted: [String: Set<String>] = ["stemdeck:master_L": ["peer:in_1"], "stemdeck:master_R": ["peer:in_2"]]
    var graph = try await server.connections()
    try #require(graph["stemdeck:master_L"] == wanted["stemdeck:master_L"], "\(graph)")
    // Rounds 1-3: the ports stay away longer than stemdeck takes to forget a connection a user
    // removed (a quarter second). Rounds 4-5: they are back at once, within that quarter second,
    // under the same names (new ports: new UUIDs), as a NetJack2 link that came back at once.
    for round in 1...5 {
      try await ask("vanish", "vanished")
      if round <= 3 { try await deck.run("wait 0.6") }
      try await ask("register", "registered")
      let healed = try await eventually(timeout: 5, interval: 0.05) {
        graph = try await server.connections()
        return graph["stemdeck:master_L"] == wanted["stemdeck:master_L"] && graph["stemdeck:master_R"] == wanted["stemdeck:master_R"]
      }
      #expect(healed, "round \(round): not healed: \(graph)\n\(deck.transcript.suffix(2000))")
    }
    #expect(try await deck.finish() == 0, "\(deck.transcript)")
  }

  // MARK: 2. Live equals offline

  /// Master 1 checks the signal path alone; master 0.9 is the regression test for the render
  /// that ramped the master from 1.0 to the session's volume over its first 10 ms.
  @Test("the live master (recorded with jack_capture) equals the offline render", arguments: [1.0, 0.9])
  func liveEqualsOffline(masterVolume: Double) async throws {
    try await compareLiveWithOffline(masterVolume: masterVolume)
  }

  /// Renders a 3-stem session offline, plays it live while jack_capture records the master,
  /// and compares the two sample by sample.
  func compareLiveWithOffline(masterVolume: Double) async throws {
    let binary = try StemdeckBinary.require()
    let dir = try IntegrationTempDir()
    // Three stems: mono 48 kHz, stereo 48 kHz, mono 44.1 kHz (resampled), finite loops, 3 s.
    try writeSine(dir.file("mono.wav"), sampleRate: 48000, seconds: 1.0, frequencies: [220], amplitude: 0.5)
    try writeSine(dir.file("stereo.wav"), sampleRate: 48000, seconds: 1.5, frequencies: [330, 550], amplitude: 0.4)
    try writeSine(dir.file("cd.wav"), sampleRate: 44100, seconds: 0.75, frequencies: [440], amplitude: 0.3)
    let session = dir.file("session.json")
    try writeSession(
      session, masterVolume: masterVolume,
      stems: [
        SessionStem(name: "mono", file: "mono.wav", volume: 0.8, pan: -0.4, loops: 1),
        SessionStem(name: "stereo", file: "stereo.wav", volume: 0.7, pan: 0.25, loops: 1),
        SessionStem(name: "cd", file: "cd.wav", volume: 0.6, pan: 0.5, loops: 3)
      ])

    // Offline.
    let render = try await renderOffline(binary, session, to: dir.file("render.wav"))
    #expect(render.channels == 2)
    #expect(render.sampleRate == 48000)
    #expect(abs(render.frames - 3 * 48000) <= 1, "render length \(render.frames) frames")

    // Live.
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let baseline = try await server.xrunBaseline(seconds: 3, scratch: dir)
    let (live, captureXruns) = try await captureLive(
      server: server, session: session, stems: 3, seconds: 6, dir: dir,
      name: "live.wav", baseline: baseline)
    let compared = try compareAligned(render: render, live: live, tolerance: 1e-5, period: server.period)
    #expect(
      compared.glitches.count <= captureXruns,
      "\(compared.glitches.count) periods missing from the capture at render frames \(compared.glitches), jack_capture reported \(captureXruns) xruns"
    )
    #expect(
      compared.overlap == render.frames,
      "the capture ends \(render.frames - compared.overlap) frames before the render does (capture \(live.frames) frames, audio starts at \(compared.offset))"
    )
    let worst = compared.worst
    #expect(
      compared.firstDifference == nil && compared.maxDiff < 1e-5,
      "live differs from offline from frame \(compared.firstDifference ?? -1) on, by up to \(compared.maxDiff) at frame \(worst.frame) channel \(worst.channel) (render \(render.sample(worst.frame, worst.channel)), live \(live.sample(worst.frame + compared.offset, worst.channel)))"
    )
    // After the render's end the live output is silent.
    if compared.endOffset + render.frames < live.frames {
      let tail = live.samples[((compared.endOffset + render.frames) * 2)...].map { abs($0) }.max() ?? 0
      #expect(tail < 1e-6, "the live output is not silent after the end (peak \(tail))")
    }
    print(
      "live vs offline (master \(masterVolume)): \(compared.overlap) frames compared, max abs diff \(compared.maxDiff), capture offset \(compared.offset) frames, periods missing from the capture \(compared.glitches.count)"
    )
  }

  /// Stretch stems (Rubber Band) live equal the offline render bit for bit, run after run: the
  /// chunks fed to the stretcher depend on the transport alone, never on how far the disk reader
  /// got (issue 17: three of six captures diverged from frame 23,476 or 30,869 on by −41 dBFS).
  @Test("stretch stems: the live master equals the offline render bit for bit, four runs")
  func stretchLiveEqualsOffline() async throws {
    let binary = try StemdeckBinary.require()
    let dir = try IntegrationTempDir()
    // A drum-like part (decaying noise bursts on every beat) at rate 1.3, a two-tone lead at pitch +3,
    // and a 44.1 kHz stem stretched at 0.9 (its rate conversion folded into the stretcher).
    try writeBursts(dir.file("drums.wav"), sampleRate: 48000, seconds: 3)
    try writeSine(dir.file("lead.wav"), sampleRate: 48000, seconds: 3, frequencies: [330, 495], amplitude: 0.3)
    try writeSine(dir.file("pad.wav"), sampleRate: 44100, seconds: 2, frequencies: [220], amplitude: 0.2)
    let session = dir.file("session.json")
    try writeSession(
      session,
      stems: [
        SessionStem(name: "drums", file: "drums.wav", volume: 0.8, pan: -0.2, rate: 1.3, mode: "stretch"),
        SessionStem(name: "lead", file: "lead.wav", volume: 0.7, pan: 0.3, mode: "stretch", pitch: 3),
        SessionStem(name: "pad", file: "pad.wav", volume: 0.6, rate: 0.9, mode: "stretch")
      ])
    let render = try await renderOffline(binary, session, to: dir.file("render.wav"))
    try #require(render.frames > 2 * 48000, "render length \(render.frames) frames")

    let server = try await PrivateJackServer(period: 128)
    defer { server.stop() }
    var report: [String] = []
    for run in 1...4 {
      let (live, captureXruns) = try await captureLive(
        server: server, session: session, stems: 3, seconds: 5, dir: dir,
        name: "live\(run).wav", baseline: nil)
      let compared = try expectBitExact(
        render: render, live: live, captureXruns: captureXruns, period: server.period, dir: dir, name: "live\(run).wav",
        label: "run \(run): ")
      report.append(
        "run \(run): \(compared.firstDifference.map { "differs from frame \($0)" } ?? "bit-identical") (\(compared.glitches.count) periods lost by jack_capture, \(captureXruns) xruns)"
      )
    }
    print("stretch live vs offline (\(render.frames) frames): " + report.joined(separator: "; "))
  }

  /// The `fast` stretch quality (WSOLA, issue 25) live equals the offline render bit for bit at a
  /// 128-frame period, as Rubber Band does: its output depends only on the input and the tempo of
  /// each hop. The pitch-shifted stem uses Rubber Band (a pitch shift is its job whatever the quality).
  @Test("stretch fast stems: the live master equals the offline render bit for bit, two runs")
  func stretchFastLiveEqualsOffline() async throws {
    let binary = try StemdeckBinary.require()
    let dir = try IntegrationTempDir()
    try writeBursts(dir.file("drums.wav"), sampleRate: 48000, seconds: 3)
    try writeSine(dir.file("lead.wav"), sampleRate: 48000, seconds: 3, frequencies: [330, 495], amplitude: 0.3)
    try writeSine(dir.file("pad.wav"), sampleRate: 44100, seconds: 2, frequencies: [220], amplitude: 0.2)
    let session = dir.file("session.json")
    try writeSession(
      session,
      stems: [
        SessionStem(name: "drums", file: "drums.wav", volume: 0.8, pan: -0.2, rate: 0.8, mode: "stretch", stretch: "fast"),
        SessionStem(name: "lead", file: "lead.wav", volume: 0.7, pan: 0.3, rate: 1.15, mode: "stretch", pitch: 3, stretch: "fast"),
        SessionStem(name: "pad", file: "pad.wav", volume: 0.6, rate: 0.9, mode: "stretch", stretch: "fast")
      ])
    let render = try await renderOffline(binary, session, to: dir.file("render.wav"))
    try #require(render.frames > 3 * 48000, "render length \(render.frames) frames")

    let server = try await PrivateJackServer(period: 128)
    defer { server.stop() }
    for run in 1...2 {
      let (live, captureXruns) = try await captureLive(
        server: server, session: session, stems: 3, seconds: 6, dir: dir,
        name: "live\(run).wav", baseline: nil)
      try expectBitExact(
        render: render, live: live, captureXruns: captureXruns, period: server.period, dir: dir, name: "live\(run).wav",
        label: "run \(run): ")
    }
  }

  /// stemdeck on a looping session, auto-connected to system:playback_1/2 and playing.
  func playingLoopingDeck(_ server: PrivateJackServer, _ dir: IntegrationTempDir) async throws -> StemdeckProcess {
    try writeSine(dir.file("loop.wav"), sampleRate: 48000, seconds: 1.0, frequencies: [220, 330], amplitude: 0.3)
    let session = dir.file("looping.json")
    try writeSession(session, stems: [SessionStem(name: "loop", file: "loop.wav", loops: -1)])
    let deck = try StemdeckProcess(server: server, session: session, connect: true)
    try await deck.run("echo ready")
    // Auto-connected to the first two physical playback ports.
    let graph = try await server.connections()
    #expect(graph["stemdeck:master_L"] == ["system:playback_1"], "\(graph)")
    #expect(graph["stemdeck:master_R"] == ["system:playback_2"], "\(graph)")
    try await startPlaying(deck)
    try await deck.run("wait 0.5")
    return deck
  }

  /// kill -9 the server, wait for stemdeck to notice, restart it under the same name and wait
  /// (at most 10 s) for stemdeck to reconnect. Returns the reconnect event line.
  func killAndRestart(_ server: PrivateJackServer, _ deck: StemdeckProcess) async throws -> String {
    server.kill9()
    // Events are printed while commands run: `wait` keeps them flowing.
    let wentAway = try await eventually(timeout: 5, interval: 0) {
      try await deck.run("wait 0.2")
      return deck.events.contains { $0.contains("JACK server '\(server.name)' went away") }
    }
    try #require(wentAway, "no 'went away' event after kill -9\n\(deck.transcript)")
    let gone = try await deck.status()
    #expect(gone["server"] == "\(server.name) (disconnected, retrying)", "\(gone)")

    try await server.start()
    let restarted = monotonicSeconds()
    let reconnected = try await eventually(timeout: 10, interval: 0) {
      try await deck.run("wait 0.2")
      return deck.events.contains { $0.contains("reconnected to JACK server '\(server.name)'") }
    }
    try #require(reconnected, "no reconnect within 10 s of the restart\n\(deck.transcript)")
    print("reconnected \(String(format: "%.1f", monotonicSeconds() - restarted)) s after the server came back")
    return deck.events.first { $0.contains("reconnected to JACK server") } ?? ""
  }

  @Test("survives kill -9 of jackd: reconnects and resumes playing")
  func serverKilledMidPlayback() async throws {
    let dir = try IntegrationTempDir()
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let deck = try await playingLoopingDeck(server, dir)
    defer { deck.kill() }
    _ = try await killAndRestart(server, deck)
    #expect(deck.events.contains("event: resuming playback"), "\(deck.events)")
    let first = try await deck.status()
    try await deck.run("wait 0.5")
    let second = try await deck.status()
    #expect(first["state"] == "playing", "\(first)")
    #expect(second["state"] == "playing", "\(second)")
    #expect(second["server"] == "\(server.name) (connected)", "\(second)")
    let p1 = try #require(statusPosition(first)), p2 = try #require(statusPosition(second))
    #expect(p2 - p1 > 0.25, "position did not advance: \(p1) → \(p2)")
    #expect(!deck.events.contains { $0.contains("finished") }, "a stem that loops forever finished: \(deck.events)")
    #expect(try await deck.finish() == 0, "\(deck.transcript)")
  }

  @Test(
    "after kill -9 and a restart of jackd the master's connections are restored")
  func routingRestoredAfterServerRestart() async throws {
    let dir = try IntegrationTempDir()
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let deck = try await playingLoopingDeck(server, dir)
    defer { deck.kill() }
    let reconnectEvent = try await killAndRestart(server, deck)
    #expect(reconnectEvent.contains("restored 2 connections"), "\(reconnectEvent)")
    var graph: [String: Set<String>] = [:]
    let healed = try await eventually(timeout: 3, interval: 0.1) {
      graph = try await server.connections()
      return graph["stemdeck:master_L"] == ["system:playback_1"] && graph["stemdeck:master_R"] == ["system:playback_2"]
    }
    #expect(healed, "routing not restored: \(graph)")
    let routes = try await deck.run("routes")
    #expect(routes.contains("connected  master_L → system:playback_1"), "routes: \(routes)")
    #expect(try await deck.finish() == 0, "\(deck.transcript)")
  }

  // MARK: 4. Auto-pause

  /// A looping session, stemdeck on it (--no-connect), master connected to system:playback_1/2.
  func loopingDeck(_ server: PrivateJackServer, _ dir: IntegrationTempDir) async throws -> StemdeckProcess {
    try writeSine(dir.file("loop.wav"), sampleRate: 48000, seconds: 1.0, frequencies: [220], amplitude: 0.3)
    let session = dir.file("looping.json")
    try writeSession(session, stems: [SessionStem(name: "loop", file: "loop.wav", loops: -1)])
    let deck = try StemdeckProcess(server: server, session: session)
    try await deck.run("echo ready")
    return deck
  }

  /// Plays and waits until `status` says playing.
  func startPlaying(_ deck: StemdeckProcess) async throws {
    try await deck.run("play")
    let playing = try await eventually(timeout: 3, interval: 0.05) {
      try await deck.status()["state"] == "playing"
    }
    try #require(playing, "stemdeck did not start playing\n\(deck.transcript)")
  }

  /// Polls `status` (with short waits so events flow) for up to `timeout` seconds.
  func waitForState(_ deck: StemdeckProcess, _ wanted: String, timeout: Double) async throws -> (reached: Bool, state: String) {
    var state = ""
    let reached = try await eventually(timeout: timeout, interval: 0) {
      try await deck.run("wait 0.1")
      state = try await deck.status()["state"] ?? ""
      return state == wanted
    }
    return (reached, state)
  }

  // MARK: 5. Memory

  @Test("32 × 10-minute stems: stemdeck's own resident memory stays under 100 MB")
  func memoryWithLongStems() async throws {
    let dir = try IntegrationTempDir("stemdeck-int-big")
    defer { dir.remove() }
    let big = dir.file("ten-minutes.wav")
    let made = try await runTool(
      "sox",
      [
        "-n", "-r", "48000", "-c", "2", "-b", "16", "-e", "signed-integer", big,
        "synth", "600", "sine", "220", "sine", "330", "vol", "0.1"
      ],
      timeout: 90)
    try #require(made.status == 0, "sox failed: \(made.text)")
    let size = (try FileManager.default.attributesOfItem(atPath: big)[.size] as? Int) ?? 0
    #expect(size > 110_000_000, "the stem file is only \(size) bytes")

    let server = try await PrivateJackServer()
    defer { server.stop() }
    let deck = try StemdeckProcess(server: server)
    defer { deck.kill() }
    try await deck.run("echo ready")
    let empty = try deck.memory()
    for i in 1...32 {
      try await deck.run("add \(big) as s\(i)", timeout: 20)
    }
    try await deck.run("play")
    try await deck.run("wait 5", timeout: 20)
    let status = try await deck.status()
    let full = try deck.memory()
    func mb(_ bytes: Int?) -> Int { Int((Double(bytes ?? 0) / 1_048_576).rounded()) }
    let rss = full["VmRSS"] ?? 0
    let shm = full["RssShmem"] ?? 0
    // VmRSS counts JACK's shared graph segment (/dev/shm, ~105 MB with jackd2 here), which every
    // client maps — jack_cpu_load alone is resident at ~110 MB — and which stemdeck cannot
    // shrink. What the stems cost is stemdeck's own memory: VmRSS minus RssShmem.
    let own = rss - shm
    print("resident with 32 × 10 min stems: \(mb(rss)) MB")
    print(
      "  of which JACK shared memory \(mb(shm)) MB; stemdeck's own \(mb(own)) MB (anonymous \(mb(full["RssAnon"])) MB, file-backed \(mb(full["RssFile"])) MB); with no stems: \(mb(empty["VmRSS"])) MB resident, \(mb((empty["VmRSS"] ?? 0) - (empty["RssShmem"] ?? 0))) MB own; peak VmHWM \(mb(full["VmHWM"])) MB"
    )
    #expect(status["state"] == "playing", "\(status)")
    #expect(status["stems"] == "32", "\(status)")
    #expect(status["underruns"] == "0", "\(status)")
    #expect(own < 100 * 1_048_576, "stemdeck's own resident memory is \(mb(own)) MB with 32 × 10 min stems")
    #expect(try await deck.finish(timeout: 15) == 0, "\(deck.transcript)")
    print("xruns during the 32-stem run: \(status["xruns"] ?? "?")")
  }

  // MARK: 6. Script-mode exit status

  @Test("script mode: a failed command exits 1; --keep-going runs the rest and still exits 1; clean exits 0")
  func scriptExitStatus() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let script = ["echo before", "frobnicate 3", "echo after"]

    let stops = try StemdeckProcess(server: server)
    defer { stops.kill() }
    for line in script { stops.send(line) }
    #expect(try await stops.finish() == 1, "\(stops.transcript)")
    #expect(stops.lines.contains("before"))
    #expect(stops.lines.contains { $0.hasPrefix("error: unknown command 'frobnicate'") }, "\(stops.transcript)")
    #expect(!stops.lines.contains("after"), "script mode continued after a failure\n\(stops.transcript)")

    let keepsGoing = try StemdeckProcess(server: server, extra: ["--keep-going"])
    defer { keepsGoing.kill() }
    for line in script { keepsGoing.send(line) }
    #expect(try await keepsGoing.finish() == 1, "\(keepsGoing.transcript)")
    #expect(keepsGoing.lines.contains { $0.hasPrefix("error: unknown command 'frobnicate'") }, "\(keepsGoing.transcript)")
    #expect(keepsGoing.lines.contains("after"), "\(keepsGoing.transcript)")

    let clean = try StemdeckProcess(server: server)
    defer { clean.kill() }
    for line in ["echo hello", "status", "connections"] { clean.send(line) }
    #expect(try await clean.finish() == 0, "\(clean.transcript)")
    #expect(clean.lines.contains("hello"))
    #expect(clean.lines.contains("no connections"), "\(clean.transcript)")
    #expect(!clean.lines.contains { $0.hasPrefix("error: ") }, "\(clean.transcript)")

    // The same with -c 'CMD; CMD' (stdin is then not read).
    let oneLine = script.joined(separator: "; ")
    let c = try StemdeckProcess(server: server, extra: ["-c", oneLine])
    defer { c.kill() }
    #expect(try await c.finish() == 1, "\(c.transcript)")
    #expect(c.lines.contains("before") && !c.lines.contains("after"), "\(c.transcript)")
    let ck = try StemdeckProcess(server: server, extra: ["-c", oneLine, "--keep-going"])
    defer { ck.kill() }
    #expect(try await ck.finish() == 1, "\(ck.transcript)")
    #expect(ck.lines.contains("after"), "\(ck.transcript)")
    let cClean = try StemdeckProcess(server: server, extra: ["-c", "echo hello; status"])
    defer { cClean.kill() }
    #expect(try await cClean.finish() == 0, "\(cClean.transcript)")
  }

  // MARK: 7. Bugs found here

  @Test(
    "a script can play and then wait for the end")
  func playThenWaitEnd() async throws {
    let dir = try IntegrationTempDir()
    try writeSine(dir.file("short.wav"), sampleRate: 48000, seconds: 0.5, frequencies: [220], amplitude: 0.3)
    let session = dir.file("short.json")
    try writeSession(session, stems: [SessionStem(name: "short", file: "short.wav")])
    let server = try await PrivateJackServer()
    defer { server.stop() }
    for extra in [["-c", "play; wait end; echo done"], ["--play", "-c", "wait end; echo done"]] {
      let deck = try StemdeckProcess(server: server, session: session, extra: extra)
      defer { deck.kill() }
      #expect(try await deck.finish() == 0, "\(deck.transcript)")
      #expect(deck.lines.contains("done"), "\(deck.transcript)")
      #expect(deck.events.contains("event: all stems finished"), "\(deck.transcript)")
    }
  }

  @Test(
    "changing loops after adding a short stem takes effect")
  func loopsChangeAfterAdd() async throws {
    let dir = try IntegrationTempDir()
    try writeSine(dir.file("one.wav"), sampleRate: 48000, seconds: 1.0, frequencies: [220], amplitude: 0.3)
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let deck = try StemdeckProcess(server: server)
    defer { deck.kill() }
    try await deck.run("add \(dir.file("one.wav")) as one")
    try await deck.run("wait 0.5")  // let the disk thread fill the ring (and reach the file's end)
    try await deck.run("loops one -1")
    try await startPlaying(deck)
    try await deck.run("wait 2.5")
    let status = try await deck.status()
    #expect(status["state"] == "playing", "\(status)")
    #expect(!deck.events.contains { $0.contains("finished") }, "a stem set to loop forever finished: \(deck.events)")
    let table = try await deck.run("stems")
    let row = table.first { $0.hasPrefix("one ") } ?? ""
    #expect(row.contains("forever") && !row.contains(" E "), "stems: \(row)")
    #expect(try await deck.finish() == 0, "\(deck.transcript)")
  }
}
