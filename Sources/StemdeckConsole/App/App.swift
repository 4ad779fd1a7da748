import CEditLine
import Foundation
import StemdeckAudioFile
import StemdeckControl
import StemdeckEngine
import StemdeckJack
import StemdeckSession
import StemdeckText
import StemdeckVersion
import Synchronization
import StemdeckMixerView
import StemdeckRemote
import StemdeckLive

/// Runs stemdeck with `args` (without the program name); returns the exit status.
public func runStemdeck(_ args: [String]) -> Int32 {
  // The hidden `__lv2-probe` subcommand (a plugin tried in a child process), or arm it.
  if let status = PluginProbe.handle(args) { return status }
  let arguments: Arguments
  let config: ConfigFile
  do { (arguments, config) = try Arguments.parse(args, environment: ProcessInfo.processInfo.environment) } catch {
    printError("error: \(error)")
    return 2
  }
  // `color = never` in the configuration is NO_COLOR for every part (and what stemdeck starts).
  if !arguments.color { setenv("NO_COLOR", "1", 1) }
  switch arguments.mode {
  case .help: writeOut(Arguments.help(arguments.helpTopic)); return 0
  case .version: writeOut("stemdeck \(StemdeckVersion.string)"); return 0
  case .render: return runRender(arguments)
  case .analyze: return analyzesAudioFiles(arguments) ? runAnalyzeFiles(arguments) : runRender(arguments)
  case .ctl: return runCtl(arguments)
  case .config:
    for line in arguments.configReport(config, commandLine: args, environment: ProcessInfo.processInfo.environment) { writeOut(line) }
    return 0
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

/// Signals for `render` and `analyze`: Ctrl-C or SIGTERM stops them between blocks (a second
/// Ctrl-C ends at once); SIGXFSZ and SIGPIPE become write errors.
func installOfflineSignalHandlers() {
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
}

/// Signals for the live console: Ctrl-C interrupts a command (twice ends a script at once);
/// SIGTERM and SIGHUP end the session after an autosave; SIGWINCH resizes; SIGPIPE and SIGXFSZ
/// become write errors.
func installLiveSignalHandlers(scriptMode: Bool) {
  scriptModeForSignals.store(scriptMode, ordering: .relaxed)
  signal(SIGINT, handleSignal)
  signal(SIGTERM, handleSignal)
  signal(SIGHUP, handleSignal)
  signal(SIGWINCH, handleSignal)
  signal(SIGPIPE, SIG_IGN)
  // A file-size limit (ulimit -f) makes a write fail with EFBIG instead of killing stemdeck:
  // a take then stops growing, stays valid, and the show goes on.
  signal(SIGXFSZ, SIG_IGN)
}

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
func runInteractive(_ console: Console, openMixer: Bool = false, historySize: Int = 2000) -> Int32 {
  TerminalInfo.setUTF8Locale()  // before libedit starts, or it drops non-ASCII input
  writeOut("stemdeck — type 'help' for commands, 'quit' or Ctrl-D to leave")
  // What other programs reach: said once, short (a socket's path seldom fits the line; `status`
  // gives it).
  if console.listening.control != nil { writeOut("listening: control socket for stemdeck ctl ('status' shows its path)") }
  if let osc = console.listening.osc { writeOut("listening: OSC on UDP \(osc)") }
  let history = StatePaths.stateDirectory() + "/history"
  let editor = LineEditor(prompt: "stemdeck> ", historyPath: history, historySize: historySize)
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
  /// Ctrl-C (or a signal) since the last look: forgets the half-typed line for a fresh prompt.
  /// True when the loop should look again from the top (the session may be ending).
  func cancelOnInterrupt() -> Bool {
    let interrupts = interruptRequests.load(ordering: .relaxed)
    guard interrupts != seenInterrupts else { return false }
    seenInterrupts = interrupts
    if endingReason() == nil { editor.cancelLine() }
    return true
  }
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
      // Ctrl-C first: a key that arrived after it (a paste right behind it) belongs to the
      // fresh line, not to the line Ctrl-C forgets. The kernel sends SIGINT as it reads the
      // Ctrl-C, before the bytes behind it, and wakes this thread for it, so the count is
      // already up when those bytes are readable.
      if cancelOnInterrupt() { continue }
      editor.readCharacter()
    }
    if cancelOnInterrupt() { continue }
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
      // As in a script: the commands after a failed one on the line are not run (it says which).
      console.execute(line: line, stopOnError: true, sayingSkipped: true)
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
