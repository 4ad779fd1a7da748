// The click (a metronome for the band's in-ears) and the count-in: a synthesized burst on every
// beat of the session's tempo, and N bars of it before `play` lets the stems start.
// docs/architecture.md, *Click and count-in*.
//
// The beat grid is the transport's, as `seek bar` counts it: beat k starts on transport frame
// round(k × framesPerBeat), bar 1 beat 1 on frame 0. A new tempo moves the grid at once (the
// session has one tempo, no map). The count-in has its own grid: it starts on the frame the
// `play` lands on, and the stems start `click.countInFrames` later, on the frame after its last one.

/// The click's settings as the renderer takes them (`EngineCommand.setClick`). Built on the
/// control thread from the session's click and tempo (`Mixer+Click.swift`).
public struct ClickParameters: BitwiseCopyable, Sendable, Equatable {
  /// Clicks while the transport plays.
  public var on: Bool
  /// Into the master (after the master volume) rather than the click's own outputs.
  public var toMaster: Bool
  /// The click's level (linear; 1 is 0 dB: an accent peaks at −6 dBFS, a beat at −9 dBFS).
  public var gain: Float
  /// Engine frames in one beat of the tempo; 0: no tempo (no click, no count-in).
  public var framesPerBeat: Double
  public var beatsPerBar: Int
  /// Bars of click before a `play` starts the stems (0: none).
  public var countInBars: Int
  /// Frames every beat plays late: the mix's latency (plugin inserts), so that the click meets
  /// the stems at the master and at the ports as they sound, not as they left the disk.
  public var latencyFrames: Int

  public init(
    on: Bool, toMaster: Bool, gain: Float, framesPerBeat: Double, beatsPerBar: Int, countInBars: Int, latencyFrames: Int = 0
  ) {
    self.on = on
    self.toMaster = toMaster
    self.gain = gain
    self.framesPerBeat = framesPerBeat
    self.beatsPerBar = beatsPerBar
    self.countInBars = countInBars
    self.latencyFrames = latencyFrames
  }

  /// Off, no tempo.
  public static let off = ClickParameters(on: false, toMaster: false, gain: 1, framesPerBeat: 0, beatsPerBar: 4, countInBars: 0)

  /// Frames of the count-in: its bars of beats at this tempo (0 without a tempo).
  public var countInFrames: Int {
    @_noLocks get {
      guard framesPerBeat > 0, countInBars > 0, beatsPerBar > 0 else { return 0 }
      return onset(ofBeat: countInBars &* beatsPerBar)
    }
  }

  /// The frame beat `k` starts on (from 0), rounded to the nearest frame.
  @_noLocks
  public func onset(ofBeat k: Int) -> Int { Int(Double(k) * framesPerBeat + 0.5) }

  /// The first beat starting at or after `frame` (0 or more).
  @_noLocks
  func firstBeat(atOrAfter frame: Int) -> Int {
    var k = Swift.max(0, Int(Double(frame) / framesPerBeat))
    while k > 0 && onset(ofBeat: k &- 1) >= frame { k &-= 1 }
    while onset(ofBeat: k) < frame { k &+= 1 }
    return k
  }
}

/// The synthesized click's sound: a sine burst with a smooth envelope, 1,500 Hz on the bar's
/// first beat (the accent, peak 0.5) and 1,000 Hz on the others (peak 0.35), 15 ms long (a
/// 1 ms raised-cosine attack, then a cosine-squared decay to silence).
public enum ClickSound {
  public static let accentHertz = 1500.0
  public static let beatHertz = 1000.0
  public static let accentPeak = 0.5
  public static let beatPeak = 0.35
  public static let seconds = 0.015
  static let attackSeconds = 0.001

  /// The burst's frames at `sampleRate`.
  public static func frames(sampleRate: Double) -> Int { Swift.max(2, Int(seconds * sampleRate + 0.5)) }

  /// Fills `buffer` with one burst (control thread).
  static func fill(_ buffer: UnsafeMutablePointer<Float>, frames: Int, sampleRate: Double, hertz: Double, peak: Double) {
    let attack = Swift.max(1, Int(attackSeconds * sampleRate + 0.5))
    for i in 0..<frames {
      let envelope: Double
      if i < attack {
        envelope = 0.5 - 0.5 * cosImpl(Double.pi * Double(i) / Double(attack))
      } else {
        let c = cosImpl(Double.pi / 2 * Double(i - attack) / Double(Swift.max(1, frames - attack)))
        envelope = c * c
      }
      buffer[i] = Float(peak * envelope * sinImpl(2 * Double.pi * hertz * Double(i) / sampleRate))
    }
  }
}

