import Foundation
import Testing
@testable import StemdeckSession

/// Names whose JACK ports would be another part's (issue 43, item 11; PortNames.swift): a
/// session that has them is refused with the file, the field and the value, as are stem names
/// that are folders, hidden files or options, and a send named like a strip.
@Suite("Session port names")
struct PortNameSessionTests {
  /// A version-3 document with `sections` (JSON members, comma-separated).
  static func document(_ sections: String) -> String {
    #"{ "format" : "stemdeck-session", "version" : 3, "#
      + sections + " }"
  }

  static func stem(_ name: String, directOut: Bool = false) -> String {
    #"{ "name" : "\#(name)", "file" : "a.wav", "volume" : 1, "pan" : 0, "rate" : 1, "loops" : 0, "mute" : false, "solo" : false"#
      + (directOut ? #", "directOut" : true }"# : " }")
  }

  func refusal(_ text: String) -> SessionError? {
    do { _ = try decode(text) } catch { return error }
    return nil
  }

  @Test(
    "a stem with direct outs named like a send's or an input's ports, a send named like a strip: refused naming the file, the field, the value and the other part; without direct outs the same names load"
  )
  func clashes() throws {
    let cases: [(sections: String, location: String, words: [String])] = [
      (
        #""stems" : [ \#(Self.stem("verb_return", directOut: true)) ], "sends" : [ { "name" : "verb" } ]"#,
        "sends[0].name", ["\"verb\"", "verb_return_L", "stem 'verb_return'", "stems[0]"]
      ),
      (
        #""stems" : [ \#(Self.stem("verb_send", directOut: true)) ], "sends" : [ { "name" : "verb" } ]"#,
        "sends[0].name", ["verb_send_L", "stem 'verb_send'"]
      ),
      (
        #""stems" : [ \#(Self.stem("keys_in", directOut: true)) ], "inputs" : [ { "name" : "keys", "channels" : "stereo" } ]"#,
        "inputs[0].name", ["\"keys\"", "keys_in_L", "stem 'keys_in'"]
      ),
      (
        #""buses" : [ { "name" : "verb_return", "directOut" : true } ], "sends" : [ { "name" : "verb" } ]"#,
        "sends[0].name", ["bus 'verb_return'"]
      ),
      (
        #""stems" : [ \#(Self.stem("drums")) ], "sends" : [ { "name" : "drums" } ]"#,
        "sends[0].name", ["\"drums\"", "stems[0]", "different names"]
      )
    ]
    for c in cases {
      let error = refusal(Self.document(c.sections))
      #expect(error?.file == "test.json" && error?.location == c.location && error?.line != nil, "\(String(describing: error))")
      let text = error?.description ?? ""
      #expect(c.words.allSatisfy { text.contains($0) }, "\(text)")
    }
    // No direct outs: no ports of those names, nothing clashes.
    let plain = try decode(Self.document(#""stems" : [ \#(Self.stem("verb_return")) ], "sends" : [ { "name" : "verb" } ]"#))
    #expect(plain.stems.map(\.name) == ["verb_return"] && plain.sends.map(\.name) == ["verb"])
    // Saving checks the same (a saved file always loads again).
    var session = plain
    session.stems[0].directOut = true
    #expect(throws: SessionError.self) { try session.validate(source: "s.json") }
  }

  @Test("stem names '.', '..', '-' and others starting with '.' or '-' are refused with the reason")
  func dotAndDashNames() {
    for name in [".", "..", "-", ".hidden", "-x"] {
      let error = refusal(Self.document(#""stems" : [ \#(Self.stem(name)) ]"#))
      #expect(error?.location == "stems[0].name", "\(name): \(String(describing: error))")
      #expect(error?.message.contains("may not start with '\(name.first!)'") == true, "\(String(describing: error))")
      #expect(NameRules.stemProblem(name) != nil && NameRules.busProblem(name) != nil && InputSettings.nameProblem(name) != nil)
    }
    #expect(NameRules.stemProblem("a.b-c") == nil && NameRules.stemProblem("_x") == nil)
  }
}
