// Test support for the integration tests: child processes (spawned with posix_spawn so that
// every pipe is close-on-exec and no child ever holds another child's stdin open), a private
// JACK server, the real `stemdeck` binary in script mode, and audio-file helpers.
//
// Every wait here is bounded. Nothing touches the default JACK server: every server is started
// with `-n NAME`, every JACK tool gets `-s NAME` where it has one and always
// `JACK_DEFAULT_SERVER=NAME` plus `JACK_NO_START_SERVER=1` in its environment.

import Foundation
import StemdeckAudioFile
import StemdeckTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

// MARK: - Errors and small helpers

/// A failure in the test harness itself (a tool that would not start, a timeout, …).
struct HarnessError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}

/// Pipes are made and children spawned one at a time in the process: the integration tests run
/// two at a time (scripts/test), and a child spawned between another thread's `pipe()` and its
/// `FD_CLOEXEC` would hold that pipe open, so its reader would wait for the wrong process's exit.
private let spawnLock = NSLock()

/// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's Glibc module
/// does not declare: every child starts with only its stdin, stdout and stderr, whatever other
/// descriptors the test process (Foundation's pipes included) has open at that moment.
private let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
  guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
  return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
}()

/// Writing to a child's stdin after it exited must not kill the test process.
private let ignoreSIGPIPE: Void = {
  signal(SIGPIPE, SIG_IGN); return ()
}()

/// `STEMDECK_LONG_TESTS=1`: the soak, the fault loops and the fuzzers at their long sizes (a
/// release check by hand, not part of the test command). The default sizes are the smallest that
/// still catch the defects each test exists for (docs/architecture.md, *Tests*).
let longTests = !(ProcessInfo.processInfo.environment["STEMDECK_LONG_TESTS"] ?? "").isEmpty

/// Sleeps without blocking a cooperative thread.
func pause(_ seconds: Double) async {
  try? await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1e9))
}

/// Polls `condition` every `interval` seconds until it holds or `timeout` passes.
func eventually(timeout: Double, interval: Double = 0.02, _ condition: () async throws -> Bool) async rethrows -> Bool {
  let deadline = monotonicSeconds() + timeout
  while true {
    if try await condition() { return true }
    if monotonicSeconds() >= deadline { return false }
    await pause(interval)
  }
}

/// Where the tools live: found on PATH.
func findOnPath(_ tool: String) -> String? {
  let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
  for dir in path.split(separator: ":") {
    let candidate = "\(dir)/\(tool)"
    if access(candidate, X_OK) == 0 { return candidate }
  }
  return nil
}

// MARK: - Child processes

/// One child process started with `posix_spawn`. Its stdout and stderr can be captured line by
/// line by background reader threads, sent to a file, or discarded; its stdin can be a pipe.
final class ChildProcess: @unchecked Sendable {
  enum Output: Sendable {
    case capture
    case file(String)
    case null
  }

  let pid: pid_t
  let label: String
  private struct State {
    var exitStatus: Int32?
    var stdinFD: Int32 = -1
    var out: [String] = []
    var err: [String] = []
    var openStreams = 0
  }
  private let state = Mutex(State())

