import CEditLine
import Foundation
import StemdeckAudioFile
import StemdeckControl
import StemdeckEngine
import StemdeckJack
import StemdeckSession
import Synchronization

/// The command line, parsed.
public struct Arguments: Equatable, Sendable {
  public enum Mode: Equatable, Sendable { case live, render, analyze, ctl, help, version }
  public var mode: Mode = .live
  public var session: String?
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
  /// `ctl --json`: print the replies as they come (JSON lines); in script mode, one reply object
  /// per command, as the control socket answers. `ctl --watch TOPIC…`: follow pushes.
  public var json = false
  public var watch: [String] = []
  /// `--mixer`: open the full-screen mixer view at start (interactive mode only).
  public var mixer = false

  public static func parse(_ args: [String]) throws(CommandError) -> Arguments {
    var a = Arguments()
    var rest = args[...]
    if rest.first == "render" { a.mode = .render; rest = rest.dropFirst() }
    if rest.first == "analyze" { a.mode = .analyze; rest = rest.dropFirst() }
    if rest.first == "ctl" { a.mode = .ctl; rest = rest.dropFirst() }
    func value(_ flag: String) throws(CommandError) -> String {
      guard let v = rest.popFirst(), !v.hasPrefix("--") else { throw CommandError("\(flag) needs a value (see stemdeck --help)") }
      return v
    }
    while let arg = rest.popFirst() {
      switch arg {
      case "-h", "--help": a.mode = .help
      case "--version": a.mode = .version
      case "--server", "-s": a.server = try value(arg)
      case "--name", "-n": a.clientName = try value(arg)
      case "--control": a.control = try value(arg)
      case "--no-control": a.noControl = true
      case "--socket": a.socket = try value(arg)
      case "--osc":
        let v = try value(arg)
        guard let port = Int(v), (1...65535).contains(port) else {
          throw CommandError("--osc must be a UDP port 1…65535 (got '\(ValueParser.printable(v))')")
        }
        a.oscPort = port
      case "--osc-host": a.oscHost = try value(arg)
      case "--json": a.json = true
      case "--watch" where a.mode == .ctl: a.watch.append(try value(arg))
      case "--no-start-server": a.startServer = false
      case "--start-server":
        let v = try value(arg)
        guard let launch = ServerLauncher.Launch.parse(v) else {
          throw CommandError("--start-server: '\(ValueParser.printable(v))' is not a server to start; give \(ServerLauncher.Launch.forms)")
        }
        a.launch = launch
      case "--script": a.script = try value(arg)
      case "-c", "--commands": a.commands = try value(arg)
      case "--keep-going", "-k": a.keepGoing = true
      case "--play": a.play = true
      case "--mixer": a.mixer = true
      case "--strict": a.strict = true
      case "--no-connect": a.autoConnect = false
      case "--verbose", "-v": a.verbose = true
      case "--output", "-o": a.output = try value(arg)
      case "--duration", "-d":
        let v = try value(arg)
        a.duration = try ValueParser.duration(v)
      case "--from":
        let v = try value(arg)
        if v.lowercased() == "start" {
          a.from = 0
        } else {
          do { a.from = try ValueParser.duration(v) } catch {
            throw CommandError(
              "--from must be a time: seconds (90, 90s, 500ms), m:ss (1:30) or 'start' (got '\(ValueParser.printable(v))')")
          }
        }
      case "--dither": a.dither = true
      case "--stems": a.stems = try value(arg)
      case "--input":
        let given = try value(arg)
        guard let eq = given.firstIndex(of: "="), eq != given.startIndex, given.index(after: eq) != given.endIndex else {
          throw CommandError(
            "--input must be NAME=FILE, a live input of the session and the audio file that stands in for it, e.g. --input mic=vocal.wav (got '\(ValueParser.printable(given))')"
          )
        }
        a.inputs.append(RenderInput(name: String(given[..<eq]), path: String(given[given.index(after: eq)...])))
      case "--quiet", "-q": a.quiet = true
      case "--format", "-f":
        let v = try value(arg)
        guard let f = OutputFormat.named(v) else {
          throw CommandError(
            "--format must be one of \(OutputFormat.formatNames.map(\.name).joined(separator: ", ")) (got '\(ValueParser.printable(v))')")
        }
        a.format = f
      case "--normalize":
        a.normalize = try level(
          try value(arg), flag: arg, units: ["lufs", "lkfs"], example: "-14LUFS",
          range: OfflineRenderer.Normalize.targetRange, unit: "LUFS")
      case "--true-peak":
        a.truePeak = try level(
          try value(arg), flag: arg, units: ["dbtp"], example: "-1dBTP",
          range: OfflineRenderer.Normalize.ceilingRange, unit: "dBTP")
      case "--sample-rate", "-r":
        let v = try value(arg)
        a.sampleRate = try ValueParser.integer(v, "--sample-rate")
      default:
        if arg.hasPrefix("-") && arg.count > 1 {
          throw CommandError("unknown option '\(ValueParser.printable(arg))' (see stemdeck --help)")
        }
        guard a.session == nil else { throw CommandError("more than one session file given ('\(a.session!)' and '\(arg)')") }
        a.session = arg
      }
    }
    if a.oscHost != nil && a.oscPort == nil { throw CommandError("--osc-host HOST needs --osc PORT (the OSC server is off without it)") }
    if a.mode == .ctl && !a.watch.isEmpty && a.session == nil { a.session = "" }
    if a.mode != .ctl && a.mode != .live && a.json {
      throw CommandError(
        "--json is for ctl and script mode: stemdeck ctl --json 'CMD', stemdeck SESSION --json -c 'CMD' print replies as JSON lines")
    }
    if a.mode == .ctl {
      guard let commands = a.session, !commands.trimmingSpaces().isEmpty || !a.watch.isEmpty else {
        throw CommandError("ctl: which commands? usage: stemdeck ctl [--name CLIENT] [--server NAME] [--socket PATH] 'CMD; CMD'")
      }
      if (a.clientName != Arguments().clientName || a.server != nil) && a.socket != nil {
        throw CommandError("ctl: give --name CLIENT (and --server NAME) or --socket PATH, not both")
      }
      a.commands = commands
      a.session = nil
    } else if a.socket != nil {
      throw CommandError("--socket is a ctl option: stemdeck ctl --socket PATH 'CMD' (a live stemdeck takes --control PATH)")
    }
    if a.launch != .automatic && !a.startServer {
      throw CommandError("--start-server and --no-start-server contradict each other: give one")
    }
    if a.control != nil && a.noControl { throw CommandError("--control PATH and --no-control contradict each other: give one") }
    if a.mode == .render {
      guard a.session != nil else { throw CommandError("render: which session? usage: stemdeck render SESSION --output FILE") }
      guard a.output != nil else { throw CommandError("render: --output FILE is required (.wav, .flac, .aiff, .ogg or .opus)") }
      if a.truePeak != nil && a.normalize == nil {
        throw CommandError(
          "--true-peak is the ceiling of a normalised render: give --normalize LUFS with it (e.g. --normalize -14LUFS --true-peak -1dBTP)")
      }
    }
    if a.mode == .analyze {
      guard a.session != nil else {
        throw CommandError("analyze: which session? usage: stemdeck analyze SESSION [--from TIME] [--duration SECONDS]")
      }
      if a.output != nil {
        throw CommandError(
          "analyze writes no file, so it takes no --output (render --output FILE --normalize LUFS writes a normalised file)")
      }
      if a.dither != nil { throw CommandError("analyze writes no file, so it takes no --dither (it measures the mix before any rounding)") }
      if a.format != nil { throw CommandError("analyze writes no file, so it takes no --format") }
    }
    if a.mode != .render && a.mode != .analyze && !a.inputs.isEmpty {
      throw CommandError("--input is a render and analyze option (live, connect a source to the input's port instead)")
    }
    if a.mode != .render && a.mode != .analyze && a.quiet {
      throw CommandError("--quiet is a render and analyze option (it hides their progress bar)")
    }
    if a.mode != .render {
      for (flag, given) in [("--normalize", a.normalize != nil), ("--true-peak", a.truePeak != nil), ("--stems", a.stems != nil)]
      where given {
        throw CommandError("\(flag) is a render option: stemdeck render SESSION --output FILE \(flag) …")
      }
    }
    return a
  }

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

