import StemdeckSession
import StemdeckText

// Scenes (issue 41; docs/architecture.md, *Scenes*): stored mixes of every strip and the master
// (SceneSettings.swift), saved in the session. A recall changes every strip whose stored mix
// differs, in one renderer group, so every change lands on the same frame; with a fade, volume
// and pan (the master's level too) glide there together over the fade and land on its last
// frame, live and offline.

/// What a recall may change: some controls (`vol`, `pan`, `mute`, `solo`, `safe`, `eq`,
/// `inserts`; nil: all) of some strips (nil: all of the scene's).
public struct SceneScope: Sendable, Equatable {
  public var controls: Set<String>?
  public var strips: Set<String>?

  public init(controls: Set<String>? = nil, strips: Set<String>? = nil) {
    self.controls = controls
    self.strips = strips
  }

  /// The words `--only` takes: each strip control a scene keeps (its console word), `eq` and
  /// `inserts` (Mixer+SceneInserts.swift).
  public static let words: [String] = StripParameter.all.filter { $0.field != nil }.map(\.word) + ["eq", "inserts"]

  /// `current` with the scene's values of the controls in scope: the strip's route, direct outs
  /// and sends stay as they are.
  func apply(_ scene: StripSettings, to current: StripSettings) -> StripSettings {
    guard let controls else { return current.withMix(of: scene) }
    var out = current
    for control in StripParameter.all where controls.contains(control.word) {
      switch control.field {
      case .number(let keyPath)?: out[keyPath: keyPath] = scene[keyPath: keyPath]
      case .toggle(let keyPath)?: out[keyPath: keyPath] = scene[keyPath: keyPath]
      case nil: break
      }
    }
    if controls.contains("eq") { out.eq = scene.eq }
    return out
  }
}

/// What a recall did: the strips it changed, and those the scene names that are not here.
public struct SceneRecall: Sendable, Equatable {
  public var changed: [String] = []
  public var missing: [String] = []
  public var safe: [String] = []
}

extension Mixer {

  /// The mix now, as a scene named `name`: every strip's mix (offline stems' too) and the master.
  func captureScene(_ name: String) -> SceneSettings {
    var scene = SceneSettings(name: name)
    scene.masterVolume = masterVolume
    scene.masterEQ = masterEQ
    func bare(_ strip: StripSettings, _ kind: StripKind) -> StripSettings { StripSettings.defaults(of: kind).withMix(of: strip) }
    scene.stems = savedOrder().map { SceneStrip(name: $0.settings.name, strip: bare($0.settings.strip, .stem)) }
    scene.buses = busTable.buses.map { SceneStrip(name: $0.settings.name, strip: bare($0.settings.strip, .bus)) }
    scene.inputs = liveInputs.inputs.map { SceneStrip(name: $0.settings.name, strip: bare($0.settings.strip, .input)) }
    captureSceneInserts(&scene)
    return scene
  }

  /// The master's fader to `volume` over `seconds`, linearly (a scene's fade); its setting takes
  /// the target at once, as a strip's glide does.
  func glideMaster(to volume: Double, seconds: Double) throws(MixerError) {
    try MixerError.check(volume, .volume, "master volume")
    let frames = Int((seconds * sampleRate).rounded())
    try send(.stripGlide(.master, parameter: .volume, target: volume, frames: frames, exponential: false))
    masterVolume = volume
    isDirty = true
  }

  func unknownScene(_ name: String) -> MixerError {
    let names = sceneStore.map(\.name)
    return MixerError(
      "unknown scene '\(printableText(name))' (\(names.isEmpty ? "there are none yet: 'scene save NAME' stores the mix now" : "scenes: " + names.joined(separator: ", ")))"
    )
  }
}

extension Mixer.Scenes {
  /// The session's scenes, in the order they were saved.
  public var list: [SceneSettings] { mixer.lock.locked { mixer.sceneStore } }

  /// The strips a recall leaves alone.
  public var safeStrips: [String] { mixer.lock.locked { mixer.recallSafe } }

