import Foundation
import StemdeckTestSupport
import Testing
@testable import StemdeckConsole
import StemdeckControl
import StemdeckJack

@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

#if canImport(Glibc)
import Glibc
#endif

/// The control socket's reply path (`ControlServer.reply`, QueryJSON.swift) in-process, against
/// an offline mixer: structured query data, errors with their hint, and the REPL's fuzz turned
/// into requests (the peers over a real socket are in IntegrationTests.ControlSocketTests).
@Suite("control socket replies")
struct ControlReplyTests {
  /// A harness with the REPL's two stems and a control server (its socket never used: `reply`
  /// is called directly).
  struct Rig {
    let h: ConsoleHarness
    let server: ControlServer

    init() throws {
      h = try ConsoleHarness.withStems()
      server = try ControlServer(path: h.folder.file("c.sock"), makeFolder: false)
    }

    func shutdown() {
      server.close()
      h.shutdown()
    }

    /// The reply to one request line, parsed.
    func ask(_ line: String) throws -> [String: Any] {
      let text = server.reply(to: Array(line.utf8), h.console)
      return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not a JSON object: \(text)")
    }

    func command(_ cmd: String, id: Int = 1) throws -> [String: Any] {
      try ask(ControlServer.encode(["id": id, "cmd": cmd]))
    }
  }

  /// A JSON number (the reply's text is checked too: numbers are written as numbers).
  static func number(_ v: Any?) -> Double? {
    guard !(v is String), let n = v as? NSNumber else { return nil }
    return n.doubleValue
  }

  @Test("status, stems and meters reply with JSON objects whose numbers are numbers; the text stays in output")
  func structuredQueries() throws {
    let rig = try Rig()
    defer { rig.shutdown() }
    #expect(try rig.command("vol drums 0.5; pan bass -0.25; mute bass")["ok"] as? Bool == true)

    let status = try rig.command("status")
    #expect(status["ok"] as? Bool == true)
    #expect((status["output"] as? [String])?.contains("state: stopped") == true, "\(status)")
    let s = try #require(status["status"] as? [String: Any], "\(status)")
    #expect(s["state"] as? String == "stopped")
    #expect(Self.number(s["position"]) == 0)
    #expect(Self.number(s["length"]) == 2)
    #expect(Self.number(s["stems"]) == 2)
    #expect(Self.number(s["sampleRate"]) == 48000)
    #expect(s["server"] is NSNull, "offline: no server")
    #expect(Self.number((s["master"] as? [String: Any])?["volume"]) == 1)
    #expect(Self.number((s["master"] as? [String: Any])?["volumeDB"]) == 0)

    let text = rig.server.reply(to: Array(ControlServer.encode(["id": 1, "cmd": "stems"]).utf8), rig.h.console)
    #expect(text.contains("\"volume\":0.5,") && text.contains("\"volumeDB\":-6.02") && text.contains("\"pan\":-0.25,"), "\(text)")
    let stems = try rig.command("stems")
    let list = try #require(stems["stems"] as? [[String: Any]], "\(stems)")
    #expect(list.map { $0["name"] as? String } == ["drums", "bass"])
    let drums = list[0], bass = list[1]
    #expect(Self.number(drums["volume"]) == 0.5)
    #expect(Self.number(drums["volumeDB"]) == -6.02)
    #expect(Self.number(drums["pan"]) == 0)
    #expect(Self.number(drums["rate"]) == 1)
    #expect(Self.number(drums["channels"]) == 2)
    #expect(Self.number(drums["length"]) == 2)
    #expect(drums["mute"] as? Bool == false && drums["file"] as? String == "drums.wav")
    #expect((drums["meters"] as? [Any])?.count == 2)
    #expect(Self.number(bass["pan"]) == -0.25)
    #expect(bass["mute"] as? Bool == true && bass["flags"] as? String == "M")
    #expect(Self.number(bass["sampleRate"]) == 44100)
    #expect((stems["output"] as? [String])?.first?.hasPrefix("name") == true, "the table stays in output: \(stems)")

    #expect(try rig.command("play")["ok"] as? Bool == true)
    rig.h.render(blocks: 4)
    let meters = try #require(try rig.command("meters")["meters"] as? [String: Any])
    let master = try #require(meters["master"] as? [String: Any])
    let channels = try #require(master["channels"] as? [[String: Any]])
    #expect(channels.count == 2)
    #expect(Self.number(channels[0]["peak"]).map { $0 < 0 && $0 > -20 } == true, "a full-scale sine at -6 dB: \(channels)")
    #expect(((meters["stems"] as? [[String: Any]])?.map { $0["name"] as? String }) == ["drums", "bass"])
    let one = try #require(try rig.command("meters drums")["meters"] as? [String: Any])
    #expect(one["master"] == nil && (one["stems"] as? [[String: Any]])?.count == 1, "\(one)")
    // Offline: routes need JACK and say so, with the error and no data.
    let routes = try rig.command("routes")
    #expect(routes["ok"] as? Bool == false && routes["routes"] == nil)
  }

