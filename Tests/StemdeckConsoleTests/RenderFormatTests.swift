// `render --format` and the output containers (issue 23): every format is read back with
// libsndfile and checked against the 32-bit float render of the same session, sample by sample
// for the lossless ones (to their quantisation step), by level and length for the lossy codecs.
// Also the progress line's text and `--quiet`.
import Foundation
import StemdeckAudioFile
@testable import StemdeckConsole
import StemdeckTestSupport
import Testing
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

@Suite("render: output formats, --format, progress")
struct RenderFormatTests {
  /// A folder with a 2 s stereo 440 Hz WAV at 0.5 and song.json playing it at 0.7.
  func fixture() throws -> TemporaryFolder {
    let folder = try TemporaryFolder()
    try folder.wav("tone.wav", channels: 2, sampleRate: 48000, seconds: 2, amplitude: 0.5)
    try folder.write(
      """
      { "format" : "stemdeck-session", "version" : 1,
        "stems" : [ { "name" : "tone", "file" : "tone.wav", "volume" : 0.7 } ] }
      """, to: "song.json")
    return folder
  }

  /// Every interleaved sample of a file, and what libsndfile says of it.
  func read(_ path: String) throws -> (samples: [Float], info: SoundFileInfo) {
    let file = try SoundFile(readingFrom: path)
    let info = file.info
    var samples = [Float](repeating: 0, count: max(info.frameCount, 1) * info.channelCount)
    let got = samples.withUnsafeMutableBufferPointer { file.readFrames(into: $0.baseAddress!, frameCount: info.frameCount) }
    return (Array(samples.prefix(got * info.channelCount)), info)
  }

