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

  @Test(
    "render --stems to 16-bit: each stem file has its own TPDF sequence (errors uncorrelated, summed they add as noise), repeatable render to render"
  )
  func stemFilesDitherIndependently() throws {
    let folder = try TemporaryFolder()
    // Four stems of the same audio: with one shared sequence their files would be identical.
    let tone = Signal.sine(frequency: 997, sampleRate: 48000, frames: 48000, amplitude: 40.0 / 32768)
    try writeAudio(folder.file("tone.wav"), format: .wavFloat, channels: [tone, tone])
    let names = ["a", "b", "c", "d"]
    var session = Session()
    session.stems = names.map { stem($0, "tone.wav") }
    let sessionPath = folder.file("s.stemdeck")
    _ = try OfflineRenderer.render(
      session: session, sessionPath: sessionPath, outputPath: folder.file("mix.wav"), duration: nil,
      stemsFolder: folder.file("float"))
    for run in ["int", "again"] {
      _ = try OfflineRenderer.render(
        session: session, sessionPath: sessionPath, outputPath: folder.file("mix-\(run).wav"), duration: nil,
        stemsFolder: folder.file(run), format: .wav16)
    }
    // Each file's error (file − float stem), in LSB.
    var errors: [[Double]] = []
    for name in names {
      let exact = try readAudio(folder.file("float/\(name).wav")).samples
      let written = try readAudio(folder.file("int/\(name).wav")).samples
      #expect(written.count == 96000 && exact.count == 96000)
      errors.append(zip(written, exact).map { (Double($0) - Double($1)) * 32768 })
      let again = try Data(contentsOf: URL(fileURLWithPath: folder.file("again/\(name).wav")))
      #expect(again == (try Data(contentsOf: URL(fileURLWithPath: folder.file("int/\(name).wav")))), "\(name): not repeatable")
    }
    func rms(_ x: [Double]) -> Double { (x.reduce(0) { $0 + $1 * $1 } / Double(x.count)).squareRoot() }
    for (name, e) in zip(names, errors) {
      #expect(abs(rms(e) - 0.5) < 0.02, "stem \(name): error RMS \(rms(e)) LSB, want 0.5 (TPDF)")
    }
    // 96,000 samples: an uncorrelated pair's correlation has a standard deviation of 0.003.
    for i in errors.indices {
      for j in errors.indices where j > i {
        let r = zip(errors[i], errors[j]).reduce(0) { $0 + $1.0 * $1.1 } / (rms(errors[i]) * rms(errors[j]) * 96000)
        #expect(abs(r) < 0.02, "stems \(names[i]) and \(names[j]): error correlation \(r)")
      }
    }
    // Summed, four independent errors of 0.5 LSB RMS make 1.0 LSB (one shared sequence: 2.0).
    let sum = errors[0].indices.map { k in errors.reduce(0) { $0 + $1[k] } }
    #expect(abs(rms(sum) - 1.0) < 0.05, "the four stems' summed error: \(rms(sum)) LSB RMS, want 1.0")
    print("--stems 16-bit dither: per-stem error RMS \(errors.map(rms)), summed \(rms(sum)) LSB")
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