  @Test("errors carry a hint: an unknown stem or command gets 'did you mean', a wrong argument count the usage")
  func hints() throws {
    let rig = try Rig()
    defer { rig.shutdown() }
    let stem = try rig.command("vol drms -6dB", id: 3)
    #expect(stem["ok"] as? Bool == false && Self.number(stem["id"]) == 3)
    #expect(stem["error"] as? String == "unknown stem 'drms'", "\(stem)")
    #expect(stem["hint"] as? String == "did you mean 'drums'?", "\(stem)")
    let command = try rig.command("paly")
    #expect(command["error"] as? String == "unknown command 'paly'", "\(command)")
    #expect((command["hint"] as? String)?.hasPrefix("did you mean 'play'?") == true, "\(command)")
    let usage = try rig.command("vol drums")
    #expect((usage["hint"] as? String)?.hasPrefix("usage: vol NAME|all") == true, "\(usage)")
    let far = try rig.command("mute zzzzzzzz")
    #expect(far["error"] as? String == "unknown stem 'zzzzzzzz'" && far["hint"] as? String == "stems: drums, bass", "\(far)")
    let plain = try rig.command("vol drums 7")
    #expect(plain["hint"] == nil && (plain["error"] as? String)?.contains("got 7") == true, "\(plain)")
    // ctl joins them back into the console's words.
    #expect(QueryJSON.joined("unknown stem 'drms'", "did you mean 'drums'?") == "unknown stem 'drms' — did you mean 'drums'?")
    #expect(QueryJSON.joined("unknown stem 'x'", "stems: a, b") == "unknown stem 'x' (stems: a, b)")

    // The search stays bounded: a name of 60,000 characters (near the longest request line) is
    // answered without a suggestion (its time is printed, a figure, not asserted).
    let long = String(repeating: "drums", count: 12_000)
    let start = Date()
    let reply = try rig.command("vol \(long) 1")
    print("a 60,000-character stem name answered in \(String(format: "%.3f", Date().timeIntervalSince(start))) s")
    #expect(reply["ok"] as? Bool == false && reply["hint"] as? String == "stems: drums, bass", "\(reply.keys)")
  }

