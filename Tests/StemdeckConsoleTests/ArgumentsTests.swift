import StemdeckControl
import Testing
@testable import StemdeckConsole
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

@Suite("Arguments.parse")
struct ArgumentsTests {
  // `Arguments` is not Sendable, so each row says how the expected value differs from the default.
  typealias Change = @Sendable (inout Arguments) -> Void

  static let valid: [([String], Change)] = [
    ([], { _ in }),
    // GNU long options: --opt=VALUE, and -- before file names that start with a dash.
    (
      ["--server=foo", "S", "--osc=9000"],
      {
        $0.server = "foo"; $0.session = "S"; $0.oscPort = 9000
      }
    ),
    (
      ["render", "S", "--output=o.wav", "--duration=5", "--from=start"],
      {
        $0.mode = .render; $0.session = "S"; $0.output = "o.wav"; $0.duration = 5; $0.from = 0
      }
    ),
    (
      ["--play", "--", "-odd.json"],
      {
        $0.play = true; $0.session = "-odd.json"
      }
    ),
    (
      ["analyze", "--json", "--", "--a.wav", "b.wav"],
      {
        $0.mode = .analyze; $0.json = true; $0.session = "--a.wav"; $0.files = ["b.wav"]
      }
    ),
    (["song.json"], { $0.session = "song.json" }),
    (
      ["render", "S", "--output", "o.wav", "--duration", "5"],
      {
        $0.mode = .render; $0.session = "S"; $0.output = "o.wav"; $0.duration = 5
      }
    ),
    (
      ["render", "-o", "o.flac", "S", "-d", "1:30", "-r", "44100"],
      {
        $0.mode = .render; $0.session = "S"; $0.output = "o.flac"; $0.duration = 90; $0.sampleRate = 44100
      }
    ),
    (
      ["render", "S", "-o", "o.wav", "--duration", "500ms"],
      {
        $0.mode = .render; $0.session = "S"; $0.output = "o.wav"; $0.duration = 0.5
      }
    ),
    (
      ["--server", "x", "--no-start-server", "--keep-going", "-c", "play"],
      {
        $0.server = "x"; $0.startServer = false; $0.keepGoing = true; $0.commands = "play"
      }
    ),
    (
      ["-s", "x", "-n", "deck2", "-k", "--commands", "play; wait end", "song.json"],
      {
        $0.server = "x"; $0.clientName = "deck2"; $0.keepGoing = true; $0.commands = "play; wait end"; $0.session = "song.json"
      }
    ),
    (
      ["song.json", "--script", "cues.txt", "--play", "--no-connect", "--strict"],
      {
        $0.session = "song.json"; $0.script = "cues.txt"; $0.play = true; $0.autoConnect = false; $0.strict = true
      }
    ),
    (["--help"], { $0.mode = .help }),
    (["-h"], { $0.mode = .help }),
    (["--version"], { $0.mode = .version }),
    (
      ["render", "--help"],
      {
        $0.mode = .help; $0.helpTopic = .render
      }
    ),
    (["help"], { $0.mode = .help }),
    (
      ["help", "ctl"],
      {
        $0.mode = .help; $0.helpTopic = .ctl
      }
    ),
    (
      ["analyze", "x.wav", "-h"],
      {
        $0.mode = .help; $0.helpTopic = .analyze; $0.session = "x.wav"
      }
    ),
    (["-"], { $0.session = "-" }),
    (
      ["render", "S", "-o", "o.wav", "--from", "1:30"],
      {
        $0.mode = .render; $0.session = "S"; $0.output = "o.wav"; $0.from = 90
      }
    ),
    (
      ["render", "S", "-o", "o.wav", "--from", "Start", "--duration", "2s"],
      {
        $0.mode = .render; $0.session = "S"; $0.output = "o.wav"; $0.from = 0; $0.duration = 2
      }
    ),
    (
      ["render", "S", "-o", "o.wav", "--input", "mic=take 1.wav", "--input", "keys=a=b.wav"],
      {
        $0.mode = .render; $0.session = "S"; $0.output = "o.wav"
        $0.inputs = [RenderInput(name: "mic", path: "take 1.wav"), RenderInput(name: "keys", path: "a=b.wav")]
      }
    ),
    (
      ["analyze", "S", "--input", "mic=v.wav"],
      {
        $0.mode = .analyze; $0.session = "S"; $0.inputs = [RenderInput(name: "mic", path: "v.wav")]
      }
    ),
    (
      ["render", "S", "-o", "o.flac", "--dither"],
      {
        $0.mode = .render; $0.session = "S"; $0.output = "o.flac"; $0.dither = true
      }
    ),
    (
      ["render", "S", "-o", "o.wav", "--normalize", "-14LUFS"],
      {
        $0.mode = .render; $0.session = "S"; $0.output = "o.wav"; $0.normalize = -14
      }
    ),
    (
      ["render", "S", "-o", "o.wav", "--normalize", "-23 lufs", "--true-peak", "-1dBTP"],
      {
        $0.mode = .render; $0.session = "S"; $0.output = "o.wav"; $0.normalize = -23; $0.truePeak = -1
      }
    ),
    (
      ["render", "S", "-o", "o.wav", "--normalize", "-16", "--true-peak", "-2.5"],
      {
        $0.mode = .render; $0.session = "S"; $0.output = "o.wav"; $0.normalize = -16; $0.truePeak = -2.5
      }
    ),
    (
      ["render", "S", "-o", "o.wav", "--normalize", "-24LKFS"],
      {
        $0.mode = .render; $0.session = "S"; $0.output = "o.wav"; $0.normalize = -24
      }
    ),
    (
      ["render", "S", "-o", "o.wav", "--stems", "out"],
      {
        $0.mode = .render; $0.session = "S"; $0.output = "o.wav"; $0.stems = "out"
      }
    ),
    (
      ["analyze", "S"],
      {
        $0.mode = .analyze; $0.session = "S"
      }
    ),
    (
      ["analyze", "a.wav", "b.flac", "--json", "c.ogg"],
      {
        $0.mode = .analyze; $0.session = "a.wav"; $0.files = ["b.flac", "c.ogg"]; $0.json = true
      }
    ),
    (
      ["analyze", "S", "--from", "0:10", "--duration", "30", "-r", "44100"],
      {
        $0.mode = .analyze; $0.session = "S"; $0.from = 10; $0.duration = 30; $0.sampleRate = 44100
      }
    ),
    (
      ["S", "--control", "/tmp/c.sock"],
      {
        $0.session = "S"; $0.control = "/tmp/c.sock"
      }
    ),
    (
      ["S", "--no-control"],
      {
        $0.session = "S"; $0.noControl = true
      }
    ),
    (
      ["S", "--osc", "9000"],
      {
        $0.session = "S"; $0.oscPort = 9000
      }
    ),
    (
      ["S", "--osc", "9000", "--osc-host", "0.0.0.0"],
      {
        $0.session = "S"; $0.oscPort = 9000; $0.oscHost = "0.0.0.0"
      }
    ),
    (
      ["ctl", "--json", "status"],
      {
        $0.mode = .ctl; $0.json = true; $0.commands = "status"
      }
    ),
    (
      ["S", "--json", "-c", "status"],
      {
        $0.session = "S"; $0.json = true; $0.commands = "status"
      }
    ),
    (
      ["ctl", "--watch", "events", "--watch", "meters@5"],
      {
        $0.mode = .ctl; $0.watch = ["events", "meters@5"]; $0.commands = ""
      }
    ),
    (
      ["ctl", "vol drums -6dB; status"],
      {
        $0.mode = .ctl; $0.commands = "vol drums -6dB; status"
      }
    ),
    (
      ["ctl", "--socket", "/tmp/c.sock", "play"],
      {
        $0.mode = .ctl; $0.socket = "/tmp/c.sock"; $0.commands = "play"
      }
    ),
    (
      ["ctl", "-n", "deck2", "-s", "band", "play"],
      {
        $0.mode = .ctl; $0.clientName = "deck2"; $0.server = "band"; $0.commands = "play"
      }
    )
  ]