  /// Starts `executable` (a path, or a name looked up on PATH) with `arguments`.
  init(
    _ executable: String, _ arguments: [String], environment extra: [String: String] = [:],
    stdinPipe: Bool = false, stdout: Output = .capture, stderr: Output = .capture
  ) throws {
    _ = ignoreSIGPIPE
    label = (executable as NSString).lastPathComponent
    var fa = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&fa)
    defer { posix_spawn_file_actions_destroy(&fa) }
    var attr = posix_spawnattr_t()
    posix_spawnattr_init(&attr)
    defer { posix_spawnattr_destroy(&attr) }
    // The child starts with default signal dispositions and an empty mask (the test process
    // ignores SIGPIPE; children should not inherit that).
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for s in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGCHLD] { sigaddset(&defaults, s) }
    posix_spawnattr_setsigdefault(&attr, &defaults)
    var mask = sigset_t()
    sigemptyset(&mask)
    posix_spawnattr_setsigmask(&attr, &mask)
    posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

    spawnLock.lock()
    defer { spawnLock.unlock() }
    var parentEnds: [Int32] = []  // closed on failure
    var childEnds: [Int32] = []  // closed in the parent after spawning
    func makePipe() throws -> (read: Int32, write: Int32) {
      var fds: [Int32] = [-1, -1]
      // pipe2 is not visible from Swift's Glibc module; set close-on-exec right away instead
      // (under `spawnLock`, so no spawn of this harness can race in between).
      guard pipe(&fds) == 0 else { throw HarnessError("pipe failed: \(String(cString: strerror(errno)))") }
      for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
      return (fds[0], fds[1])
    }
    var stdinWrite: Int32 = -1
    if stdinPipe {
      let p = try makePipe()
      posix_spawn_file_actions_adddup2(&fa, p.read, 0)
      childEnds.append(p.read)
      parentEnds.append(p.write)
      stdinWrite = p.write
    } else {
      posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0)
    }
    var readers: [(fd: Int32, toStdout: Bool)] = []
    for (fd, output) in [(Int32(1), stdout), (Int32(2), stderr)] {
      switch output {
      case .capture:
        let p = try makePipe()
        posix_spawn_file_actions_adddup2(&fa, p.write, fd)
        childEnds.append(p.write)
        parentEnds.append(p.read)
        readers.append((p.read, fd == 1))
      case .file(let path):
        posix_spawn_file_actions_addopen(&fa, fd, path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
      case .null:
        posix_spawn_file_actions_addopen(&fa, fd, "/dev/null", O_WRONLY, 0)
      }
    }

    if let addCloseFrom { _ = addCloseFrom(&fa, 3) }
    var env = ProcessInfo.processInfo.environment
    for (k, v) in extra { env[k] = v }
    let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
    let envp: [UnsafeMutablePointer<CChar>?] = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
      for p in argv { free(p) }
      for p in envp { free(p) }
    }
    var child: pid_t = 0
    let rc = posix_spawnp(&child, executable, &fa, &attr, argv, envp)
    for fd in childEnds { close(fd) }
    guard rc == 0 else {
      for fd in parentEnds { close(fd) }
      throw HarnessError("cannot start \(executable): \(String(cString: strerror(rc)))")
    }
    pid = child
    state.withLock {
      $0.stdinFD = stdinWrite
      $0.openStreams = readers.count
    }
    for reader in readers {
      let thread = Thread { [self] in self.readLoop(fd: reader.fd, toStdout: reader.toStdout) }
      thread.name = "\(label) \(reader.toStdout ? "stdout" : "stderr") reader"
      thread.start()
    }
  }

  private func readLoop(fd: Int32, toStdout: Bool) {
    var pending: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 8192)
    while true {
      let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, 8192) }
      if n < 0 && errno == EINTR { continue }
      if n <= 0 { break }
      pending.append(contentsOf: buffer[0..<n])
      var lines: [String] = []
      while let nl = pending.firstIndex(of: 10) {
        lines.append(String(decoding: pending[..<nl], as: UTF8.self))
        pending.removeSubrange(...nl)
      }
      if !lines.isEmpty {
        state.withLock { if toStdout { $0.out += lines } else { $0.err += lines } }
      }
    }
    close(fd)
    let rest = pending.isEmpty ? nil : String(decoding: pending, as: UTF8.self)
    state.withLock {
      if let rest { if toStdout { $0.out.append(rest) } else { $0.err.append(rest) } }
      $0.openStreams -= 1
    }
  }

  /// The stdout lines so far.
  var stdoutLines: [String] { state.withLock { $0.out } }
  var stderrLines: [String] { state.withLock { $0.err } }
  var stdoutLineCount: Int { state.withLock { $0.out.count } }
  var streamsClosed: Bool { state.withLock { $0.openStreams == 0 } }

  /// Writes to the child's stdin pipe. Returns false if it is closed (the child exited).
  @discardableResult
  func writeToStdin(_ text: String) -> Bool {
    state.withLock { s in
      guard s.stdinFD >= 0 else { return false }
      var bytes = Array(text.utf8)
      var offset = 0
      while offset < bytes.count {
        let n = bytes.withUnsafeMutableBytes { write(s.stdinFD, $0.baseAddress! + offset, $0.count - offset) }
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { return false }
        offset += n
      }
      return true
    }
  }

  func closeStdin() {
    state.withLock { s in
      if s.stdinFD >= 0 { close(s.stdinFD); s.stdinFD = -1 }
    }
  }

  /// Reaps the child if it has exited; its exit status (128 + signal if killed), or nil.
  var exitStatus: Int32? {
    state.withLock { s in
      if let e = s.exitStatus { return e }
      var raw: Int32 = 0
      let r = waitpid(pid, &raw, WNOHANG)
      guard r == pid else { return nil }
      let signal = raw & 0x7f
      s.exitStatus = signal == 0 ? (raw >> 8) & 0xff : 128 + signal
      return s.exitStatus
    }
  }

  var isRunning: Bool { exitStatus == nil }

  func send(signal: Int32) {
    if isRunning { kill(pid, signal) }
  }

  /// Waits (without blocking a cooperative thread) up to `timeout` seconds for the exit.
  func waitForExit(timeout: Double) async -> Int32? {
    _ = await eventually(timeout: timeout, interval: 0.01) { !self.isRunning }
    return exitStatus
  }

  /// Synchronous bounded wait, for cleanup in `defer`.
  func waitForExitBlocking(timeout: Double) -> Int32? {
    let deadline = monotonicSeconds() + timeout
    while isRunning && monotonicSeconds() < deadline { usleep(5000) }
    return exitStatus
  }

  /// Waits until the reader threads have seen EOF (bounded).
  func waitForStreams(timeout: Double) async {
    _ = await eventually(timeout: timeout, interval: 0.01) { self.streamsClosed }
  }

  /// SIGKILL at once, reaped, and only then its stdin closed (for a child that acts when its
  /// stdin ends, such as a server's guardian: dismissed, it does nothing).
  func killAndReap() {
    if isRunning {
      kill(pid, SIGKILL)
      _ = waitForExitBlocking(timeout: 5)
    }
    closeStdin()
  }

  /// SIGTERM, then SIGKILL after `grace` seconds; always reaps. Synchronous (for `defer`).
  func terminate(grace: Double = 3) {
    closeStdin()
    guard isRunning else { return }
    kill(pid, SIGTERM)
    if waitForExitBlocking(timeout: grace) == nil {
      kill(pid, SIGKILL)
      _ = waitForExitBlocking(timeout: 5)
    }
  }

  deinit {
    // Never leave a child behind, whatever the test did.
    if state.withLock({ $0.exitStatus == nil }) {
      kill(pid, SIGKILL)
      var raw: Int32 = 0
      waitpid(pid, &raw, 0)
    }
    state.withLock { s in if s.stdinFD >= 0 { close(s.stdinFD) } }
  }
}

