// The web mixer's requests on the control thread: a WebSocket's socket pair adopted by a
// `ControlServer(adopting: .web)` is served as a control-socket client, with the web surface's
// ceiling (mix, transport, show).
import Foundation
@testable import StemdeckConsole
import StemdeckSession
import Testing
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

@Suite("the web mixer's surface")
struct WebSurfaceTests {
  @Test("an adopted pair gets one reply a request; the web mixer may mix and run the transport, never save, quit or route")
  func webCeiling() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let server = ControlServer(adopting: .web)
    defer { server.close() }
    var pair: [Int32] = [0, 0]
    #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
    defer { close(pair[0]) }
    server.adopt(pair[1])
    var pending: [UInt8] = []
    func ask(_ cmd: String) throws -> [String: Any] {
      let line = Array((ControlServer.encode(["id": 1, "cmd": cmd]) + "\n").utf8)
      #expect(line.withUnsafeBytes { send(pair[0], $0.baseAddress, $0.count, 0) } == line.count)
      // Served until its reply line is there (a transport command waits for the engine).
      for _ in 0..<500 where !pending.contains(10) {
        server.service(h.console)
        var buffer = [UInt8](repeating: 0, count: 65536)
        let n = buffer.withUnsafeMutableBytes { recv(pair[0], $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        if n > 0 { pending += buffer[..<n] } else { usleep(2000) }
      }
      let end = try #require(pending.firstIndex(of: 10), "no reply to '\(cmd)'")
      let reply = Array(pending[..<end])
      pending.removeSubrange(...end)
      return try #require(try JSONSerialization.jsonObject(with: Data(reply)) as? [String: Any])
    }
    for cmd in ["vol drums -6dB", "pan bass -0.5; mute bass", "play; pause; seek 0.5", "scene save a; scene recall a", "undo", "stems"] {
      let r = try ask(cmd)
      #expect(r["ok"] as? Bool == true, "\(cmd): \(r)")
    }
    for cmd in ["save \(h.folder.file("web.json"))", "quit", "autosave off", "mixer"] {
      let r = try ask(cmd)
      #expect(r["ok"] as? Bool == false && (r["error"] as? String)?.contains("refused from the web mixer") == true, "\(cmd): \(r)")
    }
    #expect(!FileManager.default.fileExists(atPath: h.folder.file("web.json")) && !h.console.quitRequested)
    #expect(h.console.historySteps().contains { $0["source"] as? String == "web" })
  }
}

/// A client of a `ControlServer` on a socket pair, served by hand: what a page's WebSocket is.
private final class PairClient {
  let server: ControlServer
  let console: Console
  var fd: Int32 = -1
  var pending: [UInt8] = []
  var pushes: [[String: Any]] = []

  init(_ server: ControlServer, _ console: Console) {
    self.server = server
    self.console = console
    var pair: [Int32] = [0, 0]
    if socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 {
      fd = pair[0]
      server.adopt(pair[1])
    }
  }
  deinit { if fd >= 0 { close(fd) } }

  /// Serves one step and keeps what arrived: pushes aside, the first reply returned.
  func step() -> [String: Any]? {
    server.service(console)
    var buffer = [UInt8](repeating: 0, count: 65536)
    let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
    if n > 0 { pending += buffer[..<n] }
    var reply: [String: Any]?
    while let end = pending.firstIndex(of: 10) {
      let line = Array(pending[..<end])
      pending.removeSubrange(...end)
      guard let o = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else { continue }
      if o["push"] != nil { pushes.append(o) } else if reply == nil { reply = o }
    }
    return reply
  }

  func ask(_ request: [String: Any]) throws -> [String: Any] {
    let line = Array((ControlServer.encode(request) + "\n").utf8)
    #expect(line.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) } == line.count)
    for _ in 0..<500 {
      if let r = step() { return r }
      usleep(2000)
    }
    throw CommandError("no reply to \(request)")
  }

