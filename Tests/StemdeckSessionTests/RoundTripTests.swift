import Foundation
import Testing
@testable import StemdeckSession

@Suite("Encoding and round trips")
struct RoundTripTests {
  @Test("a demo-like document decodes and encodes back byte for byte")
  func demoLikeRoundTrip() throws {
    let text = demoLikeDocument
    #expect(text.hasSuffix("}\n"))
    let session = try decode(text)
    #expect(session.quality == .fast)
    #expect(session.masterVolume == 0.9)
    #expect(session.options == SessionOptions())
    #expect(session.stems.map(\.name) == ["drums", "bass", "chords"])
    #expect(session.stems[2].pan == -0.2)
    #expect(session.stems[2].volume == 0.45)
    #expect(session.stems[0].loops == 3)
    #expect(session.position == 0 && session.connections.isEmpty)
    #expect(SessionFile.encode(session) == text)
  }

  @Test("Sessions/demo.json in the repository round-trips byte for byte")
  func repositoryDemoRoundTrip() throws {
    let path = repositoryRoot + "/Sessions/demo.json"
    let original = try #require(contents(of: path))
    let session = try SessionFile.load(path: path)
    #expect(session.stems.count == 5)
    #expect(Array(SessionFile.encode(session).utf8) == original)
  }

  @Test("a session with every field non-default survives encode → decode → encode")
  func everythingRoundTrip() throws {
    let session = everythingSession()
    try session.validate()
    let first = SessionFile.encode(session)
    let decoded = try decode(first)
    #expect(decoded == session)
    #expect(SessionFile.encode(decoded) == first)
    // The optional parts are present only because they are non-default.
    #expect(first.contains("\"position\" : 12.345"))
    #expect(first.contains("\"directOut\" : true"))
    #expect(first.contains("\"startOffset\" : 1.5"))
    #expect(first.contains("\"startOffset\" : 1e-10"))
    #expect(first.contains("\"volume\" : 0.30000000000000004"))
    #expect(first.contains("    \"master_L\" : [ \"system:playback_1\", \"jack_capture:input_1\" ],\n"))
    // The stem that leaves them at their defaults does not mention them.
    let oddLine = try #require(first.split(separator: "\n").first { $0.contains("odd.name-2_x") })
    #expect(!oddLine.contains("directOut"))
  }

  @Test("a dB volume is read as linear gain and saved as a number")
  func decibelVolumeBecomesLinear() throws {
    let text = """
      {
        "format" : "stemdeck-session", "version" : 1,
        "master" : { "volume" : "-6 dB" },
        "position" : 3,
        "connections" : { "master_R" : [ "system:playback_2" ], "master_L" : [ "system:playback_1" ] },
        "stems" : [
          { "name" : "a", "file" : "a.wav", "volume" : "-6dB", "directOut" : true, "startOffset" : 0.25 },
          { "name" : "b", "file" : "b.wav", "volume" : "+3dB" },
          { "name" : "c", "file" : "c.wav", "volume" : "-inf dB" },
          { "name" : "d", "file" : "d.wav", "volume" : "-200dB" },
          { "name" : "e", "file" : "e.wav", "volume" : "0dB" },
          { "name" : "f", "file" : "f.wav", "volume" : " +6 DB " }
        ]
      }
      """
    let session = try decode(text)
    #expect(abs(session.masterVolume - 0.501187) < 1e-6)
    #expect(abs(session.stems[0].volume - 0.501187) < 1e-6)
    #expect(abs(session.stems[1].volume - 1.412538) < 1e-6)
    #expect(session.stems[2].volume == 0)
    #expect(session.stems[3].volume == 0)  // below the -160 dB floor
    #expect(session.stems[4].volume == 1)
    #expect(abs(session.stems[5].volume - 1.995262) < 1e-6)
    let encoded = SessionFile.encode(session)
    #expect(!encoded.contains("dB"))
    #expect(encoded.contains("\"master\" : { \"volume\" : 0.501187"))
    let again = try decode(encoded)
    #expect(again == session)
    #expect(SessionFile.encode(again) == encoded)
  }

  @Test("a minimal document takes every default, and an empty session encodes and decodes")
  func defaults() throws {
    let minimal = try decode(#"{ "format" : "stemdeck-session", "version" : 1 }"#)
    #expect(minimal == Session())
    let stemDefaults = try decode(#"{"format":"stemdeck-session","version":1,"stems":[{"name":"x","file":"x.wav"}]}"#)
    #expect(stemDefaults.stems == [StemSettings(name: "x", file: "x.wav")])
    let empty = SessionFile.encode(Session())
    #expect(empty.contains("\"stems\" : []\n}"))
    #expect(try decode(empty) == Session())
    #expect(empty.hasSuffix("}\n"))
  }

  @Test("numbers: integral values have no decimal point, others read back exactly",
        arguments: [0.0, 1, 3, -1, 0.45, -0.2, 0.1 + 0.2, 1e-10, 1.0 / 3, 2 - 1e-15, 123456.5])
  func numberFormatting(value: Double) throws {
    var session = Session()
    session.stems = [StemSettings(name: "s", file: "s.wav")]
    session.stems[0].pan = max(-1, min(1, value))
    session.position = abs(value)
    let text = SessionFile.encode(session)
    let back = try decode(text)
    #expect(back.stems[0].pan == session.stems[0].pan)
    #expect(back.position == session.position)
    if value == value.rounded() {
      #expect(!SessionRules.number(value).contains("."))
    }
  }

  @Test("a byte order mark and other legal JSON spellings are accepted")
  func lenientButLegalSpellings() throws {
    let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
    let body = #"{"format":"stemdeck-session","version":1.0,"stems":[{"name":"x","file":"\u0078\/y.wav","pan":-5e-1}]}"#
    let session = try SessionFile.decode(Data(bom + Array(body.utf8)), source: "bom.json")
    #expect(session.stems.first?.file == "x/y.wav")
    #expect(session.stems.first?.pan == -0.5)
  }

  @Test("validate() rejects values set in code that a file could not hold")
  func validateRejectsBadModelValues() throws {
    var session = everythingSession()
    session.masterVolume = .nan
    #expect(throws: SessionError.self) { try session.validate() }
    do {
      try session.validate(source: "x.json")
      Issue.record("expected an error")
    } catch {
      #expect(error.location == "master.volume")
      #expect(error.message.contains("(got nan)"))
    }
    // encode never writes NaN: the document it produces fails to load instead of loading wrong.
    let text = SessionFile.encode(session)
    #expect(!text.lowercased().contains("nan"))
    #expect(throws: SessionError.self) { try decode(text) }

    var duplicate = Session()
    duplicate.stems = [StemSettings(name: "a", file: "a"), StemSettings(name: "a", file: "b")]
    #expect(throws: SessionError(file: "session", location: "stems[1].name",
                                 message: "duplicate stem name 'a' (also stems[0])")) {
      try duplicate.validate()
    }
    var badPort = Session()
    badPort.connections = ["master_L": ["nocolon"]]
    #expect(throws: SessionError.self) { try badPort.validate() }
  }

  @Test("the error description names file, location, message and position")
  func errorDescription() {
    let error = SessionError(file: "Sessions/x.json", location: "stems[2].pan", line: 9, column: 5,
                             message: "must be a number between -1 and 1 (got 7)")
    #expect(error.description
            == "Sessions/x.json: stems[2].pan: must be a number between -1 and 1 (got 7) (line 9, column 5)")
    let whole = SessionError(file: "a.json", message: "no such file")
    #expect(whole.description == "a.json: no such file")
  }
}