  @Test("valid command lines", arguments: valid)
  func parses(_ args: [String], _ change: Change) throws {
    var expected = Arguments()
    change(&expected)
    #expect(try Arguments.parse(args) == expected)
  }

  static let invalid: [([String], String)] = [
    (["--frobnicate"], "unknown option '--frobnicate' (see stemdeck --help)"),
    (["-x"], "unknown option '-x' (see stemdeck --help)"),
    (["--output=o.wav"], "--output is a render option: stemdeck render SESSION --output FILE --output …"),
    (["S", "--from", "1:00"], "--from is a render and analyze option (live, seek TIME at the prompt or in a script)"),
    (
      ["help", "mixer"],
      "help: no help on 'mixer'; give render, analyze, ctl, config or live (the console's commands: 'help' inside stemdeck, or man stemdeck-commands)"
    ),
    (["help", "render", "x"], "help takes one topic: stemdeck help [render|analyze|ctl|config|live]"),
    (["render", "S"], "render: --output FILE is required (.wav, .flac, .aiff, .ogg or .opus)"),
    (["render", "S", "--duration", "5"], "render: --output FILE is required (.wav, .flac, .aiff, .ogg or .opus)"),
    (["render", "--output", "o.wav"], "render: which session? usage: stemdeck render SESSION --output FILE"),
    (["a.json", "b.json"], "more than one session file given ('a.json' and 'b.json')"),
    (["render", "a.json", "-o", "o.wav", "b.json"], "more than one session file given ('a.json' and 'b.json')"),
    (["--server"], "--server needs a value (see stemdeck --help)"),
    (["-c"], "-c needs a value (see stemdeck --help)"),
    (["render", "S", "--output"], "--output needs a value (see stemdeck --help)"),
    (["--duration", "-5"], "duration must not have a sign (got '-5')"),
    (["--duration", "soon"], "duration must be seconds (2, 2s, 500ms) or m:ss (1:30) (got 'soon')"),
    (["--sample-rate", "fast"], "--sample-rate must be a whole number (got 'fast')"),
    (
      ["render", "S", "-o", "o.wav", "--from", "-2"],
      "--from must be a time: seconds (90, 90s, 500ms), m:ss (1:30) or 'start' (got '-2')"
    ),
    (
      ["render", "S", "-o", "o.wav", "--from", "beginning"],
      "--from must be a time: seconds (90, 90s, 500ms), m:ss (1:30) or 'start' (got 'beginning')"
    ),
    (["render", "S", "-o", "o.wav", "--from"], "--from needs a value (see stemdeck --help)"),
    (
      ["render", "S", "-o", "o.wav", "--normalize", "loud"],
      "--normalize must be a level from -60 to 0 LUFS, such as -14LUFS (got 'loud')"
    ),
    (
      ["render", "S", "-o", "o.wav", "--normalize", "-14dB"],
      "--normalize must be a level from -60 to 0 LUFS, such as -14LUFS (got '-14dB')"
    ),
    (
      ["render", "S", "-o", "o.wav", "--normalize", "-80LUFS"],
      "--normalize must be a level from -60 to 0 LUFS, such as -14LUFS (got -80 LUFS)"
    ),
    (
      ["render", "S", "-o", "o.wav", "--normalize", "3"],
      "--normalize must be a level from -60 to 0 LUFS, such as -14LUFS (got 3 LUFS)"
    ),
    (["render", "S", "-o", "o.wav", "--normalize"], "--normalize needs a value (see stemdeck --help)"),
    (
      ["render", "S", "-o", "o.wav", "--normalize", "-14", "--true-peak", "+1dBTP"],
      "--true-peak must be a level from -30 to 0 dBTP, such as -1dBTP (got 1 dBTP)"
    ),
    (
      ["render", "S", "-o", "o.wav", "--normalize", "-14", "--true-peak", "-1LUFS"],
      "--true-peak must be a level from -30 to 0 dBTP, such as -1dBTP (got '-1LUFS')"
    ),
    (
      ["render", "S", "-o", "o.wav", "--true-peak", "-1dBTP"],
      "--true-peak is the ceiling of a normalised render: give --normalize LUFS with it (e.g. --normalize -14LUFS --true-peak -1dBTP)"
    ),
    (
      ["analyze"],
      "analyze: which session or audio files? usage: stemdeck analyze SESSION [--from TIME] [--duration SECONDS], stemdeck analyze FILE…"
    ),
    (
      ["analyze", "S", "-o", "o.wav"],
      "analyze writes no file, so it takes no --output (render --output FILE --normalize LUFS writes a normalised file)"
    ),
    (["analyze", "S", "--dither"], "analyze writes no file, so it takes no --dither (it measures the mix before any rounding)"),
    (["analyze", "S", "--normalize", "-14"], "--normalize is a render option: stemdeck render SESSION --output FILE --normalize …"),
    (["analyze", "S", "--stems", "d"], "--stems is a render option: stemdeck render SESSION --output FILE --stems …"),
    (["render", "S", "-o", "o.wav", "--stems"], "--stems needs a value (see stemdeck --help)"),
    (["S", "--true-peak", "-1"], "--true-peak is a render option: stemdeck render SESSION --output FILE --true-peak …"),
    (
      ["ctl"],
      "ctl: which commands? usage: stemdeck ctl [--name CLIENT] [--server NAME] [--socket PATH] 'CMD; CMD' (ctl --list: the running stemdecks)"
    ),
    (["ctl", "--name", "a", "--socket", "/tmp/c.sock", "play"], "ctl: give --name CLIENT (and --server NAME) or --socket PATH, not both"),
    (["S", "--socket", "/tmp/c.sock"], "--socket is a ctl option: stemdeck ctl --socket PATH 'CMD' (a live stemdeck takes --control PATH)"),
    (["S", "--control", "c.sock", "--no-control"], "--control PATH and --no-control contradict each other: give one"),
    (["S", "--osc", "0"], "--osc must be a UDP port 1…65535 (got '0')"),
    (["S", "--osc", "osc"], "--osc must be a UDP port 1…65535 (got 'osc')"),
    (["S", "--osc-host", "0.0.0.0"], "--osc-host HOST needs --osc PORT (the OSC server is off without it)"),
    (
      ["render", "S", "-o", "x.wav", "--json"],
      "--json is for ctl and script mode (and analyze): stemdeck ctl --json 'CMD', stemdeck SESSION --json -c 'CMD' print replies as JSON lines; stemdeck analyze FILE --json prints its figures"
    ),
    (["S", "--watch", "events"], "unknown option '--watch' (see stemdeck --help)"),
    (
      ["render", "S", "-o", "o.wav", "--input", "mic"],
      "--input must be NAME=FILE, a live input of the session and the audio file that stands in for it, e.g. --input mic=vocal.wav (got 'mic')"
    ),
    (
      ["render", "S", "-o", "o.wav", "--input", "=v.wav"],
      "--input must be NAME=FILE, a live input of the session and the audio file that stands in for it, e.g. --input mic=vocal.wav (got '=v.wav')"
    ),
    (["S", "--input", "mic=v.wav"], "--input is a render and analyze option (live, connect a source to the input's port instead)"),
    (["S", "--play=yes"], "--play takes no value (got '--play=yes')"),
    (["S", "--server="], "--server needs a value (see stemdeck --help)"),
    (["--", "a.json", "b.json"], "more than one session file given ('a.json' and 'b.json')"),
    (
      ["render", "S", "-o", "o.wav", "--normalise", "-14"],
      "unknown option '--normalise' — did you mean '--normalize'? (see stemdeck --help)"
    ),
    (["S", "--sampel-rate=44100"], "unknown option '--sampel-rate' — did you mean '--sample-rate'? (see stemdeck --help)")
  ]

