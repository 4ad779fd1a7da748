import Foundation
import StemdeckControl
import Testing

@testable import StemdeckConsole
@testable import StemdeckLive
@testable import StemdeckMixerView

/// Plugin inserts in the mixer view (issue 39): a strip with inserts is flagged X (x when all are
/// bypassed), the status line names them, and `x` switches the strip's whole chain out and in
/// again in one step, undoable (swh's amp, Debian swh-lv2; a real plugin).
@Suite struct MixerViewInsertTests {
  static let amp = "http://plugin.org.uk/swh-plugins/amp"

  @Test("X, the status line's inserts, and x: the chain out, in again, undone; a strip without inserts refuses")
  func insertSwitch() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    for line in [
      "insert add drums \(Self.amp)", "insert add drums \(Self.amp)", "insert bypass drums 2 on", "insert add master \(Self.amp)"
    ] {
      #expect(h.run(line).ok, "\(line)")
    }
    var model = MixerViewModel.make(h.console)
    let drums = model.strips[0]
    #expect(drums.inserts.map(\.bypassed) == [false, true])
    #expect(drums.flags.text.contains("X") && !drums.flags.text.contains("x"), "\(drums.flags.text)")
    #expect(model.strips[1].inserts.isEmpty && !model.strips[1].flags.text.lowercased().contains("x"))
    #expect(model.master.flags.contains(.inserts))
    var state = MixerViewState()
    let canvas = MixerScreen.draw(model, &state, columns: 120, rows: 30, unicode: true)
    let name = drums.inserts[0].name
    #expect(!name.isEmpty && canvas.lines[28].contains("inserts: \(name), \(name) (out)"), "\(canvas.lines[28])")

    let view = MixerView(console: h.console)
    view.handle(.character("x"))
    #expect(try h.mixer.inserts.list(of: "drums").map(\.bypass) == [true, true])
    #expect(view.state.status == "drums inserts out (all 2 bypassed)" && !view.state.statusIsError, "\(view.state.status)")
    model = MixerViewModel.make(h.console)
    #expect(model.strips[0].flags.text.contains("x") && !model.strips[0].flags.text.contains("X"))
    view.handle(.character("x"))
    #expect(try h.mixer.inserts.list(of: "drums").map(\.bypass) == [false, false], "all in again, the one bypassed before too")
    view.handle(.character("u"))
    #expect(try h.mixer.inserts.list(of: "drums").map(\.bypass) == [true, true], "u undoes the switch in one step")
    view.handle(.character("u"))
    #expect(try h.mixer.inserts.list(of: "drums").map(\.bypass) == [false, true], "and the one before it")

    view.handle(.right)
    view.handle(.character("x"))
    #expect(view.state.statusIsError && view.state.status.contains("bass has no inserts"), "\(view.state.status)")
    // The master: the last strip.
    for _ in 0..<5 { view.handle(.right) }
    view.handle(.character("x"))
    #expect(try h.mixer.inserts.list(of: "master").map(\.bypass) == [true])
  }
}
