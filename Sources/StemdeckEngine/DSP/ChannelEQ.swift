// A console channel's EQ: a high-pass filter (12 or 24 dB/oct) and three bands (low shelf,
// peaking mid with Q, high shelf), biquads from the RBJ Audio EQ Cookbook formulas, run in
// Double. Owned by whatever strip has one (a stem's voice, the master; later a bus or an input):
// nothing here knows about stems. docs/architecture.md, *Channel EQ*.

/// One biquad section's coefficients, normalised by a0 (a0 = 1).
public struct Biquad: BitwiseCopyable, Sendable, Equatable {
  public var b0: Double, b1: Double, b2: Double, a1: Double, a2: Double

  /// The identity (passes the signal unchanged).
  public static let identity = Biquad(b0: 1, b1: 0, b2: 0, a1: 0, a2: 0)

  @_noLocks
  public init(b0: Double, b1: Double, b2: Double, a1: Double, a2: Double) {
    self.b0 = b0; self.b1 = b1; self.b2 = b2; self.a1 = a1; self.a2 = a2
  }

  @_noLocks
  init(_ b0: Double, _ b1: Double, _ b2: Double, _ a0: Double, _ a1: Double, _ a2: Double) {
    let k = 1 / a0
    self.init(b0: b0 * k, b1: b1 * k, b2: b2 * k, a1: a1 * k, a2: a2 * k)
  }

  /// |H(e^jw)| in dB at `frequency` (control thread and tests: it calls libm directly).
  public func magnitudeDecibels(at frequency: Double, sampleRate: Double) -> Double {
    let w = 2 * Double.pi * frequency / sampleRate
    let c1 = cosImpl(w), s1 = sinImpl(w), c2 = cosImpl(2 * w), s2 = sinImpl(2 * w)
    let nr = b0 + b1 * c1 + b2 * c2, ni = -(b1 * s1 + b2 * s2)
    let dr = 1 + a1 * c1 + a2 * c2, di = -(a1 * s1 + a2 * s2)
    let power = (nr * nr + ni * ni) / (dr * dr + di * di)
    return 10 * log10Impl(power)
  }

  // MARK: RBJ Audio EQ Cookbook (Robert Bristow-Johnson): the formulas, written here

  /// High-pass with quality `q` (1/√2: Butterworth, 12 dB/oct).
  @_noLocks
  public static func highPass(frequency: Double, q: Double, sampleRate: Double) -> Biquad {
    let w0 = 2 * Double.pi * frequency / sampleRate
    let c = RealtimeC.cos(w0), alpha = RealtimeC.sin(w0) / (2 * q)
    return Biquad((1 + c) / 2, -(1 + c), (1 + c) / 2, 1 + alpha, -2 * c, 1 - alpha)
  }

  /// Peaking EQ: `gain` dB at `frequency`, bandwidth set by `q`.
  @_noLocks
  public static func peaking(frequency: Double, gain: Double, q: Double, sampleRate: Double) -> Biquad {
    let a = RealtimeC.pow(10, gain / 40)
    let w0 = 2 * Double.pi * frequency / sampleRate
    let c = RealtimeC.cos(w0), alpha = RealtimeC.sin(w0) / (2 * q)
    return Biquad(1 + alpha * a, -2 * c, 1 - alpha * a, 1 + alpha / a, -2 * c, 1 - alpha / a)
  }

  /// Low shelf of `gain` dB below `frequency` (shelf slope S = 1: half the gain at `frequency`).
  @_noLocks
  public static func lowShelf(frequency: Double, gain: Double, sampleRate: Double) -> Biquad {
    shelf(frequency: frequency, gain: gain, sampleRate: sampleRate, high: false)
  }

  /// High shelf of `gain` dB above `frequency` (shelf slope S = 1: half the gain at `frequency`).
  @_noLocks
  public static func highShelf(frequency: Double, gain: Double, sampleRate: Double) -> Biquad {
    shelf(frequency: frequency, gain: gain, sampleRate: sampleRate, high: true)
  }

