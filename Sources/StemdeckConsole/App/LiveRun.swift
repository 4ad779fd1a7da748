import Foundation
import StemdeckControl
import StemdeckJack
import StemdeckSession
import StemdeckText
import Synchronization
import StemdeckMixerView
import StemdeckRemote
import StemdeckLive

// `stemdeck [SESSION]`, the live console, as wiring: a session manager joined if one calls, the
// session file checked, the JACK client started, the live session and its console made, the
// session opened, the front ends attached (FrontEnd.swift), then the REPL, the headless loop
// under a session manager, or a script (docs/architecture.md, *The console*).

/// Ends a live run early with an exit status (its message already said).
struct ExitStatus: Error {
  let code: Int32
}

func runLive(_ a: Arguments) -> Int32 {
  let interactive = a.script == nil && a.commands == nil && isatty(0) != 0
  if a.mixer && !interactive {
    printError("error: --mixer opens a full-screen view: it needs a terminal on stdin and no --script or -c")
    return 1
  }
  if a.json && interactive {
    printError("error: --json is for script mode (-c, --script FILE, or commands on a pipe); at the prompt the replies are text")
    return 2
  }
  installLiveSignalHandlers(scriptMode: !interactive)
  // Before the first jack_client_open: libjack's own messages are hidden unless --verbose.
  JackMessages.install(verbose: a.verbose)
  do throws(ExitStatus) {
    let (nsm, nsmOpen) = try joinSessionManager(a)
    defer { nsm?.close() }
    // The session file is read (and checked) before JACK is started or joined: a mistyped name
    // must not start a server, and take the sound card, only to say "no such file".
    if nsm == nil, let session = a.session {
      let absolute = Console.absolutePath(session)
      do { _ = try SessionFile.load(path: absolute) } catch {
        printError("error: \(error.naming(session, for: absolute))")
        return 1
      }
    }
    let driver = try startDriver(a, clientName: nsmOpen?.clientID ?? a.clientName, interactive: interactive, nsm: nsm)
    // The live session owns the mixer and the control loop, and is the driver's host; the console
    // (REPL or script runner) is its front end.
    let live = try startLiveSession(driver, nsm: nsm)
    live.autoConnect = a.autoConnect
    if let seconds = a.autosave { live.autosaveInterval = seconds }
    let console = makeConsole(a, live, interactive: interactive)
    defer {
      live.finishTake(console.handle)
      console.report([], final: true)  // folded events still held back
      // Then fade out, and close the client before freeing the engine.
      live.shutdown()
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
      do { try live.mixer.transport.play() } catch { printError("error: \(error.consoleWords)"); return 1 }
    }
    let frontEnds = try openFrontEnds(a, console, driver)
    defer { for frontEnd in frontEnds.reversed() { frontEnd.close() } }
    if let nsm {
      console.attach(nsm)
      console.idle()
    }
    if interactive { return runInteractive(console, openMixer: a.mixer, historySize: a.historySize) }
    if nsm != nil && a.script == nil && a.commands == nil { return runHeadless(console) }
    return runScript(a, console)
  } catch {
    return error.code
  }
}

