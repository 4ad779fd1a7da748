// Issue 16: every writer on a read-only and on a full file system. Each must fail with an error
// that names the file and the reason ("Read-only file system", "No space left on device"), leave
// every file that was there as it was, and keep the session (its changes, still unsaved).
//
// The file systems are real: stemdeck (or `stemdeck render`) runs in a private mount namespace
// (`unshare -m`) where the test's folder is bind-mounted read-only onto itself, or covered by a
// 64 KiB tmpfs filled to the last page. Where this machine does not allow private mounts (not
// root, no CAP_SYS_ADMIN) the tests are reported skipped with the reason, never passed.

import Foundation
import StemdeckTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Private mount namespaces for the tests: read-only and full file systems at a folder.
enum PrivateMounts {
  /// Why this machine cannot make them (nil: it can); probed once, by doing it.
  static let problem: String? = probe()

  private static func probe() -> String? {
    guard findOnPath("unshare") != nil, findOnPath("mount") != nil else { return "unshare or mount (util-linux) is not installed" }
    guard let dir = try? TemporaryFolder("stemdeck-mount-probe") else { return "no temporary folder" }
    let script = #"mount -t tmpfs -o size=64k none "$1" && mount -o remount,ro "$1""#
    let process = Process()
    process.executableURL = URL(fileURLWithPath: findOnPath("unshare")!)
    process.arguments = ["-m", "sh", "-c", script, "sh", dir.path]
    let errors = Pipe()
    process.standardError = errors
    process.standardOutput = FileHandle.nullDevice
    do { try process.run() } catch { return "cannot run unshare: \(error)" }
    process.waitUntilExit()
    let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    if process.terminationStatus != 0 {
      return
        "private mounts are not allowed here (unshare -m + mount need root or CAP_SYS_ADMIN): \(text.trimmingCharacters(in: .whitespacesAndNewlines))"
    }
    return nil
  }

  static var skipReason: Comment { Comment(rawValue: problem ?? "") }

  /// A launcher (`StemdeckProcess(launcher:)`, or a prefix for `runTool`) that runs the command
  /// with `folder` read-only: bind-mounted onto itself and remounted read-only, in a mount
  /// namespace of its own (the folder stays writable for everyone else, the test included).
  static func readOnly(_ folder: String) -> [String] {
    [
      "unshare", "-m", "sh", "-c",
      #"d=$1; shift; mount --bind "$d" "$d" && mount -o remount,bind,ro "$d" && exec "$@""#, "sh", folder
    ]
  }

