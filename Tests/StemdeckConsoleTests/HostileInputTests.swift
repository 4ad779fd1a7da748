// Regression tests for issue 16 ("Nothing lost, whatever comes in"): each defect found from
// outside (hostile session files, REPL lines, file-system tricks) kept as a test, plus cases of
// the same classes found around them. See README's "Security" section for the rules they prove.
import Foundation
import StemdeckTestSupport
import StemdeckText
import Testing
@testable import StemdeckConsole
import StemdeckControl
import StemdeckSession

@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

#if canImport(Glibc)
import Glibc
#endif

@Suite("Hostile input: nothing lost (issue 16)")
struct HostileInputTests {
  /// A session of `count` stems, all playing `file` (relative to the session), named s0, s1…
  static func session(stems count: Int, file: String, effects: String = "", prefix: String = "s") -> String {
    let stems = (0..<count).map { #"{ "name" : "\#(prefix)\#($0)", "file" : "\#(file)" }"# }
    return #"{ "format" : "stemdeck-session", "version" : 1, "stems" : [ "# + stems.joined(separator: ", ") + " ]"
      + (effects.isEmpty ? "" : #", "effects" : [ \#(effects) ]"#) + " }"
  }

  /// The bytes of a file, or nil when it cannot be read.
  static func bytes(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

  /// The file type bits (S_IFREG, S_IFIFO…) of what is at `path`, without following a link.
  static func type(_ path: String) -> mode_t? {
    var info = stat()
    return lstat(path, &info) == 0 ? info.st_mode & S_IFMT : nil
  }

  // MARK: 1. open is all or nothing

  @Test("1: open of a session with more stems than the slot limit (1,025) changes nothing; the next save keeps the old file")
  func openOverSlotLimit() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let old = h.folder.file("old.json")
    #expect(h.run("save \(old)").ok)
    let oldBytes = try #require(Self.bytes(old))
    #expect(h.run("vol drums 0.5").ok)
    let before = MixerSnapshot(h)
    let big = try h.folder.write(Self.session(stems: 1025, file: "drums.wav"), to: "big.json")
    let result = h.run("open! \(big)")
    #expect(!result.ok)
    #expect(result.output.count == 1)
    let line = try #require(result.output.first)
    #expect(line.contains("1025 stems") && line.contains("at most 1024") && line.contains("nothing was opened"), "\(line)")
    #expect(MixerSnapshot(h) == before, "the current session must be untouched")
    #expect(h.console.sessionPath == old)
    // The unsaved change is the old session's: saving writes it, not a half-loaded new one.
    #expect(h.run("save").ok)
    let saved = try SessionFile.load(path: old)
    #expect(saved.stems.map(\.name) == ["drums", "bass"])
    #expect(saved.stems.first?.volume == 0.5)
    #expect(try SessionFile.load(path: old + ".bak").stems.count == 2)
    #expect(Self.bytes(old + ".bak") == oldBytes)
  }

  @Test("1: open that needs more free stem slots than there are changes nothing (small slot limit)")
  func openWithoutFreeSlots() throws {
    let folder = try TemporaryFolder()
    try folder.wav("a.wav", channels: 1, sampleRate: 48000, seconds: 0.5)
    let mixer = Mixer(sampleRate: 48000, streaming: .synchronous, maxVoices: 4)
    defer { mixer.shutdown() }
    var lines: [String] = []
    let console = Console(mixer: mixer) { lines.append($0) }
    let two = try folder.write(Self.session(stems: 2, file: "a.wav"), to: "two.json")
    let three = try folder.write(Self.session(stems: 3, file: "a.wav", prefix: "t"), to: "three.json")
    #expect(console.execute(line: "open \(two)"))
    lines.removeAll()
    #expect(!console.execute(line: "open \(three)"))
    #expect(lines.count == 1 && lines[0].contains("nothing was opened"), "\(lines)")
    #expect(mixer.stems.names == ["s0", "s1"])
    #expect(console.sessionPath == two)
    #expect(!mixer.isDirty)
  }

  // MARK: 3. save refuses what is not a regular file

  @Test("3: save to a FIFO or a socket is refused; the node stays, no backup is made")
  func saveToSpecialFile() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let fifo = h.folder.file("pipe.json")
    try #require(mkfifo(fifo, 0o644) == 0)
    let socketPath = h.folder.file("sock.json")
    let sock = bindUnixSocket(at: socketPath)
    try #require(sock >= 0)
    defer { close(sock) }
    for (path, what) in [(fifo, "a FIFO (named pipe)"), (socketPath, "a socket")] {
      let result = h.run("save \(path)")
      #expect(!result.ok)
      #expect(result.output == ["error: \(path): is \(what), not a regular file; stemdeck saves only over a regular file or to a new name"])
      #expect(Self.type(path) == (what.hasPrefix("a FIFO") ? S_IFIFO : S_IFSOCK))
      #expect(Self.type(path + ".bak") == nil)
    }
    #expect(h.console.sessionPath == nil)
    #expect(h.mixer.isDirty == false)
    // No temporary file is left behind either.
    let left = try FileManager.default.contentsOfDirectory(atPath: h.folder.path).filter { $0.contains(".tmp-") }
    #expect(left.isEmpty, "\(left)")
  }

  // MARK: 6. save removes only regular files it made

  @Test("6: save never removes folders named like the autosave sidecar or its backup")
  func autosaveNamesAreFolders() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let path = h.folder.file("song.json")
    for name in [".song.json.autosave.json", ".song.json.autosave.json.bak"] {
      try FileManager.default.createDirectory(atPath: h.folder.file(name), withIntermediateDirectories: false)
      try h.folder.write("precious", to: name + "/keep.txt")
    }
    #expect(h.run("save \(path)").ok)
    #expect(h.run("vol drums 0.3; save").ok)
    for name in [".song.json.autosave.json", ".song.json.autosave.json.bak"] {
      #expect(Self.type(h.folder.file(name)) == S_IFDIR, "\(name) was removed")
      #expect(Self.bytes(h.folder.file(name + "/keep.txt")) == Data("precious".utf8))
    }
  }

