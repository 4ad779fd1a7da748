// A strip's fader in the renderer: volume, pan or balance, width, audibility (mute and solo,
// worked out on the control thread), their glides and the gain ramps they set. Stem voices,
// buses and live inputs embed one (`StemVoice.levels`, `BusStrip.levels`, `InputStrip.levels`),
// so every kind sets levels, glides and cancels alike (docs/architecture.md, *Strips*); a stem
// also glides its rate, which it keeps itself. Where a strip's glides have got to is published
// into its `GlideCells` (a stem's in its `StemShared`).

import Synchronization

/// Where a strip's running glides have got to (nil: that parameter is not gliding).
public struct GlideReading: Equatable, Sendable {
  public var volume: Double?
  public var pan: Double?
  public var rate: Double?
  public var width: Double?

  public init(volume: Double? = nil, pan: Double? = nil, rate: Double? = nil, width: Double? = nil) {
    self.volume = volume
    self.pan = pan
    self.rate = rate
    self.width = width
  }

  /// The value `parameter` has reached, if it glides.
  public subscript(_ parameter: GlideParameter) -> Double? {
    switch parameter {
    case .volume: volume
    case .pan: pan
    case .rate: rate
    case .width: width
    }
  }

  /// Whether any glide runs.
  public var any: Bool { volume != nil || pan != nil || rate != nil || width != nil }
}

/// Which of a strip's glides run and the values they have reached (realtime → control; Double
/// bit patterns). The control thread shows them (`G`) and `glide cancel` stops there.
public struct GlideCells: ~Copyable, Sendable {
  /// Bit `bit(parameter)` set: that parameter glides.
  let glides = Atomic<Int>(0)
  let volume = Atomic<UInt64>(0)
  let pan = Atomic<UInt64>(0)
  let rate = Atomic<UInt64>(0)
  let width = Atomic<UInt64>(0)

  init() {}

  /// A cell of its own (a stem's, `StemShared.glides`); freed with `deallocate`.
  static func allocate() -> UnsafeMutablePointer<GlideCells> {
    let cells = UnsafeMutablePointer<GlideCells>.allocate(capacity: 1)
    cells.initialize(to: GlideCells())
    return cells
  }

  /// The values the running glides have reached.
  public func reading() -> GlideReading {
    let flags = glides.load(ordering: .relaxed)
    func value(_ p: GlideParameter, _ cell: borrowing Atomic<UInt64>) -> Double? {
      flags & GlideCells.bit(p) != 0 ? Double(bitPattern: cell.load(ordering: .relaxed)) : nil
    }
    return GlideReading(
      volume: value(.volume, volume), pan: value(.pan, pan), rate: value(.rate, rate), width: value(.width, width))
  }

  /// The control thread has ended these glides (a value set, `glide cancel`): not told from
  /// now on; the renderer's next publish agrees.
  public func forget(_ parameters: [GlideParameter]) {
    let mask = parameters.reduce(0) { $0 | Self.bit($1) }
    glides.bitwiseAnd(~mask, ordering: .relaxed)
  }

  /// The bit of `glides` that says `parameter` glides.
  @_noLocks @inline(__always)
  static func bit(_ parameter: GlideParameter) -> Int {
    switch parameter {
    case .volume: 1
    case .pan: 2
    case .rate: 4
    case .width: 8
    }
  }

  /// No glide (a strip taken into use again).
  @_noLocks
  func clear() { glides.store(0, ordering: .relaxed) }
}

/// One strip's levels. Trivial values only: it lives in the renderer's preallocated tables.
public struct StripLevels {
  @usableFromInline var volume: Double = 1
  @usableFromInline var pan: Double = 0
  /// Stereo width (DSP/StereoWidth.swift); a mono strip has none.
  @usableFromInline var width: Double = 1
  @usableFromInline var audible = true
  /// 1: mono (constant-power pan), 2: stereo (balance); PanLaw.swift.
  @usableFromInline var channels = 2
  @usableFromInline var gainLeft: GainRamp
  @usableFromInline var gainRight: GainRamp
  @usableFromInline var widthStage: StereoWidth
  /// Volume, pan and width glides (`vol mic 0 over 4s`; idle unless `isActive`).
  @usableFromInline var volumeGlide = Glide()
  @usableFromInline var panGlide = Glide()
  @usableFromInline var widthGlide = Glide()
  /// Whether `publish` last said a glide runs (so that its end is said once, then nothing).
  @usableFromInline var publishedGliding = false

