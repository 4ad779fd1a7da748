// The web mixer's requests on the control thread: a WebSocket's socket pair adopted by a
// `ControlServer(adopting: .web)` is served as a control-socket client, with the web surface's
// ceiling (mix, transport, show).
import Foundation
@testable import StemdeckConsole
import Testing

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