  @Test("invalid command lines", arguments: invalid)
  func rejects(_ args: [String], _ message: String) {
    #expect(throws: CommandError(message)) { try Arguments.parse(args) }
  }

  @Test(
    "an option is not taken as another option's value",
    arguments: [["--server", "--play"], ["render", "S", "-o", "--duration", "5"], ["-c", "--keep-going"]])
  func optionAsValue(_ args: [String]) {
    #expect(throws: CommandError.self) { try Arguments.parse(args) }
  }

  @Test("usage text lists every option parse accepts")
  func usageMentionsOptions() {
    for option in [
      "--server", "-s", "--name", "-n", "--no-start-server", "--no-connect", "--play", "--strict", "--script",
      "-c", "--keep-going", "-k", "--output", "-o", "--from", "--duration", "--sample-rate",
      "--normalize", "--true-peak", "--stems", "--control", "--no-control", "--socket", "--osc", "--osc-host",
      "--json", "--watch", "--input"
    ] {
      #expect(Arguments.allHelp.contains(option + " ") || Arguments.allHelp.contains(option + ","), "\(option)")
    }
    // The did-you-mean list is every long option, each in the usage text.
    for option in Arguments.knownOptions {
      #expect(
        Arguments.allHelp.contains(option + " ") || Arguments.allHelp.contains(option + ",")
          || Arguments.allHelp.contains(option + "]") || Arguments.allHelp.contains(option + "\n"),
        "\(option)")
    }
  }

  @Test("every help text fits 80 columns; each subcommand's names its own options")
  func helpFits() {
    for topic in [nil] + HelpTopic.allCases.map(Optional.some) {
      for line in Arguments.help(topic).split(separator: "\n") {
        #expect(line.count <= 80, "\(topic.map(\.rawValue) ?? "overview"): \(line.count) columns: \(line)")
      }
    }
    for option in ["--output", "--format", "--dither", "--normalize", "--true-peak", "--stems", "--input", "--quiet"] {
      #expect(Arguments.help(.render).contains(option + " "), "render: \(option)")
    }
    for option in ["--from", "--duration", "--sample-rate", "--input", "--json", "--quiet"] {
      #expect(Arguments.help(.analyze).contains(option + " "), "analyze: \(option)")
    }
    for option in ["--name", "--server", "--socket", "--json", "--watch"] {
      #expect(Arguments.help(.ctl).contains(option + " "), "ctl: \(option)")
    }
    #expect(Arguments.help(.live).contains("--start-server ") && Arguments.usage.contains("--osc-host "))
  }
}
