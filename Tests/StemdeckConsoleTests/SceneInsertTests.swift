import Foundation
import StemdeckControl
import StemdeckSession
import Testing

@testable import StemdeckConsole
@testable import StemdeckLive

/// Plugin inserts in scenes (issue 39): a scene keeps every strip's inserts' bypass and values
/// (the master's too) and a recall sets them back where the strip has the same plugin at the same
/// position; `--only` scopes them; saved and read back; a value the plugin would refuse refuses
/// the recall whole (swh's amp: gain −70…70 dB; a real plugin).
@Suite struct SceneInsertTests {
  static let amp = "http://plugin.org.uk/swh-plugins/amp"

  @Test("scene save keeps insert values and bypass; recall restores them; --only scopes them; saved and opened again")
  func insertsRecalled() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    for line in ["insert add drums \(Self.amp)", "insert set drums 1 gain -6", "insert add master \(Self.amp)", "scene save a"] {
      #expect(h.run(line).ok, "\(line)")
    }
    func drums() throws -> (Bool, Double?) {
      let x = try h.mixer.inserts.list(of: "drums")[0]
      return (x.bypass, x.values["gain"])
    }
    for line in ["insert set drums 1 gain -20", "insert bypass drums 1 on", "insert set master 1 gain 3", "vol bass -3dB"] {
      #expect(h.run(line).ok, "\(line)")
    }
    #expect(h.run("scene recall a --only vol").ok)
    #expect(try drums() == (true, -20), "--only vol leaves the inserts")
    #expect(h.run("scene recall a --only inserts").output == ["recalled 'a': 2 strips changed (drums, master)"])
    #expect(try drums() == (false, -6))
    #expect(try h.mixer.inserts.list(of: "master")[0].values["gain"] == 0)
    #expect(h.run("undo").ok)
    #expect(try drums() == (true, -20), "one undo step takes the recall back")

    let path = h.folder.file("scenes.json")
    #expect(h.run("save \(path)").ok)
    let text = try String(contentsOfFile: path, encoding: .utf8)
    #expect(text.contains("\"name\" : \"drums\"") && text.contains("\"values\" : { \"gain\" : -6 }"), "\(text)")
    let scene = try #require(try SessionFile.load(path: path).scenes.first)
    #expect(scene.stems.first?.strip.inserts == [InsertSettings(uri: Self.amp, values: [InsertValue(symbol: "gain", value: -6)])])
    #expect(scene.masterInserts.first?.values == [InsertValue(symbol: "gain", value: 0)])
    #expect(h.run("open! \(path)").ok)
    #expect(h.run("scene recall a").ok)
    #expect(try drums() == (false, -6), "read back from the file and recalled")
  }

  @Test("a scene never adds or replaces a plugin; a value out of the port's range refuses the recall, nothing changed")
  func recallRefusal() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let path = h.folder.file("bad-scene.json")
    #expect(h.run("insert add drums \(Self.amp); insert set drums 1 gain -6; scene save a; save \(path)").ok)
    var text = try String(contentsOfFile: path, encoding: .utf8)
    text = text.replacingOccurrences(of: "\"values\" : { \"gain\" : -6 }", with: "\"values\" : { \"gain\" : 99 }")
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    #expect(h.run("open! \(path)").ok)
    #expect(h.run("vol drums -12dB").ok)
    let plugin = try h.mixer.inserts.list(of: "drums")[0].name ?? ""
    let r = h.run("scene recall a")
    let refusal = "error: scene 'a': insert 1 of 'drums' (\(plugin)) gain must be from -70 to 70 (got 99); nothing was recalled"
    #expect(!r.ok && r.output.contains(refusal), "\(r.output)")
    #expect(abs(Decibels.fromAmplitude(h.mixer.stems.statuses()[0].settings.volume) + 12) < 1e-6, "the volume too stayed")
    // Another plugin in that place: left as it is.
    #expect(h.run("insert remove drums 1; insert add drums http://plugin.org.uk/swh-plugins/lowpass_iir").ok)
    let before = try h.mixer.inserts.list(of: "drums")
    #expect(h.run("scene recall a").ok)
    #expect(try h.mixer.inserts.list(of: "drums") == before)
  }
}
