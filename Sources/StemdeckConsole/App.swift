import CEditLine
import Foundation
import StemdeckControl
import StemdeckEngine
import StemdeckJack
import StemdeckSession
import Synchronization

/// The command line, parsed.
public struct Arguments: Equatable, Sendable {
  public enum Mode: Equatable, Sendable { case live, render, help, version }
  public var mode: Mode = .live
  public var session: String?
  public var server: String?
  public var clientName = "stemdeck"
  public var startServer = true
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

  public static func parse(_ args: [String]) throws(CommandError) -> Arguments {
    var a = Arguments()
    var rest = args[...]
    if rest.first == "render" { a.mode = .render; rest = rest.dropFirst() }
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
      case "--no-start-server": a.startServer = false
      case "--script": a.script = try value(arg)
      case "-c", "--commands": a.commands = try value(arg)
      case "--keep-going", "-k": a.keepGoing = true
      case "--play": a.play = true
      case "--strict": a.strict = true
      case "--no-connect": a.autoConnect = false
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
            throw CommandError("--from must be a time: seconds (90, 90s, 500ms), m:ss (1:30) or 'start' (got '\(ValueParser.printable(v))')")
          }
        }
      case "--sample-rate", "-r":
        let v = try value(arg)
        a.sampleRate = try ValueParser.integer(v, "--sample-rate")
      default:
        if arg.hasPrefix("-") && arg.count > 1 { throw CommandError("unknown option '\(ValueParser.printable(arg))' (see stemdeck --help)") }
        guard a.session == nil else { throw CommandError("more than one session file given ('\(a.session!)' and '\(arg)')") }
        a.session = arg
      }
    }
    if a.mode == .render {
      guard a.session != nil else { throw CommandError("render: which session? usage: stemdeck render SESSION --output FILE") }
      guard a.output != nil else { throw CommandError("render: --output FILE is required (.wav, .flac or .aiff)") }
    }
    return a
  }

  public static let usage = """
    stemdeck — a multi-track stem mixer console for JACK

    usage:
      stemdeck [SESSION] [options]          open SESSION live (interactive on a terminal, script mode otherwise)
      stemdeck render SESSION --output FILE [--from TIME] [--duration SECONDS] [--sample-rate HZ]

    live options:
      --server NAME, -s NAME   JACK server (default: $JACK_DEFAULT_SERVER, else "default")
      --name CLIENT, -n CLIENT JACK client name (default: stemdeck)
      --no-start-server        do not start a JACK server when none is running
      --no-connect             do not connect the master to the system outputs
      --play                   start playing once the session is open
      --strict                 refuse to open a session whose audio files are missing
                               (default: open the rest, list those stems as offline)
      --script FILE            run commands from FILE (script mode)
      -c 'CMD; CMD'            run these commands (script mode)
      --keep-going, -k         in script mode, continue after a failed command (exit status is still 1)

    render options:
      --output FILE, -o FILE   .wav (32-bit float), .flac or .aiff (24-bit)
      --from TIME              start at this transport time (90, 1:30, or 'start'; default: the
                               position saved in the session)
      --duration SECONDS       default: to the end of the longest finite stem (required if a stem
                               loops forever)
      --sample-rate HZ         default: 48000

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
  case .live: return runLive(arguments)
  }
}

/// Writes a line to stdout unbuffered, so output interleaves correctly with events and stderr.
func writeOut(_ s: String) {
  FileHandle.standardOutput.write((s + "\n").data(using: .utf8)!)
}

func printError(_ s: String) {
  FileHandle.standardError.write((s + "\n").data(using: .utf8)!)
}

func runRender(_ a: Arguments) -> Int32 {
  let sessionPath = Console.absolutePath(a.session!)
  let session: Session
  do { session = try SessionFile.load(path: sessionPath) } catch {
    printError("error: \(error.description.replacingOccurrences(of: sessionPath, with: a.session!))")
    return 1
  }
  let showProgress = isatty(2) != 0
  do {
    let summary = try OfflineRenderer.render(
      session: session, sessionPath: sessionPath, outputPath: a.output!, duration: a.duration,
      from: a.from, sampleRate: a.sampleRate
    ) { fraction in
      guard showProgress else { return }
      let width = 40
      let filled = Int(fraction * Double(width))
      printErrorNoNewline("\r[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "] \(Int(fraction * 100))%")
    }
    if showProgress { printErrorNoNewline("\r\u{1B}[K") }
    writeOut("rendered \(a.output!): \(NumberFormat.time(summary.seconds)) at \(summary.sampleRate) Hz, stereo"
      + (summary.start > 0 ? ", from \(NumberFormat.time(summary.start))" : ""))
    func db(_ v: Double) -> String { NumberFormat.fixed(Decibels.fromAmplitude(v), 1) }
    writeOut("peak L \(db(summary.peak.left)) dB, R \(db(summary.peak.right)) dB; RMS L \(db(summary.rms.left)) dB, R \(db(summary.rms.right)) dB; clipped samples \(summary.clippedSamples)")
    if summary.underruns > 0 {
      printError("warning: the render has \(summary.underruns) underrun\(summary.underruns == 1 ? "" : "s") (a stem's audio did not arrive in time; those frames are silent)")
    }
    return 0
  } catch {
    printError("error: \(error.message.replacingOccurrences(of: sessionPath, with: a.session!))")
    return 1
  }
}

func printErrorNoNewline(_ s: String) {
  FileHandle.standardError.write(s.data(using: .utf8)!)
}

/// Signal handler: counts requests; a second SIGINT in script mode exits at once.
private func handleSignal(_ signal: Int32) {
  let count = interruptRequests.add(1, ordering: .relaxed).newValue
  if count >= 2 && scriptModeForSignals.load(ordering: .relaxed) { _exit(128 + signal) }
}

let scriptModeForSignals = Atomic<Bool>(false)

func runLive(_ a: Arguments) -> Int32 {
  let interactive = a.script == nil && a.commands == nil && isatty(0) != 0
  scriptModeForSignals.store(!interactive, ordering: .relaxed)
  signal(SIGINT, handleSignal)
  signal(SIGTERM, handleSignal)
  signal(SIGHUP, handleSignal)
  signal(SIGPIPE, SIG_IGN)
  // A file-size limit (ulimit -f) makes a write fail with EFBIG instead of killing stemdeck:
  // a take then stops growing, stays valid, and the show goes on.
  signal(SIGXFSZ, SIG_IGN)

  var options = JackDriver.Options()
  options.clientName = a.clientName
  options.serverName = a.server
  options.startServer = a.startServer
  let driver: JackDriver
  do {
    driver = try JackDriver(options: options) { rate in Mixer(sampleRate: rate) }
  } catch {
    printError("error: \(error)")
    return 1
  }
  if let message = driver.startedServerMessage { writeOut(message) }
  let console = Console(driver: driver) { writeOut($0) }
  console.interactive = interactive
  console.strict = a.strict
  var failed = false
  defer {
    // A take in progress is stopped and finished while the client still runs (the renderer
    // lets go of it within a period), so the file is complete even if closing the client is
    // what kills the process. Then fade out, and close the client before freeing the engine.
    if driver.mixer.recordingStatus != nil, (try? driver.mixer.stopRecording()) != nil {
      let deadline = Date().addingTimeInterval(1)
      while driver.mixer.recordingStatus != nil && Date() < deadline {
        for line in driver.poll() { console.writeEvent(line) }
        usleep(2_000)
      }
    }
    try? driver.mixer.pause()
    usleep(30_000)
    driver.shutdown()
    driver.mixer.shutdown()
  }
  console.writeEvent = { writeOut("event: \($0)") }
  console.idle = {
    for line in driver.poll() { console.writeEvent(line) }
    console.periodic()
  }

  if let session = a.session {
    do { try console.open(session, force: true) } catch {
      printError("error: \(error)")
      return 1
    }
  }
  if a.autoConnect && driver.intendedConnections.isEmpty {
    let physical = (try? driver.ports(matching: nil))?.filter { $0.isPhysical && $0.isInput && $0.isAudio } ?? []
    for (mine, peer) in zip(["master_L", "master_R"], physical.prefix(2)) {
      try? driver.connect(mine, peer.name)
    }
    if !physical.isEmpty && interactive { writeOut("connected master to \(physical.prefix(2).map(\.name).joined(separator: ", "))") }
    driver.mixer.markSaved()
  }
  if a.play {
    do { try driver.mixer.play() } catch { printError("error: \(error)"); return 1 }
  }

  if interactive {
    runInteractive(console, driver: driver)
    return 0
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
    // Standard input is read on its own thread, so the engine keeps being served (events,
    // reconnects, routing, auto-pause) while the script is waiting for its next line.
    let reader = LineReader()
    lines = AnyIterator {
      while true {
        // Waits for a line up to 10 ms (woken the moment one arrives, so a command reaches the
        // engine at once; it used to sleep 10 ms between looks: up to 4 periods at 128 frames),
        // then serves the engine.
        switch reader.next(waitingUpTo: 0.01) {
        case .line(let l): return l
        case .end: return nil
        case .none:
          console.idle()
          if interruptRequests.load(ordering: .relaxed) != 0 && scriptModeForSignals.load(ordering: .relaxed) { return nil }
        }
      }
    }
  }
  let startInterrupts = interruptRequests.load(ordering: .relaxed)
  while let line = lines.next() {
    console.idle()
    if interruptRequests.load(ordering: .relaxed) != startInterrupts { failed = true; break }
    if !console.execute(line: line, stopOnError: !a.keepGoing) {
      failed = true
      if !a.keepGoing { break }
    }
    if console.quitRequested { break }
  }
  console.idle()
  if interruptRequests.load(ordering: .relaxed) != startInterrupts {
    printError("interrupted: stopping cleanly")
    return 130
  }
  return failed ? 1 : 0
}

func runInteractive(_ console: Console, driver: JackDriver) {
  writeOut("stemdeck — type 'help' for commands, 'quit' or Ctrl-D to leave")
  let history = StatePaths.stateDirectory() + "/history"
  let editor = LineEditor(prompt: "stemdeck> ", historyPath: history)
  editor.completer = { words, partial in Completion.candidates(console: console, words: words, partial: partial) }
  console.write = { line in editor.printAbove(line) }
  console.writeEvent = { line in editor.printAbove("* " + line) }
  var seenInterrupts = interruptRequests.load(ordering: .relaxed)
  while !console.quitRequested {
    var fds = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
    let ready = poll(&fds, 1, 30)
    if ready > 0 { editor.readCharacter() }
    let interrupts = interruptRequests.load(ordering: .relaxed)
    if interrupts != seenInterrupts { seenInterrupts = interrupts; editor.cancelLine() }
    while !editor.pendingLines.isEmpty {
      let item = editor.pendingLines.removeFirst()
      guard let line = item else {
        // Ctrl-D: like quit (refuses with unsaved changes).
        FileHandle.standardOutput.write("\n".data(using: .utf8)!)
        if !console.execute(line: "quit") { console.write("(Ctrl-D again after saving, or type quit!)") }
        break
      }
      if !line.trimmingSpaces().isEmpty { editor.addHistory(line) }
      console.execute(line: line)
      seenInterrupts = interruptRequests.load(ordering: .relaxed)
      if console.watchRequested {
        console.watchRequested = false
        MeterView.run(console)
        rl_forced_update_display()
      }
      if console.quitRequested { break }
    }
    console.idle()
  }
  editor.close()
}

/// Reads standard input line by line on a background thread.
final class LineReader: @unchecked Sendable {
  enum Item { case line(String), end, none }
  private let condition = NSCondition()
  private var queue: [String] = []
  private var finished = false

  init() {
    let t = Thread { [self] in
      while let line = readLine(strippingNewline: true) {
        condition.withLock { queue.append(line); condition.signal() }
      }
      condition.withLock { finished = true; condition.signal() }
    }
    t.name = "stemdeck-stdin"
    t.start()
  }

  /// The next line, `.end` at end of input, or `.none` when nothing arrived within `seconds`.
  func next(waitingUpTo seconds: Double) -> Item {
    condition.withLock {
      if queue.isEmpty && !finished { _ = condition.wait(until: Date().addingTimeInterval(seconds)) }
      if !queue.isEmpty { return .line(queue.removeFirst()) }
      return finished ? .end : .none
    }
  }
}
