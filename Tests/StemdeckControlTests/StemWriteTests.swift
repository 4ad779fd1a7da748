import Foundation
import StemdeckAudioFile
// @testable: the dithered stem files are compared with the master's path run with their own seed
// (`TPDFDither`).
@testable import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import Testing

// Integer output: `SoundFileWriter` converts the samples itself (`encodePCM`) and hands the
// levels over whole (`sf_write_raw` for WAV and AIFF, `sf_writef_int` for FLAC); `render --stems`
// writes each chunk of a stem that way from the writer thread, each stem file dithered with its own
// sequence (`TPDFDither.stemSeed`). Every sample must be stored as the level meant for it: the clipped sample rounded
// to the nearest step of 1/2^(bits−1) (libsndfile's own float conversion rounded down instead).

@Suite struct StemWriteTests {
  /// Every sample value that matters to the conversion: every 16-bit level, every 61st 24-bit one
  /// and the ends, half-way values between levels (ties), the clipping edges, values beyond full
  /// scale, infinities and NaN, tiny values, and seeded noise over ±1.5.
  static func samples() -> [Float] {
    var values: [Float] = []
    for q in -32768...32767 { values.append(Float(Double(q) / 32768)) }
    // Every 61st 24-bit level (275,000; every 7th was 2.4 million and took 43 s under
    // AddressSanitizer for no defect more: a conversion that rounds wrong does so on most levels).
    for q in stride(from: -8_388_608, through: 8_388_607, by: 61) { values.append(Float(Double(q) / 8_388_608)) }
    for q in [-8_388_608, -8_388_607, -1, 0, 1, 8_388_606, 8_388_607] { values.append(Float(Double(q) / 8_388_608)) }
    for q in [-32768, -3, -2, -1, 0, 1, 2, 32766] { values.append(Float((Double(q) + 0.5) / 32768)) }
    for q in [-8_388_608, -3, -2, -1, 0, 1, 2, 8_388_606] { values.append(Float((Double(q) + 0.5) / 8_388_608)) }
    values += [1, -1, 1.0000001, -1.0000001, 2, -2, 0.99999994, -0.99999994, .infinity, -.infinity, .nan, -.nan, 0, -0.0]
    values += [Float.leastNonzeroMagnitude, -Float.leastNonzeroMagnitude, 0.5 / 2_147_483_648, 1.5 / 2_147_483_648, -0.5 / 2_147_483_648]
    values += [0.5 / 32768, 1.5 / 32768, -0.5 / 32768, -1.5 / 32768, 0.5 / 8_388_608, -0.5 / 8_388_608]
    var random = SplitMix64(seed: 23)
    for _ in 0..<100_000 { values.append(Float(Double.random(in: -1.5...1.5, using: &random))) }
    if values.count % 2 == 1 { values.append(0.25) }
    return values
  }

  /// The level a sample should be stored as, computed independently: scaled by 2^(bits−1),
  /// rounded to the nearest (ties to even), clipped to the format's range; NaN as 0.
  static func level(_ sample: Float, bits: Int) -> Int64 {
    guard !sample.isNaN else { return 0 }
    let full = Double(Int64(1) << (bits - 1))
    return Int64(Swift.min(full - 1, Swift.max(-full, (Double(sample) * full).rounded(.toNearestOrEven))))
  }