  /// Stores the mix now as scene `name`: a new one (`update` false; refused when the name is
  /// taken), or in place of the one of that name (`update` true; refused when there is none).
  public func save(_ name: String, update: Bool) throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      if let problem = NameRules.sceneProblem(name) { throw MixerError(ControlText(problem)) }
      let index = mixer.sceneStore.firstIndex { $0.name == name }
      switch (index, update) {
      case (let i?, true): mixer.sceneStore[i] = mixer.captureScene(name)
      case (nil, false): mixer.sceneStore.append(mixer.captureScene(name))
      case (_?, false): throw MixerError("a scene named '\(name)' already exists ('scene update \(name)' stores the mix now in it)")
      case (nil, true): throw mixer.unknownScene(name)
      }
      mixer.isDirty = true
    }
  }

  public func remove(_ name: String) throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      guard let i = mixer.sceneStore.firstIndex(where: { $0.name == name }) else { throw mixer.unknownScene(name) }
      mixer.sceneStore.remove(at: i)
      mixer.isDirty = true
    }
  }

  public func rename(_ name: String, to newName: String) throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      guard let i = mixer.sceneStore.firstIndex(where: { $0.name == name }) else { throw mixer.unknownScene(name) }
      if let problem = NameRules.sceneProblem(newName) { throw MixerError(ControlText(problem)) }
      if newName != name && mixer.sceneStore.contains(where: { $0.name == newName }) {
        throw MixerError("a scene named '\(newName)' already exists")
      }
      mixer.sceneStore[i].name = newName
      mixer.isDirty = true
    }
  }

  /// Makes a strip recall-safe (a recall leaves it alone) or not.
  public func setRecallSafe(_ name: String, _ on: Bool) throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      if !mixer.table.offline.contains(where: { $0.settings.name == name }) { _ = try mixer.strip(named: name) }
      let was = mixer.recallSafe.contains(name)
      guard was != on else { return }
      if on { mixer.recallSafe.append(name) } else { mixer.recallSafe.removeAll { $0 == name } }
      mixer.isDirty = true
    }
  }

  /// Recalls scene `name` within `scope`: every strip whose stored mix differs from its mix now
  /// (recall-safe strips and strips not here left alone), and the master when the scope takes
  /// every strip. All of it in one renderer group, so it lands on one frame; with `fade` seconds,
  /// volume and pan (and the master's level) glide there together, linearly, and land on the
  /// fade's last frame; the other controls switch at its start. All or nothing: on an error
  /// every strip's mix is put back and the group is dropped.
  @discardableResult
  public func recall(_ name: String, fade: Double = 0, scope: SceneScope = SceneScope()) throws(MixerError) -> SceneRecall {
    try mixer.lock.locked { () throws(MixerError) -> SceneRecall in
      guard let scene = mixer.sceneStore.first(where: { $0.name == name }) else { throw mixer.unknownScene(name) }
      if fade != 0 { try Mixer.checkGlideTime(fade, "a scene's fade") }
      var result = SceneRecall()
      // Checked before anything changes; set once the group is in (Mixer+SceneInserts.swift).
      let insertChanges = try mixer.sceneInsertChanges(scene, scope: scope)
      let before = mixer.strips.snapshot()
      try mixer.beginGroup(atSeconds: nil)
      do throws(MixerError) {
        for (_, _, strips) in scene.lists {
          for s in strips where scope.strips?.contains(s.name) ?? true {
            if mixer.recallSafe.contains(s.name) { result.safe.append(s.name); continue }
            if let i = mixer.table.offline.firstIndex(where: { $0.settings.name == s.name }) {
              // Nothing plays: its settings take the scene's, for when its file is back.
              let target = scope.apply(s.strip, to: mixer.table.offline[i].settings.strip)
              if target != mixer.table.offline[i].settings.strip {
                mixer.table.offline[i].settings.strip = target
                result.changed.append(s.name)
                mixer.isDirty = true
              }
              continue
            }
            guard let ref = try? mixer.strip(named: s.name) else { result.missing.append(s.name); continue }
            let old = mixer.mix(of: ref)
            let target = scope.apply(s.strip, to: old)
            guard target != old else { continue }
            result.changed.append(s.name)
            if fade > 0 {
              if target.volume != old.volume { try mixer.strips.glide(s.name, to: .volume(target.volume), seconds: fade) }
              if target.pan != old.pan { try mixer.strips.glide(s.name, to: .pan(target.pan), seconds: fade) }
            }
            try mixer.changeStrip(ref) { (m: inout StripSettings) throws(MixerError) in m = target }
          }
        }
        if scope.strips == nil {
          if scope.controls?.contains("vol") ?? true, mixer.masterVolume != scene.masterVolume {
            if fade > 0 {
              try mixer.glideMaster(to: scene.masterVolume, seconds: fade)
            } else {
              try mixer.master.setVolume(scene.masterVolume)
            }
          }
          if scope.controls?.contains("eq") ?? true, mixer.masterEQ != scene.masterEQ { try mixer.master.setEQ(scene.masterEQ) }
        }
        try mixer.endGroup()
      } catch {
        mixer.strips.restore(before)
        try? mixer.abortGroup()
        throw error
      }
      try mixer.applySceneInserts(insertChanges)
      for change in insertChanges where !result.changed.contains(change.name) { result.changed.append(change.name) }
      return result
    }
  }
}

// The scenes' part of the session file (Mixer+Session.swift calls these under the lock).
extension Mixer.Scenes {
  func save(into s: inout Session) {
    s.scenes = mixer.sceneStore
    s.recallSafe = mixer.recallSafe
  }

  func install(from session: Session) {
    mixer.sceneStore = session.scenes
    mixer.recallSafe = session.recallSafe
  }
}