  /// The cookbook's shelves, written once: the high shelf's formulas are the low shelf's with
  /// cos(w0) negated and b1 and a1 negated (exact in floating point: only signs change).
  @_noLocks
  static func shelf(frequency: Double, gain: Double, sampleRate: Double, high: Bool) -> Biquad {
    let a = RealtimeC.pow(10, gain / 40)
    let w0 = 2 * Double.pi * frequency / sampleRate
    let c = high ? -RealtimeC.cos(w0) : RealtimeC.cos(w0)
    // S = 1: alpha = sin(w0)/2 · sqrt((A + 1/A)(1/S − 1) + 2) = sin(w0)/√2.
    let alpha = RealtimeC.sin(w0) * ChannelEQ.halfRoot2
    let k = 2 * RealtimeC.pow(10, gain / 80) * alpha  // 2·√A·alpha
    let odd: Double = high ? -1 : 1
    return Biquad(
      a * ((a + 1) - (a - 1) * c + k), odd * (2 * a * ((a - 1) - (a + 1) * c)), a * ((a + 1) - (a - 1) * c - k),
      (a + 1) + (a - 1) * c + k, odd * (-2 * ((a - 1) + (a + 1) * c)), (a + 1) + (a - 1) * c - k)
  }

  /// The quality of each section of a Butterworth high-pass made of `sections` biquads (1: 12
  /// dB/oct, 2: 24 dB/oct): 1/(2 sin((2k+1)π/4n)) for a filter of order n = 2 × sections.
  public static func butterworthQ(section: Int, of sections: Int) -> Double {
    if sections == 1 { return ChannelEQ.halfRoot2 }
    return section == 0 ? 0.541_196_100_146_197 : 1.306_562_964_876_376_8
  }
}

/// Which part of a channel EQ a command sets.
public enum EQBandID: Int8, BitwiseCopyable, Sendable {
  /// The high-pass filter: frequency 0 turns it off; `q` carries its sections (1 or 2).
  case highPass = 0
  case low = 1, mid = 2, high = 3
}

/// What a channel EQ is set to, as the renderer holds it (the session's `EQSettings`, in numbers).
public struct EQParameters: BitwiseCopyable, Sendable, Equatable {
  /// On by default, like the session's `EQSettings`: a band command alone makes it sound.
  public var enabled = true
  /// Hz; 0: the high-pass is off.
  public var highPassFrequency = 0.0
  /// Biquad sections of the high-pass: 1 (12 dB/oct) or 2 (24 dB/oct).
  public var highPassSections = 1
  public var lowFrequency = 100.0, lowGain = 0.0
  public var midFrequency = 1000.0, midGain = 0.0, midQ = 0.707
  public var highFrequency = 8000.0, highGain = 0.0

  public init() {}

  /// True when the EQ changes nothing: off, or every band flat and the high-pass off.
  public var isBypassed: Bool {
    @_noLocks get { !enabled || (highPassFrequency == 0 && lowGain == 0 && midGain == 0 && highGain == 0) }
  }

  /// Sets one band from a command's values.
  @_noLocks
  public mutating func set(_ band: EQBandID, frequency: Double, gain: Double, q: Double) {
    switch band {
    case .highPass:
      highPassFrequency = frequency
      highPassSections = q >= 2 ? 2 : 1
    case .low: lowFrequency = frequency; lowGain = gain
    case .mid: midFrequency = frequency; midGain = gain; midQ = q
    case .high: highFrequency = frequency; highGain = gain
    }
  }
}

/// One biquad's coefficients and its state for up to two channels (transposed direct form II).
@usableFromInline
struct EQStage {
  @usableFromInline var c = Biquad.identity
  @usableFromInline var z1L = 0.0, z2L = 0.0, z1R = 0.0, z2R = 0.0

  @_noLocks @inline(__always) @usableFromInline
  mutating func clear() { z1L = 0; z2L = 0; z1R = 0; z2R = 0 }

  @_noLocks @inline(__always) @usableFromInline
  mutating func left(_ x: Double) -> Double { Self.tick(c, x, &z1L, &z2L) }

  @_noLocks @inline(__always) @usableFromInline
  mutating func right(_ x: Double) -> Double { Self.tick(c, x, &z1R, &z2R) }

  /// One sample through biquad `c` with one channel's state `z1`, `z2`.
  @_noLocks @inline(__always) @usableFromInline
  static func tick(_ c: Biquad, _ x: Double, _ z1: inout Double, _ z2: inout Double) -> Double {
    let y = c.b0 * x + z1
    z1 = c.b1 * x - c.a1 * y + z2
    z2 = c.b2 * x - c.a2 * y
    return y
  }

