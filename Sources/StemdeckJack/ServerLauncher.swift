import Foundation
import StemdeckText

/// Starts a JACK server as a child process when none is running, so the quick start works on a
/// fresh machine: the ALSA driver where a sound card exists, else the dummy driver, at 48 kHz.
/// The server is stopped when stemdeck exits.
public final class ServerLauncher: @unchecked Sendable {
  /// Which server to start: the automatic choice (~/.jackdrc, else ALSA with a sound card, else
  /// dummy), or the driver asked for with `--start-server` (then ~/.jackdrc is not read).
  public enum Launch: Sendable, Equatable {
    case automatic
    case dummy
    case alsa
    /// A NetJack2 slave (`jackd -d net`) of the master at `master` (an address, or a multicast
    /// group to find one in), whose netmanager listens on UDP `port` (nil: NetJack2's default).
    case net(master: String, port: Int?)

    /// As `--start-server` takes it (`auto` for `.automatic`).
    public var spec: String {
      switch self {
      case .automatic: return "auto"
      case .dummy: return "dummy"
      case .alsa: return "alsa"
      case .net(let master, let port):
        if master == ServerDriverInfo.netDefaultMulticast && port == nil { return "net" }
        return "net:\(master)" + (port.map { ":\($0)" } ?? "")
      }
    }

    /// What `--start-server` accepts, for error messages.
    public static let forms = "dummy, alsa, net (a master found by multicast), net:MASTER_IP or net:MASTER_IP:PORT"

    /// Parses `dummy`, `alsa`, `net`, `net:HOST` or `net:HOST:PORT`; nil for anything else.
    public static func parse(_ spec: String) -> Launch? {
      switch spec {
      case "dummy": return .dummy
      case "alsa": return .alsa
      case "net": return .net(master: ServerDriverInfo.netDefaultMulticast, port: nil)
      default: break
      }
      guard spec.hasPrefix("net:") else { return nil }
      let parts = spec.dropFirst(4).split(separator: ":", omittingEmptySubsequences: false)
      guard parts.count == 1 || parts.count == 2, let host = parts.first, !host.isEmpty, !host.hasPrefix("-"),
        host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") })
      else { return nil }
      var port: Int?
      if parts.count == 2 {
        guard let p = Int(parts[1]), (1...65535).contains(p) else { return nil }
        port = p
      }
      return .net(master: String(host), port: port)
    }
  }

  /// The rate, period and period count of a server stemdeck starts with the dummy or ALSA driver
  /// (the user's config: `server-rate`, `server-period`, `server-periods`). A net slave takes its
  /// master's; `~/.jackdrc` says its own.
  public struct Settings: Sendable, Equatable {
    public var rate = 48000
    public var period = 256
    public var periods = 2
    public init() {}
    public static let rates = 8000...192_000
    public static let periodRange = 16...8192
    public static let periodsRange = 2...16
  }

  public let serverName: String
  public let driver: String
  let process: Process
  public let logPath: String
  /// Why jackd's log could not be written (nil: it is at `logPath`).
  public let logProblem: String?

  /// The JACK server binary, looked up on PATH.
  static func jackdPath() -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    for dir in path.split(separator: ":") {
      let candidate = "\(dir)/jackd"
      if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    return nil
  }

  /// True when ALSA lists at least one sound card with a playback device.
  static func hasSoundCard() -> Bool {
    guard let cards = try? String(contentsOfFile: "/proc/asound/cards", encoding: .utf8) else { return false }
    if cards.contains("no soundcards") { return false }
    let devices = (try? FileManager.default.contentsOfDirectory(atPath: "/dev/snd")) ?? []
    return devices.contains { $0.hasPrefix("pcmC") && $0.hasSuffix("p") }
  }

  static func dummyArguments(_ s: Settings) -> [String] {
    ["--no-realtime", "-d", "dummy", "-r", "\(s.rate)", "-p", "\(s.period)"]
  }

