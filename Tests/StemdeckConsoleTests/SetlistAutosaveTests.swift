import Foundation
import Testing
@testable import StemdeckConsole
import StemdeckControl
import StemdeckSession
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

@Suite("Setlists")
struct SetlistTests {
  static func song(_ stems: [String]) -> String {
    """
    {
      "format" : "stemdeck-session",
      "version" : 1,
      "stems" : [
        \(stems.joined(separator: ",\n    "))
      ]
    }
    """
  }

  /// song1 (kick), song2 (kick, sub) and show.txt listing them with a comment and blank lines.
  static func harness() throws -> ConsoleHarness {
    let h = try ConsoleHarness.withStems()
    try h.folder.write(song([#"{ "name" : "kick", "file" : "drums.wav" }"#]), to: "song1.json")
    try h.folder.write(song([#"{ "name" : "kick", "file" : "drums.wav" }"#, #"{ "name" : "sub", "file" : "bass.wav" }"#]), to: "song2.json")
    try h.folder.write("# tonight\nsong1.json\n\n   song2.json  \n", to: "show.txt")
    return h
  }

  @Test("setlist, next, prev and goto open the songs and wrap around")
  func navigation() throws {
    let h = try Self.harness()
    defer { h.shutdown() }
    let song1 = h.folder.file("song1.json"), song2 = h.folder.file("song2.json")
    #expect(h.run("setlist \(h.folder.file("show.txt"))") == (true, ["opened \(song1): 1 stem", "song 1/2: song1"]))
    #expect(h.mixer.stems.names == ["kick"])
    #expect(h.run("setlist") == (true, ["▶ 1. song1", "  2. song2"]))
    #expect(h.run("next") == (true, ["opened \(song2): 2 stems", "song 2/2: song2"]))
    #expect(h.mixer.stems.names == ["kick", "sub"])
    #expect(h.console.sessionPath == song2)
    #expect(h.run("next").output.last == "song 1/2: song1")
    #expect(h.run("prev").output.last == "song 2/2: song2")
    #expect(h.run("previous").output.last == "song 1/2: song1")
    #expect(h.run("goto 2").output.last == "song 2/2: song2")
    #expect(h.run("goto song1").output.last == "song 1/2: song1")
    #expect(h.run("setlist") == (true, ["▶ 1. song1", "  2. song2"]))
  }

  @Test(
    "goto rejects what is not in the setlist and changes nothing",
    arguments: [
      ("goto 3", "error: goto: song number must be from 1 to 2 (got 3)"),
      ("goto 0", "error: goto: song number must be from 1 to 2 (got 0)"),
      ("goto -1", "error: goto: song number must be from 1 to 2 (got -1)"),
      ("goto sng2", "error: goto: no song 'sng2' in the setlist — did you mean 'song2'?"),
      ("goto encore", "error: goto: no song 'encore' in the setlist (songs: song1, song2)")
    ])
  func badGoto(_ line: String, _ message: String) throws {
    let h = try Self.harness()
    defer { h.shutdown() }
    #expect(h.run("setlist \(h.folder.file("show.txt"))").ok)
    let before = MixerSnapshot(h)
    #expect(h.run(line) == (false, [message]))
    #expect(MixerSnapshot(h) == before)
  }

  @Test("bad setlist files are rejected up front and change nothing")
  func badSetlists() throws {
    let h = try Self.harness()
    defer { h.shutdown() }
    let typo = try h.folder.write("song1.json\nsnog2.json\n", to: "typo.txt")
    let empty = try h.folder.write("# nothing yet\n\n", to: "empty.txt")
    let before = MixerSnapshot(h)
    #expect(
      h.run("setlist \(typo)") == (
        false, ["error: \(typo): line 2: no session file at 'snog2.json' (looked at \(h.folder.file("snog2.json")))"]
      ))
    #expect(h.run("setlist \(empty)") == (false, ["error: \(empty): the setlist lists no sessions (one session path per line)"]))
    #expect(MixerSnapshot(h) == before)
  }

  @Test("interactive: switching songs refuses unsaved changes unless '!' is added")
  func interactiveRefusal() throws {
    let h = try Self.harness()
    defer { h.shutdown() }
    h.console.interactive = true
    let show = h.folder.file("show.txt")
    #expect(h.run("setlist \(show)").ok)
    #expect(h.run("vol kick 0.5").ok)
    let dirty = MixerSnapshot(h)
    #expect(
      h.run("next") == (false, ["error: this song has unsaved changes: 'save' them first, or add '!' (e.g. 'next!') to discard them"]))
    #expect(h.run("goto 2").ok == false)
    #expect(
      h.run("setlist \(show)") == (
        false, ["error: there are unsaved changes: 'save' them first, or use 'setlist! \(show)' to discard them"]
      ))
    #expect(MixerSnapshot(h) == dirty)
    #expect(h.run("next!").output.last == "song 2/2: song2")
  }
}

@Suite("Autosave and recover")
struct AutosaveTests {
  /// A harness with a saved session `song.json` and a pending change (drums at 0.3).
  static func harness() throws -> (ConsoleHarness, path: String, side: String) {
    let h = try ConsoleHarness.withStems()
    let path = h.folder.file("song.json")
    guard h.run("save \(path)").ok, h.run("vol drums 0.3").ok else { throw CommandError("setup failed") }
    return (h, path, h.folder.file(".song.json.autosave.json"))
  }

  @Test("the sidecar is named .NAME.autosave.json beside the session")
  func sidecarName() {
    #expect(Console.autosavePath(for: "/a/b/song.json") == "/a/b/.song.json.autosave.json")
  }

  @Test("periodic writes unsaved changes to the sidecar once the interval has passed; save removes it")
  func periodicWrites() throws {
    let (h, path, side) = try Self.harness()
    defer { h.shutdown() }
    h.console.periodic()  // the interval (30 s) has not passed yet
    #expect(!FileManager.default.fileExists(atPath: side))
    h.console.lastAutosave = .distantPast
    h.console.periodic()
    #expect(try SessionFile.load(path: side).stems.first?.volume == 0.3)
    #expect(try SessionFile.load(path: path).stems.first?.volume == 1, "the session itself is untouched")
    #expect(h.mixer.isDirty)
    #expect(h.run("save").ok)
    #expect(!FileManager.default.fileExists(atPath: side))
    h.console.lastAutosave = .distantPast
    h.console.periodic()  // nothing unsaved: nothing written
    #expect(!FileManager.default.fileExists(atPath: side))
  }

  @Test("autosave off stops the sidecar")
  func autosaveOff() throws {
    let (h, _, side) = try Self.harness()
    defer { h.shutdown() }
    #expect(h.run("autosave off").ok)
    #expect(h.run("autosave") == (true, ["autosave: off"]))
    h.console.lastAutosave = .distantPast
    h.console.periodic()
    #expect(!FileManager.default.fileExists(atPath: side))
  }

  @Test("open mentions a newer autosave; recover loads it; recover discard deletes it")
  func recover() throws {
    let (h, path, side) = try Self.harness()
    defer { h.shutdown() }
    h.console.lastAutosave = .distantPast
    h.console.periodic()
    try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(60)], ofItemAtPath: side)
    #expect(
      h.run("open \(path)") == (
        true,
        [
          "opened \(path): 2 stems",
          "an autosave of unsaved changes exists (\(side)): type 'recover' to open it, or 'recover discard' to delete it"
        ]
      ))
    #expect(MixerSnapshot(h)[stem: "drums"].volume == 1)
    #expect(h.run("recover") == (true, ["recovered unsaved changes from the autosave; 'save' to keep them"]))
    #expect(MixerSnapshot(h)[stem: "drums"].volume == 0.3)
    #expect(h.mixer.isDirty)
    #expect(h.console.sessionPath == path)
    #expect(h.run("recover discard") == (true, ["autosave discarded"]))
    #expect(!FileManager.default.fileExists(atPath: side))
    #expect(h.run("recover") == (false, ["error: recover: there is no autosave for \(path)"]))
  }
}