  public static let usage = """
    stemdeck — a multi-track stem mixer console for JACK

    usage:
      stemdeck [SESSION] [options]          open SESSION live (interactive on a terminal, script mode otherwise)
      stemdeck render SESSION --output FILE [--format NAME] [--from TIME] [--duration SECONDS] [--sample-rate HZ]
                     [--dither] [--normalize LUFS [--true-peak DBTP]] [--stems DIR] [--input NAME=FILE] [--quiet]
      stemdeck analyze SESSION [--from TIME] [--duration SECONDS] [--sample-rate HZ] [--input NAME=FILE] [--quiet]
                                            print the master's loudness (EBU R 128) without writing a file
      stemdeck ctl [--name CLIENT] [--server NAME] [--socket PATH] [--json] [--watch TOPIC] 'CMD; CMD'
                                            run commands in a running stemdeck through its control socket
                                            (--json prints its replies as JSON lines; --watch events, meters,
                                            meters@RATE or transport follows pushed updates until interrupted)
                                            (exit status 0 done; 1 a command failed; 2 bad usage or no stemdeck)

    live options:
      --server NAME, -s NAME   JACK server (default: $JACK_DEFAULT_SERVER, else "default")
      --name CLIENT, -n CLIENT JACK client name (default: stemdeck)
      --no-start-server        do not start a JACK server when none is running
      --start-server DRIVER    when none is running, start this one: dummy, alsa, net (a NetJack2
                               slave finding its master by multicast), net:MASTER_IP[:PORT]
      --no-connect             do not connect the master to the system outputs
      --play                   start playing once the session is open
      --mixer                  open the full-screen mixer view at once (on a terminal; q goes to the prompt)
      --strict                 refuse to open a session whose audio files are missing
                               (default: open the rest, list those stems as offline)
      --script FILE            run commands from FILE (script mode)
      -c 'CMD; CMD'            run these commands (script mode)
      --keep-going, -k         in script mode, continue after a failed command (exit status is still 1)
      --json                   in script mode, print one JSON object per command, as the control
                               socket replies (events as {"push": "event", "text": …})
      --verbose, -v            show libjack's own messages on stderr (hidden by default)
      --control PATH           the control socket (default: $XDG_RUNTIME_DIR/stemdeck/CLIENT.sock,
                               CLIENT@SERVER.sock on a server other than "default")
      --no-control             no control socket
      --osc PORT               an OSC server on UDP PORT (off by default; see the README, Remote control)
      --osc-host HOST          the address it listens on (default 127.0.0.1: this machine only;
                               0.0.0.0 opens it to the network, where anyone can drive the mixer)

    render options:
      --output FILE, -o FILE   .wav (32-bit float), .flac or .aiff (24-bit), .ogg (Vorbis) or .opus
      --format NAME, -f NAME   the sample format: wav16, wav24, wav32, float (WAV); flac16, flac24;
                               aiff16, aiff24; vorbis; opus (8, 12, 16, 24 or 48 kHz). It must fit
                               the file name's extension; a name without one takes it as it is
      --from TIME              start at this transport time (90, 1:30, or 'start'; default: the
                               position saved in the session)
      --duration SECONDS       default: to the end of the longest finite stem (required if a stem
                               loops forever)
      --sample-rate HZ         default: 48000
      --dither                 TPDF dither (±1 LSB) before rounding to 24 or 32 bits (on by
                               default for 16 bits; lossy and float outputs take none)
      --quiet, -q              no progress bar (it shows only on a terminal, after the first second)
      --normalize LUFS         two passes: measure, then render with the gain that brings the
                               integrated loudness to LUFS (-60 to 0, e.g. -14LUFS), its true
                               peak at most -1 dBTP unless --true-peak gives another ceiling
      --true-peak DBTP         with --normalize: where the gain would put the true peak over DBTP
                               (-30 to 0; default -1dBTP), a look-ahead true-peak limiter keeps it
                               at or under DBTP while the loudness still meets the target
      --stems DIR              also write every stem to DIR/NAME.EXT (same format), sample-aligned
                               with the master; the stem files sum to the master
      --input NAME=FILE        the session's live input NAME plays FILE from the render's first frame
                               (others are silent); a mono file feeds both sides of a stereo input, a
                               stereo file for a mono input is refused; repeat for more inputs.
                               NAME may be an aux send's return, SEND_return (e.g. verb_return=wet.wav):
                               FILE is what the external effect sends back (a return is silent offline
                               without one; the send outputs go nowhere offline)
    render exit status: 0 done; 1 failed; 2 bad arguments; 3 written, but a
      stem was muted because its file holds NaN or infinite samples (a warning names it)

    Type 'help' inside stemdeck for its commands.
    """
}

