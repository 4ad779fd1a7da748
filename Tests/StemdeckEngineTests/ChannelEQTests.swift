import Foundation
import Testing
@testable import StemdeckEngine

/// The channel EQ (DSP/ChannelEQ.swift): its RBJ coefficients against the cookbook's stated
/// responses, evaluated here with complex arithmetic of our own; the processor's measured
/// response; bit-exact bypass; and sweeps without clicks.
@Suite("Channel EQ")
struct ChannelEQTests {
  static let rate = 48000.0

  /// |H(e^jw)| in dB of a biquad, computed here (independent of `Biquad.magnitudeDecibels`).
  static func response(_ c: Biquad, _ f: Double, rate: Double = rate) -> Double {
    let w = 2 * Double.pi * f / rate
    // H = (b0 + b1 z^-1 + b2 z^-2) / (1 + a1 z^-1 + a2 z^-2), z^-1 = e^-jw.
    func poly(_ p0: Double, _ p1: Double, _ p2: Double) -> (Double, Double) {
      (p0 + p1 * cos(w) + p2 * cos(2 * w), -(p1 * sin(w) + p2 * sin(2 * w)))
    }
    let n = poly(c.b0, c.b1, c.b2), d = poly(1, c.a1, c.a2)
    return 10 * log10((n.0 * n.0 + n.1 * n.1) / (d.0 * d.0 + d.1 * d.1))
  }

  @Test("peaking: the set gain at its frequency, 0 dB far away")
  func peaking() {
    for gain in [-18.0, -4, 3, 12, 18] {
      for (f0, q) in [(1000.0, 1.4), (120.0, 0.707), (8000.0, 4.0)] {
        let c = Biquad.peaking(frequency: f0, gain: gain, q: q, sampleRate: Self.rate)
        #expect(abs(Self.response(c, f0) - gain) < 0.01, "peak \(f0) Hz \(gain) dB q \(q)")
        #expect(abs(Self.response(c, f0 / 100)) < 0.05)
        #expect(abs(c.magnitudeDecibels(at: f0, sampleRate: Self.rate) - gain) < 0.01)
      }
    }
  }

  @Test("shelves: full gain beyond the shelf, half of it (in dB) at the shelf frequency")
  func shelves() {
    for gain in [-18.0, -6, 3, 18] {
      let low = Biquad.lowShelf(frequency: 120, gain: gain, sampleRate: Self.rate)
      #expect(abs(Self.response(low, 120) - gain / 2) < 0.01)
      #expect(abs(Self.response(low, 1) - gain) < 0.01)
      #expect(abs(Self.response(low, 20000)) < 0.01)
      let high = Biquad.highShelf(frequency: 8000, gain: gain, sampleRate: Self.rate)
      #expect(abs(Self.response(high, 8000) - gain / 2) < 0.01)
      #expect(abs(Self.response(high, 23999) - gain) < 0.01)
      #expect(abs(Self.response(high, 20)) < 0.01)
    }
  }

  @Test("high-pass: -3.01 dB at its frequency for both slopes, 12 or 24 dB/oct below")
  func highPass() {
    let halfPower = 10 * log10(0.5)
    for sections in [1, 2] {
      var total = 0.0, octaveDown = 0.0, passband = 0.0
      for s in 0..<sections {
        let c = Biquad.highPass(frequency: 80, q: Biquad.butterworthQ(section: s, of: sections), sampleRate: Self.rate)
        total += Self.response(c, 80)
        octaveDown += Self.response(c, 10) - Self.response(c, 20)
        passband += Self.response(c, 2000)
      }
      #expect(abs(total - halfPower) < 0.01, "\(sections) sections")
      #expect(abs(octaveDown + 12 * Double(sections)) < 0.2)  // an octave well below the corner
      #expect(abs(passband) < 0.01)
    }
  }

  /// A sine of `frequency` through `eq`, then its gain over the last half (steady state, a whole
  /// number of cycles: the RMS), in dB.
  static func measuredGain(_ eq: inout ChannelEQ, frequency: Double) -> Double {
    let n = 48000
    var buffer = (0..<n).map { Float(0.25 * sin(2 * Double.pi * frequency * Double($0) / rate)) }
    buffer.withUnsafeMutableBufferPointer { eq.process(left: $0.baseAddress!, right: nil, stride: 1, count: n) }
    let tail = buffer[(n / 2)...]
    let rms = (tail.reduce(0) { $0 + Double($1) * Double($1) } / Double(tail.count)).squareRoot()
    return 20 * log10(rms * 2.0.squareRoot() / 0.25)
  }