  @Test("6: the autosave sidecar (a regular file) is still removed after a save")
  func autosaveFileRemoved() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let path = h.folder.file("song.json")
    #expect(h.run("save \(path)").ok)
    h.console.autosaveInterval = 1
    h.console.lastAutosave = .distantPast
    #expect(h.run("vol drums 0.3").ok)
    _ = h.idle()
    let side = Console.autosavePath(for: path)
    #expect(Self.type(side) == S_IFREG)
    #expect(h.run("save").ok)
    #expect(Self.type(side) == nil)
  }

  // MARK: 8. an effect whose file is missing is kept

  @Test("8: a sound effect whose file is missing at open is kept and saved back unchanged")
  func missingEffectKept() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let effects =
      #"{ "name" : "hit", "file" : "drums.wav", "volume" : 0.5 }, { "name" : "gone", "file" : "sfx/gone.wav", "volume" : 0.25, "pan" : -0.5 }, { "name" : "tail", "file" : "bass.wav" }"#
    let path = try h.folder.write(Self.session(stems: 1, file: "drums.wav", effects: effects), to: "fx.json")
    let opened = h.run("open \(path)")
    #expect(opened.ok)
    #expect(opened.output.contains { $0.hasPrefix("warning: ") && $0.contains("effects[1] (gone)") }, "\(opened.output)")
    #expect(h.mixer.effects.statuses().map(\.settings.name) == ["hit", "tail"])
    #expect(h.run("vol s0 0.5; save").ok)
    let saved = try SessionFile.load(path: path).effects
    #expect(saved.map(\.name) == ["hit", "gone", "tail"])
    #expect(saved[1].file == "sfx/gone.wav" && saved[1].volume == 0.25 && saved[1].pan == -0.5)
    // It can be dropped on purpose, and its name is not free while it is kept.
    #expect(!h.run("sfx load gone \(h.drums)").ok)
    #expect(h.run("sfx unload gone; save").ok)
    #expect(try SessionFile.load(path: path).effects.map(\.name) == ["hit", "tail"])
  }

  // MARK: 11. a group is all or nothing

  @Test("11: at … { vol drums 0.5; pan drums 7 } changes nothing, in the mixer and in what it plays")
  func groupAllOrNothing() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("play").ok)
    let before = h.render(blocks: 8)
    let snapshot = MixerSnapshot(h)
    for line in [
      "at 0:00.5 { vol drums 0.5; pan drums 7 }", "begin; vol all 0.1; master 0.2; mute bass; rate drums 9; commit",
      "at 0:00.3 { vol drums 0.1 over 0.1; rate bass 1.5 over 0.2; pan bass 0.5; solo nosuch }"
    ] {
      let result = h.run(line)
      #expect(!result.ok)
      #expect(result.output.last?.hasPrefix("error: nothing changed: the group is all or nothing") == true, "\(result.output)")
      #expect(MixerSnapshot(h) == snapshot)
    }
    // 8 more blocks take the transport past 0:00.5: the level is the same as before.
    let after = h.render(blocks: 16)
    #expect(abs(after - before) < 0.01 * before, "peak \(before) before, \(after) after the rejected groups")
    #expect(h.run("at 0:00.9 { vol drums 0.5; pan drums 0.5 }").ok)
    #expect(MixerSnapshot(h)[stem: "drums"].volume == 0.5)
  }

  @Test("11: a landing time already passed says the changes land now")
  func groupInThePast() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("seek 1.5").ok)
    let result = h.run("at 0:01 { vol drums 0.5 }")
    #expect(result == (true, ["1 change land now: 0:01.000 has already passed (the transport is at 0:01.500)"]))
    #expect(h.run("at 0:02 { vol drums 0.4 }") == (true, ["1 change land at 0:02.000"]))
  }

  // MARK: 28. a long session file name

  @Test("28: a session file name too long for its backup and autosave is refused at the first save")
  func longSessionName() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    for length in [252, Console.longestSessionName + 1] {
      let name = String(repeating: "n", count: length - 5) + ".json"
      let result = h.run("save \(h.folder.file(name))")
      #expect(!result.ok)
      #expect(
        result.output.count == 1 && result.output[0].contains("\(length) bytes long") && result.output[0].contains("240"),
        "\(result.output)")
      #expect(Self.type(h.folder.file(name)) == nil)
    }
    // The longest allowed name saves, saves again (backup), and autosaves (twice).
    let name = String(repeating: "n", count: Console.longestSessionName - 5) + ".json"
    let path = h.folder.file(name)
    #expect(h.run("save \(path)").ok)
    #expect(h.run("vol drums 0.4; save").ok)
    #expect(Self.type(path + ".bak") == S_IFREG)
    h.console.autosaveInterval = 1
    h.console.lastAutosave = .distantPast
    #expect(h.run("vol drums 0.3").ok)
    _ = h.idle()
    #expect(h.run("vol drums 0.2").ok)
    h.console.lastAutosave = .distantPast
    _ = h.idle()
    #expect(Self.type(Console.autosavePath(for: path)) == S_IFREG)
    #expect(Self.type(Console.autosavePath(for: path) + ".bak") == nil, "autosaves keep no backup of themselves")
  }
}

