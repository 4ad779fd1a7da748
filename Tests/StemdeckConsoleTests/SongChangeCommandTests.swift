import Foundation
import Testing
@testable import StemdeckConsole
import StemdeckControl
import StemdeckEngine
import StemdeckSession
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

@Suite("Setlist song changes (songchange, next, prev)")
struct SongChangeCommandTests {
  /// A session with one stem panned hard left (`left`) or right, and its song-change option.
  static func song(_ name: String, file: String, pan: Int, options: String) -> String {
    """
    {
      "format" : "stemdeck-session",
      "version" : 1,
      "options" : { \(options) },
      "stems" : [ { "name" : "\(name)", "file" : "\(file)", "pan" : \(pan), "loops" : -1 } ]
    }
    """
  }

  /// song1 (stem "a", left, crossfade 0.1 s when left), song2 (stem "b", right, gapless), show.txt.
  static func harness() throws -> ConsoleHarness {
    let h = try ConsoleHarness()
    try h.folder.wav("tone.wav", channels: 1, sampleRate: 48000, seconds: 1, frequency: 375, amplitude: 0.5)
    try h.folder.write(
      song("a", file: "tone.wav", pan: -1, options: #""songChange" : "crossfade", "crossfadeSeconds" : 0.1"#), to: "song1.json")
    try h.folder.write(song("b", file: "tone.wav", pan: 1, options: #""songChange" : "gapless""#), to: "song2.json")
    try h.folder.write("song1.json\nsong2.json\n", to: "show.txt")
    return h
  }

  /// Renders `frames` frames (blocks of 256, streams filled first); peak of each channel.
  static func render(_ h: ConsoleHarness, _ frames: Int) -> (left: Float, right: Float) {
    let l = UnsafeMutablePointer<Float>.allocate(capacity: 256), r = UnsafeMutablePointer<Float>.allocate(capacity: 256)
    defer { l.deallocate(); r.deallocate() }
    var peak: (Float, Float) = (0, 0)
    for _ in 0..<(frames / 256) {
      h.mixer.engine.fillStreams()
      renderBlock(h.mixer.renderState, left: l, right: r, frameCount: 256)
      for i in 0..<256 { peak = (max(peak.0, abs(l[i])), max(peak.1, abs(r[i]))) }
    }
    _ = h.mixer.pump()
    return peak
  }

  @Test("next crossfades (song1 says so), prev is gapless (song2 says so): the song being left decides")
  func nextAndPrev() throws {
    let h = try Self.harness()
    defer { h.shutdown() }
    let show = h.folder.file("show.txt")
    #expect(h.run("setlist \(show)").output.last == "song 1/2: song1")
    #expect(h.run("songchange") == (true, ["songchange: crossfade 0.1 s"]))
    #expect(h.run("play").ok)
    #expect(Self.render(h, 4096).right == 0)
    #expect(h.run("next") == (true, ["opened \(h.folder.file("song2.json")): 1 stem", "song 2/2: song2 (crossfade 0.1 s)"]))
    #expect(h.mixer.stems.names == ["b"])
    // 0.1 s = 4800 frames. Over the first 2048, both songs sound; after the fade only song2.
    let during = Self.render(h, 2048)
    #expect(during.left > 0.1 && during.right > 0.1, "both songs during the crossfade: \(during)")
    _ = Self.render(h, 3072)
    let after = Self.render(h, 2048)
    #expect(after.left < 1e-6 && after.right > 0.4, "only song2 after the crossfade: \(after)")
    #expect(h.mixer.songs.leavingStemCount == 0)
    #expect(h.run("songchange") == (true, ["songchange: gapless"]))
    #expect(h.run("prev") == (true, ["opened \(h.folder.file("song1.json")): 1 stem", "song 1/2: song1 (gapless)"]))
    // Gapless: the first block after the switch is song1 alone, at full level.
    let first = Self.render(h, 256)
    #expect(first.right < 1e-6 && first.left > 0.4, "song1 alone right after a gapless switch: \(first)")
    #expect(h.mixer.songs.leavingStemCount == 0)
    #expect(h.mixer.transport.state == .playing)
  }

  @Test("songchange sets, shows and rejects; the option survives save → open → save byte-identically")
  func setting() throws {
    let h = try Self.harness()
    defer { h.shutdown() }
    #expect(h.run("open \(h.folder.file("song2.json"))").ok)
    #expect(h.run("songchange crossfade 500ms").ok)
    #expect(h.mixer.options.songChange == .crossfade && h.mixer.options.crossfadeSeconds == 0.5)
    #expect(h.mixer.isDirty)
    #expect(h.run("songchange gapless").ok)
    #expect(h.mixer.options.songChange == .gapless && h.mixer.options.crossfadeSeconds == 0.5)
    let before = MixerSnapshot(h)
    for (line, message) in [
      ("songchange fade", "error: songchange must be gapless or crossfade [TIME] (got 'fade')"),
      ("songchange crossfade 40s", "error: songchange: the crossfade must be a number of seconds from 0.05 to 30 (got 40)"),
      ("songchange crossfade 10ms", "error: songchange: the crossfade must be a number of seconds from 0.05 to 30 (got 0.01)"),
      ("songchange gapless 2s", "error: songchange: only crossfade takes a time (usage: songchange crossfade 2s)"),
      ("songchange crossfade -2s", "error: duration must not have a sign (got '-2s')")
    ] {
      #expect(h.run(line) == (false, [message]))
    }
    #expect(MixerSnapshot(h) == before)
    #expect(h.run("songchange crossfade 1.5").ok)
    let first = h.folder.file("saved.json"), second = h.folder.file("again.json")
    #expect(h.run("save \(first)").ok)
    let text = try String(contentsOfFile: first, encoding: .utf8)
    #expect(text.contains(#""songChange" : "crossfade""#) && text.contains(#""crossfadeSeconds" : 1.5"#))
    #expect(h.run("open \(first)").ok)
    #expect(h.run("save \(second)").ok)
    #expect(try Data(contentsOf: URL(fileURLWithPath: first)) == Data(contentsOf: URL(fileURLWithPath: second)))
  }

  @Test(
    "a next song that cannot be opened: the error names its file, the current song plays on untouched",
    arguments: [
      ("not json", "song2.json"),
      (
        "{ \"format\" : \"stemdeck-session\", \"version\" : 1, \"stems\" : [ { \"name\" : \"b\", \"file\" : \"tone.wav\", \"pan\" : 7 } ] }",
        "stems[0].pan"
      )
    ])
  func brokenNextSong(_ content: String, _ fragment: String) throws {
    let h = try Self.harness()
    defer { h.shutdown() }
    #expect(h.run("setlist \(h.folder.file("show.txt"))").ok)
    #expect(h.run("play").ok)
    _ = Self.render(h, 2048)
    try h.folder.write(content, to: "song2.json")
    let before = MixerSnapshot(h)
    let result = h.run("next")
    #expect(!result.ok)
    #expect(result.output.count == 1)
    #expect(result.output.first?.hasPrefix("error: \(h.folder.file("song2.json"))") == true, "\(result.output)")
    #expect(result.output.first?.contains(fragment) == true, "\(result.output)")
    #expect(MixerSnapshot(h) == before)
    let after = Self.render(h, 4096)
    #expect(after.left > 0.4 && after.right == 0, "song1 plays on: \(after)")
    #expect(h.mixer.songs.leavingStemCount == 0)
    // A deleted file is named too.
    try FileManager.default.removeItem(atPath: h.folder.file("song2.json"))
    let gone = h.run("next")
    #expect(!gone.ok && gone.output.first?.contains(h.folder.file("song2.json")) == true, "\(gone.output)")
    #expect(h.mixer.stems.names == ["a"])
    #expect(Self.render(h, 1024).left > 0.4)
  }
}
