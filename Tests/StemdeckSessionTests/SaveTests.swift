import Foundation
import StemdeckTestSupport
import Testing
@testable import StemdeckSession

#if canImport(Glibc)
import Glibc
#endif

@Suite("Saving files")
struct SaveTests {
  private func twoSessions() -> (Session, Session) {
    let first = everythingSession()
    var second = Session()
    second.stems = [StemSettings(name: "only", file: "only.wav")]
    return (first, second)
  }

  private func fileType(_ path: String) -> mode_t? {
    var info = stat()
    return lstat(path, &info) == 0 ? info.st_mode & S_IFMT : nil
  }

  @Test("save writes the encoded text, which loads back equal; no temporary files remain")
  func writesAndReloads() throws {
    let folder = try TemporaryFolder()
    let path = folder.file("song.json")
    let session = everythingSession()
    try SessionFile.save(session, to: path)
    #expect(contents(of: path) == Array(SessionFile.encode(session).utf8))
    #expect(try SessionFile.load(path: path) == session)
    #expect(folder.entries() == ["song.json"])
  }

  @Test("a second save keeps the first version as .bak, a third replaces the .bak")
  func backup() throws {
    let folder = try TemporaryFolder()
    let path = folder.file("song.json")
    let (first, second) = twoSessions()
    try SessionFile.save(first, to: path)
    let firstBytes = try #require(contents(of: path))
    try SessionFile.save(second, to: path)
    #expect(contents(of: path + ".bak") == firstBytes)
    #expect(try SessionFile.load(path: path + ".bak") == first)
    #expect(try SessionFile.load(path: path) == second)

    var third = second
    third.masterVolume = 0.5
    try SessionFile.save(third, to: path)
    #expect(try SessionFile.load(path: path + ".bak") == second)
    #expect(try SessionFile.load(path: path) == third)
    #expect(folder.entries() == ["song.json", "song.json.bak"])
  }

  /// A save killed after it linked the backup but before it renamed the new file in leaves
  /// `song.json.bak` and `song.json` as two names of one file. rename() between two links of one
  /// file does nothing and reports success, so the next save must not leave its backup link behind.
  @Test("a save after one killed half-way (the .bak is a hard link to the session) leaves no temporary link")
  func backupAlreadyLinked() throws {
    let folder = try TemporaryFolder()
    let path = folder.file("song.json")
    let (first, second) = twoSessions()
    try SessionFile.save(first, to: path)
    let firstBytes = try #require(contents(of: path))
    try #require(link(path, path + ".bak") == 0)
    try SessionFile.save(second, to: path)
    #expect(folder.entries() == ["song.json", "song.json.bak"])
    #expect(contents(of: path + ".bak") == firstBytes)
    #expect(try SessionFile.load(path: path) == second)
  }

