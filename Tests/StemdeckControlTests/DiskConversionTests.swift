import CSoxr
import Foundation
import StemdeckAudioFile
import StemdeckControl
import StemdeckEngine
import StemdeckSession
import StemdeckTestSupport
import Synchronization
import Testing

/// A 44.1 kHz stem on a 48 kHz engine is converted on the disk side (DiskStream+Conversion.swift):
/// its ring carries 48 kHz frames and at rate 1 its voice mixes them as they are. These tests
/// compare what the mixer plays with the file converted here in one go by the quality's converter
/// (stemdeck's sinc for `fast`, soxr HQ for `medium`, VHQ for `best`), bit for bit: from the start,
/// after a seek, through a loop region's passes, across a jump and a raised loop count, and
/// whatever the slices the disk reads and converts in.
@Suite struct DiskConversionTests {
  static let fileRate = 44100
  static let engineRate = 48000

  /// The qualities whose 44.1 kHz stems convert on the disk side.
  static let qualities: [ResamplerQuality] = [.fast, .medium, .best]

  /// The file's frames converted to 48 kHz in one call, as a freshly reset converter of `quality`
  /// does: stemdeck's sinc (`fast`), or soxr made here (`medium` HQ, `best` VHQ) and given the
  /// whole input, then flushed.
  static func converted(_ input: [Float], quality: ResamplerQuality = .fast) -> [Float] {
    if quality != .fast { return soxrConverted(input, veryHigh: quality == .best) }
    let minimumRatio = Double(engineRate) / Double(fileRate) / SettingRange.rate.upperBound
    let rows = SteadyRows(output: engineRate, input: fileRate, reach: SincResampler.reach(minimumRatio: minimumRatio))
    var sinc = SincResampler(channels: 1, minimumRatio: minimumRatio, steadyRows: rows)
    defer {
      sinc.deallocate()
      rows?.deallocate()
    }
    var output = [Float](repeating: 0, count: input.count * 2 + 64)
    var used = 0, made = 0
    input.withUnsafeBufferPointer { i in
      output.withUnsafeMutableBufferPointer { o in
        while true {
          let r = sinc.process(
            input: i.baseAddress! + used, inputFrames: input.count - used, output: o.baseAddress! + made,
            outputFrames: o.count - made, ratio: Double(engineRate) / Double(fileRate), endOfInput: true)
          used += r.used
          made += r.generated
          if r.generated == 0 { break }
        }
      }
    }
    return Array(output[0..<made])
  }

  static func soxrConverted(_ input: [Float], veryHigh: Bool) -> [Float] {
    var error: UnsafePointer<CChar>?
    guard let soxr = stemdeck_soxr_create(Double(fileRate), Double(engineRate), 1, veryHigh ? 1 : 0, &error) else {
      Issue.record("soxr: \(error.map { String(cString: $0) } ?? "?")")
      return []
    }
    defer { soxr_delete(soxr) }
    var output = [Float](repeating: 0, count: input.count * 2 + 64)
    var made = 0
    input.withUnsafeBufferPointer { i in
      output.withUnsafeMutableBufferPointer { o in
        var used = 0, done = 0
        _ = soxr_process(soxr, i.baseAddress!, input.count, &used, o.baseAddress!, o.count, &done)
        #expect(used == input.count)
        made = done
        while true {
          _ = soxr_process(soxr, nil, 0, nil, o.baseAddress! + made, o.count - made, &done)
          made += done
          if done == 0 { break }
        }
      }
    }
    return Array(output[0..<made])
  }

  /// A mono 44.1 kHz noise file (every frame its own value) in `folder`, and its samples.
  static func noiseFile(_ folder: TemporaryFolder, frames: Int, seed: UInt64 = 38) throws -> (path: String, samples: [Float]) {
    let samples = Signal.noise(frames: frames, amplitude: 0.5, seed: seed)
    let path = folder.file("noise.wav")
    try writeAudio(path, format: .wavFloat, sampleRate: fileRate, channels: [samples])
    return (path, samples)
  }

  @Test(
    "a 44.1 kHz stem at rate 1 plays the file converted once, bit for bit, whatever the block size",
    arguments: [(ResamplerQuality.fast, 256), (.fast, 100), (.fast, 1024), (.medium, 100), (.best, 1024)])
  func rateOneIsTheConversion(quality: ResamplerQuality, block: Int) throws {
    let folder = try TemporaryFolder()
    let file = try Self.noiseFile(folder, frames: 22050)
    let expected = Self.converted(file.samples, quality: quality)
    #expect(expected.count == 24000)
    let rig = MixerRig(quality: quality)
    try rig.mixer.stems.add(path: file.path, settings: stem("n", "noise.wav") { $0.pan = -1 })
    try rig.mixer.transport.play()
    let out = rig.render(26000, block: block)
    #expect(firstMismatch(out.left[0..<24000], expected[...]) == nil, "differs from the conversion")
    #expect(peak(out.left[24000...]) == 0, "silent after the stem's end")
    #expect(peak(out.right) == 0)
  }

