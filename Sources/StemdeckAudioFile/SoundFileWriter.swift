import CSndFile
import StemdeckSession
#if canImport(Glibc)
import Glibc
#endif
import StemdeckText

/// Output file formats: the container comes from the file extension (`forPath`), the sample
/// format from `render --format` (`named`) or the container's default.
public enum OutputFormat: String, Sendable, CaseIterable {
  case wavFloat = "wav"  // 32-bit float WAV (the default for .wav)
  case wav16 = "wav16"  // 16-bit PCM WAV
  case wav24 = "wav24"
  case wav32 = "wav32"  // 32-bit integer PCM WAV
  case flac16 = "flac16"
  case flac = "flac"  // 24-bit FLAC
  case aiff16 = "aiff16"
  case aiff = "aiff"  // 24-bit AIFF
  case vorbis = "vorbis"  // Ogg Vorbis (lossy; .ogg, .oga)
  case opus = "opus"  // Ogg Opus (lossy; .opus; 8, 12, 16, 24 or 48 kHz only)

  var sndfileFormat: Int32 {
    switch self {
    case .wavFloat: return Int32(SF_FORMAT_WAV) | Int32(SF_FORMAT_FLOAT)
    case .wav16: return Int32(SF_FORMAT_WAV) | Int32(SF_FORMAT_PCM_16)
    case .wav24: return Int32(SF_FORMAT_WAV) | Int32(SF_FORMAT_PCM_24)
    case .wav32: return Int32(SF_FORMAT_WAV) | Int32(SF_FORMAT_PCM_32)
    case .flac16: return Int32(SF_FORMAT_FLAC) | Int32(SF_FORMAT_PCM_16)
    case .flac: return Int32(SF_FORMAT_FLAC) | Int32(SF_FORMAT_PCM_24)
    case .aiff16: return Int32(SF_FORMAT_AIFF) | Int32(SF_FORMAT_PCM_16)
    case .aiff: return Int32(SF_FORMAT_AIFF) | Int32(SF_FORMAT_PCM_24)
    case .vorbis: return Int32(SF_FORMAT_OGG) | Int32(SF_FORMAT_VORBIS)
    case .opus: return Int32(SF_FORMAT_OGG) | Int32(SF_FORMAT_OPUS)
    }
  }

  /// How `SoundFileWriter` hands an integer format's samples to libsndfile once `encodePCM` has
  /// converted them: WAV and AIFF as the file's own bytes (`sf_write_raw`), FLAC as 32-bit words
  /// (`sf_writef_int`, which keeps their top bits). nil: 32-bit float and the lossy codecs.
  public var pcmLayout: PCMLayout? {
    switch self {
    case .wav16, .wav24, .wav32: return .littleEndian
    case .aiff16, .aiff: return .bigEndian
    case .flac16, .flac: return .words
    case .wavFloat, .vorbis, .opus: return nil
    }
  }

  /// Bits per sample of an integer format (nil: 32-bit float, or a lossy codec).
  public var integerBits: Int? {
    switch self {
    case .wavFloat, .vorbis, .opus: return nil
    case .wav16, .flac16, .aiff16: return 16
    case .wav24, .flac, .aiff: return 24
    case .wav32: return 32
    }
  }

  /// True for the lossy codecs (Vorbis, Opus): no dither, and their files only approximate the mix.
  public var isLossy: Bool { self == .vorbis || self == .opus }

  /// The container, as the extensions that name it: "wav", "flac", "aiff", "ogg", "opus".
  public var container: String {
    switch self {
    case .wavFloat, .wav16, .wav24, .wav32: return "wav"
    case .flac16, .flac: return "flac"
    case .aiff16, .aiff: return "aiff"
    case .vorbis: return "ogg"
    case .opus: return "opus"
    }
  }

  /// What a person reads: "24-bit FLAC", "32-bit float WAV", "Ogg Vorbis".
  public var description: String {
    switch self {
    case .wavFloat: return "32-bit float WAV"
    case .vorbis: return "Ogg Vorbis"
    case .opus: return "Ogg Opus"
    default: return "\(integerBits!)-bit \(container == "wav" ? "WAV" : container == "flac" ? "FLAC" : "AIFF")"
    }
  }

