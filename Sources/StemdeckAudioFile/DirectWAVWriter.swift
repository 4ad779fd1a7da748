import StemdeckSession
#if canImport(Glibc)
import Glibc
#endif
import StemdeckText

/// A 32-bit float WAV file whose audio is written straight from the caller's buffers to the disk
/// (`O_DIRECT`), past the page cache: `render --stems` writes 32 files of float stereo at once,
/// and copying them into the page cache and writing that back cost the kernel more than the
/// mixing (docs/architecture.md, *Stem export*). The file is what libsndfile writes for
/// `OutputFormat.wavFloat` (a `fmt ` chunk of format 3, IEEE float, and a `fact` chunk with the
/// frame count) except that a `JUNK` chunk pads the header to `alignment` bytes, so the data
/// starts on a block boundary.
///
/// A write whose file offset, length and buffer are multiples of `alignment` goes out with
/// `O_DIRECT` (set on the descriptor for it); any other part, and every write on a file system
/// that refuses `O_DIRECT` (EINVAL: tmpfs, some network file systems), goes through the page
/// cache as usual. `finish()` writes the final header, fsyncs and closes: the file is complete
/// and on disk, or an error says why. Created exclusively (`O_CREAT | O_EXCL | O_NOFOLLOW`), as
/// `SoundFileWriter(exclusive: true)`; the caller renames it into place or removes it.
public final class DirectWAVWriter: @unchecked Sendable {
  /// The data's offset in the file, and the granularity of direct writes.
  public static let alignment = 4096
  public let path: String
  let channelCount: Int
  let sampleRate: Int
  var descriptor: Int32
  /// Bytes of audio written so far.
  var dataBytes = 0
  /// Whether `O_DIRECT` is set on the descriptor now; `directRefused`: the file system said no.
  var directOn = false
  var directRefused = false

  /// Creates `path` (nothing may exist there) with a header for no frames yet.
  public init(path: String, sampleRate: Int, channelCount: Int) throws(SoundFileError) {
    self.path = path
    self.sampleRate = sampleRate
    self.channelCount = channelCount
    descriptor = try SoundFileWriter.createExclusive(path)
    do throws(SoundFileError) { try writeHeader() } catch {
      close(descriptor)
      descriptor = -1
      _ = RawFileName.withCPath(path) { unlink($0) }
      throw error
    }
  }

  deinit {
    if descriptor >= 0 { close(descriptor) }
  }

  /// The largest data a WAV file can describe (its RIFF size is 32 bits).
  static var maximumDataBytes: Int { Int(UInt32.max) - alignment + 8 }

  /// The header for `dataBytes` of audio: RIFF, `fmt ` (IEEE float), `fact`, `JUNK` up to the
  /// data chunk's 8 bytes, which end at `alignment`.
  func header() -> [UInt8] {
    var h: [UInt8] = []
    h.reserveCapacity(Self.alignment)
    func tag(_ s: String) { h += Array(s.utf8) }
    func u32(_ v: Int) { h += withUnsafeBytes(of: UInt32(truncatingIfNeeded: v).littleEndian) { Array($0) } }
    func u16(_ v: Int) { h += withUnsafeBytes(of: UInt16(truncatingIfNeeded: v).littleEndian) { Array($0) } }
    let frameBytes = 4 * channelCount
    tag("RIFF"); u32(Self.alignment - 8 + dataBytes); tag("WAVE")
    tag("fmt "); u32(16); u16(3); u16(channelCount); u32(sampleRate); u32(sampleRate * frameBytes); u16(frameBytes); u16(32)
    tag("fact"); u32(4); u32(dataBytes / frameBytes)
    let junk = Self.alignment - h.count - 8 - 8
    tag("JUNK"); u32(junk); h += [UInt8](repeating: 0, count: junk)
    tag("data"); u32(dataBytes)
    return h
  }