/// A JACK peer written in Python (python3-jack-client): `script` is written to `file` and run as
/// `python3 -u FILE ARGUMENTS…` against `server`, with a stdin pipe (such a peer runs until its
/// stdin closes). Waited for until it prints "ready" (a bound of 30 s against a stuck start);
/// throws with what it wrote to stderr if it exits or never says so. `what` names it in the error.
func startPythonPeer(
  _ script: String, file: String, arguments: [String] = [], server: PrivateJackServer, what: String
) async throws -> ChildProcess {
  try script.write(toFile: file, atomically: true, encoding: .utf8)
  let peer = try ChildProcess("/usr/bin/python3", ["-u", file] + arguments, environment: server.environment, stdinPipe: true)
  let ready = await eventually(timeout: 30) { peer.stdoutLines.contains("ready") || !peer.isRunning }
  guard ready && peer.isRunning && peer.stdoutLines.contains("ready") else {
    peer.terminate(grace: 1)
    throw HarnessError(
      "\(what) did not start (python3-jack-client: scripts/install-deps):\n\(peer.stderrLines.joined(separator: "\n"))")
  }
  return peer
}

/// What a finished tool run printed.
struct ToolResult: Sendable {
  var status: Int32
  var stdout: [String]
  var stderr: [String]
  var text: String { (stdout + stderr).joined(separator: "\n") }
}

/// Runs a command to completion (killing it after `timeout` seconds, which is an error that says
/// where its threads waited). `retryIfHung`: a tool that only looks (jack_lsp) and hung is said
/// on stdout and run once more; a second hang is the error. libjack's own close can hang for
/// good in the closing process when another client comes or goes at that instant (its
/// notification thread is cancelled holding a lock; JackSynchroCheck.swift): a fresh client that
/// answers shows the server and stemdeck were fine, one that hangs too shows they were not.
/// (CI on 2026-12-03 twice: jack_lsp -s NAME hung 15 s while the harness polled a restarted
/// server every 20 ms; 264 restarts in a loop here did not show it again.)
func runTool(
  _ tool: String, _ arguments: [String], environment: [String: String] = [:], timeout: Double = 30, retryIfHung: Bool = false
) async throws -> ToolResult {
  let child = try ChildProcess(tool, arguments, environment: environment)
  guard let status = await child.waitForExit(timeout: timeout) else {
    let waits = threadsWaiting(child.pid)
    child.terminate(grace: 1)
    let hung = "\(tool) \(arguments.joined(separator: " ")) did not finish within \(timeout) s (its threads: \(waits))"
    guard retryIfHung else { throw HarnessError(hung) }
    print("harness: \(hung); killed, and run once more")
    do { return try await runTool(tool, arguments, environment: environment, timeout: timeout) } catch {
      throw HarnessError("\(hung)\nrun again: \(error)")
    }
  }
  await child.waitForStreams(timeout: 2)
  return ToolResult(status: status, stdout: child.stdoutLines, stderr: child.stderrLines)
}

/// Where a process's threads wait, from /proc (no debugger): each thread's name, state, kernel
/// wait channel and, where readable, the top of its kernel stack.
func threadsWaiting(_ pid: pid_t) -> String {
  func read(_ path: String) -> String {
    ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "?").trimmingCharacters(in: .whitespacesAndNewlines)
  }
  let tasks = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []).sorted()
  return tasks.map { tid in
    let base = "/proc/\(pid)/task/\(tid)/"
    let state = read(base + "stat").split(separator: ")").last?.split(separator: " ").first.map(String.init) ?? "?"
    let stack = read(base + "stack").split(separator: "\n").prefix(3).map { $0.split(separator: " ").last.map(String.init) ?? "" }
    return "\(tid) \(read(base + "comm")) \(state) in \(read(base + "wchan")) [\(stack.joined(separator: " < "))]"
  }.joined(separator: "; ")
}

// MARK: - Temporary folders

/// The shared temporary folder (StemdeckTestSupport), by the name these tests have always used.
typealias IntegrationTempDir = TemporaryFolder

/// Copies `files` into a folder that outlives the test (`/tmp/stemdeck-failed-XXXXXX`) and
/// returns what a failure's message says of it: a capture and a render that differed, to be
/// looked at after a CI run instead of only described.
func keptForDiagnosis(_ files: [String]) -> String {
  var template = Array("/tmp/stemdeck-failed-XXXXXX".utf8CString)
  guard let made = mkdtemp(&template) else { return "(not kept: mkdtemp failed)" }
  let folder = String(cString: made)
  for file in files { try? FileManager.default.copyItem(atPath: file, toPath: folder + "/" + (file as NSString).lastPathComponent) }
  return "kept in \(folder)"
}

// MARK: - A private JACK server

/// The running `jackd` processes (of anyone) started with `-n NAME` or `--name NAME`, from
/// /proc: what a test checks to know that no server of its outlived it.
func jackdProcesses(named name: String) -> [pid_t] {
  var found: [pid_t] = []
  for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
    guard let pid = pid_t(entry), let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { continue }
    let argv = data.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
    guard let tool = argv.first, (tool as NSString).lastPathComponent == "jackd" else { continue }
    if zip(argv, argv.dropFirst()).contains(where: { ($0.0 == "-n" || $0.0 == "--name") && $0.1 == name }) { found.append(pid) }
  }
  return found
}