  /// The `--format` names, as the help lists them.
  public static let formatNames: [(name: String, format: OutputFormat)] = [
    ("wav16", .wav16), ("wav24", .wav24), ("wav32", .wav32), ("float", .wavFloat),
    ("flac16", .flac16), ("flac24", .flac), ("aiff16", .aiff16), ("aiff24", .aiff),
    ("vorbis", .vorbis), ("opus", .opus)
  ]

  /// The format for a `--format` name (case-insensitive; "wav" and "wavf" are the float WAV,
  /// "flac" and "aiff" their 24-bit default, "ogg" Vorbis), or nil.
  public static func named(_ name: String) -> OutputFormat? {
    switch name.lowercased() {
    case "wav", "wavf", "float", "wav-float", "f32": return .wavFloat
    case "flac", "flac24": return .flac
    case "aiff", "aif", "aiff24": return .aiff
    case "ogg", "oga", "vorbis": return .vorbis
    default: return formatNames.first { $0.name == name.lowercased() }?.format
    }
  }

  /// The format for a path's extension (wav, flac, aif/aiff, ogg/oga, opus), or nil. The
  /// extension is what follows the last dot of the file name, after something else (`wav` or
  /// `.wav` alone has none).
  public static func forPath(_ path: String) -> OutputFormat? {
    guard let ext = fileExtension(path) else { return nil }
    switch ext {
    case "wav": return .wavFloat
    case "flac": return .flac
    case "aif", "aiff": return .aiff
    case "ogg", "oga": return .vorbis
    case "opus": return .opus
    default: return nil
    }
  }

  /// The lowercased extension of a path's file name, or nil when it has none.
  public static func fileExtension(_ path: String) -> String? {
    let name = path.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
    guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
    let ext = name[name.index(after: dot)...].lowercased()
    return ext.isEmpty ? nil : ext
  }

  /// The format for `path` written as `format` (a `--format` choice) when given: the choice must
  /// fit the file's container (flac16 into .flac, not into .wav); a path with no known extension
  /// takes the choice as it is. Throws a message naming what is allowed.
  public static func resolve(path: String, format: OutputFormat?) throws(SoundFileError) -> OutputFormat {
    let byName = forPath(path)
    let known = "a .wav, .flac, .aiff, .ogg or .opus file name"
    guard let format else {
      guard let byName else {
        let ext = fileExtension(path).map { "'.\($0)'" } ?? "no extension"
        throw SoundFileError(path: path, reason: "unknown output format (\(ext)): use \(known), or --format")
      }
      return byName
    }
    if let byName, byName.container != format.container {
      throw SoundFileError(
        path: path,
        reason:
          "--format \(format.rawValue) writes \(format.description), which does not go in a .\(fileExtension(path)!) file (use a .\(format.container) file name)"
      )
    }
    return format
  }
}

/// The layout `SoundFileWriter.encodePCM` writes integer levels in.
public enum PCMLayout: Sendable, Equatable {
  /// Signed integers of bits/8 bytes, least significant byte first (WAV's data chunk).
  case littleEndian
  /// Signed integers of bits/8 bytes, most significant byte first (AIFF's).
  case bigEndian
  /// One `Int32` a sample in the host's order, the level in its top bits (`level << (32 − bits)`):
  /// what `sf_writef_int` takes (it keeps the top bits exactly).
  case words
}