  /// Levels at unity, centre and width 1; the gains start at `gain` and ramp over 10 ms.
  init(sampleRate: Double, gain: Float) {
    let ramp = Swift.max(1, Int(sampleRate * 0.010))
    gainLeft = GainRamp(gain: gain, length: ramp)
    gainRight = GainRamp(gain: gain, length: ramp)
    widthStage = StereoWidth(rampFrames: ramp)
  }

  var isGliding: Bool { @_noLocks get { volumeGlide.isActive || panGlide.isActive || widthGlide.isActive } }

  /// The gains volume, pan and audibility ask for (`silenced`: 0, a strip fading out for good).
  @_noLocks
  func targetGains(silenced: Bool = false) -> (Float, Float) {
    let g = PanLaw.realtimeGains(pan: pan, channelCount: channels)
    let level = audible && !silenced ? volume : 0
    return (Float(g.left * level), Float(g.right * level))
  }

  /// Moves the gains and the width to what the levels ask for: over `frames` (0: the usual
  /// 10 ms), or at once.
  @_noLocks
  mutating func updateGains(jump: Bool, frames: Int = 0, silenced: Bool = false) {
    let (l, r) = targetGains(silenced: silenced)
    if !jump && frames > 0 {
      gainLeft.set(target: l, frames: frames)
      gainRight.set(target: r, frames: frames)
    } else {
      setRamp(&gainLeft, l, jump: jump)
      setRamp(&gainRight, r, jump: jump)
    }
    if channels == 2 { widthStage.set(width: width, jump: jump, frames: jump ? 0 : frames) }
  }

  /// New levels (nil: unchanged); a value set ends its glide there.
  @_noLocks
  mutating func set(_ change: StripLevelChange, jump: Bool) {
    if let v = change.volume {
      volume = v
      volumeGlide = Glide()
    }
    if let p = change.pan {
      pan = p
      panGlide = Glide()
    }
    if let w = change.width {
      width = w
      widthGlide = Glide()
    }
    audible = change.audible
    updateGains(jump: jump)
  }

  /// Starts a volume (linear or in equal dB steps), pan or width glide from where it is now; a
  /// rate glide is a stem's own (`StemVoice.rateGlide`).
  @_noLocks
  mutating func startGlide(_ parameter: GlideParameter, to target: Double, frames: Int, exponential: Bool) {
    switch parameter {
    case .volume: volumeGlide = Glide(from: volume, to: target, frames: frames, curve: exponential ? .exponential : .linear)
    case .pan: panGlide = Glide(from: pan, to: target, frames: frames, curve: .linear)
    case .width: widthGlide = Glide(from: width, to: target, frames: frames, curve: .linear)
    case .rate: break
    }
  }

  /// Advances the glides to the end of a pass of `frames`: the gains ramp across the pass to the
  /// values reached, and get there exactly when the first glide to end does.
  @_noLocks
  mutating func advanceGlides(frames: Int, silenced: Bool = false) {
    var rampFrames = frames
    if volumeGlide.isActive { rampFrames = Swift.min(rampFrames, volumeGlide.totalFrames &- volumeGlide.doneFrames) }
    if panGlide.isActive { rampFrames = Swift.min(rampFrames, panGlide.totalFrames &- panGlide.doneFrames) }
    if widthGlide.isActive { rampFrames = Swift.min(rampFrames, widthGlide.totalFrames &- widthGlide.doneFrames) }
    if volumeGlide.isActive {
      volume = volumeGlide.advance(frames: rampFrames)
      if volumeGlide.isFinished { volumeGlide = Glide() }
    }
    if panGlide.isActive {
      pan = panGlide.advance(frames: rampFrames)
      if panGlide.isFinished { panGlide = Glide() }
    }
    if widthGlide.isActive {
      width = widthGlide.advance(frames: rampFrames)
      if widthGlide.isFinished { widthGlide = Glide() }
    }
    updateGains(jump: false, frames: Swift.max(1, rampFrames), silenced: silenced)
  }