/// Runs stemdeck with `args` (without the program name); returns the exit status.
public func runStemdeck(_ args: [String]) -> Int32 {
  let arguments: Arguments
  do { arguments = try Arguments.parse(args) } catch {
    printError("error: \(error)")
    return 2
  }
  switch arguments.mode {
  case .help: writeOut(Arguments.usage); return 0
  case .version: writeOut("stemdeck 0.1"); return 0
  case .render: return runRender(arguments)
  case .analyze: return runRender(arguments)
  case .ctl: return runCtl(arguments)
  case .live: return runLive(arguments)
  }
}

/// Writes a line to stdout unbuffered, so output interleaves correctly with events and stderr.
/// Through write(2): a terminal or pipe that went away is noted (`Output`), never a crash.
func writeOut(_ s: String) {
  Output.write(terminalSafe(s) + "\n", to: 1)
}

func printError(_ s: String) {
  Output.write(terminalSafe(s) + "\n", to: 2)
}

func runRender(_ a: Arguments) -> Int32 {
  // A file-size limit (ulimit -f) makes the write fail with EFBIG, reported as an error, instead
  // of killing stemdeck with SIGXFSZ half-way through the file.
  signal(SIGXFSZ, SIG_IGN)
  signal(SIGPIPE, SIG_IGN)
  // Ctrl-C or SIGTERM stops the render between blocks: its temporary file is removed and the
  // previous output stays (a second Ctrl-C still ends it at once, as in script mode).
  scriptModeForSignals.store(true, ordering: .relaxed)
  signal(SIGINT, handleSignal)
  signal(SIGTERM, handleSignal)
  signal(SIGHUP, handleSignal)
  // A parent may have started us with them blocked (the mask is inherited): unblock them.
  var handled = sigset_t()
  sigemptyset(&handled)
  for s in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&handled, s) }
  sigprocmask(SIG_UNBLOCK, &handled, nil)
  let sessionPath = Console.absolutePath(a.session!)
  let session: Session
  do { session = try SessionFile.load(path: sessionPath) } catch {
    printError("error: \(error.naming(a.session!, for: sessionPath))")
    return 1
  }
  let bar = RenderProgress(enabled: isatty(2) != 0 && !a.quiet)
  do {
    let progress: (Double) -> Void = { bar.update($0) }
    let warning: (OfflineRenderer.MutedStem) -> Void = { muted in
      bar.clear()
      printError("warning: \(muted.message)")
    }
    let cancelled = { interruptRequests.load(ordering: .relaxed) != 0 }
    let summary: OfflineRenderer.Summary
    if a.mode == .analyze {
      summary = try OfflineRenderer.analyze(
        session: session, sessionPath: sessionPath, duration: a.duration, from: a.from, sampleRate: a.sampleRate,
        inputs: a.inputs, progress: progress, warning: warning, cancelled: cancelled)
      bar.clear()
      writeOut(
        "analyzed \(a.session!): \(NumberFormat.time(summary.seconds)) at \(summary.sampleRate) Hz, stereo"
          + (summary.start > 0 ? ", from \(NumberFormat.time(summary.start))" : ""))
    } else {
      summary = try OfflineRenderer.render(
        session: session, sessionPath: sessionPath, outputPath: a.output!, duration: a.duration,
        from: a.from, sampleRate: a.sampleRate, dither: a.dither,
        // Without --true-peak, the default ceiling (-1 dBTP): a normalised delivery never clips.
        normalize: a.normalize.map {
          OfflineRenderer.Normalize(target: $0, truePeakCeiling: a.truePeak ?? OfflineRenderer.Normalize.defaultCeiling)
        },
        stemsFolder: a.stems, format: a.format, inputs: a.inputs,
        progress: progress, warning: warning, cancelled: cancelled)
      bar.clear()
      writeOut(
        "rendered \(a.output!): \(NumberFormat.time(summary.seconds)) at \(summary.sampleRate) Hz, stereo"
          + (summary.start > 0 ? ", from \(NumberFormat.time(summary.start))" : ""))
      if let folder = a.stems {
        writeOut("stems: \(session.stems.count) file\(session.stems.count == 1 ? "" : "s") in \(folder)")
      }
    }
    if let n = summary.normalization {
      writeOut(
        "normalized to \(Loudness.lufs(n.asked.target))"
          + (n.asked.truePeakCeiling.map { ", true peak at most \(Loudness.db($0, "dBTP"))" } ?? "")
          + (a.truePeak == nil && n.asked.truePeakCeiling != nil ? " (the default ceiling)" : "")
          + ": the mix measured \(Loudness.lufs(n.measured.integrated)), true peak \(Loudness.db(n.measured.truePeakDecibels, "dBTP")); gain \(n.gain >= 0 ? "+" : "")\(NumberFormat.fixed(n.gain, 2)) dB"
      )
      if let l = n.limiter {
        let share = summary.seconds > 0 ? l.seconds / summary.seconds * 100 : 0
        writeOut(
          "true-peak limiter: up to \(NumberFormat.fixed(l.maxReduction, 1)) dB of gain reduction, more than 0.1 dB for "
            + "\(NumberFormat.fixed(l.seconds, 2)) s (\(NumberFormat.fixed(share, 1)) % of the render); \(l.passes) measuring pass\(l.passes == 1 ? "" : "es")"
        )
      }
    }
    if let loudness = summary.loudness {
      for line in loudness.lines { writeOut(line) }
      if let n = summary.normalization, n.limiter != nil, n.asked.target - loudness.integrated > 0.1 {
        writeOut(
          "the true-peak ceiling holds the output \(NumberFormat.fixed(n.asked.target - loudness.integrated, 1)) LU under the target (a lower target or a higher ceiling reaches it)"
        )
      }
      if let n = summary.normalization, let ceiling = n.asked.truePeakCeiling, loudness.truePeakDecibels > ceiling + 0.005 {
        printError(
          "warning: the output's true peak (\(NumberFormat.fixed(loudness.truePeakDecibels, 2)) dBTP) is over the --true-peak ceiling (\(NumberFormat.fixed(ceiling, 2)) dBTP)"
        )
      }
    }
    writeOut(summary.levelsLine)
    if summary.underruns > 0 {
      printError(
        "warning: the render has \(summary.underruns) underrun\(summary.underruns == 1 ? "" : "s") (a stem's audio did not arrive in time; those frames are silent)"
      )
    }
    // The file is complete, but not the mix asked for: a stem had to be muted (see the warnings).
    return summary.mutedStems.isEmpty ? 0 : renderMutedStatus
  } catch {
    bar.clear()
    printError("error: \(error.naming(sessionPath, as: a.session!).consoleWords)")
    return interruptRequests.load(ordering: .relaxed) != 0 ? 130 : 1
  }
}

