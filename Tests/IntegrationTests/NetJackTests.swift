// stemdeck on a NetJack2 slave (issue 24), on this machine alone: a master server (dummy driver)
// with jackd2's netmanager listening on 127.0.0.1 at a UDP port the kernel picked free for this
// test, and a slave server `jackd -d net -a 127.0.0.1 -p PORT`. stemdeck runs on the slave; what
// it plays is recorded on the master (the slave's client there, `SLAVE:from_slave_1/2`), so "it
// plays" means audio crossed the link. Loopback only: no namespaces, no firewall, no root.
//
// Run: swift build && STEMDECK_BIN=$PWD/.build/debug/stemdeck \
//      swift test --no-parallel --filter IntegrationTests.NetJackTests
// Every server is private (`stemdeck-test-<pid>-<n>`); the UDP port is private to the test
// (never NetJack2's default 19000, which other users of the machine may run).

import Foundation
import StemdeckTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A UDP port on this machine that nothing uses now (bound with port 0, read back, released).
func freeUDPPort() throws -> Int {
  let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
  guard fd >= 0 else { throw HarnessError("socket failed: \(String(cString: strerror(errno)))") }
  defer { close(fd) }
  var address = sockaddr_in()
  address.sin_family = sa_family_t(AF_INET)
  address.sin_port = 0
  address.sin_addr.s_addr = INADDR_ANY
  var length = socklen_t(MemoryLayout<sockaddr_in>.size)
  let bound = withUnsafeMutablePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { p -> Int32 in
      guard bind(fd, p, length) == 0 else { return -1 }
      return getsockname(fd, p, &length)
    }
  }
  guard bound == 0 else { throw HarnessError("bind/getsockname failed: \(String(cString: strerror(errno)))") }
  return Int(UInt16(bigEndian: address.sin_port))
}

/// A NetJack2 master and slave on loopback. The slave's client on the master is `slaveName`
/// (unique to the test), with ports `slaveName:from_slave_1/2` (what the slave's
/// system:playback_1/2 carry) and `slaveName:to_slave_1/2` (the slave's system:capture_1/2).
final class NetJackPair: @unchecked Sendable {
  let master: PrivateJackServer
  let slave: PrivateJackServer
  let port: Int
  let slaveName: String
  /// The slave's network latency option (`-l`), in periods.
  let latency: Int

  init(latency: Int = 2) async throws {
    port = try freeUDPPort()
    self.latency = latency
    master = try await PrivateJackServer()
    slaveName = "deckslave-\(getpid())-\(port)"
    client = slaveName
    try await Self.loadManager(on: master, port: port)
    slave = try await PrivateJackServer(driver: [
      "-d", "net", "-a", "127.0.0.1", "-p", "\(port)", "-C", "2", "-P", "2", "-n", slaveName, "-l", "\(latency)"
    ])
    guard try await waitForLink(timeout: 10) else {
      let log = (try? String(contentsOfFile: slave.logPath, encoding: .utf8)) ?? ""
      stop()
      throw HarnessError("the NetJack2 slave did not link to the master within 10 s; slave log:\n\(log.suffix(2000))")
    }
  }

  /// `jack_load netmanager -i "-a 127.0.0.1 -p PORT"` on the master (no auto-connection: the
  /// tests connect what they record).
  static func loadManager(on master: PrivateJackServer, port: Int) async throws {
    let r = try await master.tool("jack_load", ["-s", master.name, "netmanager", "-i", "-a 127.0.0.1 -p \(port)"])
    guard r.status == 0 else { throw HarnessError("jack_load netmanager failed: \(r.text)") }
  }

  /// The slave's client on the master as of the last `waitForLink`: `slaveName`, or
  /// `slaveName-01`… when the master still held the old client as the slave linked again (after
  /// a link drop the master had not noticed yet).
  private(set) var client: String
  var fromSlave: [String] { ["\(client):from_slave_1", "\(client):from_slave_2"] }
  var toSlave: [String] { ["\(client):to_slave_1", "\(client):to_slave_2"] }