  /// `right(x)` or `left(x)`.
  @_noLocks @inline(__always) @usableFromInline
  mutating func filter(_ x: Double, right isRight: Bool) -> Double {
    isRight ? right(x) : left(x)
  }
}

/// A realtime channel EQ for one strip of one or two channels.
///
/// - Smoothing: a new setting glides there (frequencies and Q in octaves, gains in dB, linearly
///   over `glideSeconds`), with the coefficients recomputed every `updateFrames` frames while it
///   moves. Turning the EQ (or its high-pass) on or off crossfades the filtered signal with the
///   dry one over `fadeSeconds`; a band that starts from flat glides up from 0 dB. Changing
///   the high-pass's slope (12 ↔ 24 dB/oct) glides too: the second section comes in from 8
///   octaves under the frequency (where it passes the signal all but untouched) while the first
///   section's Q moves from 1/√2 to the 24 dB/oct filter's, and leaves the same way back.
/// - Bypass: while off (or flat with the high-pass off) and faded out, `process` returns at once
///   and leaves the samples untouched, bit for bit.
/// - Realtime: safe; arithmetic and libm (cos, sin, pow through `RealtimeC`) when coefficients
///   are recomputed. Proven by `@_noLocks`.
/// - Thread: made on the control thread; then only the audio thread touches it.
public struct ChannelEQ {
  public static let glideSeconds = 0.030
  public static let fadeSeconds = 0.010
  /// Frames between coefficient updates while a setting glides.
  public static let updateFrames = 16
  /// 1/√2 (= √2/2).
  public static let halfRoot2 = 0.707_106_781_186_547_5
  /// `fadeSeconds` and `glideSeconds` in frames.
  @usableFromInline let fadeFrames: Double
  @usableFromInline let glideFrames: Double

  public let sampleRate: Double
  /// Where the settings are going.
  public private(set) var target = EQParameters()
  /// True while the EQ runs (it is on, or fading out).
  public private(set) var isActive = false
  // Gliding values: log2 of frequencies and Q, gains in dB.
  @usableFromInline var hpfLog = 0.0, lowLog = 0.0, lowGain = 0.0, midLog = 0.0, midGain = 0.0, qLog = 0.0
  @usableFromInline var highLog = 0.0, highGain = 0.0
  @usableFromInline var glideSteps = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
  @usableFromInline var glideLeft = 0
  /// Frames until the next coefficient update while gliding.
  @usableFromInline var updateIn = 0
  // The wet share (1: fully filtered) and the high-pass's share, with their per-frame steps.
  @usableFromInline var wet = 0.0, wetStep = 0.0, wetTarget = 0.0
  @usableFromInline var hpfWet = 0.0, hpfWetStep = 0.0, hpfWetTarget = 0.0
  /// Which sections run (a band runs from the moment it is not flat until the EQ is bypassed).
  @usableFromInline var hpfOn = false, lowOn = false, midOn = false, highOn = false
  /// The high-pass's slope set last (1: 12 dB/oct, 2: 24).
  @usableFromInline var sections = 1
  /// Where the high-pass's slope is: 0 is 12 dB/oct (one section), 1 is 24 (two); between, while
  /// it glides from one to the other, the second section runs (`computeCoefficients`).
  @usableFromInline var slope = 0.0, slopeStep = 0.0
  /// Octaves under the high-pass frequency at which the second section starts and ends a glide.
  static let slopeOctaves = 8.0
  @usableFromInline var hpf1 = EQStage(), hpf2 = EQStage(), low = EQStage(), mid = EQStage(), high = EQStage()

  public init(sampleRate: Double) {
    self.sampleRate = sampleRate
    fadeFrames = Swift.max(1, (ChannelEQ.fadeSeconds * sampleRate).rounded())
    glideFrames = Swift.max(1, (ChannelEQ.glideSeconds * sampleRate).rounded())
  }

