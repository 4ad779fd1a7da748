import Foundation
import StemdeckTestSupport
import Testing

/// The web mixer (issue 40; docs/web.md) in a real browser: a stemdeck on a private jackd serving
/// `--http 0 --http-host 0.0.0.0` (so the token is needed), two headless Chromiums (a 390×844
/// phone and a 1280×800 desktop) and a raw WebSocket client (WebMixerScript.swift); then that
/// stemdeck is stopped and another started on the same port, and both pages find it.
@Suite("web mixer", .serialized, .timeLimit(.minutes(3)))
struct WebMixerTests {
  /// A stemdeck with the web mixer on `port` (0: any), its configuration (and token) in `dir`.
  static func start(
    _ server: PrivateJackServer, _ dir: IntegrationTempDir, port: Int, extra: [String] = []
  ) async throws -> (
    StemdeckProcess, port: Int, token: String
  ) {
    let stemdeck = try StemdeckProcess(
      server: server, session: dir.file("s.json"), extra: extra + ["--http", String(port), "--http-host", "0.0.0.0"],
      launcher: ["/usr/bin/env", "XDG_CONFIG_HOME=\(dir.path)"])
    for line in extra.contains("--control") ? Self.setup : [] { try await stemdeck.run(line) }
    try await stemdeck.run("play")
    _ = await eventually(timeout: 5) { stemdeck.stderrLines.contains { $0.hasPrefix("web mixer: ") } }
    // "web mixer: http://HOST:PORT/#token=TOKEN (the token is kept in …)"
    let line = try #require(stemdeck.stderrLines.first { $0.hasPrefix("web mixer: ") }, "no 'web mixer:' line\n\(stemdeck.transcript)")
    let address = line.split(separator: " ").dropFirst(2).first.map(String.init) ?? ""
    let parts = (address.split(separator: ":").last.map(String.init) ?? "").components(separatedBy: "/#token=")
    let bound = try #require(parts.count == 2 ? Int(parts[0]) : nil, "\(line)")
    return (stemdeck, bound, parts[1])
  }

  /// The first stemdeck's mix beyond its session: an aux send and an insert (swh's amp, exact
  /// gain in dB) on drums, for the page's send row and insert panel.
  static let setup = [
    "send add verb", "send drums verb -20dB", "insert add drums http://plugin.org.uk/swh-plugins/amp force"
  ]

  @Test("a fader dragged in one browser moves the stem and the other browser; mute, pan, stop, meters; refusals; reconnection")
  func browsersDriveTheMixer() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir("stemdeck-web")
    try writeSine(dir.file("drums.wav"), sampleRate: 48000, seconds: 2, frequencies: [440])
    try writeSine(dir.file("bass.wav"), sampleRate: 48000, seconds: 2, frequencies: [110])
    try writeSession(
      dir.file("s.json"),
      stems: [SessionStem(name: "drums", file: "drums.wav", volume: 0.5, loops: -1), SessionStem(name: "bass", file: "bass.wav", loops: -1)]
    )
    let socket = dir.file("c.sock")
    let (stemdeck, port, token) = try await Self.start(server, dir, port: 0, extra: ["--control", socket])
    defer { stemdeck.kill() }
    #expect(try String(contentsOfFile: dir.file("stemdeck/web-token"), encoding: .utf8).contains(token))

    let shots = FileManager.default.temporaryDirectory.appendingPathComponent("stemdeck-web-mixer").path
    try FileManager.default.createDirectory(atPath: shots, withIntermediateDirectories: true)
    try WebMixerScript.text.write(toFile: dir.file("browser.py"), atomically: true, encoding: .utf8)
    let started = ContinuousClock.now
    let py = try ChildProcess("/usr/bin/python3", ["-u", dir.file("browser.py"), String(port), token, shots, socket])
    defer { py.terminate(grace: 2) }
    func said(_ check: String, timeout: Double) async -> Bool {
      await eventually(timeout: timeout) { py.stdoutLines.contains { $0.contains("\"check\": \"\(check)\"") } || !py.isRunning }
        && py.stdoutLines.contains { $0.contains("\"check\": \"\(check)\"") }
    }
    let transcript = { (py.stdoutLines + py.stderrLines).joined(separator: "\n") }
    try #require(await said("restart-me", timeout: 90), "\(transcript())")

    // The mixer itself, asked over the control socket: drums at the level the fader was left at,
    // bass muted, drums' pan back at the centre, the transport stopped; the history says "web".
    let ctl = try await runTool(
      try StemdeckBinary.require(), ["ctl", "--socket", socket, "--json", "stems; status; history; insert list drums"], timeout: 20)
    var reply: [String: Any] = [:]  // one reply line a command: their data merged
    for l in ctl.stdout {
      if let o = try? JSONSerialization.jsonObject(with: Data(l.utf8)) as? [String: Any] { reply.merge(o) { $1 } }
    }
    stemdeck.kill()
    try #require(await said("lost", timeout: 20), "\(transcript())")
    let (second, _, sameToken) = try await Self.start(server, dir, port: port)
    defer { second.kill() }
    #expect(sameToken == token)
    #expect(await py.waitForExit(timeout: 60) == 0, "\(transcript())")
    print("web mixer: the browsers took \(ContinuousClock.now - started); screenshots in \(shots)/phone-390x844.png, desktop-1280x800.png")
    Self.judge(py.stdoutLines, transcript(), shots: shots)