  @Test(
    "16-, 24- and 32-bit WAV, 16- and 24-bit AIFF and FLAC: written in pieces with write and writeConverted, every sample is stored as its nearest level, clipped",
    arguments: [OutputFormat.wav16, .wav24, .wav32, .aiff16, .aiff, .flac16, .flac])
  func convertedIsNearestLevel(format: OutputFormat) throws {
    let folder = try TemporaryFolder()
    let samples = Self.samples()
    let frames = samples.count / 2
    let bits = try #require(format.integerBits)
    #expect(OutputFormat.wavFloat.pcmLayout == nil && OutputFormat.vorbis.pcmLayout == nil && OutputFormat.opus.pcmLayout == nil)
    let ext = format.container
    do {
      let whole = try SoundFileWriter(path: folder.file("write.\(ext)"), format: format, sampleRate: 48000, channelCount: 2)
      let pieces = try SoundFileWriter(path: folder.file("converted.\(ext)"), format: format, sampleRate: 48000, channelCount: 2)
      let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: samples.count * 4)
      defer { scratch.deallocate() }
      try samples.withUnsafeBufferPointer { buffer in
        try whole.write(buffer.baseAddress!, frameCount: frames)
        // In pieces of different sizes, as chunks are.
        var done = 0
        for piece in [1, 7, 32768, frames] where done < frames {
          let n = min(piece, frames - done)
          try pieces.writeConverted(buffer.baseAddress! + 2 * done, frameCount: n, scratch: scratch)
          done += n
        }
      }
      try whole.finish()
      try pieces.finish()
    }
    let a = try Data(contentsOf: URL(fileURLWithPath: folder.file("write.\(ext)")))
    let b = try Data(contentsOf: URL(fileURLWithPath: folder.file("converted.\(ext)")))
    #expect(a == b, "write and writeConverted write the same file")
    let expected = samples.map { Self.level($0, bits: bits) }
    var stored: [Int64]
    if bits == 32 {
      // A float holds 24 bits: the levels are the last frames × 2 × 4 bytes of the file (its data chunk).
      #expect(a.count > samples.count * 4)
      stored = stride(from: a.count - samples.count * 4, to: a.count, by: 4).map { (i: Int) -> Int64 in
        var word: UInt32 = 0
        for k in 0..<4 { word |= UInt32(a[i + k]) << UInt32(8 * k) }
        return Int64(Int32(bitPattern: word))
      }
    } else {
      // libsndfile reads level/2^(bits−1), exactly, as a float.
      let back = try readAudio(folder.file("converted.\(ext)"))
      #expect(back.frames == frames && back.channels == 2 && back.info.sampleRate == 48000)
      let full = Double(1 << (bits - 1))
      stored = back.samples.map { Int64(Double($0) * full) }
    }
    #expect(stored.count == expected.count)
    if let first = zip(stored, expected).enumerated().first(where: { $0.element.0 != $0.element.1 }) {
      Issue.record(
        "\(format.description): sample \(first.offset) (\(samples[first.offset])) stored as \(first.element.0), want \(first.element.1)")
    }
  }

  /// Three stems rendered with `--stems` to `format`, and each stem again, alone, as a master
  /// (the path every master takes: `TPDFDither.apply` and `SoundFileWriter.write`) from its float
  /// file; dithered, that path is run here with the stem file's own seed.
  @Test(
    "--stems to 16-bit WAV (undithered), 24-bit WAV dithered and not: every stem file is, byte for byte, that stem through the master's path (dithered: with the stem's own seed)",
    arguments: [("wav16", false), ("wav24", true), ("wav24", false)])
  func stemFilesEqualMasterPath(name: String, dither: Bool) throws {
    let folder = try TemporaryFolder()
    let session = try StemExportTests.session(in: folder)
    let format = try #require(OutputFormat.named(name))
    // The float stems: the exact samples of each stem (float WAV is written as it is).
    _ = try OfflineRenderer.render(
      session: session, sessionPath: folder.file("s.stemdeck"), outputPath: folder.file("mix.wav"), duration: nil,
      stemsFolder: folder.file("float"))
    // 2 s: three 32,768-frame chunks, the last one partial.
    _ = try OfflineRenderer.render(
      session: session, sessionPath: folder.file("s.stemdeck"), outputPath: folder.file("mix-int.wav"), duration: nil,
      dither: dither, stemsFolder: folder.file("int"), format: format)
    for stemName in ["bass", "pad", "lead"] {
      var alone = Session()
      alone.stems = [stem(stemName, "float/\(stemName).wav")]
      let floats = try readAudio(folder.file("float/\(stemName).wav"))
      #expect(floats.frames == 96_000)
      _ = try OfflineRenderer.render(
        session: alone, sessionPath: folder.file("s.stemdeck"), outputPath: folder.file("alone-\(stemName).wav"), duration: nil,
        dither: dither, format: format)
      // The stem alone through the master's path is its float file unchanged (before dither)…
      let aloneFloat = folder.file("alone-float-\(stemName).wav")
      _ = try OfflineRenderer.render(
        session: alone, sessionPath: folder.file("s.stemdeck"), outputPath: aloneFloat, duration: nil)
      #expect(try readAudio(aloneFloat).samples == floats.samples, "\(stemName): the stem alone renders its samples exactly")
      // …so its integer file is what the stem writer must write: undithered, that render's file;
      // dithered, the master's path (`TPDFDither.apply`, `SoundFileWriter.write`) with the stem's seed.
      var expectedPath = folder.file("alone-\(stemName).wav")
      if dither {
        expectedPath = folder.file("alone-seeded-\(stemName).wav")
        var samples = floats.samples
        var ditherer = TPDFDither(bits: try #require(format.integerBits), seed: TPDFDither.stemSeed(name: stemName))
        let writer = try SoundFileWriter(path: expectedPath, format: format, sampleRate: 48000, channelCount: 2, exclusive: true)
        try samples.withUnsafeMutableBufferPointer { buffer in
          ditherer.apply(buffer.baseAddress!, count: buffer.count)
          try writer.write(buffer.baseAddress!, frameCount: buffer.count / 2)
        }
        try writer.finish()
        let master = try Data(contentsOf: URL(fileURLWithPath: folder.file("alone-\(stemName).wav")))
        #expect(master != (try Data(contentsOf: URL(fileURLWithPath: expectedPath))), "\(stemName): the stem's dither is not the master's")
      }
      let expected = try Data(contentsOf: URL(fileURLWithPath: expectedPath))
      let written = try Data(contentsOf: URL(fileURLWithPath: folder.file("int/\(stemName).wav")))
      #expect(written == expected, "\(name) dither \(dither): stem \(stemName) differs from the master path's file")
      let back = try readAudio(folder.file("int/\(stemName).wav"))
      #expect(back.frames == 96_000 && back.channels == 2)
      #expect(peak(back.channel(0)) > 0.01, "\(stemName) has sound")
    }
  }
}

