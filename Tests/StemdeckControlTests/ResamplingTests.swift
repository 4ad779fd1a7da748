import Foundation
import StemdeckAudioFile
import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import Testing

/// A 44.1 kHz stem in a 48 kHz render: timing, pitch and level survive the conversion.
@Suite struct ResamplingTests {
  static let scale = 48000.0 / 44100.0

  @Test(
    "a 44.1 kHz stem lasts its length scaled to 48 kHz (±2 frames), then is silent",
    arguments: [ResamplerQuality.fast, .best])
  func lengthScales(quality: ResamplerQuality) throws {
    let folder = try TemporaryFolder()
    // Silence, a 0.5 plateau, silence: the plateau's edges mark the time mapping at two points.
    let signal = Signal.constant(0, frames: 1000) + Signal.constant(0.5, frames: 40000) + Signal.constant(0, frames: 3100)
    #expect(signal.count == 44100)
    try writeAudio(folder.file("dc.wav"), format: .wavFloat, sampleRate: 44100, channels: [signal])
    var session = Session()
    session.quality = quality
    session.stems = [stem("dc", "dc.wav") { $0.pan = -1 }]

    // Without --duration the render lasts the stem: 1 s.
    let natural = try renderOffline(session, in: folder, name: "natural.wav")
    #expect(natural.summary.frames == 48000)

    let (_, output) = try renderOffline(session, in: folder, duration: 1.1, name: "long.wav")
    let up = try #require(crossing(output.left, level: 0.25, rising: true))
    let down = try #require(crossing(output.left, level: 0.25, rising: false, from: Int(up) + 100))
    #expect(abs(up - 1000 * Self.scale) <= 2, "plateau starts at \(up), expected \(1000 * Self.scale)")
    #expect(abs(down - 41000 * Self.scale) <= 2, "plateau ends at \(down), expected \(41000 * Self.scale)")
    #expect(abs((down - up) - 40000 * Self.scale) <= 2)
    // The plateau's level is kept (away from the edges' ringing).
    let middle = output.left[Int(up) + 500..<Int(down) - 500]
    #expect(middle.allSatisfy { abs($0 - 0.5) < 1e-3 }, "plateau level off by \(peak(middle.map { $0 - 0.5 }[...]))")
    // After the stem's 48000 frames (plus the converter's tail) the output is silent.
    #expect(peak(output.left[48100...]) < 1e-4)
    #expect(peak(output.right) == 0, "pan -1 puts nothing on the right")
  }

  @Test(
    "a 1 kHz sine at 44.1 kHz stays 1 kHz (±0.5 Hz) and keeps its RMS (±0.1 dB)",
    arguments: [ResamplerQuality.fast, .best])
  func pitchAndLevel(quality: ResamplerQuality) throws {
    let folder = try TemporaryFolder()
    let input = Signal.sine(frequency: 1000, sampleRate: 44100, frames: 44100, amplitude: 0.5)
    try writeAudio(folder.file("sine.wav"), format: .wavFloat, sampleRate: 44100, channels: [input])
    var session = Session()
    session.quality = quality
    session.stems = [stem("sine", "sine.wav") { $0.pan = -1 }]
    let (summary, output) = try renderOffline(session, in: folder)
    #expect(summary.frames == 48000)

    let steady = 4800..<43200  // 0.1 s … 0.9 s: away from the start and end transients
    let frequency = estimatedFrequency(output.left, sampleRate: 48000, in: steady)
    #expect(abs(frequency - 1000) < 0.5, "estimated \(frequency) Hz")
    let inputRMS = rms(input[...])  // 1000 whole periods
    let outputRMS = rms(output.left[steady])  // 800 whole periods at 48 kHz
    let difference = decibels(outputRMS / inputRMS)
    #expect(abs(difference) < 0.1, "RMS differs by \(difference) dB")
  }

