import Foundation
import Testing
@testable import StemdeckEngine

/// The resampler's steady mode (issue 38): exact rows for the ratio a stem holds at rate 1 when
/// its file's rate is not the engine's. It must sound like the general path (or cleaner), not
/// depend on how calls are sized (live equals offline), and hand over to the general path without
/// a jump when the ratio starts to move.
@Suite struct SteadyResamplerTests {
  /// Rates (engine, file) a user meets: 44.1 kHz stems on 48 kHz, 48 kHz stems on 44.1 kHz,
  /// 96 kHz stems on 48 kHz, 22.05 kHz stems on 48 kHz.
  static let rates: [(output: Int, input: Int)] = [(48000, 44100), (44100, 48000), (48000, 96000), (48000, 22050)]

  /// Converts `input` (interleaved) through one converter, the ratio of call n from `schedule`,
  /// in calls of `block` output frames fed `feed` input frames at a time.
  static func convert(
    _ input: [Float], channels: Int, rates: (output: Int, input: Int), steady: Bool, avx2: Bool = true,
    block: Int = 128, feed: Int = 300, schedule: ((Int) -> Double)? = nil
  ) -> (output: [Float], stayedSteady: Bool) {
    let ratio = Double(rates.output) / Double(rates.input)
    var conv = SincResampler(
      channels: channels, minimumRatio: ratio / 2, steadyRates: steady ? rates : nil)
    conv.usesAVX2 = conv.usesAVX2 && avx2
    defer { conv.deallocate() }
    let frames = input.count / channels
    var out = [Float](repeating: 0, count: Int(Double(frames) * ratio * 2.2) * channels + 4096)
    var read = 0, made = 0, calls = 0
    input.withUnsafeBufferPointer { inp in
      out.withUnsafeMutableBufferPointer { o in
        while true {
          let n = Swift.min(feed, frames - read)
          let want = Swift.min(block, o.count / channels - made)
          if want <= 0 { break }
          let got = conv.process(
            input: inp.baseAddress! + read * channels, inputFrames: n,
            output: o.baseAddress! + made * channels, outputFrames: want,
            ratio: schedule?(calls) ?? ratio, endOfInput: read + n == frames)
          read += got.used
          made += got.generated
          calls += 1
          if got.used == 0 && got.generated == 0 { break }
        }
      }
    }
    return (Array(out[0..<(made * channels)]), conv.inSteady)
  }

  /// A mix of three tones and a slow one, different per channel.
  static func material(frames: Int, channels: Int) -> [Float] {
    var x = [Float](repeating: 0, count: frames * channels)
    for i in 0..<frames {
      for c in 0..<channels {
        let t = Double(i)
        x[i * channels + c] = Float(0.3 * sin(0.21 * t + Double(c)) + 0.2 * sin(1.9 * t) + 0.1 * sin(0.0071 * t))
      }
    }
    return x
  }

  static func largestDifference(_ a: [Float], _ b: [Float]) -> Float {
    var worst: Float = 0
    for i in 0..<Swift.min(a.count, b.count) { worst = Swift.max(worst, abs(a[i] - b[i])) }
    return worst
  }

  /// The exact rows give what the general path's interpolated table gives, to within its
  /// interpolation error, frame for frame and with the same length, mono and stereo.
  @Test(arguments: [1, 2])
  func matchesTheGeneralPath(channels: Int) {
    for rates in Self.rates {
      let x = Self.material(frames: 30000, channels: channels)
      let steady = Self.convert(x, channels: channels, rates: rates, steady: true)
      let general = Self.convert(x, channels: channels, rates: rates, steady: false)
      #expect(steady.stayedSteady, "\(rates): left steady mode at a held ratio")
      #expect(steady.output.count == general.output.count, "\(rates): \(steady.output.count) samples against \(general.output.count)")
      let worst = Self.largestDifference(steady.output, general.output)
      #expect(worst < 3e-5, "\(rates), \(channels) channel(s): differs from the general path by up to \(worst)")
    }
  }

