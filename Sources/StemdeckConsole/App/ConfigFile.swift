import Foundation
import StemdeckControl
import StemdeckJack
import StemdeckSession
import StemdeckText
import StemdeckRemote
import StemdeckLive

/// The user's configuration: `$XDG_CONFIG_HOME/stemdeck/config` (`~/.config/stemdeck/config`),
/// or the file `--config FILE` names. `key = value` lines; `#` starts a comment line; blank lines
/// are ignored. Each key is one setting of the live console (`ConfigKey.all`); a flag on the
/// command line that sets the same thing wins. An unknown key, a key given twice or a bad value
/// is an error naming the file, the line and what is allowed, and stemdeck does not start
/// (docs/command-line.md, *Configuration*; `stemdeck config` shows what is in effect).
public struct ConfigFile: Equatable, Sendable {
  public struct Entry: Equatable, Sendable {
    public var value: String
    public var line: Int
  }

  /// The file read (nil: there was none).
  public var path: String?
  public var entries: [String: Entry] = [:]

  /// Where the file is looked for when `--config` does not say.
  public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
    if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") { return xdg + "/stemdeck/config" }
    return (environment["HOME"] ?? NSHomeDirectory()) + "/.config/stemdeck/config"
  }

  /// Reads `path`. A missing file is no configuration when `required` is false (the default
  /// place), an error when it was named with `--config`.
  public static func load(path: String, required: Bool) throws(CommandError) -> ConfigFile {
    // Optional (the XDG default) and absent: no settings. Read like a session file otherwise:
    // a regular file only (never a device or FIFO), at most 1 MiB.
    if !required && access(path, F_OK) != 0 && errno == ENOENT { return ConfigFile() }
    let data: [UInt8]
    do { data = try SessionFile.readRegularFile(at: path, limit: 1 << 20, kind: "configuration file") } catch {
      throw CommandError("\(path): cannot read the configuration file: \(error.message)")
    }
    guard let text = String(validating: data, as: UTF8.self) else {
      throw CommandError("\(path): the configuration file is not UTF-8 text")
    }
    return try parse(text, path: path)
  }

  /// The entries of `text`, checked against the known keys (not yet their values).
  public static func parse(_ text: String, path: String) throws(CommandError) -> ConfigFile {
    var file = ConfigFile(path: path)
    // "\r\n" is one Character in Swift: lines end at either.
    let lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }
    for (index, raw) in lines.enumerated() {
      let line = raw.trimmingCharacters(in: .whitespaces.union(CharacterSet(charactersIn: "\r")))
      if line.isEmpty || line.hasPrefix("#") { continue }
      let at = "\(path):\(index + 1)"
      guard let eq = line.firstIndex(of: "=") else {
        throw CommandError("\(at): '\(ValueParser.printable(line))' is not a setting; a line is KEY = VALUE (or # a comment)")
      }
      let key = line[..<eq].trimmingCharacters(in: .whitespaces).lowercased()
      let value = line[line.index(after: eq)...].trimmingCharacters(in: .whitespaces)
      guard ConfigKey.named(key) != nil else {
        let guess = Suggestion.closest(to: key, in: ConfigKey.all.map(\.name))
        throw CommandError(
          "\(at): unknown key '\(ValueParser.printable(key))'" + (guess.map { " — did you mean '\($0)'?" } ?? "")
            + "; the keys are \(ConfigKey.all.map(\.name).joined(separator: ", ")) (stemdeck config lists them)")
      }
      if let first = file.entries[key] {
        throw CommandError("\(at): '\(key)' is set again (first on line \(first.line)); give each key once")
      }
      guard !value.isEmpty else { throw CommandError("\(at): \(key) has no value; \(ConfigKey.named(key)!.allowed)") }
      file.entries[key] = Entry(value: value, line: index + 1)
    }
    return file
  }

  /// Where `key` came from in this file ("PATH:LINE"), nil when the file does not set it.
  func origin(of key: String) -> String? {
    guard let path, let entry = entries[key] else { return nil }
    return "\(path):\(entry.line)"
  }
}

/// One setting of the configuration file: its name, the command-line flags that set the same
/// thing (given, they win over the file), what values it takes, how it is applied and shown.
struct ConfigKey: Sendable {
  let name: String
  let flags: [String]
  let allowed: String
  let apply: @Sendable (inout Arguments, String) throws(CommandError) -> Void
  let show: @Sendable (Arguments) -> String

  static func named(_ name: String) -> ConfigKey? { all.first { $0.name == name } }

  /// The value as its flag would take it: the same checks and messages as on the command line.
  static func viaFlag(_ flag: String, _ value: String) throws(CommandError) -> Arguments {
    try Arguments.parse([flag, value], checked: false)
  }

  static func yesNo(_ key: String, _ value: String) throws(CommandError) -> Bool {
    switch value.lowercased() {
    case "yes", "on", "true": return true
    case "no", "off", "false": return false
    default: throw CommandError("\(key) is yes or no (got '\(ValueParser.printable(value))')")
    }
  }

