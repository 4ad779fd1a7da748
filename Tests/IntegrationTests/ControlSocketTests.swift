import Foundation
import StemdeckTestSupport
import Testing

/// The control socket (issue 20; docs/architecture.md, *Control socket*) with real peers: the
/// `stemdeck ctl` client, Python clients on plain sockets (/usr/bin/python3), a client that never
/// reads, and a socket path planted as a symbolic link.
@Suite("control socket", .serialized, .timeLimit(.minutes(2)))
struct ControlSocketTests {
  /// A running stemdeck (script mode, stdin open) with one stem "drums", listening on `socket`.
  struct Deck {
    let server: PrivateJackServer
    let dir: IntegrationTempDir
    let stemdeck: StemdeckProcess
    var socket: String { dir.file("c.sock") }

    init() async throws {
      server = try await PrivateJackServer()
      dir = try IntegrationTempDir("stemdeck-ctl")
      try writeSine(dir.file("drums.wav"), sampleRate: 48000, seconds: 2, frequencies: [440])
      let session = dir.file("s.json")
      try writeSession(session, stems: [SessionStem(name: "drums", file: "drums.wav")])
      stemdeck = try StemdeckProcess(server: server, session: session, extra: ["--control", dir.file("c.sock")])
      // The socket exists once the session is open and the loop runs: a command through stdin
      // answered means the socket was made before it.
      try await stemdeck.run("echo ready")
    }

    func stop() {
      stemdeck.kill()
      server.stop()
    }

    func ctl(_ arguments: [String]) async throws -> ToolResult {
      try await runTool(try StemdeckBinary.require(), ["ctl"] + arguments, timeout: 20)
    }

    /// Runs a Python script (its last argument is the socket) and returns its stdout lines.
    func python(_ script: String, timeout: Double = 60) async throws -> ToolResult {
      let file = dir.file("client-\(UUID().uuidString).py")
      try script.write(toFile: file, atomically: true, encoding: .utf8)
      return try await runTool("/usr/bin/python3", [file, socket], timeout: timeout)
    }
  }

  /// Issue 20: a transport command's reply comes once the engine has applied it, so the next
  /// command sees its effect, over the socket and from stdin alike. 20 rounds each: a command
  /// answered before the engine took it would show "stopped" in some of them.
  @Test("play then status never says stopped; seek then status says the new position (ctl and stdin, 20 rounds each)")
  func transportRepliesWaitForTheEngine() async throws {
    let deck = try await Deck()
    defer { deck.stop() }
    for round in 0..<20 {
      let r = try await deck.ctl(["--socket", deck.socket, "play; status; pause; seek 1.25; status; stop"])
      #expect(r.status == 0, "\(r.text)")
      let states = r.stdout.filter { $0.hasPrefix("state: ") }
      #expect(states.count == 2 && states[0] != "state: stopped" && states[0] != "state: paused", "round \(round): \(r.stdout)")
      #expect(r.stdout.contains { $0.hasPrefix("position: 0:01.250") }, "round \(round): \(r.stdout)")
      let own = try await deck.stemdeck.run("play; status; stop")
      let state = own.first { $0.hasPrefix("state: ") }
      #expect(state == "state: playing" || state == "state: starting", "round \(round) on stdin: \(own)")
    }
  }