extension HostileInputTests {
  // MARK: 19. loop regions in a session file

  @Test("19: a session whose loop region lies past the end of its file is refused, as the REPL's 'loop' is")
  func loopRegionPastTheFile() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let before = MixerSnapshot(h)
    for (region, fragment) in [
      (#""loopStart" : 5, "loopEnd" : 9"#, "loop end 0:09.000 is past the end of 'x' (0:02.000)"),
      (#""loopStart" : 0.1, "loopEnd" : 1, "crossfade" : 0.5"#, "needs that much audio before the loop start")
    ] {
      let path = try h.folder.write(
        #"{ "format" : "stemdeck-session", "version" : 1, "stems" : [ { "name" : "x", "file" : "drums.wav", \#(region) } ] }"#,
        to: "loop.json")
      let result = h.run("open! \(path)")
      #expect(!result.ok)
      #expect(
        result.output.count == 1 && result.output[0].contains("stems[0] (x).loopEnd: ") && result.output[0].contains(fragment),
        "\(result.output)")
      #expect(MixerSnapshot(h) == before)
    }
  }

  // MARK: 27. play after the end

  @Test("27: play after the song has ended is not taken for a new end by the next look at the stems")
  func playAfterEnd() throws {
    let h = try ConsoleHarness()
    defer { h.shutdown() }
    try h.folder.wav("short.wav", channels: 1, sampleRate: 48000, seconds: 0.2)
    #expect(h.run("add \(h.folder.file("short.wav"))").ok)
    #expect(h.run("play").ok)
    h.render(blocks: 12)
    #expect(h.idle().contains("all stems finished"))
    #expect(h.mixer.transport.songEnds == 1)
    #expect(h.mixer.transport.allFiniteStemsFinished)
    // 'play' rewinds; until the renderer has applied it, nothing has finished.
    #expect(h.run("play").ok)
    #expect(!h.mixer.transport.allFiniteStemsFinished)
    #expect(!h.idle().contains("all stems finished"))
    #expect(h.mixer.transport.songEnds == 1)
    h.render(blocks: 4)
    #expect(h.mixer.transport.state == .playing)
    #expect(h.mixer.transport.position > 0.05)
    h.render(blocks: 8)
    #expect(h.idle().contains("all stems finished"))
    #expect(h.mixer.transport.songEnds == 2)
  }
}

