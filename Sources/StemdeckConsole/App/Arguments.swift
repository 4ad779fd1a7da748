import StemdeckAudioFile
import StemdeckControl
import StemdeckJack
import StemdeckSession
import StemdeckText
import StemdeckRemote
import StemdeckLive

/// The command line, parsed.
public struct Arguments: Equatable, Sendable {
  public enum Mode: Equatable, Sendable { case live, render, analyze, ctl, config, help, version }
  public var mode: Mode = .live
  /// `stemdeck help TOPIC`, `stemdeck render --help`…: whose options to show (nil: the overview).
  public var helpTopic: HelpTopic?
  public var session: String?
  /// `analyze FILE FILE…`: the audio files after the first (`session` holds the first).
  public var files: [String] = []
  public var server: String?
  public var clientName = "stemdeck"
  public var startServer = true
  /// `--start-server DRIVER`: the server to start when none runs.
  public var launch: ServerLauncher.Launch = .automatic
  public var script: String?
  public var commands: String?
  public var keepGoing = false
  public var play = false
  public var strict = false
  public var autoConnect = true
  public var output: String?
  public var duration: Double?
  /// `render --from`: the transport time to start at (nil: the session's saved position).
  public var from: Double?
  public var sampleRate = 48000
  /// `--verbose`: show libjack's own messages (on stderr).
  public var verbose = false
  /// `render --dither`: TPDF dither for a 24-bit output (nil: the default, off for 24-bit).
  public var dither: Bool?
  /// `render --normalize`: the integrated loudness to reach, LUFS.
  public var normalize: Double?
  /// `render --true-peak`: the true-peak ceiling of a normalised render, dBTP.
  public var truePeak: Double?
  /// `render --stems DIR`: every stem to its own file in DIR as well.
  public var stems: String?
  /// `render --click FILE`: the click alone (its count-in too) to FILE, aligned with the master.
  public var click: String?
  /// `render`/`analyze --input NAME=FILE`: a file standing in for live input NAME (or for aux
  /// send SEND's return, `SEND_return`).
  public var inputs: [RenderInput] = []
  /// `render --format NAME`: the sample format (nil: the output extension's default).
  public var format: OutputFormat?
  /// `render`/`analyze --quiet`: no progress bar.
  public var quiet = false
  /// `--control PATH`: the control socket's path (nil: the default, `ControlServer.defaultPath`;
  /// `ctl` finds it from `--name` and `--server`).
  public var control: String?
  /// `--no-control`: no control socket.
  public var noControl = false
  /// `ctl --socket PATH`: the socket to talk to.
  public var socket: String?
  /// `--osc PORT`: the OSC server's UDP port (nil: no OSC server).
  public var oscPort: Int?
  /// `--osc-host HOST`: the address the OSC server binds (default 127.0.0.1: this machine only).
  public var oscHost: String?
  /// `--osc-allow all`: OSC may do what the control socket does (files, quit, routing); the
  /// default, `mix`, lets it mix and run the transport and the show (Access.swift).
  public var oscAllowsAll = false
  /// `--http PORT`: the web mixer's TCP port (nil: no web mixer; 0: any free port).
  public var httpPort: Int?
  /// `--http-host ADDR`: the address the web mixer binds (default 127.0.0.1: this machine only;
  /// any other needs the token, docs/web.md).
  public var httpHost: String?
  /// `ctl --json`: print the replies as they come (JSON lines); in script mode, one reply object
  /// per command, as the control socket answers. `ctl --watch TOPIC…`: follow pushes.
  public var json = false
  public var watch: [String] = []
  /// `ctl --list`: list the stemdecks whose control sockets answer, and do nothing else.
  public var list = false
  /// `ctl --timeout SECONDS`: how long ctl waits for the connection and for each reply.
  public var timeout: Double?
  /// `--mixer`: open the full-screen mixer view at start (interactive mode only).
  public var mixer = false
  /// `--config FILE`: the configuration file instead of `$XDG_CONFIG_HOME/stemdeck/config`.
  public var configPath: String?
  /// From the configuration file only (ConfigFile.swift): a server stemdeck starts, seconds
  /// between autosaves (nil: the console's default; 0: off), REPL history lines, colour.
  public var serverSettings = ServerLauncher.Settings()
  public var autosave: Double?
  public var historySize = 2000
  public var color = true