  @Test("the processor's measured response matches the product of its sections")
  func processorResponse() {
    var p = EQParameters()
    p.enabled = true
    p.highPassFrequency = 60; p.highPassSections = 2
    p.lowFrequency = 150; p.lowGain = 4
    p.midFrequency = 1000; p.midGain = -6; p.midQ = 1.4
    p.highFrequency = 6000; p.highGain = 3
    let sections = [
      Biquad.highPass(frequency: 60, q: Biquad.butterworthQ(section: 0, of: 2), sampleRate: Self.rate),
      Biquad.highPass(frequency: 60, q: Biquad.butterworthQ(section: 1, of: 2), sampleRate: Self.rate),
      Biquad.lowShelf(frequency: 150, gain: 4, sampleRate: Self.rate),
      Biquad.peaking(frequency: 1000, gain: -6, q: 1.4, sampleRate: Self.rate),
      Biquad.highShelf(frequency: 6000, gain: 3, sampleRate: Self.rate)
    ]
    for f in [100.0, 150, 440, 1000, 3000, 6000, 12000] {
      var eq = ChannelEQ(sampleRate: Self.rate)
      eq.set(p, immediate: true)
      let expected = sections.reduce(0) { $0 + Self.response($1, f) }
      let measured = Self.measuredGain(&eq, frequency: f)
      #expect(abs(measured - expected) < 0.02, "\(f) Hz: measured \(measured) dB, expected \(expected) dB")
    }
  }

  @Test("bypass is bit-exact: off, flat, and after fading out of an active setting")
  func bypassBitExact() {
    var rng = SystemRandomNumberGenerator()
    let original = (0..<4096).map { _ in Float.random(in: -1...1, using: &rng) }
    func run(_ eq: inout ChannelEQ, _ input: [Float]) -> [Float] {
      var b = input
      b.withUnsafeMutableBufferPointer { eq.process(left: $0.baseAddress!, right: $0.baseAddress! + 1, stride: 2, count: 2048) }
      return b
    }
    var eq = ChannelEQ(sampleRate: Self.rate)
    #expect(run(&eq, original) == original)  // never set
    var p = EQParameters()
    p.enabled = true
    eq.set(p, immediate: true)  // flat and no high-pass
    #expect(!eq.isActive)
    #expect(run(&eq, original) == original)
    p.midGain = 6
    p.enabled = false
    eq.set(p, immediate: false)  // off with a band set
    #expect(run(&eq, original) == original)
    // On, then flat again while playing: it fades out, then leaves the samples alone.
    p.enabled = true
    eq.set(p, immediate: false)
    #expect(eq.isActive)
    #expect(run(&eq, original) != original)
    p.midGain = 0
    eq.set(p, immediate: false)
    _ = run(&eq, original)  // 2048 frames: more than the 10 ms fade
    #expect(!eq.isActive)
    #expect(run(&eq, original) == original)
  }

  /// The largest sample-to-sample step of a 1 kHz sine through `eq` while `change` runs every
  /// `every` frames (a multiple of the 128-frame blocks).
  static func largestStep(_ eq: inout ChannelEQ, frames: Int, every: Int, change: (Int, inout ChannelEQ) -> Void) -> [Float] {
    var out = [Float](repeating: 0, count: frames)
    let f = 1000.0
    for i in 0..<frames { out[i] = Float(0.1 * sin(2 * Double.pi * f * Double(i) / rate)) }
    var done = 0
    while done < frames {
      if done % every == 0 { change(done, &eq) }
      let n = min(128, frames - done)
      out.withUnsafeMutableBufferPointer { eq.process(left: $0.baseAddress! + done, right: nil, stride: 1, count: n) }
      done += n
    }
    return out
  }

  static func maxStep(_ x: [Float]) -> Double {
    var m = 0.0
    for i in 1..<x.count { m = max(m, abs(Double(x[i]) - Double(x[i - 1]))) }
    return m
  }

  @Test("a gain jump from -18 to +18 dB glides: no step larger than the loudest sine's slope")
  func gainSweepDoesNotClick() {
    var p = EQParameters()
    p.enabled = true; p.midFrequency = 1000; p.midGain = -18; p.midQ = 1
    var eq = ChannelEQ(sampleRate: Self.rate)
    eq.set(p, immediate: true)
    let out = Self.largestStep(&eq, frames: 24064, every: 12032) { frame, eq in
      if frame == 12032 { p.midGain = 18; eq.set(p, immediate: false) }
    }
    // A sine of amplitude A at f moves at most 2π f A / rate per sample; A here is 0.1 × +18 dB.
    let bound = 2 * Double.pi * 1000 * 0.1 * pow(10, 18.0 / 20) / Self.rate
    #expect(Self.maxStep(out) <= bound * 1.05, "largest step \(Self.maxStep(out)), bound \(bound)")
    // And it did get there: the last block is at +18 dB.
    let peak = out[20000...].map { abs(Double($0)) }.max()!
    #expect(abs(20 * log10(peak / 0.1) - 18) < 0.05)
  }