  /// Makes `parameters` the target. `immediate` (nothing is sounding: the transport is stopped,
  /// or the strip has not played yet) jumps there; otherwise it glides and fades.
  @_noLocks
  public mutating func set(_ parameters: EQParameters, immediate: Bool) {
    target = parameters
    let bypass = parameters.isBypassed
    if immediate {
      if bypass {
        deactivate()
        return
      }
      if !isActive { clearState() }
      isActive = true
      jumpToTarget()
      wet = 1; wetStep = 0; wetTarget = 1
      hpfWet = hpfWetTarget; hpfWetStep = 0
      return
    }
    if !isActive {
      if bypass { return }
      // Starting from bypass: the filters start where they are going, and fade in.
      isActive = true
      clearState()
      jumpToTarget()
      hpfWet = hpfWetTarget; hpfWetStep = 0
      wet = 0
      fadeWet(to: 1)
      return
    }
    fadeWet(to: bypass ? 0 : 1)
    let hpfWanted = parameters.enabled && parameters.highPassFrequency > 0
    if hpfWanted && !hpfOn {
      // The high-pass starts at its frequency and fades in.
      hpfOn = true
      hpf1.clear(); hpf2.clear()
      hpfLog = log2(parameters.highPassFrequency)
      hpfWet = 0
      // It fades in: its slope need not glide.
      slope = parameters.highPassSections == 2 ? 1 : 0
    } else if parameters.highPassSections == 2 && slope == 0 {
      // The second section glides in from rest (`startGlide`).
      hpf2.clear()
    }
    sections = parameters.highPassSections
    fadeHighPass(to: hpfWanted ? 1 : 0)
    // A band that starts from flat starts at its frequency (at 0 dB it is the identity).
    if !lowOn && parameters.lowGain != 0 { lowOn = true; low.clear(); lowLog = log2(parameters.lowFrequency); lowGain = 0 }
    if !midOn && parameters.midGain != 0 {
      midOn = true; mid.clear(); midLog = log2(parameters.midFrequency); qLog = log2(parameters.midQ); midGain = 0
    }
    if !highOn && parameters.highGain != 0 {
      highOn = true; high.clear(); highLog = log2(parameters.highFrequency); highGain = 0
    }
    startGlide()
  }

  /// Clears the filters' memory (after a seek: the next audio does not continue the last).
  @_noLocks
  public mutating func clearState() {
    hpf1.clear(); hpf2.clear(); low.clear(); mid.clear(); high.clear()
  }

  /// Filters `count` frames in place: `left` and (for two channels) `right`, `stride` floats apart
  /// (2 for interleaved stereo, 1 for separate buffers or mono). Does nothing while bypassed.
  @_noLocks
  public mutating func process(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>?, stride: Int, count: Int) {
    guard isActive else { return }
    var done = 0
    while done < count {
      var n = count &- done
      if glideLeft > 0 {
        if updateIn <= 0 {
          advanceGlide(frames: ChannelEQ.updateFrames)
          updateIn = ChannelEQ.updateFrames
        }
        n = Swift.min(n, updateIn)
        updateIn &-= n
      }
      if let right {
        run(left + done &* stride, right + done &* stride, stride: stride, count: n)
      } else {
        run(left + done &* stride, nil, stride: stride, count: n)
      }
      done &+= n
    }
    if wet == 0 && wetTarget == 0 { deactivate() }
    if hpfOn && hpfWet == 0 && hpfWetTarget == 0 { hpfOn = false; hpf1.clear(); hpf2.clear() }
  }

  // MARK: Internals