  func rms(_ x: ArraySlice<Float>) -> Double {
    (x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(x.count, 1))).squareRoot()
  }

  /// (output name, --format or nil, container libsndfile reports, integer bits or nil).
  static let lossless: [(String, String?, String, Int?)] = [
    ("a.wav", nil, "WAV", nil), ("b.wav", "wav16", "WAV", 16), ("c.wav", "wav24", "WAV", 24),
    ("d.wav", "wav32", "WAV", 32), ("e.flac", "flac16", "FLAC", 16), ("f.flac", nil, "FLAC", 24),
    ("g.aiff", "aiff16", "AIFF", 16), ("h.aif", nil, "AIFF", 24)
  ]

  @Test(
    "lossless formats: each holds the float mix on its own bit depth's grid, within half a step (16-bit: its TPDF dither too)",
    arguments: lossless)
  func losslessFormats(_ output: String, _ format: String?, _ container: String, _ bits: Int?) throws {
    let folder = try fixture()
    let reference = try runBinary(["render", "song.json", "-o", "ref.wav"], in: folder)
    #expect(reference.status == 0, "\(reference.stderr)")
    let r = try runBinary(["render", "song.json", "-o", output] + (format.map { ["--format", $0] } ?? []), in: folder)
    #expect(r.status == 0, "\(r.stderr)")
    #expect(r.stdout.first == "rendered \(output): 0:02.000 at 48000 Hz, stereo", "\(r.stdout)")
    let ref = try read(folder.file("ref.wav")), out = try read(folder.file(output))
    #expect(out.info.formatName.uppercased().hasPrefix(container), "\(out.info.formatName)")
    #expect(out.info.frameCount == 96000 && out.info.channelCount == 2)
    #expect(out.samples.count == ref.samples.count)
    guard let bits else {
      #expect(out.samples == ref.samples, "float WAV is the mix itself")
      return
    }
    let step = 1 / Double(1 << (bits - 1))
    var offGrid = 0
    var largest = 0.0
    for (o, f) in zip(out.samples, ref.samples) {
      let q = Double(o) / step
      if abs(q - q.rounded()) > 1e-3 { offGrid += 1 }
      // Written as the nearest level to f·2^(b−1) (clipped), read back over 2^(b−1).
      largest = max(largest, abs(Double(o) - min(max(Double(f), -1), 1 - step)))
    }
    // 24 bits: floats read back exactly on the grid; 32 bits: a float's 24-bit mantissa holds
    // every step of the grid, so the check is that nothing moved beyond one step.
    if bits <= 24 { #expect(offGrid == 0, "\(offGrid) samples off the \(bits)-bit grid") }
    // Rounded to the nearest step: half a step at most; the 16-bit default TPDF dither (±1 step
    // before rounding) makes that 1.5 steps.
    #expect(largest <= (bits == 16 ? 1.5 : 0.5) * step * (1 + 1e-9), "largest difference \(largest / step) steps for \(bits) bits")
    #expect(largest > 0 || bits == 32, "a \(bits)-bit file is not the float mix itself")
  }

  @Test(
    "lossy formats: Ogg Vorbis and Opus keep the mix's level (±0.5 dB) and its length",
    arguments: [
      ("a.ogg", nil as String?), ("b.oga", "vorbis"), ("c.opus", nil), ("d", "opus")
    ])
  func lossyFormats(_ output: String, _ format: String?) throws {
    let folder = try fixture()
    #expect(try runBinary(["render", "song.json", "-o", "ref.wav"], in: folder).status == 0)
    let r = try runBinary(["render", "song.json", "-o", output] + (format.map { ["--format", $0] } ?? []), in: folder)
    #expect(r.status == 0, "\(r.stderr)")
    let ref = try read(folder.file("ref.wav")), out = try read(folder.file(output))
    #expect(out.info.formatName.uppercased().hasPrefix("OG"), "libsndfile names Ogg files OGG or OGA: \(out.info.formatName)")
    #expect(abs(out.info.frameCount - 96000) <= 960, "\(out.info.frameCount) frames")
    let a = rms(ref.samples[9600..<86400]), b = rms(out.samples[9600..<min(86400, out.samples.count)])
    #expect(abs(20 * log10(b / a)) < 0.5, "level \(20 * log10(b / a)) dB off")
  }

  @Test("bad --format choices and format conflicts: a clear error, nothing written")
  func badFormats() throws {
    let folder = try fixture()
    let cases: [([String], String)] = [
      (
        ["-o", "x.wav", "--format", "mp3"],
        "error: --format must be one of wav16, wav24, wav32, float, flac16, flac24, aiff16, aiff24, vorbis, opus (got 'mp3')"
      ),
      (
        ["-o", "x.wav", "--format", "flac16"],
        "error: x.wav: --format flac16 writes 16-bit FLAC, which does not go in a .wav file (use a .flac file name)"
      ),
      (["-o", "x.mp3"], "error: x.mp3: unknown output format ('.mp3'): use a .wav, .flac, .aiff, .ogg or .opus file name, or --format"),
      (
        ["-o", "x.opus", "--sample-rate", "44100"],
        "error: x.opus: Opus files are 8000, 12000, 16000, 24000 or 48000 Hz, not 44100 Hz: render with --sample-rate 48000, or to another format"
      ),
      (
        ["-o", "x.ogg", "--dither"],
        "error: --dither is for integer outputs; x.ogg is Ogg Vorbis, a lossy codec that takes the float mix as it is"
      ),
      (
        ["-o", "x.wav", "--format", "wav32", "--dither"],
        "error: --dither is for 16- and 24-bit outputs; x.wav is 32-bit WAV, which holds every float sample of the mix exactly"
      )
    ]
    for (arguments, message) in cases {
      let r = try runBinary(["render", "song.json"] + arguments, in: folder)
      #expect(r.status != 0, "\(arguments)")
      #expect(r.stderr == [message], "\(arguments)")
    }
    let left = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix("x") }
    #expect(left == [], "nothing written: \(left)")
    let analyze = try runBinary(["analyze", "song.json", "--format", "wav16"], in: folder)
    #expect(analyze.stderr == ["error: analyze writes no file, so it takes no --format"])
  }

  @Test("progress line: bar, percentage and the time left scaled from the time spent")
  func progressLine() {
    #expect(RenderProgress.line(fraction: 0.25, elapsed: 3, width: 8) == "[##......]  25%  0:09 left")
    #expect(RenderProgress.line(fraction: 0.5, elapsed: 45, width: 4) == "[##..]  50%  0:45 left")
    #expect(RenderProgress.line(fraction: 0.001, elapsed: 1, width: 4) == "[....]   0%  --:-- left")
    #expect(RenderProgress.line(fraction: 1, elapsed: 7, width: 4) == "[####] 100%  0:00 left")
    #expect(RenderProgress.line(fraction: 0.01, elapsed: 40, width: 4) == "[....]   1%  1:06:00 left")
    #expect(RenderProgress.line(fraction: .nan, elapsed: 1, width: 2) == "[..]   0%  --:-- left")
    // A pass: the bar is of the whole, the time left the pass's (3 s for a quarter of its half).
    #expect(
      RenderProgress.line(fraction: 0.625, elapsed: 3, width: 8, pass: "writing", span: 0.5...1)
        == "[#####...]  62%  writing, 0:09 left")
    #expect(
      RenderProgress.line(fraction: 0.5, elapsed: 2, width: 4, pass: "limiter pass 1", span: 0.5...0.625)
        == "[##..]  50%  limiter pass 1, --:-- left")
  }

  @Test("progress: nothing in the first second, then at most ten redraws a second; nothing when disabled")
  func progressPacing() {
    final class Clock: @unchecked Sendable { var now = 100.0 }
    let clock = Clock()
    let bar = RenderProgress(enabled: true, clock: { clock.now })
    bar.update(0.1)
    #expect(!bar.shown, "a render shorter than a second shows no bar")
    clock.now += 1
    bar.update(0.2)
    #expect(bar.shown)
    let drawn = bar.lastDraw
    clock.now += 0.05
    bar.update(0.3)
    #expect(bar.lastDraw == drawn, "no redraw within 0.1 s")
    clock.now += 0.06
    bar.update(0.4)
    #expect(bar.lastDraw > drawn)
    let quiet = RenderProgress(enabled: false, clock: { clock.now })
    clock.now += 5
    quiet.update(0.5)
    #expect(!quiet.shown)
  }

  @Test("--quiet is accepted by render and analyze, refused elsewhere")
  func quietFlag() throws {
    #expect(try Arguments.parse(["render", "s.json", "-o", "x.wav", "--quiet"]).quiet)
    #expect(try Arguments.parse(["analyze", "s.json", "-q"]).quiet)
    #expect(throws: CommandError.self) { try Arguments.parse(["s.json", "--quiet"]) }
  }

  @Test("render --stems says what each file holds: a bus, an input silent without --input, a fed aux return in no file")
  func stemFilesSummary() throws {
    let folder = try TemporaryFolder()
    try folder.wav("drums.wav", channels: 2, sampleRate: 48000, seconds: 1, amplitude: 0.3)
    try folder.wav("bass.wav", channels: 1, sampleRate: 48000, seconds: 1, amplitude: 0.3)
    try folder.wav("wet.wav", channels: 2, sampleRate: 48000, seconds: 1, amplitude: 0.1)
    try folder.write(
      """
      { "format" : "stemdeck-session", "version" : 3,
        "sends" : [ { "name" : "verb" } ],
        "buses" : [ { "name" : "grp" } ],
        "inputs" : [ { "name" : "mic", "channels" : "mono" }, { "name" : "gtr", "channels" : "stereo" } ],
        "stems" : [ { "name" : "drums", "file" : "drums.wav", "bus" : "grp", "sends" : [ { "to" : "verb", "level" : 0.5 } ] },
                    { "name" : "bass", "file" : "bass.wav" } ] }
      """, to: "band.json")
    let r = try runBinary(
      ["render", "band.json", "-o", "mix.wav", "--stems", "stems", "--input", "gtr=wet.wav", "--input", "verb_return=wet.wav"],
      in: folder)
    #expect(r.status == 0, "\(r.stderr)")
    #expect(
      r.stdout.contains("stems: 4 files in stems: bass, grp (bus), mic (input, silent: no --input mic=FILE), gtr (input)"),
      "\(r.stdout)")
    #expect(
      r.stdout.contains(
        "note: aux send 'verb''s return (--input verb_return=…) is in the master but in no stem file: the stem files sum to the master without it"
      ), "\(r.stdout)")
    let files = try FileManager.default.contentsOfDirectory(atPath: folder.file("stems")).sorted()
    #expect(files == ["bass.wav", "grp.wav", "gtr.wav", "mic.wav"], "\(files)")
  }
}
