import CSndFile
#if canImport(Glibc)
import Glibc
#endif

/// Output file formats, chosen from the file extension.
public enum OutputFormat: String, Sendable, CaseIterable {
  case wavFloat = "wav"       // 32-bit float WAV (the default)
  case wav16 = "wav16"        // 16-bit PCM WAV
  case wav24 = "wav24"
  case flac = "flac"          // 24-bit FLAC
  case aiff = "aiff"          // 24-bit AIFF

  var sndfileFormat: Int32 {
    switch self {
    case .wavFloat: return Int32(SF_FORMAT_WAV) | Int32(SF_FORMAT_FLOAT)
    case .wav16: return Int32(SF_FORMAT_WAV) | Int32(SF_FORMAT_PCM_16)
    case .wav24: return Int32(SF_FORMAT_WAV) | Int32(SF_FORMAT_PCM_24)
    case .flac: return Int32(SF_FORMAT_FLAC) | Int32(SF_FORMAT_PCM_24)
    case .aiff: return Int32(SF_FORMAT_AIFF) | Int32(SF_FORMAT_PCM_24)
    }
  }

  /// Bits per sample of an integer format (nil: 32-bit float).
  public var integerBits: Int? {
    switch self {
    case .wavFloat: return nil
    case .wav16: return 16
    case .wav24, .flac, .aiff: return 24
    }
  }

  /// The format for a path's extension (wav, flac, aif/aiff), or nil. The extension is what
  /// follows the last dot of the file name, after something else (`wav` or `.wav` alone has none).
  public static func forPath(_ path: String) -> OutputFormat? {
    let name = path.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
    guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
    let ext = name[name.index(after: dot)...].lowercased()
    switch ext {
    case "wav": return .wavFloat
    case "flac": return .flac
    case "aif", "aiff": return .aiff
    default: return nil
    }
  }
}

/// Owns one libsndfile handle open for writing. Move-only; closed (and the header finalized)
/// on `close()` or deinit.
public struct SoundFileWriter: ~Copyable, @unchecked Sendable {
  let handle: OpaquePointer
  /// The descriptor opened here for an exclusive file (libsndfile does not own it), or -1.
  let descriptor: Int32
  public let path: String
  public let channelCount: Int

  /// Creates `path`. The corresponding C functions are `sf_open` with `SFM_WRITE` (which
  /// truncates an existing file, following a symbolic link), or with `exclusive`, `open` with
  /// `O_CREAT | O_EXCL | O_NOFOLLOW` and mode 0666 (so the user's umask applies) and `sf_open_fd`:
  /// then nothing that exists at `path` (a file, or a symbolic link, even a dangling one) is
  /// followed, truncated or replaced; it is an error.
  public init(path: String, format: OutputFormat, sampleRate: Int, channelCount: Int,
              exclusive: Bool = false) throws(SoundFileError) {
    var info = SF_INFO()
    info.samplerate = Int32(sampleRate)
    info.channels = Int32(channelCount)
    info.format = format.sndfileFormat
    guard sf_format_check(&info) != 0 else {
      throw SoundFileError(path: path, reason: "format \(format.rawValue) cannot hold \(channelCount) channels at \(sampleRate) Hz")
    }
    var fd: Int32 = -1
    let opened: OpaquePointer?
    if exclusive {
      fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o666)
      if fd < 0 {
        let code = errno
        let why = code == EEXIST
          ? "something already exists there (a file or a symbolic link); it is not written over"
          : String(cString: strerror(code))
        throw SoundFileError(path: path, reason: "cannot create: \(why)")
      }
      opened = sf_open_fd(fd, Int32(SFM_WRITE), &info, Int32(SF_FALSE))
      if opened == nil {
        let why = String(cString: sf_strerror(nil))
        unlink(path)
        close(fd)
        throw SoundFileError(path: path, reason: "cannot create: \(why)")
      }
    } else {
      opened = sf_open(path, Int32(SFM_WRITE), &info)
    }
    guard let h = opened else {
      throw SoundFileError(path: path, reason: "cannot create: \(String(cString: sf_strerror(nil)))")
    }
    // Float data written to integer formats is clipped rather than wrapped.
    sf_command(h, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE))
    handle = h
    descriptor = fd
    self.path = path
    self.channelCount = channelCount
  }

  deinit {
    sf_close(handle)
    if descriptor >= 0 { close(descriptor) }
  }

  /// Writes interleaved frames. The corresponding C function is `sf_writef_float`.
  public func write(_ frames: UnsafePointer<Float>, frameCount: Int) throws(SoundFileError) {
    errno = 0
    let written = sf_writef_float(handle, frames, sf_count_t(frameCount))
    if written != sf_count_t(frameCount) {
      throw SoundFileError(path: path, reason: "write failed: \(failureReason(errno))")
    }
  }

  /// libsndfile's reason, with the OS's (e.g. "File too large", "No space left on device") when
  /// the system call behind it set errno.
  func failureReason(_ code: Int32) -> String {
    let library = String(cString: sf_strerror(handle))
    return code == 0 ? library : "\(String(cString: strerror(code))) (\(library))"
  }

  /// Finishes the file: writes the final header, flushes it and, for a file created
  /// `exclusive`ly, makes it durable (fsync). Throws if any of that fails (disk full, size limit).
  public func finish() throws(SoundFileError) {
    errno = 0
    sf_command(handle, Int32(SFC_UPDATE_HEADER_NOW), nil, 0)
    sf_write_sync(handle)
    if sf_error(handle) != 0 {
      throw SoundFileError(path: path, reason: "cannot finish the file: \(failureReason(errno))")
    }
    if descriptor >= 0 && fsync(descriptor) != 0 {
      throw SoundFileError(path: path, reason: "cannot flush the file to disk: \(String(cString: strerror(errno)))")
    }
  }

  /// Updates the header so the file is valid up to what was written (`SFC_UPDATE_HEADER_NOW`),
  /// and flushes to the OS.
  public func flush() {
    sf_command(handle, Int32(SFC_UPDATE_HEADER_NOW), nil, 0)
    sf_write_sync(handle)
  }
}
