import Foundation
import StemdeckAudioFile
import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import Testing

/// `render --dither` (issue 17): TPDF dither before rounding to 24 bits.
@Suite struct DitherTests {
  /// One LSB of a 24-bit file.
  static let lsb = 1.0 / 8_388_608

  /// A stereo 1 kHz sine of `amplitude` LSB rendered to 24-bit FLAC, with or without dither;
  /// returns the input and the file read back, in LSB.
  func render(amplitude: Double, dither: Bool, name: String, in folder: TemporaryFolder) throws -> (input: [Double], output: Stereo) {
    let frames = 48000
    let sine = (0..<frames).map { amplitude * Self.lsb * sin(2 * Double.pi * 1000 * Double($0) / 48000) }
    let floats = sine.map { Float($0) }
    try writeAudio(folder.file("quiet.wav"), format: .wavFloat, channels: [floats, floats])
    var session = Session()
    session.stems = [stem("quiet", "quiet.wav")]
    let output = folder.file(name)
    _ = try OfflineRenderer.render(
      session: session, sessionPath: folder.file("session.stemdeck"), outputPath: output,
      duration: nil, dither: dither)
    return (floats.map { Double($0) / Self.lsb }, Stereo(try readAudio(output)))
  }

  @Test("24-bit render: without dither a 0.4 LSB sine rounds to silence; with TPDF dither it is kept, the error is 0.5 LSB RMS noise")
  func tpdfDither() throws {
    let folder = try TemporaryFolder()
    let plain = try render(amplitude: 0.4, dither: false, name: "plain.flac", in: folder)
    #expect(
      plain.output.left.allSatisfy { $0 == 0 } && plain.output.right.allSatisfy { $0 == 0 },
      "an undithered 0.4 LSB sine should round to silence")

    let dithered = try render(amplitude: 0.4, dither: true, name: "dither.flac", in: folder)
    let out = dithered.output.left.map { Double($0) / Self.lsb }
    let input = dithered.input
    // The tone survives at its level (its DFT bin over the whole second).
    var re = 0.0, im = 0.0
    for n in out.indices {
      let phase = 2 * Double.pi * 1000 * Double(n) / 48000
      re += out[n] * cos(phase)
      im += out[n] * sin(phase)
    }
    let tone = 2 * (re * re + im * im).squareRoot() / Double(out.count)
    #expect(abs(tone - 0.4) < 0.02, "tone after dither: \(tone) LSB, want 0.4")
    // The error is TPDF noise (variance 1/6 LSB²) plus rounding (1/12): 0.5 LSB RMS, mean 0,
    // never beyond 1.5 LSB, and every sample on the 24-bit grid.
    let error = zip(out, input).map { $0 - $1 }
    let rmsError = (error.reduce(0) { $0 + $1 * $1 } / Double(error.count)).squareRoot()
    let mean = error.reduce(0, +) / Double(error.count)
    #expect(abs(rmsError - 0.5) < 0.02, "error RMS \(rmsError) LSB, want 0.5")
    #expect(abs(mean) < 0.01, "error mean \(mean) LSB")
    #expect(error.map(abs).max()! < 1.5)
    #expect(out.allSatisfy { abs($0 - $0.rounded()) < 1e-3 }, "samples off the 24-bit grid")
    #expect(dithered.output.left != dithered.output.right, "the channels get independent dither")
    print("TPDF dither, 0.4 LSB sine: tone \(tone) LSB, error RMS \(rmsError) LSB, mean \(mean) LSB")

    // Seeded: the same render writes the same samples.
    let again = try render(amplitude: 0.4, dither: true, name: "again.flac", in: folder)
    #expect(again.output.left == dithered.output.left && again.output.right == dithered.output.right)
  }

  @Test("--dither on a 32-bit float WAV render is refused with the reason")
  func ditherNeedsInteger() throws {
    let folder = try TemporaryFolder()
    try writeAudio(folder.file("a.wav"), format: .wavFloat, channels: [Signal.constant(0.1, frames: 4800)])
    var session = Session()
    session.stems = [stem("a", "a.wav")]
    #expect(throws: MixerError.self) {
      _ = try OfflineRenderer.render(
        session: session, sessionPath: folder.file("s.stemdeck"),
        outputPath: folder.file("out.wav"), duration: nil, dither: true)
    }
    do {
      _ = try OfflineRenderer.render(
        session: session, sessionPath: folder.file("s.stemdeck"),
        outputPath: folder.file("out.wav"), duration: nil, dither: true)
    } catch {
      #expect(flagged(error).contains("--dither is for integer outputs (.flac, .aiff: 24-bit)"), "\(error)")
      #expect(error.text.options == [.dither])
    }
    #expect(!FileManager.default.fileExists(atPath: folder.file("out.wav")), "nothing written")
  }
}