  static func integer(_ key: String, _ value: String, in range: ClosedRange<Int>, unit: String) throws(CommandError) -> Int {
    guard let n = Int(value), range.contains(n) else {
      throw CommandError(
        "\(key) is a whole number of \(unit) from \(range.lowerBound) to \(range.upperBound) (got '\(ValueParser.printable(value))')")
    }
    return n
  }

  static let all: [ConfigKey] = [
    ConfigKey(
      name: "server", flags: ["--server", "-s"], allowed: "a JACK server name (default: $JACK_DEFAULT_SERVER, else 'default')",
      apply: { a, v throws(CommandError) in a.server = try viaFlag("--server", v).server },
      show: { $0.server ?? "default" }),
    ConfigKey(
      name: "name", flags: ["--name", "-n"], allowed: "stemdeck's JACK client name (default: stemdeck)",
      apply: { a, v throws(CommandError) in a.clientName = try viaFlag("--name", v).clientName },
      show: { $0.clientName }),
    ConfigKey(
      name: "start-server", flags: ["--start-server", "--no-start-server"],
      allowed: "auto (~/.jackdrc, else ALSA with a sound card, else dummy), no, \(ServerLauncher.Launch.forms)",
      apply: { a, v throws(CommandError) in
        switch v.lowercased() {
        case "auto": a.startServer = true; a.launch = .automatic
        case "no", "off": a.startServer = false
        default: a.launch = try viaFlag("--start-server", v).launch
        }
      },
      show: { a in a.startServer ? a.launch.spec : "no" }),
    ConfigKey(
      name: "server-rate", flags: [], allowed: "the sample rate of a server stemdeck starts, 8000 to 192000 Hz (default 48000)",
      apply: { a, v throws(CommandError) in
        a.serverSettings.rate = try integer("server-rate", v, in: ServerLauncher.Settings.rates, unit: "Hz")
      },
      show: { "\($0.serverSettings.rate)" }),
    ConfigKey(
      name: "server-period", flags: [], allowed: "the period of a server stemdeck starts, 16 to 8192 frames, a power of two (default 256)",
      apply: { a, v throws(CommandError) in
        let n = try integer("server-period", v, in: ServerLauncher.Settings.periodRange, unit: "frames")
        guard n & (n - 1) == 0 else { throw CommandError("server-period is a power of two (64, 128, 256…) (got \(n))") }
        a.serverSettings.period = n
      },
      show: { "\($0.serverSettings.period)" }),
    ConfigKey(
      name: "server-periods", flags: [], allowed: "periods per buffer of an ALSA server stemdeck starts, 2 to 16 (default 2)",
      apply: { a, v throws(CommandError) in
        a.serverSettings.periods = try integer("server-periods", v, in: ServerLauncher.Settings.periodsRange, unit: "periods")
      },
      show: { "\($0.serverSettings.periods)" }),
    ConfigKey(
      name: "connect", flags: ["--no-connect"], allowed: "yes (connect the master to the first playback ports) or no",
      apply: { a, v throws(CommandError) in a.autoConnect = try yesNo("connect", v) },
      show: { $0.autoConnect ? "yes" : "no" }),
    ConfigKey(
      name: "control", flags: ["--control", "--no-control"],
      allowed: "the control socket's path, default (in $XDG_RUNTIME_DIR/stemdeck), or off",
      apply: { a, v throws(CommandError) in
        switch v.lowercased() {
        case "off": a.noControl = true
        case "default": a.control = nil
        default: a.control = try viaFlag("--control", v).control
        }
      },
      show: { a in a.noControl ? "off" : a.control ?? "default" }),
    ConfigKey(
      name: "osc", flags: ["--osc"], allowed: "the OSC server's UDP port 1…65535, or off (default off)",
      apply: { a, v throws(CommandError) in a.oscPort = v.lowercased() == "off" ? nil : try viaFlag("--osc", v).oscPort },
      show: { $0.oscPort.map(String.init) ?? "off" }),
    ConfigKey(
      name: "osc-host", flags: ["--osc-host"], allowed: "the address the OSC server binds (default 127.0.0.1: this machine only)",
      apply: { a, v throws(CommandError) in
        // Kept for when OSC is on (here or by --osc); with OSC off it is checked, not an error.
        let host = try viaFlag("--osc-host", v).oscHost
        if a.oscPort != nil { a.oscHost = host }
      },
      show: { $0.oscHost ?? "127.0.0.1" }),
    ConfigKey(
      name: "osc-allow", flags: ["--osc-allow"],
      allowed: "what OSC may do: mix (mix, transport and show; the default) or all (also files, quit and routing)",
      apply: { a, v throws(CommandError) in
        let allows = try viaFlag("--osc-allow", v).oscAllowsAll
        if a.oscPort != nil { a.oscAllowsAll = allows }
      },
      show: { $0.oscAllowsAll ? "all" : "mix" }),
    ConfigKey(
      name: "http", flags: ["--http"], allowed: "the web mixer's TCP port 1…65535 (0: any free one), or off (default off)",
      apply: { a, v throws(CommandError) in a.httpPort = v.lowercased() == "off" ? nil : try viaFlag("--http", v).httpPort },
      show: { $0.httpPort.map(String.init) ?? "off" }),
    ConfigKey(
      name: "http-host", flags: ["--http-host"],
      allowed: "the address the web mixer binds (default 127.0.0.1: this machine only; any other needs its token)",
      apply: { a, v throws(CommandError) in
        // Kept for when the web mixer is on (here or by --http), as osc-host.
        let host = try viaFlag("--http-host", v).httpHost
        if a.httpPort != nil { a.httpHost = host }
      },
      show: { $0.httpHost ?? "127.0.0.1" }),
    ConfigKey(
      name: "autosave", flags: [], allowed: "seconds between autosaves of a changed session (1 to 3600), or off (default 30)",
      apply: { a, v throws(CommandError) in
        a.autosave = v.lowercased() == "off" ? 0 : Double(try integer("autosave", v, in: 1...3600, unit: "seconds"))
      },
      show: { a in a.autosave == 0 ? "off" : NumberFormat.plain(a.autosave ?? 30) }),
    ConfigKey(
      name: "history", flags: [], allowed: "lines of REPL history kept, 0 to 100000 (default 2000)",
      apply: { a, v throws(CommandError) in a.historySize = try integer("history", v, in: 0...100_000, unit: "lines") },
      show: { "\($0.historySize)" }),
    ConfigKey(
      name: "color", flags: [], allowed: "auto (colour on a terminal unless NO_COLOR is set) or never",
      apply: { a, v throws(CommandError) in
        switch v.lowercased() {
        case "auto": a.color = true
        case "never", "no", "off": a.color = false
        default: throw CommandError("color is auto or never (got '\(ValueParser.printable(v))')")
        }
      },
      show: { $0.color ? "auto" : "never" })
  ]
}