extension StemWriteTests {
  /// The descriptor this process holds open on `path` (from /proc/self/fd).
  static func descriptor(of path: String) throws -> Int32 {
    for entry in try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
      if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + entry), target == path {
        return try #require(Int32(entry))
      }
    }
    throw SoundFileError(path: path, reason: "no descriptor open on it")
  }

  @Test(
    "a converted write that fails part-way (the disk fills: the file's descriptor now refers to /dev/full) throws with the OS's reason, as sf_writef_float does"
  )
  func convertedWriteFailure() throws {
    let folder = try TemporaryFolder()
    let samples = [Float](repeating: 0.25, count: 2 * 32768)
    let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: samples.count * 4)
    defer { scratch.deallocate() }
    let full = open("/dev/full", O_WRONLY | O_CLOEXEC)
    #expect(full >= 0)
    defer { close(full) }
    for converted in [false, true] {
      let path = folder.file("stem-\(converted).wav")
      let writer = try SoundFileWriter(path: path, format: .wav16, sampleRate: 48000, channelCount: 2, exclusive: true)
      try samples.withUnsafeBufferPointer { buffer in
        func write() throws {
          if converted {
            try writer.writeConverted(buffer.baseAddress!, frameCount: 32768, scratch: scratch)
          } else {
            try writer.write(buffer.baseAddress!, frameCount: 32768)
          }
        }
        try write()  // the file takes the first chunk
        #expect(dup2(full, try Self.descriptor(of: path)) >= 0)
        do {
          try write()
          Issue.record("a write to a full disk did not fail (converted: \(converted))")
        } catch let error as SoundFileError {
          #expect(error.path == path && error.reason.hasPrefix("write failed: No space left on device"), "\(error.reason)")
        }
      }
    }
  }
}