/// `render`'s exit status when the file was written but a stem was muted (NaN or infinite
/// samples in its file); 1 is a render that failed, 0 a clean one.
public let renderMutedStatus: Int32 = 3

/// JACK gives a second client of the same name another one (`stemdeck-01`) unless told to use
/// the exact name; scripts, saved connections and patchbay snapshots that say `stemdeck:` then
/// miss it, so it is said on start.
func renamedClientMessage(asked: String, got: String, server: String) -> String? {
  guard asked != got else { return nil }
  return
    "note: a JACK client named '\(asked)' already runs on server '\(server)', so this one is '\(got)' (ports \(got):master_L…); connections saved for '\(asked):' will not reach it. Choose a name with --name NAME"
}

func printErrorNoNewline(_ s: String) {
  Output.write(s, to: 2)
}

/// Signal handler: counts requests; a second SIGINT in script mode exits at once. SIGTERM and
/// SIGHUP also ask an interactive session to end (`terminationSignal`); SIGWINCH only notes that
/// the terminal changed size.
private func handleSignal(_ signal: Int32) {
  if signal == SIGWINCH {
    terminalResized.store(true, ordering: .relaxed)
    return
  }
  if signal == SIGTERM || signal == SIGHUP {
    _ = terminationSignal.compareExchange(expected: 0, desired: signal, ordering: .relaxed)
  }
  let count = interruptRequests.add(1, ordering: .relaxed).newValue
  if count >= 2 && scriptModeForSignals.load(ordering: .relaxed) { _exit(128 + signal) }
  wakeControlLoop()  // delivered to another thread, the signal would not interrupt the loop's poll
}

