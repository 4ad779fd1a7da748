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
    #expect(result.stderr.contains("warning: stem 'bad' (bad.wav) holds NaN or infinite samples: muted from 0:00.000 of the render"),
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
}
