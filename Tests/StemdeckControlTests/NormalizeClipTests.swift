import Foundation
import StemdeckAudioFile
import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import Testing

// A normalised integer file is never written clipped (issue 37, item 8): the CLI gives the
// normaliser a −1 dBTP ceiling by default (StemdeckConsoleTests' NormalizeCeilingTests); a caller
// of the renderer that asks for no ceiling gets an error instead of a clipped file.
@Suite struct NormalizeClipTests {
  @Test(
    "render --normalize with no ceiling to 16- and 24-bit: a gain that clips is refused, nothing is written; float WAV takes the overs")
  func clippedIntegerRefused() throws {
    let folder = try TemporaryFolder()
    let session = try LoudnessTests.session(LoudnessTests.drums(seconds: 4), in: folder)
    let path = folder.file("s.stemdeck")
    for name in ["out16.wav", "out24.flac"] {
      let format: OutputFormat = name.hasSuffix(".wav") ? .wav16 : .flac
      let words = ["--normalize: the gain of +", "samples over full scale", "-bit file cannot hold", "--true-peak", "nothing was written"]
      expectMixerError(words) { () throws(MixerError) in
        _ = try OfflineRenderer.render(
          session: session, sessionPath: path, outputPath: folder.file(name), duration: nil,
          normalize: .init(target: -14), format: format)
      }
      #expect(!FileManager.default.fileExists(atPath: folder.file(name)), "\(name): nothing written")
    }
    #expect(folder.entries().sorted() == ["tone.wav"], "no temporary file left: \(folder.entries())")
    // Float WAV holds samples over full scale: written, the overs counted.
    let float = try OfflineRenderer.render(
      session: session, sessionPath: path, outputPath: folder.file("out.wav"), duration: nil, normalize: .init(target: -14))
    #expect(float.clippedSamples > 0)
    // With a ceiling the same normalisation is written, nothing over full scale.
    let ceiled = try OfflineRenderer.render(
      session: session, sessionPath: path, outputPath: folder.file("ceiled.wav"), duration: nil,
      normalize: .init(target: -14, truePeakCeiling: OfflineRenderer.Normalize.defaultCeiling), format: .wav16)
    #expect(ceiled.clippedSamples == 0)
    #expect(try #require(ceiled.loudness).truePeakDecibels <= -1.0)
  }
}
