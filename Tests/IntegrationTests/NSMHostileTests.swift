// Issue 43, the session manager's part: a second open that would lose unsaved changes (item 4),
// a client socket only the manager can reach (item 16), and joins that go wrong said at once
// (the minor items). The manager is RemoteControlTests' Python one (python3-liblo), or a
// script that starts stemdeck itself where no JACK server is needed.
import Foundation
import StemdeckTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Element `i` of a JSON array a script said, nil when it is shorter (a failing run's answer).
private func item(_ array: Any?, _ i: Int) -> Any? {
  guard let array = array as? [Any], array.indices.contains(i) else { return nil }
  return array[i]
}

@Suite("NSM under attack (issue 43)", .serialized, .timeLimit(.minutes(3)))
struct NSMHostileTests {
  @Test("4: a second /nsm/client/open over unsaved changes is refused with ERR_UNSAVED_CHANGES and loses nothing; once saved, it switches")
  func secondOpenKeepsUnsavedChanges() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir("stemdeck-nsm-second-open")
    try writeSine(dir.file("drums.wav"), sampleRate: 48000, seconds: 2, frequencies: [440])
    let run = try await RemoteControlTests().runManager(
      #"""
      def open_again(path):
          srv.send(url, "/nsm/client/open", os.path.join(folder, path), "stemdeck", "nDECK")
          r = wait(lambda r: r[0] in ("/reply", "/error") and r[1][0] == "/nsm/client/open")
          return [r[0], r[1]] if r else None
      def read(path):
          with open(os.path.join(folder, path, "stemdeck.json")) as f: return f.read()
      p = launch()
      url = handshake(p, "nDECK")
      saved = read("instance")
      say("add", ctl("add " + wav + " as drums; vol drums -6dB")["ok"])
      say("reopen", open_again("instance"))
      say("switch", open_again("other"))
      say("kept", ctl("stems")["output"], ctl("status")["output"], read("instance") == saved, os.path.exists(os.path.join(folder, "other")))
      srv.send(url, "/nsm/client/save")
      r = wait(lambda r: r[0] in ("/reply", "/error") and r[1][0] == "/nsm/client/save")
      say("save", r[0] if r else None)
      say("clean switch", open_again("other"), ctl("status")["output"])
      p.send_signal(signal.SIGTERM)
      say("exit", p.wait(15))
      """#, server: server, dir: dir, wav: dir.file("drums.wav"), timeout: 90)
    let (result, log, step) = (run.result, run.log, run.step)
    #expect(item(step("add"), 1) as? Bool == true, "\(result.text)\n\(log)")
    for name in ["reopen", "switch"] {
      let answer = item(step(name), 1) as? [Any]
      let args = item(answer, 1) as? [Any]
      #expect(item(answer, 0) as? String == "/error", "\(name): the open was not refused: \(result.text)\n\(log)")
      #expect(item(args, 1) as? Int == -7, "\(name): not ERR_UNSAVED_CHANGES (-7): \(result.text)")
      #expect(
        (item(args, 2) as? String)?.contains("unsaved changes") == true && (item(args, 2) as? String)?.contains("drums") == true,
        "\(name): the message does not say what is unsaved: \(result.text)")
    }
    let kept = step("kept")
    let stems = item(kept, 1) as? [String] ?? []
    let status = item(kept, 2) as? [String] ?? []
    #expect(stems.contains { $0.hasPrefix("drums ") && $0.contains(" 0.50 ") }, "the unsaved changes were lost: \(result.text)")
    #expect(status.contains { $0.hasPrefix("session: ") && $0.contains(dir.file("instance/stemdeck.json")) }, "\(status)")
    #expect(item(kept, 3) as? Bool == true && item(kept, 4) as? Bool == false, "a refused open wrote files: \(result.text)")
    #expect(log.contains("refused the session manager's open"), "the console did not say it refused: \(log)")
    #expect(item(step("save"), 1) as? String == "/reply", "\(result.text)\n\(log)")
    let clean = step("clean switch")
    #expect(item(item(clean, 1), 0) as? String == "/reply", "a clean session did not switch: \(result.text)\n\(log)")
    #expect(
      (item(clean, 2) as? [String] ?? []).contains { $0.hasPrefix("session: ") && $0.contains(dir.file("other/stemdeck.json")) },
      "\(result.text)")
    #expect(item(step("exit"), 1) as? Int == 0, "\(result.text)\n\(log)")
  }

  @Test(
    "16: the NSM socket is bound to loopback and connected to the manager; a stranger's save and open reach nothing; a taken client id is said in NSM's words"
  )
  func managerOnlySocket() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir("stemdeck-nsm-socket")
    try writeSine(dir.file("drums.wav"), sampleRate: 48000, seconds: 2, frequencies: [440])
    let run = try await RemoteControlTests().runManager(
      #"""
      import jack
      held = jack.Client("nHELD", no_start_server=True, servername=jackname)  # the client id, taken
      p = launch()
      url = handshake(p, "nHELD")
      port = int(url.rstrip("/").rsplit(":", 1)[1])
      rows = [l.split() for l in open("/proc/net/udp").read().splitlines()[1:]]
      mine = [r for r in rows if r[1].endswith(":%04X" % port)]
      say("udp", [r[1] for r in mine], [r[2] for r in mine], "0100007F:%04X" % srv.port)
      stranger = liblo.Server()
      stranger.send(("127.0.0.1", port), "/nsm/client/open", os.path.join(folder, "evil"), "stemdeck", "nEVIL")
      stranger.send(("127.0.0.1", port), "/nsm/client/save")
      say("add", ctl("add " + wav + " as drums")["ok"])
      # The manager's own save comes after the stranger's datagrams: once it is answered, they were served.
      srv.send(url, "/nsm/client/save")
      r = wait(lambda r: r[0] in ("/reply", "/error") and r[1][0] == "/nsm/client/save")
      say("save", r[0] if r else None)
      heard = []
      stranger.add_method(None, None, lambda path, args: heard.append(path))
      while stranger.recv(0): pass
      say("stranger", heard, os.path.exists(os.path.join(folder, "evil")), ctl("status")["output"])
      p.send_signal(signal.SIGTERM)
      say("exit", p.wait(15))
      held.close()
      """#, server: server, dir: dir, wav: dir.file("drums.wav"), timeout: 90)
    let (result, log, step) = (run.result, run.log, run.step)
    let udp = step("udp")
    let locals = item(udp, 1) as? [String] ?? []
    let remotes = item(udp, 2) as? [String] ?? []
    #expect(locals.count == 1 && locals.allSatisfy { $0.hasPrefix("0100007F:") }, "not bound to 127.0.0.1: \(result.text)")
    #expect(remotes.count == 1 && remotes.first == item(udp, 3) as? String, "not connected to the manager: \(result.text)")
    #expect(item(step("save"), 1) as? String == "/reply", "\(result.text)\n\(log)")
    let stranger = step("stranger")
    #expect((item(stranger, 1) as? [String])?.isEmpty == true, "the stranger got answers: \(result.text)")
    #expect(item(stranger, 2) as? Bool == false, "the stranger's open made a folder: \(result.text)")
    #expect(
      (item(stranger, 3) as? [String] ?? []).contains { $0.hasPrefix("session: ") && $0.contains(dir.file("instance/stemdeck.json")) },
      "\(result.text)")
    #expect(
      log.contains("the session manager's client id 'nHELD' is already a JACK client's name") && !log.contains("--name"),
      "the renamed client is not said in NSM's words: \(log)")
    #expect(item(step("exit"), 1) as? Int == 0, "\(result.text)\n\(log)")
  }

  @Test(
    "Minor: a bad NSM_URL, a port nobody listens on, a silent manager, a malformed open and a client id JACK cannot take are each said at once, never as 30 s of silence or --name's fault"
  )
  func joinsThatGoWrong() async throws {
    let dir = try IntegrationTempDir("stemdeck-nsm-join")
    let script = dir.file("joins.py")
    // The test manager's prelude (its srv, wait, say), with no JACK server: stemdeck ends before one is needed.
    let steps = #"""
      def start(url):
          env = dict(os.environ, NSM_URL=url, JACK_DEFAULT_SERVER="stemdeck-nsm-none", JACK_NO_START_SERVER="1")
          return subprocess.Popen([binary, "--no-start-server", "--no-control"], env=env, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
      def finish(p, started, timeout=20):
          try: err = p.communicate(timeout=timeout)[1]
          except subprocess.TimeoutExpired:
              p.kill()
              return [None, p.communicate()[1], time.time() - started]
          return [p.returncode, err, time.time() - started]
      for name, url in [("range", "osc.udp://localhost:99999/"), ("no port", "osc.udp://localhost/"), ("tcp", "osc.tcp://localhost:1234/")]:
          say(name, *finish(start(url), time.time()))
      s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); free = s.getsockname()[1]; s.close()
      say("refused", *finish(start("osc.udp://127.0.0.1:%d/" % free), time.time()))
      silent = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); silent.bind(("127.0.0.1", 0))
      started = time.time()
      p = start("osc.udp://127.0.0.1:%d/" % silent.getsockname()[1])
      note = p.stderr.readline()
      say("note", note, time.time() - started)
      p.send_signal(signal.SIGTERM)
      say("silent", *finish(p, time.time()))
      for name, args in [("client id", (os.path.join(folder, "x"), "stemdeck", "has:colon")), ("relative", ("relative/x", "stemdeck", "nOK"))]:
          started = time.time()
          p = start(srv.url)
          m = wait(lambda m: m[0] == "/nsm/server/announce")
          srv.send(m[2], "/reply", "/nsm/server/announce", "welcome", "test-manager", ":server-control:")
          srv.send(m[2], "/nsm/client/open", *args)
          r = wait(lambda r: r[0] in ("/reply", "/error") and r[1][0] == "/nsm/client/open")
          say(name, r[0] if r else None, r[1] if r else None, *finish(p, started))
      # NSM_URL names the host, which Debian maps to 127.0.1.1: a manager on every address answers
      # from 127.0.0.1, one bound to 127.0.1.1 only is reached there. Each open is answered (with
      # the JACK server's absence: there is none), so stemdeck heard the manager.
      p = start("osc.udp://127.0.1.1:%d/" % srv.port)
      m = wait(lambda m: m[0] == "/nsm/server/announce")
      if m:
          srv.send(m[2], "/reply", "/nsm/server/announce", "welcome", "test-manager", ":server-control:")
          srv.send(m[2], "/nsm/client/open", os.path.join(folder, "y"), "stemdeck", "nLOOP")
      r = wait(lambda r: r[0] in ("/reply", "/error") and r[1][0] == "/nsm/client/open")
      say("127.0.1.1", r[1] if r else None, *finish(p, time.time()))
      def osc(path, *args):
          pad = lambda b: b + b"\0" * (4 - len(b) % 4)
          return pad(path.encode()) + pad(("," + "s" * len(args)).encode()) + b"".join(pad(a.encode()) for a in args)
      only = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); only.bind(("127.0.1.1", 0)); only.settimeout(10)
      p = start("osc.udp://127.0.1.1:%d/" % only.getsockname()[1])
      try:
          data, peer = only.recvfrom(65536)
          only.sendto(osc("/reply", "/nsm/server/announce", "welcome", "test-manager", ":"), peer)
          only.sendto(osc("/nsm/client/open", os.path.join(folder, "z"), "stemdeck", "nONLY"), peer)
          answer = only.recvfrom(65536)[0]
      except socket.timeout: answer = b""
      say("127.0.1.1 only", answer.decode("latin-1"), *finish(p, time.time()))
      """#
    try (RemoteControlTests.managerPrelude + "\n" + steps).write(toFile: script, atomically: true, encoding: .utf8)
    let result = try await runTool(
      "/usr/bin/python3", [script, try StemdeckBinary.require(), "stemdeck-nsm-none", dir.path, dir.file("c.sock"), dir.file("none.wav")],
      timeout: 150)
    let said = result.stdout.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [Any] }
    func step(_ name: String) -> [Any]? { said.first { $0.first as? String == name } }
    #expect(result.status == 0, "\(result.text)")
    /// A run that exited 1 within 10 s (not the 30 s wait) saying `words`.
    func saidAtOnce(_ name: String, _ words: [String], status: Int = 1, at index: Int = 1) {
      let s = step(name)
      let stderr = item(s, index + 1) as? String ?? ""
      #expect(item(s, index) as? Int == status, "\(name): exit status: \(result.text)")
      #expect((item(s, index + 2) as? Double ?? 99) < 10, "\(name): not at once: \(result.text)")
      for w in words { #expect(stderr.contains(w), "\(name): does not say '\(w)': \(stderr)") }
      #expect(!stderr.contains("--name") && !stderr.contains("within 30 s"), "\(name): misleading: \(stderr)")
    }
    saidAtOnce("range", ["99999", "1…65535"])
    saidAtOnce("no port", ["names no port"])
    saidAtOnce("tcp", ["only UDP"])
    saidAtOnce("refused", ["no session manager listens at", "refused"])
    let note = step("note")
    #expect(
      (item(note, 1) as? String)?.contains("no answer yet from the session manager at osc.udp://127.0.0.1:") == true, "\(result.text)")
    #expect((item(note, 2) as? Double ?? 99) < 10, "the silent manager was not said within 10 s: \(result.text)")
    saidAtOnce("silent", ["stopped while waiting for the session manager"], status: 143)
    for name in ["client id", "relative"] {
      #expect(item(step(name), 1) as? String == "/error", "\(name): the manager got no /error: \(result.text)")
      saidAtOnce(name, ["refused the session manager's /nsm/client/open"], at: 3)
    }
    #expect(
      (item(item(step("client id"), 2), 2) as? String)?.contains("cannot use the client id 'has:colon' as its JACK client name") == true,
      "\(result.text)")
    #expect(!FileManager.default.fileExists(atPath: dir.file("x")), "a refused open made its folder")
    let anyAddress = step("127.0.1.1")
    #expect(
      (item(item(anyAddress, 1), 2) as? String)?.contains("cannot start its JACK client") == true,
      "a manager on every address, named 127.0.1.1, was not heard: \(result.text)")
    #expect(item(anyAddress, 2) as? Int == 1, "\(result.text)")
    let oneAddress = step("127.0.1.1 only")
    #expect(
      (item(oneAddress, 1) as? String)?.contains("cannot start its JACK client") == true,
      "a manager bound to 127.0.1.1 only was not heard: \(result.text)")
    #expect(item(oneAddress, 2) as? Int == 1, "\(result.text)")
  }
}
