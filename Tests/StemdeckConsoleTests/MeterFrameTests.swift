// The pushed meter frame written by hand (MeterFrame.swift) says what the dictionary form
// (`RemotePush.meters`) says: every strip kind, silence as null, names escaped.
import Foundation
@testable import StemdeckConsole
import Testing
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

@Suite("pushed meter frames")
struct MeterFrameTests {
  @Test("the written frame parses to the dictionary frame, with push and dropped; bus, input and return included")
  func writtenEqualsDictionary() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("send add verb; send drums verb -6dB; bus add band; input add mic mono; route bass band; play").ok)
    h.render(blocks: 20)  // levels that are numbers, and silence (null) on the input and the return
    let written = MeterFrame(h.mixer).json(dropped: 3)
    let parsed = try #require(try JSONSerialization.jsonObject(with: Data(written.utf8)) as? [String: Any], "\(written)")
    var expected = RemotePush.meters(h.mixer)
    expected["push"] = "meters"
    expected["dropped"] = 3
    // Compared as JSON values: the dictionary frame through Foundation's encoder and back.
    let reference = try #require(
      try JSONSerialization.jsonObject(with: Data(ControlServer.encode(expected).utf8)) as? [String: Any])
    #expect(NSDictionary(dictionary: parsed).isEqual(to: reference), "written \(written)\nexpected \(reference)")
    let drums = ((parsed["stems"] as? [String: Any])?["drums"] as? [String: Any])?["peak"] as? [Any]
    #expect(drums?.first is Double, "the drums play: a level, not silence: \(written)")
    for key in ["buses", "inputs", "returns", "stems", "master"] { #expect(parsed[key] != nil, "\(key): \(written)") }
    // The keys come sorted, as the socket's other lines.
    #expect(written.hasPrefix("{\"buses\":{\"band\":{\"clips\":["), "\(written)")
  }

  @Test("names are escaped as the socket escapes them; numbers are JSON numbers")
  func escaping() throws {
    for name in ["plain", "a \"quoted\" name", "back\\slash", "tab\there", "line\u{2028}sep", "del\u{7F}", "é ünï 🎸"] {
      var out = ""
      MeterFrame.string(name, into: &out)
      let back = try JSONSerialization.jsonObject(with: Data("[\(out)]".utf8)) as? [String]
      #expect(back == [name], "\(out)")
      #expect(!out.unicodeScalars.contains { (0x2028...0x202E).contains($0.value) || $0.value == 0x7F }, "\(out)")
    }
    #expect(MeterFrame.number(-9.03) == "-9.03" && MeterFrame.number(-12) == "-12" && MeterFrame.number(0.125) == "0.125")
    #expect(MeterFrame.number(.nan) == "null")
  }
}