/// Owns one libsndfile handle open for writing. Move-only; closed (and the header finalized)
/// on `close()` or deinit.
public struct SoundFileWriter: ~Copyable, @unchecked Sendable {
  /// The open handle; nil once `finish()` closed it.
  let slot: UnsafeMutablePointer<OpaquePointer?>
  /// Ogg (Vorbis, Opus): its last pages are written by `sf_close` only, and libsndfile 1.2's
  /// `SFC_UPDATE_HEADER_NOW` cuts a Vorbis stream short (1.36 s of 2 s read back), so it is
  /// never sent to one.
  let isOgg: Bool
  /// The descriptor opened here for an exclusive file (libsndfile does not own it), or -1.
  let descriptor: Int32
  public let path: String
  public let channelCount: Int
  /// An integer format's bits per sample and layout (nil: float or lossy, written as floats).
  let bits: Int?
  let layout: PCMLayout?
  /// `write`'s conversion buffer for an integer format (`scratchFrames` frames of 32-bit words).
  let scratch: UnsafeMutablePointer<UInt8>?
  static let scratchFrames = 4096

  /// Creates `path` for writing, read-write, with `O_CREAT | O_EXCL | O_NOFOLLOW` and mode 0666
  /// (the user's umask applies): nothing that exists there, a symbolic link included, is followed
  /// or written over. A name that is not UTF-8 is created by its bytes (RawFileName).
  static func createExclusive(_ path: String) throws(SoundFileError) -> Int32 {
    let fd = RawFileName.withCPath(path) { open($0, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o666) }
    guard fd < 0 else { return fd }
    let code = errno
    let why =
      code == EEXIST
      ? "something already exists there (a file or a symbolic link); it is not written over"
      : String(cString: strerror(code))
    throw SoundFileError(path: path, reason: "cannot create: \(why)")
  }

