// Integration tests for issue 26: stemdeck as a good JACK citizen beside other JACK tools
// (jack_property, jack_lsp, jack_connect), and the display details a daily user trips over.
// Each test starts its own private server (TestSupport.swift).

import Foundation
import StemdeckTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("a good JACK citizen", .serialized, .timeLimit(.minutes(2)))
struct JackCitizenTests {

  /// `jack_lsp -U`: our ports' UUIDs, by full name.
  func portUUIDs(_ server: PrivateJackServer, client: String) async throws -> [String: String] {
    let r = try await server.tool("jack_lsp", ["-s", server.name, "-U"])
    guard r.status == 0 else { throw HarnessError("jack_lsp -U failed: \(r.text)") }
    var out: [String: String] = [:]
    var current: String?
    for line in r.stdout {
      let trimmed = line.trimmingCharacters(in: .whitespaces)
      if trimmed.hasPrefix("uuid: "), let port = current {
        out[port] = String(trimmed.dropFirst(6))
      } else if !line.hasPrefix(" ") && !line.hasPrefix("\t") && !line.isEmpty {
        current = line
      }
    }
    return out.filter { $0.key.hasPrefix(client + ":") }
  }

  /// The pretty names stored for `uuid` (`jack_property -l UUID`); [] when it has none.
  /// jack2 keeps one metadata database for all of a user's servers.
  func prettyNames(_ server: PrivateJackServer, uuid: String) async throws -> [String] {
    let r = try await server.tool("jack_property", ["-l", uuid])
    return r.stdout.compactMap { line -> String? in
      guard line.contains("pretty-name"), let v = line.range(of: "value: ") else { return nil }
      let rest = line[v.upperBound...]
      return String(rest.range(of: " type:").map { rest[..<$0.lowerBound] } ?? rest)
    }
  }

  @Test("port properties: each port's pretty name is its own, and goes with the port on directout off, quit and SIGTERM")
  func portMetadata() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir("stemdeck-meta")
    defer { dir.remove() }
    let client = "sdmeta\(getpid() % 10000)"

    let deck = try StemdeckProcess(server: server, extra: ["--name", client])
    defer { deck.kill() }
    try await deck.run("add \(samplesDirectory)/bass.flac")
    try await deck.run("directout bass on")
    var uuids: [String: String] = [:]
    let appeared = try await eventually(timeout: 5, interval: 0.05) {
      uuids = try await portUUIDs(server, client: client)
      return uuids["\(client):bass_R"] != nil
    }
    #expect(appeared, "direct outs not registered: \(uuids)")
    let expected = [
      "master_L": "stemdeck master left", "master_R": "stemdeck master right",
      "in_L": "stemdeck record input left", "in_R": "stemdeck record input right",
      "bass_L": "bass left", "bass_R": "bass right"
    ]
    for (port, name) in expected {
      let uuid = try #require(uuids["\(client):\(port)"], "no uuid for \(port): \(uuids)")
      let names = try await prettyNames(server, uuid: uuid)
      #expect(names == [name], "\(port) (\(uuid)): \(names)")
    }

