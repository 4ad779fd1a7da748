import Foundation
import StemdeckTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Issue 43 with the real binary: a remote `quit` during a script's `wait` (the natural headless
/// run) ends stemdeck, its unsaved changes in the autosave; `ctl` gives up on a stemdeck that
/// does not answer. In the control socket's suite (lane 'light': nothing here is timed).
extension ControlSocketTests {
  @Test("quit over the socket during a script's 'wait 600' exits at once, the unsaved change in the autosave; ctl is told so")
  func quitDuringAScriptsWait() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir("stemdeck-quit")
    try writeSine(dir.file("drums.wav"), sampleRate: 48000, seconds: 2, frequencies: [440])
    let session = dir.file("s.json")
    try writeSession(session, stems: [SessionStem(name: "drums", file: "drums.wav")])
    let socket = dir.file("c.sock")
    let stemdeck = try StemdeckProcess(server: server, session: session, extra: ["--control", socket, "-c", "play; wait 600"])
    defer { stemdeck.kill() }
    let ctl = try StemdeckBinary.require()
    let up = try await eventually(timeout: 20, interval: 0.05) {
      try await runTool(ctl, ["ctl", "--socket", socket, "echo up"], timeout: 20).status == 0
    }
    #expect(up, "the socket never answered\n\(stemdeck.transcript)")
    let r = try await runTool(ctl, ["ctl", "--socket", socket, "vol drums -3dB; quit"], timeout: 20)
    #expect(r.status == 0, "\(r.text)")
    #expect(r.stdout.contains { $0.contains("unsaved changes written to") && $0.contains(".s.json.autosave.json") }, "\(r.text)")
    let status = await stemdeck.child.waitForExit(timeout: 15)
    #expect(status == 0, "stemdeck did not leave its 'wait 600' on quit\n\(stemdeck.transcript)")
    #expect(FileManager.default.fileExists(atPath: dir.file(".s.json.autosave.json")))
  }

  @Test("ctl --timeout gives up on a socket that takes the connection but never answers: 'is busy', exit 2")
  func ctlTimeout() async throws {
    let dir = try IntegrationTempDir("stemdeck-busy")
    let path = dir.file("busy.sock")
    // A listener that never accepts: the connection waits in its backlog, no reply ever comes.
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      let bytes = Array(path.utf8)
      raw.copyBytes(from: bytes)
      raw[bytes.count] = 0
    }
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    #expect(bound == 0 && listen(fd, 4) == 0)
    let r = try await runTool(try StemdeckBinary.require(), ["ctl", "--socket", path, "--timeout", "0.5", "status"], timeout: 20)
    #expect(r.status == 2, "\(r.text)")
    #expect(r.stderr.contains { $0.contains("is busy: no answer to 'status' within 0.5 s") }, "\(r.text)")
  }
}