  @_noLocks
  mutating func run(_ l: UnsafeMutablePointer<Float>, _ r: UnsafeMutablePointer<Float>?, stride: Int, count: Int) {
    let twoSections = slope > 0
    let fading = wetStep != 0 || hpfWetStep != 0 || wet != 1 || (hpfOn && hpfWet != 1)
    if !fading {
      // Steady: the sections in series, nothing mixed back. The sections are copied to locals
      // (registers) for the loop, and both channels run in it (two independent chains).
      var h1 = hpf1, h2 = hpf2, lo = low, mi = mid, hi = high
      let useH1 = hpfOn, useH2 = hpfOn && twoSections, useLo = lowOn, useMi = midOn, useHi = highOn
      if let r {
        for i in 0..<count {
          let at = i &* stride
          var x = Double(l[at]), y = Double(r[at])
          if useH1 { x = h1.left(x); y = h1.right(y) }
          if useH2 { x = h2.left(x); y = h2.right(y) }
          if useLo { x = lo.left(x); y = lo.right(y) }
          if useMi { x = mi.left(x); y = mi.right(y) }
          if useHi { x = hi.left(x); y = hi.right(y) }
          l[at] = Float(x)
          r[at] = Float(y)
        }
      } else {
        for i in 0..<count {
          let at = i &* stride
          var x = Double(l[at])
          if useH1 { x = h1.left(x) }
          if useH2 { x = h2.left(x) }
          if useLo { x = lo.left(x) }
          if useMi { x = mi.left(x) }
          if useHi { x = hi.left(x) }
          l[at] = Float(x)
        }
      }
      hpf1 = h1; hpf2 = h2; low = lo; mid = mi; high = hi
      return
    }
    for i in 0..<count {
      let at = i &* stride
      l[at] = Float(fadingSample(Double(l[at]), right: false, twoSections: twoSections))
      if let r { r[at] = Float(fadingSample(Double(r[at]), right: true, twoSections: twoSections)) }
      Self.advance(&wet, step: &wetStep, to: wetTarget)
      Self.advance(&hpfWet, step: &hpfWetStep, to: hpfWetTarget)
    }
  }

  /// One sample of one channel through the sections while a section or the whole EQ fades: the
  /// high-pass mixed with its dry input by `hpfWet`, then the bands, then all mixed with `dry`
  /// by `wet`. The same for either channel but for the state each section keeps for it.
  @_noLocks @inline(__always)
  mutating func fadingSample(_ dry: Double, right: Bool, twoSections: Bool) -> Double {
    var x = dry
    if hpfOn {
      var h = hpf1.filter(x, right: right)
      if twoSections { h = hpf2.filter(h, right: right) }
      x += hpfWet * (h - x)
    }
    if lowOn { x = low.filter(x, right: right) }
    if midOn { x = mid.filter(x, right: right) }
    if highOn { x = high.filter(x, right: right) }
    return dry + wet * (x - dry)
  }

  /// Moves a fade's `value` one `step` towards `target`, and stops it there.
  @_noLocks @inline(__always)
  static func advance(_ value: inout Double, step: inout Double, to target: Double) {
    guard step != 0 else { return }
    value += step
    if (step > 0 && value >= target) || (step < 0 && value <= target) {
      value = target
      step = 0
    }
  }

  @_noLocks
  mutating func deactivate() {
    isActive = false
    wet = 0; wetStep = 0; wetTarget = 0
    hpfWet = 0; hpfWetStep = 0; hpfWetTarget = 0
    hpfOn = false; lowOn = false; midOn = false; highOn = false
    glideLeft = 0
    clearState()
  }

  @_noLocks
  mutating func fadeWet(to value: Double) {
    wetTarget = value
    let frames = fadeFrames
    wetStep = wet == value ? 0 : (value > wet ? 1 / frames : -1 / frames)
  }

  @_noLocks
  mutating func fadeHighPass(to value: Double) {
    hpfWetTarget = value
    let frames = fadeFrames
    hpfWetStep = hpfWet == value ? 0 : (value > hpfWet ? 1 / frames : -1 / frames)
  }

  /// Frequencies are kept below 0.45 × the sample rate, where the formulas still hold.
  @_noLocks @inline(__always)
  func log2(_ frequency: Double) -> Double {
    let f = Swift.min(Swift.max(frequency, 1e-3), 0.45 * sampleRate)
    return RealtimeC.log2(f)
  }

  @_noLocks
  mutating func jumpToTarget() {
    let p = target
    // A section that starts now starts from rest.
    if !hpfOn && p.highPassFrequency > 0 { hpf1.clear(); hpf2.clear() }
    if !lowOn && p.lowGain != 0 { low.clear() }
    if !midOn && p.midGain != 0 { mid.clear() }
    if !highOn && p.highGain != 0 { high.clear() }
    hpfOn = p.highPassFrequency > 0
    hpfWetTarget = hpfOn ? 1 : 0
    sections = p.highPassSections
    if sections == 2 && slope == 0 { hpf2.clear() }
    slope = sections == 2 ? 1 : 0
    slopeStep = 0
    lowOn = p.lowGain != 0; midOn = p.midGain != 0; highOn = p.highGain != 0
    hpfLog = hpfOn ? log2(p.highPassFrequency) : hpfLog
    lowLog = log2(p.lowFrequency); lowGain = p.lowGain
    midLog = log2(p.midFrequency); midGain = p.midGain; qLog = RealtimeC.log2(p.midQ)
    highLog = log2(p.highFrequency); highGain = p.highGain
    glideLeft = 0
    updateIn = 0
    computeCoefficients()
  }

