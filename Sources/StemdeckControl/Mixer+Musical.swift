import StemdeckEngine
import StemdeckSession
import StemdeckText

/// What a glide moves (a row of the strip controls' table that glides, StripParameter.swift),
/// and to where.
public struct GlideTarget: Sendable, Equatable {
  public let control: StripParameter
  public let value: Double

  /// The glide of `control` to `value`; nil for a row that does not glide.
  public init?(_ control: StripParameter, to value: Double) {
    guard control.glides, Mixer.glideParameter(of: control) != nil else { return nil }
    self.control = control
    self.value = value
  }

  public static func volume(_ v: Double) -> GlideTarget { GlideTarget(.volume, to: v)! }
  public static func pan(_ v: Double) -> GlideTarget { GlideTarget(.pan, to: v)! }
  public static func rate(_ v: Double) -> GlideTarget { GlideTarget(.rate, to: v)! }

  public static func == (a: GlideTarget, b: GlideTarget) -> Bool { a.control.key == b.control.key && a.value == b.value }
}

extension Mixer {
  /// The renderer's parameter that a row of the table moves (nil: none, a toggle): the one its
  /// session key names.
  static func glideParameter(of control: StripParameter) -> GlideParameter? {
    control.isToggle ? nil : GlideParameter(rawValue: control.key)
  }

  /// The rule of a glide's time (a glide's, a scene's fade): more than 0, at most an hour.
  static func checkGlideTime(_ seconds: Double, _ what: String) throws(MixerError) {
    guard seconds.isFinite, seconds > 0, seconds <= 3600 else {
      throw MixerError("\(what) must be more than 0 and at most 3600 seconds (got \(NumberFormat.plain(seconds)))")
    }
  }

  /// Starts a group of changes that land together on one frame: at `seconds` on the transport,
  /// or at the start of the next period when nil. Every stem and master change sent until
  /// `endGroup()` waits for that frame. The lock is held by the caller's sequence only as long
  /// as each call; the renderer buffers the group until `endGroup`.
  public func beginGroup(atSeconds seconds: Double?) throws(MixerError) {
    try lock.locked { () throws(MixerError) in
      if let seconds {
        guard seconds.isFinite, seconds >= 0 else {
          throw MixerError("a change must land at 0 or more seconds (got \(NumberFormat.plain(seconds)))")
        }
      }
      try send(.beginGroup(frame: seconds.map { Int(($0 * sampleRate).rounded()) } ?? Int.min))
    }
  }

  public func endGroup() throws(MixerError) {
    try lock.locked { () throws(MixerError) in try send(.endGroup) }
  }

  /// Ends the group without applying any of it: the renderer drops every change sent since
  /// `beginGroup` (the caller puts the settings back). A glide in flight before the group runs on
  /// as if the group had never been sent.
  public func abortGroup() throws(MixerError) {
    try lock.locked { () throws(MixerError) in try send(.abortGroup) }
  }

  func nextLoopSeamLocked(_ stem: Stem) -> Double {
    let s = stem.shared.pointer
    let status = renderState.pointee.status
    let transport = Double(status.pointee.transportFrame.load(ordering: .relaxed))
    let synced = s.pointee.synced.load(ordering: .relaxed)
    let start = Double(
      synced ? s.pointee.heardStartFrame.load(ordering: .relaxed) : s.pointee.epochStartFrame.load(ordering: .relaxed))
    let heard = s.pointee.heardPosition()
    let length = Double(stem.loopFrames)
    let perTransportFrame = Double(stem.info.sampleRate) * stem.settings.rate / sampleRate
    let startFrame = stem.settings.startOffset * sampleRate
    // Not synced yet (just added or sought): it starts from the epoch's first frame.
    let source = synced ? start + heard.sourceFrames : start
    let anchor = synced ? Double(heard.transportFrame) : max(transport, startFrame)
    // Floating error may leave the position a hair under a seam it has reached.
    let seam = ((source + 1e-6) / length).rounded(.down) * length + length
    let at = anchor + (seam - source) / perTransportFrame
    return at / sampleRate
  }
}