// Float WAV stem files: `DirectWAVWriter` writes the data itself (O_DIRECT where the file system
// takes it) behind a header padded to 4096 bytes.
extension StemWriteTests {
  @Test(
    "DirectWAVWriter: aligned and unaligned writes read back exactly (libsndfile), the header's sizes and frame count are the file's, nothing is written over"
  )
  func directWriterFile() throws {
    let folder = try TemporaryFolder()
    let path = folder.file("direct.wav")
    // An aligned buffer (what the stem writer hands over), then writes that leave the file offset unaligned.
    let frames = 32768 + 1000 + 32768
    let buffer = UnsafeMutableRawPointer.allocate(byteCount: frames * 8, alignment: DirectWAVWriter.alignment)
    defer { buffer.deallocate() }
    let samples = buffer.bindMemory(to: Float.self, capacity: frames * 2)
    var random = SplitMix64(seed: 7)
    for i in 0..<(frames * 2) { samples[i] = Float(Double.random(in: -1.5...1.5, using: &random)) }
    let writer = try DirectWAVWriter(path: path, sampleRate: 44100, channelCount: 2)
    try writer.write(samples, count: 32768 * 8)
    try writer.write(samples + 32768 * 2, count: 1000 * 8)
    try writer.write(samples + 33768 * 2, count: 32768 * 8)
    try writer.finish()
    let back = try readAudio(path)
    #expect(back.frames == frames && back.channels == 2 && back.info.sampleRate == 44100)
    #expect(back.samples == Array(UnsafeBufferPointer(start: samples, count: frames * 2)), "the samples read back as written")
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    func u32(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24 }
    #expect(bytes.count == 4096 + frames * 8)
    #expect(String(decoding: bytes[0..<4], as: UTF8.self) == "RIFF" && u32(4) == bytes.count - 8)
    #expect(String(decoding: bytes[36..<40], as: UTF8.self) == "fact" && u32(44) == frames)
    #expect(String(decoding: bytes[4088..<4092], as: UTF8.self) == "data" && u32(4092) == frames * 8)
    // Created exclusively: an existing file is not written over.
    #expect(throws: SoundFileError.self) { _ = try DirectWAVWriter(path: path, sampleRate: 48000, channelCount: 2) }
    #expect(try readAudio(path).frames == frames)
  }

  @Test("DirectWAVWriter: a write to a full disk (the descriptor now refers to /dev/full) throws with the OS's reason")
  func directWriterFailure() throws {
    let folder = try TemporaryFolder()
    let path = folder.file("full.wav")
    let buffer = UnsafeMutableRawPointer.allocate(byteCount: 32768 * 8, alignment: DirectWAVWriter.alignment)
    defer { buffer.deallocate() }
    buffer.initializeMemory(as: UInt8.self, repeating: 0, count: 32768 * 8)
    let full = open("/dev/full", O_WRONLY | O_CLOEXEC)
    #expect(full >= 0)
    defer { close(full) }
    let writer = try DirectWAVWriter(path: path, sampleRate: 48000, channelCount: 2)
    try writer.write(buffer, count: 32768 * 8)
    #expect(dup2(full, try Self.descriptor(of: path)) >= 0)
    do {
      try writer.write(buffer, count: 32768 * 8)
      Issue.record("a write to a full disk did not fail")
    } catch {
      #expect(error.path == path && error.reason.hasPrefix("write failed: No space left on device"), "\(error.reason)")
    }
  }
}
