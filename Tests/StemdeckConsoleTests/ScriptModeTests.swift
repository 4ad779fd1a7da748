// End-to-end exit status and output of the real `stemdeck` binary in the modes that need no JACK
// server: render, --help, --version and argument errors. (Live script mode runs against a private
// jackd in IntegrationTests.)
import Foundation
import StemdeckTestSupport
import Testing
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

/// The `stemdeck` executable built next to this test bundle (`swift build --build-tests` and
/// `swift test` build it into the same folder).
let stemdeckBinary: String = {
  let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
  return URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent("stemdeck").path
}()

struct RunResult {
  var status: Int32
  var stdout: [String]
  var stderr: [String]
}

/// Runs the binary with `arguments` in `folder`, with a 60 s watchdog.
/// `executable` runs something else (e.g. prlimit) with `arguments`.
func runBinary(
  _ arguments: [String], in folder: TemporaryFolder, executable: String = stemdeckBinary,
  environment: [String: String] = [:]
) throws -> RunResult {
  // `swift test` builds every product, so the binary is beside the test bundle; a missing one is
  // a failure, never a silent skip.
  try #require(
    FileManager.default.isExecutableFile(atPath: stemdeckBinary),
    "no stemdeck binary at \(stemdeckBinary): build it first (swift build --product stemdeck)")
  let outPath = folder.file(".stdout"), errPath = folder.file(".stderr")
  let outcome = try runProcess(
    executable, arguments, directory: folder.path, environment: environment,
    stdout: outPath, stderr: errPath, timeout: 60)
  if outcome.timedOut { Issue.record("stemdeck \(arguments) timed out") }
  func lines(_ path: String) -> [String] {
    let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    if text.isEmpty { return [] }
    return text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).dropLast(text.hasSuffix("\n") ? 1 : 0)
  }
  return RunResult(status: outcome.status, stdout: lines(outPath), stderr: lines(errPath))
}

@Suite("stemdeck binary: exit status and output")
struct ScriptModeTests {
  /// A folder with drums.wav (stereo, 2 s) and song.json using it.
  func fixture(loops: Int = 0) throws -> TemporaryFolder {
    let folder = try TemporaryFolder()
    try folder.wav("drums.wav", channels: 2, sampleRate: 48000, seconds: 2, amplitude: 0.5)
    try folder.write(
      """
      {
        "format" : "stemdeck-session",
        "version" : 1,
        "stems" : [
          { "name" : "drums", "file" : "drums.wav", "volume" : 0.5, "loops" : \(loops) }
        ]
      }
      """, to: "song.json")
    return folder
  }

  @Test("render a good session: exit 0, prints what it rendered, writes the file")
  func renderGood() throws {
    let folder = try fixture()
    let r = try runBinary(["render", "song.json", "--output", "out.wav"], in: folder)
    #expect(r.status == 0)
    #expect(r.stderr == [])
    #expect(r.stdout.count == 2)
    #expect(r.stdout.first == "rendered out.wav: 0:02.000 at 48000 Hz, stereo")
    #expect(r.stdout.last?.hasPrefix("peak L -12.0 dB, R -12.0 dB; RMS L -15.1 dB, R -15.1 dB; clipped samples 0") == true, "\(r.stdout)")
    // 2 s of 32-bit float stereo: 768000 bytes of samples plus a header.
    let size = (try FileManager.default.attributesOfItem(atPath: folder.file("out.wav"))[.size] as? Int) ?? 0
    #expect((768_000...770_000).contains(size))
  }

  @Test("render with --duration, --sample-rate and FLAC output")
  func renderOptions() throws {
    let folder = try fixture(loops: -1)
    let r = try runBinary(["render", "song.json", "-o", "out.flac", "--duration", "500ms", "--sample-rate", "44100"], in: folder)
    #expect(r.status == 0)
    #expect(r.stdout.first == "rendered out.flac: 0:00.500 at 44100 Hz, stereo")
    #expect(FileManager.default.fileExists(atPath: folder.file("out.flac")))
  }