/// A session manager (NSM_URL): announce, and wait for the session to open before the JACK
/// client exists, so that the client has the name the manager gives it. (nil, nil) without one.
/// A manager that stays silent is said after 2 s; one that refuses stemdeck is run without; every
/// other end of the wait says what went wrong and exits (docs/remote-control.md).
func joinSessionManager(_ a: Arguments) throws(ExitStatus) -> (NSMClient?, NSMClient.Open?) {
  guard let url = ProcessInfo.processInfo.environment["NSM_URL"], !url.isEmpty else { return (nil, nil) }
  let nsm: NSMClient
  do { nsm = try NSMClient(url: url) } catch {
    printError("error: \(error)")
    throw ExitStatus(code: 1)
  }
  let shownURL = printableText(url)
  nsm.announce(executable: (CommandLine.arguments.first as NSString?)?.lastPathComponent ?? "stemdeck")
  let joining = nsm.waitForOpen(timeout: 30, slowAfter: 2) {
    let what = nsm.managerName.map { "the session manager '\(printableText($0))' answered but has sent no /nsm/client/open" }
    printError("note: \(what ?? "no answer yet from the session manager at \(shownURL) (NSM_URL)"); waiting up to 30 s")
  } interrupted: {
    interruptRequests.load(ordering: .relaxed) != 0
  }
  func fail(_ message: String, code: Int32 = 1) throws(ExitStatus) -> Never {
    printError(message)
    nsm.close()
    throw ExitStatus(code: code)
  }
  switch joining {
  case .opened(let open):
    if let session = a.session { printError("note: under a session manager the session is \(open.sessionFile); \(session) is not opened") }
    return (nsm, open)
  case .announceRefused(let why):
    printError("warning: the session manager at \(shownURL) refused stemdeck (\(printableText(why))); running without it")
    nsm.close()
    return (nil, nil)
  case .openRefused(let message):
    try fail("error: stemdeck refused the session manager's /nsm/client/open (and told it why): \(message)")
  case .unreachable(let problem):
    try fail(
      "error: no session manager listens at \(shownURL) (NSM_URL): \(problem); "
        + "is the manager that set NSM_URL still running? Unset NSM_URL to run stemdeck without one")
  case .timedOut:
    let who = nsm.managerName.map { "the session manager '\(printableText($0))' at \(shownURL)" } ?? "the session manager at \(shownURL)"
    try fail(
      nsm.managerName == nil
        ? "error: \(who) (NSM_URL) did not answer stemdeck's announce within 30 s"
        : "error: \(who) answered stemdeck's announce but sent no /nsm/client/open within 30 s")
  case .interrupted:
    let signal = terminationSignal.load(ordering: .relaxed)
    try fail("stemdeck: stopped while waiting for the session manager at \(shownURL)", code: 128 + (signal != 0 ? signal : SIGINT))
  }
}

/// The mixer made at the server's rate, and the live session that owns it and runs it on
/// `driver` (its ports registered, its client activated).
func startLiveSession(_ driver: JackDriver, nsm: NSMClient?) throws(ExitStatus) -> LiveSession {
  let mixer = Mixer(sampleRate: Double(driver.sampleRate))
  // The master's live loudness (`meters master`); a meter that cannot start leaves it out.
  try? mixer.loudness.start()
  do { return try LiveSession(driver: driver, mixer: mixer) } catch {
    printError("error: \(error.consoleWords)")
    nsm?.openFailed("stemdeck cannot start its JACK client: \(error.consoleWords)")
    driver.shutdown()
    mixer.shutdown()
    throw ExitStatus(code: 1)
  }
}

/// The JACK client (a server started if asked and none runs), and what its start has to say:
/// a server started, a problem with its log, a client name JACK changed.
func startDriver(_ a: Arguments, clientName: String, interactive: Bool, nsm: NSMClient?) throws(ExitStatus) -> JackDriver {
  var options = JackDriver.Options()
  options.clientName = clientName
  options.serverName = a.server
  options.startServer = a.startServer
  options.launch = a.launch
  options.serverSettings = a.serverSettings
  let driver: JackDriver
  do { driver = try JackDriver(options: options) } catch {
    printError("error: \(error.consoleWords)")
    nsm?.openFailed("stemdeck cannot start its JACK client: \(error.consoleWords)")  // the manager shows why
    throw ExitStatus(code: 1)
  }
  /// One line; on a terminal, wrapped at spaces to its width.
  func say(_ message: String) {
    for line in isatty(1) != 0 ? Display.wrapped(message, width: TerminalInfo.columns()) : [message] { writeOut(line) }
  }
  if let message = driver.startedServerMessage {
    // With --json, stdout holds only JSON.
    if a.json { printError(message) } else { say(message) }
  }
  if let problem = driver.launcher?.logProblem { printError("warning: \(terminalSafe(problem))") }
  // Under a session manager the name asked is its client id, not --name (NSMClient+Join.swift).
  let rename = nsm == nil ? renamedClientMessage : NSMClient.renamedClientMessage
  if let message = rename(options.clientName, driver.clientName, driver.serverName) {
    // Interactive: a line above the prompt; script mode: stderr, so stdout stays the commands'.
    if interactive { say(message) } else { printError(message) }
  }
  return driver
}