  @Test(
    "the REPL fuzz as 20,000 requests (a million with STEMDECK_LONG_TESTS; JSON-wrapped lines, broken JSON, random bytes): every reply is one JSON object with ok, and the server still answers"
  )
  func fuzzRequests() throws {
    let rig = try Rig()
    defer { rig.shutdown() }
    var r = SplitMix64(seed: 0xC0_50CE7)
    // The REPL fuzz's size (FuzzTests.swift): every word meets every argument several times.
    let count = ProcessInfo.processInfo.environment["STEMDECK_LONG_TESTS"] != nil ? 1_000_000 : 20_000
    var bad: [String] = []
    var refused = 0
    for i in 0..<count {
      let line = ReplFuzzTests.randomLine(&r)
      var bytes: [UInt8]
      var wellFormed = false
      switch r.below(6) {
      case 0:
        bytes = Array(line.utf8)  // not JSON at all
      case 1:
        let full = Array(ControlServer.encode(["id": i, "cmd": line]).utf8)
        bytes = Array(full.prefix(r.below(full.count + 1)))  // cut anywhere
      case 2:
        // Right shape, wrong types.
        let values: [Any] = [i, NSNull(), [line], ["cmd": line], true, 1.5e308, line]
        bytes = Array(ControlServer.encode(["id": values[r.below(values.count)], "cmd": values[r.below(values.count)]]).utf8)
      default:
        bytes = Array(ControlServer.encode(["id": i, "cmd": line]).utf8)
        wellFormed = true
      }
      bytes.removeAll { $0 == 10 }  // one request line (the server splits at newlines)
      let text = rig.server.reply(to: bytes, rig.h.console)
      rig.h.console.quitRequested = false
      rig.h.console.watchRequested = false
      guard let reply = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
        let ok = reply["ok"] as? Bool, !text.contains("\n")
      else {
        if bad.count < 5 { bad.append("request \(i): \(text)") }
        continue
      }
      if !ok {
        refused += 1
        if !(reply["error"] is String), bad.count < 5 { bad.append("request \(i) refused without an error: \(text)") }
      }
      if wellFormed, Self.number(reply["id"]) != Double(i), bad.count < 5 {
        bad.append("request \(i) answered with id \(reply["id"] ?? "none")")
      }
      if i % 200 == 0 { rig.h.render(blocks: 1) }
    }
    #expect(bad.isEmpty, "\(bad)")
    #expect(refused > count / 2)
    let after = try rig.command("echo still here", id: 7)
    #expect(after["ok"] as? Bool == true && after["output"] as? [String] == ["still here"], "\(after)")
    print("control socket reply fuzz: \(count) requests, \(refused) refused")
  }

  @Test("10,000 fuzz lines over a real Unix socket to the server's service step: one reply line per line, and the connection stays usable")
  func fuzzOverSocket() throws {
    let rig = try Rig()
    defer { rig.shutdown() }
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
    try #require(fd >= 0)
    defer { close(fd) }
    var address = ControlServer.address(rig.server.path)
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    try #require(connected == 0, "connect: \(String(cString: strerror(errno)))")
    var r = SplitMix64(seed: 0x50C_CE75)
    let count = 10_000
    var stream: [UInt8] = []
    for i in 0..<count {
      let line = ReplFuzzTests.randomLine(&r)
      var bytes = r.below(3) == 0 ? Array(line.utf8) : Array(ControlServer.encode(["id": i, "cmd": line]).utf8)
      bytes.removeAll { $0 == 10 }
      stream += bytes + [10]
    }
    stream += Array((ControlServer.encode(["id": "last", "cmd": "echo still here"]) + "\n").utf8)
    var sent = 0
    var pending: [UInt8] = []
    var replies: [[String: Any]] = []
    var notJSON = 0
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    let deadline = Date().addingTimeInterval(120)
    var steps = 0
    while replies.count + notJSON < count + 1 && Date() < deadline {
      steps += 1
      if sent < stream.count {
        let n = stream[sent...].withUnsafeBytes { send(fd, $0.baseAddress, min($0.count, 16 * 1024), Int32(MSG_NOSIGNAL)) }
        if n > 0 { sent += n }
      }
      rig.server.service(rig.h.console)
      rig.h.console.quitRequested = false
      rig.h.console.watchRequested = false
      while true {
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n <= 0 { break }
        pending += buffer[..<n]
      }
      while let newline = pending.firstIndex(of: 10) {
        let line = Data(pending[..<newline])
        pending.removeSubrange(...newline)
        if let o = try? JSONSerialization.jsonObject(with: line) as? [String: Any], o["ok"] is Bool {
          replies.append(o)
        } else {
          notJSON += 1
        }
      }
      if steps % 50 == 0 { rig.h.render(blocks: 1) }  // as the audio thread would drain commands
    }
    #expect(notJSON == 0)
    #expect(replies.count == count + 1, "\(replies.count) replies to \(count + 1) lines")
    #expect(
      replies.last?["id"] as? String == "last" && replies.last?["output"] as? [String] == ["still here"],
      "\(String(describing: replies.last))")
    #expect(rig.server.clientCount == 1, "the connection was dropped")
  }
}

/// The control loop's wait (ControlLoop.swift): a request on the control socket, a wake-up from
/// another thread and a line of input each end it (before a 60 s timeout: woken, not timed out);
/// with nothing to do it lasts its tick.
@Suite("control loop")
struct ControlLoopTests {
  static func elapsed(_ body: () -> Void) -> Double {
    let start = Date()
    body()
    return Date().timeIntervalSince(start)
  }

