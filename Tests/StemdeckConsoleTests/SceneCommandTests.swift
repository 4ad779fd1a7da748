import Foundation
import StemdeckControl
import StemdeckEngine
import StemdeckSession
import Testing

@testable import StemdeckConsole
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

/// Scenes (issue 41): stored mixes recalled by name, with a scope, recall-safe strips and a fade;
/// saved in the session; a recall is one undo step; from MIDI and OSC.
@Suite struct SceneCommandTests {
  /// The two stems, a bus feeding the master with bass on it, and a mono input.
  static func rig() throws -> ConsoleHarness {
    let h = try ConsoleHarness.withStems()
    for line in ["bus add band", "route bass band", "input add mic mono"] {
      guard h.run(line).ok else { throw CommandError("setup failed: \(line)") }
    }
    return h
  }

  @Test("save, list, recall (all, some strips, some controls), recall-safe, rename, remove, refusals; a recall is one undo step")
  func commands() throws {
    let h = try Self.rig()
    defer { h.shutdown() }
    #expect(h.run("vol drums -6dB; pan bass 0.3; eq drums low 100 3; vol mic -3dB").ok)
    #expect(h.run("scene save verse").output == ["scene 'verse' saved: the mix now"])
    let verse = try (h.mixer.stems.status("drums").settings.strip, h.mixer.stems.status("bass").settings.strip)
    #expect(h.run("vol drums 0dB; mute bass; solo drums; eq drums flat; vol band -2dB; vol mic -12dB; master -1dB").ok)
    #expect(h.run("scene save chorus").ok)
    #expect(
      h.run("scene save chorus") == (
        false, ["error: a scene named 'chorus' already exists ('scene update chorus' stores the mix now in it)"]
      ))
    #expect(h.run("scene").output == ["verse: 2 stems, 1 bus, 1 input, master 0.0 dB", "chorus: 2 stems, 1 bus, 1 input, master -1.0 dB"])
    // Everything back to the verse: drums, bass, the bus, the mic and the master.
    let steps = h.console.history.steps.count
    #expect(h.run("scene recall verse").output == ["recalled 'verse': 4 strips changed (drums, bass, band, mic)"])
    #expect(try h.mixer.stems.status("drums").settings.strip == verse.0)
    #expect(try h.mixer.stems.status("bass").settings.strip.withMix(of: verse.1) == h.mixer.stems.status("bass").settings.strip)
    #expect(try h.mixer.buses.destination(of: "bass") == "band", "a recall keeps routes")
    #expect(h.mixer.master.volume == 1)
    #expect(h.console.history.steps.count == steps + 1)
    // Recall-safe: the mic stays; only some strips; only some controls.
    #expect(h.run("scene safe mic").output == ["mic is left alone by scene recalls"])
    #expect(h.run("scene recall chorus --strips drums").output == ["recalled 'chorus': 1 strip changed (drums)"])
    #expect(try h.mixer.stems.status("drums").settings.solo && !h.mixer.stems.status("bass").settings.mute)
    #expect(h.mixer.master.volume == 1, "a recall of some strips leaves the master")
    #expect(h.run("scene recall chorus --only mute").output == ["recalled 'chorus': 1 strip changed (bass); left alone (recall-safe): mic"])
    #expect(try h.mixer.stems.status("bass").settings.mute && h.mixer.stems.status("bass").settings.pan == 0.3)
    // Undo takes a recall back whole.
    #expect(h.run("undo").ok)
    #expect(try !h.mixer.stems.status("bass").settings.mute)
    // Renamed, removed, refused.
    #expect(h.run("scene rename verse intro").ok)
    #expect(h.run("scene recall verse") == (false, ["error: unknown scene 'verse' (scenes: intro, chorus)"]))
    #expect(!h.run("scene recall intro fade -2").ok)
    #expect(h.run("scene recall intro --only volume,colour").output.first?.contains("'colour' is not a scene's control") == true)
    #expect(h.run("scene save all").output.first?.contains("reserved") == true)
    #expect(h.run("scene remove intro").ok)
    #expect(h.run("scene safe nope").output.first?.hasPrefix("error: unknown") == true)
    #expect(h.run("scene list").output == ["chorus: 2 stems, 1 bus, 1 input, master -1.0 dB", "recall-safe: mic"])
    let data = try #require(QueryJSON.data(for: "scene", [], h.console))
    #expect(data["scenes"] as? [String] == ["chorus"] && data["recallSafe"] as? [String] == ["mic"])
    #expect(QueryJSON.data(for: "scene", ["save", "x"], h.console) == nil)
  }

  @Test("scenes and recall-safe strips are saved in the session and read back; the file round-trips byte for byte")
  func savedInSession() throws {
    let h = try Self.rig()
    defer { h.shutdown() }
    #expect(h.run("vol drums -6dB; eq bass mid 800 -4 q 2; scene save a; mute bass; master -3dB; scene save b; scene safe mic").ok)
    let path = h.folder.file("scenes.json")
    #expect(h.run("save \(path)").ok)
    let text = try String(contentsOfFile: path, encoding: .utf8)
    #expect(
      text.contains(
        "\"scenes\" : [\n    { \"name\" : \"a\", \"master\" : { \"volume\" : 1 }, \"stems\" : [\n      { \"name\" : \"drums\", \"volume\" : \"-6dB\""
      ), "\(text)")
    #expect(text.contains("\"recallSafe\" : [ \"mic\" ]"))
    let loaded = try SessionFile.load(path: path)
    #expect(loaded.scenes == h.mixer.scenes.list && loaded.recallSafe == ["mic"])
    #expect(h.run("new!; open! \(path)").ok)
    #expect(h.mixer.scenes.list == loaded.scenes)
    #expect(h.run("save \(path)").ok)
    #expect(try String(contentsOfFile: path, encoding: .utf8) == text)
    #expect(h.run("scene recall a").ok)
    #expect(try !h.mixer.stems.status("bass").settings.mute && h.mixer.master.volume == 1)
  }

  @Test("a bad scenes section is refused with the file, the place and what is allowed")
  func badSections() throws {
    let head = "{ \"format\" : \"stemdeck-session\", \"version\" : 3, \"stems\" : [], "
    for (body, fragment) in [
      ("\"scenes\" : {}", "scenes: must be an array of scenes"),
      ("\"scenes\" : [ { \"master\" : {} } ]", "scenes[0].name: is missing"),
      ("\"scenes\" : [ { \"name\" : \"a\" }, { \"name\" : \"a\" } ]", "duplicate scene name 'a' (also scenes[0])"),
      ("\"scenes\" : [ { \"name\" : \"a\", \"stems\" : [ { \"name\" : \"d\", \"volume\" : 7 } ] } ]", "scenes[0].stems[0].volume"),
      ("\"scenes\" : [ { \"name\" : \"a\", \"buses\" : [ { \"name\" : \"b\", \"rate\" : 1 } ] } ]", "scenes[0].buses[0]"),
      ("\"scenes\" : [ { \"name\" : \"a\", \"colour\" : 1 } ]", "colour"),
      ("\"recallSafe\" : [ 3 ]", "recallSafe[0]")
    ] {
      do {
        _ = try SessionFile.decode(Data((head + body + " }").utf8), source: "show.json")
        Issue.record("accepted: \(body)")
      } catch {
        #expect(error.description.contains("show.json") && error.description.contains(fragment), "\(body): \(error.description)")
      }
    }
  }

  @Test("a recall with a fade glides every changed strip together and lands them on the same block")
  func fade() throws {
    let h = try Self.rig()
    defer { h.shutdown() }
    #expect(h.run("scene save full; vol drums 0.25; vol bass 0.5; pan drums -1; scene save low; scene recall full").ok)
    #expect(h.run("loops all -1; play").ok)
    h.render(blocks: 4)
    #expect(h.run("scene recall low fade 0.5").output == ["recalled 'low': 2 strips changed (drums, bass), gliding over 0.5 s"])
    // 0.5 s is 24,000 frames: gliding after 23 blocks of 1,024, landed after 24, both together.
    h.render(blocks: 23)
    var drums = try h.mixer.stems.status("drums"), bass = try h.mixer.stems.status("bass")
    #expect(drums.glidingVolume != nil && drums.glidingPan != nil && bass.glidingVolume != nil)
    #expect(drums.glidingVolume.map { $0 > 0.25 && $0 < 1 } == true)
    h.render(blocks: 1)
    drums = try h.mixer.stems.status("drums")
    bass = try h.mixer.stems.status("bass")
    #expect(drums.glidingVolume == nil && drums.glidingPan == nil && bass.glidingVolume == nil)
    #expect(drums.settings.volume == 0.25 && drums.settings.pan == -1 && bass.settings.volume == 0.5)
  }

  @Test("a MIDI press mapped to a scene and OSC's /stemdeck/scene/recall recall it")
  func midiAndOSC() throws {
    let h = try Self.rig()
    defer { h.shutdown() }
    #expect(h.run("scene save full; mute drums; scene save quiet; unmute drums").ok)
    #expect(h.run("midi map note 40 scene quiet").ok)
    #expect(h.run("midi maps").output.last == "note 40 scene quiet")
    h.render(blocks: 1)
    midiInput(h.mixer.renderState, offset: 0, count: 3, 0x90, 40, 100)
    h.render(blocks: 1)
    h.console.serviceOnce()
    #expect(try h.mixer.stems.status("drums").settings.mute)
    #expect(h.console.history.steps.last?.source == "midi")
    // A program change (two bytes; a pedal board's preset) recalls one too.
    #expect(h.run("midi map pc 5 ch 1 scene full").ok)
    #expect(
      h.run("midi map pc 6 vol drums").output == [
        "error: midi map: action volume follows a controller or pitch bend, not a program change (use source cc or bend)"
      ])
    h.render(blocks: 1)  // the renderer takes the new mapping
    midiInput(h.mixer.renderState, offset: 0, count: 2, 0xC0, 5, 0)
    h.render(blocks: 1)
    h.console.serviceOnce()
    #expect(try !h.mixer.stems.status("drums").settings.mute)
    #expect(h.run("midi maps").output.last == "pc 5 ch 1 scene full")
    #expect(h.run("mute drums").ok)
    let osc = try OSCServer(host: "127.0.0.1", port: 0)
    defer { osc.close() }
    let reply = osc.handle(
      OSCMessage(path: "/stemdeck/scene/recall", arguments: [.string("full"), .float(0)], source: sockaddr_storage(), sourceLength: 0),
      h.console)
    #expect(reply == nil)
    #expect(try !h.mixer.stems.status("drums").settings.mute)
    let refused = osc.handle(
      OSCMessage(path: "/stemdeck/scene/recall", arguments: [.string("nope")], source: sockaddr_storage(), sourceLength: 0), h.console)
    #expect(refused?.ok == false && refused?.text.contains("unknown scene 'nope'") == true)
  }

  @Test("a setlist's '@scene NAME' after a song recalls that scene of its session as the song opens; a bad directive is refused by line")
  func setlistScene() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("mute drums; scene save quiet; unmute drums").ok)
    let song = h.folder.file("song.json")
    #expect(h.run("save \(song)").ok)
    let list = h.folder.file("show.txt")
    try "song.json\nsong.json\n@scene quiet\n".write(toFile: list, atomically: true, encoding: .utf8)
    #expect(h.run("setlist \(list)").ok)
    #expect(try !h.mixer.stems.status("drums").settings.mute)
    let r = h.run("next")
    #expect(r.ok && r.output.contains("scene 'quiet' recalled: drums"), "\(r.output)")
    #expect(try h.mixer.stems.status("drums").settings.mute)
    #expect(h.run("undo") == (false, ["error: nothing to undo since the session was opened"]))
    for (text, fragment) in [
      ("@scene quiet\nsong.json\n", "line 1: @scene comes after the song"),
      ("song.json\n@cue 3\n", "line 2: '@cue 3' is not a setlist directive"),
      ("song.json\n@scene a b\n", "line 2: '@scene a b' is not a setlist directive")
    ] {
      try text.write(toFile: list, atomically: true, encoding: .utf8)
      let bad = h.run("setlist! \(list)")
      #expect(!bad.ok && bad.output.joined().contains(fragment), "\(bad.output)")
    }
  }
}