extension Mixer {
  /// The rules a loop region must follow in a file of `length` seconds (the REPL's `loop` and
  /// a session's `loopStart`/`loopEnd`/`crossfade` alike).
  static func checkLoopRegion(
    start: Double?, end: Double?, crossfade: Double, length: Double,
    name: String
  ) throws(MixerError) {
    guard let start, let end else { return }
    try MixerError.check(start, .loopPoint, "loop start")
    try MixerError.check(end, .loopPoint, "loop end")
    guard end > start else {
      throw MixerError("a loop region needs 0 ≤ start < end (got \(NumberFormat.plain(start)) to \(NumberFormat.plain(end)))")
    }
    guard end <= length + 1e-9 else {
      throw MixerError("loop end \(NumberFormat.time(end)) is past the end of '\(printableText(name))' (\(NumberFormat.time(length)))")
    }
    if crossfade > start {
      throw MixerError(
        "a \(NumberFormat.plain(crossfade)) s crossfade needs that much audio before the loop start (\(NumberFormat.time(start)))")
    }
    if crossfade > end - start {
      throw MixerError("the crossfade (\(NumberFormat.plain(crossfade)) s) is longer than the loop (\(NumberFormat.plain(end - start)) s)")
    }
  }
}

extension Mixer.Strips {
  /// Moves a strip's level (volume, pan, width; a stem's rate too) to a target over `seconds`
  /// (linear; `exponential` moves gain in equal dB steps). The strip's settings take the target
  /// at once (that is what a save stores); the sound gets there on time. A plain change of the
  /// same parameter cancels the glide. A live input glides whatever the transport does; stems
  /// and buses while it plays.
  public func glide(_ name: String, to target: GlideTarget, seconds: Double, exponential: Bool = false) throws(MixerError) {
    try Mixer.checkGlideTime(seconds, "glide time")
    let frames = Int((seconds * mixer.sampleRate).rounded())
    let control = target.control, value = target.value
    guard let parameter = Mixer.glideParameter(of: control) else { throw MixerError("\(control.word) does not glide") }
    try mixer.lock.locked { () throws(MixerError) in
      let strip = try mixer.strip(named: name)
      if case .bus = strip, !control.kinds.contains(.bus) { throw MixerError("'\(name)' is a bus; it has no \(control.key)") }
      if case .input = strip, !control.kinds.contains(.input) { throw mixer.notForInputs(name) }
      if let rule = control.rule { try MixerError.check(value, rule, control.key) }
      if exponential && !control.exponentialGlide {
        throw MixerError(
          "\(action: .exponentialGlide) glides are for \(action: .exponentialGlideSettings) only (\(control.key) glides linearly)")
      }
      // A stem's rate holds at the target after the glide: zita's converter for it is made now.
      if case .stem(let stem) = strip, parameter == .rate { mixer.offerHeldConverter(stem, rate: value) }
      try mixer.send(.stripGlide(mixer.target(of: strip), parameter: parameter, target: value, frames: frames, exponential: exponential))
      // The settings take the target at once, as a stem's always did.
      if case .number(let keyPath)? = control.field {
        var mix = mixer.mix(of: strip)
        mix[keyPath: keyPath] = value
        mixer.store(mix, in: strip)
      } else if case .stem(let stem) = strip, parameter == .rate {
        stem.settings.rate = value
      }
      mixer.isDirty = true
    }
  }

  /// Stops a strip's glides where they are; the settings take the values reached (a bus's and
  /// a live input's are set there, which ends their glides).
  public func cancelGlides(_ name: String) throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      let strip = try mixer.strip(named: name)
      let reached = mixer.glideProgress(of: strip)
      var mix = mixer.mix(of: strip)
      var levels: Set<GlideParameter> = []
      for control in StripParameter.all {
        guard case .number(let keyPath)? = control.field, let parameter = Mixer.glideParameter(of: control),
          let value = reached[parameter]
        else { continue }
        mix[keyPath: keyPath] = value
        levels.insert(parameter)
      }
      mixer.store(mix, in: strip)
      guard case .stem(let stem) = strip else {
        if !levels.isEmpty { try mixer.pushLevels(strip, levels) }
        return
      }
      try mixer.send(.cancelGlides(slot: stem.slot))
      if let rate = reached.rate { stem.settings.rate = rate }
    }
  }
}

extension Mixer.Stems {
  /// Transport seconds at which the stem next reaches its loop seam, as heard at the output.
  ///
  /// The position is what the renderer has output, not what it has read from the ring (a
  /// resampler or stretcher reads ahead of its output), anchored at the transport frame it was
  /// heard on, and carried on to the seam at the stem's rate. Exact while the rate holds; a
  /// rate glide still running moves the seam by what it changes after the call.
  public func nextLoopSeam(of name: String) throws(MixerError) -> Double {
    try mixer.lock.locked { () throws(MixerError) -> Double in mixer.nextLoopSeamLocked(try mixer.find(name)) }
  }