    let stems = try #require(reply["stems"] as? [[String: Any]], "\(ctl.text)")
    let drums = try #require(stems.first { $0["name"] as? String == "drums" })
    let bass = try #require(stems.first { $0["name"] as? String == "bass" })
    let after = try #require(Self.facts(py.stdoutLines)["drag"]?["after"] as? Double)
    let volume = try #require(drums["volume"] as? Double)
    #expect(abs(20 * log10(volume) - after) < 0.05, "drums at \(volume), the page showed \(after) dB")
    #expect(bass["mute"] as? Bool == true && drums["pan"] as? Double == 0, "\(ctl.text)")
    #expect((reply["status"] as? [String: Any])?["state"] as? String == "stopped", "\(ctl.text)")
    // The send double-tapped to 0 dB and the insert's gain typed in the panel reached stemdeck.
    let verb = (reply["sends"] as? [[String: Any]])?.first { $0["name"] as? String == "verb" }
    let level = (verb?["levels"] as? [String: Any])?["drums"] as? [String: Any]
    #expect(level?["db"] as? Double == 0 && level?["pre"] as? Bool == false, "\(ctl.text)")
    let amp = (reply["inserts"] as? [[String: Any]])?.first
    #expect((amp?["values"] as? [String: Any])?["gain"] as? Double == -20, "\(ctl.text)")
    let history = reply["history"] as? [[String: Any]] ?? []
    #expect(history.contains { $0["source"] as? String == "web" }, "\(ctl.text)")
    // A drag's moves are one step of the history (UndoHistory.streams), and the pan dragged and
    // tapped back to the centre is none.
    #expect(history.filter { ($0["text"] as? String)?.hasPrefix("vol drums") == true }.count == 1, "\(ctl.text)")
    #expect(!history.contains { ($0["text"] as? String)?.hasPrefix("pan drums") == true }, "\(ctl.text)")
  }

  /// The script's findings, by check ("handshake NAME" for each handshake).
  static func facts(_ lines: [String]) -> [String: [String: Any]] {
    var found: [String: [String: Any]] = [:]
    for l in lines {
      guard let o = try? JSONSerialization.jsonObject(with: Data(l.utf8)) as? [String: Any], let check = o["check"] as? String else {
        continue
      }
      found[check == "handshake" ? "handshake " + (o["name"] as? String ?? "") : check] = o
    }
    return found
  }

  static func judge(_ lines: [String], _ transcript: String, shots: String) {
    let found = facts(lines)
    func fact(_ check: String, _ key: String) -> Any? { found[check]?[key] }
    // Refusals: a foreign Origin, a wrong or missing token never open; an oversized message closes (1009).
    for name in ["foreign origin", "wrong token", "no token"] {
      #expect((fact("handshake " + name, "status") as? String)?.hasPrefix("HTTP/1.0 403") == true, "\(name): \(transcript)")
    }
    #expect((fact("handshake right token", "status") as? String)?.hasPrefix("HTTP/1.1 101") == true, "\(transcript)")
    #expect(fact("oversized", "opcode") as? Int == 8 && fact("oversized", "code") as? Int == 1009, "\(transcript)")
    // Both browsers connected; meters arrive and move while playing.
    #expect(fact("connected", "phone") as? Bool == true && fact("connected", "desk") as? Bool == true, "\(transcript)")
    #expect(fact("meters", "moving") as? Bool == true && fact("meters", "peak") is Double, "\(transcript)")
    // The drag: the fader moved down, the other browser shows the same level, the stem's meter
    // (post-fader) fell by as much.
    let before = fact("drag", "before") as? Double ?? 0
    let after = fact("drag", "after") as? Double ?? 0
    #expect(after < before - 3, "the drag did not move the fader down: \(transcript)")
    #expect(fact("drag", "desk") is Double, "the other browser did not follow: \(transcript)")
    #expect(fact("drag", "settled") as? Bool == true, "the meter did not follow the fader: \(transcript)")
    #expect(fact("mute", "phoneSees") as? Bool == true && fact("pan", "centred") as? Bool == true, "\(transcript)")
    #expect(fact("pan", "deskSees") is String, "\(transcript)")
    #expect(fact("stopped", "silent") as? Bool == true, "\(transcript)")
    // A change over the control socket came by the push; the send and the insert from the page.
    #expect(fact("push", "seen") as? Bool == true && fact("push", "reason") as? String == "push", "\(transcript)")
    #expect(fact("send", "phoneSees") as? String == "verb 0", "\(transcript)")
    // The phone's page is as wide as the phone: the strips scroll inside it, nothing widens it.
    #expect(fact("fits", "width") as? Int == 390, "\(transcript)")
    #expect(fact("insert", "heard") as? Bool == true && fact("insert", "label") as? String == "-20", "\(transcript)")
    // Stemdeck gone: both pages say so; another on the port: both reconnect and show its drums
    // at the session's -6 dB, not the level the first one was left at.
    #expect(fact("lost", "both") as? Bool == true && (fact("lost", "text") as? String)?.contains("reconnecting") == true, "\(transcript)")
    #expect(fact("back", "both") as? Bool == true, "\(transcript)")
    #expect(abs((fact("back", "drums") as? Double ?? 0) + 6.02) < 0.05, "\(transcript)")
    #expect(FileManager.default.fileExists(atPath: shots + "/phone-390x844.png"))
    #expect(FileManager.default.fileExists(atPath: shots + "/desktop-1280x800.png"))
    #expect(FileManager.default.fileExists(atPath: shots + "/phone-insert-390x844.png"))
  }
}
