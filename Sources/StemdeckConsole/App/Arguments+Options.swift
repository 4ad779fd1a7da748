import StemdeckAudioFile
import StemdeckControl
import StemdeckJack
import StemdeckSession
import StemdeckMixerView
import StemdeckRemote
import StemdeckLive

/// The words after the mode, read one at a time by `Arguments.parse`.
struct OptionWords {
  var rest: ArraySlice<String>
  /// The value given inline (`--server=foo`), until an option takes it.
  var inline: String?

  /// The value of option `flag`: the inline one, else the next word (not an option).
  mutating func value(_ flag: String) throws(CommandError) -> String {
    if let v = inline {
      inline = nil
      guard !v.isEmpty else { throw CommandError("\(flag) needs a value (see stemdeck --help)") }
      return v
    }
    guard let v = rest.popFirst(), !v.hasPrefix("--") else { throw CommandError("\(flag) needs a value (see stemdeck --help)") }
    return v
  }
}

extension Arguments {
  /// A port number of `flag` within `range`; the refusal says `allowed`.
  static func port(_ v: String, _ flag: String, _ range: ClosedRange<Int>, _ allowed: String) throws(CommandError) -> Int {
    guard let port = Int(v), range.contains(port) else {
      throw CommandError("\(flag) must be \(allowed) (got '\(ValueParser.printable(v))')")
    }
    return port
  }

  /// The options of every mode, the live console's and `ctl`'s: true when `arg` is one (its
  /// value taken from `words`). Which mode may have which: `checkCombinations`.
  mutating func takeOption(_ arg: String, _ words: inout OptionWords) throws(CommandError) -> Bool {
    switch arg {
    case "-h", "--help":
      helpTopic = helpTopic ?? HelpTopic(mode)
      mode = .help
    case "--version": mode = .version
    case "--config": configPath = try words.value(arg)
    case "--server", "-s": server = try words.value(arg)
    case "--name", "-n": clientName = try words.value(arg)
    case "--control": control = try words.value(arg)
    case "--no-control": noControl = true
    case "--socket": socket = try words.value(arg)
    case "--osc": oscPort = try Self.port(words.value(arg), "--osc", 1...65535, "a UDP port 1…65535")
    case "--osc-host": oscHost = try words.value(arg)
    case "--http": httpPort = try Self.port(words.value(arg), "--http", 0...65535, "a TCP port 1…65535, or 0 for any free one")
    case "--http-host": httpHost = try words.value(arg)
    case "--osc-allow":
      let v = try words.value(arg)
      switch v.lowercased() {
      case "mix": oscAllowsAll = false
      case "all": oscAllowsAll = true
      default:
        throw CommandError(
          "--osc-allow takes mix (mix, transport and show: the default) or all (also files, quit and routing) (got '\(ValueParser.printable(v))')"
        )
      }
    case "--json": json = true
    case "--watch" where mode == .ctl: watch.append(try words.value(arg))
    case "--list" where mode == .ctl: list = true
    case "--timeout" where mode == .ctl:
      let v = try words.value(arg)
      guard let t = Double(v), t.isFinite, t > 0, t <= 86400 else {
        throw CommandError("--timeout is seconds, more than 0 and at most 86400 (got '\(ValueParser.printable(v))')")
      }
      timeout = t
    case "--no-start-server": startServer = false
    case "--start-server":
      let v = try words.value(arg)
      guard let launch = ServerLauncher.Launch.parse(v) else {
        throw CommandError("--start-server: '\(ValueParser.printable(v))' is not a server to start; give \(ServerLauncher.Launch.forms)")
      }
      self.launch = launch
    case "--script": script = try words.value(arg)
    case "-c", "--commands": commands = try words.value(arg)
    case "--keep-going", "-k": keepGoing = true
    case "--play": play = true
    case "--mixer": mixer = true
    case "--strict": strict = true
    case "--no-connect": autoConnect = false
    case "--verbose", "-v": verbose = true
    default: return false
    }
    return true
  }

  /// The options of `render` and `analyze` (what they read, write and measure): true when `arg`
  /// is one.
  mutating func takeFileOption(_ arg: String, _ words: inout OptionWords) throws(CommandError) -> Bool {
    switch arg {
    case "--output", "-o": output = try words.value(arg)
    case "--duration", "-d":
      let v = try words.value(arg)
      duration = try ValueParser.duration(v)
    case "--from":
      let v = try words.value(arg)
      if v.lowercased() == "start" {
        from = 0
      } else {
        do { from = try ValueParser.duration(v) } catch {
          throw CommandError(
            "--from must be a time: seconds (90, 90s, 500ms), m:ss (1:30) or 'start' (got '\(ValueParser.printable(v))')")
        }
      }
    case "--dither": dither = true
    case "--stems": stems = try words.value(arg)
    case "--click": click = try words.value(arg)
    case "--input":
      let given = try words.value(arg)
      guard let eq = given.firstIndex(of: "="), eq != given.startIndex, given.index(after: eq) != given.endIndex else {
        throw CommandError(
          "--input must be NAME=FILE, a live input of the session and the audio file that stands in for it, e.g. --input mic=vocal.wav (got '\(ValueParser.printable(given))')"
        )
      }
      inputs.append(RenderInput(name: String(given[..<eq]), path: String(given[given.index(after: eq)...])))
    case "--quiet", "-q": quiet = true
    case "--format", "-f":
      let v = try words.value(arg)
      guard let f = OutputFormat.named(v) else {
        throw CommandError(
          "--format must be one of \(OutputFormat.formatNames.map(\.name).joined(separator: ", ")) (got '\(ValueParser.printable(v))')")
      }
      format = f
    case "--normalize":
      normalize = try Self.level(
        try words.value(arg), flag: arg, units: ["lufs", "lkfs"], example: "-14LUFS",
        range: OfflineRenderer.Normalize.targetRange, unit: "LUFS")
    case "--true-peak":
      truePeak = try Self.level(
        try words.value(arg), flag: arg, units: ["dbtp"], example: "-1dBTP",
        range: OfflineRenderer.Normalize.ceilingRange, unit: "dBTP")
    case "--sample-rate", "-r":
      let v = try words.value(arg)
      sampleRate = try ValueParser.integer(v, "--sample-rate")
    default: return false
    }
    return true
  }
}