  @Test("switching a +18 dB EQ off crossfades within the slope; switched at once it would click")
  func switchingOffCrossfades() {
    let bound = 2 * Double.pi * 1000 * 0.1 * pow(10, 18.0 / 20) / Self.rate
    for smoothed in [true, false] {
      var p = EQParameters()
      p.enabled = true; p.midFrequency = 1000; p.midGain = 18; p.midQ = 1
      var eq = ChannelEQ(sampleRate: Self.rate)
      eq.set(p, immediate: true)
      let out = Self.largestStep(&eq, frames: 24064, every: 12032) { frame, eq in
        // `immediate` is what a change gets while nothing sounds: no fade (the measure can fail).
        if frame == 12032 { p.enabled = false; eq.set(p, immediate: !smoothed) }
      }
      if smoothed {
        #expect(Self.maxStep(out) <= bound * 1.05, "largest step \(Self.maxStep(out)), bound \(bound)")
      } else {
        #expect(Self.maxStep(out) > bound * 1.5, "largest step \(Self.maxStep(out)), bound \(bound)")
      }
      #expect(!eq.isActive)
      #expect(abs(Double(out[24000]) - 0.1 * sin(2 * Double.pi * 1000 * 24000 / Self.rate)) < 1e-6)
    }
  }

  @Test("sweeps of the mid frequency, the high-pass and switching on and off stay within the slope")
  func frequencySweep() {
    var p = EQParameters()
    p.enabled = true; p.midFrequency = 100; p.midGain = 12; p.midQ = 2
    var eq = ChannelEQ(sampleRate: Self.rate)
    eq.set(p, immediate: true)
    // The mid sweeps 100 Hz → 10 kHz in steps every 256 frames (a knob turned), crossing the sine.
    let out = Self.largestStep(&eq, frames: 48000, every: 256) { frame, eq in
      p.midFrequency = 100 * pow(100, Double(frame) / 48000)
      eq.set(p, immediate: false)
    }
    let bound = 2 * Double.pi * 1000 * 0.1 * pow(10, 12.0 / 20) / Self.rate
    #expect(Self.maxStep(out) <= bound * 1.05, "largest step \(Self.maxStep(out)), bound \(bound)")

    // High-pass on at 500 Hz, swept down to 20 Hz, switched off; the EQ switched off and on.
    var q = EQParameters()
    q.enabled = true
    var eq2 = ChannelEQ(sampleRate: Self.rate)
    eq2.set(q, immediate: true)
    let out2 = Self.largestStep(&eq2, frames: 48000, every: 512) { frame, eq in
      switch frame {
      case 0: q.highPassFrequency = 500; q.highPassSections = 2
      case 24064: q.highPassFrequency = 0
      case 30208: q.lowGain = 18; q.lowFrequency = 2000
      case 36352: q.enabled = false
      case 40448: q.enabled = true
      default: if q.highPassFrequency > 0 { q.highPassFrequency = 500 * pow(20.0 / 500, Double(frame) / 24000) }
      }
      eq.set(q, immediate: false)
    }
    let bound2 = 2 * Double.pi * 1000 * 0.1 * pow(10, 18.0 / 20) / Self.rate
    #expect(Self.maxStep(out2) <= bound2 * 1.05, "largest step \(Self.maxStep(out2)), bound \(bound2)")
  }

  @Test("switching the high-pass between 12 and 24 dB/oct glides within the slope; switched at once it would click")
  func slopeSwitchGlides() {
    // A 1 kHz sine through a high-pass at 1 kHz: there the 12 dB/oct filter turns the phase by
    // 90°, the 24 dB/oct one by 180° (both pass 0.707 of it), so a jump from one to the other
    // moves the output by about its amplitude at once.
    let bound = 2 * Double.pi * 1000 * 0.1 / Self.rate
    for smoothed in [true, false] {
      var p = EQParameters()
      p.highPassFrequency = 1000; p.highPassSections = 1
      var eq = ChannelEQ(sampleRate: Self.rate)
      eq.set(p, immediate: true)
      let out = Self.largestStep(&eq, frames: 24064, every: 6016) { frame, eq in
        // 12 → 24 at 6016, back to 12 at 12032, to 24 again at 18048.
        guard frame > 0 else { return }
        p.highPassSections = p.highPassSections == 1 ? 2 : 1
        eq.set(p, immediate: !smoothed)
      }
      if smoothed {
        #expect(Self.maxStep(out) <= bound * 1.05, "largest step \(Self.maxStep(out)), bound \(bound)")
      } else {
        #expect(Self.maxStep(out) > bound * 1.5, "largest step \(Self.maxStep(out)), bound \(bound)")
      }
      // It arrives: the last 2000 frames are what a 24 dB/oct filter set from the start gives.
      var reference = ChannelEQ(sampleRate: Self.rate)
      reference.set(p, immediate: true)
      let settled = Self.largestStep(&reference, frames: 24064, every: 24064) { _, _ in }
      let last = (22064..<24064).map { abs(Double(out[$0]) - Double(settled[$0])) }.max()!
      #expect(last < 1e-6, "\(last) from the 24 dB/oct filter's output")
      #expect(eq.slope == 1 && eq.sections == 2)
    }
  }
}