  /// A launcher that runs the command with a full file system at `folder`: a 64 KiB tmpfs
  /// mounted over it, holding a copy of `folder`'s files and a filler that takes every page
  /// left. When the command ends, what the tmpfs holds (the filler removed) is copied to
  /// `result`, so the test sees what the command left there, and then the file `done` is made.
  static func full(_ folder: String, result: String, done: String) -> [String] {
    [
      "unshare", "-m", "sh", "-c",
      #"""
      d=$1; out=$2; marker=$3; shift 3
      seed=$(mktemp -d) && cp -a "$d"/. "$seed"/ && mount -t tmpfs -o size=64k none "$d" && cp -a "$seed"/. "$d"/ || exit 97
      cat /dev/zero > "$d/.filler" 2>/dev/null
      "$@"; rc=$?
      rm -f "$d/.filler"; cp -a "$d"/. "$out"/; rm -rf "$seed"; touch "$marker"; exit $rc
      """#, "sh", folder, result, done
    ]
  }
}

/// Every file under `folder` (relative path → content; folders as empty entries ending in '/').
func folderSnapshot(_ folder: String) -> [String: [UInt8]] {
  var out: [String: [UInt8]] = [:]
  let manager = FileManager.default
  guard let walker = manager.enumerator(atPath: folder) else { return out }
  while let entry = walker.nextObject() as? String {
    let path = folder + "/" + entry
    var isFolder: ObjCBool = false
    _ = manager.fileExists(atPath: path, isDirectory: &isFolder)
    out[isFolder.boolValue ? entry + "/" : entry] = isFolder.boolValue ? [] : FileFacts.bytes(path) ?? []
  }
  return out
}

/// What differs between two snapshots, for a failure message.
func snapshotDifference(_ before: [String: [UInt8]], _ after: [String: [UInt8]]) -> String {
  let names = Set(before.keys).union(after.keys).sorted()
  return names.compactMap { name -> String? in
    switch (before[name], after[name]) {
    case (nil, _?): return "new: \(name)"
    case (_?, nil): return "gone: \(name)"
    case (let a?, let b?) where a != b: return "changed: \(name) (\(a.count) → \(b.count) bytes)"
    default: return nil
    }
  }.joined(separator: ", ")
}

@Suite(
  "Read-only and full file systems for every writer (issue 16)", .serialized, .timeLimit(.minutes(3)),
  .disabled(if: PrivateMounts.problem != nil, PrivateMounts.skipReason))
struct ReadOnlyFileSystemTests {
  enum Kind: String, CustomTestStringConvertible, CaseIterable {
    case readOnly, full
    var reason: String { self == .readOnly ? "Read-only file system" : "No space left on device" }
    var testDescription: String { self == .readOnly ? "read-only" : "full" }
  }

  /// A folder for the session (the one made read-only or full), one for the audio (writable),
  /// and one that receives what a full tmpfs held when the command ended.
  struct Place {
    let session: TemporaryFolder
    let audio: TemporaryFolder
    let result: TemporaryFolder

    init() throws {
      session = try TemporaryFolder("stemdeck-rofs")
      audio = try TemporaryFolder("stemdeck-rofs-audio")
      result = try TemporaryFolder("stemdeck-rofs-result")
    }

    func launcher(_ kind: Kind) -> [String] {
      kind == .readOnly ? PrivateMounts.readOnly(session.path) : PrivateMounts.full(session.path, result: result.path, done: done)
    }
    /// Made when a command on a full file system has ended and its tmpfs was copied out.
    var done: String { audio.file("full-done") }

    /// What the session folder holds after the command (for a full file system: what the tmpfs held).
    func after(_ kind: Kind) -> [String: [UInt8]] {
      folderSnapshot(kind == .readOnly ? session.path : result.path)
    }
  }

  @Test(
    "save, save to a new name, autosave, record: each fails naming its file and the reason; the session keeps its changes; every file stays as it was",
    arguments: Kind.allCases)
  func sessionWriters(kind: Kind) async throws {
    let place = try Place()
    try writeSine(place.audio.file("tone.wav"), sampleRate: 48000, seconds: 0.5, frequencies: [220], amplitude: 0.3)
    let session = place.session.file("song.json")
    try writeSession(session, stems: [SessionStem(name: "tone", file: place.audio.file("tone.wav"))])
    try place.session.write("the previous version\n", to: "song.json.bak")
    try place.session.write("an older autosave\n", to: ".song.json.autosave.json.bak")
    let before = folderSnapshot(place.session.path)

    let server = try await PrivateJackServer()
    defer { server.stop() }
    let deck = try StemdeckProcess(server: server, session: session, extra: ["--keep-going"], launcher: place.launcher(kind))
    defer { deck.kill() }
    try await deck.run("vol tone 0.5")

    func expectFailure(_ lines: [String], naming file: String, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
      let error = lines.first { $0.hasPrefix("error: ") } ?? ""
      #expect(error.contains(file) && error.contains(kind.reason), "\(what): \(lines)", sourceLocation: sourceLocation)
    }
    expectFailure(try await deck.attempt("save"), naming: "song.json", "save")
    expectFailure(try await deck.attempt("save \(place.session.file("other.json"))"), naming: "other.json", "save to a new name")

    // The periodic autosave: an event line each time it fails, naming the sidecar.
    try await deck.run("autosave 1")
    let autosave = await eventually(timeout: 10, interval: 0) {
      (try? await deck.attempt("wait 0.1")) != nil && deck.events.contains { $0.contains("autosave failed") }
    }
    let line = deck.events.first { $0.contains("autosave failed") } ?? ""
    #expect(autosave && line.contains(".song.json.autosave.json") && line.contains(kind.reason), "\(deck.transcript)")
    try await deck.run("autosave off")

    // A take: refused at once, or (a full disk) failed when its first data is written.
    let record = try await deck.attempt("record")
    if !record.contains(where: { $0.hasPrefix("error: ") }) {
      #expect(await deck.waitForLine(containing: "recording 'take-1'", timeout: 5) != nil, "\(deck.transcript)")
      try await deck.attempt("record stop")
    } else {
      expectFailure(record, naming: "take-1.wav", "record")
    }

    // The session is as it was before the saves, change included, and still the same file.
    let stems = try await deck.stemsTable()
    #expect(stems.keys.sorted() == ["tone"] && stems["tone"]?.volume == "0.50", "\(stems)")
    #expect(try await deck.status()["session"]?.contains("song.json") == true)
    #expect(try await deck.finish() == 1, "script mode with --keep-going: 1 for the failed commands\n\(deck.transcript)")
    for line in deck.lines + deck.stderrLines where line.contains("error:") || line.contains("failed") {
      print("\(kind.testDescription): \(line)")
    }

    // Every file as it was; nothing new left behind (no temporary, no half take).
    let after = place.after(kind)
    #expect(after.filter { !$0.key.hasPrefix("take-") } == before, "\(snapshotDifference(before, after))")
    // A take that failed on a full disk may keep what it wrote before the disk filled (here: its
    // header at most); it is a new file, never one that was there.
    #expect(after.keys.filter { $0.hasPrefix("take-") }.allSatisfy { (after[$0]?.count ?? 0) <= 64 * 1024 })
  }

  @Test(
    "render --output and --stems: fail naming the file and the reason; the previous render and stem files stay; no temporary is left",
    arguments: Kind.allCases)
  func renderWriters(kind: Kind) async throws {
    let binary = try StemdeckBinary.require()
    let place = try Place()
    try writeSine(place.audio.file("tone.wav"), sampleRate: 48000, seconds: 1, frequencies: [220], amplitude: 0.3)
    let session = place.audio.file("song.json")
    try writeSession(session, stems: [SessionStem(name: "tone", file: "tone.wav")])
    try place.session.write("the previous render\n", to: "mix.wav")
    try FileManager.default.createDirectory(atPath: place.session.file("stems"), withIntermediateDirectories: false)
    try place.session.write("the previous stem\n", to: "stems/tone.wav")
    let before = folderSnapshot(place.session.path)

    func render(_ arguments: [String]) async throws -> ToolResult {
      let launcher = place.launcher(kind)
      return try await runTool(launcher[0], Array(launcher.dropFirst()) + [binary, "render", session] + arguments, timeout: 60)
    }
    func expectFailure(_ result: ToolResult, naming file: String, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
      #expect(result.status == 1, "\(what): exit \(result.status)\n\(result.text)", sourceLocation: sourceLocation)
      let error = result.stderr.first { $0.hasPrefix("error: ") || $0.contains("error") } ?? ""
      #expect(error.contains(file) && error.contains(kind.reason), "\(what): \(result.text)", sourceLocation: sourceLocation)
      print("\(kind.testDescription), \(what): \(error)")
    }

    expectFailure(try await render(["--output", place.session.file("mix.wav")]), naming: "mix.wav", "render over a file")
    #expect(place.after(kind) == before, "\(snapshotDifference(before, place.after(kind)))")
    expectFailure(try await render(["--output", place.session.file("new.flac")]), naming: "new.flac", "render to a new file")
    #expect(place.after(kind) == before, "\(snapshotDifference(before, place.after(kind)))")
    // The stems into the read-only or full folder, the master where it can be written: nothing
    // is renamed into place unless all of them are complete, the master included.
    let master = place.audio.file("master.wav")
    expectFailure(
      try await render(["--output", master, "--stems", place.session.file("stems")]),
      naming: "stems", "render --stems into an existing folder")
    #expect(place.after(kind) == before, "\(snapshotDifference(before, place.after(kind)))")
    #expect(FileFacts.kind(master) == nil, "the master was written although its stems failed")
    // 16-bit stems, which stemdeck converts and writes as bytes itself (sf_write_raw): the same.
    expectFailure(
      try await render(["--output", master, "--format", "wav16", "--stems", place.session.file("stems")]),
      naming: "stems", "render --stems to 16-bit WAV into an existing folder")
    #expect(place.after(kind) == before, "\(snapshotDifference(before, place.after(kind)))")
    #expect(FileFacts.kind(master) == nil, "the master was written although its stems failed")
    expectFailure(
      try await render(["--output", master, "--stems", place.session.file("fresh")]),
      naming: "fresh", "render --stems into a new folder")
    #expect(place.after(kind).filter { !$0.key.hasPrefix("fresh/") } == before, "\(snapshotDifference(before, place.after(kind)))")
    // At most the folder it made, empty: no stem file, no temporary.
    #expect(place.after(kind).keys.filter { $0.hasPrefix("fresh/") && $0 != "fresh/" }.isEmpty, "\(place.after(kind).keys.sorted())")
    #expect(FileFacts.kind(master) == nil, "the master was written although its stems failed")
  }

  @Test(
    "the control socket in a read-only folder: --control PATH is an error naming it; the default folder a warning, and stemdeck runs on")
  func controlSocket() async throws {
    let place = try Place()
    let before = folderSnapshot(place.session.path)
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let binary = try StemdeckBinary.require()
    let launcher = PrivateMounts.readOnly(place.session.path)
    let given = place.session.file("ctl.sock")
    let refused = try await runTool(
      launcher[0],
      Array(launcher.dropFirst()) + [
        binary, "--server", server.name, "--no-start-server", "--no-connect",
        "--control", given, "-c", "status"
      ],
      environment: server.environment, timeout: 30)
    #expect(refused.status == 1, "\(refused.text)")
    #expect(refused.stderr.contains { $0.contains(given) && $0.contains("Read-only file system") }, "\(refused.text)")
    var environment = server.environment
    environment["XDG_RUNTIME_DIR"] = place.session.path
    let warned = try await runTool(
      launcher[0],
      Array(launcher.dropFirst()) + [
        binary, "--server", server.name, "--no-start-server", "--no-connect",
        "-c", "echo still here"
      ],
      environment: environment, timeout: 30)
    #expect(warned.status == 0, "\(warned.text)")
    #expect(warned.stdout.contains("still here"), "\(warned.text)")
    #expect(
      warned.stderr.contains { $0.hasPrefix("warning: ") && $0.contains(place.session.path) && $0.contains("Read-only file system") },
      "\(warned.text)")
    #expect(folderSnapshot(place.session.path) == before)
  }

  @Test(
    "the REPL history in a read-only or full state folder: said once, at the first line; the old history stays", arguments: Kind.allCases)
  func history(kind: Kind) async throws {
    let place = try Place()
    try FileManager.default.createDirectory(atPath: place.session.file("stemdeck"), withIntermediateDirectories: false)
    try place.session.write("echo an old line\n", to: "stemdeck/history")
    let before = folderSnapshot(place.session.path)
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let binary = try StemdeckBinary.require()
    try writeSession(place.audio.file("show.json"), stems: [])
    let launcher = place.launcher(kind).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
    let command =
      "\(launcher) env XDG_STATE_HOME=\(place.session.path) JACK_DEFAULT_SERVER=\(server.name) NO_COLOR=1 JACK_NO_START_SERVER=1 "
      + "\(binary) show.json --server \(server.name) --no-start-server --no-connect --no-control"
    let term = try await TmuxTerminal(command, columns: 160, rows: 30, directory: place.audio.path)
    defer { term.close() }
    await term.check(try await term.waitForCursorRow("stemdeck>"), "no prompt: ")
    for n in 1...3 {
      try await term.type("echo line-\(n)")
      try await term.send("Enter")
      await term.check(try await term.waitFor("line-\(n)"), "line \(n): ")
    }
    let lines = try await term.joinedLines()
    let warnings = lines.indices.filter { lines[$0].hasPrefix("warning: the command history cannot be kept") }
    // The console wraps a long line at spaces to the terminal's width: read it with what follows.
    let warning = warnings.first.map { lines[$0...].prefix(3).joined(separator: " ") } ?? ""
    #expect(warnings.count == 1 && warning.contains("stemdeck/history") && warning.contains(kind.reason), "\(lines)")
    try await term.type("quit")
    try await term.send("Enter")
    if kind == .full {  // what the tmpfs held is copied out when stemdeck has ended
      let copied = await eventually(timeout: 10, interval: 0.05) { FileFacts.kind(place.done) != nil }
      #expect(copied, "stemdeck did not end after quit")
    }
    #expect(place.after(kind) == before, "\(snapshotDifference(before, place.after(kind)))")
  }

  @Test("jackd's log in a read-only state folder: stemdeck says it cannot be kept, starts the server anyway, and the old log stays")
  func jackdLog() async throws {
    let place = try Place()
    let name = "stemdeck-rofs-\(getpid())"
    try FileManager.default.createDirectory(atPath: place.session.file("stemdeck"), withIntermediateDirectories: false)
    try place.session.write("the previous log\n", to: "stemdeck/jackd-\(name).log")
    let before = folderSnapshot(place.session.path)
    let binary = try StemdeckBinary.require()
    let launcher = PrivateMounts.readOnly(place.session.path)
    defer { PrivateJackServer.removeStaleFiles(of: name) }
    let result = try await runTool(
      launcher[0],
      Array(launcher.dropFirst()) + [
        binary, "--server", name, "--start-server", "dummy", "--no-connect",
        "--no-control", "-c", "status"
      ],
      environment: ["XDG_STATE_HOME": place.session.path, "JACK_DEFAULT_SERVER": name], timeout: 60)
    #expect(result.status == 0, "\(result.text)")
    #expect(result.stdout.contains { $0.hasPrefix("started JACK server '\(name)'") }, "\(result.text)")
    #expect(
      result.stderr.contains(
        "warning: cannot write jackd's log \(place.session.path)/stemdeck/jackd-\(name).log: Read-only file system; jackd's messages are not kept"
      ),
      "\(result.text)")
    #expect(folderSnapshot(place.session.path) == before)
  }
}
