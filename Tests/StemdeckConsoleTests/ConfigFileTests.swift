import Foundation
import StemdeckJack
import StemdeckTestSupport
import Testing
@testable import StemdeckConsole
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

/// The user's configuration file (`$XDG_CONFIG_HOME/stemdeck/config`): its syntax, its errors
/// (file, line, what is allowed), flags winning over it, and `stemdeck config` run as a user runs it.
@Suite("configuration file")
struct ConfigFileTests {
  /// `text` as the configuration in a folder of its own; the environment that points at it.
  func place(_ text: String) throws -> (TemporaryFolder, [String: String]) {
    let folder = try TemporaryFolder()
    try FileManager.default.createDirectory(atPath: folder.file("stemdeck"), withIntermediateDirectories: true)
    try folder.write(text, to: "stemdeck/config")
    return (folder, ["XDG_CONFIG_HOME": folder.path, "HOME": folder.path])
  }

  func parse(_ args: [String], _ text: String) throws -> Arguments {
    let (folder, env) = try place(text)
    defer { folder.remove() }
    return try Arguments.parse(args, environment: env).0
  }

  func error(_ args: [String], _ text: String) throws -> String {
    let (folder, env) = try place(text)
    defer { folder.remove() }
    do {
      _ = try Arguments.parse(args, environment: env)
      return "no error"
    } catch {
      return error.message.replacingOccurrences(of: folder.path, with: "DIR")
    }
  }

  @Test("every key sets what its flag sets; comments, blank lines, spaces and CRLF are allowed")
  func keys() throws {
    let a = try parse(
      [],
      """
      # the rig\r
      server = studio\r

        name=deck
      start-server = dummy
      server-rate = 44100
      server-period = 128
      server-periods = 3
      connect = no
      control = /tmp/deck.sock
      osc = 9000
      osc-host = 0.0.0.0
      autosave = 5
      history = 50
      color = never
      """)
    #expect(a.server == "studio" && a.clientName == "deck" && a.launch == .dummy && a.startServer)
    #expect(a.serverSettings.rate == 44100 && a.serverSettings.period == 128 && a.serverSettings.periods == 3)
    #expect(!a.autoConnect && a.control == "/tmp/deck.sock" && a.oscPort == 9000 && a.oscHost == "0.0.0.0")
    #expect(a.autosave == 5 && a.historySize == 50 && !a.color)
    #expect(try parse([], "autosave = off\nosc = off\ncontrol = off\nstart-server = no").autosave == 0)
    let off = try parse([], "osc = off\ncontrol = off\nstart-server = no")
    #expect(off.oscPort == nil && off.noControl && !off.startServer)
  }

  @Test("a flag on the command line wins over the file, in either spelling, with no contradiction")
  func flagsWin() throws {
    let text = "osc = 9000\nstart-server = dummy\ncontrol = /tmp/a.sock\nserver = studio\nconnect = no"
    let a = try parse(["--osc=9001", "--no-start-server", "--no-control", "-s", "live"], text)
    #expect(a.oscPort == 9001 && !a.startServer && a.launch == .automatic && a.noControl && a.control == nil)
    #expect(a.server == "live" && !a.autoConnect)
    // ctl --socket names the socket: the file's server and control stay out of it.
    let ctl = try parse(["ctl", "--socket", "/tmp/b.sock", "status"], text)
    #expect(ctl.socket == "/tmp/b.sock" && ctl.server == nil && ctl.control == nil)
    // Without --socket, ctl talks to the file's control path.
    #expect(try parse(["ctl", "status"], text).control == "/tmp/a.sock")
    // render and analyze do not read it: a broken file does not stop a render.
    #expect(try parse(["render", "s.json", "-o", "o.wav"], "nonsense").mode == .render)
  }

