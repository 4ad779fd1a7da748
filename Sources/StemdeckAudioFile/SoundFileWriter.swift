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

  /// The format for a path's extension (wav, flac, aif/aiff), or nil.
  public static func forPath(_ path: String) -> OutputFormat? {
    let ext = path.split(separator: ".").last.map { $0.lowercased() } ?? ""
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
  public let path: String
  public let channelCount: Int

  /// Creates (or truncates) `path`. The corresponding C function is `sf_open` with `SFM_WRITE`.
  public init(path: String, format: OutputFormat, sampleRate: Int, channelCount: Int) throws(SoundFileError) {
    var info = SF_INFO()
    info.samplerate = Int32(sampleRate)
    info.channels = Int32(channelCount)
    info.format = format.sndfileFormat
    guard sf_format_check(&info) != 0 else {
      throw SoundFileError(path: path, reason: "format \(format.rawValue) cannot hold \(channelCount) channels at \(sampleRate) Hz")
    }
    guard let h = sf_open(path, Int32(SFM_WRITE), &info) else {
      throw SoundFileError(path: path, reason: "cannot create: \(String(cString: sf_strerror(nil)))")
    }
    // Float data written to integer formats is clipped rather than wrapped.
    sf_command(h, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE))
    handle = h
    self.path = path
    self.channelCount = channelCount
  }

  deinit { sf_close(handle) }

  /// Writes interleaved frames. The corresponding C function is `sf_writef_float`.
  public func write(_ frames: UnsafePointer<Float>, frameCount: Int) throws(SoundFileError) {
    let written = sf_writef_float(handle, frames, sf_count_t(frameCount))
    if written != sf_count_t(frameCount) {
      throw SoundFileError(path: path, reason: "write failed: \(String(cString: sf_strerror(handle)))")
    }
  }

  /// Updates the header so the file is valid up to what was written (`SFC_UPDATE_HEADER_NOW`),
  /// and flushes to the OS.
  public func flush() {
    sf_command(handle, Int32(SFC_UPDATE_HEADER_NOW), nil, 0)
    sf_write_sync(handle)
  }
}