  @Test("a stem at rate 0.5 at 48 kHz plays an octave down for twice as long")
  func varispeedHalf() throws {
    let folder = try TemporaryFolder()
    let input = Signal.sine(frequency: 800, sampleRate: 48000, frames: 24000, amplitude: 0.5)
    try writeAudio(folder.file("sine.wav"), format: .wavFloat, channels: [input])
    var session = Session()
    session.stems = [
      stem("sine", "sine.wav") {
        $0.pan = -1; $0.rate = 0.5
      }
    ]
    let (summary, output) = try renderOffline(session, in: folder, duration: 1.2)
    #expect(summary.frames == 57600)
    let frequency = estimatedFrequency(output.left, sampleRate: 48000, in: 4800..<43200)
    #expect(abs(frequency - 400) < 0.5, "estimated \(frequency) Hz")
    let difference = decibels(rms(output.left[4800..<43200]) / rms(input[...]))
    #expect(abs(difference) < 0.1, "RMS differs by \(difference) dB")
    #expect(peak(output.left[40000..<47000]) > 0.45, "still playing just before 1 s")
    #expect(peak(output.left[48200...]) < 1e-3, "finished after 1 s")
  }

  @Test("a rate change while playing (leaving the bypass) is continuous: linear converter")
  func rateChangeWhilePlayingLinear() throws {
    try rateChangeIsContinuous(quality: .linear)
  }

  @Test(
    "a rate change while playing (leaving the bypass) is continuous: sinc converters",
    arguments: [ResamplerQuality.fast, .best])
  func rateChangeWhilePlayingSinc(quality: ResamplerQuality) throws {
    try rateChangeIsContinuous(quality: quality)
  }

  func rateChangeIsContinuous(quality: ResamplerQuality) throws {
    let folder = try TemporaryFolder()
    let input = Signal.sine(frequency: 100, sampleRate: 48000, frames: 96000, amplitude: 0.8)
    try writeAudio(folder.file("sine.wav"), format: .wavFloat, channels: [input])
    let rig = MixerRig(quality: quality)
    try rig.mixer.stems.add(path: folder.file("sine.wav"), settings: stem("sine", "sine.wav") { $0.pan = -1 })
    try rig.mixer.transport.play()
    let before = rig.render(4096)
    #expect(firstMismatch(before.left[...], input[0..<4096]) == nil, "rate 1 is a bit-exact copy")
    try rig.mixer.stems.setRate("sine", 0.9)
    let after = rig.render(8192)
    let all = before.left + after.left
    let normal = 2 * Double.pi * 100 / 48000 * 0.8  // largest step of the sine at rate 1
    let step = maxStep(all, in: 3800..<4600)
    #expect(step <= 1.5 * normal, "step \(step) at the rate change (normal \(normal))")
    // And the level does not dip or jump around the change.
    let around = all[4096..<4700]
    #expect(peak(around) > 0.75 && peak(around) < 0.85, "peak \(peak(around)) after the change")
    #expect(abs(estimatedFrequency(after.left, sampleRate: 48000, in: 2000..<8000) - 90) < 0.5)
  }

  @Test("seeking a resampled (44.1 kHz) stem keeps it in step with the transport")
  func seekResampledStem() throws {
    let folder = try TemporaryFolder()
    try writeAudio(
      folder.file("sine.wav"), format: .wavFloat, sampleRate: 44100,
      channels: [Signal.sine(frequency: 1000, sampleRate: 44100, frames: 44100, amplitude: 0.5)])
    let straight = MixerRig()
    try straight.mixer.stems.add(path: folder.file("sine.wav"), settings: stem("s", "sine.wav") { $0.pan = -1 })
    try straight.mixer.transport.play()
    let reference = straight.render(28800)  // 0 … 0.6 s
    let seeking = MixerRig()
    try seeking.mixer.stems.add(path: folder.file("sine.wav"), settings: stem("s", "sine.wav") { $0.pan = -1 })
    try seeking.mixer.transport.seek(toSeconds: 0.5)
    try seeking.mixer.transport.play()
    let out = seeking.render(4800)  // 0.5 … 0.6 s
    // After the fade-in and the converter's start-up, the waveform matches the straight play's.
    let error = maxAbsError(Array(out.left[600...]), Array(reference.left[(24000 + 600)...]))
    #expect(error < 1e-3, "differs by \(error) from playing straight through")
  }
}