/// The `render` command on hostile outputs, through the real binary (like ScriptModeTests).
@Suite(
  "Hostile input: render outputs (issue 16)",
  .enabled(
    if: FileManager.default.isExecutableFile(atPath: stemdeckBinary),
    "build the binary first: swift build --product stemdeck"))
struct HostileRenderTests {
  /// drums.wav (stereo, 1 s) and song.json playing it.
  func fixture() throws -> TemporaryFolder {
    let folder = try TemporaryFolder()
    try folder.wav("drums.wav", channels: 2, sampleRate: 48000, seconds: 1, amplitude: 0.5)
    try folder.write(
      #"{ "format" : "stemdeck-session", "version" : 1, "stems" : [ { "name" : "drums", "file" : "drums.wav" } ] }"#, to: "song.json")
    return folder
  }

  func temporaries(_ folder: TemporaryFolder) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains(".tmp-") }
  }

  @Test("5: a render that fails part-way (file size limit) keeps the previous file, says why, exits 1 (not SIGXFSZ)")
  func sizeLimitKeepsPreviousFile() throws {
    let folder = try fixture()
    let previous = Data("the previous render".utf8)
    try previous.write(to: URL(fileURLWithPath: folder.file("out.wav")))
    let prlimit = try #require(
      ["/usr/bin/prlimit", "/bin/prlimit"].first { FileManager.default.isExecutableFile(atPath: $0) },
      "prlimit (util-linux) is needed")
    let r = try runBinary(["--fsize=100000", stemdeckBinary, "render", "song.json", "--output", "out.wav"], in: folder, executable: prlimit)
    #expect(r.status == 1, "exit \(r.status) (153 is death by SIGXFSZ)")
    #expect(r.stderr.count == 1 && r.stderr[0].hasPrefix("error: out.wav: write failed: File too large"), "\(r.stderr)")
    #expect(FileManager.default.contents(atPath: folder.file("out.wav")) == previous)
    #expect(try temporaries(folder).isEmpty)
    // Without the limit the render replaces it, keeping its permissions.
    #expect(chmod(folder.file("out.wav"), 0o640) == 0)
    let ok = try runBinary(["render", "song.json", "--output", "out.wav"], in: folder)
    #expect(ok.status == 0, "\(ok.stderr)")
    #expect((try FileManager.default.attributesOfItem(atPath: folder.file("out.wav"))[.posixPermissions] as? Int) == 0o640)
    #expect(((try FileManager.default.attributesOfItem(atPath: folder.file("out.wav"))[.size] as? Int) ?? 0) > 384_000)
  }

  @Test("4: an output that is one of the session's stem files (also through a link) is refused; the stem is untouched")
  func outputIsAStem() throws {
    let folder = try fixture()
    let stem = try #require(FileManager.default.contents(atPath: folder.file("drums.wav")))
    try FileManager.default.createSymbolicLink(atPath: folder.file("link.wav"), withDestinationPath: "drums.wav")
    #expect(link(folder.file("drums.wav"), folder.file("hard.wav")) == 0)
    for output in ["drums.wav", "./drums.wav", "link.wav", "hard.wav"] {
      let r = try runBinary(["render", "song.json", "--output", output], in: folder)
      #expect(r.status == 1)
      #expect(
        r.stderr == [
          "error: \(output): is the audio file of stem 'drums'; a render never writes over its own inputs (choose another --output)"
        ])
      #expect(FileManager.default.contents(atPath: folder.file("drums.wav")) == stem)
    }
  }

  @Test("3, 26: outputs that are not regular files, or have no extension, or are too short, are refused with what is wrong")
  func badOutputs() throws {
    let folder = try fixture()
    try #require(mkfifo(folder.file("pipe.wav"), 0o644) == 0)
    try FileManager.default.createDirectory(atPath: folder.file("dir.wav"), withIntermediateDirectories: false)
    let cases: [([String], String)] = [
      (
        ["--output", "pipe.wav"],
        "error: pipe.wav: is a FIFO (named pipe), not a regular file; a render writes only to a regular file or a new name"
      ),
      (["--output", "dir.wav"], "error: dir.wav: is a folder; give a file name for the render"),
      (
        ["--output", "wav"],
        "error: wav: unknown output format (no extension): use a .wav, .flac, .aiff, .ogg or .opus file name, or --format"
      ),
      (
        ["--output", ".wav"],
        "error: .wav: unknown output format (no extension): use a .wav, .flac, .aiff, .ogg or .opus file name, or --format"
      ),
      (["--output", "x.wav", "--duration", "0.00001"], "error: --duration 1e-05 is shorter than one sample at 48000 Hz")
    ]
    for (arguments, message) in cases {
      let r = try runBinary(["render", "song.json"] + arguments, in: folder)
      #expect(r.status == 1)
      #expect(r.stderr == [message])
    }
    var info = stat()
    #expect(lstat(folder.file("pipe.wav"), &info) == 0 && info.st_mode & S_IFMT == S_IFIFO)
    #expect(!FileManager.default.fileExists(atPath: folder.file("wav")))
    #expect(!FileManager.default.fileExists(atPath: folder.file("x.wav")))
    #expect(try temporaries(folder).isEmpty)
  }

  @Test("26: a symbolic link at the output is replaced by the render, never followed (as 'save' does)")
  func symbolicLinkOutput() throws {
    let folder = try fixture()
    try folder.write("precious", to: "elsewhere.txt")
    try FileManager.default.createSymbolicLink(atPath: folder.file("out.wav"), withDestinationPath: "elsewhere.txt")
    let r = try runBinary(["render", "song.json", "--output", "out.wav"], in: folder)
    #expect(r.status == 0, "\(r.stderr)")
    #expect(FileManager.default.contents(atPath: folder.file("elsewhere.txt")) == Data("precious".utf8))
    var info = stat()
    #expect(lstat(folder.file("out.wav"), &info) == 0 && info.st_mode & S_IFMT == S_IFREG)
  }
}