  /// The `mixChanged` pushes received so far (after one more step).
  func mixChanges() -> Int {
    _ = step()
    return pushes.filter { $0["event"] as? String == "mixChanged" }.count
  }
}

extension WebSurfaceTests {
  @Test("a subscriber of events hears mixChanged once per change from anyone (a client, the console, the cue), never for a query")
  func mixChangedIsPushed() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let server = ControlServer(adopting: .web)
    defer { server.close() }
    let page = PairClient(server, h.console), other = PairClient(server, h.console)
    #expect(try page.ask(["id": 1, "subscribe": ["events"]])["ok"] as? Bool == true)
    #expect(page.mixChanges() == 0)
    var seen = 0
    // Queries change nothing: no push.
    for cmd in ["stems; status; scene list", "sends", "cue"] { #expect(try other.ask(["id": 2, "cmd": cmd])["ok"] as? Bool == true) }
    #expect(page.mixChanges() == 0, "\(page.pushes)")
    // Another client's move, the console's own command, a scene, a send, the cue: one push each.
    for change in ["vol drums -3dB", "console: mute bass", "scene save a", "send add verb", "send drums verb -12dB pre", "cue drums"] {
      if change.hasPrefix("console: ") {
        #expect(h.run(String(change.dropFirst("console: ".count))).ok)
      } else {
        let r = try other.ask(["id": 3, "cmd": change])
        #expect(r["ok"] as? Bool == true, "\(change): \(r)")
      }
      #expect(page.mixChanges() == seen + 1, "\(change): \(page.pushes)")
      seen += 1
    }
    let push = try #require(page.pushes.last)
    #expect(push["class"] as? String == "mixer" && push["changes"] is Int && push["song"] is NSNull, "\(push)")
    // The data a page builds its sends and cue from: in `stems` (the whole mix in one reply) and on their own.
    let r = try other.ask(["id": 4, "cmd": "stems; cue; sends"])
    let sends = try #require(r["sends"] as? [[String: Any]], "\(r)")
    let drums = (sends.first?["levels"] as? [String: Any])?["drums"] as? [String: Any]
    #expect(sends.first?["name"] as? String == "verb" && drums?["pre"] as? Bool == true, "\(r)")
    #expect(abs((drums?["db"] as? Double ?? 0) + 12) < 0.01, "\(r)")
    #expect((r["cues"] as? [[String: Any]])?.first?["tap"] as? String == "pfl", "\(r)")
    // A client that is not subscribed hears nothing.
    #expect(!other.pushes.contains { $0["event"] as? String == "mixChanged" })
  }
}

extension WebSurfaceTests {
  @Test("the values topic on the socket: every value on subscribing, then only what changed, at the OSC address that sets it")
  func valuesArePushed() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let server = ControlServer(adopting: .web)
    defer { server.close() }
    let page = PairClient(server, h.console)
    #expect(try page.ask(["id": 1, "subscribe": ["values"]])["ok"] as? Bool == true)
    let all = try #require(page.pushes.first?["values"] as? [String: Double], "\(page.pushes)")
    #expect(all["/stemdeck/stem/drums/vol"] == 0 && all["/stemdeck/stem/bass/mute"] == 0 && all["/stemdeck/stem/bass/rate"] == 1, "\(all)")
    #expect(all["/stemdeck/master/vol"].map { abs($0 - Decibels.fromAmplitude(h.mixer.master.volume)) < 1e-9 } == true)
    #expect(h.run("vol drums -6dB; mute bass").ok)
    _ = page.step()
    let changed = try #require(page.pushes.last?["values"] as? [String: Double], "\(page.pushes)")
    #expect(Set(changed.keys) == ["/stemdeck/stem/drums/vol", "/stemdeck/stem/bass/mute"], "\(changed)")
    #expect(abs((changed["/stemdeck/stem/drums/vol"] ?? 0) + 6) < 1e-9 && changed["/stemdeck/stem/bass/mute"] == 1)
    let count = page.pushes.count
    _ = page.step()
    #expect(page.pushes.count == count, "nothing changed: nothing pushed")
  }
}