  /// Waits until the slave's ports exist on the master (the link is up); with `excluding`, a
  /// client of another name than that one (a new link, the old client gone).
  func waitForLink(timeout: Double, excluding old: String? = nil) async throws -> Bool {
    try await eventually(timeout: timeout, interval: 0.02) {
      // jack_lsp itself can fail while the master removes a stale client (its semaphore is
      // gone before its ports): that is "not yet".
      guard let ports = try? await self.master.ports() else { return false }
      let suffix = ":from_slave_2"
      let clients = ports.filter { $0.hasPrefix(self.slaveName) && $0.hasSuffix(suffix) }.map { String($0.dropLast(suffix.count)) }
      guard clients.count == 1, let found = clients.first, found != old else { return false }
      self.client = found
      return true
    }
  }

  /// The last lines of both servers' logs (runs of one repeated line shown once, with a count),
  /// the slave's clients on the master and the slave's connections: what a failed wait for the
  /// link or for sound reports.
  func diagnosis() async -> String {
    func tail(_ server: PrivateJackServer) -> String {
      let log = (try? String(contentsOfFile: server.logPath, encoding: .utf8)) ?? "(no log at \(server.logPath))"
      var lines: [(String, Int)] = []
      for line in log.split(separator: "\n").map(String.init) {
        if let last = lines.last, last.0 == line { lines[lines.count - 1].1 += 1 } else { lines.append((line, 1)) }
      }
      return lines.suffix(30).map { $0.1 > 1 ? "\($0.0) (×\($0.1))" : $0.0 }.joined(separator: "\n")
    }
    let ports: String
    do { ports = try await master.ports().filter { $0.hasPrefix(slaveName) }.description } catch { ports = "jack_lsp failed: \(error)" }
    let routes: String
    do { routes = try await slave.connections().description } catch { routes = "jack_lsp failed: \(error)" }
    return
      "the slave's ports on the master: \(ports)\nconnections on the slave: \(routes)\nmaster log:\n\(tail(master))\nslave log:\n\(tail(slave))"
  }

  func stop() {
    slave.stop()
    master.stop()
  }

  /// `stop()`, with an issue for either server still running (the end of each test: no server
  /// outlives its test).
  func stopAndExpectGone(sourceLocation: SourceLocation = #_sourceLocation) {
    slave.stopAndExpectGone(sourceLocation: sourceLocation)
    master.stopAndExpectGone(sourceLocation: sourceLocation)
  }

  deinit { stop() }
}

@Suite("NetJack2: stemdeck on a slave server, heard on the master", .serialized, .timeLimit(.minutes(6)))
struct NetJackTests {

  /// Three finite stems (as the live-equals-offline test), 3 s.
  func finiteSession(_ dir: IntegrationTempDir) throws -> String {
    try writeSine(dir.file("mono.wav"), sampleRate: 48000, seconds: 1.0, frequencies: [220], amplitude: 0.5)
    try writeSine(dir.file("stereo.wav"), sampleRate: 48000, seconds: 1.5, frequencies: [330, 550], amplitude: 0.4)
    try writeSine(dir.file("cd.wav"), sampleRate: 44100, seconds: 0.75, frequencies: [440], amplitude: 0.3)
    let session = dir.file("session.json")
    try writeSession(
      session, masterVolume: 0.9,
      stems: [
        SessionStem(name: "mono", file: "mono.wav", volume: 0.8, pan: -0.4, loops: 1),
        SessionStem(name: "stereo", file: "stereo.wav", volume: 0.7, pan: 0.25, loops: 1),
        SessionStem(name: "cd", file: "cd.wav", volume: 0.6, pan: 0.5, loops: 3)
      ])
    return session
  }

  /// The first frame of `channel` whose magnitude exceeds `threshold`.
  func onset(of audio: AudioData, channel: Int, above threshold: Float) -> Int? {
    (0..<audio.frames).first { abs(audio.sample($0, channel)) > threshold }
  }

