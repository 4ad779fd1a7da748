import Foundation
import StemdeckTestSupport
import Testing
@testable import StemdeckSession

/// Session format version 2: the channel EQ of stems and the master (EQSettings.swift), and the
/// migration of version 1 files.
@Suite("Session EQ and format version 2")
struct EQSessionTests {
  /// Sessions/demo.json as version 1 wrote it (the encoder's layout before the EQ), byte for byte.
  static let version1Demo = """
    {
      "format" : "stemdeck-session",
      "version" : 1,
      "quality" : "fast",
      "master" : { "volume" : 0.9 },
      "options" : { "autoPauseOnDisconnect" : false, "meterPoint" : "post" },
      "stems" : [
        { "name" : "drums", "file" : "../Samples/drums.flac", "volume" : 0.8, "pan" : 0, "rate" : 1, "loops" : 3, "mute" : false, "solo" : false },
        { "name" : "bass", "file" : "../Samples/bass.flac", "volume" : 0.4, "pan" : 0, "rate" : 1, "loops" : 3, "mute" : false, "solo" : false },
        { "name" : "chords", "file" : "../Samples/chords.flac", "volume" : 0.45, "pan" : -0.2, "rate" : 1, "loops" : 3, "mute" : false, "solo" : false },
        { "name" : "lead", "file" : "../Samples/lead.flac", "volume" : 0.4, "pan" : 0.3, "rate" : 1, "loops" : 3, "mute" : false, "solo" : false },
        { "name" : "voice", "file" : "../Samples/voice.flac", "volume" : 0.9, "pan" : 0, "rate" : 1, "loops" : 3, "mute" : false, "solo" : false }
      ]
    }

    """

  @Test("a version 1 file opens (no EQ), saves as the current version (3) with every other byte kept, and opens again")
  func migratesVersion1() throws {
    let folder = try TemporaryFolder()
    let path = folder.file("old.json")
    try write(Self.version1Demo, to: path)
    let session = try SessionFile.load(path: path)
    #expect(session.stems.count == 5)
    #expect(session.stems.allSatisfy { $0.eq == EQSettings() })
    #expect(session.masterEQ == EQSettings())
    #expect(session.masterVolume == 0.9)
    try SessionFile.save(session, to: path)
    let saved = String(decoding: contents(of: path) ?? [], as: UTF8.self)
    #expect(saved == Self.version1Demo.replacingOccurrences(of: "\"version\" : 1,", with: "\"version\" : 3,"))
    #expect(try SessionFile.load(path: path) == session)
    // The repository's demo is that file, already saved as version 2.
    #expect(contents(of: repositoryRoot + "/Sessions/demo.json").map { String(decoding: $0, as: UTF8.self) } == saved)
  }

  @Test("a file from a newer stemdeck is refused by name, and the file is left as it was")
  func newerVersionRefused() throws {
    let folder = try TemporaryFolder()
    let path = folder.file("new.json")
    let text = Self.version1Demo.replacingOccurrences(of: "\"version\" : 1,", with: "\"version\" : 7,")
    try write(text, to: path)
    do {
      _ = try SessionFile.load(path: path)
      Issue.record("a version 7 file loaded")
    } catch {
      #expect(error.description.contains("made by a newer version of stemdeck (format 7; this one reads up to 3)"))
      #expect(error.description.contains(path))
    }
    #expect(contents(of: path) == Array(text.utf8))
  }

  static func eqSession() -> Session {
    var session = Session()
    var drums = StemSettings(name: "drums", file: "drums.flac")
    drums.eq.highPass = EQHighPass(frequency: 80, slope: 24)
    drums.eq.low = EQBand(frequency: 120, gain: 3)
    drums.eq.mid = EQBand(frequency: 1000, gain: -4, q: 1.4)
    drums.eq.high = EQBand(frequency: 8000, gain: 2)
    var bass = StemSettings(name: "bass", file: "bass.flac")
    bass.eq.enabled = false
    bass.eq.mid = EQBand(frequency: 250, gain: 6, q: 0.5)
    session.stems = [drums, bass, StemSettings(name: "keys", file: "keys.flac")]
    session.masterEQ.high = EQBand(frequency: 10000, gain: -1.5)
    return session
  }