let scriptModeForSignals = Atomic<Bool>(false)

func runLive(_ a: Arguments) -> Int32 {
  let interactive = a.script == nil && a.commands == nil && isatty(0) != 0
  scriptModeForSignals.store(!interactive, ordering: .relaxed)
  if a.mixer && !interactive {
    printError("error: --mixer opens a full-screen view: it needs a terminal on stdin and no --script or -c")
    return 1
  }
  if a.json && interactive {
    printError("error: --json is for script mode (-c, --script FILE, or commands on a pipe); at the prompt the replies are text")
    return 2
  }
  signal(SIGINT, handleSignal)
  signal(SIGTERM, handleSignal)
  signal(SIGHUP, handleSignal)
  signal(SIGWINCH, handleSignal)
  signal(SIGPIPE, SIG_IGN)
  // A file-size limit (ulimit -f) makes a write fail with EFBIG instead of killing stemdeck:
  // a take then stops growing, stays valid, and the show goes on.
  signal(SIGXFSZ, SIG_IGN)
  // Before the first jack_client_open: libjack's own messages are hidden unless --verbose.
  JackMessages.install(verbose: a.verbose)

  // A session manager (NSM_URL): announce, and wait for the session to open before the JACK
  // client exists, so that the client has the name the manager gives it.
  var nsm: NSMClient?
  var nsmOpen: NSMClient.Open?
  if let url = ProcessInfo.processInfo.environment["NSM_URL"], !url.isEmpty {
    do { nsm = try NSMClient(url: url) } catch {
      printError("error: \(error)")
      return 1
    }
    nsm!.announce(executable: (CommandLine.arguments.first as NSString?)?.lastPathComponent ?? "stemdeck")
    nsmOpen = nsm!.waitForOpen(timeout: 30) { interruptRequests.load(ordering: .relaxed) != 0 }
    if let why = nsm!.refusal {
      printError("warning: the session manager at \(url) refused stemdeck (\(why)); running without it")
      nsm = nil
    } else if nsmOpen == nil {
      printError("error: the session manager at \(url) did not send /nsm/client/open within 30 s")
      return 1
    } else if a.session != nil {
      printError("note: under a session manager the session is \(nsmOpen!.sessionFile); \(a.session!) is not opened")
    }
  }
  defer { nsm?.close() }

  var options = JackDriver.Options()
  options.clientName = nsmOpen?.clientID ?? a.clientName
  options.serverName = a.server
  options.startServer = a.startServer
  options.launch = a.launch
  let driver: JackDriver
  do {
    driver = try JackDriver(options: options) { rate in
      let mixer = Mixer(sampleRate: rate)
      // The master's live loudness (`meters master`); a meter that cannot start leaves it out.
      try? mixer.startLoudnessMeter()
      return mixer
    }
  } catch {
    printError("error: \(error)")
    nsm?.openFailed("stemdeck cannot start its JACK client: \(error)")  // the manager shows why
    return 1
  }
  if let message = driver.startedServerMessage {
    // One line; on a terminal, wrapped at spaces to its width. With --json, stdout holds only JSON.
    if a.json {
      printError(message)
    } else {
      for line in isatty(1) != 0 ? Display.wrapped(message, width: TerminalInfo.columns()) : [message] { writeOut(line) }
    }
  }
  if let problem = driver.launcher?.logProblem { printError("warning: \(terminalSafe(problem))") }
  if let message = renamedClientMessage(asked: a.clientName, got: driver.clientName, server: driver.serverName) {
    // Interactive: a line above the prompt; script mode: stderr, so stdout stays the commands'.
    if interactive {
      for line in isatty(1) != 0 ? Display.wrapped(message, width: TerminalInfo.columns()) : [message] { writeOut(line) }
    } else {
      printError(message)
    }
  }
  // The live session owns the control loop; the console (REPL or script runner) is its front end.
  let live = LiveSession(driver: driver)
  let console = Console(session: live) { writeOut($0) }
  console.interactive = interactive
  console.strict = a.strict
  // The loop's waits block in poll(2) on stdin, the sockets below and a wake-up pipe.
  let loop = ControlLoop()
  console.loop = loop
  var failed = false
  defer {
    live.finishTake(console.handle)
    console.report([], final: true)  // folded events still held back
    // Then fade out, and close the client before freeing the engine.
    live.shutdown()
  }
  console.writeEvent = { writeOut("event: \($0)") }
  // --json: every line on stdout is a JSON object; events as pushes (README, *Control socket*).
  if a.json { console.writeEvent = { writeOut(ControlServer.encode(["push": "event", "text": $0])) } }
  console.idle = {
    console.serviceOnce()
    // A terminal that hangs up while a command runs (a long 'wait') ends it like a signal; the
    // interactive loop then sees the hang-up and leaves.
    if interactive && TerminalInfo.hungUp(0)
      && terminationSignal.compareExchange(expected: 0, desired: SIGHUP, ordering: .relaxed).exchanged
    {
      interruptRequests.add(1, ordering: .relaxed)
    }
  }

  if let nsm, let open = nsmOpen {
    // The manager's folder: its session, or a new one saved there (the reply says which).
    if let failure = nsm.openSession(open, console) { printError("error: \(failure)"); return 1 }
  } else if let session = a.session {
    // With --json, stdout holds only the replies: what opening says goes to stderr.
    let write = console.write
    if a.json { console.write = { printError($0) } }
    defer { console.write = write }
    do { try console.open(session, force: true) } catch {
      printError("error: \(error)")
      return 1
    }
  }
  if a.autoConnect && driver.intendedConnections.isEmpty {
    let connected = live.autoConnectMaster()
    if !connected.isEmpty && interactive { writeOut("connected master to \(connected.joined(separator: ", "))") }
  }
  if a.play {
    do { try live.mixer.play() } catch { printError("error: \(error.consoleWords)"); return 1 }
  }

  // The control socket: requests run through the console between lines and during waits.
  var control: ControlServer?
  if !a.noControl {
    do {
      control = try ControlServer(
        path: a.control ?? ControlServer.defaultPath(client: driver.clientName, server: driver.serverName), makeFolder: a.control == nil)
    } catch {
      // A path asked for must work; the default one failing leaves stemdeck usable without it.
      if a.control != nil { printError("error: \(error)"); return 1 }
      printError("warning: \(error); running without a control socket")
    }
  }
  defer { control?.close() }
  if let control {
    let serviceEngine = console.idle
    console.idle = {
      serviceEngine()
      control.service(console)
    }
    console.eventObservers.append { control.push($0) }
    loop.sources.append { control.interest(&$0) }
  }
  // The OSC server: served the same way, after the control socket.
  var osc: OSCServer?
  if let port = a.oscPort {
    let host = a.oscHost ?? "127.0.0.1"
    do { osc = try OSCServer(host: host, port: port) } catch {
      printError("error: \(error)")
      return 1
    }
    if host != "127.0.0.1" && host != "::1" && host != "localhost" {
      printError(
        "warning: OSC listens on \(host):\(port): anyone who can reach it can drive this mixer (there is no authentication in OSC)")
    }
  }
  defer { osc?.close() }
  if let osc {
    let serviceBefore = console.idle
    console.idle = {
      serviceBefore()
      osc.service(console)
    }
    console.eventObservers.append { osc.push($0) }
    loop.sources.append { osc.interest(&$0) }
  }

  if let nsm {
    let serviceBefore = console.idle
    console.idle = {
      serviceBefore()
      nsm.service(console)
    }
    loop.sources.append { nsm.interest(&$0) }
    console.idle()
  }

  if interactive {
    return runInteractive(console, openMixer: a.mixer)
  }
  if nsm != nil && a.script == nil && a.commands == nil {
    return runHeadless(console)
  }

  // Script mode: -c, --script FILE, or stdin.
  var lines: AnyIterator<String>
  if let commands = a.commands {
    lines = AnyIterator([commands].makeIterator())
  } else if let script = a.script {
    guard let text = try? String(contentsOfFile: script, encoding: .utf8) else {
      printError("error: cannot read script '\(script)'")
      return 1
    }
    lines = AnyIterator(text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).makeIterator())
  } else {
    // Standard input is polled with the sockets (ControlLoop), so the engine keeps being served
    // (events, reconnects, routing, auto-pause) while the script is waiting for its next line,
    // and a line or a socket request is served the moment it arrives.
    let reader = InputLines()
    lines = AnyIterator {
      while true {
        // Waits for a line (or a socket request, or a wake-up) up to 10 ms, then serves the engine.
        switch reader.next(loop, waitingUpTo: 0.01) {
        case .line(let l): return l
        case .end: return nil
        case .none:
          console.idle()
          if console.quitRequested { return nil }  // 'quit' over the control socket
          if interruptRequests.load(ordering: .relaxed) != 0 && scriptModeForSignals.load(ordering: .relaxed) { return nil }
        }
      }
    }
  }
  let startInterrupts = interruptRequests.load(ordering: .relaxed)
  var replies = 0
  while let line = lines.next() {
    console.idle()
    if interruptRequests.load(ordering: .relaxed) != startInterrupts { failed = true; break }
    if a.json {
      if !runJSON(line, console, keepGoing: a.keepGoing, count: &replies) {
        failed = true
        if !a.keepGoing { break }
      }
    } else if !console.execute(line: line, stopOnError: !a.keepGoing) {
      failed = true
      if !a.keepGoing { break }
    }
    if console.quitRequested || Output.stdoutLost { break }
  }
  console.idle()
  if Output.stdoutLost {
    printError("error: standard output is gone (the reader went away); stopping the script")
    return 1
  }
  if interruptRequests.load(ordering: .relaxed) != startInterrupts {
    printError("interrupted: stopping cleanly")
    return 130
  }
  return failed ? 1 : 0
}