  static func alsaArguments(_ s: Settings) -> [String] {
    ["-d", "alsa", "-r", "\(s.rate)", "-p", "\(s.period)", "-n", "\(s.periods)"]
  }

  /// The command line that started the server (for the start-up line).
  public let commandLine: String
  /// Whether that command came from `~/.jackdrc`.
  public let fromJackdrc: Bool

  /// The server command in `~/.jackdrc` (the file libjack's own autostart reads: one line, the
  /// command and its arguments separated by spaces), with `-n NAME` added; nil when there is
  /// no such file or it is empty.
  static func jackdrcCommand(serverName: String) -> (executable: String, arguments: [String])? {
    let home = ProcessInfo.processInfo.environment["HOME"] ?? NSHomeDirectory()
    guard let text = try? String(contentsOfFile: home + "/.jackdrc", encoding: .utf8),
      let line = text.split(separator: "\n").first(where: { !$0.trimmingCharacters(in: .whitespaces).isEmpty })
    else { return nil }
    let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" }).map(String.init)
    guard var executable = words.first else { return nil }
    if !executable.contains("/") {
      let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
      guard
        let found = path.split(separator: ":").map({ "\($0)/\(executable)" })
          .first(where: { FileManager.default.isExecutableFile(atPath: $0) })
      else { return nil }
      executable = found
    }
    var arguments = Array(words.dropFirst())
    // The server name goes before the driver's options (-n after -d is the ALSA period count).
    let serverOptions = arguments.prefix { $0 != "-d" && !$0.hasPrefix("--driver") && !$0.hasPrefix("-d") }
    if !serverOptions.contains("-n") && !serverOptions.contains(where: { $0.hasPrefix("--name") }) {
      arguments = ["-n", serverName] + arguments
    }
    return (executable, arguments)
  }

