import Foundation
import StemdeckTestSupport
import Testing

/// The web mixer (issue 40; docs/web.md) in a real browser: one stemdeck on a private jackd
/// serving `--http 0 --http-host 0.0.0.0` (so the token is needed), two headless Chromiums (a
/// 390×844 phone and a 1280×800 desktop) and a raw WebSocket client (WebMixerScript.swift).
@Suite("web mixer", .serialized, .timeLimit(.minutes(2)))
struct WebMixerTests {
  @Test("a fader dragged in one browser moves the stem and the other browser; mute, pan, stop and the meters follow; refusals")
  func browsersDriveTheMixer() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir("stemdeck-web")
    try writeSine(dir.file("drums.wav"), sampleRate: 48000, seconds: 2, frequencies: [440])
    try writeSine(dir.file("bass.wav"), sampleRate: 48000, seconds: 2, frequencies: [110])
    let session = dir.file("s.json")
    try writeSession(
      session,
      stems: [SessionStem(name: "drums", file: "drums.wav", volume: 0.5, loops: -1), SessionStem(name: "bass", file: "bass.wav", loops: -1)]
    )
    let socket = dir.file("c.sock")
    // The token is made in this test's own configuration folder.
    let stemdeck = try StemdeckProcess(
      server: server, session: session, extra: ["--control", socket, "--http", "0", "--http-host", "0.0.0.0"],
      launcher: ["/usr/bin/env", "XDG_CONFIG_HOME=\(dir.path)"])
    defer { stemdeck.kill() }
    try await stemdeck.run("play")
    let announced = await eventually(timeout: 5) { stemdeck.stderrLines.contains { $0.hasPrefix("web mixer: ") } }
    let line = try #require(stemdeck.stderrLines.first { $0.hasPrefix("web mixer: ") }, "no 'web mixer:' line\n\(stemdeck.transcript)")
    #expect(announced)
    let address = try #require(line.split(separator: " ").dropFirst(2).first.map(String.init))
    let portAndToken = try #require(address.split(separator: ":").last, "\(line)")
    let parts = portAndToken.components(separatedBy: "/#token=")
    let port = try #require(parts.count == 2 ? Int(parts[0]) : nil, "\(line)")
    let token = parts[1]
    #expect(try String(contentsOfFile: dir.file("stemdeck/web-token"), encoding: .utf8).contains(token))

    let shots = FileManager.default.temporaryDirectory.appendingPathComponent("stemdeck-web-mixer").path
    try FileManager.default.createDirectory(atPath: shots, withIntermediateDirectories: true)
    try WebMixerScript.text.write(toFile: dir.file("browser.py"), atomically: true, encoding: .utf8)
    let started = ContinuousClock.now
    let browsers = try await runTool("/usr/bin/python3", [dir.file("browser.py"), String(port), token, shots], timeout: 90)
    print("web mixer: the browsers took \(ContinuousClock.now - started); screenshots in \(shots)/phone-390x844.png, desktop-1280x800.png")
    #expect(browsers.status == 0, "\(browsers.text)")
    var found: [String: [String: Any]] = [:]
    for l in browsers.stdout {
      guard let o = try? JSONSerialization.jsonObject(with: Data(l.utf8)) as? [String: Any], let check = o["check"] as? String else {
        continue
      }
      found[check == "handshake" ? "handshake " + (o["name"] as? String ?? "") : check] = o
    }
    func fact(_ check: String, _ key: String) -> Any? { found[check]?[key] }
    // Refusals: a foreign Origin, a wrong or missing token never open; an oversized message closes (1009).
    for name in ["foreign origin", "wrong token", "no token"] {
      #expect((fact("handshake " + name, "status") as? String)?.contains("403") == true, "\(name): \(browsers.text)")
    }
    #expect((fact("handshake right token", "status") as? String)?.contains("101") == true, "\(browsers.text)")
    #expect(fact("oversized", "opcode") as? Int == 8 && fact("oversized", "code") as? Int == 1009, "\(browsers.text)")
    // Both browsers connected; meters arrive and move while playing.
    #expect(fact("connected", "phone") as? Bool == true && fact("connected", "desk") as? Bool == true, "\(browsers.text)")
    #expect(fact("meters", "moving") as? Bool == true && fact("meters", "peak") is Double, "\(browsers.text)")
    // The drag: the fader moved down, the other browser shows the same level, the stem's meter
    // (post-fader) fell by as much.
    let before = try #require(fact("drag", "before") as? Double, "\(browsers.text)")
    let after = try #require(fact("drag", "after") as? Double, "\(browsers.text)")
    #expect(after < before - 3, "the drag did not move the fader down: \(browsers.text)")
    #expect(fact("drag", "desk") is Double, "the other browser did not follow: \(browsers.text)")
    #expect(fact("drag", "settled") as? Bool == true, "the meter did not follow the fader: \(browsers.text)")
    #expect(fact("mute", "phoneSees") as? Bool == true && fact("pan", "centred") as? Bool == true, "\(browsers.text)")
    #expect(fact("pan", "deskSees") is String, "\(browsers.text)")
    #expect(fact("stopped", "silent") as? Bool == true, "\(browsers.text)")
    #expect(FileManager.default.fileExists(atPath: shots + "/phone-390x844.png"))
    #expect(FileManager.default.fileExists(atPath: shots + "/desktop-1280x800.png"))

    // The mixer itself, asked over the control socket: drums at the level the fader was left at,
    // bass muted, drums' pan back at the centre, the transport stopped; the history says "web".
    let ctl = try await runTool(try StemdeckBinary.require(), ["ctl", "--socket", socket, "--json", "stems; status; history"], timeout: 20)
    // One reply line a command: their data merged.
    var reply: [String: Any] = [:]
    for l in ctl.stdout {
      if let o = try? JSONSerialization.jsonObject(with: Data(l.utf8)) as? [String: Any] { reply.merge(o) { $1 } }
    }
    let stems = try #require(reply["stems"] as? [[String: Any]], "\(ctl.text)")
    let drums = try #require(stems.first { $0["name"] as? String == "drums" })
    let bass = try #require(stems.first { $0["name"] as? String == "bass" })
    let volume = try #require(drums["volume"] as? Double)
    #expect(abs(20 * log10(volume) - after) < 0.05, "drums at \(volume), the page showed \(after) dB")
    #expect(bass["mute"] as? Bool == true && drums["pan"] as? Double == 0, "\(ctl.text)")
    #expect((reply["status"] as? [String: Any])?["state"] as? String == "stopped", "\(ctl.text)")
    let history = reply["history"] as? [[String: Any]] ?? []
    #expect(history.contains { $0["source"] as? String == "web" }, "\(ctl.text)")
  }
}
