import Foundation
import StemdeckTestSupport
import Testing
@testable import StemdeckLive

/// A plugin's state that names a file from elsewhere (convoLV2's impulse response, x42-plugins):
/// only writing the session copies it beside the session. `diff` and `quit`'s unsaved-changes
/// summary compare the session with its file without touching the disk. And `insert`'s strip
/// word: completed and refused as any strip, the master among them.
@Suite struct InsertStateFileTests {
  @Test("insert completes and names every strip, the master too")
  func stripWord() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(Completion.candidates(console: h.console, words: ["insert", "list"], partial: "ma") == ["master"])
    #expect(Completion.candidates(console: h.console, words: ["insert", "add"], partial: "") == ["bass", "drums", "master"])
    let refused = h.run("insert list mastr")
    #expect(!refused.ok)
    #expect(refused.output == ["error: unknown stem or bus 'mastr' — did you mean 'master'?"], "\(refused.output)")
    let unknown = h.run("insert list zzz").output
    #expect(unknown.first?.contains("master") == true, "the names it lists: \(unknown)")
  }

  static let convolver = "http://gareus.org/oss/lv2/convoLV2#Mono"

  @Test("diff and quit's summary name the impulse response's copy without making it; save makes it")
  func onlySavingCopies() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let elsewhere = try TemporaryFolder()
    let ir = try elsewhere.wav("room.wav", channels: 1, sampleRate: 48000, seconds: 0.01)
    let session = h.folder.file("show.json")
    let files = h.folder.file("show-files")
    #expect(h.run("save \(session)").ok)
    #expect(h.run("insert add master \(Self.convolver)").ok)
    #expect(h.run("insert set master 1 impulse \(ir)").ok)
    #expect(h.run("play").ok)
    h.render(blocks: 4)  // the patch:Set reaches the plugin; its work loads the file
    let diff = h.run("diff")
    #expect(diff.ok && diff.output.contains { $0.contains("insert") }, "\(diff.output)")
    let summary = h.console.unsavedSummary()  // what `quit` shows before refusing
    #expect(summary?.contains("insert") == true, "\(summary ?? "nil")")
    #expect(!FileManager.default.fileExists(atPath: files), "diff or quit copied the impulse response")
    #expect(h.run("save").ok)
    #expect(FileManager.default.contentsEqual(atPath: files + "/room.wav", andPath: ir), "save did not keep the impulse response")
    let text = try String(contentsOfFile: session, encoding: .utf8)
    #expect(text.contains("\"text\" : \"show-files/room.wav\""), "\(text)")
  }
}