  @Test("EQ round-trips; only what differs from flat is written, on the stem's line")
  func roundTrip() throws {
    let session = Self.eqSession()
    let text = SessionFile.encode(session)
    #expect(text.contains(#""version" : 3,"#))
    #expect(text.contains(#""master" : { "volume" : 1, "eq" : { "high" : { "frequency" : 10000, "gain" : -1.5 } } },"#))
    #expect(
      text.contains(
        #""solo" : false, "eq" : { "hpf" : { "frequency" : 80, "slope" : 24 }, "low" : { "frequency" : 120, "gain" : 3 }, "#
          + #""mid" : { "frequency" : 1000, "gain" : -4, "q" : 1.4 }, "high" : { "frequency" : 8000, "gain" : 2 } } },"#))
    #expect(text.contains(#""eq" : { "enabled" : false, "mid" : { "frequency" : 250, "gain" : 6, "q" : 0.5 } } },"#))
    #expect(
      text.contains(
        #"{ "name" : "keys", "file" : "keys.flac", "volume" : 1, "pan" : 0, "rate" : 1, "loops" : 0, "mute" : false, "solo" : false }"#))
    #expect(try decode(text) == session)
    try session.validate()
  }

  @Test("EQ values out of range are refused with the field path, the value and what is allowed")
  func badEQ() {
    let cases: [(String, String, String)] = [
      (#""eq" : { "hpf" : { "frequency" : 600 } }"#, "stems[0].eq.hpf.frequency", "must be a frequency in Hz from 20 to 500 (got 600)"),
      (#""eq" : { "hpf" : { "frequency" : 80, "slope" : 18 } }"#, "stems[0].eq.hpf.slope", "must be 12 or 24 (dB per octave) (got 18)"),
      (#""eq" : { "hpf" : { "slope" : 12 } }"#, "stems[0].eq.hpf.frequency", "is missing"),
      (#""eq" : { "low" : { "frequency" : 120, "gain" : 19 } }"#, "stems[0].eq.low.gain", "must be a gain in dB from -18 to 18 (got 19)"),
      (#""eq" : { "mid" : { "q" : 0 } }"#, "stems[0].eq.mid.q", "must be a Q from 0.1 to 10 (got 0)"),
      (
        #""eq" : { "high" : { "frequency" : 30000 } }"#, "stems[0].eq.high.frequency",
        "must be a frequency in Hz from 20 to 20000 (got 30000)"
      ),
      (#""eq" : { "high" : { "q" : 2 } }"#, "stems[0].eq.high.q", "unknown field (allowed: frequency, gain)"),
      (#""eq" : { "presence" : {} }"#, "stems[0].eq.presence", "unknown field (allowed: enabled, hpf, low, mid, high)"),
      (#""eq" : { "enabled" : "yes" }"#, "stems[0].eq.enabled", "(got \"yes\")"),
      (#""eq" : 3"#, "stems[0].eq", "must be an object")
    ]
    for (fields, location, fragment) in cases {
      do {
        _ = try decode(stemDocument(fields))
        Issue.record("accepted \(fields)")
      } catch {
        #expect(error.location == location, "\(fields)")
        #expect(error.message.contains(fragment), "\(fields): \(error.message)")
        #expect(error.file == "test.json")
      }
    }
    do {
      _ = try decode(document(top: [#""master" : { "volume" : 1, "eq" : { "mid" : { "gain" : -30 } } }"#]))
      Issue.record("accepted a master EQ gain of -30 dB")
    } catch {
      #expect(error.location == "master.eq.mid.gain")
      #expect(error.message.contains("must be a gain in dB from -18 to 18 (got -30)"))
    }
    // Values set in code: validate() names the same field.
    var session = Self.eqSession()
    session.stems[1].eq.mid.q = 11
    #expect(throws: SessionError.self) { try session.validate() }
    do { try session.validate() } catch {
      #expect(error.location == "stems[1].eq.mid.q")
      #expect(error.message.contains("must be a Q from 0.1 to 10 (got 11)"))
    }
  }
}