  @Test("poll wakes on a socket request, on wakeControlLoop() from another thread and on input; otherwise it waits its timeout")
  func wakes() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let server = try ControlServer(path: h.folder.file("c.sock"), makeFolder: false)
    defer { server.close() }
    let loop = ControlLoop()
    loop.sources.append { server.interest(&$0) }

    // Nothing to do: the whole timeout.
    #expect(Self.elapsed { loop.wait(timeout: 0.05) } >= 0.045)

    // A client connecting, then its request: each wakes the wait long before its 5 s.
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    defer { close(fd) }
    var address = ControlServer.address(server.path)
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    try #require(connected == 0)
    #expect(Self.elapsed { loop.wait(timeout: 60) } < 59, "a connection did not wake the loop (it waited its 60 s)")
    server.service(h.console)  // accepts it
    let request = Array((ControlServer.encode(["id": 1, "cmd": "echo woken"]) + "\n").utf8)
    #expect(request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == request.count)
    #expect(Self.elapsed { loop.wait(timeout: 60) } < 59, "a request did not wake the loop (it waited its 60 s)")
    server.service(h.console)
    var buffer = [UInt8](repeating: 0, count: 4096)
    let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
    #expect(n > 0 && String(decoding: buffer[..<max(0, n)], as: UTF8.self).contains("\"woken\""))

    // Idle again (the reply was read): the timeout.
    #expect(Self.elapsed { loop.wait(timeout: 0.05) } >= 0.045, "the loop spins on a served client")

    // A wake-up from another thread (JACK's notification thread does this).
    let waker = Thread {
      usleep(50_000); wakeControlLoop()
    }
    waker.start()
    let woken = Self.elapsed { loop.wait(timeout: 60) }
    #expect(woken >= 0.04 && woken < 59, "woken after \(woken) s (its timeout: 60 s)")

    // Input on a descriptor of the caller's own: its revents.
    var ends: [Int32] = [-1, -1]
    try #require(pipe(&ends) == 0)
    defer { close(ends[0]); close(ends[1]) }
    #expect(loop.wait(timeout: 0.01, input: ends[0]) == 0)
    var byte: UInt8 = 10
    #expect(write(ends[1], &byte, 1) == 1)
    var revents: Int16 = 0
    #expect(Self.elapsed { revents = loop.wait(timeout: 60, input: ends[0]) } < 59, "input did not wake the loop (it waited its 60 s)")
    #expect(revents & Int16(POLLIN) != 0)
  }

  @Test(
    "the control socket's file appears only once it listens: a client connecting the moment it exists is never refused (2,000 starts); nothing else is left in its folder"
  )
  func socketAppearsListening() throws {
    let folder = try TemporaryFolder()
    let path = folder.file("c.sock")
    final class Watch: @unchecked Sendable {
      var refused = 0
      var other: [Int32] = []
      let seen = DispatchSemaphore(value: 0)
      let closed = DispatchSemaphore(value: 0)
    }
    let watch = Watch()
    let rounds = 2000
    // The watcher connects at the first sight of the file, as a manager or script polling does.
    let watcher = Thread {
      for _ in 0..<rounds {
        var st = stat()
        while lstat(path, &st) != 0 {}
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = ControlServer.address(path)
        let r = withUnsafePointer(to: &address) {
          $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        if r != 0 { if errno == ECONNREFUSED { watch.refused += 1 } else { watch.other.append(errno) } }
        close(fd)
        watch.seen.signal()
        watch.closed.wait()
      }
    }
    watcher.start()
    for _ in 0..<rounds {
      let server = try ControlServer(path: path, makeFolder: false)
      watch.seen.wait()
      server.close()  // removes the file before the watcher looks again
      watch.closed.signal()
    }
    #expect(watch.refused == 0, "\(watch.refused) of \(rounds) connections were refused: the file existed before the socket listened")
    #expect(watch.other.isEmpty, "connect failed otherwise: errno \(watch.other)")
    let server = try ControlServer(path: path, makeFolder: false)
    defer { server.close() }
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["c.sock"])
  }
}
