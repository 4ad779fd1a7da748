import Foundation
import Testing

@testable import StemdeckSession

/// `SessionDiff` (SessionDiff.swift): what differs between two sessions, value by value, as the
/// session file writes them.
@Suite struct SessionDiffTests {
  static var base: Session {
    var s = Session()
    s.masterVolume = 0.9
    s.stems = [StemSettings(name: "drums", file: "drums.flac"), StemSettings(name: "bass", file: "bass.flac")]
    s.stems[0].volume = 0.8
    s.buses = [BusSettings(name: "band")]
    s.inputs = [InputSettings(name: "mic", channels: .mono)]
    return s
  }

  @Test("an EQ changed on both sides: its leaves, by dotted key")
  func nested() {
    var saved = Self.base
    saved.stems[0].eq.low.gain = 3
    var live = saved
    live.stems[0].eq.low.gain = -2
    #expect(SessionDiff.changes(from: saved, to: live).map(\.line) == ["drums eq.low.gain 3 → -2"])
  }

  @Test("a volume the file writes in dB on one side only: both sides in dB (no '0.8 → -6dB'); both numbers stay numbers")
  func gainsInOneUnit() throws {
    var live = Self.base
    live.stems[0].volume = try #require(Decibels.linearGain(text: "-6dB"))
    live.masterVolume = 0.5
    #expect(
      SessionDiff.changes(from: Self.base, to: live).map(\.line) == ["master volume 0.9 → 0.5", "drums volume -1.94dB → -6dB"])
  }

  @Test("a plugin's state in short: a path as it is, a long text and bytes by their size")
  func pluginState() {
    var live = Self.base
    let text = String(repeating: "convolution.ir.gain.0=5.000000e-01\n", count: 10)
    live.masterInserts = [
      InsertSettings(
        uri: "http://gareus.org/oss/lv2/convoLV2#Mono", values: [InsertValue(symbol: "gain", value: 0)],
        state: [
          InsertStateValue(
            key: "http://gareus.org/oss/lv2/convoLV2#state", type: "http://lv2plug.in/ns/ext/atom#String", flags: 3,
            bytes: Array(text.utf8) + [0]),
          InsertStateValue(
            key: "http://gareus.org/oss/lv2/convoLV2#impulse", type: "http://lv2plug.in/ns/ext/atom#Path", flags: 3,
            bytes: Array("show-files/room.wav".utf8) + [0]),
          InsertStateValue(key: "urn:example:blob", type: "urn:example:type", flags: 1, bytes: [1, 2, 3, 4, 5])
        ])
    ]
    #expect(
      SessionDiff.changes(from: Self.base, to: live).map(\.line) == [
        "master inserts (default) → [{ uri: http://gareus.org/oss/lv2/convoLV2#Mono, values: { gain: 0 }, state: { state: (350 characters), impulse: show-files/room.wav, blob: (5 bytes) } }]"
      ])
  }

  @Test("the same session twice: no differences; the transport's position is not one")
  func same() {
    var moved = Self.base
    moved.position = 12.5
    #expect(SessionDiff.changes(from: Self.base, to: Self.base).isEmpty)
    #expect(SessionDiff.changes(from: Self.base, to: moved).isEmpty)
  }

  @Test("strip values, routes, nested EQ, defaults left out, elements added and removed, order, master and options: one line each")
  func lines() {
    var live = Self.base
    live.stems[0].volume = 0.5
    live.stems[1].bus = "band"
    live.stems[1].eq.low.gain = 3
    live.inputs[0].soloSafe = false
    live.buses.append(BusSettings(name: "verb"))
    live.stems.swapAt(0, 1)
    live.masterVolume = 0.7
    live.options.songChange = .crossfade
    live.inputs.removeAll()
    live.inputs.append(InputSettings(name: "keys", channels: .stereo))
    let lines = SessionDiff.changes(from: Self.base, to: live).map(\.line)
    #expect(
      lines == [
        "master volume 0.9 → 0.7",
        "options songChange (default) → crossfade",
        "bass eq (default) → { low: { frequency: 100, gain: 3 } }",
        "bass bus master → band",
        "drums volume 0.8 → 0.5",
        "stems order drums, bass → bass, drums",
        "bus verb added",
        "input mic removed",
        "input keys added"
      ], "\(lines)")
  }

  @Test("connections by port and peer; MIDI mappings whole")
  func connectionsAndMappings() {
    var saved = Self.base
    saved.connections = ["master_L": ["system:playback_1"], "master_R": ["system:playback_2"]]
    var live = saved
    live.connections = ["master_L": ["system:playback_3"], "master_R": ["system:playback_2"]]
    live.midi.mappings = [MidiMapping(source: .cc, number: 7, action: .volume, target: "drums")]
    let lines = SessionDiff.changes(from: saved, to: live).map(\.line)
    #expect(lines.contains("connection master_L → system:playback_1 removed"), "\(lines)")
    #expect(lines.contains("connection master_L → system:playback_3 added"), "\(lines)")
    #expect(!lines.contains { $0.contains("playback_2") })
    #expect(lines.contains { $0.hasPrefix("midi mapping {") && $0.contains("action: volume") && $0.hasSuffix(" added") }, "\(lines)")
  }
}