/// A click played from the session's samples (`"click": { "sample": … }`) instead of the
/// synthesized bursts: mono frames at the engine rate, built on the control thread, handed to the
/// renderer (`EngineCommand.setClickSamples`) and back through the event ring to be freed
/// (`EngineEvent.clickSamplesRetired`).
public struct ClickSamples {
  public let accent: UnsafeMutablePointer<Float>
  public let accentFrames: Int
  public let beat: UnsafeMutablePointer<Float>
  public let beatFrames: Int

  /// Copies `accent` and `beat` (each at least one frame) into new memory (control thread).
  public static func make(accent: [Float], beat: [Float]) -> UnsafeMutablePointer<ClickSamples> {
    func copy(_ x: [Float]) -> UnsafeMutablePointer<Float> {
      let p = UnsafeMutablePointer<Float>.allocate(capacity: Swift.max(1, x.count))
      p.initialize(repeating: 0, count: Swift.max(1, x.count))
      x.withUnsafeBufferPointer { if let b = $0.baseAddress { p.update(from: b, count: x.count) } }
      return p
    }
    let samples = UnsafeMutablePointer<ClickSamples>.allocate(capacity: 1)
    samples.initialize(
      to: ClickSamples(
        accent: copy(accent), accentFrames: Swift.max(1, accent.count), beat: copy(beat), beatFrames: Swift.max(1, beat.count)))
    return samples
  }

  /// Frees samples the renderer no longer holds (control thread).
  public static func free(_ samples: UnsafeMutablePointer<ClickSamples>) {
    samples.pointee.accent.deallocate()
    samples.pointee.beat.deallocate()
    samples.deinitialize(count: 1)
    samples.deallocate()
  }
}

/// The click's state in the renderer: its settings, the two bursts, the burst sounding and the
/// count-in running. The driver sets `outputLeft`/`outputRight` before each block (nil: the click
/// has nowhere to go but the master, when routed there).
public struct RenderClick {
  @usableFromInline var parameters = ClickParameters.off
  @usableFromInline let accent: UnsafeMutablePointer<Float>
  @usableFromInline let beat: UnsafeMutablePointer<Float>
  @usableFromInline let burstFrames: Int
  /// The session's samples, played instead of the bursts (nil: the synthesized click).
  @usableFromInline var samples: UnsafeMutablePointer<ClickSamples>?
  /// The burst sounding: 0 none, 1 the accent, 2 a beat; how far into it; its gain (latched at
  /// its start, so a level change never steps inside a burst).
  @usableFromInline var burst = 0
  @usableFromInline var burstOffset = 0
  @usableFromInline var burstGain: Float = 1
  /// Frames of count-in still to run (0: none running), and how far into it the click is.
  @usableFromInline var countInLeft = 0
  @usableFromInline var countInFrame = 0
  /// The click's own port buffers for the current block (`stemdeck:click_L`/`click_R`; the
  /// offline renderer's `--click` buffers), cleared by `renderBlock`. nil: none.
  public var outputLeft: UnsafeMutablePointer<Float>?
  public var outputRight: UnsafeMutablePointer<Float>?

  init(sampleRate: Double) {
    burstFrames = ClickSound.frames(sampleRate: sampleRate)
    accent = .allocate(capacity: burstFrames)
    beat = .allocate(capacity: burstFrames)
    ClickSound.fill(
      accent, frames: burstFrames, sampleRate: sampleRate, hertz: ClickSound.accentHertz, peak: ClickSound.accentPeak)
    ClickSound.fill(beat, frames: burstFrames, sampleRate: sampleRate, hertz: ClickSound.beatHertz, peak: ClickSound.beatPeak)
  }

  func free() {
    accent.deallocate()
    beat.deallocate()
    if let samples { ClickSamples.free(samples) }
  }

  /// Whether a count-in is running (the stems wait for it).
  public var countingIn: Bool { @_noLocks get { countInLeft > 0 } }
}

/// Plays `samples` instead of what the click played (nil: the synthesized bursts); the samples
/// it replaces go back to the control thread. A sound in flight stops (its table is gone).
@_noLocks
func setClickSamples(_ state: UnsafeMutablePointer<RenderState>, _ samples: UnsafeMutablePointer<ClickSamples>?) {
  if let old = state.pointee.click.samples {
    // The event ring holds 4,096 events, drained every few tens of milliseconds: a full ring
    // keeps the old samples installed rather than losing them unseen.
    guard state.pointee.events.push(.clickSamplesRetired(address: Int(bitPattern: old))) else { return }
  }
  state.pointee.click.samples = samples
  state.pointee.click.burst = 0
}