  /// The command line alone (no configuration file; `parse(_:environment:)` adds it), checked
  /// across options unless `checked` is false. The options themselves: Arguments+Options.swift.
  public static func parse(_ args: [String], checked: Bool = true) throws(CommandError) -> Arguments {
    var a = Arguments()
    var words = OptionWords(rest: args[...])
    if words.rest.first == "help" { return try parseHelp(words.rest.dropFirst()) }
    for (word, mode) in [("render", Mode.render), ("analyze", .analyze), ("ctl", .ctl), ("config", .config)]
    where words.rest.first == word {
      a.mode = mode
      words.rest = words.rest.dropFirst()
    }
    // After `--` every argument is a file.
    var filesOnly = false
    while var arg = words.rest.popFirst() {
      if filesOnly {
        try a.positional(arg)
        continue
      }
      if arg == "--" {
        filesOnly = true
        continue
      }
      // GNU long options: `--server=foo` is `--server foo`.
      if arg.hasPrefix("--"), let eq = arg.firstIndex(of: "=") {
        words.inline = String(arg[arg.index(after: eq)...])
        arg = String(arg[..<eq])
      }
      var taken = try a.takeOption(arg, &words)
      if !taken { taken = try a.takeFileOption(arg, &words) }
      if !taken {
        if arg.hasPrefix("-") && arg.count > 1 {
          let guess = arg.hasPrefix("--") ? Suggestion.closest(to: arg, in: knownOptions.filter { $0 != arg }) : nil
          throw CommandError(
            "unknown option '\(ValueParser.printable(arg))'" + (guess.map { " — did you mean '\($0)'?" } ?? "")
              + " (see stemdeck --help)")
        }
        try a.positional(arg)
      }
      if let v = words.inline { throw CommandError("\(arg) takes no value (got '\(ValueParser.printable(arg + "=" + v))')") }
    }
    if checked { try a.checkCombinations() }
    return a
  }

  /// `stemdeck help [TOPIC]`: the words after `help`.
  static func parseHelp(_ rest: ArraySlice<String>) throws(CommandError) -> Arguments {
    var a = Arguments()
    var rest = rest
    a.mode = .help
    if let word = rest.popFirst() {
      guard let topic = HelpTopic(rawValue: word) else {
        throw CommandError(
          "help: no help on '\(ValueParser.printable(word))'; give render, analyze, ctl, config or live (the console's commands: 'help' inside stemdeck, or man stemdeck-commands)"
        )
      }
      a.helpTopic = topic
    }
    guard rest.isEmpty else { throw CommandError("help takes one topic: stemdeck help [render|analyze|ctl|config|live]") }
    return a
  }

  /// A word that is no option: the session (or, for `analyze`, an audio file after the first).
  mutating func positional(_ arg: String) throws(CommandError) {
    if session != nil && mode == .analyze {
      files.append(arg)
    } else {
      guard session == nil else { throw CommandError("more than one session file given ('\(session!)' and '\(arg)')") }
      session = arg
    }
  }

