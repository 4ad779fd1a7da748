import Foundation
import Testing
@testable import StemdeckConsole
import StemdeckControl
import StemdeckSession
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

@Suite("Session commands (no JACK)")
struct SessionCommandTests {
  /// A valid session next to the harness's audio files.
  static let goodSession = """
    {
      "format" : "stemdeck-session",
      "version" : 1,
      "quality" : "medium",
      "master" : { "volume" : 0.7 },
      "options" : { "autoPauseOnDisconnect" : true, "meterPoint" : "pre" },
      "position" : 1.5,
      "stems" : [
        { "name" : "kick", "file" : "drums.wav", "volume" : 0.25, "pan" : -0.5, "rate" : 1.5, "loops" : 4, "mute" : true, "solo" : false },
        { "name" : "sub", "file" : "bass.wav", "volume" : "-6dB", "pan" : 0, "rate" : 1, "loops" : -1, "mute" : false, "solo" : true, "directOut" : true, "startOffset" : 2 }
      ]
    }
    """

  @Test("save writes a session file with the stems and values set")
  func save() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("vol drums 0.5; pan bass -0.25; loops drums 3; mute bass; solo drums; directout bass on").ok)
    #expect(h.run("offset bass 1.5; rate drums 0.75; master 0.8; meterpoint pre; autopause on; quality best; seek 0:01.25").ok)
    let path = h.folder.file("song.json")
    #expect(h.run("save \(path)") == (true, ["saved \(path)"]))
    #expect(!h.mixer.isDirty)
    #expect(h.console.sessionPath == path)

    let session = try SessionFile.load(path: path)
    var drums = StemSettings(name: "drums", file: "drums.wav")
    drums.volume = 0.5; drums.loops = 3; drums.solo = true; drums.rate = 0.75
    var bass = StemSettings(name: "bass", file: "bass.wav")
    bass.pan = -0.25; bass.mute = true; bass.directOut = true; bass.startOffset = 1.5
    #expect(session.stems == [drums, bass])
    #expect(session.masterVolume == 0.8)
    #expect(session.quality == .best)
    #expect(session.options.meterPoint == .pre)
    #expect(session.options.autoPauseOnDisconnect)
    #expect(session.position == 1.25)
    #expect(session.connections.isEmpty)

    // The JSON text itself: relative audio paths, the values as typed.
    let text = try String(contentsOfFile: path, encoding: .utf8)
    #expect(
      text.contains(
        #"{ "name" : "drums", "file" : "drums.wav", "volume" : 0.5, "pan" : 0, "rate" : 0.75, "loops" : 3, "mute" : false, "solo" : true }"#
      ))
    #expect(text.contains(#""master" : { "volume" : 0.8 }"#))
  }

  @Test("save without a path reuses the session path, keeps a .bak, and status tracks unsaved changes")
  func saveAgain() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let path = h.folder.file("song.json")
    #expect(h.run("save \(path)").ok)
    #expect(h.run("status").output.last == "session: \(path)")
    #expect(h.run("vol drums 0.3").ok)
    #expect(h.run("status").output.last == "session: \(path) (unsaved changes)")
    #expect(h.run("save") == (true, ["saved \(path)"]))
    #expect(h.run("status").output.last == "session: \(path)")
    #expect(try SessionFile.load(path: path).stems.first?.volume == 0.3)
    #expect(try SessionFile.load(path: path + ".bak").stems.first?.volume == 1)
  }

  @Test("save, new, open gives back the same mixer")
  func roundTrip() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("vol drums -6dB; pan bass 0.5; loops bass -1; master 1.5; quality linear; seek 0.5").ok)
    let path = h.folder.file("song.json")
    #expect(h.run("save \(path)").ok)
    var before = MixerSnapshot(h)
    #expect(h.run("new") == (true, ["new empty session"]))
    #expect(h.run("open \(path)") == (true, ["opened \(path): 2 stems"]))
    var after = MixerSnapshot(h)
    // The settings loaded from a file carry the file name as written in it.
    before.stems = before.stems.map {
      var s = $0; s.file = String(s.file.split(separator: "/").last!); return s
    }
    after.stems = after.stems.map {
      var s = $0; s.file = String(s.file.split(separator: "/").last!); return s
    }
    #expect(after == before)
  }

  @Test("open a valid session replaces everything")
  func openGood() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let path = try h.folder.write(Self.goodSession, to: "good.json")
    #expect(h.run("open \(path)") == (true, ["opened \(path): 2 stems"]))
    let s = MixerSnapshot(h)
    var kick = StemSettings(name: "kick", file: "drums.wav")
    kick.volume = 0.25; kick.pan = -0.5; kick.rate = 1.5; kick.loops = 4; kick.mute = true
    #expect(s.stems.first == kick)
    #expect(s.stems.map(\.name) == ["kick", "sub"])
    #expect(abs(s[stem: "sub"].volume - linear(decibels: -6)) < 1e-9)
    #expect(s[stem: "sub"].solo && s[stem: "sub"].directOut && s[stem: "sub"].loops == -1 && s[stem: "sub"].startOffset == 2)
    #expect(s.paths == [h.drums, h.bass])
    #expect(s.masterVolume == 0.7)
    #expect(s.quality == .medium)
    #expect(s.options.meterPoint == .pre && s.options.autoPauseOnDisconnect)
    #expect(s.position == 1.5)
    #expect(!s.isDirty)
    #expect(s.sessionPath == path)
  }

  /// (file name, document, fragments the one error line must contain besides the path).
  static let badSessions: [(String, String, [String])] = [
    (
      "pan.json", goodSession.replacingOccurrences(of: #""pan" : -0.5"#, with: #""pan" : 7"#),
      ["stems[0].pan", "between -1 and 1", "(got 7)", "(line 9, column "]
    ),
    ("volume.json", goodSession.replacingOccurrences(of: #""-6dB""#, with: #""+9dB""#), ["stems[1].volume"]),
    ("dup.json", goodSession.replacingOccurrences(of: #""name" : "sub""#, with: #""name" : "kick""#), ["stems[1]", "kick"]),
    ("version.json", goodSession.replacingOccurrences(of: #""version" : 1"#, with: #""version" : 99"#), ["version"]),
    (
      "unknown.json", goodSession.replacingOccurrences(of: #""mute" : true"#, with: #""mute" : true, "colour" : "red""#),
      ["stems[0]", "colour"]
    ),
    ("truncated.json", String(goodSession.prefix(120)), ["invalid JSON"])
  ]

  @Test("open of a bad session: one error line naming the file and the field; nothing changes", arguments: badSessions)
  func openBad(_ name: String, _ document: String, _ fragments: [String]) throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    try h.folder.write(Self.goodSession, to: "good.json")
    #expect(h.run("vol drums 0.4; master 0.9").ok)
    let before = MixerSnapshot(h)
    let path = try h.folder.write(document, to: name)
    let result = h.run("open \(path)")
    #expect(!result.ok)
    #expect(result.output.count == 1)
    let line = try #require(result.output.first)
    #expect(line.hasPrefix("error: \(path): "), "\(line)")
    for f in fragments { #expect(line.contains(f), "'\(f)' not in: \(line)") }
    #expect(MixerSnapshot(h) == before)
  }

  @Test(
    "open names the session file as it was typed (a relative path) in its errors and warnings, not as the absolute path the mixer was given"
  )
  func openNamesTheFileAsTyped() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let bad = try h.folder.write(Self.badSessions[0].1, to: "bad.json")
    let missing = try h.folder.write(Self.missingAudio, to: "missing.json")
    // The same files through a path relative to the working directory (never absolute).
    let depth = FileManager.default.currentDirectoryPath.split(separator: "/").count
    func relative(_ path: String) -> String { String(repeating: "../", count: depth) + path.dropFirst() }
    let badResult = h.run("open \(relative(bad))")
    #expect(!badResult.ok)
    #expect(badResult.output.first?.hasPrefix("error: \(relative(bad)): stems[0].pan") == true, "\(badResult.output)")
    let opened = h.run("open! \(relative(missing))")
    #expect(opened.ok)
    #expect(opened.output.first?.hasPrefix("warning: \(relative(missing)): stems[1] (sub).file: ") == true, "\(opened.output)")
    #expect(!opened.output.joined().contains(FileManager.default.currentDirectoryPath + "/" + relative(missing)), "\(opened.output)")
  }

  static let missingAudio = goodSession.replacingOccurrences(of: #""file" : "bass.wav""#, with: #""file" : "nope.wav""#)

  @Test("open with a missing audio file: a warning, the rest opens, the stem stays offline and is saved back")
  func openWithMissingAudio() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let path = try h.folder.write(Self.missingAudio, to: "missing.json")
    let missing = h.folder.file("nope.wav")
    #expect(
      h.run("open \(path)") == (
        true,
        [
          "warning: \(path): stems[1] (sub).file: \(missing): no such file — the stem stays offline; the rest of the session opens",
          "opened \(path): 2 stems (1 offline)"
        ]
      ))
    #expect(h.mixer.stems.names == ["kick"])
    #expect(h.mixer.offlineStems.map(\.settings.name) == ["sub"])
    #expect(!h.mixer.isDirty)
    let table = h.run("stems").output
    #expect(table.count == 4)
    #expect(table[2] == "offline: sub (\(missing): no such file)")
    #expect(
      h.run("vol sub 0.5") == (
        false, ["error: stem 'sub' is offline: no such file (fix the file and 'open' the session again, or 'remove sub')"]
      ))
    #expect(h.run("add \(h.drums) as sub") == (false, ["error: a stem named 'sub' already exists; choose another name with 'as NAME'"]))

    // Saved back with its settings, so nothing is lost.
    let copy = h.folder.file("copy.json")
    #expect(h.run("save \(copy)").ok)
    let original = try SessionFile.load(path: path)
    let saved = try SessionFile.load(path: copy)
    #expect(Set(saved.stems.map(\.name)) == ["kick", "sub"])
    #expect(saved.stems.first { $0.name == "sub" } == original.stems.first { $0.name == "sub" })

    #expect(h.run("remove sub") == (true, ["removed sub"]))
    #expect(h.mixer.offlineStems.isEmpty)
  }

  @Test("open with an unreadable audio file keeps that stem offline too")
  func openWithTextAsAudio() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let notes = try h.folder.write("not audio", to: "notes.txt")
    let path = try h.folder.write(
      Self.goodSession.replacingOccurrences(of: #""file" : "bass.wav""#, with: #""file" : "notes.txt""#), to: "text.json")
    let result = h.run("open \(path)")
    #expect(result.ok)
    #expect(result.output.count == 2)
    #expect(result.output.first?.hasPrefix("warning: \(path): stems[1] (sub).file: \(notes): not a readable audio file") == true)
  }

  @Test("strict: a missing audio file is an error and nothing changes")
  func strictMissingAudio() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    h.console.strict = true
    let path = try h.folder.write(Self.missingAudio, to: "missing.json")
    let before = MixerSnapshot(h)
    #expect(h.run("open \(path)") == (false, ["error: \(path): stems[1] (sub).file: \(h.folder.file("nope.wav")): no such file"]))
    #expect(MixerSnapshot(h) == before)
    #expect(h.mixer.offlineStems.isEmpty)
  }

  @Test("an offline stem keeps its place in the saved session")
  func offlineStemKeepsOrder() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let path = try h.folder.write(
      Self.goodSession.replacingOccurrences(of: #""file" : "drums.wav""#, with: #""file" : "nope.wav""#), to: "first.json")
    #expect(h.run("open \(path)").ok)
    #expect(h.run("save").ok)
    #expect(try SessionFile.load(path: path).stems.map(\.name) == ["kick", "sub"])
  }

  @Test("remove all also removes offline stems")
  func removeAllOffline() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let path = try h.folder.write(Self.missingAudio, to: "missing.json")
    #expect(h.run("open \(path)").ok)
    #expect(h.run("remove all").ok)
    #expect(h.mixer.stems.allNames.isEmpty)
    let allOffline = try h.folder.write(Self.missingAudio.replacingOccurrences(of: "drums.wav", with: "gone.wav"), to: "alloffline.json")
    #expect(h.run("open \(allOffline)").ok)
    #expect(h.run("remove all").ok)
    #expect(h.mixer.stems.allNames.isEmpty)
  }

  @Test("new clears the session")
  func new() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let path = h.folder.file("song.json")
    #expect(h.run("master 0.5; quality best; meterpoint pre; seek 1; save \(path)").ok)
    #expect(h.run("new") == (true, ["new empty session"]))
    let s = MixerSnapshot(h)
    #expect(s.stems.isEmpty)
    #expect(s.masterVolume == 1)
    #expect(s.quality == .fast)
    #expect(s.options == SessionOptions())
    #expect(s.position == 0)
    #expect(!s.isDirty)
    #expect(s.sessionPath == nil)
    #expect(h.run("save") == (false, ["error: no session file yet: give a path, e.g. 'save Sessions/mysong.json'"]))
  }

  @Test("interactive: open and new refuse unsaved changes; open! and new! discard them")
  func interactiveRefusals() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let good = try h.folder.write(Self.goodSession, to: "good.json")
    h.console.interactive = true
    #expect(h.run("new") == (true, ["new empty session"]))  // nothing unsaved yet
    #expect(h.run("add \(h.drums)").ok)
    let dirty = MixerSnapshot(h)
    #expect(dirty.isDirty)
    #expect(h.run("new") == (false, ["error: there are unsaved changes: 'save' them first, or use 'new!' to discard them"]))
    #expect(
      h.run("open \(good)") == (false, ["error: there are unsaved changes: 'save' them first, or use 'open! \(good)' to discard them"]))
    #expect(h.run("load \(good)").ok == false)
    #expect(MixerSnapshot(h) == dirty)
    #expect(h.run("open! \(good)") == (true, ["opened \(good): 2 stems"]))
    #expect(h.run("vol kick 1").ok)
    #expect(h.run("new! ") == (true, ["new empty session"]))
    #expect(MixerSnapshot(h).stems.isEmpty)
  }

  @Test("script mode: open and new do not ask")
  func scriptModeDoesNotRefuse() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("vol drums 0.2").ok)
    #expect(h.run("new") == (true, ["new empty session"]))
  }

  @Test("interactive: quit refuses unsaved changes; quit! discards them")
  func interactiveQuit() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    h.console.interactive = true
    #expect(h.run("vol drums 0.2").ok)
    let result = h.run("quit")
    #expect(!result.ok)
    #expect(result.output.first?.hasPrefix("error: there are unsaved changes") == true)
    #expect(!h.console.quitRequested)
    #expect(h.run("quit!") == (true, []))
    #expect(h.console.quitRequested)
  }
}