/// A first-come first-served gate for the tests' server starts (`PrivateJackServer.startOnce`):
/// one at a time in this process (an actor queue), and across the test processes that scripts/test
/// runs at once (an `flock` on a file in /tmp, polled so that no cooperative thread blocks).
actor ServerStartGate {
  static let shared = ServerStartGate()
  static let lockPath = "/tmp/stemdeck-tests-jackd-start.lock"
  private var busy = false
  private var waiting: [CheckedContinuation<Void, Never>] = []
  private var lockFD: Int32 = -1

  func enter() async {
    if busy {
      await withCheckedContinuation { waiting.append($0) }
    } else {
      busy = true
    }
    if lockFD < 0 { lockFD = open(Self.lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o666) }
    guard lockFD >= 0 else { return }  // no lock file: this process's own order still holds
    let deadline = monotonicSeconds() + 60
    while flock(lockFD, LOCK_EX | LOCK_NB) != 0 && monotonicSeconds() < deadline { await pause(0.02) }
  }

  func leave() {
    if lockFD >= 0 { flock(lockFD, LOCK_UN) }
    if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
  }
}

/// `jackd -n stemdeck-test-<pid>-<n> --no-realtime -d dummy -r RATE -p PERIOD`, started and
/// waited for with `jack_wait`, stopped on `stop()` (and in deinit). Restartable under the same
/// name after `kill9()` or `stop()`.
final class PrivateJackServer: @unchecked Sendable {
  private static let counter = Atomic<Int>(0)

  let name: String
  /// The rate and period of the next `start()` (a test may restart the server at another rate).
  var sampleRate: Int
  let period: Int
  let logDir: IntegrationTempDir
  /// The driver and its options when not the dummy driver (e.g. `["-d", "net", …]` for a
  /// NetJack2 slave, whose rate and period come from its master).
  let driverArguments: [String]?
  private let process = Mutex<ChildProcess?>(nil)
  /// A shell that waits for its stdin to end: when the test process dies without stopping the
  /// server (a crash, a kill), the kernel closes the pipe and the guardian stops jackd (SIGTERM,
  /// then SIGKILL), so that no server outlives the tests. A leaked server is worse than a
  /// leaked file: while any JACK server of the user runs, scripts/jack-preflight may not repair
  /// a locked metadata database, and every new jackd then hangs. Dismissed (SIGKILL, then its
  /// stdin closed) after jackd is stopped.
  private let guardian = Mutex<ChildProcess?>(nil)

  /// Environment for every JACK client the tests start (tools and stemdeck).
  var environment: [String: String] { ["JACK_DEFAULT_SERVER": name, "JACK_NO_START_SERVER": "1"] }
  var logPath: String { logDir.file("jackd.log") }

  init(sampleRate: Int = 48000, period: Int = 256, driver: [String]? = nil) async throws {
    let n = Self.counter.add(1, ordering: .relaxed).newValue
    name = "stemdeck-test-\(getpid())-\(n)"
    self.sampleRate = sampleRate
    self.period = period
    driverArguments = driver
    logDir = try IntegrationTempDir("stemdeck-jackd")
    try await start()
  }

  var pid: pid_t? { process.withLock { $0?.pid } }
  var isRunning: Bool { process.withLock { $0?.isRunning ?? false } }

  /// The test command's JACK preflight (scripts/jack-preflight), from this file's place.
  static let preflightScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("scripts/jack-preflight").path

  /// Starts jackd (again, under the same name) and waits until clients can connect. When it does
  /// not come up, the JACK preflight runs once and the start is tried again: jackd2's metadata
  /// database (shared by every JACK process of the user) stays locked after a process was killed
  /// while holding its lock, and some tests kill stemdeck and jackd with SIGKILL on purpose; the
  /// preflight moves such a database aside when no JACK server is running (docs/architecture.md,
  /// *JACK metadata*). What the preflight said is part of the error if the retry fails too.
  func start() async throws {
    do {
      try await startOnce()
    } catch {
      stop()  // whatever startOnce left running (a jack_wait that threw, not only one that failed)
      let preflight = try await runTool(Self.preflightScript, [], environment: [:], timeout: 60)
      do {
        try await startOnce()
      } catch {
        throw HarnessError("\(error)\nafter the JACK preflight (exit \(preflight.status)):\n\(preflight.text)")
      }
    }
  }

  /// One server of this process starts at a time (two tests run at once): freeing dead registry
  /// entries must not meet another jackd's registration half done.
  private func startOnce() async throws {
    await ServerStartGate.shared.enter()
    do {
      try await startOnceGated()
      await ServerStartGate.shared.leave()
    } catch {
      await ServerStartGate.shared.leave()
      throw error
    }
  }

  private func startOnceGated() async throws {
    guard findOnPath("jackd") != nil else { throw HarnessError("jackd is not installed (apt-get install jackd2)") }
    precondition(!isRunning, "server \(name) is already running")
    JackRegistry.reclaimDeadEntries()
    JackMetadataStore.resetIfUnused()
    let child = try ChildProcess(
      "jackd", ["-n", name, "--no-realtime"] + (driverArguments ?? ["-d", "dummy", "-r", "\(sampleRate)", "-p", "\(period)"]),
      environment: environment, stdout: .file(logPath), stderr: .file(logPath))
    process.withLock { $0 = child }
    let script = """
      read -r _; kill -TERM \(child.pid) 2>/dev/null || exit 0
      for _ in 1 2 3 4 5 6 7 8 9 10; do sleep 0.5; kill -0 \(child.pid) 2>/dev/null || exit 0; done
      kill -KILL \(child.pid) 2>/dev/null
      """
    let watcher = try ChildProcess("sh", ["-c", script], stdinPipe: true, stdout: .null, stderr: .null)
    guardian.withLock { $0 = watcher }
    var last = ""
    let up: Bool
    do {
      up = try await eventually(timeout: 10, interval: 0.02) {
        guard child.isRunning else { return false }
        last = try await checkServer().text
        return last == "running"
      }
    } catch {
      stop()
      throw HarnessError("private JACK server \(name): jack_wait failed: \(error)")
    }
    guard up, child.isRunning else {
      let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
      stop()
      throw HarnessError("private JACK server \(name) did not come up within 10 s (jack_wait: \(last)); jackd log:\n\(log.suffix(2000))")
    }
  }

