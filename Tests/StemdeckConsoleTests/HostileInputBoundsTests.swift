import Foundation
@testable import StemdeckControl
import StemdeckText
import Testing
@testable import StemdeckConsole
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

// Bounds on what hostile input can cost (issue 16, item 14).

@Suite struct HostileInputBoundsTests {
  @Test func aMegabyteUnknownCommandWordIsAnsweredAtOnce() throws {
    // The "did you mean" search built a word-length × name-length table per command name:
    // 1 MB took 22 s (3 MB 68 s and 633 MB).
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    // Now no table is built for a word that long: it is answered at once (a bound on the work
    // done, not a timing, so that it holds on a loaded machine).
    let word = String(repeating: "q", count: 1 << 20)
    #expect(Suggestion.worthComparing(word, CommandTable.allNames).candidates.isEmpty)
    let result = h.run(word)
    #expect(!result.ok)
    #expect(result.output.count == 1 && result.output[0].hasPrefix("error: unknown command 'qqq"), "\(result.output.map { $0.prefix(80) })")
  }

  @Test func longWordsCloseToALongNameAreStillSuggested() {
    let name = String(repeating: "ab", count: 100)
    #expect(Suggestion.closest(to: String(name.dropLast()), in: ["play", name]) == name)
    #expect(Suggestion.closest(to: "paly", in: ["play", "pause"]) == "play")
    #expect(Suggestion.worthComparing("paly", ["play", "pause", "go"]) == (["play", "pause"], 1))
    #expect(Suggestion.closest(to: String(repeating: "x", count: 4 << 20), in: ["play", name]) == nil)
  }
}