  func writeHeader() throws(SoundFileError) {
    try setDirect(false)
    let h = header()
    let ok = h.withUnsafeBytes { writeFully($0.baseAddress!, count: $0.count, at: 0) }
    if !ok { throw SoundFileError(path: path, reason: "cannot write the header: \(String(cString: strerror(errno)))") }
  }

  /// Linux's `O_DIRECT` (Glibc's module leaves it out: it needs `_GNU_SOURCE`); 0 where unknown.
  static var directFlag: Int32 {
    #if os(Linux) && arch(x86_64)
    return 0o40000
    #elseif os(Linux) && (arch(arm64) || arch(arm))
    return 0o200000
    #else
    return 0
    #endif
  }

  /// Sets or clears `O_DIRECT` on the descriptor.
  func setDirect(_ on: Bool) throws(SoundFileError) {
    guard on != directOn else { return }
    let O_DIRECT = Self.directFlag
    if on && O_DIRECT == 0 {
      directRefused = true
      return
    }
    let flags = fcntl(descriptor, F_GETFL)
    if flags < 0 || fcntl(descriptor, F_SETFL, on ? flags | O_DIRECT : flags & ~O_DIRECT) != 0 {
      if on {  // not offered here: the page cache it is
        directRefused = true
        return
      }
      throw SoundFileError(path: path, reason: "write failed: \(String(cString: strerror(errno)))")
    }
    directOn = on
  }

  /// pwrite(2) until all of it is written; false with errno set on an error.
  func writeFully(_ bytes: UnsafeRawPointer, count: Int, at offset: Int) -> Bool {
    var done = 0
    while done < count {
      let n = pwrite(descriptor, bytes + done, count - done, off_t(offset + done))
      if n < 0 {
        if errno == EINTR { continue }
        return false
      }
      if n == 0 {
        errno = ENOSPC
        return false
      }
      done += n
    }
    return true
  }

  /// Appends `count` bytes of audio (interleaved little-endian floats, as the file holds them).
  public func write(_ bytes: UnsafeRawPointer, count: Int) throws(SoundFileError) {
    guard descriptor >= 0 else { throw SoundFileError(path: path, reason: "write failed: the file was already finished") }
    guard dataBytes + count <= Self.maximumDataBytes else {
      throw SoundFileError(path: path, reason: "write failed: a WAV file holds at most 4 GiB of audio")
    }
    var done = 0
    let a = Self.alignment
    let offset = a + dataBytes
    if !directRefused && offset % a == 0 && Int(bitPattern: bytes) % a == 0 && count >= a {
      let aligned = count - count % a
      try setDirect(true)
      if directOn {
        if !writeFully(bytes, count: aligned, at: offset) {
          if errno != EINVAL { throw SoundFileError(path: path, reason: "write failed: \(String(cString: strerror(errno)))") }
          directRefused = true  // the file system takes no direct writes: the rest as usual
        } else {
          done = aligned
        }
      }
    }
    if done < count {
      try setDirect(false)
      if !writeFully(bytes + done, count: count - done, at: offset + done) {
        throw SoundFileError(path: path, reason: "write failed: \(String(cString: strerror(errno)))")
      }
    }
    dataBytes += count
  }

  /// Writes the final header, makes the file durable (fsync) and closes it.
  public func finish() throws(SoundFileError) {
    guard descriptor >= 0 else { return }
    do throws(SoundFileError) {
      try writeHeader()
    } catch {
      throw SoundFileError(path: path, reason: "cannot finish the file: \(error.reason)")
    }
    if fsync(descriptor) != 0 {
      throw SoundFileError(path: path, reason: "cannot flush the file to disk: \(String(cString: strerror(errno)))")
    }
    let fd = descriptor
    descriptor = -1
    if close(fd) != 0 {
      throw SoundFileError(path: path, reason: "cannot finish the file: \(String(cString: strerror(errno)))")
    }
  }
}