  /// Loops a region of the stem's file (seconds in the file), or the whole file when nil, with
  /// an equal-power crossfade of `crossfade` seconds at the seam. The transport re-syncs at its
  /// position (a 5 ms fade) so the change is heard at once.
  public func setLoopRegion(_ name: String, start: Double?, end: Double?, crossfade: Double) throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      let stem = try mixer.find(name)
      let length = Double(stem.info.frameCount) / Double(stem.info.sampleRate)
      try MixerError.check(crossfade, .crossfade, "crossfade")
      guard (start == nil) == (end == nil) else {
        throw MixerError("a loop region needs both a start and an end (or neither, for the whole file)")
      }
      try Mixer.checkLoopRegion(start: start, end: end, crossfade: crossfade, length: length, name: name)
      var settings = stem.settings
      settings.loopStart = start
      settings.loopEnd = end
      settings.crossfade = start == nil ? 0 : crossfade
      guard settings != stem.settings else { return }
      stem.settings = settings
      stem.publishRegion(sampleRate: Double(stem.info.sampleRate))
      try mixer.locate(toFrame: mixer.currentTransportFrame())
      mixer.isDirty = true
    }
  }

  /// Switches a stem between varispeed (libsamplerate: pitch follows the rate, like tape) and
  /// stretch (Rubber Band: the rate changes tempo only, and `pitch` shifts independently). The
  /// stem gets a new voice and the transport re-syncs at its position (5 ms fades, no click).
  /// In stretch mode `stretch` picks the stretcher (`StretchQuality`; nil: `fine`, Rubber Band,
  /// as `mode NAME stretch` always meant); a change of quality alone rebuilds the stem only when
  /// its stretcher changes (a pitch-shifted stem uses Rubber Band whatever the quality).
  public func setMode(_ name: String, _ mode: RateMode, stretch: StretchQuality? = nil) throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      let stem = try mixer.find(name)
      var settings = stem.settings
      settings.mode = mode
      if mode == .stretch { settings.stretch = stretch ?? .fine }
      guard settings != stem.settings else { return }
      if mode == .stretch && stem.settings.mode == .stretch
        && StretchState.usesWsola(fast: settings.stretch == .fast, pitchSemitones: settings.pitch)
          == StretchState.usesWsola(fast: stem.settings.stretch == .fast, pitchSemitones: settings.pitch)
      {
        stem.settings = settings
        mixer.isDirty = true
        return
      }
      if mode == .varispeed && stem.settings.pitch != 0 {
        // Varispeed has no pitch of its own (the rate moves it): the same rule as `pitch` and the
        // session file's, so a saved session always opens again.
        throw MixerError(
          "'\(name)' is pitch-shifted (\(NumberFormat.plain(stem.settings.pitch)) semitones): \(action: .resetPitch(name)) first (in varispeed the pitch follows the rate)"
        )
      }
      let position = mixer.currentTransportFrame()
      try mixer.rebuildStems([(stem, settings)], quality: mixer.quality, what: "switch '\(printableText(name))' to \(mode.rawValue) mode")
      try mixer.locate(toFrame: position)
      mixer.isDirty = true
    }
  }

  /// Pitch shift in semitones (−24…24) for a stem in stretch mode.
  public func setPitch(_ name: String, _ semitones: Double) throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      let stem = try mixer.find(name)
      try MixerError.check(semitones, .pitch, "pitch")
      guard stem.settings.mode == .stretch else {
        throw MixerError("pitch shifts need stretch mode: \(action: .stretchMode(name)) first (in varispeed the pitch follows the rate)")
      }
      var settings = stem.settings
      settings.pitch = semitones
      guard settings != stem.settings else { return }
      let fileRate = Double(stem.info.sampleRate)
      // A `fast` stem moves between WSOLA and Rubber Band across pitch 0: the same line.
      let resampling = { (pitch: Double) in
        StretchState.needsResampler(pitchSemitones: pitch, fileRate: fileRate, engineRate: mixer.sampleRate)
      }
      if resampling(semitones) != resampling(stem.settings.pitch) {
        // Into or out of pitch 0 the stretcher's resampler comes in or goes: a new stretcher, and
        // the transport re-syncs at its position (5 ms fades), as a mode switch does.
        let position = mixer.currentTransportFrame()
        try mixer.rebuildStems([(stem, settings)], quality: mixer.quality, what: "shift the pitch of '\(printableText(name))'")
        try mixer.locate(toFrame: position)
      } else {
        try mixer.send(
          .setPitchScale(
            slot: stem.slot,
            scale: StretchState.pitchScale(
              semitones: semitones, fileRate: fileRate, engineRate: mixer.sampleRate)))
        stem.settings = settings
      }
      mixer.isDirty = true
    }
  }
}