  /// Starts the server named `serverName` and waits until a client can connect (up to
  /// `timeout` seconds): the command in `~/.jackdrc` when there is one, else
  /// `jackd -n NAME` with the ALSA driver (a sound card exists) or the dummy driver.
  /// With `launch` other than `.automatic`, that driver. A net slave is ready once it has
  /// linked to its master (`canConnect` then checks for the ports the link brings).
  public init(
    serverName: String, launch: Launch = .automatic, settings: Settings = Settings(), timeout: Double = 10,
    canConnect: () -> Bool
  ) throws(JackError) {
    // The name becomes part of the log file's path: never one that could leave the folder.
    if let problem = JackNames.serverProblem(serverName) {
      throw JackError.badServerName(name: serverName, problem: problem, fromEnvironment: false)
    }
    self.serverName = serverName
    let executable: String
    var arguments: [String]
    if launch != .automatic {
      guard let jackd = Self.jackdPath() else {
        throw JackError.jackdMissing(noServerRunning: false)
      }
      executable = jackd
      arguments = ["-n", serverName]
      switch launch {
      case .automatic, .dummy:
        driver = "dummy"
        arguments += Self.dummyArguments(settings)
      case .alsa:
        driver = "alsa"
        arguments += Self.alsaArguments(settings)
      case .net(let master, let port):
        // Rate, period and channel counts come from the master.
        driver = "net"
        arguments += ["-d", "net", "-a", master] + (port.map { ["-p", "\($0)"] } ?? [])
      }
      fromJackdrc = false
    } else if let rc = Self.jackdrcCommand(serverName: serverName) {
      (executable, arguments) = rc
      driver = arguments.drop { $0 != "-d" }.dropFirst().first ?? "its"
      fromJackdrc = true
    } else {
      guard let jackd = Self.jackdPath() else {
        throw JackError.jackdMissing(noServerRunning: true)
      }
      executable = jackd
      let alsa = Self.hasSoundCard()
      driver = alsa ? "alsa" : "dummy"
      arguments = ["-n", serverName]
      arguments += alsa ? Self.alsaArguments(settings) : Self.dummyArguments(settings)
      fromJackdrc = false
    }
    // Shown as one would type it: the program's name when it was found on PATH.
    let shownName = fromJackdrc ? executable : (executable as NSString).lastPathComponent
    commandLine = ([shownName] + arguments).joined(separator: " ")
    let jackd = executable
    let stateDir = StatePaths.stateDirectory()
    logPath = "\(stateDir)/jackd-\(serverName).log"
    // Truncated or created 0600, never through a symbolic link planted at its name.
    let fd = open(logPath, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
    let openErrno = errno
    let log = fd >= 0 ? FileHandle(fileDescriptor: fd, closeOnDealloc: true) : nil
    // A read-only or full state folder: jackd still starts, its messages are not kept, and the
    // user is told so (never "see LOG" for a log that does not exist).
    logProblem =
      fd >= 0 ? nil : "cannot write jackd's log \(logPath): \(String(cString: strerror(openErrno))); jackd's messages are not kept"
    let logFile: String? = fd >= 0 ? logPath : nil
    process = Process()
    // jackd dies with stemdeck, even with kill -9 or a crash: util-linux's setpriv execs it with a
    // parent-death signal (PR_SET_PDEATHSIG), so no orphan server is left for the next stemdeck
    // to adopt and never stop. The "parent" is the thread that starts it: always the control
    // (main) thread, at start and when a server it started is started again. Without setpriv
    // jackd is started directly, as before.
    if let setpriv = Self.setprivPath() {
      process.executableURL = URL(fileURLWithPath: setpriv)
      process.arguments = ["--pdeathsig", "TERM", "--", jackd] + arguments
    } else {
      process.executableURL = URL(fileURLWithPath: jackd)
      process.arguments = arguments
    }
    process.standardOutput = log ?? FileHandle.nullDevice
    process.standardError = log ?? FileHandle.nullDevice
    process.standardInput = FileHandle.nullDevice
    do { try process.run() } catch {
      throw JackError.launchFailed(.couldNotRun(command: jackd, reason: error.localizedDescription), log: nil)
    }
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
      if !process.isRunning {
        throw JackError.launchFailed(.exitedAtOnce(status: process.terminationStatus), log: logFile)
      }
      if canConnect() { return }
      usleep(100_000)
    }
    process.terminate()
    if case .net(let master, let port) = launch {
      let p = port ?? ServerDriverInfo.netDefaultPort
      throw JackError.launchFailed(.noNetMaster(master: master, port: p, seconds: Int(timeout)), log: logFile)
    }
    throw JackError.launchFailed(.notReady(seconds: Int(timeout)), log: logFile)
  }

  public var isRunning: Bool { process.isRunning }

  /// util-linux's `setpriv` (Essential on Debian), which can run a program with a parent-death
  /// signal.
  static func setprivPath() -> String? {
    ["/usr/bin/setpriv", "/bin/setpriv"].first { FileManager.default.isExecutableFile(atPath: $0) }
  }

  /// Stops the server (SIGTERM, then waits up to 3 s, then SIGKILL).
  public func stop() {
    guard process.isRunning else { return }
    process.terminate()
    let deadline = Date().addingTimeInterval(3)
    while process.isRunning && Date() < deadline { usleep(20_000) }
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
  }

  deinit { stop() }
}

/// Where stemdeck keeps state (history, logs): $XDG_STATE_HOME/stemdeck or ~/.local/state/stemdeck.
public enum StatePaths {
  public static func stateDirectory() -> String {
    let env = ProcessInfo.processInfo.environment
    let base: String
    if let xdg = env["XDG_STATE_HOME"], xdg.hasPrefix("/") {
      base = xdg
    } else {
      base = (env["HOME"] ?? NSTemporaryDirectory()) + "/.local/state"
    }
    let dir = base + "/stemdeck"
    try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    return dir
  }
}