  /// Creates `path`. The corresponding C functions are `sf_open` with `SFM_WRITE` (which
  /// truncates an existing file, following a symbolic link), or with `exclusive`, `open` with
  /// `O_CREAT | O_EXCL | O_NOFOLLOW` and mode 0666 (so the user's umask applies) and `sf_open_fd`:
  /// then nothing that exists at `path` (a file, or a symbolic link, even a dangling one) is
  /// followed, truncated or replaced; it is an error.
  ///
  /// `peakChunk: false` leaves out the PEAK chunk libsndfile adds to float WAV and AIFF files:
  /// it scans every sample written for it (`render --stems` writes 32 files at once and spent a
  /// fifth of its time there).
  public init(
    path: String, format: OutputFormat, sampleRate: Int, channelCount: Int,
    exclusive: Bool = false, peakChunk: Bool = true
  ) throws(SoundFileError) {
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
      // A name that is not UTF-8 is created by its bytes (RawFileName).
      fd = try SoundFileWriter.createExclusive(path)
      opened = sf_open_fd(fd, Int32(SFM_WRITE), &info, Int32(SF_FALSE))
      if opened == nil {
        let why = String(cString: sf_strerror(nil))
        _ = RawFileName.withCPath(path) { unlink($0) }
        close(fd)
        throw SoundFileError(path: path, reason: "cannot create: \(why)")
      }
    } else {
      opened = RawFileName.withCPath(path) { sf_open($0, Int32(SFM_WRITE), &info) }
    }
    guard let h = opened else {
      throw SoundFileError(path: path, reason: "cannot create: \(String(cString: sf_strerror(nil)))")
    }
    // Float data written to integer formats is clipped rather than wrapped.
    sf_command(h, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE))
    if !peakChunk { sf_command(h, Int32(SFC_SET_ADD_PEAK_CHUNK), nil, Int32(SF_FALSE)) }
    slot = .allocate(capacity: 1)
    slot.initialize(to: h)
    isOgg = format.container == "ogg" || format.container == "opus"
    descriptor = fd
    self.path = path
    self.channelCount = channelCount
    layout = format.pcmLayout
    bits = layout == nil ? nil : format.integerBits
    scratch = layout == nil ? nil : .allocate(capacity: Self.scratchFrames * channelCount * 4)
  }

  deinit {
    if let h = slot.pointee { sf_close(h) }
    slot.deallocate()
    scratch?.deallocate()
    if descriptor >= 0 { close(descriptor) }
  }

  /// Writes interleaved frames. To an integer format each sample is stored as the level
  /// `encodePCM` gives it (converted here, in pieces of `scratchFrames`, and handed over with
  /// `writeConverted`); to any other with `sf_writef_float`.
  public func write(_ frames: UnsafePointer<Float>, frameCount: Int) throws(SoundFileError) {
    guard let scratch else { return try writeFloats(frames, frameCount: frameCount) }
    var done = 0
    while done < frameCount {
      let n = Swift.min(Self.scratchFrames, frameCount - done)
      try writeConverted(frames + done * channelCount, frameCount: n, scratch: scratch)
      done += n
    }
  }

  /// Writes interleaved frames as floats, through libsndfile's own conversion. The corresponding
  /// C function is `sf_writef_float`.
  func writeFloats(_ frames: UnsafePointer<Float>, frameCount: Int) throws(SoundFileError) {
    guard let handle = slot.pointee else { throw SoundFileError(path: path, reason: "write failed: the file was already finished") }
    errno = 0
    let written = sf_writef_float(handle, frames, sf_count_t(frameCount))
    if written != sf_count_t(frameCount) {
      throw SoundFileError(path: path, reason: "write failed: \(failureReason(errno))")
    }
  }

  /// Writes interleaved frames to an integer file (`OutputFormat.pcmLayout`): converted here
  /// (`encodePCM`) into `scratch` (at least `frameCount × channelCount × 4` bytes) and handed
  /// over whole (`writeEncoded`). libsndfile's own float conversion (`sf_writef_float` with
  /// clipping) is not used: it scales by 2^31 and keeps the top bits, rounding down, so a
  /// negative level q was stored as q − 1 (docs/architecture.md, "Integer output"). Any other
  /// format is written with `sf_writef_float` (`scratch` unused).
  public func writeConverted(
    _ frames: UnsafePointer<Float>, frameCount: Int, scratch: UnsafeMutablePointer<UInt8>
  ) throws(SoundFileError) {
    guard let bits, let layout else { return try writeFloats(frames, frameCount: frameCount) }
    Self.encodePCM(frames, count: frameCount * channelCount, bits: bits, layout: layout, into: scratch)
    try writeEncoded(scratch, frameCount: frameCount)
  }

  /// Writes frames already encoded as `encodePCM` does for this file's format. The
  /// corresponding C function is `sf_write_raw` (WAV, AIFF) or `sf_writef_int` (FLAC).
  public func writeEncoded(_ data: UnsafePointer<UInt8>, frameCount: Int) throws(SoundFileError) {
    guard let handle = slot.pointee else { throw SoundFileError(path: path, reason: "write failed: the file was already finished") }
    guard let bits, let layout else { throw SoundFileError(path: path, reason: "write failed: not an integer format") }
    errno = 0
    if layout == .words {
      let words = UnsafeRawPointer(data).assumingMemoryBound(to: Int32.self)
      if sf_writef_int(handle, words, sf_count_t(frameCount)) != sf_count_t(frameCount) {
        throw SoundFileError(path: path, reason: "write failed: \(failureReason(errno))")
      }
      return
    }
    let length = sf_count_t(frameCount * channelCount * bits / 8)
    if sf_write_raw(handle, data, length) != length {
      throw SoundFileError(path: path, reason: "write failed: \(failureReason(errno))")
    }
  }

  /// Float samples to integer levels of `bits` (16, 24 or 32) bits in `layout`: the sample
  /// scaled by 2^(bits−1) (the scale libsndfile and every reader divide by), clipped to the
  /// levels −2^(bits−1) … 2^(bits−1) − 1 and rounded to the nearest (ties to even). A sample
  /// that already is a level over 2^(bits−1) (`TPDFDither`'s output) is stored as exactly that
  /// level. NaN is stored as 0. `out` takes `count` × bits/8 bytes (`words`: `count` × 4).
  public static func encodePCM(
    _ samples: UnsafePointer<Float>, count: Int, bits: Int, layout: PCMLayout, into out: UnsafeMutablePointer<UInt8>
  ) {
    // Branch-free, so the loops vectorize: the clipped value plus 1.5 × 2^52 is rounded to an
    // integer (ties to even) that stands in the low 32 bits of the sum's bit pattern, two's
    // complement (`rounded()` is a libm call on baseline x86-64, and `Int32(_:)` checks its range).
    let magic = 6_755_399_441_055_744.0
    let full = Double(sign: .plus, exponent: bits - 1, significand: 1)
    @inline(__always) func level(_ s: Float) -> Int32 {
      let d = Double(s) * full
      let clipped = Swift.min(full - 1, Swift.max(-full, d == d ? d : 0))
      return Int32(truncatingIfNeeded: (clipped + magic).bitPattern)
    }
    let raw = UnsafeMutableRawPointer(out)
    switch (layout, bits) {
    case (.words, _):
      let words = raw.bindMemory(to: Int32.self, capacity: count)
      let shift = Int32(32 - bits)
      for i in 0..<count { words[i] = level(samples[i]) << shift }
    case (.littleEndian, 16), (.bigEndian, 16):
      let out16 = raw.bindMemory(to: Int16.self, capacity: count)
      if layout == .littleEndian {
        for i in 0..<count { out16[i] = Int16(truncatingIfNeeded: level(samples[i])).littleEndian }
      } else {
        for i in 0..<count { out16[i] = Int16(truncatingIfNeeded: level(samples[i])).bigEndian }
      }
    case (.littleEndian, 24):
      for i in 0..<count {
        let v = level(samples[i])
        out[3 * i] = UInt8(truncatingIfNeeded: v)
        out[3 * i + 1] = UInt8(truncatingIfNeeded: v >> 8)
        out[3 * i + 2] = UInt8(truncatingIfNeeded: v >> 16)
      }
    case (.bigEndian, 24):
      for i in 0..<count {
        let v = level(samples[i])
        out[3 * i] = UInt8(truncatingIfNeeded: v >> 16)
        out[3 * i + 1] = UInt8(truncatingIfNeeded: v >> 8)
        out[3 * i + 2] = UInt8(truncatingIfNeeded: v)
      }
    default:
      let out32 = raw.bindMemory(to: Int32.self, capacity: count)
      if layout == .littleEndian {
        for i in 0..<count { out32[i] = level(samples[i]).littleEndian }
      } else {
        for i in 0..<count { out32[i] = level(samples[i]).bigEndian }
      }
    }
  }

  /// libsndfile's reason, with the OS's (e.g. "File too large", "No space left on device") when
  /// the system call behind it set errno.
  func failureReason(_ code: Int32) -> String {
    let library = String(cString: sf_strerror(slot.pointee))
    return code == 0 ? library : "\(String(cString: strerror(code))) (\(library))"
  }

  /// Finishes the file: writes the final header, closes it (`sf_close`, which writes an Ogg
  /// stream's last pages) and, for a file created `exclusive`ly, makes it durable (fsync).
  /// Throws if any of that fails (disk full, size limit). Nothing can be written after it.
  public func finish() throws(SoundFileError) {
    guard let handle = slot.pointee else { return }
    errno = 0
    if !isOgg { sf_command(handle, Int32(SFC_UPDATE_HEADER_NOW), nil, 0) }
    sf_write_sync(handle)
    if sf_error(handle) != 0 {
      throw SoundFileError(path: path, reason: "cannot finish the file: \(failureReason(errno))")
    }
    errno = 0
    slot.pointee = nil
    if sf_close(handle) != 0 {
      throw SoundFileError(
        path: path, reason: "cannot finish the file: \(errno != 0 ? String(cString: strerror(errno)) : "libsndfile could not close it")")
    }
    if descriptor >= 0 && fsync(descriptor) != 0 {
      throw SoundFileError(path: path, reason: "cannot flush the file to disk: \(String(cString: strerror(errno)))")
    }
  }

  /// Updates the header so the file is valid up to what was written (`SFC_UPDATE_HEADER_NOW`),
  /// and flushes to the OS.
  public func flush() {
    guard let handle = slot.pointee else { return }
    if !isOgg { sf_command(handle, Int32(SFC_UPDATE_HEADER_NOW), nil, 0) }
    sf_write_sync(handle)
  }
}