/// Starts the count-in, if one is set, as `play` starts the transport from a stop.
@_noLocks
func startCountIn(_ state: UnsafeMutablePointer<RenderState>) {
  guard state.pointee.click.countInLeft == 0 else { return }
  state.pointee.click.countInLeft = state.pointee.click.parameters.countInFrames
  state.pointee.click.countInFrame = 0
  state.pointee.status.pointee.countInFramesLeft.store(state.pointee.click.countInLeft, ordering: .relaxed)
}

/// Clears the click's own outputs for the block (before any pass writes them).
@_noLocks
func clearClickOutputs(_ state: UnsafeMutablePointer<RenderState>, frameCount: Int) {
  if let l = state.pointee.click.outputLeft { l.update(repeating: 0, count: frameCount) }
  if let r = state.pointee.click.outputRight { r.update(repeating: 0, count: frameCount) }
}

/// One pass of the click: the burst in flight goes on, and every beat starting in the pass
/// starts one: the count-in's beats while it runs (it then counts down; the pass never runs past
/// its end: `renderBlock`), the transport's while it plays and the click is on. It adds into the
/// master's `left`/`right` (routed there) or the click's outputs at the pass's offset.
///
/// - Realtime: safe; bounded by the beats in one pass (a few). Proven by `@_noLocks`.
@_noLocks
func renderClick(
  _ state: UnsafeMutablePointer<RenderState>, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>,
  frameCount n: Int, playing: Bool, transportStart: Int
) {
  let p = state.pointee.click.parameters
  var outL: UnsafeMutablePointer<Float>? = nil, outR: UnsafeMutablePointer<Float>? = nil
  if p.toMaster {
    outL = left
    outR = right
  } else if let l = state.pointee.click.outputLeft, let r = state.pointee.click.outputRight {
    let offset = state.pointee.passOffset
    outL = l + offset
    outR = r + offset
  }
  // The clock the beats are counted on, and the last beat it has (exclusive).
  var clock = -1, beats = Int.max
  let counting = state.pointee.click.countInLeft > 0
  if counting {
    clock = state.pointee.click.countInFrame
    beats = p.countInBars &* p.beatsPerBar
  } else if playing && p.on && p.framesPerBeat > 0 {
    clock = transportStart
  }
  var at = 0
  if clock >= 0 && p.framesPerBeat > 0 {
    // Each beat sounds `latencyFrames` after its frame on the clock, as the stems do through
    // the inserts' compensation (a count-in beat pushed past the count-in's end is not played).
    let late = p.latencyFrames
    var k = p.firstBeat(atOrAfter: clock &- late)
    while k < beats {
      let onset = p.onset(ofBeat: k) &+ late &- clock
      if onset >= n { break }
      // The burst in flight plays up to here; the new one starts on its frame.
      writeBurst(state, outL, outR, from: at, to: onset)
      at = onset
      state.pointee.click.burst = k % Swift.max(1, p.beatsPerBar) == 0 ? 1 : 2
      state.pointee.click.burstOffset = 0
      state.pointee.click.burstGain = p.gain
      k &+= 1
    }
  }
  writeBurst(state, outL, outR, from: at, to: n)
  if counting {
    state.pointee.click.countInFrame &+= n
    state.pointee.click.countInLeft = Swift.max(0, state.pointee.click.countInLeft &- n)
    state.pointee.status.pointee.countInFramesLeft.store(state.pointee.click.countInLeft, ordering: .relaxed)
  }
}

/// Adds the burst in flight to frames `from..<to` of the outputs (none: it only advances).
@_noLocks
func writeBurst(
  _ state: UnsafeMutablePointer<RenderState>, _ outL: UnsafeMutablePointer<Float>?, _ outR: UnsafeMutablePointer<Float>?,
  from: Int, to: Int
) {
  let kind = state.pointee.click.burst
  guard kind != 0, to > from else { return }
  var table = kind == 1 ? state.pointee.click.accent : state.pointee.click.beat
  var length = state.pointee.click.burstFrames
  if let samples = state.pointee.click.samples {
    table = kind == 1 ? samples.pointee.accent : samples.pointee.beat
    length = kind == 1 ? samples.pointee.accentFrames : samples.pointee.beatFrames
  }
  let offset = state.pointee.click.burstOffset
  let count = Swift.max(0, Swift.min(to &- from, length &- offset))
  if let outL, let outR {
    let g = state.pointee.click.burstGain
    for i in 0..<count {
      let s = table[offset &+ i] * g
      outL[from &+ i] += s
      outR[from &+ i] += s
    }
  }
  state.pointee.click.burstOffset = offset &+ count
  if state.pointee.click.burstOffset >= length { state.pointee.click.burst = 0 }
}
