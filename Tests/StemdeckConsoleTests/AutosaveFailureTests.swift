import Foundation
@testable import StemdeckConsole
import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import Testing

@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

#if canImport(Glibc)
import Glibc
#endif

// Issue 16: a periodic autosave that cannot be written (here a folder planted at the sidecar's
// name; a read-only or full file system in IntegrationTests/ReadOnlyFileSystemTests) says so in an
// event line each time it tries, names the file, and keeps the changes unsaved in memory. Before,
// the failure was silently dropped (`try?`), also while a setlist played.
@Suite("Autosave failures are said (issue 16)")
struct AutosaveFailureTests {
  @Test("a failing periodic autosave gives an event line naming the sidecar, once per attempt; the session stays as it is")
  func failureIsReported() throws {
    let (h, path, side) = try AutosaveTests.harness()
    defer { h.shutdown() }
    try FileManager.default.createDirectory(atPath: side, withIntermediateDirectories: false)
    let before = MixerSnapshot(h)
    h.console.lastAutosave = .distantPast
    let lines = h.idle()
    #expect(lines == ["autosave failed: \(side): is a directory; cannot save a session over it; the changes are still unsaved"], "\(lines)")
    #expect(MixerSnapshot(h) == before && h.mixer.isDirty)
    #expect(h.idle().isEmpty, "the next attempt waits for the interval")
    h.console.lastAutosave = .distantPast
    #expect(h.idle().count == 1, "said again at the next attempt")
    #expect(FileFacts.kind(side) == S_IFDIR)
    #expect(try SessionFile.load(path: path).stems.first?.volume == 1)
  }

  @Test("while a setlist plays: a song's autosave that fails is said too")
  func setlistSongAutosave() throws {
    let h = try SetlistTests.harness()
    defer { h.shutdown() }
    #expect(h.run("setlist \(h.folder.file("show.txt"))").ok)
    #expect(h.run("vol kick 0.4").ok)
    try FileManager.default.createDirectory(atPath: h.folder.file(".song1.json.autosave.json"), withIntermediateDirectories: false)
    h.console.lastAutosave = .distantPast
    let lines = h.idle()
    #expect(lines.count == 1 && lines[0].hasPrefix("autosave failed: ") && lines[0].contains(".song1.json.autosave.json"), "\(lines)")
  }

}
