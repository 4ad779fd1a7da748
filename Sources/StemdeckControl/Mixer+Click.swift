import StemdeckEngine
import StemdeckSession

// The click and the count-in, on the control side: the session's `ClickSettings` and its tempo
// become the renderer's `ClickParameters` (StemdeckEngine's Renderer/Click.swift), sent whenever
// either changes. docs/architecture.md, *Click and count-in*.

extension Mixer {
  /// The session's click and count-in.
  public var click: ClickSettings { lock.locked { clickSetting } }

  /// Sets the click and count-in (each value checked against its rule; nothing changes on a
  /// refusal). The renderer takes it at the start of its next block.
  public func setClick(_ settings: ClickSettings) throws(MixerError) {
    try MixerError.check(settings.level, .clickLevel, "click level")
    try MixerError.check(settings.countIn, .countIn, "count-in")
    try lock.locked { () throws(MixerError) in
      guard settings != clickSetting else { return }
      let parameters = Self.clickParameters(settings, tempo: tempoSetting, sampleRate: sampleRate)
      try send(.setClick(parameters))
      clickSent = parameters
      clickSetting = settings
      isDirty = true
    }
  }

  /// Frames of count-in a `play` from a stop runs before the stems start (0: none, or no tempo).
  public var countInFrames: Int {
    lock.locked { Self.clickParameters(clickSetting, tempo: tempoSetting, sampleRate: sampleRate).countInFrames }
  }

  /// Seconds of count-in still to run before the stems start (0: none running).
  public var countInSecondsLeft: Double {
    Double(renderState.pointee.status.pointee.countInFramesLeft.load(ordering: .relaxed)) / sampleRate
  }

  /// The renderer's click for `settings` at `tempo` (none: no beats, no count-in).
  static func clickParameters(_ settings: ClickSettings, tempo: Tempo?, sampleRate: Double) -> ClickParameters {
    ClickParameters(
      on: settings.on, toMaster: settings.output == .master, gain: Float(Decibels.toAmplitude(settings.level)),
      framesPerBeat: tempo.map { 60 * sampleRate / $0.bpm } ?? 0, beatsPerBar: tempo?.beatsPerBar ?? 4,
      countInBars: settings.countIn)
  }

  /// Sends the click's parameters when the renderer's are not the session's (after a tempo or
  /// click change that could not be sent at once: `tempoSetting`'s and `clickSetting`'s didSet).
  func syncClick() throws(MixerError) {
    let parameters = Self.clickParameters(clickSetting, tempo: tempoSetting, sampleRate: sampleRate)
    guard parameters != clickSent else { return }
    try send(.setClick(parameters))
    clickSent = parameters
  }

  /// Whether the click wants its own JACK ports (`stemdeck:click_L`/`click_R`): it clicks, or counts
  /// in, and is not routed into the master. The JACK driver registers them while this holds.
  public var clickPortsWanted: Bool {
    lock.locked { clickSetting.output == .click && (clickSetting.on || clickSetting.countIn > 0) }
  }
}