  @Test("a seek in a 44.1 kHz stem lands on its file frame; the position report says so", arguments: qualities)
  func seekLandsOnFileFrame(quality: ResamplerQuality) throws {
    let folder = try TemporaryFolder()
    let file = try Self.noiseFile(folder, frames: 44100)
    // 0.25 s is file frame 11,025: the stream starts there, through a reset converter.
    let expected = Self.converted(Array(file.samples[11025...]), quality: quality)
    let rig = MixerRig(quality: quality)
    try rig.mixer.stems.add(path: file.path, settings: stem("n", "noise.wav") { $0.pan = -1 })
    try rig.mixer.transport.seek(toSeconds: 0.25)
    try rig.mixer.transport.play()
    let out = rig.render(9600)
    // After the transport's fade-in (a seek's few milliseconds) the samples are the conversion's.
    #expect(firstMismatch(out.left[600...], expected[600..<9600]) == nil, "differs from the conversion from frame 11,025")
    let position = try rig.mixer.stems.status("n").positionInFile
    // (The heard position sums rounded per-block file frames: within a frame of exact.)
    #expect(abs(position - (0.25 + 0.2)) <= 1.5 / 44100, "position in file \(position)")
  }

  @Test("a loop region of a 44.1 kHz stem repeats its file frames: the conversion of the passes back to back", arguments: qualities)
  func loopRegionPasses(quality: ResamplerQuality) throws {
    let folder = try TemporaryFolder()
    let file = try Self.noiseFile(folder, frames: 22050)
    // 0.1 … 0.2 s is file frames 4,410 ..< 8,820; three passes.
    let region = Array(file.samples[4410..<8820])
    let expected = Self.converted(region + region + region, quality: quality)
    let rig = MixerRig(quality: quality)
    try rig.mixer.stems.add(
      path: file.path,
      settings: stem("n", "noise.wav") {
        $0.pan = -1
        $0.loopStart = 0.1
        $0.loopEnd = 0.2
        $0.loops = 2
      })
    try rig.mixer.transport.play()
    let out = rig.render(expected.count + 2000, block: 128)
    #expect(firstMismatch(out.left[0..<expected.count], expected[...]) == nil, "differs from the passes converted")
    #expect(peak(out.left[expected.count...]) == 0, "silent after the third pass")
    // Each pass is 4,410 file frames: after 1.5 passes' worth of output the report is mid-region.
    let rig2 = MixerRig(quality: quality)
    try rig2.mixer.stems.add(
      path: file.path,
      settings: stem("n", "noise.wav") {
        $0.loopStart = 0.1
        $0.loopEnd = 0.2
        $0.loops = 2
      })
    try rig2.mixer.transport.play()
    _ = rig2.render(7200)  // 6,615 file frames: the second pass, 2,205 frames in
    let status = try rig2.mixer.stems.status("n")
    #expect(status.loopIndex == 1)
    #expect(abs(status.positionInFile - 0.15) <= 1.5 / 44100, "position in file \(status.positionInFile)")
  }

  @Test("a quantised jump in a 44.1 kHz stem: the old stream up to the bar line, the mark's file frame from it on", arguments: qualities)
  func jumpLandsOnFileFrame(quality: ResamplerQuality) throws {
    let folder = try TemporaryFolder()
    let file = try Self.noiseFile(folder, frames: 352_800)  // 8 s
    let rig = MixerRig(quality: quality)
    try rig.mixer.stems.add(path: file.path, settings: stem("n", "noise.wav") { $0.pan = -1 })
    rig.mixer.tempo = Tempo(bpm: 120, beatsPerBar: 4)
    try rig.mixer.marks.add("chorus", at: 6)
    try rig.mixer.transport.play()
    var out = rig.render(52_800)
    let jump = try #require(try rig.mixer.marks.goto(mark: "chorus", landing: .bar))
    #expect(jump.atSeconds == 2, "lands on bar 2's line (transport frame 96,000)")
    out.append(rig.render(96_000 + 4_800 - out.count))
    let before = Self.converted(Array(file.samples[0..<100_000]), quality: quality)
    let after = Self.converted(Array(file.samples[264_600..<274_600]), quality: quality)  // 6 s is file frame 264,600
    #expect(firstMismatch(out.left[0..<96_000], before[0..<96_000]) == nil, "the old stream up to the bar line")
    #expect(firstMismatch(out.left[96_000...], after[0..<4_800]) == nil, "the mark's file frame from the bar line on")
    #expect(try rig.mixer.stems.status("n").underruns == 0)
  }