  @Test("stemdeck ctl runs vol and status, prints their lines; a bad command exits 1 with error: on stderr; no stemdeck exits 2")
  func ctlClient() async throws {
    let deck = try await Deck()
    defer { deck.stop() }
    #expect(FileFacts.kind(deck.socket) == S_IFSOCK)
    #expect(FileFacts.permissions(deck.socket) == 0o600)

    let ok = try await deck.ctl(["--socket", deck.socket, "vol drums -6dB; stems; status"])
    #expect(ok.status == 0, "\(ok.text)")
    #expect(ok.stdout.contains("state: stopped"), "\(ok.text)")
    #expect(ok.stdout.contains { $0.hasPrefix("drums ") && $0.contains(" 0.50 ") }, "the stem's volume is not -6 dB (0.50): \(ok.text)")
    #expect(ok.stderr.isEmpty, "\(ok.text)")
    // The same stemdeck's own stdin sees the change: one engine, one command path.
    let stems = try await deck.stemdeck.run("stems")
    #expect(stems.contains { $0.hasPrefix("drums ") && $0.contains(" 0.50 ") }, "\(stems)")

    let bad = try await deck.ctl(["--socket", deck.socket, "status; bogus; echo after"])
    #expect(bad.status == 1, "\(bad.text)")
    #expect(bad.stderr.contains { $0.hasPrefix("error: unknown command 'bogus'") }, "\(bad.text)")
    #expect(bad.stdout.contains("state: stopped"), "\(bad.text)")
    #expect(!bad.stdout.contains("after"), "a command after a failed one ran: \(bad.text)")
    #expect(!deck.stemdeck.lines.contains { $0.contains("bogus") }, "the socket's error went to stemdeck's stdout")

    let usage = try await deck.ctl(["--socket", deck.socket])
    #expect(usage.status == 2 && usage.stderr.contains { $0.contains("usage: stemdeck ctl") }, "\(usage.text)")
    let missing = deck.dir.file("nobody.sock")
    let none = try await deck.ctl(["--socket", missing, "status"])
    #expect(none.status == 2, "\(none.text)")
    #expect(none.stderr.contains { $0.contains("no stemdeck answers on \(missing)") }, "\(none.text)")

    // 'quit' from the socket ends stemdeck (its stdin still open), and the socket goes with it.
    let quit = try await deck.ctl(["--socket", deck.socket, "quit"])
    #expect(quit.status == 0, "\(quit.text)")
    let exited = await deck.stemdeck.child.waitForExit(timeout: 10)
    #expect(exited == 0, "\(deck.stemdeck.transcript)")
    #expect(FileFacts.kind(deck.socket) == nil, "the socket is left behind")
  }