  @_noLocks
  mutating func startGlide() {
    let p = target
    let frames = glideFrames
    let hpfTo = p.highPassFrequency > 0 ? log2(p.highPassFrequency) : hpfLog
    glideSteps = (
      (hpfTo - hpfLog) / frames, (log2(p.lowFrequency) - lowLog) / frames, (p.lowGain - lowGain) / frames,
      (log2(p.midFrequency) - midLog) / frames, (p.midGain - midGain) / frames,
      (RealtimeC.log2(p.midQ) - qLog) / frames, (log2(p.highFrequency) - highLog) / frames,
      (p.highGain - highGain) / frames
    )
    slopeStep = ((p.highPassSections == 2 ? 1 : 0) - slope) / frames
    glideLeft = Int(frames)
    updateIn = 0
  }

  /// Moves the gliding values `frames` further (to the target exactly at the end) and recomputes
  /// the coefficients for the middle of the next stretch.
  @_noLocks
  mutating func advanceGlide(frames: Int) {
    let n = Swift.min(frames, glideLeft)
    glideLeft &-= n
    if glideLeft == 0 {
      let p = target
      if p.highPassFrequency > 0 { hpfLog = log2(p.highPassFrequency) }
      lowLog = log2(p.lowFrequency); lowGain = p.lowGain
      midLog = log2(p.midFrequency); midGain = p.midGain; qLog = RealtimeC.log2(p.midQ)
      highLog = log2(p.highFrequency); highGain = p.highGain
      slope = p.highPassSections == 2 ? 1 : 0
      slopeStep = 0
      if slope == 0 { hpf2.clear() }
    } else {
      let k = Double(n)
      hpfLog += glideSteps.0 * k; lowLog += glideSteps.1 * k; lowGain += glideSteps.2 * k
      midLog += glideSteps.3 * k; midGain += glideSteps.4 * k; qLog += glideSteps.5 * k
      highLog += glideSteps.6 * k; highGain += glideSteps.7 * k
      slope = Swift.min(Swift.max(slope + slopeStep * k, 0), 1)
    }
    computeCoefficients()
  }

  @_noLocks
  mutating func computeCoefficients() {
    let fs = sampleRate
    if hpfOn {
      let f = RealtimeC.pow(2, hpfLog)
      if slope <= 0 || slope >= 1 {
        let n = slope >= 1 ? 2 : 1
        hpf1.c = Biquad.highPass(frequency: f, q: Biquad.butterworthQ(section: 0, of: n), sampleRate: fs)
        hpf2.c = Biquad.highPass(frequency: f, q: Biquad.butterworthQ(section: 1, of: n), sampleRate: fs)
      } else {
        // Between the slopes: the first section's Q moves (in octaves) from the 12 dB/oct
        // filter's to the 24's first section's; the second rises from `slopeOctaves` under f.
        let q12 = RealtimeC.log2(Biquad.butterworthQ(section: 0, of: 1))
        let q24 = RealtimeC.log2(Biquad.butterworthQ(section: 0, of: 2))
        let q = RealtimeC.pow(2, q12 + slope * (q24 - q12))
        let f2 = RealtimeC.pow(2, hpfLog - ChannelEQ.slopeOctaves * (1 - slope))
        hpf1.c = Biquad.highPass(frequency: f, q: q, sampleRate: fs)
        hpf2.c = Biquad.highPass(frequency: f2, q: Biquad.butterworthQ(section: 1, of: 2), sampleRate: fs)
      }
    }
    if lowOn { low.c = Biquad.lowShelf(frequency: RealtimeC.pow(2, lowLog), gain: lowGain, sampleRate: fs) }
    if midOn {
      mid.c = Biquad.peaking(
        frequency: RealtimeC.pow(2, midLog), gain: midGain, q: RealtimeC.pow(2, qLog), sampleRate: fs)
    }
    if highOn { high.c = Biquad.highShelf(frequency: RealtimeC.pow(2, highLog), gain: highGain, sampleRate: fs) }
  }
}