  /// `jack_wait -c`: one connection attempt, "running" or "not running" on stdout. Polled every
  /// 20 ms to see a server come up: `jack_wait -w` retries only once a second, which cost about
  /// 0.9 s of every one of the integration tests' server starts (jackd itself is up in 0.15 s).
  func checkServer() async throws -> ToolResult {
    let result = try await runTool("jack_wait", ["-s", name, "-c"], environment: environment, timeout: 10)
    return ToolResult(status: result.status, stdout: result.stdout, stderr: [])
  }

  /// SIGTERM, then SIGKILL; waits for the exit (bounded). Safe to call twice.
  func stop() {
    let child = process.withLock { p -> ChildProcess? in
      defer { p = nil }; return p
    }
    child?.terminate(grace: 5)
    dismissGuardian()
    removeStaleFiles()
  }

  private func dismissGuardian() {
    let watcher = guardian.withLock { g -> ChildProcess? in
      defer { g = nil }; return g
    }
    watcher?.killAndReap()
  }

  /// `stop()`, then an issue if a jackd of this server's name still runs: the end of a test that
  /// proves it leaves no server behind.
  func stopAndExpectGone(sourceLocation: SourceLocation = #_sourceLocation) {
    let pid = self.pid
    stop()
    let left = jackdProcesses(named: name)
    #expect(
      left.isEmpty, "JACK server \(name) (pid \(pid.map(String.init) ?? "-")) still runs as \(left) after stop()",
      sourceLocation: sourceLocation)
  }

  /// After a kill -9 that was not followed by a clean restart and stop, jackd leaves its
  /// sockets and semaphores in /dev/shm; remove those of this (uniquely named) server only.
  func removeStaleFiles() { Self.removeStaleFiles(of: name) }

  /// The same for a server started by someone else under a name unique to a test (stemdeck's
  /// own launcher).
  static func removeStaleFiles(of name: String) {
    let shm = "/dev/shm"
    for entry in (try? FileManager.default.contentsOfDirectory(atPath: shm)) ?? [] where entry.contains("_\(name)_") {
      try? FileManager.default.removeItem(atPath: "\(shm)/\(entry)")
    }
  }

  /// Kills jackd with SIGKILL (the server "crashes") and reaps it.
  func kill9() {
    let child = process.withLock { p -> ChildProcess? in
      defer { p = nil }; return p
    }
    guard let child else { return }
    kill(child.pid, SIGKILL)
    _ = child.waitForExitBlocking(timeout: 5)
    dismissGuardian()
  }

  func restart() async throws {
    stop()
    try await start()
  }

  deinit { stop() }

  // MARK: Tools against this server

  func tool(_ tool: String, _ arguments: [String], timeout: Double = 15) async throws -> ToolResult {
    try await runTool(tool, arguments, environment: environment, timeout: timeout)
  }

  /// Port names (`jack_lsp -s NAME`).
  func ports() async throws -> [String] {
    let r = try await runTool("jack_lsp", ["-s", name], environment: environment, timeout: 15, retryIfHung: true)
    guard r.status == 0 else { throw HarnessError("jack_lsp failed: \(r.text)") }
    return r.stdout.filter { !$0.isEmpty && !$0.hasPrefix(" ") && !$0.hasPrefix("\t") }
  }

  /// Every port with the ports it is connected to (`jack_lsp -s NAME -c`).
  func connections() async throws -> [String: Set<String>] {
    let r = try await runTool("jack_lsp", ["-s", name, "-c"], environment: environment, timeout: 15, retryIfHung: true)
    guard r.status == 0 else { throw HarnessError("jack_lsp -c failed: \(r.text)") }
    var out: [String: Set<String>] = [:]
    var current: String?
    for line in r.stdout where !line.isEmpty {
      if line.first == " " || line.first == "\t" {
        if let current { out[current, default: []].insert(line.trimmingCharacters(in: .whitespaces)) }
      } else {
        current = line
        out[line, default: []] = out[line] ?? []
      }
    }
    return out
  }

  func connect(_ a: String, _ b: String) async throws {
    let r = try await tool("jack_connect", ["-s", name, a, b])
    guard r.status == 0 else { throw HarnessError("jack_connect \(a) \(b) failed: \(r.text)") }
  }

  func disconnect(_ a: String, _ b: String) async throws {
    let r = try await tool("jack_disconnect", ["-s", name, a, b])
    guard r.status == 0 else { throw HarnessError("jack_disconnect \(a) \(b) failed: \(r.text)") }
  }

  /// Waits until `port` is connected to a peer for which `peer` holds.
  func waitForConnection(_ port: String, timeout: Double, where peer: @escaping (String) -> Bool) async throws -> Bool {
    try await eventually(timeout: timeout, interval: 0.1) {
      try await connections()[port, default: []].contains(where: peer)
    }
  }

  /// Records `ports` with jack_capture (32-bit float WAV, its default) for `seconds`.
  /// With `manualConnections` it connects nothing (its inputs are jack_capture:input1/2).
  func startCapture(
    ports: [String], seconds: Double, to path: String, hookDir: IntegrationTempDir,
    manualConnections: Bool = false
  ) throws -> CaptureRun {
    try CaptureRun(
      server: self, ports: ports, seconds: seconds, path: path, hookDir: hookDir,
      manualConnections: manualConnections)
  }

  /// The xruns a passive client sees on this server, with no stemdeck running: jack_capture
  /// records the (silent) system capture ports for `seconds` and reports its xrun count.
  func xrunBaseline(seconds: Double, scratch: IntegrationTempDir) async throws -> Int {
    let run = try startCapture(
      ports: ["system:capture_1", "system:capture_2"], seconds: seconds,
      to: scratch.file("baseline.wav"), hookDir: scratch)
    return try await run.finish(timeout: seconds + 10).xruns
  }
}

