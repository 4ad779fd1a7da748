import Foundation
import StemdeckAudioFile
import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import Testing

/// A `fast` stem that holds a rate converts with zita's VResampler set up for that ratio; the
/// sinc keeps glides and the bypass ratio 1 (StemdeckEngine, HeldConverter.swift). Real files,
/// the real mixer, rendered offline with the test as the audio thread.
@Suite struct HeldConverterTests {
  static let sr = 48000.0
  /// Two tones, 1 kHz and 7 kHz, at −8 and −10.5 dBFS: known at every fractional position.
  static let tones: [(frequency: Double, amplitude: Double)] = [(1000, 0.4), (7000, 0.3)]

  static func tone(at position: Double) -> Double {
    tones.reduce(0) { $0 + $1.amplitude * sin(2 * Double.pi * $1.frequency * position / sr) }
  }

  static func writeTones(_ folder: TemporaryFolder, seconds: Double = 3) throws -> String {
    let frames = Int(seconds * sr)
    let samples = (0..<frames).map { Float(tone(at: Double($0))) }
    let path = folder.file("tones.wav")
    try writeAudio(path, format: .wavFloat, sampleRate: Int(sr), channels: [samples])
    return path
  }

  /// A rig with the tones' stem (hard left: the left channel is the stem as converted) playing.
  static func rig(_ path: String, rate: Double = 1, zita: Bool = true) throws -> MixerRig {
    let rig = MixerRig()
    rig.mixer.heldConverters.enabled = zita
    try rig.mixer.stems.add(
      path: path,
      settings: stem("t", path) {
        $0.pan = -1; $0.rate = rate
      })
    try rig.mixer.transport.play()
    return rig
  }

  /// Largest difference from the tones at `positions(n)` over output frames `range`.
  static func errorFromTones(_ out: [Float], _ range: Range<Int>, position: (Int) -> Double) -> Double {
    var worst = 0.0
    for n in range { worst = max(worst, abs(Double(out[n]) - tone(at: position(n)))) }
    return worst
  }

  @Test("a rate held at 1.2 or 0.9 renders the tones at exactly rate × the output frame, cleaner than the sinc", arguments: [1.2, 0.9])
  func heldRateIsExact(rate: Double) throws {
    let folder = try TemporaryFolder()
    let path = try Self.writeTones(folder)
    let zita = try Self.rig(path, rate: rate)
    let sinc = try Self.rig(path, rate: rate, zita: false)
    #expect(zita.mixer.heldConverters.made == 1 && sinc.mixer.heldConverters.made == 0)
    let frames = 96000
    let a = zita.render(frames).left, b = sinc.render(frames).left
    let range = 2000..<Int(Double(frames) * min(1, 2.8 / 2 / rate))  // away from the start and the end
    let zitaError = Self.errorFromTones(a, range) { Double($0) * rate }
    let sincError = Self.errorFromTones(b, range) { Double($0) * rate }
    print("rate \(rate): zita \(decibels(zitaError)) dB, sinc \(decibels(sincError)) dB from the exact tones")
    #expect(decibels(zitaError) < -95, "zita differs from the exact tones by \(decibels(zitaError)) dB")
    #expect(zitaError < sincError, "zita \(decibels(zitaError)) dB, sinc \(decibels(sincError)) dB")
  }
}