extension Arguments {
  /// The config keys whose flags appear in `args` (before a `--`): those the file does not set.
  static func keysGiven(in args: [String]) -> Set<String> {
    var given = Set<String>()
    for arg in args {
      if arg == "--" { break }
      let flag = arg.hasPrefix("--") ? String(arg.prefix { $0 != "=" }) : arg
      for key in ConfigKey.all where key.flags.contains(flag) { given.insert(key.name) }
    }
    return given
  }

  /// Applies `config` under the command line `args` was parsed from: a key whose flag was given
  /// stays as the flag set it. A bad value is an error naming the file and line.
  mutating func apply(_ config: ConfigFile, commandLine args: [String]) throws(CommandError) {
    var given = Self.keysGiven(in: args)
    // `ctl --socket PATH` names the socket outright: the file's server, name and control do not
    // join it (they would contradict it).
    if mode == .ctl && args.contains(where: { $0 == "--socket" || $0.hasPrefix("--socket=") }) {
      given.formUnion(["server", "name", "control"])
    }
    for key in ConfigKey.all where !given.contains(key.name) {
      guard let entry = config.entries[key.name] else { continue }
      do { try key.apply(&self, entry.value) } catch {
        throw CommandError(
          "\(config.origin(of: key.name) ?? key.name): \(key.name) = \(ValueParser.printable(entry.value)): \(error.message)")
      }
    }
  }

  /// The command line parsed, the configuration file under it (for the live console, ctl and
  /// `config`), then the checks across options.
  public static func parse(_ args: [String], environment: [String: String]) throws(CommandError) -> (Arguments, ConfigFile) {
    var a = try parse(args, checked: false)
    var config = ConfigFile()
    if [.live, .ctl, .config].contains(a.mode) {
      config = try ConfigFile.load(path: a.configPath ?? ConfigFile.defaultPath(environment: environment), required: a.configPath != nil)
      try a.apply(config, commandLine: args)
    }
    if a.mode != .help { try a.checkCombinations() }
    return (a, config)
  }

  /// `stemdeck config`: every setting in effect, as lines of a configuration file, each with
  /// where it came from (the command line, the file and line, or the default).
  func configReport(_ config: ConfigFile, commandLine args: [String], environment: [String: String]) -> [String] {
    let given = Self.keysGiven(in: args)
    let place = config.path ?? (configPath ?? ConfigFile.defaultPath(environment: environment))
    var lines = ["# stemdeck's settings: \(config.path == nil ? "no file at \(place)" : place), under the command line"]
    let rows = ConfigKey.all.map { key -> (String, String) in
      let origin = given.contains(key.name) ? "command line" : config.origin(of: key.name) ?? "default"
      return ("\(key.name) = \(key.show(self))", origin)
    }
    let width = rows.map(\.0.count).max() ?? 0
    for (setting, origin) in rows { lines.append(setting.padding(toLength: width, withPad: " ", startingAt: 0) + "   # " + origin) }
    return lines
  }
}