/// `--json` script mode: each command of `line` runs as a control socket request and its reply
/// object is printed on one line, `id` counting the commands from 1 (as `ctl` numbers them).
/// Returns false when a command failed (the rest of the line is then not run, unless `keepGoing`).
func runJSON(_ line: String, _ console: Console, keepGoing: Bool, count: inout Int) -> Bool {
  let commands: [[String]]
  do { commands = try Tokenizer.commands(in: line) } catch {
    count += 1
    let (message, hint) = QueryJSON.split("\(error)")
    var reply: [String: Any] = ["id": count, "ok": false, "error": message]
    if let hint { reply["hint"] = hint }
    writeOut(ControlServer.encode(reply))
    return false
  }
  var ok = true
  for words in commands {
    if console.quitRequested || Output.stdoutLost { break }
    count += 1
    var reply = console.remoteReply(to: commandLine(words))
    reply["id"] = count
    writeOut(ControlServer.encode(reply))
    if reply["ok"] as? Bool != true {
      ok = false
      if !keepGoing { break }
    }
  }
  return ok
}

/// Without a terminal under a session manager: no input of its own; the control socket, OSC and
/// the manager drive it, until `quit` (from the socket) or SIGTERM (how a manager ends a client).
/// Unsaved changes then go to the autosave file, as in the other modes.
func runHeadless(_ console: Console) -> Int32 {
  while !console.quitRequested && terminationSignal.load(ordering: .relaxed) == 0 && interruptRequests.load(ordering: .relaxed) == 0 {
    console.idle()
    console.pauseForWork(0.01)  // woken at once by a request on a socket
  }
  console.live.finishTake(console.handle)
  if !console.quitRequested, let message = console.autosaveNow() { printError("stemdeck: stopping; \(message)") }
  return 0
}