  /// Every tone the general path is tested on comes out at least as clean (within 0.5 dB, or past
  /// 140 dB where single precision ends) and at least 99 dB above its residual (docs/sound.md).
  @Test func asCleanAsTheGeneralPath() {
    for rates in Self.rates {
      let ratio = Double(rates.output) / Double(rates.input)
      for fraction in [0.05, 0.4, 0.75, 17200.0 / 22050, 0.8] {
        let cycles = fraction * 0.5 * Swift.min(1, ratio)
        let x = SincResamplerTests.tone(cycles, frames: 24000)
        let a = SincResamplerTests.fit(
          Self.convert(x, channels: 2, rates: rates, steady: true).output, channel: 0, channels: 2, cycles: cycles / ratio)
        let b = SincResamplerTests.fit(
          Self.convert(x, channels: 2, rates: rates, steady: false).output, channel: 0, channels: 2, cycles: cycles / ratio)
        #expect(a.snr >= Swift.min(b.snr - 0.5, 140), "\(rates) tone \(fraction): \(a.snr) dB against the general path's \(b.snr) dB")
        #expect(a.snr >= 99, "\(rates) tone \(fraction): residual only \(a.snr) dB below the tone")
        #expect(abs(a.amplitude / 0.5 - 1) < 0.002, "\(rates) tone \(fraction): gain \(a.amplitude / 0.5)")
      }
    }
  }

  /// How the calls are sized does not change one bit: a live period of 128 frames and an
  /// offline block of 1,000 fed in other pieces give the same output.
  @Test func callSizesDoNotMatter() {
    let x = Self.material(frames: 40000, channels: 2)
    for rates in Self.rates {
      let a = Self.convert(x, channels: 2, rates: rates, steady: true, block: 128, feed: 300).output
      let b = Self.convert(x, channels: 2, rates: rates, steady: true, block: 1000, feed: 77).output
      #expect(a == b, "\(rates): the output depends on the call sizes (largest difference \(Self.largestDifference(a, b)))")
    }
  }

  /// A glide away from the steady ratio and back leaves steady mode without a jump: the output
  /// follows a converter that never had steady mode to within the general table's error, all
  /// the way through the switch and the glide.
  @Test func leavesSteadyModeWithoutAJump() {
    let rates = (output: 48000, input: 44100)
    let ratio = 48000.0 / 44100
    let schedule: (Int) -> Double = { call in
      if call < 100 { return ratio }
      return ratio / (1 + 0.2 * Swift.min(1, Double(call - 100) / 50))  // to rate 1.2 over 50 calls
    }
    let x = Self.material(frames: 48000, channels: 2)
    let steady = Self.convert(x, channels: 2, rates: rates, steady: true, schedule: schedule)
    let general = Self.convert(x, channels: 2, rates: rates, steady: false, schedule: schedule)
    #expect(!steady.stayedSteady, "still in steady mode after the ratio moved")
    #expect(steady.output.count == general.output.count)
    let worst = Self.largestDifference(steady.output, general.output)
    #expect(worst < 3e-5, "differs from the general path by up to \(worst) across the switch")
  }

  /// The AVX2 loop (when this processor has it) computes what the SSE loop does, to single
  /// precision's rounding (FMA rounds once where SSE rounds twice).
  @Test func avx2MatchesSSE() {
    let x = Self.material(frames: 20000, channels: 2)
    let probe = SincResampler(channels: 2, minimumRatio: 0.5, steadyRates: (48000, 44100))
    let hasAVX2 = probe.usesAVX2
    probe.deallocate()
    #expect(hasAVX2 == SincResampler.processorHasAVX2FMA(), "the converter's choice does not follow the processor")
    for rates in Self.rates {
      let a = Self.convert(x, channels: 2, rates: rates, steady: true, avx2: true).output
      let b = Self.convert(x, channels: 2, rates: rates, steady: true, avx2: false).output
      #expect(a.count == b.count)
      let worst = Self.largestDifference(a, b)
      #expect(worst < 1e-6, "\(rates): the AVX2 loop differs from SSE by up to \(worst)")
    }
  }
}
