// Hostile cases of `render` and `analyze SESSION` (issue 43, items 3, 9, 10, 13 and the --stems
// note): an output on an input, a stem file that is truncated or corrupt, a mix that overflows
// 32-bit float, a normalise target the ceiling cannot reach, stem files over existing ones. Each
// drives the real binary on files made here.
import Foundation
import StemdeckAudioFile
@testable import StemdeckConsole
import StemdeckTestSupport
import Testing
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

@Suite("render and analyze: hostile cases (issue 43)")
struct RenderHostileTests {
  /// Writes `name` as stereo `format` at 48 kHz, `samples(i)` in both channels for `frames` frames.
  func write(_ folder: TemporaryFolder, _ name: String, format: OutputFormat, frames: Int, _ samples: (Int) -> Float) throws {
    let writer = try SoundFileWriter(path: folder.file(name), format: format, sampleRate: 48000, channelCount: 2)
    let interleaved = (0..<frames).flatMap { i -> [Float] in
      let x = samples(i)
      return [x, x]
    }
    try interleaved.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frameCount: frames) }
    try writer.finish()
  }

  func session(_ folder: TemporaryFolder, _ name: String, stems: [String], inputs: [String] = []) throws {
    let stemList = stems.map { #"{ "name" : "\#(($0 as NSString).deletingPathExtension)", "file" : "\#($0)" }"# }
    let inputList = inputs.map { #"{ "name" : "\#($0)", "channels" : "stereo" }"# }
    try folder.write(
      """
      { "format" : "stemdeck-session", "version" : 3, "stems" : [ \(stemList.joined(separator: ", ")) ],
        "inputs" : [ \(inputList.joined(separator: ", ")) ] }
      """, to: name)
  }

  /// The folder's entries but the runs' own .stdout and .stderr.
  func visible(_ folder: TemporaryFolder) -> [String] { folder.entries().filter { !$0.hasPrefix(".") }.sorted() }

  func sine(_ amplitude: Double, _ frequency: Double = 440) -> (Int) -> Float {
    { i in Float(amplitude * sin(2 * Double.pi * frequency * Double(i) / 48000)) }
  }

  /// Item 3: an output (the master, a stem file) that is an --input's file, by the same name, a
  /// hard link or a symbolic link, is refused before anything is written: exit 1, an error naming
  /// both, the recording untouched, no other file made.
  @Test("an output that is an --input's file (same name, hard link, symbolic link, a --stems file) is refused; the input is untouched")
  func outputOnInput() throws {
    let folder = try TemporaryFolder()
    try write(folder, "tone.wav", format: .wavFloat, frames: 48000, sine(0.3))
    try write(folder, "mic.wav", format: .wavFloat, frames: 48000, sine(0.2, 300))
    try session(folder, "song.json", stems: ["tone.wav"], inputs: ["mic"])
    try FileManager.default.createDirectory(atPath: folder.file("st"), withIntermediateDirectories: false)
    try FileManager.default.copyItem(atPath: folder.file("mic.wav"), toPath: folder.file("st/mic.wav"))
    try FileManager.default.linkItem(atPath: folder.file("mic.wav"), toPath: folder.file("hard.wav"))
    try FileManager.default.createSymbolicLink(atPath: folder.file("soft.wav"), withDestinationPath: "mic.wav")
    let recording = try #require(FileFacts.bytes(folder.file("mic.wav")))
    let before = visible(folder)
    for output in ["mic.wav", "hard.wav", "soft.wav", "./mic.wav"] {
      let r = try runBinary(["render", "song.json", "-o", output, "--input", "mic=mic.wav"], in: folder)
      #expect(r.status == 1, "\(output): \(r.stdout) \(r.stderr)")
      #expect(
        r.stderr.contains {
          $0.hasPrefix("error: \(output): is the file of --input mic=mic.wav") && $0.contains("never writes over its own inputs")
        },
        "\(output): \(r.stderr)")
    }
    let stems = try runBinary(["render", "song.json", "-o", "out.wav", "--stems", "st", "--input", "mic=st/mic.wav"], in: folder)
    #expect(stems.status == 1, "\(stems.stdout) \(stems.stderr)")
    #expect(
      stems.stderr.contains { $0.hasPrefix("error: --stems st: st/mic.wav: is the file of --input mic=st/mic.wav") },
      "\(stems.stderr)")
    #expect(FileFacts.bytes(folder.file("mic.wav")) == recording, "the recording is untouched")
    #expect(FileFacts.bytes(folder.file("st/mic.wav")) == recording, "the copy in st is untouched")
    #expect(visible(folder) == before, "nothing was written: \(visible(folder))")
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.file("st")) == ["mic.wav"])
  }

  /// A FLAC stem cut short: `keep` bytes of a 2 s file, or only its header (the metadata blocks,
  /// no audio frame): its STREAMINFO still declares 96,000 frames.
  func truncatedFlac(_ folder: TemporaryFolder, headerOnly: Bool) throws {
    try write(folder, "full.flac", format: .flac, frames: 96000, sine(0.5))
    let bytes = try #require(FileFacts.bytes(folder.file("full.flac")))
    var end = 4
    if headerOnly {
      // fLaC, then metadata blocks (1 byte: last flag and type; 3 bytes: length) up to the first frame.
      while true {
        let last = bytes[end] & 0x80 != 0
        end += 4 + (Int(bytes[end + 1]) << 16 | Int(bytes[end + 2]) << 8 | Int(bytes[end + 3]))
        if last { break }
      }
    } else {
      end = bytes.count / 3
    }
    try Data(bytes[..<end]).write(to: URL(fileURLWithPath: folder.file("cut.flac")))
  }

  /// Item 9: a truncated or header-only FLAC stem is an error naming the stem, its file and where
  /// it ends (as live mode reports it), for render (no file written) and analyze alike.
  @Test(
    "a truncated or header-only FLAC stem: render and analyze exit 1 naming the stem, the file and where it ends; nothing written",
    arguments: [false, true])
  func truncatedStem(headerOnly: Bool) throws {
    let folder = try TemporaryFolder()
    try truncatedFlac(folder, headerOnly: headerOnly)
    try session(folder, "song.json", stems: ["cut.flac"])
    let render = try runBinary(["render", "song.json", "-o", "out.wav"], in: folder)
    #expect(render.status == 1, "\(render.stdout) \(render.stderr)")
    // Cut mid-file: where reading stopped; header only: libsndfile cannot even seek to frame 0.
    let said = render.stderr.first {
      $0.hasPrefix(
        "error: song.json: stem 'cut' (cut.flac) cannot be read: "
          + (headerOnly ? "cannot seek to frame 0: " : "the file ends at frame "))
    }
    #expect(said?.contains("96000") == true && said?.contains("truncated, corrupt, or replaced while playing") == true, "\(render.stderr)")
    #expect(!FileManager.default.fileExists(atPath: folder.file("out.wav")), "no file is written")
    #expect(!render.stdout.contains { $0.hasPrefix("rendered ") }, "\(render.stdout)")
    let analyze = try runBinary(["analyze", "song.json"], in: folder)
    #expect(analyze.status == 1, "\(analyze.stdout) \(analyze.stderr)")
    #expect(analyze.stderr.contains { $0.hasPrefix("error: song.json: stem 'cut' (cut.flac) cannot be read: ") }, "\(analyze.stderr)")
    #expect(!analyze.stdout.contains { $0.hasPrefix("integrated loudness") }, "\(analyze.stdout)")
    #expect(visible(folder) == ["cut.flac", "full.flac", "song.json"], "\(folder.entries())")
  }

  /// Item 10: two stems whose samples are near the float maximum add up to infinity. The render
  /// is refused (no file with inf left behind), analyze reports an error, not figures.
  @Test("a mix that overflows 32-bit float: render and analyze exit 1 with an error saying so; no file written")
  func overflowingMix() throws {
    let folder = try TemporaryFolder()
    try write(folder, "huge.wav", format: .wavFloat, frames: 48000, sine(3e38))
    try folder.write(
      """
      { "format" : "stemdeck-session", "version" : 1,
        "stems" : [ { "name" : "a", "file" : "huge.wav" }, { "name" : "b", "file" : "huge.wav" } ] }
      """, to: "song.json")
    for arguments in [
      ["render", "song.json", "-o", "out.wav"], ["render", "song.json", "-o", "out.wav", "--stems", "st"], ["analyze", "song.json"]
    ] {
      let r = try runBinary(arguments, in: folder)
      #expect(r.status == 1, "\(arguments): \(r.stdout) \(r.stderr)")
      #expect(
        r.stderr.contains { $0.hasPrefix("error: song.json: the mix is not finite from 0:00.000 of the render") },
        "\(arguments): \(r.stderr)")
      #expect(!r.stdout.contains { $0.hasPrefix("integrated loudness") || $0.hasPrefix("peak L") }, "\(r.stdout)")
    }
    #expect(visible(folder) == ["huge.wav", "song.json"], "no file left behind: \(folder.entries())")
  }

  /// Item 13: a target the default ceiling cannot let through. The summary says what was reached
  /// (not "normalized to 0.0 LUFS"), the 16-bit file holds no sample at full scale, and the stem
  /// files, which follow the master's gain curve but not its peaks, are refused when they would
  /// clip.
  @Test("--normalize 0 --format wav16: the summary says the level reached, the file is not clipped; clipping stem files are refused")
  func unreachableTarget() throws {
    let folder = try TemporaryFolder()
    try write(folder, "tone.wav", format: .wavFloat, frames: 4 * 48000, sine(0.1))
    try session(folder, "song.json", stems: ["tone.wav"])
    let r = try runBinary(["render", "song.json", "-o", "out.wav", "--format", "wav16", "--normalize", "0"], in: folder)
    #expect(r.status == 0, "\(r.stderr)")
    #expect(!r.stdout.contains { $0.hasPrefix("normalized to 0.0 LUFS") }, "\(r.stdout)")
    #expect(
      r.stdout.contains {
        $0.hasPrefix("normalized to -1.")
          && $0.contains(
            " LUFS, not the 0.0 LUFS asked (the true-peak ceiling holds it down), true peak at most -1.0 dBTP (the default ceiling): ")
      },
      "\(r.stdout)")
    let file = try SoundFile(readingFrom: folder.file("out.wav"))
    var samples = [Float](repeating: 0, count: file.info.frameCount * 2)
    let got = samples.withUnsafeMutableBufferPointer { file.readFrames(into: $0.baseAddress!, frameCount: file.info.frameCount) }
    #expect(got == 4 * 48000)
    #expect(!samples.contains { abs($0) >= 32767.0 / 32768 }, "no sample at full scale")

    // Two stems nearly in antiphase: the master is quiet, so the gain is large, and each stem's
    // file would be far over full scale.
    try write(folder, "a.wav", format: .wavFloat, frames: 4 * 48000, sine(0.5))
    try write(folder, "b.wav", format: .wavFloat, frames: 4 * 48000, sine(-0.48))
    try session(folder, "pair.json", stems: ["a.wav", "b.wav"])
    let before = visible(folder)
    let stems = try runBinary(
      ["render", "pair.json", "-o", "pair.wav", "--format", "wav16", "--normalize", "-14", "--stems", "parts"], in: folder)
    #expect(stems.status == 1, "\(stems.stdout) \(stems.stderr)")
    #expect(
      stems.stderr.contains { $0.hasPrefix("error: --normalize: ") && $0.contains("samples of stem file 'a' over full scale") },
      "\(stems.stderr)")
    #expect(visible(folder) == before, "nothing written: \(folder.entries())")
  }

  /// Minor: --stems over files already in the folder replaces them, as --output does, and says
  /// which.
  @Test("--stems over existing files: they are replaced and a note names them")
  func stemsReplaceSaid() throws {
    let folder = try TemporaryFolder()
    try write(folder, "tone.wav", format: .wavFloat, frames: 48000, sine(0.3))
    try write(folder, "bass.wav", format: .wavFloat, frames: 48000, sine(0.3, 110))
    try session(folder, "song.json", stems: ["tone.wav", "bass.wav"])
    let first = try runBinary(["render", "song.json", "-o", "mix.wav", "--stems", "parts"], in: folder)
    #expect(first.status == 0, "\(first.stderr)")
    #expect(!first.stdout.contains { $0.hasPrefix("note: replaced") }, "\(first.stdout)")
    try FileManager.default.removeItem(atPath: folder.file("parts/bass.wav"))
    let again = try runBinary(["render", "song.json", "-o", "mix.wav", "--stems", "parts"], in: folder)
    #expect(again.status == 0, "\(again.stderr)")
    #expect(again.stdout.contains("note: replaced 1 file that was in parts: tone.wav"), "\(again.stdout)")
  }
}
