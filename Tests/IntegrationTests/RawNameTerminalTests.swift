// Issue 16 in a real terminal (tmux): a file name that is not UTF-8 completed with Tab, added,
// listed, saved and rendered (item 29); Ctrl-C during `sfx wait` cancels the load (item 18).
import Foundation
import StemdeckTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Raw file names and cancelled loads at the REPL (issue 16)", .serialized, .timeLimit(.minutes(3)))
struct RawNameTerminalTests {
  /// Renames `from` to `folder` + "/" + `prefix` + raw `bytes` + `suffix`.
  static func rename(_ from: String, to folder: String, _ prefix: String, _ bytes: [UInt8], _ suffix: String) throws {
    let target = Array((folder + "/" + prefix).utf8) + bytes + Array(suffix.utf8)
    let result = (target.map { CChar(bitPattern: $0) } + [0]).withUnsafeBufferPointer { Glibc.rename(from, $0.baseAddress!) }
    guard result == 0 else { throw HarnessError("rename to a raw name failed: \(String(cString: strerror(errno)))") }
  }

  func start(_ dir: IntegrationTempDir, server: PrivateJackServer) async throws -> TmuxTerminal {
    let binary = try StemdeckBinary.require()
    let state = try IntegrationTempDir("stemdeck-raw-state")
    let command =
      "env XDG_STATE_HOME=\(state.path) JACK_DEFAULT_SERVER=\(server.name) NO_COLOR=1 JACK_NO_START_SERVER=1 "
      + "\(binary) show.json --server \(server.name) --no-start-server --no-connect --no-control"
    let term = try await TmuxTerminal(command, columns: 120, rows: 30, directory: dir.path)
    await term.check(try await term.waitForCursorRow("stemdeck>"), "no prompt: ")
    return term
  }

  @Test("29: Tab completes caf\\xe9.wav as caf\"\\xe9\".wav; it is added, listed escaped, saved as \\udbff\\udee9, and renders")
  func rawNameCompletedAndSaved() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir("stemdeck-raw")
    try writeSine(dir.file("tmp.wav"), sampleRate: 48000, seconds: 1, frequencies: [440], amplitude: 0.4)
    try Self.rename(dir.file("tmp.wav"), to: dir.path, "caf", [0xE9], ".wav")
    try writeSession(dir.file("show.json"), stems: [])
    let term = try await start(dir, server: server)
    defer { term.close() }

    try await term.type("add caf")
    try await term.send("Tab")
    await term.check(try await term.waitForCursorRow(#"stemdeck> add caf"\xe9".wav"#), "completion: ")
    try await term.type("as latin")
    try await term.send("Enter")
    await term.check(try await term.waitFor("added latin"), "add: ")
    try await term.type("stems")
    try await term.send("Enter")
    await term.check(try await term.waitForScreen { $0.contains { $0.hasPrefix("latin") && $0.contains(#"caf\xe9.wav"#) } }, "stems: ")
    try await term.type("save")
    try await term.send("Enter")
    await term.check(try await term.waitFor("saved "), "save: ")
    let text = try String(contentsOfFile: dir.file("show.json"), encoding: .utf8)
    #expect(text.contains(#""file" : "caf\udbff\udee9.wav""#), "\(text)")
    try await term.type("quit")
    try await term.send("Enter")

    // Rendered from the saved session: the stem is found and heard.
    let render = try await runTool(
      try StemdeckBinary.require(), ["render", dir.file("show.json"), "--output", dir.file("mix.wav")], timeout: 60)
    #expect(render.status == 0, "\(render.text)")
    let mix = try readAudio(dir.file("mix.wav"))
    #expect(mix.frames == 48000 && peakLevel(mix, channel: 0, frames: 0..<mix.frames) > 0.2, "\(render.text)")
  }

  @Test("a session and an output named with bytes that are not UTF-8, given on the command line, are the files named")
  func rawNamesOnTheCommandLine() async throws {
    let dir = try IntegrationTempDir("stemdeck-raw")
    try writeSine(dir.file("tone.wav"), sampleRate: 48000, seconds: 1, frequencies: [440], amplitude: 0.4)
    try writeSession(dir.file("tmp.json"), stems: [SessionStem(name: "tone", file: "tone.wav")])
    try Self.rename(dir.file("tmp.json"), to: dir.path, "sh", [0xFF], "w.json")
    // The shell passes the bytes as they are (printf's octal escapes): \377 in the session's
    // name, \376 in the output's.
    let script = #"exec "$0" render "$(printf '%s/sh\377w.json' "$1")" --output "$(printf '%s/mix\376.wav' "$1")" "$2""#
    let binary = try StemdeckBinary.require()
    let render = try await runTool("/bin/sh", ["-c", script, binary, dir.path, "--quiet"], timeout: 60)
    #expect(render.status == 0, "\(render.text)")
    let written = Array((dir.path + "/mix").utf8) + [0xFE] + Array(".wav".utf8)
    let moved = (written.map { CChar(bitPattern: $0) } + [0]).withUnsafeBufferPointer {
      Glibc.rename($0.baseAddress!, dir.file("mix.wav"))
    }
    #expect(moved == 0, "no output under the raw name: \(String(cString: strerror(errno)))")
    let mix = try readAudio(dir.file("mix.wav"))
    #expect(mix.frames == 48000 && peakLevel(mix, channel: 0, frames: 0..<mix.frames) > 0.2, "\(render.text)")

    // A raw name that names no file: the error names it with its byte escaped.
    let missing = #"exec "$0" render "$(printf '%s/n\377ne.json' "$1")" --output "$1/x.wav""#
    let failed = try await runTool("/bin/sh", ["-c", missing, binary, dir.path], timeout: 60)
    #expect(failed.status != 0)
    #expect(failed.text.contains(#"n\xffne.json: no such file"#), "\(failed.text)")
    #expect(!FileManager.default.fileExists(atPath: dir.file("x.wav")))
  }

  @Test("18: Ctrl-C during 'sfx wait' cancels the load: it says so, nothing is loaded, the prompt comes back at once")
  func ctrlCCancelsALoad() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir("stemdeck-raw")
    // 8 s of 64 channels at 768 kHz: many seconds of reading and conversion.
    try WAV.writeSparse(dir.file("wide.wav"), channels: 64, sampleRate: 768_000, seconds: 8)
    try writeSession(dir.file("show.json"), stems: [])
    let term = try await start(dir, server: server)
    defer { term.close() }

    try await term.type("sfx load wide wide.wav")
    try await term.send("Enter")
    await term.check(try await term.waitFor("loading effect wide"), "sfx load: ")
    try await term.type("sfx wait")
    try await term.send("Enter")
    #expect(try await term.waitForCursorRow(""))
    let pressed = monotonicSeconds()
    try await term.send("C-c")
    await term.check(
      try await term.waitFor("sfx wait: interrupted; cancelled loading 'wide' (nothing of it is loaded)", timeout: 5), "Ctrl-C: ")
    print("Ctrl-C during sfx wait: the prompt was back after \(twoDecimals(monotonicSeconds() - pressed)) s")
    #expect(try await term.waitForCursorRow("stemdeck>", timeout: 3))
    try await term.type("sfx")
    try await term.send("Enter")
    await term.check(try await term.waitFor("no effects loaded"), "sfx: ")
  }
}
