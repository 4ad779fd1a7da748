import Foundation
import StemdeckControl
import StemdeckSession
import Testing

@testable import StemdeckConsole
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

/// `diff [FILE]` (issue 41): what the live mix changed from the saved session, as lines and as
/// the control socket's JSON; refusals name what is wrong; nothing is changed or saved.
@Suite struct DiffCommandTests {
  @Test("diff after save, after changes, against another file; no file yet and a bad file are refused; the socket's JSON")
  func diffLines() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let refused = h.run("diff")
    #expect(
      !refused.ok && refused.output == ["error: diff: this session has no file yet: give one to compare with (diff FILE), or save it first"]
    )
    let path = h.folder.file("song.json")
    #expect(h.run("save \(path)").ok)
    #expect(h.run("diff").output == ["no differences from \(path)"])
    #expect(h.run("vol drums 0.5; bus add band; route bass band; safe drums").ok)
    let lines = h.run("diff").output
    #expect(
      lines == ["drums volume 1 → 0.5", "drums soloSafe (default) → true", "bass bus master → band", "bus band added"],
      "\(lines)")
    // Nothing was saved or changed by it.
    #expect(h.mixer.isDirty)
    #expect(try SessionFile.load(path: path).buses.isEmpty)
    // Against another file: the saved one with the bus.
    let other = h.folder.file("other.json")
    #expect(h.run("save \(other)").ok)
    #expect(h.run("diff \(path)").output.count == 4)
    #expect(h.run("diff").output == ["no differences from \(other)"])
    let missing = h.run("diff \(h.folder.file("nope.json"))")
    #expect(!missing.ok && missing.output.joined().contains("nope.json"), "\(missing.output)")
    // The socket's reply data.
    #expect(h.run("vol bass -6dB").ok)
    let data = try #require(QueryJSON.data(for: "diff", [], h.console)?["diff"] as? [[String: Any]])
    #expect(data.count == 1)
    #expect(data.first?["subject"] as? String == "bass" && data.first?["field"] as? String == "volume")
    #expect(data.first?["from"] as? String == "0dB" && data.first?["to"] as? String == "-6dB", "\(data)")
  }

  @Test("quit with unsaved changes shows the diff's short form first (three changes, then how many more); a file-less session only refuses")
  func quitShowsShortDiff() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    h.console.interactive = true
    #expect(h.run("vol drums 0.5").ok)
    let refusal = "error: there are unsaved changes: 'save' them first, or use 'quit!' to discard them"
    #expect(h.run("quit") == (false, [refusal]))  // no file yet: nothing to compare with
    let path = h.folder.file("song.json")
    #expect(h.run("save \(path)").ok)
    #expect(h.run("vol drums 0.25; pan bass 0.3").ok)
    #expect(h.run("quit") == (false, ["unsaved: drums volume 0.5 → 0.25; bass pan 0 → 0.3", refusal]))
    #expect(h.run("bus add band; bus add verb; safe drums").ok)
    #expect(
      h.run("quit")
        == (
          false,
          [
            "unsaved: drums volume 0.5 → 0.25; drums soloSafe (default) → true; bass pan 0 → 0.3; and 2 more ('diff' lists them)",
            refusal
          ]
        ))
    #expect(!h.console.quitRequested)
    #expect(h.run("quit!").ok && h.console.quitRequested)
  }
}
