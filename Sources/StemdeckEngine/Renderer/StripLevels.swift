// A strip's fader in the renderer: volume, pan or balance, audibility (mute and solo, worked
// out on the control thread), their glides and the two gain ramps they set. Buses and live
// inputs embed one (`BusStrip.levels`, `InputStrip.levels`), so they set levels, glide and
// cancel alike (docs/architecture.md, *Strips*). Stem voices keep their own (a stem also glides
// its rate). Where a bus's or input's glides have got to is published once a block into its
// `GlideCells`, as a stem's into its `StemShared`.

import Synchronization

/// Which of a strip's glides run and the values they have reached (realtime → control; Double
/// bit patterns). The control thread shows them (`G`) and `glide cancel` stops there.
public struct GlideCells: ~Copyable, Sendable {
  /// Bit 0: volume, bit 1: pan.
  let glides = Atomic<Int>(0)
  let volume = Atomic<UInt64>(0)
  let pan = Atomic<UInt64>(0)

  init() {}

  /// The values the running glides have reached (nil: that parameter is not gliding).
  public func reading() -> (volume: Double?, pan: Double?) {
    let flags = glides.load(ordering: .relaxed)
    return (
      flags & 1 != 0 ? Double(bitPattern: volume.load(ordering: .relaxed)) : nil,
      flags & 2 != 0 ? Double(bitPattern: pan.load(ordering: .relaxed)) : nil
    )
  }

  /// The control thread has ended these glides (a value set, `glide cancel`): not told from
  /// now on; the renderer's next publish agrees.
  public func forget(volume: Bool, pan: Bool) {
    glides.bitwiseAnd(~((volume ? 1 : 0) | (pan ? 2 : 0)), ordering: .relaxed)
  }

  /// No glide (a strip taken into use again).
  @_noLocks
  func clear() { glides.store(0, ordering: .relaxed) }
}

/// One strip's levels. Trivial values only: it lives in the renderer's preallocated tables.
public struct StripLevels {
  @usableFromInline var volume: Double = 1
  @usableFromInline var pan: Double = 0
  @usableFromInline var audible = true
  /// 1: mono (constant-power pan), 2: stereo (balance); PanLaw.swift.
  @usableFromInline var channels = 2
  @usableFromInline var gainLeft: GainRamp
  @usableFromInline var gainRight: GainRamp
  /// Volume and pan glides (`vol mic 0 over 4s`; idle unless `isActive`).
  @usableFromInline var volumeGlide = Glide()
  @usableFromInline var panGlide = Glide()
  /// Whether `publish` last said a glide runs (so that its end is said once, then nothing).
  @usableFromInline var publishedGliding = false

  /// Levels at unity and centre; the gains start at `gain` and ramp over 10 ms.
  init(sampleRate: Double, gain: Float) {
    let ramp = Swift.max(1, Int(sampleRate * 0.010))
    gainLeft = GainRamp(gain: gain, length: ramp)
    gainRight = GainRamp(gain: gain, length: ramp)
  }

  var isGliding: Bool { @_noLocks get { volumeGlide.isActive || panGlide.isActive } }

  /// The gains volume, pan and audibility ask for (`silenced`: 0, a strip fading out for good).
  @_noLocks
  func targetGains(silenced: Bool = false) -> (Float, Float) {
    let g = PanLaw.realtimeGains(pan: pan, channelCount: channels)
    let level = audible && !silenced ? volume : 0
    return (Float(g.left * level), Float(g.right * level))
  }

  /// Moves the gains to what the levels ask for: over `frames` (0: the usual 10 ms), or at once.
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
  }

  /// New levels (nil: unchanged); a value set ends its glide there.
  @_noLocks
  mutating func set(volume newVolume: Double?, pan newPan: Double?, audible newAudible: Bool, jump: Bool) {
    if let newVolume {
      volume = newVolume
      volumeGlide = Glide()
    }
    if let newPan {
      pan = newPan
      panGlide = Glide()
    }
    audible = newAudible
    updateGains(jump: jump)
  }

  /// Starts a volume (linear or in equal dB steps) or pan glide from where it is now; a rate
  /// glide means nothing for a bus or an input.
  @_noLocks
  mutating func startGlide(_ parameter: GlideParameter, to target: Double, frames: Int, exponential: Bool) {
    switch parameter {
    case .volume: volumeGlide = Glide(from: volume, to: target, frames: frames, curve: exponential ? .exponential : .linear)
    case .pan: panGlide = Glide(from: pan, to: target, frames: frames, curve: .linear)
    case .rate: break
    }
  }

  /// Advances the glides to the end of a pass of `frames`: the gains ramp across the pass to the
  /// values reached (as a stem's, VoiceRendering.swift `advanceGlides`).
  @_noLocks
  mutating func advanceGlides(frames: Int, silenced: Bool = false) {
    var rampFrames = frames
    if volumeGlide.isActive { rampFrames = Swift.min(rampFrames, volumeGlide.totalFrames &- volumeGlide.doneFrames) }
    if panGlide.isActive { rampFrames = Swift.min(rampFrames, panGlide.totalFrames &- panGlide.doneFrames) }
    if volumeGlide.isActive {
      volume = volumeGlide.advance(frames: rampFrames)
      if volumeGlide.isFinished { volumeGlide = Glide() }
    }
    if panGlide.isActive {
      pan = panGlide.advance(frames: rampFrames)
      if panGlide.isFinished { panGlide = Glide() }
    }
    updateGains(jump: false, frames: Swift.max(1, rampFrames), silenced: silenced)
  }

  /// Says where the glides are, once a block: the values while one runs, then once that none
  /// does. A strip that never glides costs a branch.
  @_noLocks
  mutating func publish(to cells: UnsafeMutablePointer<GlideCells>) {
    let gliding = isGliding
    guard gliding || publishedGliding else { return }
    if gliding {
      cells.pointee.volume.store(volume.bitPattern, ordering: .relaxed)
      cells.pointee.pan.store(pan.bitPattern, ordering: .relaxed)
    }
    cells.pointee.glides.store((volumeGlide.isActive ? 1 : 0) | (panGlide.isActive ? 2 : 0), ordering: .relaxed)
    publishedGliding = gliding
  }

  /// A strip taken into use again: nothing of its last owner's glides is told.
  @_noLocks
  mutating func unpublish(from cells: UnsafeMutablePointer<GlideCells>) {
    publishedGliding = false
    cells.pointee.clear()
  }

  /// Ends both glides where they are (the levels keep the values reached).
  @_noLocks
  mutating func stopGlides() {
    volumeGlide = Glide()
    panGlide = Glide()
  }

  /// Unity, centre, audible, no glide; the gains jump to `gain`.
  @_noLocks
  mutating func reset(gain: Float) {
    volume = 1
    pan = 0
    audible = true
    stopGlides()
    gainLeft.jump(to: gain)
    gainRight.jump(to: gain)
  }
}
