// `stemdeck analyze FILE…` (issue 37, item 9): audio files measured directly, end to end with the
// binary: the figures agree with `analyze SESSION` of the same audio, a mono file is one channel,
// samples at full scale are counted, several files make a table, --json a line each, and a file
// that cannot be measured is named while the others still are.
import Foundation
import StemdeckAudioFile
import StemdeckTestSupport
import Testing
@testable import StemdeckRemote
@testable import StemdeckLive

@Suite("analyze FILE: audio files measured directly")
struct AnalyzeFileTests {
  /// tone.wav: a 1 kHz stereo sine at -23 dBFS, 10 s, 16-bit (EBU Tech 3341's -23 LUFS case);
  /// tone.json plays it.
  func fixture() throws -> TemporaryFolder {
    let folder = try TemporaryFolder()
    try folder.wav("tone.wav", channels: 2, sampleRate: 48000, seconds: 10, frequency: 1000, amplitude: pow(10, -23.0 / 20))
    try folder.write(
      """
      { "format" : "stemdeck-session", "version" : 1, "stems" : [ { "name" : "tone", "file" : "tone.wav" } ] }
      """, to: "tone.json")
    return folder
  }

  func objects(_ lines: [String]) -> [[String: Any]] {
    lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
  }

  @Test("a WAV and the FLAC rendered from its session measure as the session does (-23.0 LUFS), and nothing is written")
  func matchesSession() throws {
    let folder = try fixture()
    let r = try runBinary(["analyze", "tone.wav"], in: folder)
    #expect(r.status == 0 && r.stderr == [], "\(r.stderr)")
    #expect(
      r.stdout == [
        "analyzed tone.wav: 0:10.000 at 48000 Hz, stereo, WAV 16-bit",
        "integrated loudness -23.0 LUFS",
        "loudness range 0.0 LU",
        "true peak -23.0 dBTP",
        "sample peak -23.0 dBFS",
        "samples at full scale 0"
      ], "\(r.stdout)")
    // The delivery case of the issue: a render to FLAC, then analyze the FLAC.
    let rendered = try runBinary(["render", "tone.json", "-o", "out.flac"], in: folder)
    #expect(rendered.status == 0, "\(rendered.stderr)")
    let before = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
    let flac = try runBinary(["analyze", "out.flac", "--json"], in: folder)
    let session = try runBinary(["analyze", "tone.json", "--json"], in: folder)
    #expect(flac.status == 0 && session.status == 0, "\(flac.stderr) \(session.stderr)")
    let f = try #require(objects(flac.stdout).first, "\(flac.stdout)")
    let s = try #require(objects(session.stdout).first, "\(session.stdout)")
    #expect(f["file"] as? String == "out.flac" && f["format"] as? String == "FLAC" && f["bits"] as? Int == 24, "\(f)")
    #expect(s["session"] as? String == "tone.json" && s["seconds"] as? Double == 10, "\(s)")
    for key in ["integrated", "truePeak", "samplePeak"] {
      let a = try #require(f[key] as? Double, "\(key): \(f)"), b = try #require(s[key] as? Double, "\(key): \(s)")
      #expect(abs(a - b) <= 0.01 && abs(a + 23) <= 0.05, "\(key): file \(a), session \(b)")
    }
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == before, "analyze writes nothing")
  }

  @Test("a mono file is one channel (-26.0 LUFS for a -23 dBFS sine); samples at full scale are counted, NaN is said")
  func monoAndFullScale() throws {
    let folder = try TemporaryFolder()
    try folder.wav("mono.wav", channels: 1, sampleRate: 44100, seconds: 5, frequency: 1000, amplitude: pow(10, -23.0 / 20))
    let mono = try runBinary(["analyze", "mono.wav"], in: folder)
    #expect(mono.stdout.first == "analyzed mono.wav: 0:05.000 at 44100 Hz, mono, WAV 16-bit", "\(mono.stdout)")
    #expect(mono.stdout.contains("integrated loudness -26.0 LUFS"), "\(mono.stdout)")
    // A sine at 1.2 written to 16 bits is clipped at ±32767: those samples are counted.
    try folder.wav("hot.wav", channels: 2, sampleRate: 48000, seconds: 1, frequency: 997, amplitude: 1.2)
    var clipped = 0
    for i in 0..<48000 where abs(1.2 * sin(2 * Double.pi * 997 * Double(i) / 48000)) >= 1 { clipped += 2 }
    let hot = try runBinary(["analyze", "hot.wav"], in: folder)
    #expect(hot.status == 0)
    #expect(clipped > 1000 && hot.stdout.last == "samples at full scale \(clipped) (clipped?)", "\(clipped): \(hot.stdout)")
    // A float file: samples past 1.0 count, and a NaN is measured as silence and said.
    var samples = [Float](repeating: 0.25, count: 2 * 4800)
    samples[100] = 1.5
    samples[101] = -1
    samples[200] = .nan
    let writer = try SoundFileWriter(path: folder.file("float.wav"), format: .wavFloat, sampleRate: 48000, channelCount: 2)
    try samples.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frameCount: 4800) }
    try writer.finish()
    let float = try runBinary(["analyze", "float.wav"], in: folder)
    #expect(float.status == 0)
    #expect(float.stdout.first == "analyzed float.wav: 0:00.100 at 48000 Hz, stereo, WAV", "\(float.stdout)")
    #expect(float.stdout.contains("sample peak 3.5 dBFS") && float.stdout.last == "samples at full scale 2 (clipped?)", "\(float.stdout)")
    #expect(float.stderr == ["warning: float.wav: 1 samples are NaN or infinite; measured as silence"], "\(float.stderr)")
  }

  @Test("several files: a table, one row each in order; a missing and a non-audio file are named, the rest measured, exit 1")
  func table() throws {
    let folder = try fixture()
    try folder.wav("quiet file.wav", channels: 1, sampleRate: 48000, seconds: 2, frequency: 1000, amplitude: pow(10, -40.0 / 20))
    try folder.write("not audio at all\n", to: "notes.wav")
    let r = try runBinary(["analyze", "tone.wav", "missing.flac", "notes.wav", "quiet file.wav"], in: folder)
    #expect(r.status == 1)
    #expect(r.stderr.count == 2, "\(r.stderr)")
    #expect(r.stderr.first == "error: missing.flac: no such file", "\(r.stderr)")
    #expect(r.stderr.last?.hasPrefix("error: notes.wav: not a readable audio file (") == true, "\(r.stderr)")
    try #require(r.stdout.count == 3, "\(r.stdout)")
    let header = r.stdout[0]
    #expect(header.hasPrefix("integrated") && header.hasSuffix("  file"), "\(header)")
    #expect(r.stdout[1].hasSuffix("  tone.wav") && r.stdout[1].contains("-23.0 LUFS"), "\(r.stdout)")
    #expect(r.stdout[2].hasSuffix("  quiet file.wav") && r.stdout[2].contains("-43.0 LUFS"), "\(r.stdout)")
    // The columns line up: each row's file name starts where the header's "file" does.
    let column = header.count - "file".count
    #expect(r.stdout[1].count - "tone.wav".count == column && r.stdout[2].count - "quiet file.wav".count == column, "\(r.stdout)")
  }

  @Test("--json: a line each, silence as null; a file that fails is a line with its error")
  func json() throws {
    let folder = try fixture()
    try folder.wav("silence.wav", channels: 2, sampleRate: 48000, seconds: 1, amplitude: 0)
    let r = try runBinary(["analyze", "tone.wav", "silence.wav", "gone.wav", "--json"], in: folder)
    #expect(r.status == 1)
    let o = objects(r.stdout)
    try #require(o.count == 3, "\(r.stdout)")
    #expect(o[0]["channels"] as? Int == 2 && o[0]["sampleRate"] as? Int == 48000 && o[0]["fullScaleSamples"] as? Int == 0, "\(o[0])")
    #expect(o[0]["frames"] as? Int == 480_000 && o[0]["range"] as? Double == 0, "\(o[0])")
    for key in ["integrated", "truePeak", "samplePeak"] { #expect(o[1][key] is NSNull, "\(key): \(o[1])") }
    #expect(o[2]["file"] as? String == "gone.wav" && o[2]["error"] as? String == "gone.wav: no such file", "\(o[2])")
  }

  @Test("a session's options with audio files, and a session with files, are usage errors (exit 2)")
  func usage() throws {
    let folder = try fixture()
    let cases: [([String], String)] = [
      (
        ["analyze", "tone.wav", "--from", "2"], "error: --from is for analyzing a session; an audio file is measured whole, at its own rate"
      ),
      (
        ["analyze", "tone.wav", "-r", "44100"],
        "error: --sample-rate is for analyzing a session; an audio file is measured whole, at its own rate"
      ),
      (["analyze", "tone.wav", "tone.json"], "error: analyze takes one session or audio files, not both ('tone.json' is a session)")
    ]
    for (arguments, error) in cases {
      let r = try runBinary(arguments, in: folder)
      #expect(r.status == 2 && r.stderr == [error] && r.stdout == [], "\(arguments): \(r.stderr)")
    }
  }
}
