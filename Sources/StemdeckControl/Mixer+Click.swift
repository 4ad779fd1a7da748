import StemdeckAudioFile
import StemdeckEngine
import StemdeckSession
import StemdeckText

// The click and the count-in, on the control side: the session's `ClickSettings` and its tempo
// become the renderer's `ClickParameters` (StemdeckEngine's Renderer/Click.swift), sent whenever
// either changes. docs/architecture.md, *Click and count-in*.

extension Mixer {

  /// Sends the click's samples when they are not the ones the renderer has (`syncClick`): read,
  /// folded to mono and brought to the engine rate here; one that cannot be read leaves the
  /// synthesized click and says why in `clickSampleProblem`.
  func syncClickSamples() {
    let wanted = [clickSetting.sample, clickSetting.accentSample]
    guard wanted != clickSamplesSent else { return }
    clickSampleProblem = nil
    var samples: UnsafeMutablePointer<ClickSamples>?
    if let beatPath = clickSetting.sample {
      do throws(MixerError) {
        let beat = try Self.readClickSample(beatPath, sampleRate: sampleRate)
        let accent = try clickSetting.accentSample.map { (p: String) throws(MixerError) in
          try Self.readClickSample(p, sampleRate: sampleRate)
        }
        samples = ClickSamples.make(accent: accent ?? beat, beat: beat)
      } catch {
        clickSampleProblem = error.text
      }
    }
    do {
      try send(.setClickSamples(samples))
      clickSamplesSent = wanted
    } catch {
      if let samples { ClickSamples.free(samples) }  // not sent: `play` tries again
    }
  }

  /// A click sample's frames: mono (the channels' mean), at `sampleRate` (linear interpolation),
  /// NaN and infinity as silence. At most `ClickSettings.maxSampleSeconds`, at least one frame.
  static func readClickSample(_ path: String, sampleRate: Double) throws(MixerError) -> [Float] {
    let raw: [Float], channels: Int, fileRate: Double
    do {
      let file = try SoundFile(readingFrom: path)
      fileRate = Double(file.info.sampleRate)
      (raw, channels) = try file.readAll(maxFrames: Int(ClickSettings.maxSampleSeconds * fileRate) + 1)
    } catch {
      throw MixerError(
        "click sample: \(error) (a click sample is an audio file of at most \(NumberFormat.plain(ClickSettings.maxSampleSeconds)) s)")
    }
    let frames = raw.count / max(1, channels)
    guard frames > 0 else { throw MixerError("click sample: \(path) has no audio") }
    let mono = (0..<frames).map { i -> Float in
      var sum: Float = 0
      for c in 0..<channels { sum += raw[i * channels + c] }
      let x = sum / Float(channels)
      return x.isFinite ? x : 0
    }
    guard fileRate != sampleRate else { return mono }
    let step = fileRate / sampleRate
    let count = max(1, Int(Double(frames) / step))
    return (0..<count).map { j in
      let t = Double(j) * step
      let i = Int(t), f = Float(t - Double(i))
      return i + 1 < frames ? mono[i] * (1 - f) + mono[i + 1] * f : mono[min(i, frames - 1)]
    }
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
  /// What the renderer is sent for `settings`: at the session's tempo, and the mix's plugin
  /// latency late (Engine Click.swift).
  func clickParameters(for settings: ClickSettings) -> ClickParameters {
    var parameters = Self.clickParameters(settings, tempo: tempoSetting, sampleRate: sampleRate)
    parameters.latencyFrames = insertRacks.totalLatency
    return parameters
  }

  func syncClick() throws(MixerError) {
    syncClickSamples()
    let parameters = clickParameters(for: clickSetting)
    guard parameters != clickSent else { return }
    try send(.setClick(parameters))
    clickSent = parameters
  }

}

extension Mixer.Click {
  /// The session's click and count-in.
  public var settings: ClickSettings { mixer.lock.locked { mixer.clickSetting } }

  /// Sets the click and count-in (each value checked against its rule; nothing changes on a
  /// refusal). The renderer takes it at the start of its next block.
  /// A sample (absolute paths) that cannot be read is refused, and nothing changes.
  public func set(_ settings: ClickSettings) throws(MixerError) {
    try MixerError.check(settings.level, .clickLevel, "click level")
    try MixerError.check(settings.countIn, .countIn, "count-in")
    try mixer.lock.locked { () throws(MixerError) in
      guard settings != mixer.clickSetting else { return }
      if settings.sample != mixer.clickSetting.sample || settings.accentSample != mixer.clickSetting.accentSample {
        // Read first: a file that cannot be read changes nothing.
        for path in [settings.sample, settings.accentSample].compactMap({ $0 }) {
          _ = try Mixer.readClickSample(path, sampleRate: mixer.sampleRate)
        }
      }
      let parameters = mixer.clickParameters(for: settings)
      try mixer.send(.setClick(parameters))
      mixer.clickSent = parameters
      mixer.clickSetting = settings
      mixer.isDirty = true
      if let problem = mixer.clickSampleProblem { throw MixerError(problem) }
    }
  }

  /// Why the session's click samples could not be read (the synthesized click plays), or nil.
  public var sampleWarning: ControlText? { mixer.lock.locked { mixer.clickSampleProblem } }

  /// Frames of count-in a `play` from a stop runs before the stems start (0: none, or no tempo).
  public var countInFrames: Int {
    mixer.lock.locked { Mixer.clickParameters(mixer.clickSetting, tempo: mixer.tempoSetting, sampleRate: mixer.sampleRate).countInFrames }
  }

  /// Seconds of count-in still to run before the stems start (0: none running).
  public var countInSecondsLeft: Double {
    Double(mixer.renderState.pointee.status.pointee.countInFramesLeft.load(ordering: .relaxed)) / mixer.sampleRate
  }

  /// Whether the click wants its own JACK ports (`stemdeck:click_L`/`click_R`): it clicks, or counts
  /// in, and is not routed into the master. The JACK driver registers them while this holds.
  public var portsWanted: Bool {
    mixer.lock.locked { mixer.clickSetting.output == .click && (mixer.clickSetting.on || mixer.clickSetting.countIn > 0) }
  }
}

// The tempo's and the click's part of the session file (Mixer+Session.swift calls these under the lock).
extension Mixer.Click {
  /// Writes the tempo and the click, its samples stored relative to `sessionPath`.
  func save(into s: inout Session, sessionPath: String) {
    s.tempo = mixer.tempoSetting
    s.click = mixer.clickSetting
    s.click.sample = s.click.sample.map { SessionFile.storedPath(forAudioFile: $0, sessionPath: sessionPath) }
    s.click.accentSample = s.click.accentSample.map { SessionFile.storedPath(forAudioFile: $0, sessionPath: sessionPath) }
  }

  /// Takes the session's tempo and click (its samples, relative to the session's folder in the
  /// file, absolute here). A sample that cannot be read is a warning: the synthesized click plays.
  func install(from session: Session, sessionPath: String) -> [MixerWarning] {
    mixer.tempoSetting = session.tempo
    var click = session.click
    click.sample = click.sample.map { SessionFile.resolve(file: $0, sessionPath: sessionPath) }
    click.accentSample = click.accentSample.map { SessionFile.resolve(file: $0, sessionPath: sessionPath) }
    mixer.clickSetting = click
    mixer.syncClickSamples()
    return mixer.clickSampleProblem.map { [MixerWarning(file: nil, "\($0); the synthesized click plays (the setting is kept)")] } ?? []
  }
}
