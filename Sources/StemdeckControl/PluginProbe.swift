import Foundation
import StemdeckText

#if canImport(Glibc)
import Glibc
#endif

// Crash containment for LV2 plugins: the first time this process is to instantiate a plugin,
// a child process (stemdeck's hidden `__lv2-probe` subcommand) instantiates it at the same
// rate and block size, activates it, runs one block of silence and exits 0. A child killed by
// a signal (or still busy after `timeout`) means the plugin is refused with an error naming it
// and the signal, instead of taking the console down; a good result is kept per URI for the
// process. docs/architecture.md, *Plugin inserts*, *Crash containment*.

/// Tries plugins in a child process before the console instantiates them.
public enum PluginProbe {
  /// The hidden subcommand: `stemdeck __lv2-probe URI RATE BLOCK [BUNDLE]` (with BUNDLE, the
  /// child loads only that bundle's directory, not every installed one).
  public static let subcommand = "__lv2-probe"
  /// How long a child may take (loading lilv's world, instantiating, one run) before the
  /// plugin is refused as hanging.
  static let timeout: Double = 20

  private struct State {
    /// The stemdeck executable that runs the probe; nil: no probing (a process that is not
    /// stemdeck, such as the unit tests, or the probe itself).
    var executable: String?
    /// URIs whose probe passed in this process.
    var passed: Set<String> = []
  }
  /// Under `lock` (an NSLock: ThreadSanitizer sees it).
  nonisolated(unsafe) private static var state = State()
  private static let lock = NSLock()

  /// stemdeck's entry point calls this first: runs the probe and returns its exit status when
  /// `arguments` (argv without the program) ask for it; otherwise arms probing with this
  /// executable and returns nil.
  public static func handle(_ arguments: [String]) -> Int32? {
    if arguments.first == subcommand { return runChild(Array(arguments.dropFirst())) }
    let path = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? "/proc/self/exe"
    lock.withLock { state.executable = path }
    return nil
  }

  /// Refuses `info` if it crashes (or hangs) in a child process instantiating it at
  /// `sampleRate` and running one block of `maxBlockFrames`; returns at once if it passed
  /// before in this process or probing is not armed. Control thread; blocks until the child
  /// ends (about the time lilv takes to load its world). A child that fails another way (the
  /// plugin refuses to instantiate) is not an answer: the caller's own instantiation reports
  /// that as usual.
  static func check(_ info: PluginInfo, sampleRate: Double, maxBlockFrames: Int) throws(MixerError) {
    let executable: String? = lock.withLock { state.passed.contains(info.uri) ? nil : state.executable }
    guard let executable else { return }
    let rate = NumberFormat.plain(sampleRate)
    // The child loads only the plugin's bundle when lilv knows where it is; a plugin that does
    // not instantiate from its bundle alone (it needs another bundle's data) is tried again with
    // every bundle, so that it is still tried apart.
    let argv = [executable, subcommand, info.uri, rate, String(maxBlockFrames)]
    var outcome: Outcome = .exited(-1)
    for arguments in (info.bundle.map { [argv + [$0]] } ?? []) + [argv] {
      guard let pid = spawn(arguments) else { return }  // could not start a child: as before, in-process
      outcome = wait(pid)
      if case .exited(let status) = outcome, status != 0 { continue }
      break
    }
    switch outcome {
    case .exited(0):
      _ = lock.withLock { state.passed.insert(info.uri) }
    case .exited: return
    case .signalled(let signal):
      throw MixerError(
        "the LV2 plugin '\(info.name)' <\(info.uri)> crashed with \(signalName(signal)) when tried in a separate process (instantiated at \(rate) Hz and run once): it was not inserted"
      )
    case .timedOut:
      throw MixerError(
        "the LV2 plugin '\(info.name)' <\(info.uri)> did not finish instantiating and running once in \(Int(timeout)) s when tried in a separate process: it was not inserted"
      )
    }
  }