extension HostileRenderTests {
  // MARK: 24, 25. server and client names

  @Test("24, 25: hostile or over-long JACK server and client names are refused before anything is opened or written")
  func jackNames() throws {
    let folder = try fixture()
    let long = String(repeating: "c", count: 70)
    let cases: [([String], [String: String], String)] = [
      (["--server", "../../x"], [:], "error: JACK server name '../../x' may not start with '.'"),
      (["--server", "a/../../b"], [:], "error: JACK server name 'a/../../b' may hold only ASCII letters, digits, '.', '_' and '-'"),
      (
        [], ["JACK_DEFAULT_SERVER": "x/../../y"],
        "error: JACK server name 'x/../../y' (from JACK_DEFAULT_SERVER) may hold only ASCII letters, digits, '.', '_' and '-'"
      ),
      (
        ["--server", "ok", "--name", long], [:],
        "error: JACK client name '\(long.prefix(60))…' (--name) is 70 bytes long; JACK allows at most 64"
      ),
      (
        ["--server", "ok", "--name", "a:b"], [:],
        "error: JACK client name 'a:b' (--name) may not contain ':' (it separates a client's name from its ports')"
      )
    ]
    for (arguments, environment, message) in cases {
      let r = try runBinary(arguments + ["--no-start-server", "-c", "status"], in: folder, environment: environment)
      #expect(r.status == 1)
      #expect(r.stderr == [message], "\(arguments) \(environment)")
    }
  }
}