    // directout off: the port and its properties go together.
    try await deck.run("directout bass off")
    let bassGone = try await eventually(timeout: 5, interval: 0.05) {
      try await portUUIDs(server, client: client)["\(client):bass_L"] == nil
    }
    #expect(bassGone)
    for port in ["bass_L", "bass_R"] {
      let names = try await prettyNames(server, uuid: uuids["\(client):\(port)"]!)
      #expect(
        !names.contains("\(port == "bass_L" ? "bass left" : "bass right")"), "\(port)'s properties stayed after directout off: \(names)")
    }

    // quit: nothing of ours is left.
    #expect(try await deck.finish() == 0, "\(deck.transcript)")
    for port in ["master_L", "master_R", "in_L", "in_R"] {
      let names = try await prettyNames(server, uuid: uuids["\(client):\(port)"]!)
      #expect(!names.contains(expected[port]!), "\(port)'s properties stayed after quit: \(names)")
    }

    // SIGTERM (script mode ends cleanly): the same.
    let second = try StemdeckProcess(server: server, extra: ["--name", client])
    defer { second.kill() }
    try await second.run("echo ready")
    let secondUUIDs = try await portUUIDs(server, client: client)
    #expect(secondUUIDs.count == 4, "\(secondUUIDs)")
    second.child.send(signal: SIGTERM)
    _ = await second.child.waitForExit(timeout: 10)
    for (port, uuid) in secondUUIDs {
      let short = String(port.split(separator: ":").last!)
      let names = try await prettyNames(server, uuid: uuid)
      #expect(!names.contains(expected[short]!), "\(port)'s properties stayed after SIGTERM: \(names)")
    }

    // A port born with a UUID whose stale properties another port left (a kill -9; jack2 does
    // not clean up): its name is its own. The stale entry is planted with jack_property.
    let third = try StemdeckProcess(server: server, extra: ["--name", client])
    defer { third.kill() }
    try await third.run("add \(samplesDirectory)/bass.flac")
    let before = try await portUUIDs(server, client: client)
    // The next port registered on this server takes the next UUID: plant a stale name there.
    let highest = before.values.compactMap { UInt64($0) }.max() ?? 0
    for next in [highest + 1, highest + 2] {
      for (key, value) in [
        ("http://jackaudio.org/metadata/pretty-name", "stemdeck record input left"),
        ("http://jackaudio.org/metadata/order", "7")
      ] {
        let r = try await server.tool("jack_property", ["-s", "\(next)", key, value])
        #expect(r.status == 0, "jack_property -s: \(r.text)")
      }
    }
    try await third.run("directout bass on")
    var fresh: [String: String] = [:]
    _ = try await eventually(timeout: 5, interval: 0.05) {
      fresh = try await portUUIDs(server, client: client)
      return fresh["\(client):bass_R"] != nil
    }
    for port in ["bass_L", "bass_R"] {
      let uuid = try #require(fresh["\(client):\(port)"], "\(fresh)")
      let names = try await prettyNames(server, uuid: uuid)
      #expect(names == [expected[port]!], "\(port) (\(uuid)): \(names)")
      let all = try await server.tool("jack_property", ["-l", uuid]).stdout.filter { $0.contains("key: ") }
      #expect(all.count == 1, "\(port) (\(uuid)) kept a stale property: \(all)")
    }
    #expect(try await third.finish() == 0, "\(third.transcript)")
  }

  @Test(
    "after kill -9 and a restart of jackd the re-registered ports carry their own names, and nothing of the old ports' names is left on a UUID no port has"
  )
  func portMetadataAcrossServerRestart() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let client = "sdrestart\(getpid() % 10000)"
    let deck = try StemdeckProcess(server: server, extra: ["--name", client])
    defer { deck.kill() }
    try await deck.run("add \(samplesDirectory)/bass.flac")
    try await deck.run("directout bass on")
    var before: [String: String] = [:]
    _ = try await eventually(timeout: 5, interval: 0.05) {
      before = try await portUUIDs(server, client: client)
      return before.count == 6
    }
    #expect(before.count == 6, "\(before)")

    server.kill9()
    let wentAway = try await eventually(timeout: 5, interval: 0) {
      try await deck.run("wait 0.1")
      return deck.events.contains { $0.contains("went away") }
    }
    try #require(wentAway, "\(deck.transcript)")
    // The dead server's properties stay in the database (nobody could remove them), and the new
    // server hands out port UUIDs from the start again.
    try await server.start()
    let back = try await eventually(timeout: 10, interval: 0) {
      try await deck.run("wait 0.1")
      return deck.events.contains { $0.contains("reconnected to JACK server") }
    }
    try #require(back, "\(deck.transcript)")
    var after: [String: String] = [:]
    _ = try await eventually(timeout: 5, interval: 0.05) {
      after = try await portUUIDs(server, client: client)
      return after.count == 6
    }
    let expected = [
      "master_L": "stemdeck master left", "master_R": "stemdeck master right",
      "in_L": "stemdeck record input left", "in_R": "stemdeck record input right",
      "bass_L": "bass left", "bass_R": "bass right"
    ]
    for (port, name) in expected {
      let uuid = try #require(after["\(client):\(port)"], "\(after)")
      let names = try await prettyNames(server, uuid: uuid)
      #expect(names == [name], "\(port) (\(uuid)) after the restart: \(names)")
    }
    // The old UUIDs that no port has now hold none of the names stemdeck gave them.
    let live = Set(after.values)
    for (port, uuid) in before where !live.contains(uuid) {
      let short = String(port.split(separator: ":").last!)
      let names = try await prettyNames(server, uuid: uuid)
      #expect(!names.contains(expected[short]!), "\(port)'s old UUID \(uuid) kept its name: \(names)")
    }
    #expect(try await deck.finish() == 0, "\(deck.transcript)")
  }

  @Test("a second instance renamed by JACK says so on start, naming the new client and --name")
  func renamedInstance() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let first = try StemdeckProcess(server: server)
    defer { first.kill() }
    try await first.run("echo ready")
    #expect(!first.stderrLines.contains { $0.contains("note:") }, "\(first.transcript)")
    let second = try StemdeckProcess(server: server)
    defer { second.kill() }
    let status = try await second.status()
    #expect(status["client"] == "stemdeck-01", "\(status)")
    let note = second.stderrLines.first { $0.hasPrefix("note: ") }
    #expect(note?.contains("'stemdeck-01'") == true && note?.contains("--name") == true, "\(second.transcript)")
    #expect(!second.lines.contains { $0.hasPrefix("note: ") }, "the note belongs on stderr in script mode: \(second.lines)")
    #expect(try await second.finish() == 0)
    #expect(try await first.finish() == 0)
  }

  @Test("routes, connections and ports draw the signal's direction: in_L ← peer, master_L → peer")
  func routeDirections() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let deck = try StemdeckProcess(server: server)
    defer { deck.kill() }
    try await deck.run("connect master_L system:playback_1")
    try await server.connect("system:capture_1", "stemdeck:in_L")
    _ = try await eventually(timeout: 3, interval: 0.05) {
      try await deck.run("routes").contains { $0.contains("in_L") }
    }
    let routes = try await deck.run("routes")
    #expect(routes.contains("connected  master_L → system:playback_1"), "\(routes)")
    #expect(routes.contains("connected  in_L ← system:capture_1"), "\(routes)")
    let connections = try await deck.run("connections")
    #expect(connections.contains("in_L ← system:capture_1"), "\(connections)")
    let ports = try await deck.run("ports stemdeck:in_L")
    #expect(ports.contains("in   stemdeck:in_L  ← system:capture_1"), "\(ports)")
    #expect(try await deck.finish() == 0, "\(deck.transcript)")
  }

  @Test("at the end of a song: status never past the end, loop number at most the passes, play rewinds without a stale end event")
  func endOfSong() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir("stemdeck-end")
    defer { dir.remove() }
    try writeSine(dir.file("short.wav"), sampleRate: 48000, seconds: 0.25, frequencies: [440])
    try writeSession(dir.file("s.json"), stems: [SessionStem(name: "short", file: "short.wav", loops: 3)])
    let deck = try StemdeckProcess(server: server, session: dir.file("s.json"))
    defer { deck.kill() }
    let start = deck.lineCount
    try await deck.run("play")
    #expect(await deck.waitForLine(containing: "event: all stems finished", from: start, timeout: 10) != nil, "\(deck.transcript)")
    let status = try await deck.status()
    let position = try #require(statusPosition(status), "\(status)")
    #expect(status["position"]?.hasSuffix("/ 0:01.000") == true, "\(status)")
    #expect(position <= 1.0, "position past the end: \(status["position"] ?? "")")
    let row = try await deck.run("stems").first { $0.hasPrefix("short ") }
    let cells = row?.split(separator: " ").map(String.init) ?? []
    #expect(cells.count >= 11 && cells[8] == "3" && cells[10] == "4", "loops 3 is 4 passes: \(row ?? "no row")")

    // play at the end rewinds: no second end event until the song has played again.
    let beforePlay = deck.lineCount
    try await deck.run("play")
    var replayed = false
    _ = try await eventually(timeout: 5, interval: 0.02) {
      let p = statusPosition(try await deck.status()) ?? 0
      replayed = p > 0.2 && p < 0.9
      return replayed || p >= 0.9
    }
    #expect(replayed, "\(deck.transcript)")
    let stale = deck.lines.dropFirst(beforePlay).filter { $0.contains("all stems finished") }
    #expect(stale.isEmpty, "stale end event after play: \(stale)")
    #expect(await deck.waitForLine(containing: "event: all stems finished", from: beforePlay, timeout: 10) != nil, "\(deck.transcript)")
    #expect(try await deck.finish() == 0, "\(deck.transcript)")
  }

  @Test("events CLASS… hides the other classes in script mode; events on shows them again, as 'event: ' lines")
  func eventFilter() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir("stemdeck-events")
    defer { dir.remove() }
    try writeSine(dir.file("short.wav"), sampleRate: 48000, seconds: 0.3, frequencies: [440])
    try writeSession(dir.file("s.json"), stems: [SessionStem(name: "short", file: "short.wav")])
    let deck = try StemdeckProcess(server: server, session: dir.file("s.json"))
    defer { deck.kill() }
    let listing = try await deck.run("events xrun server")
    #expect(listing.contains { $0.hasPrefix("end       hidden") }, "\(listing)")
    let start = deck.lineCount
    try await deck.run("play")
    // The song ends (the mixer counts it in status' stem flags: E) without an event line.
    let ended = try await eventually(timeout: 10, interval: 0.05) {
      try await deck.run("stems").contains { $0.hasPrefix("short ") && $0.contains(" E") }
    }
    #expect(ended, "\(deck.transcript)")
    #expect(!deck.lines.dropFirst(start).contains { $0.contains("finished") }, "hidden events shown: \(deck.transcript)")
    let again = deck.lineCount
    try await deck.run("events on")
    try await deck.run("play")
    #expect(await deck.waitForLine(containing: "event: all stems finished", from: again, timeout: 10) != nil, "\(deck.transcript)")
    #expect(deck.lines.dropFirst(again).contains("event: stem 'short' finished"), "\(deck.transcript)")
    #expect(try await deck.finish() == 0, "\(deck.transcript)")
  }

  /// Holds a write lock in JACK's metadata database on one property's bucket, as a program
  /// killed inside a metadata call leaves it, until its stdin closes (python3-bsddb3: the same
  /// Berkeley DB environment libjack opens, with libjack's flags and key layout).
  static let lockHolder = #"""
    import sys
    from bsddb3 import db
    home, uuid, key = sys.argv[1], sys.argv[2], sys.argv[3]
    env = db.DBEnv()
    env.open(home, db.DB_CREATE | db.DB_INIT_LOCK | db.DB_INIT_MPOOL | db.DB_THREAD)
    d = db.DB(env)
    d.open(home + "/metadata.db", dbtype=db.DB_HASH, flags=db.DB_CREATE | db.DB_THREAD, mode=0o666)
    # libjack's key: the subject's UUID in decimal, NUL-padded to 37 bytes, then the key and a NUL.
    k = uuid.encode().ljust(37, b"\0") + key.encode() + b"\0"
    d.put(k, b"held\0text/plain\0")
    cursor = d.cursor()
    cursor.set(k, flags=db.DB_RMW)  # a write lock on the key's bucket, kept
    print("ready", flush=True)
    sys.stdin.read()
    cursor.close()
    d.close()
    env.close()
    print("released", flush=True)
    """#

  @Test(
    "JACK's metadata database left locked (as by a program killed inside a metadata call): stemdeck starts in seconds, says so once, plays, adds ports at once and quits"
  )
  func lockedMetadataDatabase() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir("stemdeck-metalock")
    defer { dir.remove() }
    let client = "sdlock\(getpid() % 10000)"
    // The UUID master_L is given: a first instance's, which quits (its ports' places are free again).
    let first = try StemdeckProcess(server: server, extra: ["--name", client])
    defer { first.kill() }
    try await first.run("echo up")
    let uuid = try #require(try await portUUIDs(server, client: client)["\(client):master_L"])
    #expect(try await first.finish() == 0, "\(first.transcript)")

    let holder = try await startPythonPeer(
      Self.lockHolder, file: dir.file("hold.py"),
      arguments: [JackMetadataStore.directory, uuid, "http://jackaudio.org/metadata/pretty-name"], server: server,
      what: "the metadata lock holder (python3-bsddb3)")
    defer { holder.terminate(grace: 5) }
    let started = monotonicSeconds()
    let deck = try StemdeckProcess(server: server, extra: ["--name", client])
    defer { deck.kill() }
    try await deck.run("echo up", timeout: 30)
    let startup = monotonicSeconds() - started
    #expect(startup < 10, "stemdeck took \(startup) s to start beside a locked metadata database\n\(deck.transcript)")
    // No other JACK client is opened meanwhile: jackd itself hangs on the lock when a client
    // leaves (it removes the client's properties), so the ports are stemdeck's own `ports`.
    #expect(try await deck.run("ports").contains { $0.contains("\(client):master_L") }, "\(deck.transcript)")
    let said = deck.stderrLines.filter { $0.contains("metadata database") }
    #expect(
      said.count == 1 && said.first?.contains("did not answer within 3 s") == true && said.first?.contains("jack_db-") == true,
      "\(deck.transcript)")

    // It plays, and later ports come at once (the database is not asked again).
    try await deck.run("add \(samplesDirectory)/bass.flac")
    try await deck.run("play")
    let asked = monotonicSeconds()
    try await deck.run("directout bass on")
    #expect(monotonicSeconds() - asked < 2, "directout waited for the database again\n\(deck.transcript)")
    #expect(try await deck.run("ports").contains { $0.contains("\(client):bass_L") }, "\(deck.transcript)")
    _ = try await eventually(timeout: 5, interval: 0.05) {
      try await deck.run("status").contains { $0.hasPrefix("position: ") && !$0.hasPrefix("position: 0:00.000") }
    }
    let status = try await deck.run("status")
    #expect(status.contains("state: playing"), "\(status)")
    #expect(status.contains { $0.hasPrefix("position: ") && !$0.hasPrefix("position: 0:00.000") }, "\(status)")

    // The lock given back (stemdeck's waiting call then ends), a clean quit.
    holder.closeStdin()
    let released = await eventually(timeout: 10) { holder.stdoutLines.contains("released") }
    #expect(released, "\(holder.stderrLines)")
    #expect(try await deck.finish() == 0, "\(deck.transcript)")
    #expect(deck.stderrLines.filter { $0.contains("metadata database") }.count == 1, "\(deck.transcript)")
  }
}

@Suite("port completion in a real terminal", .serialized, .timeLimit(.minutes(2)))
struct PortCompletionTests {
  @Test(
    "connect master_L sys<Tab> offers only playback ports; connect in_L sys<Tab> only capture ports; connect midi_in no audio port; quit! leaves the shell's prompt on its own line"
  )
  func completionFollowsDirection() async throws {
    let binary = try StemdeckBinary.require()
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir("stemdeck-complete")
    defer { dir.remove() }
    let state = try IntegrationTempDir("stemdeck-complete-state")
    defer { state.remove() }
    let command =
      "env XDG_STATE_HOME=\(state.path) JACK_DEFAULT_SERVER=\(server.name) NO_COLOR=1 JACK_NO_START_SERVER=1 "
      + "\(binary) --server \(server.name) --no-start-server --no-connect; printf 'SHELL-PROMPT>'; sleep 30"
    let term = try await TmuxTerminal(command, columns: 100, rows: 30, directory: dir.path)
    defer { term.close() }
    try await term.check(try await term.waitForCursorRow("stemdeck>", timeout: 20), "no prompt: ")

    // The dummy driver has system:capture_1/2 (outputs) and system:playback_1/2 (inputs): the
    // common prefix of what is offered shows which were.
    try await term.type("connect master_L sys")
    try await term.send("Tab")
    try await term.check(try await term.waitForCursorRow("stemdeck> connect master_L system:playback_"), "output → inputs: ")
    try await term.send("C-u")
    try await term.type("connect in_L sys")
    try await term.send("Tab")
    try await term.check(try await term.waitForCursorRow("stemdeck> connect in_L system:capture_"), "input → outputs: ")
    try await term.send("C-u")
    // The first port: every port (short names of our own included).
    try await term.type("connect mas")
    try await term.send("Tab")
    try await term.check(try await term.waitForCursorRow("stemdeck> connect master_"), "first port: ")
    try await term.send("C-u")
    // MIDI connects to MIDI only: the dummy driver has no MIDI ports, so `connect midi_in sys<Tab>`
    // completes nothing (it offered the audio capture ports); the X typed after Tab lands right
    // after "sys".
    try await term.type("midi on")
    try await term.send("Enter")
    try await term.check(try await term.waitForCursorRow("stemdeck>"), "midi on: ")
    try await term.type("connect midi_in sys")
    try await term.send("Tab")
    try await term.type("X")
    try await term.check(try await term.waitForCursorRow("stemdeck> connect midi_in sysX"), "MIDI → no audio ports: ")
    try await term.send("C-u")

    try await term.type("quit!")
    try await term.send("Enter")
    try await term.check(try await term.waitForCursorRow("SHELL-PROMPT>"), "the shell's prompt is not on a line of its own: ")
  }
}

/// The repository's Samples/ folder (real audio the tests can use).
let samplesDirectory: String = {
  URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Samples").path
}()