  /// The checks across options, once all are read: what belongs to which mode, what contradicts
  /// what, and what a mode needs.
  mutating func checkCombinations() throws(CommandError) {
    if self.oscAllowsAll && self.oscPort == nil {
      throw CommandError("--osc-allow all needs --osc PORT (the OSC server is off without it)")
    }
    if self.oscHost != nil && self.oscPort == nil {
      throw CommandError("--osc-host HOST needs --osc PORT (the OSC server is off without it)")
    }
    if self.httpHost != nil && self.httpPort == nil {
      throw CommandError("--http-host ADDR needs --http PORT (the web mixer is off without it)")
    }
    if self.mode == .ctl && !self.watch.isEmpty && self.session == nil { self.session = "" }
    if self.mode == .config, let session {
      throw CommandError(
        "config takes no session ('\(ValueParser.printable(session))'): stemdeck config [OPTIONS] shows the settings those options give")
    }
    if self.mode != .ctl && self.mode != .live && self.mode != .analyze && self.json {
      throw CommandError(
        "--json is for ctl and script mode (and analyze): stemdeck ctl --json 'CMD', stemdeck SESSION --json -c 'CMD' print replies as JSON lines; stemdeck analyze FILE --json prints its figures"
      )
    }
    if self.mode == .ctl {
      if self.list {
        guard self.session == nil && self.watch.isEmpty else {
          throw CommandError("ctl --list lists the running stemdecks and runs nothing: give it alone")
        }
        return
      }
      guard let commands = self.session, !commands.trimmingSpaces().isEmpty || !self.watch.isEmpty else {
        throw CommandError(
          "ctl: which commands? usage: stemdeck ctl [--name CLIENT] [--server NAME] [--socket PATH] 'CMD; CMD' (ctl --list: the running stemdecks)"
        )
      }
      if (self.clientName != Arguments().clientName || self.server != nil) && self.socket != nil {
        throw CommandError("ctl: give --name CLIENT (and --server NAME) or --socket PATH, not both")
      }
      self.commands = commands
      self.session = nil
    } else if self.socket != nil {
      throw CommandError("--socket is a ctl option: stemdeck ctl --socket PATH 'CMD' (a live stemdeck takes --control PATH)")
    }
    if self.launch != .automatic && !self.startServer {
      throw CommandError("--start-server and --no-start-server contradict each other: give one")
    }
    if self.control != nil && self.noControl { throw CommandError("--control PATH and --no-control contradict each other: give one") }
    if self.mode == .render {
      guard self.session != nil else { throw CommandError("render: which session? usage: stemdeck render SESSION --output FILE") }
      guard self.output != nil else { throw CommandError("render: --output FILE is required (.wav, .flac, .aiff, .ogg or .opus)") }
      if self.truePeak != nil && self.normalize == nil {
        throw CommandError(
          "--true-peak is the ceiling of a normalised render: give --normalize LUFS with it (e.g. --normalize -14LUFS --true-peak -1dBTP)")
      }
    }
    if self.mode == .analyze {
      guard self.session != nil else {
        throw CommandError(
          "analyze: which session or audio files? usage: stemdeck analyze SESSION [--from TIME] [--duration SECONDS], stemdeck analyze FILE…"
        )
      }
      if self.output != nil {
        throw CommandError(
          "analyze writes no file, so it takes no --output (render --output FILE --normalize LUFS writes a normalised file)")
      }
      if self.dither != nil {
        throw CommandError("analyze writes no file, so it takes no --dither (it measures the mix before any rounding)")
      }
      if self.format != nil { throw CommandError("analyze writes no file, so it takes no --format") }
    }
    if self.mode != .render && self.mode != .analyze && !self.inputs.isEmpty {
      throw CommandError("--input is a render and analyze option (live, connect a source to the input's port instead)")
    }
    if self.mode != .render && self.mode != .analyze && self.quiet {
      throw CommandError("--quiet is a render and analyze option (it hides their progress bar)")
    }
    if self.mode == .live || self.mode == .ctl {
      for (flag, given) in [("--output", self.output != nil), ("--format", self.format != nil), ("--dither", self.dither != nil)]
      where given {
        throw CommandError("\(flag) is a render option: stemdeck render SESSION --output FILE \(flag) …")
      }
      if self.from != nil || self.duration != nil {
        let flag = self.from != nil ? "--from" : "--duration"
        let live = self.from != nil ? "seek TIME" : "wait SECONDS"
        throw CommandError("\(flag) is a render and analyze option (live, \(live) at the prompt or in a script)")
      }
    }
    if self.mode != .render {
      for (flag, given) in [
        ("--normalize", self.normalize != nil), ("--true-peak", self.truePeak != nil), ("--stems", self.stems != nil),
        ("--click", self.click != nil)
      ]
      where given {
        throw CommandError("\(flag) is a render option: stemdeck render SESSION --output FILE \(flag) …")
      }
    }
  }

  /// Every option `parse` knows, for did-you-mean (`ArgumentsTests` checks the usage text names
  /// each long one).
  static let knownOptions = [
    "--help", "--version", "--server", "--name", "--control", "--no-control", "--socket", "--osc", "--osc-host", "--osc-allow", "--http",
    "--http-host", "--timeout",
    "--json", "--watch", "--list", "--no-start-server", "--start-server", "--script", "--commands", "--keep-going", "--play",
    "--mixer", "--strict", "--no-connect", "--verbose", "--output", "--duration", "--from", "--dither", "--stems", "--click",
    "--input", "--quiet", "--format", "--normalize", "--true-peak", "--sample-rate", "--config"
  ]

  /// A level with an optional unit suffix ("-14LUFS", "-14 lufs", "-14"), checked against `range`.
  static func level(
    _ text: String, flag: String, units: [String], example: String,
    range: ClosedRange<Double>, unit: String
  ) throws(CommandError) -> Double {
    var number = text.lowercased()
    for u in units where number.hasSuffix(u) { number = String(number.dropLast(u.count)).trimmingSpaces(); break }
    let allowed = "from \(NumberFormat.plain(range.lowerBound)) to \(NumberFormat.plain(range.upperBound)) \(unit), such as \(example)"
    let v: Double
    do { v = try ValueParser.number(number, flag) } catch {
      throw CommandError("\(flag) must be a level \(allowed) (got '\(ValueParser.printable(text))')")
    }
    guard range.contains(v) else {
      throw CommandError("\(flag) must be a level \(allowed) (got \(NumberFormat.plain(v)) \(unit))")
    }
    return v
  }
}