  /// The strip's stages between its EQ and its fader (width), in place on its channels; each
  /// kind's render calls it right after the EQ. A stage at its identity costs a branch.
  @_noLocks
  mutating func applyStages(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>?, stride: Int, count: Int) {
    guard channels == 2, let right else { return }
    widthStage.process(left: left, right: right, stride: stride, count: count)
  }

  /// Whether the levels are steady and every stage is at its identity: the gains alone make the
  /// strip's output (a stem at rate 1 may then mix straight from its ring).
  var isPlain: Bool {
    @_noLocks get { !gainLeft.isRamping && !gainRight.isRamping && (channels != 2 || widthStage.isIdentity) }
  }

  /// Says where the glides are: the values while one runs, then once that none does (a strip
  /// that never glides costs a branch). A stem passes its rate while that glides.
  @_noLocks
  mutating func publish(to cells: UnsafeMutablePointer<GlideCells>, rate: Double? = nil) {
    let gliding = isGliding || rate != nil
    guard gliding || publishedGliding else { return }
    var flags = 0
    if volumeGlide.isActive {
      flags |= GlideCells.bit(.volume)
      cells.pointee.volume.store(volume.bitPattern, ordering: .relaxed)
    }
    if panGlide.isActive {
      flags |= GlideCells.bit(.pan)
      cells.pointee.pan.store(pan.bitPattern, ordering: .relaxed)
    }
    if let rate {
      flags |= GlideCells.bit(.rate)
      cells.pointee.rate.store(rate.bitPattern, ordering: .relaxed)
    }
    if widthGlide.isActive {
      flags |= GlideCells.bit(.width)
      cells.pointee.width.store(width.bitPattern, ordering: .relaxed)
    }
    cells.pointee.glides.store(flags, ordering: .relaxed)
    publishedGliding = gliding
  }

  /// A strip taken into use again: nothing of its last owner's glides is told.
  @_noLocks
  mutating func unpublish(from cells: UnsafeMutablePointer<GlideCells>) {
    publishedGliding = false
    cells.pointee.clear()
  }

  /// Ends the glides where they are (the levels keep the values reached).
  @_noLocks
  mutating func stopGlides() {
    volumeGlide = Glide()
    panGlide = Glide()
    widthGlide = Glide()
  }

  /// Unity, centre, width 1, audible, no glide; the gains jump to `gain`.
  @_noLocks
  mutating func reset(gain: Float) {
    volume = 1
    pan = 0
    width = 1
    audible = true
    stopGlides()
    gainLeft.jump(to: gain)
    gainRight.jump(to: gain)
    widthStage.set(width: 1, jump: true)
  }
}

/// New levels for a strip (`EngineCommand.setStripLevels`): nil leaves a parameter (and its
/// glide) as it is; audibility is always sent.
public struct StripLevelChange: BitwiseCopyable, Sendable, Equatable {
  public var volume: Double?
  public var pan: Double?
  public var width: Double?
  public var audible: Bool

  /// Audibility only; the levels as they are.
  @_noLocks @inlinable
  public init(audible: Bool) {
    self.init(volume: nil, pan: nil, width: nil, audible: audible)
  }

  /// A level by its parameter (the control thread fills a change row by row); a stem's rate is
  /// not a level (`stems.setRate`).
  public subscript(_ parameter: GlideParameter) -> Double? {
    get {
      switch parameter {
      case .volume: volume
      case .pan: pan
      case .width: width
      case .rate: nil
      }
    }
    set {
      switch parameter {
      case .volume: volume = newValue
      case .pan: pan = newValue
      case .width: width = newValue
      case .rate: break
      }
    }
  }

  @_noLocks @inlinable
  public init(volume: Double?, pan: Double?, width: Double?, audible: Bool) {
    self.volume = volume
    self.pan = pan
    self.width = width
    self.audible = audible
  }
}
