import CSndFile
import StemdeckSession
#if canImport(Glibc)
import Glibc
#endif
import StemdeckText

/// Why an audio file could not be opened, read or written. Every case names the file.
public struct SoundFileError: Error, CustomStringConvertible, Equatable, Sendable {
  public let path: String
  public let reason: String
  public init(path: String, reason: String) {
    self.path = path
    self.reason = reason
  }
  public var description: String { "\(path): \(reason)" }
}

/// Facts about an audio file.
public struct SoundFileInfo: Sendable, Equatable {
  public var frameCount: Int
  public var sampleRate: Int
  public var channelCount: Int
  /// libsndfile's major format name, e.g. "WAV", "FLAC", "OGG".
  public var formatName: String
  /// True for 16-bit integer PCM, which the disk reader converts itself in bulk (faster than
  /// libsndfile's per-sample conversion).
  public var isPCM16 = false
  /// Bits of an integer PCM file (8, 16, 24 or 32); nil for float and compressed ones: where its
  /// full scale lies (`analyze FILE`).
  public var integerBits: Int?
  public var title: String?
  public var artist: String?
  /// For more than two channels: where each sounds, when the file or its format says (nil: no
  /// known layout, folded odd/even). See `StereoDownmix`.
  public var layout: ChannelLayout?
}

/// Owns one libsndfile handle (`SNDFILE*`) open for reading. Move-only; closed on deinit.
///
/// - Thread: any non-realtime thread (open on the control thread, read on the disk thread).
public struct SoundFile: ~Copyable, @unchecked Sendable {
  let handle: OpaquePointer
  public let path: String
  public let info: SoundFileInfo

  /// Largest channel count accepted (libsndfile allows up to 1024; a stem with more is suspect).
  public static let maxChannels = 64
  /// Sample rates accepted: what audio hardware and files sensibly use.
  public static let sampleRateRange = 1000...768_000

  /// Opens `path` for reading, checking it is a regular, readable, decodable audio file.
  /// The corresponding C functions are `open` and `sf_open_fd`.
  ///
  /// The path is opened once, with `O_NONBLOCK` (a FIFO swapped in for the file would block
  /// `open` until a writer came, freezing the control thread past SIGTERM), and every check is
  /// made on the opened descriptor (`fstat`), never on the path again, so nothing can be
  /// swapped between the check and the read.
  public init(readingFrom path: String) throws(SoundFileError) {
    // A name that is not UTF-8 is opened by its bytes (RawFileName).
    let fd = RawFileName.withCPath(path) { open($0, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY) }
    if fd < 0 {
      let code = errno
      let reason =
        switch code {
        case ENOENT: "no such file"
        case EACCES: "permission denied (not readable)"
        case ENXIO: "is not a regular file (a FIFO, socket or device); stemdeck reads audio only from regular files"
        default: String(cString: strerror(code))
        }
      throw SoundFileError(path: path, reason: reason)
    }
    var st = stat()
    guard fstat(fd, &st) == 0 else {
      let reason = String(cString: strerror(errno))
      close(fd)
      throw SoundFileError(path: path, reason: reason)
    }
    let kind = st.st_mode & S_IFMT
    func refuse(_ reason: String) -> SoundFileError {
      close(fd)
      return SoundFileError(path: path, reason: reason)
    }
    if kind == S_IFDIR { throw refuse("is a directory, not an audio file") }
    if kind != S_IFREG {
      throw refuse("is not a regular file (a FIFO, socket or device); stemdeck reads audio only from regular files")
    }
    if st.st_size == 0 { throw refuse("the file is empty") }
    // A regular file reads the same either way; libsndfile expects blocking reads.
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)

