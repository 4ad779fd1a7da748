import Foundation
import Testing

/// Script-mode lifecycle: a signal during `wait` stops the script before its next command;
/// connections changed from outside are unsaved changes (and autosave keeps them); libjack's
/// messages are hidden and a user's ~/.jackdrc starts the server.
@Suite("console lifecycle", .serialized, .timeLimit(.minutes(2)))
struct ConsoleLifecycleTests {
  @Test("SIGINT or SIGTERM during 'wait' in a -c line: the rest of the line does not run", arguments: [SIGINT, SIGTERM])
  func signalDuringWait(_ signal: Int32) async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir("stemdeck-sigwait")
    try writeSine(dir.file("a.wav"), sampleRate: 48000, seconds: 1, frequencies: [440])
    let session = dir.file("s.json")
    try writeSession(session, stems: [SessionStem(name: "a", file: "a.wav")])
    let before = try Data(contentsOf: URL(fileURLWithPath: session))
    let stemdeck = try StemdeckProcess(server: server, session: session, extra: ["-c", "wait 60; remove all; save"])
    defer { stemdeck.kill() }
    let opened = await stemdeck.waitForLine(containing: "opened", timeout: 10)
    #expect(opened != nil, "\(stemdeck.transcript)")
    // The wait starts right after the session opened; give the line a moment to reach it.
    _ = await eventually(timeout: 0.3) { false }
    stemdeck.child.send(signal: signal)
    let status = await stemdeck.child.waitForExit(timeout: 2)
    await stemdeck.child.waitForStreams(timeout: 2)
    #expect(status == 130, "exit status \(String(describing: status))\n\(stemdeck.transcript)")
    #expect(!stemdeck.lines.contains { $0.contains("removed") || $0.contains("saved") }, "\(stemdeck.transcript)")
    let after = try Data(contentsOf: URL(fileURLWithPath: session))
    #expect(after == before, "the session file changed")
  }

  @Test("a connection made by another patchbay is an unsaved change; autosave and save keep it")
  func outsideConnectionIsDirty() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir("stemdeck-conn")
    try writeSine(dir.file("a.wav"), sampleRate: 48000, seconds: 1, frequencies: [440])
    let session = dir.file("s.json")
    try writeSession(session, stems: [SessionStem(name: "a", file: "a.wav")])
    let stemdeck = try StemdeckProcess(server: server, session: session)
    defer { stemdeck.kill() }
    try await stemdeck.run("autosave 1")
    #expect(try await stemdeck.status()["session"]?.contains("unsaved") == false)

    try await server.connect("stemdeck:master_R", "system:playback_2")
    let dirty = try await eventually(timeout: 5, interval: 0.05) {
      try await stemdeck.status()["session"]?.contains("unsaved changes") == true
    }
    #expect(dirty, "an outside connection is not an unsaved change\n\(stemdeck.transcript)")
    let autosave = dir.file(".s.json.autosave.json")
    let autosaved = await eventually(timeout: 5, interval: 0.05) {
      ((try? String(contentsOfFile: autosave, encoding: .utf8)) ?? "").contains("system:playback_2")
    }
    #expect(autosaved, "the autosave does not hold the connection")

    // connect/disconnect typed in stemdeck too.
    try await stemdeck.run("save")
    #expect(try await stemdeck.status()["session"]?.contains("unsaved") == false)
    try await stemdeck.run("connect master_L system:playback_1")
    #expect(try await stemdeck.status()["session"]?.contains("unsaved changes") == true)
    try await stemdeck.run("save")
    let saved = try String(contentsOfFile: session, encoding: .utf8)
    #expect(saved.contains("system:playback_1") && saved.contains("system:playback_2"), "\(saved)")
    try await stemdeck.run("disconnect master_L system:playback_1")
    #expect(try await stemdeck.status()["session"]?.contains("unsaved changes") == true)
    #expect(try await stemdeck.finish() == 0)
  }

  @Test("first run without a server: ~/.jackdrc's command starts it, one line says so, libjack stays quiet")
  func jackdrcAndQuietLibjack() async throws {
    let binary = try StemdeckBinary.require()
    try #require(findOnPath("jackd") != nil)
    let home = try IntegrationTempDir("stemdeck-home")
    try "jackd --no-realtime -d dummy -r 44100 -p 512\n".write(toFile: home.file(".jackdrc"), atomically: true, encoding: .utf8)
    let name = "stemdeck-test-\(getpid())-jackdrc"
    defer { PrivateJackServer.removeStaleFiles(of: name) }
    let child = try ChildProcess(
      binary, ["--server", name, "--no-connect", "-c", "status"],
      environment: ["HOME": home.path, "XDG_STATE_HOME": home.file("state"), "JACK_NO_START_SERVER": "1"])
    defer { child.terminate(grace: 5) }
    let status = await child.waitForExit(timeout: 20)
    await child.waitForStreams(timeout: 2)
    let out = child.stdoutLines, err = child.stderrLines
    let transcript = (out + ["--- stderr ---"] + err).joined(separator: "\n")
    #expect(status == 0, "\(transcript)")
    let started = out.filter { $0.contains("started JACK server") }
    #expect(started.count == 1 && started[0].contains("from ~/.jackdrc") && started[0].contains("-d dummy -r 44100"), "\(transcript)")
    #expect(out.contains("sample rate: 44100 Hz"), "\(transcript)")
    #expect(
      !(out + err).contains { $0.contains("Cannot connect") || $0.contains("JackShm") || $0.contains("jack server is not running") },
      "libjack's own messages shown:\n\(transcript)")
    // The server it started is stopped when it exits.
    let check = try await runTool("jack_wait", ["-s", name, "-c"], environment: ["JACK_NO_START_SERVER": "1"], timeout: 10)
    #expect(check.text.contains("not running"), "server still running: \(check.text)")

    // --verbose shows them.
    let verbose = try await runTool(
      binary, ["--server", name + "-absent", "--no-start-server", "--verbose", "-c", "status"],
      environment: ["HOME": home.path, "JACK_NO_START_SERVER": "1"], timeout: 20)
    #expect(verbose.stderr.contains { $0.hasPrefix("jack: ") }, "--verbose: \(verbose.text)")
  }
}