/// The interactive console: libedit reads each line (its keys, history, Ctrl-R, completion),
/// events are printed above the prompt, and the loop keeps serving the engine.
///
/// It ends with `quit` or Ctrl-D (both refuse while there are unsaved changes), and on SIGTERM,
/// SIGHUP or a terminal that went away (a hang-up, EOF or EIO on it): then unsaved changes are
/// written to the autosave file first, and it says so on stderr where it can. Returns the exit
/// status (128 + the signal when one ended it).
func runInteractive(_ console: Console, openMixer: Bool = false) -> Int32 {
  TerminalInfo.setUTF8Locale()  // before libedit starts, or it drops non-ASCII input
  writeOut("stemdeck — type 'help' for commands, 'quit' or Ctrl-D to leave")
  let history = StatePaths.stateDirectory() + "/history"
  let editor = LineEditor(prompt: "stemdeck> ", historyPath: history)
  editor.completer = { words, partial in Completion.candidates(console: console, words: words, partial: partial) }
  // Every line fits the terminal: tables and meters are fitted by the commands, and any other
  // long line (an error, a warning, an event) is wrapped at spaces rather than anywhere.
  let columns = { max(20, TerminalInfo.columns()) }
  console.terminalColumns = columns
  console.write = { line in for l in Display.wrapped(line, width: columns()) { editor.printAbove(l) } }
  console.writeEvent = { line in for l in Display.wrapped("* " + line, width: columns()) { editor.printAbove(l) } }
  var seenInterrupts = interruptRequests.load(ordering: .relaxed)
  var ending: (reason: String, status: Int32)?
  func endingReason() -> (reason: String, status: Int32)? {
    switch terminationSignal.load(ordering: .relaxed) {
    case SIGTERM: return ("SIGTERM", 128 + SIGTERM)
    case SIGHUP: return ("SIGHUP (the terminal hung up)", 128 + SIGHUP)
    default: return Output.stdoutLost ? ("the terminal went away", 128 + SIGHUP) : nil
    }
  }
  if openMixer, let error = MixerView.run(console) { console.write("error: \(error)") }
  if !console.quitRequested { editor.start() }
  while !console.quitRequested {
    if let why = endingReason() { ending = why; break }
    if terminalResized.exchange(false, ordering: .relaxed) { editor.resize() }
    // Keys, socket requests and wake-ups end the wait at once (ControlLoop); else every 30 ms.
    let revents =
      console.loop.map { $0.wait(timeout: 0.03, input: 0) }
      ?? {
        var fds = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
        return poll(&fds, 1, 30) > 0 ? fds.revents : 0
      }()
    if revents != 0 {
      // A terminal that went away reads as a hang-up, an error, or "readable" with nothing to
      // read (EOF, EIO): end rather than spin on it.
      var waiting: Int32 = 0
      let gone =
        revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0
        || ioctl(0, UInt(FIONREAD), &waiting) != 0 || waiting <= 0
      if gone { ending = endingReason() ?? ("the terminal went away", 128 + SIGHUP); break }
      editor.readCharacter()
    }
    let interrupts = interruptRequests.load(ordering: .relaxed)
    if interrupts != seenInterrupts {
      seenInterrupts = interrupts
      if endingReason() != nil { continue }
      editor.cancelLine()
    }
    // While commands run, keys typed ahead are kept for the next prompt, neither echoed by the
    // terminal (they would show twice: once now, once in the next line) nor edited by the
    // kernel's line discipline (Ctrl-R, Ctrl-W…); Ctrl-C still interrupts. The terminal's own
    // settings come back before libedit takes it again.
    let typeahead = editor.pendingLines.isEmpty ? nil : TerminalInfo.holdTypeahead(0)
    while !editor.pendingLines.isEmpty {
      let item = editor.pendingLines.removeFirst()
      guard let line = item else {
        // Ctrl-D: like quit (refuses with unsaved changes).
        Output.write("\n")
        if !console.execute(line: "quit") { console.write("(Ctrl-D again after saving, or type quit!)") }
        continue
      }
      if !line.trimmingSpaces().isEmpty, let warning = editor.addHistory(line) { console.write("warning: \(warning)") }
      console.execute(line: line)
      // Ctrl-C ended a command (a wait): say so; the prompt goes below it.
      if interruptRequests.load(ordering: .relaxed) != seenInterrupts && endingReason() == nil { Output.write("^C\n") }
      seenInterrupts = interruptRequests.load(ordering: .relaxed)
      if console.watchRequested {
        console.watchRequested = false
        MeterView.run(console)
      }
      if console.mixerRequested {
        console.mixerRequested = false
        if let error = MixerView.run(console) { console.write("error: \(error)") }
      }
      if console.quitRequested { break }
    }
    if var settings = typeahead { tcsetattr(0, TCSANOW, &settings) }
    if !console.quitRequested && endingReason() == nil { editor.start() }
    console.idle()
  }
  if ending != nil && editor.active { Output.write("\n") }  // leave the prompt's line
  editor.close()
  guard let ending else { return 0 }
  // A take in progress is finished (it becomes a stem), then the unsaved changes, the take
  // included, go to the autosave file before anything else can go wrong.
  console.live.finishTake(console.handle)
  let message = console.autosaveNow()
  printError("stemdeck: \(ending.reason): stopping" + (message.map { "; \($0)" } ?? ""))
  return ending.status
}