  @Test("a loop count raised while a 44.1 kHz stem plays continues it seamlessly", arguments: qualities)
  func raisedLoopCount(quality: ResamplerQuality) throws {
    let folder = try TemporaryFolder()
    let file = try Self.noiseFile(folder, frames: 44100)
    let expected = Self.converted(file.samples + file.samples, quality: quality)
    let rig = MixerRig(quality: quality)
    try rig.mixer.stems.add(path: file.path, settings: stem("n", "noise.wav") { $0.pan = -1 })
    try rig.mixer.transport.play()
    var out = rig.render(9600)  // the disk has read the whole file by now; its converter's tail waits
    try rig.mixer.stems.setLoops("n", 1)
    out.append(rig.render(expected.count + 1000 - 9600))
    #expect(firstMismatch(out.left[0..<expected.count], expected[...]) == nil, "differs from two passes converted")
    #expect(peak(out.left[expected.count...]) == 0)
  }

  @Test("a rate change while a 44.1 kHz stem plays (leaving the bypass) is continuous", arguments: qualities)
  func rateChangeIsContinuous(quality: ResamplerQuality) throws {
    let folder = try TemporaryFolder()
    let input = Signal.sine(frequency: 100, sampleRate: 44100, frames: 88200, amplitude: 0.8)
    try writeAudio(folder.file("sine.wav"), format: .wavFloat, sampleRate: 44100, channels: [input])
    let rig = MixerRig(quality: quality)
    try rig.mixer.stems.add(path: folder.file("sine.wav"), settings: stem("sine", "sine.wav") { $0.pan = -1 })
    try rig.mixer.transport.play()
    let before = rig.render(4096)
    try rig.mixer.stems.setRate("sine", 0.9)
    let after = rig.render(8192)
    let all = before.left + after.left
    let normal = 2 * Double.pi * 100 / 48000 * 0.8
    let step = maxStep(all, in: 3800..<4600)
    #expect(step <= 1.5 * normal, "step \(step) at the rate change (normal \(normal))")
    #expect(abs(estimatedFrequency(after.left, sampleRate: 48000, in: 2000..<8000) - 90) < 0.5)
    // The heard position follows the rate: 4,096 frames at 1, then 8,192 at 0.9 (in file frames).
    let position = try rig.mixer.stems.status("sine").positionInFile
    let expected = (4096 + 8192 * 0.9) / 48000
    #expect(abs(position - expected) < 2.0 / 44100, "position in file \(position), expected \(expected)")
  }

  @Test("the disk writes the same converted frames whatever slices it reads and converts in", arguments: qualities)
  func slicingDoesNotMatter(quality: ResamplerQuality) throws {
    let folder = try TemporaryFolder()
    let file = try Self.noiseFile(folder, frames: 30000)
    let expected = Self.converted(file.samples, quality: quality)
    for slice in [37, 1000, 32768] {
      let got = try Self.streamAll(file.path, slice: slice, quality: quality)
      #expect(got.count == expected.count, "slice \(slice): \(got.count) frames")
      #expect(firstMismatch(got[...], expected[...]) == nil, "slice \(slice): differs from the conversion in one go")
    }
  }

  /// Services one stream in slices of `slice` file frames, reading its ring 500 frames at a time
  /// (and publishing the read counter, as the voice does), until its end is marked.
  static func streamAll(_ path: String, slice: Int, quality: ResamplerQuality) throws -> [Float] {
    let minimumRatio = Double(engineRate) / Double(fileRate) / SettingRange.rate.upperBound
    let rows = try #require(
      SteadyRows(output: engineRate, input: fileRate, reach: SincResampler.reach(minimumRatio: minimumRatio)))
    defer { rows.deallocate() }
    let shared = UnsafeMutablePointer<StemShared>.allocate(capacity: 1)
    shared.initialize(to: StemShared(loops: 0))
    defer {
      shared.deinitialize(count: 1)
      shared.deallocate()
    }
    shared.pointee.requestedEpoch.store(0, ordering: .releasing)
    let ends = SPSCRing.make(minimumCapacity: 8192, of: Float.self)
    let stream = DiskStream(
      file: try SoundFile(readingFrom: path), producer: ends.producer, shared: StemSharedRef(shared),
      conversion: quality == .fast
        ? .sinc(rows: rows, minimumRatio: minimumRatio)
        : .soxr(
          try SoxrConverter.make(
            path: path, fileRate: fileRate, engineRate: Double(engineRate), channels: 1, veryHigh: quality == .best)))
    var consumer = ends.consumer
    #expect(stream.convertsFileRate)
    var out: [Float] = []
    var chunk = [Float](repeating: 0, count: 500)
    for _ in 0..<10_000 {
      _ = stream.service(maxFrames: slice)
      let got = chunk.withUnsafeMutableBufferPointer { consumer.read(into: $0) }
      out += chunk[0..<got]
      shared.pointee.readCounter.store(consumer.readCounter, ordering: .relaxed)
      if shared.pointee.endEpoch.load(ordering: .acquiring) == 0
        && consumer.readCounter >= shared.pointee.endCounter.load(ordering: .relaxed)
      {
        return out
      }
    }
    Issue.record("slice \(slice): the stream never ended")
    return out
  }
}