extension HostileInputTests {
  // MARK: 22. a session reached through a symbolic link to its folder

  @Test("22: a session opened through a symbolically linked folder finds its ../ audio files, and saves them as ../")
  func sessionThroughLinkedFolder() throws {
    let h = try ConsoleHarness()
    defer { h.shutdown() }
    let fm = FileManager.default
    try fm.createDirectory(atPath: h.folder.file("show/songs"), withIntermediateDirectories: true)
    try fm.createDirectory(atPath: h.folder.file("show/audio"), withIntermediateDirectories: true)
    try h.folder.wav("show/audio/x.wav", channels: 1, sampleRate: 48000, seconds: 0.5)
    try h.folder.write(
      #"{ "format" : "stemdeck-session", "version" : 1, "stems" : [ { "name" : "x", "file" : "../audio/x.wav" } ] }"#,
      to: "show/songs/song.json")
    try fm.createSymbolicLink(atPath: h.folder.file("here"), withDestinationPath: "show/songs")
    let path = h.folder.file("here/song.json")
    let result = h.run("open \(path)")
    #expect(result == (true, ["opened \(path): 1 stem"]))
    #expect(h.mixer.stems.names == ["x"])
    #expect(h.mixer.offlineStems.isEmpty)
    #expect(h.run("vol x 0.5; save").ok)
    #expect(try SessionFile.load(path: path).stems.first?.file == "../audio/x.wav")
  }
}

extension HostileInputTests {
  // MARK: 29. minor ones