/// A running `jack_capture --daemon -d SECONDS -p PORT … FILE`. Its close hook reports the xrun
/// count jack_capture saw while recording.
final class CaptureRun: @unchecked Sendable {
  let child: ChildProcess
  let path: String
  let hookOutput: String
  let logPath: String

  init(
    server: PrivateJackServer, ports: [String], seconds: Double, path: String, hookDir: IntegrationTempDir,
    manualConnections: Bool = false
  ) throws {
    guard findOnPath("jack_capture") != nil else { throw HarnessError("jack_capture is not installed (apt-get install jack-capture)") }
    self.path = path
    let stem = (path as NSString).lastPathComponent
    hookOutput = hookDir.file("\(stem).hook")
    logPath = hookDir.file("\(stem).log")
    let hook = hookDir.file("\(stem).hook.sh")
    // The hook is called as: HOOK FILENAME XRUNS IO_ERRORS (fire-and-forget, after closing).
    try "#!/bin/sh\necho \"$2 $3\" > '\(hookOutput).tmp' && mv '\(hookOutput).tmp' '\(hookOutput)'\n"
      .write(toFile: hook, atomically: true, encoding: .utf8)
    chmod(hook, 0o755)
    var args = ["--daemon", "--recording-time", String(seconds), "--hook-close", hook]
    if manualConnections { args.append("--manual-connections") }
    for p in ports { args += ["--port", p] }
    args.append(path)
    child = try ChildProcess(
      "jack_capture", args, environment: server.environment,
      stdout: .file(logPath), stderr: .file(logPath))
  }

  var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

  /// Waits for jack_capture to finish and for its hook; returns the xruns and I/O errors.
  func finish(timeout: Double) async throws -> (xruns: Int, ioErrors: Int) {
    guard let status = await child.waitForExit(timeout: timeout) else {
      child.terminate(grace: 1)
      throw HarnessError("jack_capture did not finish within \(timeout) s; log:\n\(log)")
    }
    guard status == 0 else { throw HarnessError("jack_capture exited with status \(status); log:\n\(log)") }
    let hooked = await eventually(timeout: 5) { FileManager.default.fileExists(atPath: self.hookOutput) }
    guard hooked, let text = try? String(contentsOfFile: hookOutput, encoding: .utf8) else {
      throw HarnessError("jack_capture's close hook did not report; log:\n\(log)")
    }
    let numbers = text.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { Int($0) }
    guard numbers.count == 2 else { throw HarnessError("unexpected hook output '\(text)'") }
    return (numbers[0], numbers[1])
  }
}

// MARK: - The stemdeck binary in script mode

enum StemdeckBinary {
  /// $STEMDECK_BIN, else `<package root>/.build/debug/stemdeck`.
  static var path: String {
    if let p = ProcessInfo.processInfo.environment["STEMDECK_BIN"], !p.isEmpty { return p }
    // This file is <root>/Tests/IntegrationTests/TestSupport.swift.
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().path
    return root + "/.build/debug/stemdeck"
  }

  /// The binary's path; records a failure (never skips) when it is missing.
  static func require(sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
    let p = path
    try #require(
      access(p, X_OK) == 0,
      "stemdeck binary not found or not executable at \(p): build it first (swift build --product stemdeck) or set STEMDECK_BIN",
      sourceLocation: sourceLocation)
    return p
  }
}

/// The real `stemdeck` running in script mode with a stdin pipe.
final class StemdeckProcess: @unchecked Sendable {
  let child: ChildProcess
  let arguments: [String]
  private let syncCounter = Atomic<Int>(0)

  /// Launches `stemdeck ARGS… --server NAME --no-start-server [--no-connect]` on `server`.
  /// `launcher`: a command that runs stemdeck (e.g. `["prlimit", "--fsize=400000"]`).
  init(
    server: PrivateJackServer, session: String? = nil, connect: Bool = false, extra: [String] = [],
    launcher: [String] = [], sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    let binary = try StemdeckBinary.require(sourceLocation: sourceLocation)
    var args: [String] = []
    if let session { args.append(session) }
    args += ["--server", server.name, "--no-start-server"]
    if !connect { args.append("--no-connect") }
    args += extra
    arguments = args
    if let tool = launcher.first {
      child = try ChildProcess(tool, Array(launcher.dropFirst()) + [binary] + args, environment: server.environment, stdinPipe: true)
    } else {
      child = try ChildProcess(binary, args, environment: server.environment, stdinPipe: true)
    }
  }

  var pid: pid_t { child.pid }
  var lines: [String] { child.stdoutLines }
  var stderrLines: [String] { child.stderrLines }
  var lineCount: Int { child.stdoutLineCount }
  var events: [String] { lines.filter { $0.hasPrefix("event: ") } }
  var transcript: String {
    "stemdeck \(arguments.joined(separator: " "))\n--- stdout ---\n\(lines.joined(separator: "\n"))\n--- stderr ---\n\(stderrLines.joined(separator: "\n"))"
  }

  func send(_ line: String) {
    if !child.writeToStdin(line + "\n") {
      Issue.record("could not send '\(line)' to stemdeck (it exited?)\n\(transcript)")
    }
  }

