import Foundation
import StemdeckControl
import StemdeckText
import Testing
@testable import StemdeckConsole
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

/// A session saved after its song ended (soundcheck to the end, `save`) opens at the top, and
/// says so: it used to reopen at its end, and `--play`, `play` and OSC then played nothing
/// (issue 35, item 4).
@Suite("a session saved at its end")
struct OpenAtEndTests {
  @Test("saved at or past the end: opens at 0:00 with a warning; saved inside the song: opens where it was, no warning")
  func savedAtTheEndOpensAtTheTop() throws {
    let h = try ConsoleHarness.withStems()  // drums 2 s, bass 1 s, no loops: the song ends at 2 s
    defer { h.shutdown() }
    let path = h.folder.file("song.json")
    #expect(h.run("save \(path)").ok)
    for (saved, opensAt, warns) in [(2.0, 0.0, true), (7.5, 0.0, true), (1.5, 1.5, false), (0.0, 0.0, false)] {
      let text = try String(contentsOfFile: path, encoding: .utf8)
      var json = try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
      json["position"] = saved
      try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: path))
      let (ok, output) = h.run("open! \(path)")
      #expect(ok, "\(output)")
      #expect(abs(h.mixer.transport.position - opensAt) < 0.001, "saved at \(saved): opened at \(h.mixer.transport.position)")
      let warning = output.first { $0.hasPrefix("warning:") }
      if warns {
        #expect(
          warning
            == "warning: \(path): position: saved at \(NumberFormat.time(saved)), at or past the end of the song (0:02.000): opened at the top",
          "\(output)")
      } else {
        #expect(warning == nil, "\(output)")
      }
      #expect(!h.mixer.isDirty, "opening at the top is not an unsaved change")
    }
  }
}
