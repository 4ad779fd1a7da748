import Foundation
import StemdeckControl
import StemdeckSession
import Testing

@testable import StemdeckConsole
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

/// The stretch quality from the console (issue 25): `mode NAME stretch fine|fast`, its completion,
/// its help, and the `stems` table's T and F flags.
@Suite struct StretchQualityCommandTests {
  @Test("mode … stretch fast: completed, explained in help, flagged F in stems (T for fine), saved")
  func stretchQuality() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(Completion.candidates(console: h.console, words: ["mode", "drums", "stretch"], partial: "") == ["fast", "fine"])
    #expect(Completion.candidates(console: h.console, words: ["mode", "drums", "stretch"], partial: "fa") == ["fast"])
    let help = h.run("help mode")
    #expect(help.ok && help.output.contains { $0.contains("mode NAME|all varispeed|stretch [fine|fast]") }, "\(help.output)")
    #expect(help.output.contains { $0.contains("WSOLA") }, "\(help.output)")
    #expect(h.run("mode drums stretch fast").ok)
    #expect(h.run("mode bass stretch").ok)
    let table = h.run("stems").output
    let drums = table.first { $0.hasPrefix("drums") } ?? ""
    let bass = table.first { $0.hasPrefix("bass") } ?? ""
    #expect(drums.split(separator: " ").contains { $0.contains("F") && !$0.contains("T") }, "\(table)")
    #expect(bass.split(separator: " ").contains { $0.contains("T") && !$0.contains("F") }, "\(table)")
    #expect(try h.console.mixer.stems.status("drums").settings.stretch == .fast)
    #expect(try h.console.mixer.stems.status("bass").settings.stretch == .fine)
    // Back to varispeed and into stretch again: plain 'stretch' is fine (Rubber Band), as it always was.
    #expect(h.run("mode drums varispeed").ok)
    #expect(h.run("mode drums stretch").ok)
    #expect(try h.console.mixer.stems.status("drums").settings.stretch == .fine)
  }
}