  /// Waits for a stdout line (at index `from` or later) containing `text`; returns it, or nil
  /// after `timeout` seconds.
  func waitForLine(containing text: String, from: Int = 0, timeout: Double) async -> String? {
    var found: String?
    _ = await eventually(timeout: timeout, interval: 0.01) {
      found = self.lines.dropFirst(from).first { $0.contains(text) }
      return found != nil || !self.child.isRunning && self.child.streamsClosed
    }
    if found == nil { found = lines.dropFirst(from).first { $0.contains(text) } }
    return found
  }

  /// Sends `command` followed by an `echo` marker and returns the stdout lines the command
  /// printed (events and errors included) without judging them: for a command expected to fail
  /// (script mode with --keep-going goes on after it). Throws if the marker does not come back
  /// within `timeout` (the command failed and script mode stopped, or stemdeck hung).
  @discardableResult
  func attempt(_ command: String, timeout: Double = 15) async throws -> [String] {
    let n = syncCounter.add(1, ordering: .relaxed).newValue
    let marker = "sync-marker-\(n)-done"
    let start = lineCount
    send(command)
    send("echo \(marker)")
    guard await waitForLine(containing: marker, from: start, timeout: timeout) != nil else {
      throw HarnessError("no answer to '\(command)' within \(timeout) s\n\(transcript)")
    }
    let out = Array(lines.dropFirst(start))
    return Array(out[..<(out.firstIndex { $0 == marker } ?? out.count)])
  }

  /// `attempt`, recording an issue when the command printed an error.
  @discardableResult
  func run(_ command: String, timeout: Double = 10, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String] {
    let result = try await attempt(command, timeout: timeout)
    if let error = result.first(where: { $0.hasPrefix("error: ") }) {
      Issue.record("'\(command)' failed: \(error)", sourceLocation: sourceLocation)
    }
    return result
  }

