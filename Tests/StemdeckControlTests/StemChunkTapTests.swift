import Foundation
import StemdeckAudioFile
@testable import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import Testing

// `render --stems` with the stems' taps written interleaved straight into the stem writer's chunk
// by the mix (`RenderState.tapStride` 2, Renderer/StemTaps.swift): every file must be, sample for
// sample, what the planar taps and the interleave after each block give.

@Suite struct StemChunkTapTests {
  /// A mono stem (its fallback path), a resampled stereo stem, stereo stems starting inside a
  /// block (0.25 s and 0.1003 s), one of them in a bus (a planar tap beside the chunk's) when
  /// `bus`.
  static func session(in folder: TemporaryFolder, masterVolume: Double, bus: Bool) throws -> Session {
    try writeAudio(
      folder.file("bass.wav"), format: .wavFloat,
      channels: [Signal.sine(frequency: 110, sampleRate: 48000, frames: 72_000, amplitude: 0.4)])
    try writeAudio(
      folder.file("pad.flac"), format: .flac, sampleRate: 44100,
      channels: [Signal.noise(frames: 66_150, amplitude: 0.2, seed: 1), Signal.noise(frames: 66_150, amplitude: 0.2, seed: 2)])
    try writeAudio(
      folder.file("lead.wav"), format: .wavFloat,
      channels: [Signal.noise(frames: 30_001, amplitude: 0.3, seed: 3), Signal.noise(frames: 30_001, amplitude: 0.3, seed: 4)])
    var s = Session()
    s.masterVolume = masterVolume
    s.stems = [
      stem("bass", "bass.wav") { $0.pan = -0.4 },
      stem("pad", "pad.flac") {
        $0.volume = 0.5; $0.pan = 0.3
      },
      stem("lead", "lead.wav") { $0.startOffset = 0.25 },
      stem("late", "lead.wav") {
        $0.startOffset = 0.1003; $0.volume = 1.7
      }
    ]
    if bus {
      s.buses = [BusSettings(name: "grp")]
      s.stems[3].bus = "grp"
    }
    return s
  }

  @Test(
    "stem taps written interleaved into the writer's chunk give the files of the planar taps bit for bit (mono, resampled and late stems, odd block sizes, master volume, a bus, 16-bit)",
    arguments: [
      (1.0, 1024, "wav", false), (0.7, 1000, "wav", false), (0.7, 333, "wav16", false), (1.0, 333, "wav", true),
      (0.8, 1024, "wav", true)
    ])
  func chunkTapsEqualPlanar(masterVolume: Double, blockFrames: Int, format: String, bus: Bool) throws {
    let folder = try TemporaryFolder()
    let session = try Self.session(in: folder, masterVolume: masterVolume, bus: bus)
    let chosen: OutputFormat = format == "wav16" ? .wav16 : .wavFloat
    var files: [[String: [Float]]] = []
    for interleaved in [true, false] {
      let tag = interleaved ? "chunk" : "planar"
      _ = try OfflineRenderer.render(
        session: session, sessionPath: folder.file("s.stemdeck"), outputPath: folder.file("\(tag).wav"), duration: nil,
        blockFrames: blockFrames, stemsFolder: folder.file(tag), format: chosen, interleavedStemTaps: interleaved)
      var got = ["master": try readAudio(folder.file("\(tag).wav")).samples]
      for name in try FileManager.default.contentsOfDirectory(atPath: folder.file(tag)) {
        got[name] = try readAudio(folder.file("\(tag)/\(name)")).samples
      }
      files.append(got)
    }
    let names = bus ? ["bass.wav", "grp.wav", "lead.wav", "master", "pad.wav"] : ["bass.wav", "late.wav", "lead.wav", "master", "pad.wav"]
    #expect(files[0].keys.sorted() == names && files[1].keys.sorted() == names)
    for name in names {
      let a = try #require(files[0][name]), b = try #require(files[1][name])
      #expect(a.count == b.count && a.count == 2 * 72_000, "\(name)")
      // Bit patterns, so that a -0 for a +0 or a NaN counts too.
      let differing = zip(a, b).filter { $0.0.bitPattern != $0.1.bitPattern }.count
      #expect(differing == 0, "\(name): \(differing) samples differ between the chunk's taps and the planar ones")
      #expect(a.contains { $0 != 0 }, "\(name) has sound")
    }
    // The late stem is exactly silent before its start, in its part of the chunk too (16-bit
    // stems are dithered: noise there).
    let lead = try #require(files[0]["lead.wav"])
    if chosen == .wavFloat { #expect(lead[0..<(2 * 12_000)].allSatisfy { $0 == 0 } && lead[2 * 12_000] != 0) }
  }

  @Test("the stems' taps go into the chunk only where nothing comes between the mix and the file")
  func chunkWhenNothingBetween() {
    let slots: [Int32] = [0, 5, 64, 70]  // two stems, then past maxVoices (a bus's, an input's)
    #expect(OfflineRenderer.tapsInChunk(slots, maxVoices: 64, interleaved: true, limited: false, gain: 1) == [true, true, false, false])
    #expect(OfflineRenderer.tapsInChunk(slots, maxVoices: 64, interleaved: true, limited: true, gain: 1) == [false, false, false, false])
    #expect(OfflineRenderer.tapsInChunk(slots, maxVoices: 64, interleaved: true, limited: false, gain: 0.5) == [false, false, false, false])
    #expect(OfflineRenderer.tapsInChunk(slots, maxVoices: 64, interleaved: false, limited: false, gain: 1) == [false, false, false, false])
  }
}
