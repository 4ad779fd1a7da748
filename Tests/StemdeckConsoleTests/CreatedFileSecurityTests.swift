import CEditLine
import Foundation
@testable import StemdeckConsole
import StemdeckSession
import StemdeckTestSupport
import Testing

@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

#if canImport(Glibc)
import Glibc
#endif

// The REPL history and the autosave sidecar never follow a symbolic link planted in their place.

@Suite("History and autosave files: no symbolic link followed", .serialized)
struct ConsoleFileSecurityTests {
  @Test(
    "the history file: a symbolic link planted at it is replaced by the history (libedit's writer), the victim is untouched, the new file is private (0600)"
  )
  func historyDoesNotFollowLinks() throws {
    let folder = try TemporaryFolder()
    let victim = try folder.write("precious", to: "victim.txt")
    let history = folder.file("history")
    try #require(symlink(victim, history) == 0)
    using_history()
    clear_history()
    defer { clear_history() }
    add_history("vol drums 0.5")
    add_history("echo a\tb \\ \"c\" é")
    #expect(LineEditor.saveHistory(to: history) == nil)
    // A header line and one line per entry: what saveHistory checks before using the file.
    #expect(LineEditor.lineCount(history) == 3)
    #expect(FileFacts.bytes(victim) == Array("precious".utf8), "the victim was written through the planted link")
    #expect(FileFacts.kind(history) == S_IFREG)
    let text = String(decoding: FileFacts.bytes(history) ?? [], as: UTF8.self)
    #expect(text.contains("vol"), "history file: \(text)")
    #expect(text.hasPrefix("_HiStOrY_V2_"), "not libedit's history format: \(text)")
    // It holds every command and path typed: private, like a shell's history.
    let expected = 0o600 & ~(try FileFacts.umask())
    var info = stat()
    #expect(lstat(history, &info) == 0 && info.st_mode & 0o777 == expected, "mode \(String(info.st_mode & 0o777, radix: 8))")
    // And libedit reads it back.
    clear_history()
    #expect(read_history(history) == 0)
  }

  @Test("the autosave sidecar: a symbolic link planted at .NAME.autosave.json is replaced; the victim is untouched")
  func autosaveDoesNotFollowLinks() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let path = h.folder.file("song.json")
    #expect(h.run("save \(path)").ok)
    #expect(h.run("vol drums 0.3").ok)
    let side = Console.autosavePath(for: path)
    let victim = try h.folder.write("precious", to: "victim.txt")
    try #require(symlink(victim, side) == 0)
    h.console.lastAutosave = .distantPast
    h.console.periodic()
    #expect(FileFacts.bytes(victim) == Array("precious".utf8), "the victim was written through the planted link")
    #expect(FileFacts.kind(side) == S_IFREG)
    #expect(try SessionFile.load(path: side).stems.first?.volume == 0.3)
  }
}