    var sfInfo = SF_INFO()
    // SF_TRUE: libsndfile closes the descriptor with the handle (and on failure).
    guard let h = sf_open_fd(fd, Int32(SFM_READ), &sfInfo, Int32(SF_TRUE)) else {
      let message = String(cString: sf_strerror(nil))
      throw SoundFileError(
        path: path,
        reason: "not a readable audio file (\(message)); formats: WAV, AIFF, FLAC, Ogg/Vorbis, Opus, MP3 and others libsndfile reads")
    }
    func fail(_ reason: String) -> SoundFileError {
      sf_close(h)
      return SoundFileError(path: path, reason: reason)
    }
    if sfInfo.channels < 1 || sfInfo.channels > Int32(Self.maxChannels) {
      throw fail("unsupported channel count \(sfInfo.channels) (allowed: 1 to \(Self.maxChannels))")
    }
    if !Self.sampleRateRange.contains(Int(sfInfo.samplerate)) {
      throw fail(
        "unsupported sample rate \(sfInfo.samplerate) Hz (allowed: \(Self.sampleRateRange.lowerBound) to \(Self.sampleRateRange.upperBound) Hz)"
      )
    }
    if sfInfo.frames <= 0 { throw fail("contains no audio frames") }
    var format = SF_FORMAT_INFO()
    format.format = sfInfo.format & Int32(SF_FORMAT_TYPEMASK)
    var name = "audio"
    // SFC_GET_FORMAT_INFO looks a format code up (SFC_GET_FORMAT_MAJOR wants a list index).
    if sf_command(nil, Int32(SFC_GET_FORMAT_INFO), &format, Int32(MemoryLayout<SF_FORMAT_INFO>.size)) == 0,
      let n = format.extension
    {
      name = String(cString: n).uppercased()
    }
    func tag(_ id: Int32) -> String? {
      guard let s = sf_get_string(h, id) else { return nil }
      let v = String(cString: s)
      return v.isEmpty ? nil : v
    }
    var layout: ChannelLayout?
    if sfInfo.channels > 2 {
      var map = [Int32](repeating: 0, count: Int(sfInfo.channels))
      let found = map.withUnsafeMutableBytes {
        sf_command(h, Int32(SFC_GET_CHANNEL_MAP_INFO), $0.baseAddress, Int32($0.count))
      }
      if found == SF_TRUE { layout = ChannelLayout.fromSndfileMap(map) }
      if layout == nil {
        let major = sfInfo.format & Int32(SF_FORMAT_TYPEMASK), sub = sfInfo.format & Int32(SF_FORMAT_SUBMASK)
        if major == Int32(SF_FORMAT_FLAC) {
          layout = ChannelLayout.formatOrder(flac: true, channels: Int(sfInfo.channels))
        } else if major == Int32(SF_FORMAT_OGG) && (sub == Int32(SF_FORMAT_VORBIS) || sub == Int32(SF_FORMAT_OPUS)) {
          layout = ChannelLayout.formatOrder(flac: false, channels: Int(sfInfo.channels))
        }
      }
    }
    handle = h
    self.path = path
    info = SoundFileInfo(
      frameCount: Int(sfInfo.frames), sampleRate: Int(sfInfo.samplerate),
      channelCount: Int(sfInfo.channels), formatName: name,
      isPCM16: sfInfo.format & Int32(SF_FORMAT_SUBMASK) == Int32(SF_FORMAT_PCM_16),
      integerBits: Self.integerBits(sfInfo.format),
      title: tag(Int32(SF_STR_TITLE)), artist: tag(Int32(SF_STR_ARTIST)), layout: layout)
  }

  deinit { sf_close(handle) }

  /// The bits of an integer PCM subformat (libsndfile's `SF_FORMAT_PCM_*`), nil for others.
  static func integerBits(_ format: Int32) -> Int? {
    switch format & Int32(SF_FORMAT_SUBMASK) {
    case Int32(SF_FORMAT_PCM_S8), Int32(SF_FORMAT_PCM_U8): 8
    case Int32(SF_FORMAT_PCM_16): 16
    case Int32(SF_FORMAT_PCM_24): 24
    case Int32(SF_FORMAT_PCM_32): 32
    default: nil
    }
  }

  /// Moves the read position to `frame`. The corresponding C function is `sf_seek`.
  public func seek(toFrame frame: Int) throws(SoundFileError) {
    if sf_seek(handle, sf_count_t(frame), SEEK_SET) < 0 {
      throw SoundFileError(path: path, reason: "cannot seek to frame \(frame): \(String(cString: sf_strerror(handle)))")
    }
  }

  /// Reads up to `frameCount` interleaved frames as floats into `buffer`; returns frames read
  /// (0 at the end). The corresponding C function is `sf_readf_float`.
  public func readFrames(into buffer: UnsafeMutablePointer<Float>, frameCount: Int) -> Int {
    Int(sf_readf_float(handle, buffer, sf_count_t(frameCount)))
  }

  /// Reads up to `frameCount` interleaved frames as 16-bit integers. The corresponding C
  /// function is `sf_readf_short`.
  public func readFrames(intoShorts buffer: UnsafeMutablePointer<Int16>, frameCount: Int) -> Int {
    Int(sf_readf_short(handle, buffer, sf_count_t(frameCount)))
  }

  /// The library's last error for this file, if any.
  public var lastError: String? {
    sf_error(handle) == 0 ? nil : String(cString: sf_strerror(handle))
  }
}