  /// The child's side: instantiates the plugin at the rate and block size given, activates
  /// it, runs one block of silence, frees it; 0 when all of that returned. No core file.
  static func runChild(_ arguments: [String]) -> Int32 {
    var noCore = rlimit(rlim_cur: 0, rlim_max: 0)
    setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &noCore)
    guard (3...4).contains(arguments.count), let rate = Double(arguments[1]), rate > 0, let block = Int(arguments[2]), block > 0
    else {
      return 2
    }
    do {
      let host = arguments.count == 4 ? PluginHost(bundle: arguments[3]) : PluginHost.shared
      let info = try host.find(arguments[0])
      let channels = info.audioInputs == 2 ? 2 : 1
      let instance = try InsertInstance(
        info, channels: channels, sampleRate: rate, maxBlockFrames: block, bypass: false, values: [], host: host)
      instance.runSilence(frames: block)
      instance.free()
      return 0
    } catch {
      return 3
    }
  }

  private enum Outcome { case exited(Int32), signalled(Int32), timedOut }

  /// Starts `argv` with stdin, stdout and stderr on /dev/null and no other descriptor of this
  /// process (the JACK client's sockets, the control socket, OSC, session files: a child that
  /// hangs or outlives us must not hold them); nil when it cannot be started.
  static func spawn(_ argv: [String]) -> pid_t? {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    _ = spawnActionsCloseFrom(&actions, 3)
    let cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
    // The environment as it is, but Swift's backtracer off: it would catch the plugin's signal,
    // print a backtrace and let a raised signal return, so the child would not die of it.
    var variables = ProcessInfo.processInfo.environment.filter { $0.key != "SWIFT_BACKTRACE" }.map { "\($0.key)=\($0.value)" }
    variables.append("SWIFT_BACKTRACE=enable=no")
    let cEnvironment: [UnsafeMutablePointer<CChar>?] = variables.map { strdup($0) } + [nil]
    defer { for a in cArgs + cEnvironment { free(a) } }
    var pid: pid_t = 0
    let result = cArgs.withUnsafeBufferPointer { args in
      cEnvironment.withUnsafeBufferPointer { env in posix_spawn(&pid, argv[0], &actions, nil, args.baseAddress!, env.baseAddress!) }
    }
    return result == 0 ? pid : nil
  }

  /// Waits for child `pid` (polling, so that a hanging one can be killed after `timeout`).
  private static func wait(_ pid: pid_t) -> Outcome {
    let deadline = Date().addingTimeInterval(timeout)
    var status: Int32 = 0
    while true {
      let r = waitpid(pid, &status, WNOHANG)
      if r == pid { break }
      if r < 0 && errno != EINTR { return .exited(-1) }
      if Date() > deadline {
        kill(pid, SIGKILL)
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return .timedOut
      }
      usleep(2_000)
    }
    let signal = status & 0x7f
    return signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
  }

  /// `SIGSEGV (segmentation fault)` and the like.
  static func signalName(_ signal: Int32) -> String {
    let names: [Int32: String] = [
      SIGSEGV: "SIGSEGV", SIGBUS: "SIGBUS", SIGABRT: "SIGABRT", SIGILL: "SIGILL", SIGFPE: "SIGFPE", SIGKILL: "SIGKILL",
      SIGTRAP: "SIGTRAP", SIGTERM: "SIGTERM"
    ]
    let text = strsignal(signal).map { String(cString: $0).lowercased() }
    return "\(names[signal] ?? "signal \(signal)")" + (text.map { " (\($0))" } ?? "")
  }
}

/// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later): the child closes every
/// descriptor from `from` up. Declared here because spawn.h shows it only under _GNU_SOURCE, which
/// Swift's Glibc module does not define; pointer and int arguments, an int result.
@_silgen_name("posix_spawn_file_actions_addclosefrom_np")
private func spawnActionsCloseFrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ from: Int32) -> Int32