@Suite("a JACK server stemdeck started", .serialized, .timeLimit(.minutes(2)))
struct StartedServerLifetimeTests {
  @Test(
    "kill -9 of a stemdeck that started its jackd: the jackd ends too (a parent-death signal), so the next stemdeck finds no orphan server to adopt"
  )
  func serverDiesWithStemdeck() async throws {
    let binary = try StemdeckBinary.require()
    let state = try IntegrationTempDir("stemdeck-state")
    defer { state.remove() }
    let name = "stemdeck-test-\(getpid())-orphan"
    defer { PrivateJackServer.removeStaleFiles(of: name) }
    let child = try ChildProcess(
      binary, ["--server", name, "--start-server", "dummy", "--no-connect", "--no-control"],
      environment: ["XDG_STATE_HOME": state.path, "JACK_NO_START_SERVER": "1"], stdinPipe: true)
    defer { child.terminate(grace: 5) }
    // Script mode on a pipe: it waits for commands; the reply to one says it is running.
    #expect(child.writeToStdin("echo running\n"))
    let running = await eventually(timeout: 20, interval: 0.05) { child.stdoutLines.contains("running") }
    try #require(running, "stemdeck did not start: \(child.stdoutLines + child.stderrLines)")
    #expect(child.stdoutLines.contains { $0.hasPrefix("started JACK server '\(name)'") }, "\(child.stdoutLines)")
    let jackd = ProcFS.descendants(of: child.pid).filter {
      (try? String(contentsOfFile: "/proc/\($0)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) == "jackd"
    }
    try #require(jackd.count == 1, "stemdeck's jackd: \(jackd)")

    kill(child.pid, SIGKILL)
    _ = await child.waitForExit(timeout: 10)
    let ended = await eventually(timeout: 10, interval: 0.05) { ProcFS.ended(jackd[0]) }
    #expect(ended, "jackd (pid \(jackd[0])) still runs after its stemdeck was killed: \(ProcFS.state(jackd[0]) ?? "?")")
    // A jackd just ended (a zombie until reaped) can still leave its socket file: libjack then
    // says "Connection refused" for a moment before "not running".
    var check = ""
    let gone = try await eventually(timeout: 10, interval: 0.1) {
      check = try await runTool("jack_wait", ["-s", name, "-c"], environment: ["JACK_NO_START_SERVER": "1"], timeout: 10).text
      return check.contains("not running")
    }
    #expect(gone, "server still running: \(check)")
  }
}
