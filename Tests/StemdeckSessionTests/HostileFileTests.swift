// Issue 16 regressions at the session-file layer: what `SessionFile.save` refuses, and hostile
// documents (deep nesting, NUL and escapes in names) read without a crash or a hang.
import Foundation
import StemdeckTestSupport
import Testing
@testable import StemdeckSession

#if canImport(Glibc)
import Glibc
#endif

@Suite("Hostile files: the session layer (issue 16)")
struct HostileFileTests {
  func type(_ path: String) -> mode_t? {
    var info = stat()
    return lstat(path, &info) == 0 ? info.st_mode & S_IFMT : nil
  }

  @Test("3: saving over a FIFO is refused; the FIFO stays and no backup link to it is made")
  func saveOverFIFO() throws {
    let folder = try TemporaryFolder()
    let path = folder.file("pipe.json")
    try #require(mkfifo(path, 0o600) == 0)
    #expect(
      throws: SessionError(
        file: path, message: "is a FIFO (named pipe), not a regular file; stemdeck saves only over a regular file or to a new name")
    ) {
      try SessionFile.save(Session(), to: path)
    }
    #expect(type(path) == S_IFIFO)
    #expect(folder.entries() == ["pipe.json"])
  }

  @Test("28: a name too long for its .bak is refused at the first save, not after it")
  func nameTooLongForBackup() throws {
    let folder = try TemporaryFolder()
    let long = folder.file(String(repeating: "a", count: 247) + ".json")  // 252 bytes
    #expect(
      throws: SessionError(
        file: long, message: "the file name is 252 bytes long; the longest that leaves room for its backup (NAME.bak) is 251 bytes")
    ) {
      try SessionFile.save(Session(), to: long)
    }
    #expect(folder.entries().isEmpty)
    let fits = folder.file(String(repeating: "a", count: 246) + ".json")  // 251 bytes
    try SessionFile.save(Session(), to: fits)
    try SessionFile.save(Session(), to: fits)
    #expect(type(fits + ".bak") == S_IFREG)
  }

  @Test("29: a dB volume just above +6 dB says which gain it is, not a rounded 2 that looks allowed")
  func volumeJustAboveTheLimit() throws {
    let text = #"{ "format" : "stemdeck-session", "version" : 1, "master" : { "volume" : "+6.0206dB" } }"#
    do {
      _ = try decode(text)
      Issue.record("+6.0206dB was accepted")
    } catch {
      #expect(error.message.contains("which is a gain of 2.0000"), "\(error.message)")
      #expect(!error.message.contains("which is a gain of 2)"), "\(error.message)")
    }
  }

  @Test("widen the net: 100,000-deep nesting is an error, not a stack overflow")
  func deepNesting() throws {
    for (open, close) in [("[", "]"), (#"{"a":"#, "}")] {
      let text =
        #"{ "format" : "stemdeck-session", "version" : 1, "x" : "# + String(repeating: open, count: 100_000)
        + String(repeating: close, count: 100_000) + " }"
      #expect(throws: SessionError.self) { _ = try decode(text) }
    }
  }

  @Test("widen the net: NUL, escape sequences and bidi controls in stem names are rejected, and printed escaped")
  func controlCharactersInNames() throws {
    for name in [#"a\u0000b"#, #"\u001b]2;HACKED\u0007"#, #"x\u202ey"#, #"\u001b[2J"#] {
      let text = #"{ "format" : "stemdeck-session", "version" : 1, "stems" : [ { "name" : ""# + name + #"", "file" : "a.wav" } ] }"#
      do {
        _ = try decode(text)
        Issue.record("the name \(name) was accepted")
      } catch {
        let message = error.description
        #expect(
          !message.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7f }, "raw control character in: \(message.debugDescription)")
      }
    }
  }
}

extension HostileFileTests {
  @Test("widen the net: a 200 MB session file is refused from its size, without reading it")
  func hugeFile() throws {
    let folder = try TemporaryFolder()
    let path = folder.file("huge.json")
    let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o644)
    try #require(fd >= 0)
    #expect(ftruncate(fd, 200 << 20) == 0)  // sparse: no 200 MB written
    close(fd)
    // Not read: the bytes this thread read (the kernel's count, /proc/thread-self/io) grow by far
    // less than the file's 200 MB, or the 16 MiB limit.
    let before = try threadBytesRead()
    #expect(throws: SessionError(file: path, message: "is too large for a session file (209715200 bytes; the limit is 16 MiB)")) {
      _ = try SessionFile.load(path: path)
    }
    let read = try threadBytesRead() - before
    #expect(read < 1 << 20, "loading read \(read) bytes")
  }
}

extension HostileFileTests {
  @Test("3, widen the net: AtomicFile.replace (the REPL history's writer) never renames over a FIFO")
  func replaceRefusesFIFO() throws {
    let folder = try TemporaryFolder()
    let path = folder.file("history")
    try #require(mkfifo(path, 0o600) == 0)
    var called = false
    #expect(throws: SessionError(file: path, message: "is a FIFO (named pipe), not a regular file; it is not replaced")) {
      try AtomicFile.replace(path) { temporary in
        called = true; return FileManager.default.createFile(atPath: temporary, contents: Data())
      }
    }
    #expect(!called)
    #expect(type(path) == S_IFIFO)
    #expect(folder.entries() == ["history"])
  }
}

/// The bytes the calling thread has read with read(2) and its kind so far (`rchar` of
/// /proc/thread-self/io, counted by the kernel whatever the file).
func threadBytesRead() throws -> Int {
  let text = try String(contentsOfFile: "/proc/thread-self/io", encoding: .utf8)
  guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("rchar:") }),
    let value = Int(line.dropFirst("rchar:".count).trimmingCharacters(in: .whitespaces))
  else { throw SessionError(file: "/proc/thread-self/io", message: "has no rchar line: \(text)") }
  return value
}
