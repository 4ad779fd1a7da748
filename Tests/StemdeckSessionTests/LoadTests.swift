import Foundation
import StemdeckTestSupport
import Testing
@testable import StemdeckSession

#if canImport(Glibc)
import Glibc
#endif

@Suite("Loading files")
struct LoadTests {
  /// Loads `path`, expecting a failure; returns the error.
  private func loadFailure(_ path: String) -> SessionError? {
    do {
      let session = try SessionFile.load(path: path)
      Issue.record("loaded \(session) instead of failing")
      return nil
    } catch {
      return error
    }
  }

  @Test("a valid file loads")
  func loadsValidFile() throws {
    let folder = try TemporaryFolder()
    let path = folder.file("ok.json")
    try write(demoLikeDocument, to: path)
    let session = try SessionFile.load(path: path)
    #expect(session.stems.count == 3)
    #expect(session.masterVolume == 0.9)
  }

  @Test("a missing file")
  func missingFile() throws {
    let folder = try TemporaryFolder()
    let path = folder.file("nope.json")
    let error = try #require(loadFailure(path))
    #expect(error == SessionError(file: path, message: "no such file"))
    #expect(error.description == "\(path): no such file")
  }

  @Test("a directory")
  func directory() throws {
    let folder = try TemporaryFolder()
    let error = try #require(loadFailure(folder.path))
    #expect(error.file == folder.path)
    #expect(error.location == nil)
    #expect(error.message == "is a directory, not a session file")
  }

  @Test("a FIFO is refused without blocking")
  func fifo() throws {
    let folder = try TemporaryFolder()
    let path = folder.file("pipe.json")
    try #require(mkfifo(path, 0o600) == 0)
    let error = try #require(loadFailure(path))
    #expect(error.message.contains("is not a regular file"))
  }

  @Test("an unreadable file")
  func unreadableFile() throws {
    let folder = try TemporaryFolder()
    let path = folder.file("secret.json")
    try write(demoLikeDocument, to: path)
    try #require(chmod(path, 0) == 0)
    if geteuid() == 0 {
      // Root ignores permission bits, so chmod 000 cannot make a file unreadable here: the file
      // loads. The read-error path is covered below with a file even root cannot read.
      #expect(try SessionFile.load(path: path).stems.count == 3)
    } else {
      let error = try #require(loadFailure(path))
      #expect(error.message == "cannot open the session file: Permission denied")
    }
    // /proc/self/mem is a "regular file" that opens but fails to read at offset 0 (nothing is mapped
    // there) for every user, root included: read() returns EIO.
    let error = try #require(loadFailure("/proc/self/mem"))
    #expect(error.message == "cannot read the session file: Input/output error")
  }

  @Test("a file over the maximum size")
  func tooLarge() throws {
    let folder = try TemporaryFolder()
    let path = folder.file("huge.json")
    let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o644)
    try #require(fd >= 0)
    // Sparse: takes no disk space.
    let truncated = ftruncate(fd, off_t(SessionFile.maximumFileSize + 1))
    close(fd)
    try #require(truncated == 0)
    let error = try #require(loadFailure(path))
    #expect(error.message.contains("is too large for a session file (16777217 bytes; the limit is 16 MiB)"))
    // decode applies the same limit to data handed to it directly.
    let big = Data(count: SessionFile.maximumFileSize + 1)
    #expect(throws: SessionError.self) { try SessionFile.decode(big, source: "big") }
  }

  @Test("a file exactly at the maximum size is read (and then judged as JSON)")
  func atMaximumSize() throws {
    let folder = try TemporaryFolder()
    let path = folder.file("max.json")
    var bytes = Array(#"{ "format" : "stemdeck-session", "version" : 1 }"#.utf8)
    bytes += [UInt8](repeating: UInt8(ascii: " "), count: SessionFile.maximumFileSize - bytes.count)
    try write(bytes, to: path)
    #expect(try SessionFile.load(path: path) == Session())
  }

  @Test("bytes that are not UTF-8")
  func notUTF8() throws {
    let folder = try TemporaryFolder()
    let path = folder.file("latin1.json")
    var bytes = Array("{\n  \"format\" : \"stemdeck-session\",\n  \"version\" : 1,\n  \"stems\" : [ { \"name\" : \"dr".utf8)
    bytes.append(0xFC)  // "ü" in Latin-1
    bytes += Array("ms\", \"file\" : \"x.flac\" } ]\n}\n".utf8)
    try write(bytes, to: path)
    let error = try #require(loadFailure(path))
    #expect(error.location == nil)
    #expect(error.message.contains("is not valid UTF-8 text (bad byte 0xFC"))
    #expect(error.line == 4)
    #expect(error.column == 29)
  }

  @Test(
    "UTF-8 validation rejects overlong forms, surrogates and truncated sequences",
    arguments: [[0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82], [0x80], [0xFF]] as [[UInt8]])
  func strictUTF8(sequence: [UInt8]) {
    let bytes = Array("{\"a\":\"".utf8) + sequence + Array("\"}".utf8)
    #expect(UTF8Check.firstInvalidOffset(bytes) == 6)
    #expect(UTF8Check.firstInvalidOffset(Array("{\"a\":\"é€😀\"}".utf8)) == nil)
  }
}
