import Foundation
import Testing
@testable import StemdeckConsole
import StemdeckControl
import StemdeckSession
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

@Suite("Setlist auto-advance (advance off|cue|play)")
struct SetlistAdvanceTests {
  /// Three songs of one finite stem each (0.1 s, panned left, centre, right) and show.txt.
  static func harness() throws -> ConsoleHarness {
    let h = try ConsoleHarness()
    try h.folder.wav("short.wav", channels: 1, sampleRate: 48000, seconds: 0.1, frequency: 375, amplitude: 0.5)
    for (i, pan) in [-1, 0, 1].enumerated() {
      try h.folder.write(
        """
        {
          "format" : "stemdeck-session",
          "version" : 1,
          "stems" : [ { "name" : "s\(i + 1)", "file" : "short.wav", "pan" : \(pan) } ]
        }
        """, to: "song\(i + 1).json")
    }
    try h.folder.write("song1.json\nsong2.json\nsong3.json\n", to: "show.txt")
    return h
  }

  /// Plays the current song to its end (0.1 s = 5 blocks) and lets the host react: it sees the
  /// end, the renderer stops in the next block, then the host acts on it.
  static func playToEnd(_ h: ConsoleHarness) -> [String] {
    h.render(blocks: 8)
    var lines = h.idle()
    h.render(blocks: 1)
    lines += h.idle()
    return lines
  }

  /// Loads show.txt, runs `commands` (e.g. "advance cue"), plays song 1 to its end; the host's lines.
  static func playFirstSong(_ h: ConsoleHarness, after commands: [String]) -> [String] {
    for line in ["setlist \(h.folder.file("show.txt"))"] + commands + ["play"] {
      #expect(h.run(line).ok, "\(line)")
    }
    return playToEnd(h)
  }

  @Test("advance: shows, sets and rejects; off by default")
  func setting() throws {
    let h = try Self.harness()
    defer { h.shutdown() }
    #expect(h.run("advance") == (true, ["advance: off (no setlist loaded)"]))
    #expect(h.run("advance PLAY").ok)
    #expect(h.run("autoadvance") == (true, ["advance: play (no setlist loaded)"]))
    #expect(h.run("advance next") == (false, ["error: advance must be off, cue or play (got 'next')"]))
    #expect(h.run("advance") == (true, ["advance: play (no setlist loaded)"]), "a rejected value changes nothing")
    #expect(h.run("advance cue off").ok == false)
  }

  @Test("off (default): the finished song stays; nothing is opened")
  func off() throws {
    let h = try Self.harness()
    defer { h.shutdown() }
    let lines = Self.playFirstSong(h, after: [])
    #expect(lines.last == "all stems finished", "\(lines)")
    #expect(!lines.contains { $0.hasPrefix("opened") || $0.hasPrefix("song ") })
    #expect(h.mixer.stems.names == ["s1"])
  }

  @Test("cue: each song's end opens the next, stopped; 'play' plays it; the last song ends the show without wrapping")
  func cue() throws {
    let h = try Self.harness()
    defer { h.shutdown() }
    var lines = Self.playFirstSong(h, after: ["advance cue"])
    #expect(
      Array(lines.suffix(3)) == ["all stems finished", "opened \(h.folder.file("song2.json")): 1 stem", "song 2/3: song2"], "\(lines)")
    #expect(h.mixer.stems.names == ["s2"])
    h.render(blocks: 2)
    #expect(h.mixer.transport.state == .paused, "cue leaves the next song stopped")
    #expect(h.idle().isEmpty, "one end advances once")
    #expect(h.run("play").ok)
    lines = Self.playToEnd(h)
    #expect(lines.last == "song 3/3: song3", "\(lines)")
    #expect(h.run("play").ok)
    lines = Self.playToEnd(h)
    #expect(lines.last == "end of the setlist: song 3/3 (song3) has finished", "\(lines)")
    #expect(h.mixer.stems.names == ["s3"])
  }

  @Test("play: the next song is opened and plays on its own")
  func play() throws {
    let h = try Self.harness()
    defer { h.shutdown() }
    let lines = Self.playFirstSong(h, after: ["advance play"])
    #expect(lines.last == "song 2/3: song2", "\(lines)")
    // Song 2's stem is centred: it is heard without another 'play' (once the host has polled,
    // as it does every 10 ms).
    _ = h.idle()
    let peak = h.render(blocks: 2)
    #expect(h.mixer.transport.state == .playing)
    #expect(peak > 0.2, "song 2 is not playing (peak \(peak))")
    #expect(Self.playToEnd(h).last == "song 3/3: song3")
  }

  @Test("interactive: a song with unsaved changes is not left automatically, and says so")
  func unsavedChangesStay() throws {
    let h = try Self.harness()
    defer { h.shutdown() }
    h.console.interactive = true
    let lines = Self.playFirstSong(h, after: ["advance play", "vol s1 0.5"])
    #expect(
      lines.last == "not advancing to song 2/3 (song2): this song has unsaved changes; 'save' them, or 'next!' to discard them", "\(lines)")
    #expect(h.mixer.stems.names == ["s1"])
    #expect(h.mixer.stems.statuses().first?.settings.volume == 0.5)
  }

  @Test("a next song that has become unreadable: the event names it, and the finished song stays")
  func brokenNextSong() throws {
    let h = try Self.harness()
    defer { h.shutdown() }
    // The setlist checks that each song exists; what is in it is read at the advance.
    try h.folder.write("{ not json", to: "song2.json")
    let lines = Self.playFirstSong(h, after: ["advance cue"])
    let last = lines.last ?? ""
    #expect(last.hasPrefix("cannot advance to song 2/3 (song2): ") && last.contains("song2.json"), "\(lines)")
    #expect(h.mixer.stems.names == ["s1"])
  }
}