  @Test("errors name the file, the line, the value and what is allowed; nothing starts")
  func errors() throws {
    #expect(try error([], "osc = 99999") == "DIR/stemdeck/config:1: osc = 99999: --osc must be a UDP port 1…65535 (got '99999')")
    #expect(
      try error([], "# x\nautosav = 9000").hasPrefix(
        "DIR/stemdeck/config:2: unknown key 'autosav' — did you mean 'autosave'?; the keys are server, name,"))
    #expect(try error([], "osc = 1\nosc = 2") == "DIR/stemdeck/config:2: 'osc' is set again (first on line 1); give each key once")
    #expect(
      try error([], "server studio") == "DIR/stemdeck/config:1: 'server studio' is not a setting; a line is KEY = VALUE (or # a comment)")
    #expect(try error([], "history =").hasPrefix("DIR/stemdeck/config:1: history has no value; lines of REPL history kept"))
    #expect(
      try error([], "server-period = 300")
        == "DIR/stemdeck/config:1: server-period = 300: server-period is a power of two (64, 128, 256…) (got 300)")
    #expect(
      try error([], "server-rate = 1000000")
        == "DIR/stemdeck/config:1: server-rate = 1000000: server-rate is a whole number of Hz from 8000 to 192000 (got '1000000')")
    #expect(try error([], "connect = maybe") == "DIR/stemdeck/config:1: connect = maybe: connect is yes or no (got 'maybe')")
    #expect(
      try error([], "start-server = jack").contains(
        "start-server = jack: --start-server: 'jack' is not a server to start; give dummy, alsa"))
    // The file's osc-host waits for OSC to be on (here or with --osc); on the command line alone it
    // is still the error it was.
    #expect(try error([], "osc-host = 0.0.0.0") == "no error")
    #expect(try parse(["--osc", "9000"], "osc-host = 0.0.0.0").oscHost == "0.0.0.0")
    #expect(try error(["--osc-host", "0.0.0.0"], "") == "--osc-host HOST needs --osc PORT (the OSC server is off without it)")
    #expect(
      try error(["--config", "/nonexistent/stemdeck.conf"], "")
        == "/nonexistent/stemdeck.conf: cannot read the configuration file: no such file")
  }

  @Test("no file at the default place is no configuration; a folder or bytes that are not UTF-8 are errors")
  func files() throws {
    let folder = try TemporaryFolder()
    defer { folder.remove() }
    let (a, config) = try Arguments.parse([], environment: ["XDG_CONFIG_HOME": folder.path])
    #expect(a == Arguments() && config.path == nil)
    // Without XDG_CONFIG_HOME: ~/.config.
    #expect(ConfigFile.defaultPath(environment: ["HOME": "/home/u"]) == "/home/u/.config/stemdeck/config")
    #expect(ConfigFile.defaultPath(environment: ["HOME": "/home/u", "XDG_CONFIG_HOME": "relative"]) == "/home/u/.config/stemdeck/config")
    try FileManager.default.createDirectory(atPath: folder.file("stemdeck/config"), withIntermediateDirectories: true)
    let configPath = folder.file("stemdeck/config")
    #expect(
      throws: CommandError("\(configPath): cannot read the configuration file: is a directory, not a configuration file")
    ) { try Arguments.parse([], environment: ["XDG_CONFIG_HOME": folder.path]) }
    try FileManager.default.removeItem(atPath: configPath)
    // A FIFO is refused at once (opened without waiting for a writer), not read until one comes.
    #expect(mkfifo(configPath, 0o600) == 0)
    #expect(
      throws: CommandError(
        "\(configPath): cannot read the configuration file: is not a regular file (a device, pipe or socket), not a configuration file")
    ) { try Arguments.parse([], environment: ["XDG_CONFIG_HOME": folder.path]) }
    try FileManager.default.removeItem(atPath: configPath)
    try Data([0x6f, 0x73, 0x63, 0x20, 0x3d, 0x20, 0xff]).write(to: URL(fileURLWithPath: folder.file("stemdeck/config")))
    do {
      _ = try Arguments.parse([], environment: ["XDG_CONFIG_HOME": folder.path])
      Issue.record("a file that is not UTF-8 was taken")
    } catch {
      #expect(error.message == "\(folder.path)/stemdeck/config: the configuration file is not UTF-8 text")
    }
  }

  @Test("stemdeck config prints each setting and where it came from; a broken file is exit 2 and one error line")
  func configCommand() throws {
    let (folder, env) = try place("# rig\nserver = studio\nosc = 9000\nautosave = off\n")
    defer { folder.remove() }
    let run = try runBinary(["config", "--osc", "9001"], in: folder, environment: env)
    #expect(run.status == 0 && run.stderr == [])
    let path = folder.file("stemdeck/config")
    #expect(run.stdout.first == "# stemdeck's settings: \(path), under the command line")
    func row(_ key: String) -> String {
      (run.stdout.first { $0.hasPrefix(key + " = ") } ?? "").replacingOccurrences(of: #" +"#, with: " ", options: .regularExpression)
    }
    #expect(row("server") == "server = studio # \(path):2")
    #expect(row("osc") == "osc = 9001 # command line")
    #expect(row("autosave") == "autosave = off # \(path):4")
    #expect(row("server-rate") == "server-rate = 48000 # default")
    #expect(run.stdout.count == 1 + ConfigKey.all.count)
    // The output is a configuration file itself: read back, it gives the same settings.
    func settings(_ lines: [String]) -> [String] {
      lines.dropFirst().map { $0.replacingOccurrences(of: #" +# .*"#, with: "", options: .regularExpression) }
    }
    try folder.write(settings(run.stdout).joined(separator: "\n"), to: "again")
    let again = try runBinary(["config", "--config", folder.file("again")], in: folder, environment: [:])
    #expect(again.status == 0 && settings(again.stdout) == settings(run.stdout), "\(again.stderr)")

    try folder.write("osc = 9000\nhistroy = 10\n", to: "stemdeck/config")
    let broken = try runBinary(["--no-start-server", "-c", "status"], in: folder, environment: env)
    #expect(broken.status == 2 && broken.stdout == [])
    #expect(
      broken.stderr == [
        "error: \(path):2: unknown key 'histroy' — did you mean 'history'?; the keys are \(ConfigKey.all.map(\.name).joined(separator: ", ")) (stemdeck config lists them)"
      ])
  }
}
