import Foundation
import Testing

@testable import StemdeckSession

/// The session file's strip keys come from the strip controls' table (StripParameter.swift): every
/// row a strip keeps (`field`) is written under its key for each kind that has it, and read back.
@Suite("session file: the strip controls' table drives the strip keys of stems, buses and inputs")
struct StripTableSessionTests {

  /// A value other than the default that the row's rule accepts.
  static func changed(_ control: StripParameter, in strip: inout StripSettings) {
    switch control.field {
    case .toggle(let keyPath)?: strip[keyPath: keyPath].toggle()
    case .number(let keyPath)?:
      let candidates = [0.5, -0.5, 0.25, 1.5]
      let value = candidates.first { $0 != strip[keyPath: keyPath] && (control.rule?.accepts($0) ?? true) } ?? 0.5
      strip[keyPath: keyPath] = value
    case nil: break
    }
  }

  @Test("each row with a field, changed alone on a stem, a bus and an input: written under its key and read back equal")
  func everyRowRoundTrips() throws {
    for control in StripParameter.all where control.field != nil {
      var session = Session()
      var bus = BusSettings(name: "band")
      var input = InputSettings(name: "mic", channels: .mono)
      var stem = StemSettings(name: "drums", file: "drums.flac")
      if control.kinds.contains(.bus) { Self.changed(control, in: &bus.strip) }
      if control.kinds.contains(.input) { Self.changed(control, in: &input.strip) }
      if control.kinds.contains(.stem) { Self.changed(control, in: &stem.strip) }
      session.buses = [bus]
      session.inputs = [input]
      session.stems = [stem]
      let text = SessionFile.encode(session)
      let back = try SessionFile.decode(Data(text.utf8), source: "table.json")
      #expect(back == session, "\(control.key): \(text)")
      for line in text.split(separator: "\n") where line.contains("\"name\" : ") {
        #expect(line.contains("\"\(control.key)\" : "), "\(control.key) missing from \(line)")
      }
    }
  }

  @Test("a row not always written (soloSafe) is left out at its kind's default, so older files stay byte for byte")
  func defaultsLeftOut() throws {
    var session = Session()
    session.buses = [BusSettings(name: "band")]
    session.inputs = [InputSettings(name: "mic", channels: .mono)]
    session.stems = [StemSettings(name: "drums", file: "drums.flac")]
    #expect(session.inputs[0].soloSafe && !session.stems[0].soloSafe && !session.buses[0].soloSafe)
    let text = SessionFile.encode(session)
    for control in StripParameter.all where !control.alwaysWritten {
      #expect(!text.contains("\"\(control.key)\""), "\(control.key) written at its default: \(text)")
    }
    #expect(try SessionFile.decode(Data(text.utf8), source: "defaults.json") == session)
  }

  @Test("a bad value under a row's key is refused at its path (stems[0].KEY, buses[0].KEY)")
  func refusalsByRow() {
    let documents = [
      ("stems[0]", #"{ "format" : "stemdeck-session", "version" : 3, "stems" : [ { "name" : "a", "file" : "a.wav", KEY } ] }"#),
      (
        "buses[0]",
        #"{ "format" : "stemdeck-session", "version" : 3, "buses" : [ { "name" : "b", KEY } ], "stems" : [ { "name" : "a", "file" : "a.wav" } ] }"#
      )
    ]
    for control in StripParameter.all where control.field != nil {
      for (path, template) in documents {
        let text = template.replacingOccurrences(of: "KEY", with: "\"\(control.key)\" : \"x\"")
        #expect(throws: SessionError.self, "\(control.key) at \(path)") {
          try SessionFile.decode(Data(text.utf8), source: "bad.json")
        }
        do {
          _ = try SessionFile.decode(Data(text.utf8), source: "bad.json")
        } catch {
          #expect(error.description.contains("\(path).\(control.key)"), "\(error)")
        }
      }
    }
  }
}
