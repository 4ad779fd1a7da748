// Integration tests of `stemdeck render` as a command: its exit status, what it says on stderr,
// the files it writes. No JACK server is needed.

import Foundation
import StemdeckAudioFile
import Testing

@Suite("stemdeck render: exit status, warnings, output formats", .timeLimit(.minutes(2)))
struct RenderCommandTests {
  /// Issue 17: a stem whose float file holds NaN is muted and reported on stderr, and the render
  /// exits with status 3 (the file is written; 0 is kept for a clean render).
  @Test("a stem with NaN samples: muted, a warning on stderr names it and its file, exit status 3")
  func nanStemWarnsAndExits3() async throws {
    let binary = try StemdeckBinary.require()
    let dir = try IntegrationTempDir()
    try writeSine(dir.file("clean.wav"), sampleRate: 48000, seconds: 1, frequencies: [220], amplitude: 0.3)
    let frames = 48000
    var data = (0..<frames).map { Float(0.4 * sin(2 * Double.pi * 700 * Double($0) / 48000)) }
    data[1000] = .nan
    let writer = try SoundFileWriter(path: dir.file("bad.wav"), format: .wavFloat, sampleRate: 48000, channelCount: 1)
    try data.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frameCount: frames) }
    writer.flush()
    let session = dir.file("session.json")
    try writeSession(session, stems: [SessionStem(name: "clean", file: "clean.wav"), SessionStem(name: "bad", file: "bad.wav")])

    let output = dir.file("mix.wav")
    let result = try await runTool(binary, ["render", session, "--output", output], timeout: 60)
    #expect(result.status == 3, "\(result.text)")
    #expect(
      result.stderr.contains("warning: stem 'bad' (bad.wav) holds NaN or infinite samples: muted from 0:00.000 of the render"),
      "stderr: \(result.stderr)")
    #expect(result.stdout.contains { $0.hasPrefix("rendered ") }, "\(result.text)")
    // The file is complete, and the bad stem is not in it: only the clean one (mono, pan 0).
    let mix = try readAudio(output)
    #expect(mix.frames == frames)
    let g = cos(Double.pi / 4)
    var worst: Double = 0
    for f in 0..<frames {
      let expected = 0.3 * sin(2 * Double.pi * 220 * Double(f) / 48000) * g
      worst = max(worst, abs(Double(mix.sample(f, 0)) - expected), abs(Double(mix.sample(f, 1)) - expected))
    }
    #expect(worst < 1e-6, "the muted stem is heard (max error \(worst))")

    // Without the bad stem: exit status 0 and no warning.
    try writeSession(session, stems: [SessionStem(name: "clean", file: "clean.wav")])
    let clean = try await runTool(binary, ["render", session, "--output", output], timeout: 60)
    #expect(clean.status == 0, "\(clean.text)")
    #expect(!clean.stderr.contains { $0.hasPrefix("warning:") }, "\(clean.stderr)")
  }

  /// Issue 23: a render on a terminal shows a bar with the time left after its first second, on
  /// one line redrawn in place and erased before the summary; `--quiet` shows none. What reaches
  /// the terminal is logged byte for byte (tmux pipe-pane), so a bar drawn and erased is still seen.
  @Test("on a terminal: a progress bar with the time left, erased before the summary; --quiet: none", arguments: [false, true])
  func progressBarOnATerminal(quiet: Bool) async throws {
    let binary = try StemdeckBinary.require()
    let dir = try IntegrationTempDir()
    try writeSine(dir.file("tone.wav"), sampleRate: 48000, seconds: 1, frequencies: [440, 660])
    try writeSession(
      dir.file("long.json"),
      stems: [
        SessionStem(name: "tone", file: "tone.wav", loops: -1),
        SessionStem(name: "slow", file: "tone.wav", loops: -1, rate: 0.77)
      ])
    // Long enough to take well over a second in any build: 10 minutes of two stems, one resampled (about 3 s in a release build on a quiet 2-core machine).
    let command = "read go; '\(binary)' render long.json -o out.wav --duration 600\(quiet ? " --quiet" : ""); echo render-exit-$?; exec cat"
    let terminal = try await TmuxTerminal(command, columns: 100, rows: 20, directory: dir.path)
    defer { terminal.close() }
    let log = dir.file("terminal.log")
    try await terminal.tmux(["pipe-pane", "-o", "-t", terminal.session, "cat >> '\(log)'"])
    try await terminal.send("Enter")
    let finished = try await terminal.waitFor("render-exit-", timeout: 120)
    await terminal.check(finished, "the render did not finish")
    let screen = try await terminal.screen()
    #expect(screen.contains("render-exit-0"), "\(screen)")
    #expect(screen.contains { $0.hasPrefix("rendered out.wav: 10:00.000 at 48000 Hz, stereo") }, "\(screen)")
    #expect(!screen.contains { $0.contains(" left") || $0.contains("[#") }, "the bar is erased before the summary: \(screen)")
    // pipe-pane's cat may still be writing the last bytes: wait for the exit line in the log.
    var bytes = ""
    _ = await eventually(timeout: 10, interval: 0.05) {
      bytes = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
      return bytes.contains("render-exit-")
    }
    #expect(bytes.contains("render-exit-0"), "the terminal log holds everything shown")
    if quiet {
      #expect(!bytes.contains(" left") && !bytes.contains("%"), "--quiet draws no bar: \(bytes.prefix(400))")
    } else {
      let bars = bytes.components(separatedBy: "\r[").count - 1
      #expect(bars >= 2, "the bar is redrawn in place (\(bars) draws)")
      #expect(
        bytes.range(of: #"\] +[0-9]+%  writing, [0-9]+:[0-9]{2} left"#, options: .regularExpression) != nil,
        "the bar gives the percentage, the pass and its time left: \(bytes.prefix(400))")
      #expect(bytes.contains("\r\u{1B}[K"), "the bar's line is erased")
    }
  }
}
