import Foundation
import StemdeckTestSupport
import Testing
@testable import StemdeckSession

/// Session format version 3: buses (BusSettings.swift) and a stem's `"bus"`.
@Suite("Session buses")
struct BusSessionTests {
  static func busSession() -> Session {
    var session = Session()
    var drums = BusSettings(name: "drums_bus")
    drums.volume = 0.7
    drums.pan = -0.25
    drums.mute = true
    drums.directOut = true
    drums.eq.mid = EQBand(frequency: 2000, gain: -6, q: 1.2)
    drums.bus = "band"
    var band = BusSettings(name: "band")
    band.solo = true
    session.buses = [drums, band]
    var kick = StemSettings(name: "kick", file: "kick.flac")
    kick.bus = "drums_bus"
    session.stems = [kick, StemSettings(name: "bass", file: "bass.flac")]
    return session
  }

  @Test("buses and routes round-trip; a bus is one line, its directOut, eq and bus written only when used")
  func roundTrip() throws {
    let session = Self.busSession()
    let text = SessionFile.encode(session)
    #expect(
      text.contains(
        #"{ "name" : "drums_bus", "volume" : 0.7, "pan" : -0.25, "mute" : true, "solo" : false, "directOut" : true, "#
          + #""eq" : { "mid" : { "frequency" : 2000, "gain" : -6, "q" : 1.2 } }, "bus" : "band" },"#))
    #expect(text.contains(#"{ "name" : "band", "volume" : 1, "pan" : 0, "mute" : false, "solo" : true }"#))
    #expect(text.contains(#""solo" : false, "bus" : "drums_bus" },"#))
    #expect(
      text.contains(
        #"{ "name" : "bass", "file" : "bass.flac", "volume" : 1, "pan" : 0, "rate" : 1, "loops" : 0, "mute" : false, "solo" : false }"#))
    #expect(try decode(text) == session)
    try session.validate()
    // "master" as a destination is the same as none.
    let explicit = text.replacingOccurrences(of: #", "bus" : "band" },"#, with: #", "bus" : "master" },"#)
    #expect(try decode(explicit).buses[0].bus == nil)
  }

  @Test("a session without buses is written exactly as before (no buses, no bus keys)")
  func withoutBusesUnchanged() throws {
    let text = SessionFile.encode(EQSessionTests.eqSession())
    #expect(!text.contains("bus"))
    let demo = try SessionFile.load(path: repositoryRoot + "/Sessions/demo.json")
    #expect(Array(SessionFile.encode(demo).utf8) == contents(of: repositoryRoot + "/Sessions/demo.json"))
  }

  /// A document with `buses` (one per line from line 4) and the stems given.
  func busDocument(_ buses: [String], stems: [String] = [#"{ "name" : "kick", "file" : "k.flac" }"#]) -> String {
    document(top: ["\"buses\" : [\n    " + buses.joined(separator: ",\n    ") + "\n  ]"], stems: stems)
  }

  @Test("bad buses and routes are refused with the file, the field, the value and what is allowed")
  func badDocuments() {
    let cases: [(String, String, String)] = [
      (busDocument([#"{ "name" : "a b" }"#]), "buses[0].name", "invalid bus name \"a b\": a space is not allowed"),
      (busDocument([#"{ "name" : "master" }"#]), "buses[0].name", "the bus name \"master\" is reserved"),
      (busDocument([#"{ "name" : "all" }"#]), "buses[0].name", "the bus name \"all\" is reserved"),
      (busDocument([#"{ "volume" : 1 }"#]), "buses[0].name", "is missing (every bus needs a name)"),
      (busDocument([#"{ "name" : "x" }"#, #"{ "name" : "x" }"#]), "buses[1].name", "duplicate bus name 'x' (also buses[0])"),
      (busDocument([#"{ "name" : "kick" }"#]), "buses[0].name", "also the name of stems[0]; stems and buses need different names"),
      (busDocument([#"{ "name" : "x", "volume" : 3 }"#]), "buses[0].volume", "(got 3)"),
      (busDocument([#"{ "name" : "x", "pan" : -2 }"#]), "buses[0].pan", "must be a number between -1 and 1 (got -2)"),
      (busDocument([#"{ "name" : "x", "eq" : { "low" : { "gain" : 40 } } }"#]), "buses[0].eq.low.gain", "(got 40)"),
      (
        busDocument([#"{ "name" : "x", "rate" : 1 }"#]), "buses[0].rate",
        "unknown field (allowed: name, volume, pan, width, mute, solo, soloSafe, directOut, eq, bus, sends, inserts)"
      ),
      (
        busDocument([#"{ "name" : "x", "bus" : "y" }"#]), "buses[0].bus",
        "names no bus (got \"y\"; the buses are 'x', or leave it out for the master)"
      ),
      (busDocument([#"{ "name" : "x", "bus" : 3 }"#]), "buses[0].bus", "must be the name of a bus in double quotes"),
      (busDocument([#"{ "name" : "x", "bus" : "x" }"#]), "buses[0].bus", "makes a loop (x → x)"),
      (
        busDocument([#"{ "name" : "a", "bus" : "b" }"#, #"{ "name" : "b", "bus" : "c" }"#, #"{ "name" : "c", "bus" : "a" }"#]),
        "buses[0].bus", "makes a loop (a → b → c → a); a bus cannot feed itself"
      ),
      (
        busDocument([#"{ "name" : "x" }"#], stems: [#"{ "name" : "kick", "file" : "k.flac", "bus" : "drums" }"#]), "stems[0].bus",
        "names no bus (got \"drums\"; the buses are 'x'"
      ),
      (stemDocument(#""bus" : "drums""#), "stems[0].bus", "names no bus (got \"drums\"; there are no buses"),
      (document(top: [#""buses" : {}"#]), "buses", "must be an array of buses")
    ]
    for (text, location, fragment) in cases {
      do {
        _ = try decode(text)
        Issue.record("accepted \(text)")
      } catch {
        #expect(error.location == location, "\(text)")
        #expect(error.message.contains(fragment), "\(text): \(error.message)")
        #expect(error.file == "test.json")
      }
    }
    // The loop is reported at its line.
    do {
      _ = try decode(busDocument([#"{ "name" : "a", "bus" : "b" }"#, #"{ "name" : "b", "bus" : "a" }"#]))
    } catch {
      #expect(error.line == 5)
    }
    // More than the limit.
    let many = (0...BusSettings.maximumBuses).map { "{ \"name\" : \"b\($0)\" }" }
    do { _ = try decode(busDocument(many)) } catch {
      #expect(error.location == "buses" && error.message.contains("has 65 buses; at most 64"))
    }
    // Values set in code: validate() says the same.
    var session = Self.busSession()
    session.buses[1].bus = "drums_bus"
    do { try session.validate() } catch {
      #expect(error.location == "buses[0].bus")
      #expect(error.message.contains("makes a loop (drums_bus → band → drums_bus)"))
    }
  }

  @Test("a route loop in a file is refused and the file stays as it was")
  func loopFileUntouched() throws {
    let folder = try TemporaryFolder()
    let path = folder.file("loop.json")
    let text = busDocument([#"{ "name" : "a", "bus" : "b" }"#, #"{ "name" : "b", "bus" : "a" }"#])
    try write(text, to: path)
    #expect(throws: SessionError.self) { _ = try SessionFile.load(path: path) }
    do { _ = try SessionFile.load(path: path) } catch {
      #expect(error.description.contains(path))
      #expect(error.description.contains("a → b → a"))
    }
    #expect(contents(of: path) == Array(text.utf8))
  }
}