  @Test("saving into a folder that does not exist fails clearly and creates nothing")
  func missingFolder() throws {
    let folder = try TemporaryFolder()
    let path = folder.file("missing/song.json")
    #expect(throws: SessionError(file: path, message: "cannot save: the folder \"\(folder.path)/missing\" does not exist")) {
      try SessionFile.save(Session(), to: path)
    }
    #expect(folder.entries().isEmpty)
  }

  @Test("saving over a directory fails")
  func overDirectory() throws {
    let folder = try TemporaryFolder()
    try FileManager.default.createDirectory(atPath: folder.file("dir.json"), withIntermediateDirectories: false)
    do {
      try SessionFile.save(Session(), to: folder.file("dir.json"))
      Issue.record("expected an error")
    } catch {
      #expect(error.message.contains("is a directory"))
    }
    #expect(throws: SessionError.self) { try SessionFile.save(Session(), to: folder.path + "/") }
    #expect(folder.entries() == ["dir.json"])
  }

  @Test("an invalid session is not written, and the existing file stays")
  func invalidSessionNotWritten() throws {
    let folder = try TemporaryFolder()
    let path = folder.file("song.json")
    try SessionFile.save(Session(), to: path)
    let before = contents(of: path)
    var bad = Session()
    bad.stems = [StemSettings(name: "x", file: "x.wav")]
    bad.stems[0].pan = 7
    #expect(
      throws: SessionError(
        file: path, location: "stems[0].pan",
        message: "must be a number between -1 and 1 (got 7)")
    ) {
      try SessionFile.save(bad, to: path)
    }
    #expect(contents(of: path) == before)
    #expect(folder.entries() == ["song.json"])
  }

  @Test("saving over a symbolic link replaces the link, not the file it points to")
  func symlinkTarget() throws {
    let folder = try TemporaryFolder()
    let real = folder.file("real.json")
    let link = folder.file("link.json")
    let (first, second) = twoSessions()
    try SessionFile.save(first, to: real)
    let realBytes = contents(of: real)
    try #require(symlink(real, link) == 0)

    try SessionFile.save(second, to: link)
    #expect(fileType(link) == S_IFREG)
    #expect(try SessionFile.load(path: link) == second)
    #expect(contents(of: real) == realBytes)
    // The backup is the old link itself.
    #expect(fileType(link + ".bak") == S_IFLNK)
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link + ".bak") == real)
    #expect(folder.entries() == ["link.json", "link.json.bak", "real.json"])
  }

  @Test("a symbolic link planted at the temporary name is neither followed nor overwritten")
  func plantedSymlinkAtTemporaryName() throws {
    let folder = try TemporaryFolder()
    let path = folder.file("song.json")
    let victim = folder.file("victim.txt")
    try write("precious", to: victim)
    let planted = ".song.json.tmp-planted"
    try #require(symlink(victim, folder.file(planted)) == 0)
    let plantedBackup = ".song.json.bak.tmp-planted"
    try #require(symlink(victim, folder.file(plantedBackup)) == 0)
    try SessionFile.save(Session(), to: path)  // so that the next save makes a backup

    // The first name offered for each temporary file is the planted one; the writer must skip it.
    let names = NameSequence()
    try FileAccess.writeAtomically(
      Array(SessionFile.encode(everythingSession()).utf8), to: path,
      temporaryName: names.next)
    #expect(contents(of: victim) == Array("precious".utf8))
    #expect(try SessionFile.load(path: path) == everythingSession())
    #expect(try SessionFile.load(path: path + ".bak") == Session())
    #expect(fileType(folder.file(planted)) == S_IFLNK)
    #expect(names.offered.contains(planted) && names.offered.contains(plantedBackup))
    #expect(folder.entries() == [plantedBackup, planted, "song.json", "song.json.bak", "victim.txt"].sorted())
  }

  @Test("when the temporary file cannot be made, the existing file stays intact")
  func failureLeavesFileIntact() throws {
    let folder = try TemporaryFolder()
    let path = folder.file("song.json")
    try SessionFile.save(everythingSession(), to: path)
    let before = contents(of: path)
    do {
      try FileAccess.writeAtomically(Array("{}".utf8), to: path, temporaryName: { _ in "no-such-folder/tmp" })
      Issue.record("expected an error")
    } catch {
      #expect(error.file == path)
      #expect(error.message == "cannot create a temporary file next to it: No such file or directory")
    }
    #expect(contents(of: path) == before)
    #expect(folder.entries() == ["song.json"])
  }

  @Test("replacing a file keeps its permission bits")
  func keepsPermissions() throws {
    let folder = try TemporaryFolder()
    let path = folder.file("private.json")
    try SessionFile.save(Session(), to: path)
    try #require(chmod(path, 0o600) == 0)
    try SessionFile.save(everythingSession(), to: path)
    var info = stat()
    try #require(stat(path, &info) == 0)
    #expect(info.st_mode & 0o777 == 0o600)
  }

  @Test("a relative path saves into the current directory's folder")
  func relativePath() throws {
    let folder = try TemporaryFolder()
    let path = folder.file("rel.json")
    // Express the same file relative to the current directory.
    let relative =
      String(
        repeating: "../",
        count: FileManager.default.currentDirectoryPath
          .split(separator: "/").count) + String(path.dropFirst())
    try SessionFile.save(everythingSession(), to: relative)
    #expect(try SessionFile.load(path: path) == everythingSession())
  }

  @Test("200 alternating saves: every load sees one whole version, and no temporary files remain")
  func alternatingSaves() throws {
    let folder = try TemporaryFolder()
    let path = folder.file("loop.json")
    let (first, second) = twoSessions()
    for round in 0..<200 {
      try SessionFile.save(round.isMultiple(of: 2) ? first : second, to: path)
      let loaded = try SessionFile.load(path: path)
      #expect(loaded == first || loaded == second)
      #expect(loaded == (round.isMultiple(of: 2) ? first : second))
      let entries = folder.entries()
      #expect(entries == (round == 0 ? ["loop.json"] : ["loop.json", "loop.json.bak"]), "round \(round)")
    }
  }
}

/// Temporary names for `writeAtomically`: the planted name first, then unique ones; records each.
final class NameSequence {
  private(set) var offered: [String] = []
  private var counter = 0

  func next(_ name: String) -> String {
    counter += 1
    let result = offered.contains(".\(name).tmp-planted") ? ".\(name).tmp-test-\(counter)" : ".\(name).tmp-planted"
    offered.append(result)
    return result
  }
}