  @Test("29: a setlist listing /dev/null (or a FIFO) is refused up front; a setlist that is a device is not read forever")
  func setlistWithDevices() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    try #require(mkfifo(h.folder.file("pipe.json"), 0o644) == 0)
    try h.folder.write(#"{ "format" : "stemdeck-session", "version" : 1 }"#, to: "a.json")
    for (entry, line) in [("/dev/null", 2), ("pipe.json", 2)] {
      let list = try h.folder.write("a.json\n\(entry)\n", to: "list.txt")
      let result = h.run("setlist \(list)")
      #expect(
        result == (
          false, ["error: \(list): line \(line): '\(entry)' is not a regular file (a device, pipe or socket), so not a session file"]
        ))
    }
    let result = h.run("setlist /dev/zero")
    #expect(
      result == (false, ["error: /dev/zero: cannot read the setlist: is not a regular file (a device, pipe or socket), not a setlist"]))
  }

  @Test("29: a session whose recording folder is absolute or climbs out of its folder opens with a warning saying where takes go")
  func recordingFolderOutside() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    for (folder, kind, target) in [("/etc", "an absolute path", "/etc"), ("../../x", "it climbs with ..", nil)] {
      let path = try h.folder.write(
        #"{ "format" : "stemdeck-session", "version" : 1, "recording" : { "folder" : "\#(folder)" } }"#, to: "rec.json")
      let result = h.run("open! \(path)")
      #expect(result.ok)
      let warning = result.output.first { $0.hasPrefix("warning: ") } ?? ""
      #expect(
        warning.contains(
          "recording.folder '\(folder)' lies outside the session's folder (\(kind)); takes recorded will be written to \(target ?? SessionFile.resolve(file: folder, sessionPath: path))"
        ), "\(result.output)")
    }
    let inside = try h.folder.write(
      #"{ "format" : "stemdeck-session", "version" : 1, "recording" : { "folder" : "takes" } }"#, to: "ok.json")
    #expect(h.run("open! \(inside)") == (true, ["opened \(inside): 0 stems"]))
  }
}

extension HostileInputTests {
  // MARK: 23. control characters are never printed raw

  static func hasRawControl(_ line: String) -> Bool {
    line.unicodeScalars.contains { ($0.value < 0x20 && $0.value != 0x0A && $0.value != 0x09) || (0x7F...0x9F).contains($0.value) }
  }

  @Test("23: paths from a session holding terminal escapes are printed escaped (warnings, offline stems, errors)")
  func escapesInPaths() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let evil = #"\u001b]2;HACKED\u0007\u001b[2J\u009b31m.wav"#
    let path = try h.folder.write(
      #"{ "format" : "stemdeck-session", "version" : 1, "stems" : [ { "name" : "x", "file" : "\#(evil)" } ], "effects" : [ { "name" : "fx", "file" : "\#(evil)" } ] }"#,
      to: "evil.json")
    var lines = h.run("open! \(path)").output
    lines += h.run("stems").output
    lines += h.run("vol x 0.5").output
    lines += h.run("add \(h.folder.path)/\u{1B}[2Jnope.wav").output
    #expect(lines.count >= 5, "\(lines)")
    for line in lines { #expect(!Self.hasRawControl(line), "raw control character in: \(line.debugDescription)") }
    #expect(lines.contains { $0.contains(#"\u{1b}]2;HACKED\u{7}\u{1b}[2J\u{9b}31m.wav"#) }, "\(lines)")
    #expect(terminalSafe(terminalSafe("a\u{1B}b")) == #"a\u{1b}b"#)
    #expect(terminalSafe("line\tone\nline two ✓") == "line\tone\nline two ✓")
  }
}

extension HostileRenderTests {
  @Test("23: a render error naming a path with escapes prints it escaped on stderr")
  func renderErrorEscaped() throws {
    let folder = try fixture()
    try folder.write(
      #"{ "format" : "stemdeck-session", "version" : 1, "stems" : [ { "name" : "x", "file" : "\u001b]2;HACKED\u0007.wav" } ] }"#,
      to: "evil.json")
    let r = try runBinary(["render", "evil.json", "--output", "out\u{1B}[2J.wav"], in: folder)
    #expect(r.status == 1)
    #expect(r.stderr.count == 1)
    for line in r.stderr + r.stdout { #expect(!HostileInputTests.hasRawControl(line), "\(line.debugDescription)") }
    #expect(r.stderr.first?.contains(#"\u{1b}]2;HACKED\u{7}.wav"#) == true, "\(r.stderr)")
  }
}

extension HostileInputTests {
  // MARK: widen the net: what is not audio