  @Test("render --from: a session saved mid-song renders from its position unless --from says otherwise, and says where it started")
  func renderFrom() throws {
    let folder = try fixture()
    let text = try String(contentsOfFile: folder.file("song.json"), encoding: .utf8)
    try text.replacingOccurrences(of: #""stems""#, with: #""position" : 1.5, "stems""#)
      .write(toFile: folder.file("song.json"), atomically: true, encoding: .utf8)
    let saved = try runBinary(["render", "song.json", "--output", "out.wav"], in: folder)
    #expect(saved.status == 0)
    #expect(saved.stdout.first == "rendered out.wav: 0:00.500 at 48000 Hz, stereo, from 0:01.500", "\(saved.stdout)")
    let start = try runBinary(["render", "song.json", "--output", "out.wav", "--from", "start"], in: folder)
    #expect(start.stdout.first == "rendered out.wav: 0:02.000 at 48000 Hz, stereo", "\(start.stdout)")
    let past = try runBinary(["render", "song.json", "--output", "out.wav", "--from", "0:03"], in: folder)
    #expect(past.status == 1)
    #expect(past.stderr == ["error: nothing to render: --from 0:03.000 is at or past the session's end (0:02.000)"], "\(past.stderr)")
  }

  /// (case, arguments, how the session is broken, fragments of the one stderr line).
  static let renderFailures: [(String, [String], @Sendable (String) -> String, [String])] = [
    (
      "bad field", ["render", "song.json", "-o", "out.wav"],
      { $0.replacingOccurrences(of: #""loops" : 0"#, with: #""loops" : 0, "pan" : 7"#) },
      ["error: song.json: stems[0].pan: ", "between -1 and 1", "(got 7)", "(line 5, column "]
    ),
    (
      "missing audio", ["render", "song.json", "-o", "out.wav"],
      { $0.replacingOccurrences(of: "drums.wav", with: "gone.wav") },
      ["error: song.json: stems[0] (drums).file: ", "gone.wav: no such file"]
    ),
    (
      "not JSON", ["render", "song.json", "-o", "out.wav"], { _ in "stems: [drums]\n" },
      ["error: song.json: invalid JSON: "]
    ),
    (
      "missing session", ["render", "nosuch.json", "-o", "out.wav"], { $0 },
      ["error: nosuch.json: no such file"]
    ),
    (
      "endless without --duration", ["render", "song.json", "-o", "out.wav"],
      { $0.replacingOccurrences(of: #""loops" : 0"#, with: #""loops" : -1"#) },
      ["error: song.json: a stem loops forever (loops -1), so the render needs --duration SECONDS"]
    ),
    (
      "unknown output format", ["render", "song.json", "-o", "out.mp3"], { $0 },
      ["error: out.mp3: unknown output format ('.mp3'): use a .wav, .flac, .aiff, .ogg or .opus file name, or --format"]
    ),
    (
      "zero duration", ["render", "song.json", "-o", "out.wav", "--duration", "0"], { $0 },
      ["error: --duration must be a number of seconds above 0 and at most 86400 (got 0)"]
    ),
    (
      "bad sample rate", ["render", "song.json", "-o", "out.wav", "-r", "1000"], { $0 },
      ["error: sample rate must be between 8000 and 384000 Hz (got 1000)"]
    ),
    (
      "missing output folder", ["render", "song.json", "-o", "nowhere/out.wav"], { $0 },
      ["error: nowhere/out.wav: the folder nowhere does not exist; make it first, or choose another --output"]
    ),
    (
      "output folder is a file", ["render", "song.json", "-o", "song.json/out.wav"], { $0 },
      ["error: song.json/out.wav: song.json is not a folder; choose another --output"]
    ),
    // Live, the session is checked before JACK: no server is started (it would say so on stdout).
    (
      "live, missing session", ["nosuch.json", "--start-server", "dummy", "-s", "stemdeck-unit-unstarted", "-c", "status"],
      { $0 }, ["error: nosuch.json: no such file"]
    ),
    (
      "live, not JSON", ["song.json", "--start-server", "dummy", "-s", "stemdeck-unit-unstarted", "-c", "status"],
      { _ in "stems: [drums]\n" }, ["error: song.json: invalid JSON: "]
    )
  ]

  @Test(
    "render and live failures: exit 1 with one 'error:' line on stderr naming the file and field, nothing started",
    arguments: renderFailures)
  func renderFailure(_ name: String, _ arguments: [String], _ breakSession: @Sendable (String) -> String, _ fragments: [String]) throws {
    let folder = try fixture()
    let session = folder.file("song.json")
    try folder.write(breakSession(try String(contentsOfFile: session, encoding: .utf8)), to: "song.json")
    let r = try runBinary(arguments, in: folder)
    #expect(r.status == 1)
    #expect(r.stdout == [])
    #expect(r.stderr.count == 1, "\(r.stderr)")
    let line = r.stderr.first ?? ""
    #expect(line.hasPrefix("error: "))
    for f in fragments { #expect(line.contains(f), "'\(f)' not in: \(line)") }
    #expect(!FileManager.default.fileExists(atPath: folder.file("out.wav")), "no output file after a failed render")
  }

  /// A folder with tone.wav (a 1 kHz stereo sine at `level` dBFS peak, `seconds` long) and tone.json using it.
  func toneFixture(level: Double, seconds: Double) throws -> TemporaryFolder {
    let folder = try TemporaryFolder()
    try folder.wav("tone.wav", channels: 2, sampleRate: 48000, seconds: seconds, frequency: 1000, amplitude: pow(10, level / 20))
    try folder.write(
      """
      { "format" : "stemdeck-session", "version" : 1, "stems" : [ { "name" : "tone", "file" : "tone.wav" } ] }
      """, to: "tone.json")
    return folder
  }

  @Test("analyze: a 1 kHz stereo sine at -23 dBFS prints -23.0 LUFS, its range and peaks, and writes nothing")
  func analyze() throws {
    let folder = try toneFixture(level: -23, seconds: 10)
    let r = try runBinary(["analyze", "tone.json"], in: folder)
    #expect(r.status == 0)
    #expect(r.stderr == [])
    #expect(
      Array(r.stdout.prefix(5)) == [
        "analyzed tone.json: 0:10.000 at 48000 Hz, stereo",
        "integrated loudness -23.0 LUFS",
        "loudness range 0.0 LU",
        "true peak -23.0 dBTP",
        "sample peak -23.0 dBFS"
      ], "\(r.stdout)")
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { !$0.hasPrefix(".") }.sorted() == ["tone.json", "tone.wav"])
    let part = try runBinary(["analyze", "tone.json", "--from", "2", "--duration", "5"], in: folder)
    #expect(part.stdout.first == "analyzed tone.json: 0:05.000 at 48000 Hz, stereo, from 0:02.000", "\(part.stdout)")
  }

  @Test(
    "render --normalize -14LUFS --true-peak -1dBTP: the summary gives the gain and the output's figures; analyze of the output reads -14.0")
  func renderNormalized() throws {
    let folder = try toneFixture(level: -23, seconds: 10)
    let r = try runBinary(["render", "tone.json", "-o", "out.wav", "--normalize", "-14LUFS", "--true-peak", "-1dBTP"], in: folder)
    #expect(r.status == 0)
    #expect(r.stderr == [])
    #expect(r.stdout.count == 7, "\(r.stdout)")
    #expect(r.stdout.first == "rendered out.wav: 0:10.000 at 48000 Hz, stereo")
    let normalized = r.stdout.dropFirst().first ?? ""
    let prefix = "normalized to -14.0 LUFS, true peak at most -1.0 dBTP: the mix measured -23.0 LUFS, true peak -23.0 dBTP; gain +"
    #expect(normalized.hasPrefix(prefix) && normalized.hasSuffix(" dB"), "\(r.stdout)")
    let gain = Double(normalized.dropFirst(prefix.count).dropLast(3)) ?? 0
    #expect(abs(gain - 9) <= 0.05, "gain \(gain) dB")
    #expect(r.stdout.contains("integrated loudness -14.0 LUFS"))
    #expect(r.stdout.contains("true peak -14.0 dBTP"))
    // Measured again, independently of the render, from the written file.
    try folder.write(
      """
      { "format" : "stemdeck-session", "version" : 1, "stems" : [ { "name" : "out", "file" : "out.wav" } ] }
      """, to: "out.json")
    let check = try runBinary(["analyze", "out.json"], in: folder)
    #expect(check.stdout.dropFirst().first == "integrated loudness -14.0 LUFS", "\(check.stdout)")
    // The ceiling wins over the target: -3 LUFS would put this tone's peak at -3 dBTP, and a
    // steady tone's loudness is its peak's, so the limiter holds it at -6.
    let limited = try runBinary(["render", "tone.json", "-o", "loud.wav", "--normalize", "-3", "--true-peak", "-6"], in: folder)
    #expect(limited.status == 0)
    #expect(
      limited.stdout.contains {
        $0.hasPrefix("true-peak limiter: up to 3.0 dB of gain reduction, more than 0.1 dB for ") && $0.hasSuffix("; 2 measuring passes")
      },
      "\(limited.stdout)")
    #expect(
      limited.stdout.contains(
        "the true-peak ceiling holds the output 3.0 LU under the target (a lower target or a higher ceiling reaches it)"),
      "\(limited.stdout)")
    #expect(limited.stdout.contains("true peak -6.0 dBTP"), "\(limited.stdout)")
  }

  @Test("render --stems: one file per stem beside the master, and a line saying so")
  func renderStems() throws {
    let folder = try fixture()
    let r = try runBinary(["render", "song.json", "-o", "mix.flac", "--stems", "parts"], in: folder)
    #expect(r.status == 0, "\(r.stderr)")
    #expect(r.stdout.prefix(2) == ["rendered mix.flac: 0:02.000 at 48000 Hz, stereo", "stems: 1 file in parts: drums"], "\(r.stdout)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.file("parts")) == ["drums.flac"])
    let master = try Data(contentsOf: URL(fileURLWithPath: folder.file("mix.flac")))
    let stem = try Data(contentsOf: URL(fileURLWithPath: folder.file("parts/drums.flac")))
    #expect(master.count > 1000 && master == stem, "one stem alone: its file is the master, byte for byte")
  }

  @Test("--help and --version: exit 0 on stdout")
  func helpAndVersion() throws {
    let folder = try TemporaryFolder()
    let help = try runBinary(["--help"], in: folder)
    #expect(help.status == 0)
    #expect(help.stderr == [])
    #expect(help.stdout.first == "stemdeck — a multi-track stem mixer console for JACK")
    #expect(help.stdout.contains("  stemdeck render SESSION -o FILE    mix SESSION into an audio file (no JACK)"))
    #expect(help.stdout.last == "Type 'help' inside stemdeck for its commands; man stemdeck for everything.")
    #expect(try runBinary(["-h"], in: folder).stdout == help.stdout)
    #expect(try runBinary(["help"], in: folder).stdout == help.stdout)
    // A subcommand's own help, the same from `help TOPIC` and `TOPIC --help`, within 80 columns.
    for topic in ["render", "analyze", "ctl"] {
      let own = try runBinary(["help", topic], in: folder)
      #expect(own.status == 0 && own.stdout.first?.hasPrefix("usage: stemdeck \(topic) ") == true, "\(own.stdout)")
      #expect(try runBinary([topic, "--help"], in: folder).stdout == own.stdout, "\(topic)")
      #expect(own.stdout.allSatisfy { $0.count <= 80 }, "\(own.stdout)")
    }
    let unknown = try runBinary(["help", "mixer"], in: folder)
    #expect(unknown.status == 2 && unknown.stdout == [] && unknown.stderr.first?.hasPrefix("error: help: no help on 'mixer'") == true)
    let version = try runBinary(["--version"], in: folder)
    #expect(version.status == 0)
    // The VERSION file's release, then what git adds when built from a checkout (scripts/version).
    let release = try String(contentsOf: CompletionFilesTests.root.appendingPathComponent("VERSION"), encoding: .utf8)
      .trimmingCharacters(in: .whitespacesAndNewlines)
    let line = version.stdout.first ?? ""
    #expect(version.stdout.count == 1 && line.hasPrefix("stemdeck \(release)"), "\(version.stdout)")
    #expect(line.wholeMatch(of: /stemdeck [0-9]+(\.[0-9]+)*(\+g[0-9a-f]{7}(\.dirty)?|\+dirty)?/) != nil, "\(line)")
  }

  static let usageErrors: [([String], String)] = [
    (["--frobnicate"], "error: unknown option '--frobnicate' (see stemdeck --help)"),
    (["render", "song.json"], "error: render: --output FILE is required (.wav, .flac, .aiff, .ogg or .opus)"),
    (["render"], "error: render: which session? usage: stemdeck render SESSION --output FILE"),
    (["a.json", "b.json"], "error: more than one session file given ('a.json' and 'b.json')"),
    (["--server"], "error: --server needs a value (see stemdeck --help)"),
    (
      ["render", "song.json", "-o", "out.wav", "--normalize", "-80LUFS"],
      "error: --normalize must be a level from -60 to 0 LUFS, such as -14LUFS (got -80 LUFS)"
    ),
    (
      ["analyze", "song.json", "-o", "out.wav"],
      "error: analyze writes no file, so it takes no --output (render --output FILE --normalize LUFS writes a normalised file)"
    )
  ]

  @Test("usage errors: exit 2 with one line on stderr", arguments: usageErrors)
  func usageError(_ arguments: [String], _ message: String) throws {
    let folder = try TemporaryFolder()
    let r = try runBinary(arguments, in: folder)
    #expect(r.status == 2)
    #expect(r.stdout == [])
    #expect(r.stderr == [message])
  }
}