  /// `status`, as key → value ("state" → "playing", …).
  func status(sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: String] {
    var out: [String: String] = [:]
    for line in try await run("status", sourceLocation: sourceLocation) where !line.hasPrefix("event: ") {
      guard let colon = line.firstIndex(of: ":") else { continue }
      out[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
    return out
  }

  /// Closes stdin and waits for the exit; kills it (and throws) after `timeout` seconds.
  func finish(timeout: Double = 10) async throws -> Int32 {
    child.closeStdin()
    guard let status = await child.waitForExit(timeout: timeout) else {
      child.terminate(grace: 1)
      throw HarnessError("stemdeck did not exit within \(timeout) s after its input ended\n\(transcript)")
    }
    await child.waitForStreams(timeout: 2)
    return status
  }

  /// Memory figures from /proc/PID/status, in bytes: "VmRSS", "RssAnon", "RssFile",
  /// "RssShmem", "VmHWM".
  func memory() throws -> [String: Int] {
    let text = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
    var out: [String: Int] = [:]
    for line in text.split(separator: "\n") {
      let parts = line.split(whereSeparator: { $0 == ":" || $0 == " " || $0 == "\t" })
      guard parts.count == 3, parts[2] == "kB", let kb = Int(parts[1]) else { continue }
      out[String(parts[0])] = kb * 1024
    }
    guard out["VmRSS"] != nil else { throw HarnessError("no VmRSS in /proc/\(pid)/status") }
    return out
  }

  /// Cleanup for `defer`: ends the process if a test left it running. SIGTERM first, and up to
  /// 10 s for stemdeck's own quit before SIGKILL: the quit removes the ports' properties from
  /// jackd2's metadata database, and a process killed inside that leaves the database locked for
  /// every later jackd of the user (docs/architecture.md, *JACK metadata*). A healthy stemdeck
  /// is gone in well under a second; only a hung one costs the wait.
  func kill() { child.terminate(grace: 10) }
}

/// One stem of a generated session file.
struct SessionStem {
  var name: String
  var file: String
  var volume = 1.0
  var pan = 0.0
  var loops = 0
  var rate = 1.0
  /// `varispeed` (nil: the field is left out) or `stretch`.
  var mode: String? = nil
  var pitch: Double? = nil
  /// The stretch quality, `fine` or `fast` (nil: the field is left out).
  var stretch: String? = nil
  /// The stem's `"eq"` object as JSON text (nil: none; session format version 2).
  var eq: String? = nil
  /// The bus it feeds (nil: the master; session format version 3).
  var bus: String? = nil
}

/// Writes a stemdeck session (the format of Sessions/demo.json); stem files are relative to it.
/// `buses` are the `"buses"` list's objects as JSON text (format version 3).
func writeSession(_ path: String, masterVolume: Double = 1, masterEQ: String? = nil, stems: [SessionStem], buses: [String] = []) throws {
  let lines = stems.map { s in
    "    { \"name\" : \"\(s.name)\", \"file\" : \"\(s.file)\", \"volume\" : \(s.volume), \"pan\" : \(s.pan), \"rate\" : \(s.rate), \"loops\" : \(s.loops), \"mute\" : false, \"solo\" : false"
      + (s.mode.map { ", \"mode\" : \"\($0)\"" } ?? "") + (s.pitch.map { ", \"pitch\" : \($0)" } ?? "")
      + (s.stretch.map { ", \"stretch\" : \"\($0)\"" } ?? "")
      + (s.eq.map { ", \"eq\" : \($0)" } ?? "") + (s.bus.map { ", \"bus\" : \"\($0)\"" } ?? "") + " }"
  }
  // Version 1 unless the EQ (version 2) or buses (version 3) are used: the older files still open.
  let version = !buses.isEmpty ? 3 : masterEQ != nil || stems.contains { $0.eq != nil } ? 2 : 1
  let busList = buses.isEmpty ? "" : "  \"buses\" : [\n    " + buses.joined(separator: ",\n    ") + "\n  ],\n"
  let text = """
    {
      "format" : "stemdeck-session",
      "version" : \(version),
      "quality" : "fast",
      "master" : { "volume" : \(masterVolume)\(masterEQ.map { ", \"eq\" : \($0)" } ?? "") },
      "options" : { "autoPauseOnDisconnect" : false, "meterPoint" : "post" },
    \(busList)  "stems" : [
    \(lines.joined(separator: ",\n"))
      ]
    }

    """
  try text.write(toFile: path, atomically: true, encoding: .utf8)
}

/// `stemdeck render SESSION --output PATH` run to its end (60 s at most) and its file read back;
/// fails the test when the render fails.
func renderOffline(
  _ binary: String, _ session: String, to path: String, sourceLocation: SourceLocation = #_sourceLocation
) async throws -> AudioData {
  let rendered = try await runTool(binary, ["render", session, "--output", path], timeout: 60)
  try #require(rendered.status == 0, "render failed: \(rendered.text)", sourceLocation: sourceLocation)
  return try readAudio(path)
}

/// A session `DIR/S.json` of two looping stems (a: 220 Hz stereo at 0.8, b: 330 Hz mono at 0.5,
/// panned -0.5), for the tests that play on while their server is killed or their link dropped.
func loopingSession(_ dir: IntegrationTempDir) throws -> String {
  try writeSine(dir.file("a.wav"), sampleRate: 48000, seconds: 1.0, frequencies: [220, 220], amplitude: 0.4)
  try writeSine(dir.file("b.wav"), sampleRate: 48000, seconds: 0.5, frequencies: [330], amplitude: 0.3)
  let session = dir.file("S.json")
  try writeSession(
    session,
    stems: [
      SessionStem(name: "a", file: "a.wav", volume: 0.8, loops: -1),
      SessionStem(name: "b", file: "b.wav", volume: 0.5, pan: -0.5, loops: -1)
    ])
  return session
}

/// Parses "m:ss.mmm" (or "h:mm:ss.mmm") into seconds.
func parseClock(_ text: String) -> Double? {
  var total = 0.0
  for part in text.split(separator: ":") {
    guard let v = Double(part) else { return nil }
    total = total * 60 + v
  }
  return total
}

/// The current position in a `status` answer ("position: 0:01.234 / 0:03.000").
func statusPosition(_ status: [String: String]) -> Double? {
  guard let p = status["position"], let first = p.split(separator: " ").first else { return nil }
  return parseClock(String(first))
}

// MARK: - Audio files

/// A decoded audio file: interleaved float samples.
struct AudioData {
  var sampleRate: Int
  var channels: Int
  var samples: [Float]
  var frames: Int { channels == 0 ? 0 : samples.count / channels }
  func sample(_ frame: Int, _ channel: Int) -> Float { samples[frame * channels + channel] }
}

func readAudio(_ path: String) throws -> AudioData {
  let file = try SoundFile(readingFrom: path)
  let info = file.info
  var samples = [Float](repeating: 0, count: info.frameCount * info.channelCount)
  let read = samples.withUnsafeMutableBufferPointer { file.readFrames(into: $0.baseAddress!, frameCount: info.frameCount) }
  samples.removeLast((info.frameCount - read) * info.channelCount)
  return AudioData(sampleRate: info.sampleRate, channels: info.channelCount, samples: samples)
}

/// Writes sines (one frequency per channel) of `seconds` at `amplitude` into `path`.
func writeSine(
  _ path: String, format: OutputFormat = .wavFloat, sampleRate: Int, seconds: Double,
  frequencies: [Double], amplitude: Double = 0.5
) throws {
  let channels = frequencies.count
  let frames = Int((seconds * Double(sampleRate)).rounded())
  var data = [Float](repeating: 0, count: frames * channels)
  for i in 0..<frames {
    for (c, f) in frequencies.enumerated() {
      data[i * channels + c] = Float(amplitude * sin(2 * Double.pi * f * Double(i) / Double(sampleRate)))
    }
  }
  let writer = try SoundFileWriter(path: path, format: format, sampleRate: sampleRate, channelCount: channels)
  try data.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frameCount: frames) }
  writer.flush()
}

/// Writes a mono drum-like part: a burst of decaying noise (a fixed LCG, so every run writes the
/// same file) on every beat at 120 bpm, `seconds` long, peaks about 0.6.
func writeBursts(_ path: String, sampleRate: Int, seconds: Double) throws {
  let frames = Int((seconds * Double(sampleRate)).rounded())
  let beat = sampleRate / 2
  var data = [Float](repeating: 0, count: frames)
  var seed: UInt32 = 12345
  for i in 0..<frames {
    seed = seed &* 1_664_525 &+ 1_013_904_223
    let noise = Double(Int32(bitPattern: seed)) / Double(Int32.max)
    let t = Double(i % beat) / Double(sampleRate)
    data[i] = Float(0.6 * noise * exp(-t * 30))
  }
  let writer = try SoundFileWriter(path: path, format: .wavFloat, sampleRate: sampleRate, channelCount: 1)
  try data.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frameCount: frames) }
  writer.flush()
}

/// The first frame where any channel's magnitude exceeds `threshold`.
func firstFrame(above threshold: Float, in audio: AudioData) -> Int? {
  for f in 0..<audio.frames {
    for c in 0..<audio.channels where abs(audio.sample(f, c)) > threshold { return f }
  }
  return nil
}
