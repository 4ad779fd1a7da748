import Foundation
import StemdeckAudioFile
import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import Testing

// `render --stems` to integer WAV: the writer thread converts the samples itself and writes the
// bytes with `sf_write_raw` (`SoundFileWriter.writeConverted`), and draws the dither noise once
// for every stem. The files must be the ones libsndfile's own conversion wrote, byte for byte.

@Suite struct StemWriteTests {
  /// Every sample value that matters to the conversion: the dithered levels of 16 and 24 bits
  /// (every 16-bit level, every 7th 24-bit one and the ends), the clipping edges, values beyond
  /// full scale, infinities and NaN, tiny values and ties, and seeded noise over ±1.5.
  static func samples() -> [Float] {
    var values: [Float] = []
    for q in -32768...32767 { values.append(Float(Double(q) / 32767)) }
    for q in stride(from: -8_388_608, through: 8_388_607, by: 7) { values.append(Float(Double(q) / 8_388_607)) }
    for q in [-8_388_608, -8_388_607, -1, 0, 1, 8_388_606, 8_388_607] { values.append(Float(Double(q) / 8_388_607)) }
    values += [1, -1, 1.0000001, -1.0000001, 2, -2, 0.99999994, -0.99999994, .infinity, -.infinity, .nan, -.nan, 0, -0.0]
    values += [Float.leastNonzeroMagnitude, -Float.leastNonzeroMagnitude, 0.5 / 2_147_483_648, 1.5 / 2_147_483_648, -0.5 / 2_147_483_648]
    values += [0.5 / 32768, 1.5 / 32768, -0.5 / 32768, -1.5 / 32768, 0.5 / 8_388_608, -0.5 / 8_388_608]
    var random = SplitMix64(seed: 23)
    for _ in 0..<200_000 { values.append(Float(Double.random(in: -1.5...1.5, using: &random))) }
    if values.count % 2 == 1 { values.append(0.25) }
    return values
  }

  @Test(
    "16-, 24- and 32-bit WAV: the bytes converted here and written with sf_write_raw are the file sf_writef_float writes, and read back with libsndfile",
    arguments: [OutputFormat.wav16, .wav24, .wav32])
  func convertedEqualsLibsndfile(format: OutputFormat) throws {
    let folder = try TemporaryFolder()
    let samples = Self.samples()
    let frames = samples.count / 2
    let bytes = try #require(format.wavIntegerBytes)
    #expect(
      OutputFormat.wavFloat.wavIntegerBytes == nil && OutputFormat.flac16.wavIntegerBytes == nil && OutputFormat.aiff.wavIntegerBytes == nil
    )
    do {
      let old = try SoundFileWriter(path: folder.file("old.wav"), format: format, sampleRate: 48000, channelCount: 2)
      let new = try SoundFileWriter(path: folder.file("new.wav"), format: format, sampleRate: 48000, channelCount: 2)
      let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: samples.count * bytes)
      defer { scratch.deallocate() }
      try samples.withUnsafeBufferPointer { buffer in
        // In pieces of different sizes, as chunks are.
        var done = 0
        for piece in [1, 7, 32768, frames] where done < frames {
          let n = min(piece, frames - done)
          try old.write(buffer.baseAddress! + 2 * done, frameCount: n)
          try new.writeConverted(buffer.baseAddress! + 2 * done, frameCount: n, bytes: bytes, scratch: scratch)
          done += n
        }
      }
      try old.finish()
      try new.finish()
    }
    let oldData = try Data(contentsOf: URL(fileURLWithPath: folder.file("old.wav")))
    let newData = try Data(contentsOf: URL(fileURLWithPath: folder.file("new.wav")))
    #expect(oldData.count == newData.count && oldData.count > frames * 2 * bytes)
    if let first = zip(oldData, newData).enumerated().first(where: { $0.element.0 != $0.element.1 }) {
      let sample = (first.offset - (oldData.count - frames * 2 * bytes)) / bytes
      Issue.record(
        "\(format.description): first differing byte at \(first.offset) (sample \(sample): \(sample >= 0 && sample < samples.count ? samples[sample] : .nan))"
      )
    }
    let back = try readAudio(folder.file("new.wav"))
    #expect(back.frames == frames && back.channels == 2 && back.info.sampleRate == 48000)
    #expect(back.samples[0] == -1 && abs(back.samples[2 * 32767 + 1] - 1) < 1e-4, "full scale reads back")
  }

  /// Three stems rendered with `--stems` to `format`, and each stem again, alone, as a master
  /// (the path every master takes: `TPDFDither.apply` and `sf_writef_float`) from its float file.
  @Test(
    "--stems to 16-bit WAV (dithered), 24-bit WAV dithered and not: every stem file is, byte for byte, that stem rendered alone as a master",
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
      // …so its integer file is what the stem writer must write.
      let expected = try Data(contentsOf: URL(fileURLWithPath: folder.file("alone-\(stemName).wav")))
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
    let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: samples.count * 2)
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
            try writer.writeConverted(buffer.baseAddress!, frameCount: 32768, bytes: 2, scratch: scratch)
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
