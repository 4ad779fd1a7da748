import Foundation
import StemdeckTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Remote control with real peers (issue 20's OSC and subscriptions, issue 21's NSM;
/// docs/architecture.md, *Remote control*): `oscsend` (liblo-tools), Python clients with
/// python3-liblo and plain sockets (/usr/bin/python3), and a small NSM manager in Python written
/// from the NSM API's messages.
@Suite("remote control", .serialized, .timeLimit(.minutes(3)))
struct RemoteControlTests {
  /// A running stemdeck (script mode, stdin open) with one 2-second stem "drums", its control
  /// socket at `socket` and, with `osc`, an OSC server on `oscPort`.
  struct Deck {
    let server: PrivateJackServer
    let dir: IntegrationTempDir
    let stemdeck: StemdeckProcess
    let oscPort: Int
    var socket: String { dir.file("c.sock") }

    init(osc: Bool = true) async throws {
      server = try await PrivateJackServer()
      dir = try IntegrationTempDir("stemdeck-remote")
      try writeSine(dir.file("drums.wav"), sampleRate: 48000, seconds: 2, frequencies: [440])
      let session = dir.file("s.json")
      try writeSession(session, stems: [SessionStem(name: "drums", file: "drums.wav")])
      oscPort = osc ? try RemoteControlTests.freeUDPPort() : 0
      stemdeck = try StemdeckProcess(
        server: server, session: session,
        extra: ["--control", dir.file("c.sock")] + (osc ? ["--osc", String(oscPort)] : []))
      try await stemdeck.run("echo ready")
    }

    func stop() {
      stemdeck.kill()
      server.stop()
    }

    /// Runs a Python script with `arguments` and returns its result.
    func python(_ script: String, _ arguments: [String], timeout: Double = 60) async throws -> ToolResult {
      let file = dir.file("client-\(UUID().uuidString).py")
      try script.write(toFile: file, atomically: true, encoding: .utf8)
      return try await runTool("/usr/bin/python3", [file] + arguments, environment: server.environment, timeout: timeout)
    }

    /// The drums row of `stems`, through stdin.
    func drumsRow() async throws -> String {
      try await stemdeck.run("stems").first { $0.hasPrefix("drums ") } ?? "no drums row"
    }
  }

  /// A UDP port free on 127.0.0.1 just now (the kernel's choice for port 0).
  static func freeUDPPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let ok = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard ok else { throw HarnessError("no free UDP port: \(String(cString: strerror(errno)))") }
    return Int(UInt16(bigEndian: address.sin_port))
  }

  @Test("OSC: oscsend sets a volume that lands; /cmd replies; malformed messages get error replies and change nothing; patterns and pushes")
  func oscPeers() async throws {
    let deck = try await Deck()
    defer { deck.stop() }
    let sent = try await runTool("oscsend", ["127.0.0.1", String(deck.oscPort), "/stemdeck/stem/drums/vol", "f", "-6"], timeout: 10)
    #expect(sent.status == 0, "\(sent.text)")
    var row = ""
    let landed = try await eventually(timeout: 5) {
      row = try await deck.drumsRow()
      return row.contains(" 0.50 ")
    }
    #expect(landed, "the volume sent with oscsend did not land: \(row)\n\(deck.stemdeck.transcript)")

    // One message at a time from python3-liblo, each answered on /stemdeck/reply (ok, address, text).
    let result = try await deck.python(
      #"""
      import json, socket, sys, time, liblo
      port = int(sys.argv[1])
      replies = []
      srv = liblo.Server()
      srv.add_method("/stemdeck/reply", None, lambda path, args: replies.append(args))
      target = liblo.Address("127.0.0.1", port)
      def ask(*message):
          replies.clear()
          srv.send(target, *message)
          end = time.time() + 5
          while not replies and time.time() < end:
              srv.recv(20)
          print(json.dumps(replies[0] if replies else None))
      ask("/stemdeck/cmd", "stems")
      ask("/stemdeck/stem/drums/vol", "loud")
      ask("/stemdeck/stem/drums/vol", float("nan"))
      ask("/stemdeck/stem/drms/mute", 1)
      ask("/stemdeck/stem/drums/mute", 5)
      ask("/stemdeck/stem/drums/vol", 7.0)
      ask("/stemdeck/nothing/here")
      ask("/stemdeck/cmd", "bogus")
      ask("/stemdeck/cmd", 3)
      ask("/stemdeck/ping")
      ask("/stemdeck/cmd", "status; save " + sys.argv[2])
      # Not OSC at all, from a plain UDP socket: an error reply to it.
      raw = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
      raw.settimeout(5)
      raw.sendto(b"/stemdeck/stem/drums/vol\0\0\0\0,f\0\0\x01", ("127.0.0.1", port))
      try:
          data, _ = raw.recvfrom(4096)
          print(json.dumps(["raw", data.decode("latin-1")]))
      except socket.timeout:
          print(json.dumps(None))
      ask("/stemdeck/cmd", "stems")
      """#, [String(deck.oscPort), deck.dir.file("written-over-osc.json")])
    #expect(result.status == 0, "\(result.text)")
    let replies = result.stdout.map { try? JSONSerialization.jsonObject(with: Data($0.utf8), options: [.fragmentsAllowed]) }
    try #require(replies.count == 13, "\(result.text)\n\(deck.stemdeck.transcript)")
    func reply(_ i: Int) -> (ok: Int, path: String, text: String)? {
      guard let a = replies[i] as? [Any], a.count == 3, let ok = a[0] as? Int, let p = a[1] as? String, let t = a[2] as? String else {
        return nil
      }
      return (ok, p, t)
    }
    #expect(reply(0)?.ok == 1 && reply(0)?.text.contains(" 0.50 ") == true, "\(result.stdout[0])")
    #expect(reply(1)?.ok == 0 && reply(1)?.text.contains("got ,s") == true, "\(result.stdout[1])")
    #expect(reply(2)?.ok == 0 && reply(2)?.text.contains("NaN") == true, "\(result.stdout[2])")
    #expect(reply(3)?.ok == 0 && reply(3)?.text.contains("unknown stem 'drms'") == true, "\(result.stdout[3])")
    #expect(reply(4)?.ok == 0 && reply(4)?.text.contains("1 (on) or 0 (off)") == true, "\(result.stdout[4])")
    #expect(reply(5)?.ok == 0 && reply(5)?.text.contains("volume") == true, "\(result.stdout[5])")
    #expect(reply(6)?.ok == 0 && reply(6)?.text.contains("unknown address /stemdeck/nothing/here") == true, "\(result.stdout[6])")
    #expect(reply(7)?.ok == 0 && reply(7)?.text.contains("unknown command 'bogus'") == true, "\(result.stdout[7])")
    #expect(reply(8)?.ok == 0 && reply(8)?.text.contains("got ,i") == true, "\(result.stdout[8])")
    #expect(reply(9)?.ok == 1 && reply(9)?.text == "pong", "\(result.stdout[9])")
    // A command line that writes a file is refused over OSC (any local user can reach the port).
    #expect(
      reply(10)?.ok == 0 && reply(10)?.text.contains("reads or writes files: refused over OSC") == true, "\(result.stdout[10])"
    )
    #expect(FileFacts.kind(deck.dir.file("written-over-osc.json")) == nil, "a save over OSC wrote its file")
    #expect(result.stdout[11].contains("/stemdeck/reply") && result.stdout[11].contains("malformed OSC"), "\(result.stdout[11])")
    // Nothing the refused messages said changed the stem: still 0.50, not muted.
    #expect(reply(12)?.ok == 1, "\(result.stdout[12])")
    row = try await deck.drumsRow()
    #expect(row.contains(" 0.50 ") && !row.contains(" M "), "a refused message changed the stem: \(row)")

    // A pattern address mutes every stem it matches; OSC subscribers get meters and the transport.
    let pushes = try await deck.python(
      #"""
      import json, sys, time, liblo
      port = int(sys.argv[1])
      got = []
      srv = liblo.Server()
      srv.add_method(None, None, lambda path, args: got.append((path, args)))
      target = liblo.Address("127.0.0.1", port)
      srv.send(target, "/stemdeck/stem/d*/mute", 1)
      srv.send(target, "/stemdeck/cmd", "bus add band; send add verb")
      srv.send(target, "/stemdeck/subscribe", "meters", "transport", 20)
      srv.send(target, "/stemdeck/transport/play")
      end = time.time() + 10
      while time.time() < end and not any(p == "/stemdeck/transport" and a[0] == "playing" for p, a in got):
          srv.recv(20)
      start = time.time()
      while time.time() < start + 1:
          srv.recv(20)
      meters = [a for p, a in got if p == "/stemdeck/meter/master"]
      print(json.dumps({"transport": [a[0] for p, a in got if p == "/stemdeck/transport"],
                        "masterFrames": len(meters), "stemFrames": len([1 for p, a in got if p == "/stemdeck/meter/stem/drums"]),
                        "busFrames": len([1 for p, a in got if p == "/stemdeck/meter/bus/band"]),
                        "returnFrames": len([1 for p, a in got if p == "/stemdeck/meter/return/verb"]),
                        "replies": [a for p, a in got if p == "/stemdeck/reply"]}))
      """#, [String(deck.oscPort)])
    #expect(pushes.status == 0, "\(pushes.text)")
    let summary = try #require(
      pushes.stdout.last.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }, "\(pushes.text)")
    #expect((summary["transport"] as? [String])?.contains("playing") == true, "\(summary)")
    let frames = summary["masterFrames"] as? Int ?? 0
    #expect(frames >= 10 && frames <= 60, "meter frames at 20 a second over more than a second: \(frames)")
    // Each frame is a master message then one per stem: the client's window may end between them.
    let stemFrames = summary["stemFrames"] as? Int ?? -1
    #expect(stemFrames == frames || stemFrames == frames - 1, "\(summary)")
    // Buses and send returns are metered too, in every frame (after the stems).
    for key in ["busFrames", "returnFrames"] {
      let n = summary[key] as? Int ?? -1
      #expect(n == frames || n == frames - 1, "\(key): \(summary)")
    }
    row = try await deck.drumsRow()
    #expect(row.contains(" M"), "the pattern /stemdeck/stem/d*/mute did not mute drums: \(row)")
    print("OSC: \(frames) master meter frames in a second or more at 20 a second")
  }

  @Test(
    "socket subscriptions: meter frames at the asked rate, events as fields, the transport; bad subscriptions get errors; ctl --json and --watch"
  )
  func socketSubscriptions() async throws {
    let deck = try await Deck(osc: false)
    defer { deck.stop() }
    let result = try await deck.python(
      #"""
      import json, socket, sys, time
      s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
      s.connect(sys.argv[1])
      s.settimeout(15)
      f = s.makefile("rb")
      def send(o): s.sendall(json.dumps(o).encode() + b"\n")
      send({"id": 1, "subscribe": "meters"})
      send({"id": 2, "subscribe": ["meters"], "rate": 0})
      send({"id": 3, "subscribe": ["noise"]})
      send({"id": 4, "subscribe": ["meters", "events", "transport"], "rate": 20})
      send({"id": 5, "cmd": "play"})
      send({"id": 6, "cmd": "wait 1"})
      replies, meters, events, transport = [], [], [], []
      during_wait = 0
      end = time.time() + 15
      while time.time() < end:
          o = json.loads(f.readline())
          kind = o.get("push")
          if kind is None: replies.append(o)
          elif kind == "meters":
              meters.append((time.time(), o))
              if len(replies) == 5: during_wait += 1
          elif kind == "event": events.append(o)
          elif kind == "transport": transport.append(o)
          if any(e.get("event") == "stemFinished" for e in events): break
      playing = [m for t, m in meters if m["master"]["peak"][0] is not None]
      span = meters[-1][0] - meters[0][0] if len(meters) > 1 else 0
      print(json.dumps({"replies": replies, "events": events, "duringWait": during_wait, "transport": [t["state"] for t in transport],
                        "frames": len(meters), "span": span, "playingFrames": len(playing),
                        "loudest": max([m["master"]["peak"][0] for m in playing] or [None]),
                        "stems": sorted(meters[-1][1]["stems"].keys()) if meters else [],
                        "loudness": meters[-1][1]["master"].get("loudness") if meters else None}))
      """#, [deck.socket])
    #expect(result.status == 0, "\(result.text)\n\(deck.stemdeck.transcript)")
    let o = try #require(
      result.stdout.last.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }, "\(result.text)")
    let replies = o["replies"] as? [[String: Any]] ?? []
    try #require(replies.count == 6, "\(o)")
    #expect(replies[0]["ok"] as? Bool == false && (replies[0]["error"] as? String)?.contains("list of topics") == true, "\(replies[0])")
    #expect(replies[1]["ok"] as? Bool == false && (replies[1]["error"] as? String)?.contains("1…60") == true, "\(replies[1])")
    #expect(replies[2]["ok"] as? Bool == false, "\(replies[2])")
    #expect(
      replies[3]["ok"] as? Bool == true && replies[3]["subscribed"] as? [String] == ["events", "meters", "transport"], "\(replies[3])")
    #expect(replies[4]["ok"] as? Bool == true && replies[4]["id"] as? Int == 5, "\(replies[4])")
    #expect(replies[5]["ok"] as? Bool == true && replies[5]["id"] as? Int == 6, "\(replies[5])")
    // A request that waits holds up the requests behind it, not the pushes.
    let duringWait = o["duringWait"] as? Int ?? 0
    #expect(duringWait >= 12, "meter frames while the client's own 'wait 1' ran: \(duringWait)")
    let events = o["events"] as? [[String: Any]] ?? []
    let finished = events.first { $0["event"] as? String == "stemFinished" }
    #expect(
      finished?["stem"] as? String == "drums" && finished?["class"] as? String == "mixer"
        && finished?["text"] as? String == "stem 'drums' finished", "\(events)")
    #expect((o["transport"] as? [String])?.contains("playing") == true, "\(o)")
    let frames = o["frames"] as? Int ?? 0
    let span = o["span"] as? Double ?? 0
    let rate = span > 0 ? Double(frames - 1) / span : 0
    #expect(span > 1.5 && rate > 12 && rate < 24, "meter frames at 20 a second: \(frames) in \(span) s")
    #expect((o["loudest"] as? Double ?? -200) > -20, "the meters never saw the playing stem: \(o)")
    #expect(o["stems"] as? [String] == ["drums"], "\(o)")
    // The master's live loudness rides along (issue 23): the figures' keys, measured seconds.
    let loudness = o["loudness"] as? [String: Any] ?? [:]
    #expect(Set(loudness.keys) == ["momentary", "shortTerm", "integrated", "range", "truePeak", "seconds", "droppedFrames"], "\(o)")
    #expect((loudness["seconds"] as? Double ?? 0) > 1 && loudness["momentary"] is Double, "\(loudness)")
    print("socket meters: \(frames) frames in \(String(format: "%.2f", span)) s (\(String(format: "%.1f", rate))/s asked 20)")

    let json = try await runTool(
      try StemdeckBinary.require(), ["ctl", "--socket", deck.socket, "--json", "vol drums -3dB; bogus"], timeout: 20)
    #expect(json.status == 1, "\(json.text)")
    let lines = json.stdout.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    try #require(lines.count == 2, "\(json.text)")
    #expect(lines[0]["ok"] as? Bool == true && lines[0]["id"] as? Int == 1, "\(json.text)")
    #expect(lines[1]["ok"] as? Bool == false && (lines[1]["error"] as? String)?.contains("unknown command 'bogus'") == true, "\(json.text)")

    // ctl --watch follows pushes: the transport's state at once, then its change.
    let watch = try ChildProcess(
      try StemdeckBinary.require(), ["ctl", "--socket", deck.socket, "--watch", "transport", "--watch", "events"])
    defer { watch.terminate(grace: 1) }
    let first = await eventually(timeout: 10) { watch.stdoutLines.contains { $0.hasPrefix("transport: ") } }
    #expect(first, "ctl --watch printed no transport line: \(watch.stdoutLines) \(watch.stderrLines)")
    try await deck.stemdeck.run("seek 0; play")
    let followed = await eventually(timeout: 10) {
      watch.stdoutLines.contains("event: stem 'drums' finished") && watch.stdoutLines.contains { $0.hasPrefix("transport: playing") }
    }
    #expect(followed, "ctl --watch did not follow: \(watch.stdoutLines) \(watch.stderrLines)")
  }

  // MARK: - NSM

  /// The test manager: a liblo server in Python that launches stemdeck with NSM_URL set, as nsmd
  /// does, and speaks the manager's side of the NSM API. Its `ctl` talks to the control socket.
  static let managerPrelude = #"""
    import json, os, signal, socket, subprocess, sys, time, liblo
    binary, jackname, folder, sock, wav = sys.argv[1:6]
    srv = liblo.Server()
    inbox = []
    srv.add_method(None, None, lambda path, args, types, src: inbox.append((path, args, src.url)))
    log = open(os.path.join(folder, "stemdeck.log"), "ab")
    def say(*a): print(json.dumps(list(a)), flush=True)
    def wait(pred, timeout=20):
        end = time.time() + timeout
        while time.time() < end:
            for m in list(inbox):
                if pred(m):
                    inbox.remove(m)
                    return m
            srv.recv(20)
        return None
    def launch():
        env = dict(os.environ, NSM_URL=srv.url, JACK_DEFAULT_SERVER=jackname, JACK_NO_START_SERVER="1")
        return subprocess.Popen([binary, "--server", jackname, "--no-start-server", "--no-connect", "--control", sock],
                                env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    def ctl(cmd):
        end = time.time() + 10
        while not os.path.exists(sock) and time.time() < end: time.sleep(0.02)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(sock)
        s.sendall(json.dumps({"id": 1, "cmd": cmd}).encode() + b"\n")
        reply = json.loads(s.makefile("rb").readline())
        s.close()
        return reply
    def handshake(p, client_id):
        m = wait(lambda m: m[0] == "/nsm/server/announce")
        say("announce", m[1] if m else None)
        if not m: return None
        srv.send(m[2], "/reply", "/nsm/server/announce", "welcome", "test-manager", ":server-control:")
        srv.send(m[2], "/nsm/client/open", os.path.join(folder, "instance"), "stemdeck", client_id)
        r = wait(lambda r: r[0] in ("/reply", "/error") and r[1][0] == "/nsm/client/open")
        say("open", r[0] if r else None, r[1] if r else None)
        return m[2]
    """#

  /// What a run of the test manager said: one JSON array a line (`say`), and stemdeck's log.
  struct ManagerRun {
    let result: ToolResult
    let said: [[Any]]
    let log: String
    /// The first thing said under `name`.
    func step(_ name: String) -> [Any]? { said.first { $0.first as? String == name } }
  }

  /// Runs the test manager, `managerPrelude` then `steps`, against stemdeck on `server` with
  /// `dir` as its folder (its control socket `dir/c.sock`, `wav` the file its steps add), for at
  /// most `timeout` seconds.
  func runManager(
    _ steps: String, server: PrivateJackServer, dir: IntegrationTempDir, wav: String, timeout: Double
  ) async throws -> ManagerRun {
    let script = dir.file("manager.py")
    try (Self.managerPrelude + "\n" + steps).write(toFile: script, atomically: true, encoding: .utf8)
    let result = try await runTool(
      "/usr/bin/python3", [script, try StemdeckBinary.require(), server.name, dir.path, dir.file("c.sock"), wav],
      environment: server.environment, timeout: timeout)
    let log = (try? String(contentsOfFile: dir.file("stemdeck.log"), encoding: .utf8)) ?? ""
    let said = result.stdout.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [Any] }
    return ManagerRun(result: result, said: said, log: log)
  }

  @Test(
    "NSM: a manager announces, opens, saves and quits stemdeck; the JACK client has its name; dirty state is told; the session reopens identically"
  )
  func nsmSession() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir("stemdeck-nsm")
    try writeSine(dir.file("drums.wav"), sampleRate: 48000, seconds: 2, frequencies: [440])
    let run = try await runManager(
      #"""
      p = launch()
      url = handshake(p, "nDECK")
      say("file", os.path.exists(os.path.join(folder, "instance", "stemdeck.json")))
      lsp = subprocess.run(["jack_lsp"], capture_output=True, text=True, env=dict(os.environ, JACK_DEFAULT_SERVER=jackname))
      say("ports", [l for l in lsp.stdout.splitlines() if l.startswith("nDECK:")])
      say("add", ctl("add " + wav + " as drums")["ok"], ctl("vol drums -6dB; pan drums 0.25; mute drums")["ok"])
      say("dirty", wait(lambda m: m[0] == "/nsm/client/is_dirty") is not None)
      srv.send(url, "/nsm/client/save")
      r = wait(lambda r: r[0] in ("/reply", "/error") and r[1][0] == "/nsm/client/save")
      say("save", r[0] if r else None)
      say("clean", wait(lambda m: m[0] == "/nsm/client/is_clean") is not None)
      first = ctl("stems")["output"]
      p.send_signal(signal.SIGTERM)
      say("exit", p.wait(15))
      p = launch()
      handshake(p, "nDECK")
      second = ctl("stems")["output"]
      say("same", first == second, first, second)
      p.send_signal(signal.SIGTERM)
      say("exit", p.wait(15))
      """#, server: server, dir: dir, wav: dir.file("drums.wav"), timeout: 120)
    let (result, log, said, step) = (run.result, run.log, run.said, run.step)
    #expect(result.status == 0, "\(result.text)\n--- stemdeck ---\n\(log)")
    let announce = step("announce")?[1] as? [Any]
    #expect(
      announce?.count == 6 && announce?[0] as? String == "stemdeck" && (announce?[1] as? String)?.contains(":dirty:") == true
        && announce?[3] as? Int == 1, "\(result.text)")
    #expect(step("open")?[1] as? String == "/reply", "\(result.text)\n\(log)")
    #expect(step("file")?[1] as? Bool == true, "no session file in the manager's folder: \(result.text)")
    #expect(
      (step("ports")?[1] as? [String])?.contains("nDECK:master_L") == true, "the JACK client is not named by the manager: \(result.text)")
    #expect(!log.contains("already runs"), "the manager's client name was reported as a name clash: \(log)")
    #expect(step("add")?[1] as? Bool == true && step("add")?[2] as? Bool == true, "\(result.text)")
    #expect(step("dirty")?[1] as? Bool == true, "no /nsm/client/is_dirty after a change: \(result.text)")
    #expect(step("save")?[1] as? String == "/reply", "\(result.text)\n\(log)")
    #expect(step("clean")?[1] as? Bool == true, "no /nsm/client/is_clean after the save: \(result.text)")
    let exits = said.filter { $0.first as? String == "exit" }.compactMap { $0[1] as? Int }
    #expect(exits == [0, 0], "stemdeck did not end cleanly on the manager's SIGTERM: \(result.text)\n\(log)")
    let same = step("same")
    #expect(same?[1] as? Bool == true, "the reopened session differs: \(result.text)")
    #expect(
      (same?[2] as? [String])?.contains { $0.hasPrefix("drums ") && $0.contains(" 0.50 ") && $0.contains(" 0.25 ") } == true,
      "\(result.text)")
  }

  @Test(
    "NSM: a switch to a new project whose folder cannot take the session file is answered with /error and leaves the current session as it was"
  )
  func nsmNewProjectUnwritable() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir("stemdeck-nsm-unwritable")
    try writeSine(dir.file("drums.wav"), sampleRate: 48000, seconds: 2, frequencies: [440])
    // /proc/self/fdinfo is a folder in which no file can be created, whoever runs the test.
    let run = try await runManager(
      #"""
      p = launch()
      url = handshake(p, "nDECK")
      say("add", ctl("add " + wav + " as drums; vol drums -6dB")["ok"])
      # Saved first: over unsaved changes the switch is refused before the folder is tried (NSMHostileTests).
      srv.send(url, "/nsm/client/save")
      wait(lambda r: r[0] in ("/reply", "/error") and r[1][0] == "/nsm/client/save")
      srv.send(url, "/nsm/client/open", "/proc/self/fdinfo", "stemdeck", "nDECK")
      r = wait(lambda r: r[0] in ("/reply", "/error") and r[1][0] == "/nsm/client/open")
      say("switch", r[0] if r else None, r[1] if r else None)
      say("stems", ctl("stems")["output"], ctl("status")["output"])
      p.send_signal(signal.SIGTERM)
      say("exit", p.wait(15))
      """#, server: server, dir: dir, wav: dir.file("drums.wav"), timeout: 90)
    let (result, log, step) = (run.result, run.log, run.step)
    #expect(step("add")?[1] as? Bool == true, "\(result.text)\n\(log)")
    #expect(step("switch")?[1] as? String == "/error", "the switch should fail: \(result.text)\n\(log)")
    #expect(
      ((step("switch")?[2] as? [Any])?.last as? String)?.contains("/proc/self/fdinfo") == true,
      "refused for another reason than the folder: \(result.text)")
    let stems = step("stems")?[1] as? [String] ?? []
    let status = step("stems")?[2] as? [String] ?? []
    #expect(stems.contains { $0.hasPrefix("drums ") && $0.contains(" 0.50 ") }, "the current session was emptied: \(result.text)")
    #expect(
      status.contains { $0.hasPrefix("session: ") && $0.contains(dir.file("instance/stemdeck.json")) },
      "the session file changed: \(status)")
    #expect(step("exit")?[1] as? Int == 0, "\(result.text)\n\(log)")
  }

  @Test("NSM: a session file that cannot be read is answered with /error (ERR_BAD_PROJECT) and left as it was; stemdeck exits 1")
  func nsmBadProject() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir("stemdeck-nsm-bad")
    try FileManager.default.createDirectory(atPath: dir.file("instance"), withIntermediateDirectories: true)
    let broken = "{ \"format\" : \"stemdeck-session\", \"version\" : 1, \"stems\" : [ { \"name\" : 7 } ] }"
    try broken.write(toFile: dir.file("instance/stemdeck.json"), atomically: true, encoding: .utf8)
    let run = try await runManager(
      #"""
      p = launch()
      handshake(p, "bad")
      say("exit", p.wait(15))
      """#, server: server, dir: dir, wav: dir.file("none.wav"), timeout: 60)
    let (result, log, said) = (run.result, run.log, run.said)
    let open = said.first { $0.first as? String == "open" }
    #expect(open?[1] as? String == "/error", "\(result.text)\n\(log)")
    let args = open?[2] as? [Any]
    #expect(args?[1] as? Int == -9 && (args?[2] as? String)?.contains("stems[0].name") == true, "\(result.text)")
    #expect(said.first { $0.first as? String == "exit" }?[1] as? Int == 1, "\(result.text)\n\(log)")
    #expect(
      (try? String(contentsOfFile: dir.file("instance/stemdeck.json"), encoding: .utf8)) == broken, "the unreadable session was changed")
  }

  @Test("NSM: a manager that disappears never takes stemdeck down; it keeps answering on its control socket")
  func nsmManagerGone() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir("stemdeck-nsm-gone")
    try writeSine(dir.file("drums.wav"), sampleRate: 48000, seconds: 2, frequencies: [440])
    let run = try await runManager(
      #"""
      p = launch()
      handshake(p, "gone")
      say("pid", p.pid)
      os._exit(0)  # the manager dies without a word; stemdeck is left running
      """#, server: server, dir: dir, wav: dir.file("drums.wav"), timeout: 60)
    let (result, said) = (run.result, run.said)
    let socketPath = dir.file("c.sock")
    let pid = try #require(said.first { $0.first as? String == "pid" }?[1] as? Int, "\(result.text)")
    defer { kill(pid_t(pid), SIGKILL) }
    #expect(said.first { $0.first as? String == "open" }?[1] as? String == "/reply", "\(result.text)")
    // Changes now make stemdeck tell a manager that is gone; it carries on.
    let binary = try StemdeckBinary.require()
    let change = try await runTool(
      binary, ["ctl", "--socket", socketPath, "add \(dir.file("drums.wav")) as drums; vol drums -6dB; save"], timeout: 20)
    #expect(change.status == 0, "\(change.text)")
    let status = try await runTool(binary, ["ctl", "--socket", socketPath, "vol drums -3dB; status"], timeout: 20)
    #expect(status.status == 0 && status.stdout.contains { $0.hasPrefix("state:") }, "\(status.text)")
    #expect(kill(pid_t(pid), 0) == 0, "stemdeck ended when its manager disappeared")
    // It still ends as a manager would end it.
    kill(pid_t(pid), SIGTERM)
    let ended = await eventually(timeout: 10) { kill(pid_t(pid), 0) != 0 || FileFacts.kind(socketPath) == nil }
    #expect(ended, "stemdeck did not end on SIGTERM")
  }
}
