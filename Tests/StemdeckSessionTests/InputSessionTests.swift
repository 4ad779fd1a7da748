import Foundation
import StemdeckTestSupport
import Testing
@testable import StemdeckSession

/// The optional "inputs" section (InputSettings.swift): live input strips, written only when a
/// session has some, checked like every other section.
@Suite("Session live inputs")
struct InputSessionTests {
  static func inputSession() -> Session {
    var session = Session()
    session.stems = [StemSettings(name: "drums", file: "drums.flac")]
    var mic = InputSettings(name: "mic", channels: .mono)
    mic.volume = 0.8
    mic.pan = -0.25
    mic.solo = true
    mic.eq.highPass = EQHighPass(frequency: 100, slope: 12)
    var keys = InputSettings(name: "keys", channels: .stereo)
    keys.mute = true
    session.inputs = [mic, keys]
    session.connections = ["mic_in": ["system:capture_1"], "keys_in_L": ["synth:out_1"]]
    return session
  }

  @Test("inputs round-trip, one per line after the stems, eq only when not flat; their ports' connections too")
  func roundTrip() throws {
    let session = Self.inputSession()
    let text = SessionFile.encode(session)
    #expect(
      text.contains(
        """
          "inputs" : [
            { "name" : "mic", "channels" : "mono", "volume" : 0.8, "pan" : -0.25, "mute" : false, "solo" : true, "eq" : { "hpf" : { "frequency" : 100, "slope" : 12 } } },
            { "name" : "keys", "channels" : "stereo", "volume" : 1, "pan" : 0, "mute" : true, "solo" : false }
          ]
        }
        """), "\(text)")
    #expect(try decode(text) == session)
    #expect(session.inputs.map(\.portNames) == [["mic_in"], ["keys_in_L", "keys_in_R"]])
    try session.validate()
  }

  @Test("a session without inputs writes no \"inputs\" (the demo layout is unchanged)")
  func absentWhenEmpty() throws {
    let session = try decode(demoLikeDocument)
    #expect(session.inputs.isEmpty)
    #expect(SessionFile.encode(session) == demoLikeDocument)
  }

  /// A document with `inputs` as given (stems: one named "drums").
  static func document(_ inputs: String) -> String {
    """
    { "format" : "stemdeck-session", "version" : 3,
      "stems" : [ { "name" : "drums", "file" : "drums.flac" } ],
      "inputs" : \(inputs) }
    """
  }

  @Test(
    "bad inputs are refused with the field, the value and what is allowed",
    arguments: [
      (#"{ "name" : "mic" }"#, "inputs", "must be an array of live inputs"),
      (#"[ { "channels" : "mono" } ]"#, "inputs[0].name", "is missing (every input needs a name and its channels"),
      (#"[ { "name" : "mic" } ]"#, "inputs[0].channels", "is missing (an input is \"mono\" or \"stereo\""),
      (#"[ { "name" : "mic", "channels" : "quad" } ]"#, "inputs[0].channels", "unknown input channels \"quad\" (allowed: mono, stereo)"),
      (#"[ { "name" : "mic", "channels" : 2 } ]"#, "inputs[0].channels", "must be one of mono, stereo (got 2)"),
      (#"[ { "name" : "mic", "channels" : "mono", "volume" : 3 } ]"#, "inputs[0].volume", "must be a number between 0 and 2"),
      (#"[ { "name" : "mic", "channels" : "mono", "pan" : -2 } ]"#, "inputs[0].pan", "a number between -1 and 1 (got -2)"),
      (#"[ { "name" : "mic", "channels" : "mono", "mute" : "yes" } ]"#, "inputs[0].mute", "must be true or false"),
      (
        #"[ { "name" : "mic", "channels" : "mono", "rate" : 1 } ]"#, "inputs[0].rate",
        "unknown field (allowed: name, channels, volume, pan, width, mute, solo, soloSafe, eq, bus, sends, directOut, inserts)"
      ),
      (#"[ { "name" : "mic", "channels" : "mono", "directOut" : 1 } ]"#, "inputs[0].directOut", "must be true or false"),
      (#"[ { "name" : "mic", "channels" : "mono", "eq" : { "low" : { "gain" : 30 } } } ]"#, "inputs[0].eq.low.gain", "(got 30)"),
      (
        #"[ { "name" : "mic", "channels" : "mono" }, { "name" : "mic", "channels" : "stereo" } ]"#, "inputs[1].name",
        "duplicate input name \"mic\" (also inputs[0])"
      ),
      (
        #"[ { "name" : "drums", "channels" : "mono" } ]"#, "inputs[0].name",
        "is also a stem's name; inputs and stems share one set of names"
      ),
      (#"[ { "name" : "midi", "channels" : "mono" } ]"#, "inputs[0].name", "midi_in is stemdeck's own port"),
      (#"[ { "name" : "master", "channels" : "mono" } ]"#, "inputs[0].name", "the input name \"master\" is reserved"),
      (#"[ { "name" : "all", "channels" : "mono" } ]"#, "inputs[0].name", "is reserved"),
      (#"[ { "name" : "a b", "channels" : "mono" } ]"#, "inputs[0].name", "invalid input name \"a b\""),
      (
        #"[ { "name" : "mic", "channels" : "mono", "bus" : "nope" } ]"#, "inputs[0].bus",
        "names no bus (got \"nope\"; there are no buses, or leave it out for the master)"
      ),
      (#"[ { "name" : "mic", "channels" : "mono", "bus" : 3 } ]"#, "inputs[0].bus", "must be the name of a bus in double quotes")
    ])
  func badInputs(inputs: String, location: String, message: String) {
    do {
      _ = try decode(Self.document(inputs))
      Issue.record("accepted \(inputs)")
    } catch {
      #expect(error.file == "test.json")
      #expect(error.location == location, "\(error)")
      #expect(error.message.contains(message), "\(error)")
      #expect(error.line != nil, "\(error)")
    }
  }

  @Test("an input's \"directOut\": written only when true, read back")
  func directOutField() throws {
    var session = Self.inputSession()
    session.inputs[1].directOut = true
    let text = SessionFile.encode(session)
    #expect(text.components(separatedBy: #""directOut" : true"#).count == 2, "\(text)")
    #expect(text.contains(#""name" : "keys""#) && text.contains(#""solo" : false, "directOut" : true }"#), "\(text)")
    #expect(try decode(text) == session)
    #expect(!SessionFile.encode(Self.inputSession()).contains("directOut"))
  }

  @Test("an input's \"bus\": written only when not the master, read back, checked against the buses")
  func busField() throws {
    var session = Self.inputSession()
    session.buses = [BusSettings(name: "vox_bus")]
    session.inputs[0].bus = "vox_bus"
    let text = SessionFile.encode(session)
    #expect(text.contains(#""solo" : true, "eq" : { "hpf" : { "frequency" : 100, "slope" : 12 } }, "bus" : "vox_bus" },"#), "\(text)")
    #expect(text.contains(#"{ "name" : "keys", "channels" : "stereo", "volume" : 1, "pan" : 0, "mute" : true, "solo" : false }"#))
    #expect(try decode(text) == session)
    // "master" is the same as leaving it out.
    let master = try decode(text.replacingOccurrences(of: #""bus" : "vox_bus" },"#, with: #""bus" : "master" },"#))
    #expect(master.inputs[0].bus == nil)
    // An unknown bus: the field, the value and the buses there are.
    do {
      _ = try decode(text.replacingOccurrences(of: #""bus" : "vox_bus" },"#, with: #""bus" : "vox" },"#))
      Issue.record("accepted an unknown bus")
    } catch {
      #expect(error.location == "inputs[0].bus", "\(error)")
      #expect(error.message == #"names no bus (got "vox"; the buses are 'vox_bus', or leave it out for the master)"#, "\(error)")
      #expect(error.line != nil)
    }
    var bad = session
    bad.inputs[1].bus = "nope"
    #expect(throws: SessionError.self) { try bad.validate() }
  }

  @Test("more inputs than the renderer's strips are refused")
  func tooMany() {
    let list = (0...InputSettings.maximumCount).map { #"{ "name" : "in\#($0)", "channels" : "mono" }"# }.joined(separator: ", ")
    do {
      _ = try decode(Self.document("[ \(list) ]"))
      Issue.record("accepted \(InputSettings.maximumCount + 1) inputs")
    } catch {
      #expect(error.location == "inputs")
      #expect(error.message == "has 33 inputs; at most 32", "\(error)")
    }
  }

  @Test("validate() holds inputs set in code to the same rules (save never writes a file that would not load)")
  func validateInputs() {
    var session = Self.inputSession()
    session.inputs[1].name = "drums"
    #expect(throws: SessionError.self) { try session.validate() }
    session = Self.inputSession()
    session.inputs[0].volume = .nan
    do {
      try session.validate()
      Issue.record("a NaN volume validated")
    } catch {
      #expect(error.location == "inputs[0].volume")
      #expect(error.message.contains("(got nan)"), "\(error)")
    }
  }
}
