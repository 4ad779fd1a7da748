import Foundation
import StemdeckTestSupport
import Testing
@testable import StemdeckSession

/// The optional "sends" section and a stem's "sends" levels (SendSettings.swift): written only
/// when used, checked like every other section.
@Suite("Session aux sends")
struct SendSessionTests {
  static func sendSession() -> Session {
    var session = Session()
    var drums = StemSettings(name: "drums", file: "drums.flac")
    drums.sends = [StemSend(to: "verb", level: 0.25), StemSend(to: "dly", level: 0.5, preFader: true)]
    session.stems = [drums, StemSettings(name: "bass", file: "bass.flac")]
    session.sends = [SendSettings(name: "verb"), SendSettings(name: "dly", returnVolume: 0.5)]
    session.connections = ["verb_send_L": ["reverb:in_1"], "verb_return_L": ["reverb:out_1"]]
    return session
  }

  @Test("sends and a stem's levels round-trip; \"pre\" only when true; nothing is written without sends")
  func roundTrip() throws {
    let session = Self.sendSession()
    let text = SessionFile.encode(session)
    #expect(
      text.contains(#""sends" : [ { "to" : "verb", "level" : 0.25 }, { "to" : "dly", "level" : 0.5, "pre" : true } ] }"#),
      "\(text)")
    #expect(
      text.contains(
        """
          "sends" : [
            { "name" : "verb", "returnVolume" : 1 },
            { "name" : "dly", "returnVolume" : 0.5 }
          ]
        }
        """), "\(text)")
    #expect(
      !text.contains(
        #""name" : "bass", "file" : "bass.flac", "volume" : 1, "pan" : 0, "rate" : 1, "loops" : 0, "mute" : false, "solo" : false, "sends""#
      ))
    #expect(try decode(text) == session)
    try session.validate()
    let plain = try decode(demoLikeDocument)
    #expect(plain.sends.isEmpty && plain.stems.allSatisfy { $0.sends.isEmpty })
    #expect(SessionFile.encode(plain) == demoLikeDocument)
    // A level written in dB reads as its gain.
    let dB = try decode(text.replacingOccurrences(of: #""level" : 0.25"#, with: #""level" : "-12dB""#))
    #expect(abs(dB.stems[0].sends[0].level - 0.251189) < 1e-6)
  }

  /// A document with `sends` and the drums stem's `levels` as given.
  static func document(sends: String, levels: String?) -> String {
    """
    { "format" : "stemdeck-session", "version" : 3,
      "stems" : [ { "name" : "drums", "file" : "drums.flac"\(levels.map { ", \"sends\" : \($0)" } ?? "") } ],
      "sends" : \(sends) }
    """
  }

  @Test(
    "bad sends and levels are refused with the field, the value and what is allowed",
    arguments: [
      (#"{ "name" : "verb" }"#, nil, "sends", "must be an array of aux sends"),
      (#"[ { "returnVolume" : 1 } ]"#, nil, "sends[0].name", "is missing (every send needs a name)"),
      (#"[ { "name" : "verb", "returnVolume" : 3 } ]"#, nil, "sends[0].returnVolume", "must be a number between 0 and 2"),
      (#"[ { "name" : "verb", "pre" : true } ]"#, nil, "sends[0].pre", "unknown field (allowed: name, returnVolume)"),
      (#"[ { "name" : "verb" }, { "name" : "verb" } ]"#, nil, "sends[1].name", "duplicate send name \"verb\" (also sends[0])"),
      (#"[ { "name" : "a b" } ]"#, nil, "sends[0].name", "invalid send name \"a b\""),
      (
        "[" + (0..<9).map { #"{ "name" : "s\#($0)" }"# }.joined(separator: ", ") + "]", nil, "sends",
        "has 9 sends; at most 8"
      ),
      (#"[ { "name" : "verb" } ]"#, #"{ "to" : "verb" }"#, "stems[0].sends", "must be an array of send levels"),
      (#"[ { "name" : "verb" } ]"#, #"[ { "level" : 0.5 } ]"#, "stems[0].sends[0].to", "is missing"),
      (#"[ { "name" : "verb" } ]"#, #"[ { "to" : "verb" } ]"#, "stems[0].sends[0].level", "is missing"),
      (
        #"[ { "name" : "verb" } ]"#, #"[ { "to" : "dly", "level" : 0.5 } ]"#, "stems[0].sends[0].to",
        "names no send (got \"dly\"; the sends are 'verb')"
      ),
      (#"[ { "name" : "verb" } ]"#, #"[ { "to" : "verb", "level" : 7 } ]"#, "stems[0].sends[0].level", "must be a number between 0 and 2"),
      (
        #"[ { "name" : "verb" } ]"#, #"[ { "to" : "verb", "level" : 0.5, "pre" : "yes" } ]"#, "stems[0].sends[0].pre",
        "must be true or false"
      ),
      (
        #"[ { "name" : "verb" } ]"#, #"[ { "to" : "verb", "level" : 0.5 }, { "to" : "verb", "level" : 0.1 } ]"#,
        "stems[0].sends[1].to", "a second level into \"verb\" (also sends[0]); one per send"
      ),
      (
        #"[ { "name" : "verb" } ]"#, #"[ { "to" : "verb", "level" : 0.5, "post" : true } ]"#, "stems[0].sends[0].post",
        "unknown field (allowed: to, level, pre)"
      )
    ] as [(String, String?, String, String)])
  func badSends(sends: String, levels: String?, location: String, message: String) {
    do {
      _ = try decode(Self.document(sends: sends, levels: levels))
      Issue.record("accepted \(sends) \(levels ?? "")")
    } catch {
      #expect(error.location == location, "\(error)")
      #expect(error.message.contains(message), "\(error)")
      #expect(error.line != nil, "\(error)")
    }
  }

  @Test("validate() refuses a level into an unknown send, as the decoder does")
  func validateInCode() {
    var session = Self.sendSession()
    session.sends.removeLast()
    #expect(throws: SessionError.self) { try session.validate() }
  }

  @Test("a bus's and a live input's send levels round-trip, and their problems name the field and its line")
  func busAndInputLevels() throws {
    var session = Self.sendSession()
    var bus = BusSettings(name: "drums_bus")
    bus.sends = [StemSend(to: "verb", level: 0.5)]
    var mic = InputSettings(name: "mic", channels: .mono)
    mic.sends = [StemSend(to: "dly", level: 0.3, preFader: true)]
    session.buses = [bus, BusSettings(name: "band")]
    session.inputs = [mic]
    let text = SessionFile.encode(session)
    #expect(text.contains(#""solo" : false, "sends" : [ { "to" : "verb", "level" : 0.5 } ] }"#), "\(text)")
    #expect(text.contains(#""sends" : [ { "to" : "dly", "level" : 0.3, "pre" : true } ] }"#), "\(text)")
    #expect(!text.contains(#""name" : "band", "volume" : 1, "pan" : 0, "mute" : false, "solo" : false, "sends""#))
    #expect(try decode(text) == session)
    try session.validate()
    for (from, to, location, message) in [
      (#"{ "to" : "verb", "level" : 0.5 }"#, #"{ "to" : "nope", "level" : 0.5 }"#, "buses[0].sends[0].to", "names no send (got \"nope\""),
      (#"{ "to" : "dly", "level" : 0.3"#, #"{ "to" : "dly", "level" : 9"#, "inputs[0].sends[0].level", "must be a number between 0 and 2"),
      (
        #"[ { "to" : "dly", "level" : 0.3, "pre" : true } ]"#, #"[ { "to" : "dly", "level" : 0.3 }, { "to" : "dly", "level" : 1 } ]"#,
        "inputs[0].sends[1].to", "a second level into \"dly\""
      ),
      (
        #"{ "to" : "verb", "level" : 0.5 } ]"#, #"{ "to" : "verb", "level" : 0.5, "post" : 1 } ]"#, "buses[0].sends[0].post",
        "unknown field"
      )
    ] {
      let bad = text.replacingOccurrences(of: from, with: to)
      #expect(bad != text, "\(from)")
      do {
        _ = try decode(bad)
        Issue.record("accepted \(to)")
      } catch {
        #expect(error.location == location, "\(error)")
        #expect(error.message.contains(message), "\(error)")
        #expect(error.line != nil, "\(error)")
      }
    }
    // validate() checks values set in code the same way.
    session.buses[0].sends[0].to = "gone"
    #expect(throws: SessionError.self) { try session.validate() }
  }
}
