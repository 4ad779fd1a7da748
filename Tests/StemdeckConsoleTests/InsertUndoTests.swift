import Foundation
import StemdeckTestSupport
import Testing
@testable import StemdeckConsole
import StemdeckControl
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

/// Plugin inserts in undo and redo: each `insert` command is a step; undoing a value or a bypass
/// moves the running insert back in place, undoing an add or a remove rebuilds the strip's rack
/// (swh's amp, Debian swh-lv2).
@Suite struct InsertUndoTests {
  @Test("undo and redo step through insert add, set and bypass")
  func undoRedoInserts() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    for line in ["insert add drums http://plugin.org.uk/swh-plugins/amp", "insert set drums 1 gain -6", "insert bypass drums 1 on"] {
      #expect(h.run(line).ok, "\(line)")
    }
    func state() throws -> [String] {
      try h.mixer.inserts.list(of: "drums").map { "\($0.bypass ? "B" : "-") \(Int($0.values["gain"] ?? .nan))" }
    }
    #expect(try state() == ["B -6"])
    #expect(h.run("undo").ok)
    #expect(try state() == ["- -6"], "undo of the bypass")
    #expect(h.run("undo").ok)
    #expect(try state() == ["- 0"], "undo of the value (the plugin's default)")
    #expect(h.run("undo").ok)
    #expect(try state() == [], "undo of the add")
    #expect(h.run("redo").ok && h.run("redo").ok)
    #expect(try state() == ["- -6"], "redo of the add and the value")
    #expect(h.run("redo").ok)
    #expect(try state() == ["B -6"], "redo of the bypass")
  }
}