  @Test("the default socket: $XDG_RUNTIME_DIR/stemdeck/CLIENT@SERVER.sock in a 0700 folder, found by ctl --name and the server")
  func defaultPath() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let runtime = try IntegrationTempDir("stemdeck-ctl-runtime")
    let stemdeck = try StemdeckProcess(
      server: server, extra: ["--name", "deck2"],
      launcher: ["/usr/bin/env", "XDG_RUNTIME_DIR=\(runtime.path)"])
    defer { stemdeck.kill() }
    try await stemdeck.run("echo ready")
    let socket = runtime.file("stemdeck/deck2@\(server.name).sock")
    #expect(FileFacts.kind(socket) == S_IFSOCK, "\(stemdeck.transcript)")
    #expect(FileFacts.permissions(socket) == 0o600)
    #expect(FileFacts.permissions(runtime.file("stemdeck")) == 0o700)
    var environment = server.environment
    environment["XDG_RUNTIME_DIR"] = runtime.path
    let answer = try await runTool(
      try StemdeckBinary.require(), ["ctl", "--name", "deck2", "echo found"], environment: environment, timeout: 20)
    #expect(answer.status == 0 && answer.stdout == ["found"], "\(answer.text)")
    let wrong = try await runTool(
      try StemdeckBinary.require(), ["ctl", "--name", "deck3", "echo found"], environment: environment, timeout: 20)
    #expect(wrong.status == 2 && wrong.stderr.contains { $0.contains("deck3@\(server.name).sock") }, "\(wrong.text)")
    // Stopping removes the socket.
    #expect(try await stemdeck.finish() == 0)
    #expect(FileFacts.kind(socket) == nil, "the socket is left behind")
  }

  @Test("the REPL in a terminal keeps its prompt and the half-typed line while ctl drives the same session")
  func besideTheREPL() async throws {
    let binary = try StemdeckBinary.require()
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir("stemdeck-ctl-repl")
    try writeSine(dir.file("drums.wav"), sampleRate: 48000, seconds: 2, frequencies: [440])
    try writeSession(dir.file("s.json"), stems: [SessionStem(name: "drums", file: "drums.wav")])
    let state = try IntegrationTempDir("stemdeck-ctl-state")
    let socket = dir.file("c.sock")
    let term = try await TmuxTerminal(
      "env XDG_STATE_HOME=\(state.path) JACK_DEFAULT_SERVER=\(server.name) NO_COLOR=1 JACK_NO_START_SERVER=1 "
        + "\(binary) s.json --server \(server.name) --no-start-server --no-connect --control \(socket)",
      columns: 100, rows: 30, directory: dir.path)
    defer { term.close() }
    try await term.check(term.waitForCursorRow("stemdeck>"), "no prompt")
    try await term.type("echo half")
    let answer = try await runTool(binary, ["ctl", "--socket", socket, "vol drums -6dB; stems"], timeout: 20)
    #expect(answer.status == 0, "\(answer.text)")
    #expect(answer.stdout.contains { $0.hasPrefix("drums ") && $0.contains(" 0.50 ") }, "\(answer.text)")
    #expect(try await term.waitForCursorRow("stemdeck> echo half"), "the half-typed line was lost")
    #expect(!(try await term.screen()).contains { $0.contains("drums.wav") }, "the socket's output reached the terminal")
    try await term.send("C-u")
    try await term.type("stems")
    try await term.send("Enter")
    let shown = try await term.waitForScreen { $0.contains { $0.hasPrefix("drums ") && $0.contains(" 0.50 ") } }
    try await term.check(shown, "the REPL does not see the volume set over the socket: ")
  }

  @Test("a Python client gets one reply per request, ids matching; malformed lines get error replies and the connection stays usable")
  func pythonClient() async throws {
    let deck = try await Deck()
    defer { deck.stop() }
    let result = try await deck.python(
      #"""
      import json, socket, sys, time
      s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
      s.connect(sys.argv[1])
      s.settimeout(10)
      lines = [b'{"id": 1, "cmd": "vol drums -3dB"}', b'this is not json', b'{"id": 2}',
               b'[1, 2]', b'{"id": 3, "cmd": "bogus"}', b'', b'{"id": "four", "cmd": "status"}',
               b'{"id": 5, "cmd": "vol drums 7"}', b'{"id": 6, "cmd": "echo still here"}']
      s.sendall(b"\n".join(lines) + b"\n")
      f = s.makefile("rb")
      for _ in lines:
          line = f.readline()
          if not line:
              print("EOF"); break
          print(json.dumps(json.loads(line)))
      """#)
    #expect(result.status == 0, "\(result.text)")
    let replies = result.stdout.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    try #require(replies.count == 9, "\(result.text)\n\(deck.stemdeck.transcript)")
    func id(_ r: [String: Any]) -> String { r["id"].map { "\($0)" } ?? "missing" }
    #expect(replies.map(id) == ["1", "<null>", "2", "<null>", "3", "<null>", "four", "5", "6"], "\(result.text)")
    #expect(replies.map { $0["ok"] as? Bool } == [true, false, false, false, false, false, true, false, true], "\(result.text)")
    #expect((replies[1]["error"] as? String)?.contains("not valid JSON") == true)
    #expect((replies[2]["error"] as? String)?.contains("\"cmd\" must be a string") == true)
    #expect((replies[4]["error"] as? String)?.hasPrefix("unknown command 'bogus'") == true, "\(replies[4])")
    #expect((replies[6]["output"] as? [String])?.contains("state: stopped") == true, "\(replies[6])")
    #expect((replies[7]["error"] as? String)?.contains("got 7") == true, "\(replies[7])")
    #expect(replies[8]["output"] as? [String] == ["still here"])
    // The engine got the first command.
    let stems = try await deck.stemdeck.run("stems")
    #expect(stems.contains { $0.hasPrefix("drums ") && $0.contains(" 0.71 ") }, "\(stems)")
  }

  @Test("a client that never reads is dropped when its replies pile up; other clients keep getting every reply")
  func clientThatNeverReads() async throws {
    let deck = try await Deck()
    defer { deck.stop() }
    let result = try await deck.python(
      #"""
      import json, socket, sys, threading, time
      path = sys.argv[1]
      big = "x" * 4000
      state = {"dropped": False, "sent": 0}
      def silent():
          s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
          s.connect(path)
          s.settimeout(30)
          try:
              for i in range(1000):
                  s.sendall(json.dumps({"id": i, "cmd": "echo " + big}).encode() + b"\n")
                  state["sent"] += 1
          except (BrokenPipeError, ConnectionResetError):
              state["dropped"] = True
          except socket.timeout:
              pass
      t = threading.Thread(target=silent)
      t.start()
      r = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
      r.connect(path)
      r.settimeout(10)
      f = r.makefile("rb")
      worst = 0.0
      got = 0
      for i in range(100):
          start = time.monotonic()
          r.sendall(json.dumps({"id": i, "cmd": "echo reply %d" % i}).encode() + b"\n")
          reply = json.loads(f.readline())
          worst = max(worst, time.monotonic() - start)
          if reply["id"] == i and reply["ok"] and reply["output"] == ["reply %d" % i]:
              got += 1
      t.join(40)
      print("got", got)
      print("worst_ms", round(worst * 1000, 1))
      print("dropped", state["dropped"], "sent", state["sent"])
      """#)
    #expect(result.status == 0, "\(result.text)\n\(deck.stemdeck.transcript)")
    #expect(result.stdout.contains("got 100"), "\(result.text)")
    #expect(result.stdout.contains { $0.hasPrefix("dropped True") }, "the silent client was never dropped: \(result.text)")
    print("control socket, one client never reading: \(result.stdout.joined(separator: "; "))")
    // stemdeck still answers, on the socket and on stdin.
    let after = try await deck.ctl(["--socket", deck.socket, "status"])
    #expect(after.status == 0 && after.stdout.contains("state: stopped"), "\(after.text)")
    try await deck.stemdeck.run("echo alive")
  }

  /// The reply lines of `ctl --json` (or of `--json` script mode), parsed; every line must be one.
  static func objects(_ lines: [String]) -> [[String: Any]] {
    lines.map { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] ?? ["notJSON": $0] }
  }

  static func number(_ v: Any?) -> Double? {
    guard !(v is String), let n = v as? NSNumber else { return nil }
    return n.doubleValue
  }

  /// Each front end has its own `begin … commit` group: a socket client's open group never
  /// queues the REPL's commands or another client's, and one left open by a client that goes
  /// away is dropped.
  @Test("begin over the socket opens that client's own group: another client's and the REPL's commands run at once; commit lands it")
  func groupsPerClient() async throws {
    let deck = try await Deck()
    defer { deck.stop() }
    let script = #"""
      import json, socket, sys
      def client():
          s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
          s.connect(sys.argv[1])
          return s, s.makefile("rb")
      def ask(c, i, cmd):
          c[0].sendall((json.dumps({"id": i, "cmd": cmd}) + "\n").encode())
          r = json.loads(c[1].readline())
          assert r["id"] == i, r
          return r
      a, b = client(), client()
      def show(tag, r): print(tag, json.dumps(r), flush=True)
      show("a-begin", ask(a, 1, "begin"))
      show("a-queued", ask(a, 2, "vol drums -6dB"))
      show("b-vol", ask(b, 3, "pan drums -0.5"))
      show("b-commit", ask(b, 4, "commit"))
      sys.stdin.readline()  # the REPL's turn
      show("a-commit", ask(a, 5, "commit"))
      show("a-begin-again", ask(a, 6, "begin"))
      show("a-left-open", ask(a, 7, "vol drums -12dB"))
      a[0].close()
      show("b-stems", ask(b, 8, "stems"))
      """#
    let file = deck.dir.file("groups.py")
    try script.write(toFile: file, atomically: true, encoding: .utf8)
    let py = try ChildProcess("/usr/bin/python3", ["-u", file, deck.socket], stdinPipe: true)
    defer { py.terminate(grace: 2) }
    func line(_ tag: String) async -> String? {
      var found: String?
      _ = await eventually(timeout: 15) {
        found = py.stdoutLines.first { $0.hasPrefix(tag + " ") }
        return found != nil || !py.isRunning
      }
      return found ?? py.stdoutLines.first { $0.hasPrefix(tag + " ") }
    }
    let bCommit = await line("b-commit")
    #expect(
      bCommit?.contains("\"ok\": false") == true && bCommit?.contains("no group is open") == true, "\(py.stdoutLines) \(py.stderrLines)")
    // Client a's group is open; the REPL's commands still run at once.
    try await deck.stemdeck.run("mute drums")
    let during = try await deck.stemdeck.stemsTable()["drums"]
    #expect(
      during?.volume == "1.00" && during?.pan == "-0.50" && during?.flags.contains("M") == true,
      "while a's group is open, the REPL sees: \(String(describing: during))")
    _ = py.writeToStdin("\n")
    let aCommit = await line("a-commit")
    #expect(aCommit?.contains("\"ok\": true") == true && aCommit?.contains("1 change land") == true, "\(py.stdoutLines)")
    let bStems = await line("b-stems")
    #expect(bStems?.contains("\"ok\": true") == true, "\(py.stdoutLines) \(py.stderrLines)")
    // a's second group went with a: drums stays at -6 dB (0.50), for the REPL too, whose
    // commands are not queued anywhere.
    let echo = try await deck.stemdeck.run("echo still mine")
    #expect(echo.contains("still mine"), "the REPL's commands were queued in a socket client's group: \(echo)")
    #expect(try await deck.stemdeck.stemsTable()["drums"]?.volume == "0.50")
  }

  @Test("queries reply with JSON data (numbers as numbers); transport replies carry the frame they took effect at; errors a hint")
  func structuredReplies() async throws {
    let deck = try await Deck()
    defer { deck.stop() }
    let r = try await deck.ctl([
      "--socket", deck.socket, "--json",
      "seek 1; play; status; pause; status; stop; connect master_L system:playback_1; routes; connections; stems; meters"
    ])
    #expect(r.status == 0, "\(r.text)")
    let replies = Self.objects(r.stdout)
    try #require(replies.count == 11 && replies.allSatisfy { $0["ok"] as? Bool == true }, "\(r.text)")
    // A seek while stopped lands at once; play starts where it is (48 kHz server).
    #expect(Self.number(replies[0]["frame"]) == 48000, "\(replies[0])")
    #expect(Self.number(replies[1]["frame"]) == 48000, "\(replies[1])")
    let playing = try #require(replies[2]["status"] as? [String: Any], "\(replies[2])")
    #expect(["playing", "starting"].contains(playing["state"] as? String), "\(playing)")
    #expect(
      Self.number(playing["sampleRate"]) == 48000 && Self.number((playing["server"] as? [String: Any])?["bufferSize"]) == 256, "\(playing)")
    // Pause takes effect where the transport is when the engine takes it (its fade starts there).
    let pausedAt = try #require(Self.number(replies[3]["frame"]), "\(replies[3])")
    #expect(pausedAt >= 48000 && pausedAt < 96000, "\(replies[3])")
    let paused = try #require(replies[4]["status"] as? [String: Any])
    #expect(paused["state"] as? String != "stopped", "\(paused)")
    #expect((Self.number(paused["position"]) ?? 0) * 48000 >= pausedAt - 48, "\(paused) after a pause at \(pausedAt)")
    #expect(Self.number(replies[5]["frame"]) == 0, "stop lands at 0: \(replies[5])")
    let route: [String: String] = ["port": "master_L", "peer": "system:playback_1", "direction": "out"]
    for key in ["routes", "connections"] {
      let list = try #require(replies[key == "routes" ? 7 : 8][key] as? [[String: Any]], "\(key): \(r.text)")
      #expect(
        list.contains { o in route.allSatisfy { o[$0.key] as? String == $0.value } && o["connected"] as? Bool == true }, "\(key): \(list)")
    }
    #expect((replies[9]["stems"] as? [[String: Any]])?.first?["name"] as? String == "drums", "\(replies[9])")
    #expect(((replies[10]["meters"] as? [String: Any])?["master"] as? [String: Any])?["channels"] is [Any], "\(replies[10])")

    let bad = try await deck.ctl(["--socket", deck.socket, "--json", "vol drms 1"])
    #expect(bad.status == 1, "\(bad.text)")
    let refusal = Self.objects(bad.stdout).first ?? [:]
    #expect(refusal["error"] as? String == "unknown stem 'drms'" && refusal["hint"] as? String == "did you mean 'drums'?", "\(bad.text)")
    // Without --json, ctl prints the console's words.
    let text = try await deck.ctl(["--socket", deck.socket, "vol drms 1"])
    #expect(text.status == 1 && text.stderr == ["error: unknown stem 'drms' — did you mean 'drums'?"], "\(text.text)")
  }

  @Test("--json script mode prints one reply object per command, as the socket replies, and stops at the first failure")
  func jsonScriptMode() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir("stemdeck-json-script")
    try writeSine(dir.file("drums.wav"), sampleRate: 48000, seconds: 2, frequencies: [440])
    let session = dir.file("s.json")
    try writeSession(session, stems: [SessionStem(name: "drums", file: "drums.wav")])
    let r = try await runTool(
      try StemdeckBinary.require(),
      [
        session, "--server", server.name, "--no-start-server", "--no-connect", "--no-control", "--json",
        "-c", "play; status; vol drms 1; echo never"
      ], environment: server.environment, timeout: 30)
    #expect(r.status == 1, "\(r.text)")
    let objects = Self.objects(r.stdout)
    #expect(objects.allSatisfy { $0["notJSON"] == nil }, "a line on stdout is not JSON: \(r.text)")
    // Events (an xrun on a busy machine) come as pushes between the replies.
    #expect(objects.allSatisfy { $0["push"] == nil || $0["push"] as? String == "event" && $0["text"] is String }, "\(r.text)")
    let replies = objects.filter { $0["push"] == nil }
    try #require(replies.count == 3, "\(r.text)")
    #expect(replies.map { Self.number($0["id"]) } == [1, 2, 3], "\(r.text)")
    #expect(Self.number(replies[0]["frame"]) == 0, "\(replies[0])")
    #expect(["playing", "starting"].contains((replies[1]["status"] as? [String: Any])?["state"] as? String), "\(replies[1])")
    #expect(replies[2]["ok"] as? Bool == false && replies[2]["hint"] as? String == "did you mean 'drums'?", "\(replies[2])")
    // At the prompt the replies are text: --json is refused there (no terminal here: a usage check).
    let usage = try await runTool(try StemdeckBinary.require(), ["render", "s.json", "-o", "x.wav", "--json"], timeout: 10)
    #expect(usage.status == 2 && usage.stderr.contains { $0.contains("--json is for ctl and script mode") }, "\(usage.text)")
  }

  @Test(
    "a fuzz of 30,000 malformed and random lines (100,000 with STEMDECK_LONG_TESTS) over the socket to a running stemdeck: one reply per line, the connection stays usable, the process lives"
  )
  func socketFuzz() async throws {
    let fuzzLines = longTests ? 100_000 : 30_000
    let deck = try await Deck()
    defer { deck.stop() }
    let result = try await deck.python(
      #"""
      import json, random, socket, sys, threading
      rng = random.Random(20)
      words = ["vol", "pan", "rate", "mute", "solo", "seek", "status", "stems", "meters", "routes", "connections",
               "echo", "paly", "sfx", "master", "quality", "loops", "begin", "commit", "abort", "at", "glide", ""]
      args = ["drums", "drms", "all", "-6dB", "+7dB", "nan", "inf", "-1", "0.5", "1e308", "{", "}", ";", "'", "\"",
              "\\", "#", "ドラム", "\u001b[2J", "x" * 3000, "over", "4s", "next-loop", "bar"]
      byte_values = [b for b in range(256) if b != 10]
      def line(i):
          k = rng.randrange(6)
          if k == 0:
              return bytes(rng.choice(byte_values) for _ in range(rng.randrange(300)))
          cmd = " ".join([rng.choice(words)] + [rng.choice(args) for _ in range(rng.randrange(5))])
          if k == 1:
              return cmd.encode()
          text = json.dumps({"id": i, "cmd": cmd})
          if k == 2:
              return text[: rng.randrange(len(text) + 1)].encode()
          if k == 3:
              return json.dumps({"id": [i], "cmd": rng.choice([1, None, [cmd], {"c": cmd}, True])}).encode()
          return text.encode()
      N = \#(fuzzLines)
      # A 'begin' among them may have left this client's group open (its later commands are
      # queued in it, and 'echo' refused there): 'abort' closes it before the last line, whose
      # reply is then its echo.
      lines = [line(i) for i in range(N)] + [json.dumps({"id": "abort", "cmd": "abort"}).encode(),
                                             json.dumps({"id": "last", "cmd": "echo still here"}).encode()]
      s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
      s.connect(sys.argv[1])
      s.settimeout(120)
      def write():
          for l in lines:
              s.sendall(l + b"\n")
      t = threading.Thread(target=write)
      t.start()
      f = s.makefile("rb")
      replies, bad, last = 0, 0, None
      for _ in lines:
          r = f.readline()
          if not r:
              break
          try:
              o = json.loads(r)
              assert isinstance(o, dict) and isinstance(o["ok"], bool)
              replies += 1
              last = o
          except Exception:
              bad += 1
      t.join(120)
      print("replies", replies, "bad", bad)
      print("last", json.dumps(last))
      """#, timeout: 400)
    #expect(result.status == 0, "\(result.text)\n\(deck.stemdeck.transcript)")
    #expect(result.stdout.contains("replies \(fuzzLines + 2) bad 0"), "\(result.text)")
    #expect(result.stdout.contains { $0.hasPrefix("last ") && $0.contains("\"still here\"") }, "\(result.text)")
    #expect(deck.stemdeck.child.isRunning, "\(deck.stemdeck.transcript)")
    try await deck.stemdeck.run("echo alive")
    let after = try await deck.ctl(["--socket", deck.socket, "echo after"])
    #expect(after.status == 0 && after.stdout == ["after"], "\(after.text)")
  }

  @Test("a control socket path planted as a symbolic link is refused, and what it points to is untouched")
  func symlinkRefused() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir("stemdeck-ctl-link")
    let target = dir.file("precious.txt")
    try "keep me".write(toFile: target, atomically: true, encoding: .utf8)
    let link = dir.file("c.sock")
    #expect(symlink(target, link) == 0)
    let stemdeck = try StemdeckProcess(server: server, extra: ["--control", link])
    defer { stemdeck.kill() }
    let status = await stemdeck.child.waitForExit(timeout: 15)
    await stemdeck.child.waitForStreams(timeout: 2)
    #expect(status == 1, "\(stemdeck.transcript)")
    #expect(stemdeck.stderrLines.contains { $0.contains("\(link) is a symbolic link") }, "\(stemdeck.transcript)")
    #expect(FileFacts.kind(link) == S_IFLNK)
    #expect((try? String(contentsOfFile: target, encoding: .utf8)) == "keep me")

    // A stale socket (nobody answers) is replaced; a live one is refused.
    let stale = dir.file("stale.sock")
    #expect(placeStaleSocket(at: stale))
    let fresh = try StemdeckProcess(server: server, extra: ["--control", stale])
    defer { fresh.kill() }
    try await fresh.run("echo up")
    let second = try StemdeckProcess(server: server, extra: ["--control", stale, "--name", "second"])
    defer { second.kill() }
    let secondStatus = await second.child.waitForExit(timeout: 15)
    await second.child.waitForStreams(timeout: 2)
    #expect(secondStatus == 1, "\(second.transcript)")
    #expect(second.stderrLines.contains { $0.contains("already listens on \(stale)") }, "\(second.transcript)")
    let answer = try await runTool(try StemdeckBinary.require(), ["ctl", "--socket", stale, "echo first"], timeout: 20)
    #expect(answer.status == 0 && answer.stdout == ["first"], "\(answer.text)")
  }
}