  @Test("widen the net: devices, a FIFO, a symbolic link loop and /proc files as audio are refused at once, naming the file")
  func notAudio() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    try #require(mkfifo(h.folder.file("fifo.wav"), 0o644) == 0)
    try FileManager.default.createSymbolicLink(atPath: h.folder.file("loop1.wav"), withDestinationPath: "loop2.wav")
    try FileManager.default.createSymbolicLink(atPath: h.folder.file("loop2.wav"), withDestinationPath: "loop1.wav")
    let before = MixerSnapshot(h)
    for path in ["/dev/zero", "/dev/null", "/dev/urandom", h.folder.file("fifo.wav"), h.folder.file("loop1.wav"), "/proc/self/mem"] {
      let result = h.run("add \(path) as x")
      #expect(!result.ok)
      #expect(result.output.count == 1 && result.output[0].contains(path), "\(result.output)")
      let session = try h.folder.write(
        #"{ "format" : "stemdeck-session", "version" : 1, "stems" : [ { "name" : "x", "file" : "\#(path)" } ] }"#, to: "s.json")
      h.console.strict = true
      let opened = h.run("open! \(session)")
      h.console.strict = false
      #expect(!opened.ok && opened.output.count == 1 && opened.output[0].contains("stems[0] (x).file: \(path)"), "\(opened.output)")
      #expect(MixerSnapshot(h) == before)
    }
  }
}

extension HostileInputTests {
  @Test("4, widen the net: 'save' over one of the session's own audio files (also through a link) is refused; the audio stays")
  func saveOverOwnAudio() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let audio = try #require(Self.bytes(h.drums))
    try FileManager.default.createSymbolicLink(atPath: h.folder.file("link.json"), withDestinationPath: "drums.wav")
    for target in [h.drums, h.folder.file("link.json")] {
      let result = h.run("save \(target)")
      #expect(
        result == (
          false,
          [
            "error: \(target): is an audio file of this session (drums.wav); a session is never saved over its own audio — choose another name"
          ]
        ))
    }
    #expect(Self.bytes(h.drums) == audio)
    #expect(Self.type(h.drums + ".bak") == nil)
    #expect(h.console.sessionPath == nil)
  }
}

extension HostileRenderTests {
  @Test("5: Ctrl-C during a render stops it between blocks: exit 130, the previous file kept, no temporary left")
  func interruptedRender() throws {
    let folder = try fixture()
    try folder.write(
      #"{ "format" : "stemdeck-session", "version" : 1, "stems" : [ { "name" : "drums", "file" : "drums.wav", "loops" : -1 } ] }"#,
      to: "endless.json")
    let previous = Data("the previous render".utf8)
    try previous.write(to: URL(fileURLWithPath: folder.file("out.wav")))
    let process = Process()
    process.executableURL = URL(fileURLWithPath: stemdeckBinary)
    process.arguments = ["render", "endless.json", "--output", "out.wav", "--duration", "1500"]
    process.currentDirectoryURL = URL(fileURLWithPath: folder.path)
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    var deadline = Date().addingTimeInterval(20)
    while try temporaries(folder).isEmpty && process.isRunning && Date() < deadline { usleep(10_000) }
    try #require(process.isRunning, "the render ended before it could be interrupted")
    try #require(try !temporaries(folder).isEmpty, "the render's temporary file never appeared")
    process.interrupt()
    deadline = Date().addingTimeInterval(20)
    while process.isRunning && Date() < deadline { usleep(10_000) }
    if process.isRunning { process.terminate(); Issue.record("the render did not stop on SIGINT") }
    process.waitUntilExit()
    #expect(process.terminationReason == .exit && process.terminationStatus == 130)
    #expect(FileManager.default.contents(atPath: folder.file("out.wav")) == previous)
    #expect(try temporaries(folder).isEmpty)
  }
}
