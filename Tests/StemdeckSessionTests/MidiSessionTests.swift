import Foundation
import Testing
@testable import StemdeckSession

let badMidiDocuments: [BadDocument] = [
  BadDocument(
    label: "midi not an object", text: document(top: [#""midi" : []"#]),
    location: "midi", fragment: "must be an object such as", line: 4),
  BadDocument(
    label: "midi unknown field", text: document(top: [#""midi" : { "mapings" : [] }"#]),
    location: "midi.mapings", fragment: "did you mean \"mappings\"?", line: 4),
  BadDocument(
    label: "midi feedback not a bool", text: document(top: [#""midi" : { "feedback" : "yes" }"#]),
    location: "midi.feedback", fragment: "must be true or false", line: 4),
  BadDocument(
    label: "midi mappings not an array", text: document(top: [#""midi" : { "mappings" : 7 }"#]),
    location: "midi.mappings", fragment: "must be an array of mappings", line: 4),
  BadDocument(
    label: "midi source unknown",
    text: document(top: [#""midi" : { "mappings" : [ { "source" : "knob", "number" : 7, "action" : "volume", "target" : "drums" } ] }"#]),
    location: "midi.mappings[0].source", fragment: "unknown MIDI source \"knob\" (allowed: cc, note, bend, pc)", line: 4),
  BadDocument(
    label: "midi number out of range",
    text: document(top: [#""midi" : { "mappings" : [ { "source" : "cc", "number" : 128, "action" : "volume", "target" : "drums" } ] }"#]),
    location: "midi.mappings[0].number", fragment: "must be a whole number between 0 and 127 (got 128)", line: 4),
  BadDocument(
    label: "midi number missing",
    text: document(top: [#""midi" : { "mappings" : [ { "source" : "note", "action" : "sfx", "target" : "kick" } ] }"#]),
    location: "midi.mappings[0].number", fragment: "is missing (a note mapping needs its note number 0…127)", line: 4),
  BadDocument(
    label: "midi channel 0",
    text: document(top: [
      #""midi" : { "mappings" : [ { "source" : "cc", "number" : 7, "channel" : 0, "action" : "volume", "target" : "drums" } ] }"#
    ]),
    location: "midi.mappings[0].channel", fragment: "between 1 and 16", line: 4),
  BadDocument(
    label: "midi action unknown",
    text: document(top: [#""midi" : { "mappings" : [ { "source" : "cc", "number" : 7, "action" : "wiggle", "target" : "drums" } ] }"#]),
    location: "midi.mappings[0].action",
    fragment:
      "unknown MIDI action \"wiggle\" (allowed: volume, pan, rate, sfx, mute, solo, play, eq, eqlow, eqmid, eqhigh, send, next, prev, stop, undo, redo, scene, safe, width, insert, do)",
    line: 4),
  BadDocument(
    label: "midi next with a target",
    text: document(top: [#""midi" : { "mappings" : [ { "source" : "note", "number" : 60, "action" : "next", "target" : "drums" } ] }"#]),
    location: "midi.mappings[0].target", fragment: "next takes no target (got \"drums\")", line: 4),
  BadDocument(
    label: "midi pan of the master",
    text: document(top: [#""midi" : { "mappings" : [ { "source" : "cc", "number" : 8, "action" : "pan", "target" : "master" } ] }"#]),
    location: "midi.mappings[0].target", fragment: "master", line: 4),
  BadDocument(
    label: "midi rate from a cc",
    text: document(top: [#""midi" : { "mappings" : [ { "source" : "cc", "number" : 7, "action" : "rate", "target" : "drums" } ] }"#]),
    location: "midi.mappings[0].action", fragment: "rate follows pitch bend only", line: 4),
  BadDocument(
    label: "midi send without its send",
    text: document(top: [#""midi" : { "mappings" : [ { "source" : "cc", "number" : 7, "action" : "send", "target" : "drums" } ] }"#]),
    location: "midi.mappings[0].send", fragment: "a send name must not be empty", line: 4),
  BadDocument(
    label: "midi send named on a volume mapping",
    text: document(top: [
      #""midi" : { "mappings" : [ { "source" : "cc", "number" : 7, "action" : "volume", "target" : "drums", "send" : "verb" } ] }"#
    ]),
    location: "midi.mappings[0].send", fragment: "only a send mapping names a send (got \"verb\" on volume)", line: 4),
  BadDocument(
    label: "midi target missing",
    text: document(top: [#""midi" : { "mappings" : [ { "source" : "cc", "number" : 7, "action" : "volume" } ] }"#]),
    location: "midi.mappings[0].target", fragment: "a stem name", line: 4),
  BadDocument(
    label: "midi too many mappings",
    text: document(top: [
      #""midi" : { "mappings" : ["#
        + Array(repeating: #"{ "source" : "bend", "action" : "rate", "target" : "a" }"#, count: 257).joined(separator: ", ") + " ] }"
    ]),
    location: "midi.mappings", fragment: "has 257 mappings; at most 256", line: 4),
  BadDocument(
    label: "midi repeated mapping",
    text: document(top: [
      #""midi" : { "mappings" : [ { "source" : "bend", "action" : "rate", "target" : "a" }, { "source" : "bend", "action" : "rate", "target" : "a" } ] }"#
    ]),
    location: "midi.mappings[1]", fragment: "repeats midi.mappings[0]", line: 4)
]

@Suite("The session's midi section")
struct MidiSessionTests {
  @Test("each bad midi section is rejected with its location and reason", arguments: badMidiDocuments)
  func rejected(_ bad: BadDocument) {
    do {
      let session = try SessionFile.decode(Data(bad.text.utf8), source: "Sessions/bad.json")
      Issue.record("decoded instead of failing: \(session)")
    } catch {
      #expect(error.location == bad.location, "\(error)")
      #expect(error.message.contains(bad.fragment), "\(error)")
      if let line = bad.line { #expect(error.line == line, "\(error)") }
    }
  }

  @Test("mappings round-trip byte for byte; a file without a midi section has none and writes none")
  func roundTrip() throws {
    var session = Session()
    session.stems = [StemSettings(name: "drums", file: "d.flac")]
    session.midi.mappings = [
      MidiMapping(source: .cc, number: 7, channel: 1, action: .volume, target: "drums"),
      MidiMapping(source: .note, number: 36, action: .sfx, target: "kick"),
      MidiMapping(source: .bend, number: 0, channel: 16, action: .rate, target: "drums"),
      MidiMapping(source: .cc, number: 64, action: .play, target: ""),
      MidiMapping(source: .cc, number: 21, action: .send, target: "drums", send: "verb")
    ]
    let text = SessionFile.encode(session)
    #expect(text.contains(#"{ "source" : "cc", "number" : 7, "channel" : 1, "action" : "volume", "target" : "drums" }"#), "\(text)")
    #expect(text.contains(#"{ "source" : "bend", "channel" : 16, "action" : "rate", "target" : "drums" }"#), "\(text)")
    let back = try decode(text)
    #expect(back == session)
    #expect(SessionFile.encode(back) == text)
    // Feedback alone, and with mappings.
    var feedback = Session()
    feedback.midi.feedback = true
    let alone = SessionFile.encode(feedback)
    #expect(alone.contains(#""midi" : { "feedback" : true }"#), "\(alone)")
    #expect(try decode(alone) == feedback)
    session.midi.feedback = true
    let both = SessionFile.encode(session)
    #expect(both.contains(#""midi" : { "feedback" : true, "mappings" : ["#), "\(both)")
    #expect(try decode(both) == session)
    let plain = try decode(document())
    #expect(plain.midi.mappings.isEmpty)
    #expect(!SessionFile.encode(plain).contains("midi"))
  }

  @Test("validate() refuses a bad mapping set in code, with its location")
  func validate() {
    var session = Session()
    session.midi.mappings = [MidiMapping(source: .cc, number: 300, action: .volume, target: "drums")]
    #expect(throws: SessionError.self) { try session.validate() }
    do { try session.validate() } catch {
      #expect(error.location == "midi.mappings[0].number")
      #expect(error.message.contains("between 0 and 127 (got 300)"))
    }
  }
}