/// The console over `live`: its mode, its events' output, and its service step (the engine,
/// a terminal that hung up, then the front ends).
func makeConsole(_ a: Arguments, _ live: LiveSession, interactive: Bool) -> Console {
  let console = Console(session: live) { writeOut($0) }
  console.interactive = interactive
  if interactive {
    // The `events` choice of the last interactive run, said when it hides something.
    let path = Console.defaultEventsChoicePath()
    console.eventsChoicePath = path
    if let kept = Console.loadEventsChoice(from: path), kept != Set(EventGate.Class.allCases) {
      console.eventGate.shown = kept
      let hidden = EventGate.Class.allCases.filter { !kept.contains($0) }.map(\.rawValue)
      writeOut("events hidden since the last run: \(hidden.joined(separator: ", ")) ('events on' shows them all)")
    }
  }
  console.strict = a.strict
  // The loop's waits block in poll(2) on stdin, the front ends' sockets and a wake-up pipe.
  console.loop = ControlLoop()
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
    console.serviceFrontEnds()
  }
  return console
}

/// The control socket (unless `--no-control`) and the OSC server (`--osc PORT`), attached to the
/// console in that order: requests run through it between lines and during waits.
func openFrontEnds(_ a: Arguments, _ console: Console, _ driver: JackDriver) throws(ExitStatus) -> [any FrontEnd] {
  var opened: [any FrontEnd] = []
  if !a.noControl {
    do {
      let control = try ControlServer(
        path: a.control ?? ControlServer.defaultPath(client: driver.clientName, server: driver.serverName), makeFolder: a.control == nil)
      opened.append(control)
      console.listening.control = control.path
    } catch {
      // A path asked for must work; the default one failing leaves stemdeck usable without it.
      if a.control != nil { printError("error: \(error)"); throw ExitStatus(code: 1) }
      printError("warning: \(error); running without a control socket")
    }
  }
  if let port = a.oscPort {
    let host = a.oscHost ?? "127.0.0.1"
    let server: OSCServer
    do { server = try OSCServer(host: host, port: port) } catch {
      printError("error: \(error)")
      for frontEnd in opened { frontEnd.close() }
      throw ExitStatus(code: 1)
    }
    opened.append(server)
    console.oscAllowsAll = a.oscAllowsAll
    if !server.isLoopback {
      printError(
        "warning: OSC listens on \(host):\(port): anyone who can reach it can drive this mixer (there is no authentication in OSC)"
          + (a.oscAllowsAll ? ", and --osc-allow all lets them save, open and quit" : ""))
    }
    console.listening.osc = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
  }
  if let port = a.httpPort {
    do { opened.append(try openWebMixer(host: a.httpHost ?? "127.0.0.1", port: port)) } catch {
      printError("error: \(error)")
      for frontEnd in opened { frontEnd.close() }
      throw ExitStatus(code: 1)
    }
  }
  for frontEnd in opened { console.attach(frontEnd) }
  return opened
}

/// Script mode: `-c`, `--script FILE`, or standard input; each line as the REPL runs it (or, with
/// `--json`, as control socket requests). Stops at the first failure unless `--keep-going`.
func runScript(_ a: Arguments, _ console: Console) -> Int32 {
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
    let loop = console.loop ?? ControlLoop()
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
  var failed = false
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

/// The web mixer of `--http PORT --http-host ADDR`, started, and its address said on stderr (with
/// the token when one is needed: the page reads it from the address's `#token=`, which no
/// request carries, and keeps it).
func openWebMixer(host: String, port: Int) throws(ControlError) -> WebFrontEnd {
  let web = try WebFrontEnd(host: host, port: port, tokenPath: WebToken.defaultPath())
  var url = web.url
  if host == "0.0.0.0" || host == "::" {
    var name = [CChar](repeating: 0, count: 256)
    if gethostname(&name, name.count - 1) == 0 {
      url = "http://\(String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)):\(web.server.port)/"
    }
  }
  if let token = web.server.options.token {
    printError("web mixer: \(url)#token=\(token) (the token is kept in \(WebToken.defaultPath()); anyone with it can mix)")
  } else {
    printError("web mixer: \(url)")
  }
  return web
}

extension WebToken {
  /// `$XDG_CONFIG_HOME/stemdeck/web-token`, beside the configuration file.
  static func defaultPath() -> String {
    (ConfigFile.defaultPath() as NSString).deletingLastPathComponent + "/web-token"
  }
}
