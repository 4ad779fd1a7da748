import Foundation
import Testing
@testable import StemdeckConsole
import StemdeckControl
import StemdeckSession
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

/// Issue 35, items 2 and 5: in a setlist the rig (live inputs, buses, aux sends, the master, MIDI
/// mappings) outlives the songs, and only the song's own unsaved changes hold `next` back.
@Suite("Setlist: one rig through every song")
struct SetlistRigTests {
  /// Three songs of one stem each; song 2 brings a bus of its own; show.txt lists them.
  static func harness() throws -> ConsoleHarness {
    let h = try ConsoleHarness()
    try h.folder.wav("tone.wav", channels: 1, sampleRate: 48000, seconds: 1, frequency: 375, amplitude: 0.5)
    for i in 1...3 {
      let buses = i == 2 ? #", "buses" : [ { "name" : "own_bus" } ]"# : ""
      try h.folder.write(
        """
        { "format" : "stemdeck-session", "version" : 3, "master" : { "volume" : 0.5 },
          "stems" : [ { "name" : "s\(i)", "file" : "tone.wav" } ]\(buses) }
        """, to: "song\(i).json")
    }
    try h.folder.write("song1.json\nsong2.json\nsong3.json\n", to: "show.txt")
    return h
  }

  @Test("a live input, a bus, a send, the master's level and a MIDI mapping made in song 1 are there in songs 2 and 3")
  func rigOutlivesSongs() throws {
    let h = try Self.harness()
    defer { h.shutdown() }
    h.console.interactive = true
    #expect(h.run("setlist \(h.folder.file("show.txt"))").ok)
    for line in ["input add mic mono", "vol mic -3dB", "bus add verb_bus", "send add verb", "master 0.8", "midi map cc 7 vol mic"] {
      let r = h.run(line)
      #expect(r.ok, "\(line): \(r.output)")
    }
    // Rig changes are unsaved, but they go on with the rig: `next` is not held back by them.
    #expect(h.mixer.isDirty)
    for song in 2...3 {
      let r = h.run("next")
      #expect(r.ok, "next to song \(song): \(r.output)")
      #expect(h.mixer.stems.names == ["s\(song)"])
      #expect(h.mixer.inputs.names == ["mic"])
      let mic = try h.mixer.inputs.status("mic")
      #expect(abs(mic.settings.strip.volume - linear(decibels: -3)) < 1e-9)
      #expect(h.mixer.buses.statuses().map(\.settings.name).contains("verb_bus"))
      #expect(h.mixer.sends.all.map(\.name) == ["verb"])
      #expect(h.mixer.master.volume == 0.8, "song \(song) took its own master level, not the rig's")
      #expect(h.mixer.midi.mappings.count == 1)
      #expect(h.mixer.isDirty, "the rig's unsaved changes were forgotten on the song change")
    }
    // Song 2's own bus came in with it and stays with the rig.
    #expect(h.mixer.buses.statuses().map(\.settings.name).contains("own_bus"))
  }

  @Test("the song's own unsaved change still holds 'next' back at the prompt; 'next!' goes and keeps the rig")
  func songChangesHoldNext() throws {
    let h = try Self.harness()
    defer { h.shutdown() }
    h.console.interactive = true
    #expect(h.run("setlist \(h.folder.file("show.txt"))").ok)
    #expect(h.run("input add mic mono").ok)
    #expect(h.run("vol s1 0.25").ok)
    let held = h.run("next")
    #expect(!held.ok && held.output.joined().contains("this song has unsaved changes"), "\(held.output)")
    #expect(h.mixer.stems.names == ["s1"])
    #expect(h.run("next!").ok)
    #expect(h.mixer.stems.names == ["s2"] && h.mixer.inputs.names == ["mic"])
  }
}
