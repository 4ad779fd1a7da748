import Foundation
import StemdeckTestSupport
import Testing
@testable import StemdeckSession

#if canImport(Glibc)
import Glibc
#endif

// Files stemdeck creates must never follow a symbolic link planted in their place, and are
// created with the user's umask. Here: session backups (FILE.bak) and files replaced through
// `AtomicFile` (the REPL history's writer). Autosave, history and takes are tested with the
// console and the mixer.

@Suite("Created files: no symbolic link followed, the user's umask")
struct CreatedFileSecurityTests {
  @Test("a symbolic link planted at FILE.bak is replaced by the backup; the file it points to is untouched")
  func plantedBackupLink() throws {
    let folder = try TemporaryFolder()
    let path = folder.file("song.json"), victim = folder.file("victim.txt")
    try write("precious", to: victim)
    var first = Session()
    first.stems = [StemSettings(name: "one", file: "one.wav")]
    try SessionFile.save(first, to: path)
    try #require(symlink(victim, path + ".bak") == 0)
    try SessionFile.save(Session(), to: path)
    #expect(contents(of: victim) == Array("precious".utf8), "the victim was written through the planted link")
    #expect(FileFacts.kind(path + ".bak") == S_IFREG)
    #expect(try SessionFile.load(path: path + ".bak") == first, "the backup is the previous version")
    #expect(try SessionFile.load(path: path) == Session())
  }

  @Test("a dangling symbolic link planted at FILE.bak does not make stemdeck create its target")
  func plantedDanglingBackupLink() throws {
    let folder = try TemporaryFolder()
    let path = folder.file("song.json"), target = folder.file("created-by-the-link.txt")
    try SessionFile.save(Session(), to: path)
    try #require(symlink(target, path + ".bak") == 0)
    try SessionFile.save(Session(), to: path)
    #expect(FileFacts.kind(target) == nil, "the link's target was created")
    #expect(FileFacts.kind(path + ".bak") == S_IFREG)
  }

  @Test("a new session file and its backup get 0666 minus the umask")
  func newFilesFollowTheUmask() throws {
    let folder = try TemporaryFolder()
    let path = folder.file("song.json")
    try SessionFile.save(Session(), to: path)
    let expected = 0o666 & ~(try FileFacts.umask())
    #expect(
      FileFacts.permissions(path) == expected,
      "got \(String(FileFacts.permissions(path) ?? 0, radix: 8)), umask gives \(String(expected, radix: 8))")
    try SessionFile.save(Session(), to: path)
    #expect(FileFacts.permissions(path + ".bak") == expected)
  }

  @Test("AtomicFile.replace: a planted symbolic link is replaced, not followed; the writer never sees the final path")
  func atomicReplaceDoesNotFollow() throws {
    let folder = try TemporaryFolder()
    let path = folder.file("history"), victim = folder.file("victim.txt")
    try write("precious", to: victim)
    try #require(symlink(victim, path) == 0)
    var handed: [String] = []
    // The writer behaves like libedit's write_history: fopen(path, "w"), which follows links.
    try AtomicFile.replace(path) { temporary in
      handed.append(temporary)
      guard let f = fopen(temporary, "w") else { return false }
      fputs("new content\n", f)
      return fclose(f) == 0
    }
    #expect(contents(of: victim) == Array("precious".utf8))
    #expect(FileFacts.kind(path) == S_IFREG)
    #expect(contents(of: path) == Array("new content\n".utf8))
    #expect(handed.count == 1 && handed[0] != path, "the writer was handed \(handed)")
    #expect(FileFacts.permissions(path) == 0o666 & ~(try FileFacts.umask()))
    #expect(folder.entries() == ["history", "victim.txt"], "temporary folder left behind: \(folder.entries())")
  }

  @Test("AtomicFile.replace keeps the permission bits of the file it replaces, and reports a failed writer")
  func atomicReplaceKeepsModeAndReportsFailure() throws {
    let folder = try TemporaryFolder()
    let path = folder.file("history")
    try write("old", to: path)
    try #require(chmod(path, 0o600) == 0)
    try AtomicFile.replace(path) { temporary in
      FileManager.default.createFile(atPath: temporary, contents: Data("new".utf8))
    }
    #expect(FileFacts.permissions(path) == 0o600)
    #expect(contents(of: path) == Array("new".utf8))
    do {
      try AtomicFile.replace(path) { _ in false }
      Issue.record("expected an error")
    } catch {
      #expect(error.file == path)
      #expect(error.message.hasPrefix("cannot write "), "\(error.message)")
    }
    #expect(contents(of: path) == Array("new".utf8), "a failed write must leave the file alone")
    #expect(folder.entries() == ["history"])
  }

  @Test("AtomicFile.replace creates a new private file (newMode 0600, as the REPL history is) with exactly that mode")
  func atomicReplaceNewPrivateFile() throws {
    let folder = try TemporaryFolder()
    let path = folder.file("history")
    try AtomicFile.replace(path, newMode: 0o600) { temporary in
      FileManager.default.createFile(atPath: temporary, contents: Data("ls\n".utf8))
    }
    #expect(FileFacts.permissions(path) == 0o600)
    // A file the user made readable stays so.
    try #require(chmod(path, 0o644) == 0)
    try AtomicFile.replace(path, newMode: 0o600) { temporary in
      FileManager.default.createFile(atPath: temporary, contents: Data("ls\nplay\n".utf8))
    }
    #expect(FileFacts.permissions(path) == 0o644)
    #expect(contents(of: path) == Array("ls\nplay\n".utf8))
  }
}