  @Test("stemdeck on a NetJack2 slave: its mix captured on the master equals the offline render; the round trip over the link is measured")
  func slaveMixEqualsRender() async throws {
    let binary = try StemdeckBinary.require()
    let dir = try IntegrationTempDir("stemdeck-netjack")
    let session = try finiteSession(dir)
    let render = try await renderOffline(binary, session, to: dir.file("render.wav"))

    let pair = try await NetJackPair(latency: 2)
    defer { pair.stop() }
    let period = pair.master.period
    // The slave runs at the master's rate and period.
    let deck = try StemdeckProcess(server: pair.slave, session: session)
    defer { deck.kill() }
    let status = try await deck.status()
    #expect(status["sample rate"] == "48000 Hz" && status["buffer"] == "\(period) frames", "\(status)")
    #expect(status["driver"] == "net (linked to master 127.0.0.1, UDP port \(pair.port), network latency 2 periods)", "\(status)")
    let onMasterServer = try await runTool(
      binary, ["--server", pair.master.name, "--no-start-server", "--no-connect", "--no-control", "-c", "status"],
      environment: pair.master.environment)
    #expect(onMasterServer.stdout.contains("driver: dummy"), "\(onMasterServer.text)")
    try await deck.run("connect master_L system:playback_1")
    try await deck.run("connect master_R system:playback_2")

    // On the master, what the slave plays goes back to it: the slave's system:capture_1 then
    // carries stemdeck's left channel after a round trip over the link.
    try await pair.master.connect(pair.fromSlave[0], pair.toSlave[0])
    // Both recorders run once their files grow (they connect their ports before recording).
    // Not polled with jack_lsp: on the loaded test machine a stream of short-lived clients of one
    // name sometimes fails to open for many seconds against a server with a net client. For the
    // same reason jack_capture now and then exits at once with status 1, "Cannot open
    // jack_capture client" (1 run in 3 here, both recorders together, for a few seconds: jack2's
    // per-user state shared with the other servers on the machine): then both are started again,
    // for up to 40 s.
    func size(_ path: String) -> Int {
      var info = stat()
      return stat(path, &info) == 0 ? Int(info.st_size) : 0
    }
    var recorders: (master: CaptureRun, slave: CaptureRun)?
    var failures: [String] = []
    let deadline = monotonicSeconds() + 40
    var attempt = 0
    while recorders == nil && monotonicSeconds() < deadline {
      attempt += 1
      if attempt > 1 { await pause(0.5) }
      let onMaster = try pair.master.startCapture(ports: pair.fromSlave, seconds: 6, to: dir.file("master-\(attempt).wav"), hookDir: dir)
      let onSlave = try pair.slave.startCapture(
        ports: ["stemdeck:master_L", "system:capture_1"], seconds: 6,
        to: dir.file("slave-\(attempt).wav"), hookDir: dir)
      let recording = await eventually(timeout: 30, interval: 0.05) {
        size(onMaster.path) > 44 + 8 * 4 * period && size(onSlave.path) > 44 + 8 * 4 * period
          || !onMaster.child.isRunning || !onSlave.child.isRunning
      }
      if recording && size(onMaster.path) > 44 + 8 * 4 * period && size(onSlave.path) > 44 + 8 * 4 * period {
        recorders = (onMaster, onSlave)
      } else {
        failures.append(
          "attempt \(attempt): exit status \(onMaster.child.exitStatus.map(String.init) ?? "running"), \(onSlave.child.exitStatus.map(String.init) ?? "running"); logs: \(onMaster.log) \(onSlave.log)"
        )
        onMaster.child.terminate(grace: 1)
        onSlave.child.terminate(grace: 1)
      }
    }
    let (onMaster, onSlave) = try #require(recorders, "jack_capture did not start recording: \(failures)")
    if !failures.isEmpty { print("NetJack2: jack_capture restarted: \(failures)") }
    try await deck.run("play")
    let started = try await eventually(timeout: 3, interval: 0.02) { try await deck.status()["state"] == "playing" }
    try #require(started, "stemdeck did not start playing\n\(deck.transcript)")
    try await deck.run("wait end", timeout: 15)
    let masterXruns = try await onMaster.finish(timeout: 15).xruns
    let slaveXruns = try await onSlave.finish(timeout: 15).xruns
    let after = try await deck.status()
    #expect(after["underruns"] == "0", "\(after)")
    #expect(try await deck.finish() == 0, "\(deck.transcript)")

    // The master's capture equals the render (NetJack2 sends 32-bit floats by default).
    let live = try readAudio(onMaster.path)
    let compared = try comparePeriods(reference: render, capture: live, period: period)
    #expect(
      compared.periods >= render.frames / period - 10,
      "only \(compared.periods) periods of the render found in the master's capture")
    // On a loaded machine jack_capture misses periods and the link delivers some late (NetJack2
    // then plays what it has): those periods differ, the rest are the render's floats exactly.
    #expect(
      compared.exactShare >= 0.9,
      "only \(compared.exact) of \(compared.periods) periods equal the render (damaged at capture periods \(compared.damaged.prefix(20)), jack_capture xruns \(masterXruns))"
    )

    // Round trip slave → master → slave, in the slave's own capture (one clock): the returned
    // left channel is stemdeck's left channel a whole number of periods later.
    let loop = try readAudio(onSlave.path)
    func both(_ c: Int) -> AudioData {
      var samples = [Float](repeating: 0, count: loop.frames * 2)
      for f in 0..<loop.frames { samples[2 * f] = loop.sample(f, c); samples[2 * f + 1] = loop.sample(f, c) }
      return AudioData(sampleRate: loop.sampleRate, channels: 2, samples: samples)
    }
    let trip = try comparePeriods(reference: both(0), capture: both(1), period: period, from: 0)
    #expect(trip.offset > 0 && trip.offset % period == 0, "round trip \(trip.offset) frames, period \(period)")
    #expect(trip.exactShare >= 0.9, "only \(trip.exact) of \(trip.periods) periods came back unchanged (slave capture xruns \(slaveXruns))")
    let graph = try await pair.master.tool("jack_lsp", ["-s", pair.master.name, "-l", pair.fromSlave[0]])
    let stated = graph.stdout.first { $0.contains("playback latency") }?.trimmingCharacters(in: .whitespaces) ?? "?"
    print(
      "NetJack2 (-l \(pair.latency), \(period)-frame periods): master capture vs render: \(compared.exact) of \(compared.periods) periods bit-exact (residual -inf dB), \(compared.damaged.count) differ (residual over all \(twoDecimals(compared.residualDB)) dB; jack_capture xruns \(masterXruns)), \(compared.shifts) capture shifts; round trip slave→master→slave \(trip.offset) frames = \(Double(trip.offset) / Double(period)) periods (\(trip.exact) of \(trip.periods) periods unchanged); from_slave_1 \(stated)"
    )
    pair.stopAndExpectGone()
  }

  /// A capture compared with a reference (the render) one JACK period of the capture at a time.
  struct PeriodComparison {
    /// Capture frame of reference frame 0 at the start.
    var offset = 0
    /// Capture periods that hold reference frames with sound, those equal to it (to 1e-5), and
    /// the capture periods that differ.
    var periods = 0
    var exact = 0
    var damaged: [Int] = []
    /// Whole-period moves of the alignment (jack_capture lost or repeated a period).
    var shifts = 0
    /// 20·log10(RMS of the difference / RMS of the reference) over every compared period.
    var residualDB = -Double.infinity
    var exactShare: Double { periods == 0 ? 0 : Double(exact) / Double(periods) }
  }

  /// Finds where `reference` lies in `capture` (the offset, within 8 periods of the onsets'
  /// difference, at which the most of the first 40 periods after the onset are equal), then walks
  /// the capture period by period (jack_capture and the link both work in whole periods):
  /// a period equal to the reference counts as exact; one that is not is tried at whole-period
  /// moves of the alignment (up to 8, a period lost or repeated by the recorder), and counts as
  /// damaged if none fits. Unlike an onset alignment, a damaged first period does not misalign
  /// the rest.
  func comparePeriods(
    reference: AudioData, capture: AudioData, period: Int, from: Int? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws -> PeriodComparison {
    let tolerance: Float = 1e-5
    let r0 = try #require(firstFrame(above: 1e-3, in: reference), "the reference is silent", sourceLocation: sourceLocation)
    let c0 = try #require(firstFrame(above: 1e-3, in: capture), "the capture is silent", sourceLocation: sourceLocation)
    func equal(_ captureStart: Int, _ offset: Int, _ count: Int) -> Bool {
      for f in captureStart..<(captureStart + count) {
        let r = f - offset
        guard r >= 0, r < reference.frames, f >= 0, f < capture.frames else { return false }
        for c in 0..<2 where abs(reference.sample(r, c) - capture.sample(f, c)) > tolerance { return false }
      }
      return true
    }
    var best = (offset: c0 - r0, score: -1)
    for o in (c0 - r0 - 8 * period)...(c0 - r0 + 8 * period) where o >= (from ?? Int.min) {
      var score = 0
      for b in 0..<40 {
        let start = r0 + o + b * period
        if equal(start, o, period) { score += 1 }
      }
      if score > best.score { best = (o, score) }
    }
    var result = PeriodComparison(offset: best.offset)
    var o = best.offset
    var signal = 0.0, residual = 0.0
    var p = max(0, o) / period
    while p * period < capture.frames {
      let start = p * period
      let count = min(period, capture.frames - start)
      let first = start - o, last = first + count
      defer { p += 1 }
      guard first >= 0, last <= reference.frames else {
        if first >= reference.frames { break }
        continue
      }
      // Only periods where the reference has sound count (silence matches anything silent).
      guard (first..<last).contains(where: { abs(reference.sample($0, 0)) > 1e-4 || abs(reference.sample($0, 1)) > 1e-4 }) else { continue }
      result.periods += 1
      if !equal(start, o, count) {
        if let k = [1, -1, 2, -2, 3, -3, 4, -4, 5, -5, 6, -6, 7, -7, 8, -8].first(where: { equal(start, o + $0 * period, count) }) {
          o += k * period
          result.shifts += 1
        } else {
          result.damaged.append(p)
        }
      }
      if result.damaged.last != p { result.exact += 1 }
      for f in start..<(start + count) where f - o >= 0 && f - o < reference.frames {
        for c in 0..<2 {
          let r = Double(reference.sample(f - o, c)), d = Double(capture.sample(f, c)) - r
          signal += r * r
          residual += d * d
        }
      }
    }
    if residual > 0 { result.residualDB = 10 * log10(residual / max(signal, 1e-30)) }
    return result
  }

  /// Records the slave's two outputs on the master for `seconds` and measures the left channel.
  /// jack_capture that cannot open its client (see slaveMixEqualsRender) is started again, for up
  /// to 30 s.
  func hearOnMaster(
    _ pair: NetJackPair, seconds: Double, path: String, dir: IntegrationTempDir
  ) async throws -> (peak: Float, longestSilence: Int, firstSound: Int?) {
    let deadline = monotonicSeconds() + 30
    var attempt = 0
    while true {
      attempt += 1
      do {
        let run = try pair.master.startCapture(ports: pair.fromSlave, seconds: seconds, to: path + ".\(attempt).wav", hookDir: dir)
        _ = try await run.finish(timeout: seconds + 10)
        break
      } catch {
        if monotonicSeconds() > deadline { throw error }
        await pause(0.5)
      }
    }
    let audio = try readAudio(path + ".\(attempt).wav")
    let sound = onset(of: audio, channel: 0, above: 1e-3)
    let from = sound ?? 0
    return (
      peakLevel(audio, channel: 0, frames: from..<audio.frames),
      longestSilence(audio, channel: 0, frames: from..<audio.frames), sound
    )
  }

  /// A second of the master's recording of the slave without a gap, at most 3 tries: right
  /// after a relink, on a loaded machine, the dummy-driven servers (not realtime) can still lose
  /// a few periods over the link. The last recording and how many were made.
  func hearCleanly(
    _ pair: NetJackPair, path: String, dir: IntegrationTempDir
  ) async throws -> (peak: Float, longestSilence: Int, tries: Int) {
    var tries = 0
    while true {
      tries += 1
      let heard = try await hearOnMaster(pair, seconds: 1, path: path + ".try\(tries)", dir: dir)
      if (heard.peak > 0.1 && heard.longestSilence < 480) || tries == 3 { return (heard.peak, heard.longestSilence, tries) }
    }
  }

  /// Records short clips on the master from the slave's current client until one has sound, for
  /// at most `timeout` seconds (a clip of a stale client, or one whose ports vanish under
  /// jack_capture, is silent or fails: the next one is tried). The seconds it took, or nil.
  func waitForSoundOnMaster(
    _ pair: NetJackPair, since start: Double, timeout: Double, dir: IntegrationTempDir, name: String
  ) async throws -> Double? {
    var attempt = 0
    while monotonicSeconds() - start < timeout {
      attempt += 1
      guard try await pair.waitForLink(timeout: max(0.1, timeout - (monotonicSeconds() - start))) else { return nil }
      if let heard = try? await hearOnMaster(pair, seconds: 0.3, path: dir.file("\(name)-probe-\(attempt).wav"), dir: dir),
        heard.peak > 0.1
      {
        return monotonicSeconds() - start
      }
    }
    return nil
  }

  /// How many lines of the slave's log contain `text` (the net driver logs each lost link).
  func logCount(_ server: PrivateJackServer, _ text: String) -> Int {
    let log = (try? String(contentsOfFile: server.logPath, encoding: .utf8)) ?? ""
    return log.components(separatedBy: text).count - 1
  }

  /// stemdeck on the slave, looping, with changed settings, routed to the slave's outputs and
  /// playing; the stems table it shows.
  func playingDeckOnSlave(_ pair: NetJackPair, _ dir: IntegrationTempDir) async throws -> (StemdeckProcess, [String: StemRow]) {
    let deck = try StemdeckProcess(server: pair.slave, session: try loopingSession(dir))
    try await deck.run("vol a 0.65")
    try await deck.run("pan b -0.25")
    try await deck.run("connect master_L system:playback_1")
    try await deck.run("connect master_R system:playback_2")
    try await deck.run("play")
    let table = try await deck.stemsTable()
    try #require(table["a"]?.volume == "0.65" && table["b"]?.pan == "-0.25", "unexpected table: \(table)")
    return (deck, table)
  }

  /// After a fault: stemdeck still runs, plays, is still connected to its (slave) server and
  /// shows the same stems; its master is routed to the slave's outputs again (the net driver
  /// registers them anew when the link comes back).
  func checkKept(_ deck: StemdeckProcess, _ pair: NetJackPair, _ expected: [String: StemRow], _ what: String) async throws {
    #expect(deck.child.isRunning, "\(what): stemdeck exited\n\(deck.transcript.suffix(3000))")
    let first = try await deck.status()
    var second = first
    let moved = try await eventually(timeout: 2, interval: 0.05) {
      second = try await deck.status()
      return statusPosition(second) != statusPosition(first)
    }
    #expect(
      second["state"] == "playing" && moved,
      "\(what): state \(second["state"] ?? "?"), position \(first["position"] ?? "?") → \(second["position"] ?? "?")")
    #expect(second["server"] == "\(pair.slave.name) (connected)", "\(what): server \(second["server"] ?? "?")")
    #expect(try await deck.stemsTable() == expected, "\(what): stems changed")
    // Its server (the slave) never went away: no interruption, no reconnect.
    #expect(deck.eventCount("went away") == 0 && deck.eventCount("reconnected") == 0, "\(what): \(deck.events)")
  }

  /// What `startMasterAgain` found: seconds from the netmanager loaded to the link and to
  /// stemdeck heard on the master (nil: never heard), the masters killed and started again, and
  /// why each start failed.
  struct MasterComeback {
    var linkedAfter = 0.0
    var heardAfter: Double?
    var restarts = 0
    var failures: [String] = []
  }

  /// Starts the master (after it was killed, or, with `killFirst`, kills the broken one first),
  /// loads its netmanager, and waits for the slave's link and for stemdeck's sound on it.
  /// A master started on a loaded machine sometimes comes up broken on jackd's side (its
  /// netmanager's client for the slave torn down: "jack_sem… already deallocated", no client can
  /// open): then it is killed and started again, as an operator would, at most 3 starts in all,
  /// and the restarts are reported. stemdeck on the slave is what is tested.
  func startMasterAgain(
    _ pair: NetJackPair, _ deck: StemdeckProcess, dir: IntegrationTempDir, name: String, killFirst: Bool
  ) async throws -> MasterComeback {
    var result = MasterComeback()
    for attempt in 1...3 {
      if attempt > 1 || killFirst {
        pair.master.kill9()
        pair.master.removeStaleFiles()
        result.restarts += 1
      }
      try await pair.master.start()
      try await NetJackPair.loadManager(on: pair.master, port: pair.port)
      let upAt = monotonicSeconds()
      guard try await pair.waitForLink(timeout: 25) else {
        result.failures.append("start \(attempt): the slave did not link within 25 s; \(await pair.diagnosis())")
        continue
      }
      result.linkedAfter = monotonicSeconds() - upAt
      result.heardAfter = try await waitForSoundOnMaster(pair, since: upAt, timeout: 25, dir: dir, name: "\(name)-\(attempt)")
      if result.heardAfter != nil { break }
      result.failures.append(
        "start \(attempt): stemdeck was not heard within 25 s; stemdeck's events: \(deck.events); \(await pair.diagnosis())")
    }
    return result
  }

  /// Whether the master is broken on jackd's side (see `startMasterAgain`): no client can open
  /// on it (jack_lsp fails 3 times, 0.5 s apart), or its log says, since it had `deallocated`
  /// such lines, that the netmanager signals a client already torn down.
  func masterBroken(_ pair: NetJackPair, deallocated: Int) async -> Bool {
    if logCount(pair.master, "already deallocated") > deallocated { return true }
    for attempt in 1...3 {
      if attempt > 1 { await pause(0.5) }
      if (try? await pair.master.ports()) != nil { return false }
    }
    return true
  }

  @Test(
    "the master server killed (kill -9) and restarted, twice (5 times with STEMDECK_LONG_TESTS): stemdeck on the slave keeps running, playing and its settings, and is heard on the master again each time"
  )
  func masterKilledAndRestarted() async throws {
    let dir = try IntegrationTempDir("stemdeck-netjack-kill")
    let pair = try await NetJackPair(latency: 2)
    defer { pair.stop() }
    let (deck, expected) = try await playingDeckOnSlave(pair, dir)
    defer { deck.kill() }
    let before = try await hearOnMaster(pair, seconds: 1, path: dir.file("before.wav"), dir: dir)
    #expect(before.peak > 0.1 && before.longestSilence < 480, "before: peak \(before.peak), longest silence \(before.longestSilence)")

    var noticed: [Double] = [], linked: [Double] = [], heardAfter: [Double] = []
    var masterRestarts = 0
    for k in 1...(longTests ? 5 : 2) {
      let lost = logCount(pair.slave, "Waiting for a master")
      let killedAt = monotonicSeconds()
      pair.master.kill9()
      pair.master.removeStaleFiles()
      // The slave's net driver says when it has lost its master and waits for one again.
      let waiting = await eventually(timeout: 10) { self.logCount(pair.slave, "Waiting for a master") > lost }
      try #require(waiting, "kill \(k): the slave did not notice the master was gone")
      noticed.append(monotonicSeconds() - killedAt)
      try await checkKept(deck, pair, expected, "kill \(k), master down")
      let down = try await deck.status()
      #expect(
        down["driver"] == "net (waiting for master 127.0.0.1, UDP port \(pair.port), network latency 2 periods)", "kill \(k): \(down)")

      let back = try await startMasterAgain(pair, deck, dir: dir, name: "kill-\(k)", killFirst: false)
      masterRestarts += back.restarts
      guard let soundAfter = back.heardAfter else {
        Issue.record("kill \(k): the master restarted 3 times, never heard stemdeck:\n\(back.failures.joined(separator: "\n"))")
        return
      }
      linked.append(back.linkedAfter)
      heardAfter.append(soundAfter)
      let routes = try await pair.slave.connections()
      #expect(
        routes["stemdeck:master_L"] == ["system:playback_1"] && routes["stemdeck:master_R"] == ["system:playback_2"],
        "kill \(k): stemdeck's routing on the slave: \(routes)")
      let heard = try await hearCleanly(pair, path: dir.file("after-\(k).wav"), dir: dir)
      #expect(
        heard.peak > 0.1 && heard.longestSilence < 480,
        "kill \(k): the master heard peak \(heard.peak), longest silence \(heard.longestSilence) in each of \(heard.tries) seconds recorded"
      )
      try await checkKept(deck, pair, expected, "kill \(k), master back")
    }
    let status = try await deck.status()
    #expect(status["underruns"] == "0", "\(status)")
    #expect(try await deck.finish() == 0, "\(deck.transcript.suffix(3000))")
    func s(_ xs: [Double]) -> String { xs.map(twoDecimals).joined(separator: ", ") }
    print(
      "NetJack2 master killed \(noticed.count) times: the slave noticed after \(s(noticed)) s; from the master's netmanager loaded: linked after \(s(linked)) s, stemdeck heard on the master again after \(s(heardAfter)) s; broken masters restarted again: \(masterRestarts)"
    )
    pair.stopAndExpectGone()
  }

  /// The link silent for 2 s, on loopback without namespaces or firewall rules: the master's
  /// jackd is stopped (SIGSTOP) until the slave has declared its master lost and at least 2 s
  /// have passed, then continued. For the slave that is a dropped link (no packet arrives); the
  /// master finds its old client for the slave stale and takes the slave's new request.
  @Test(
    "the link silent for 2 s (master stopped with SIGSTOP, then continued), twice (5 times with STEMDECK_LONG_TESTS): stemdeck on the slave keeps running, playing and its settings, and is heard on the master again each time"
  )
  func linkDropped() async throws {
    let dir = try IntegrationTempDir("stemdeck-netjack-drop")
    let pair = try await NetJackPair(latency: 2)
    defer { pair.stop() }
    let (deck, expected) = try await playingDeckOnSlave(pair, dir)
    defer { deck.kill() }
    var masterPID = try #require(pair.master.pid)
    var noticed: [Double] = [], back: [Double] = [], heardAfter: [Double] = []
    var brokenRounds: [Int] = [], masterRestarts = 0
    for k in 1...(longTests ? 5 : 2) {
      let lost = logCount(pair.slave, "Waiting for a master")
      let links = logCount(pair.slave, "Initializing connection with")
      let deallocated = logCount(pair.master, "already deallocated")
      let droppedAt = monotonicSeconds()
      kill(masterPID, SIGSTOP)
      let declared = await eventually(timeout: 15) {
        self.logCount(pair.slave, "Waiting for a master") > lost && monotonicSeconds() - droppedAt >= 2
      }
      noticed.append(monotonicSeconds() - droppedAt)
      try await checkKept(deck, pair, expected, "drop \(k), link down")
      let resumedAt = monotonicSeconds()
      kill(masterPID, SIGCONT)
      try #require(declared, "drop \(k): the slave did not declare its master lost within 15 s")
      let relinked = await eventually(timeout: 15) { self.logCount(pair.slave, "Initializing connection with") > links }
      try #require(relinked, "drop \(k): the slave did not link again within 15 s of the master resuming")
      back.append(monotonicSeconds() - resumedAt)
      // The master takes 1.4 s to 12 s here (more under load) to drop its stale client for the
      // slave and take the new one: that is jackd's netmanager, not stemdeck.
      var soundAfter = try await waitForSoundOnMaster(pair, since: resumedAt, timeout: 45, dir: dir, name: "drop-\(k)")
      if soundAfter == nil {
        let diagnosis = await pair.diagnosis()
        // Sometimes (CI, stop 31) the resumed master's netmanager tears its client for the slave
        // down while its engine still signals it, and no client can open on the master again:
        // jackd is broken, not stemdeck. Then the master is restarted and stemdeck on the slave
        // must be heard on the new one; a healthy master that does not hear it is a failure.
        guard await masterBroken(pair, deallocated: deallocated) else {
          Issue.record(
            "drop \(k): stemdeck was not heard on the master within 45 s of it resuming, and the master is not broken (client \(pair.client)); \(diagnosis)"
          )
          return
        }
        brokenRounds.append(k)
        let comeback = try await startMasterAgain(pair, deck, dir: dir, name: "drop-\(k)-restart", killFirst: true)
        masterRestarts += comeback.restarts
        masterPID = try #require(pair.master.pid)
        guard let heard = comeback.heardAfter else {
          Issue.record(
            "drop \(k): the master resumed broken (\(diagnosis)) and was restarted \(comeback.restarts) times; stemdeck was never heard:\n\(comeback.failures.joined(separator: "\n"))"
          )
          return
        }
        soundAfter = heard
      }
      heardAfter.append(soundAfter ?? -1)
      let heard = try await hearCleanly(pair, path: dir.file("after-\(k).wav"), dir: dir)
      #expect(
        heard.peak > 0.1 && heard.longestSilence < 480,
        "drop \(k): the master heard peak \(heard.peak), longest silence \(heard.longestSilence) in each of \(heard.tries) seconds recorded (client \(pair.client))"
      )
      try await checkKept(deck, pair, expected, "drop \(k), link back")
    }
    #expect(try await deck.finish() == 0, "\(deck.transcript.suffix(3000))")
    func s(_ xs: [Double]) -> String { xs.map(twoDecimals).joined(separator: ", ") }
    print(
      "NetJack2 link silent \(noticed.count) times: the slave declared its master lost after \(s(noticed)) s; after the master resumed: the slave contacted it again after \(s(back)) s, stemdeck heard on the master again after \(s(heardAfter)) s (master's client now \(pair.client)); the master resumed broken in rounds \(brokenRounds) and was restarted \(masterRestarts) times"
    )
    pair.stopAndExpectGone()
  }
}
