import CSampleRate
import StemdeckAudioFile
import StemdeckEngine
import StemdeckSession

/// A sound effect loaded in memory (control thread's record).
final class LoadedEffect {
  var settings: EffectSettings
  let path: String
  let slot: Int32
  let data: UnsafeMutablePointer<Float>
  let frames: Int
  let channels: Int

  init(settings: EffectSettings, path: String, slot: Int32, data: UnsafeMutablePointer<Float>, frames: Int, channels: Int) {
    self.settings = settings
    self.path = path
    self.slot = slot
    self.data = data
    self.frames = frames
    self.channels = channels
  }
}

/// What `sfx` lists.
public struct EffectStatus: Sendable {
  public var settings: EffectSettings
  public var path: String
  public var seconds: Double
  public var channels: Int
}

extension Mixer {
  /// Longest sound effect held in memory.
  public static let maxEffectSeconds = 60.0
  /// Most memory one effect's file may take once decoded (folded to stereo, at its own rate):
  /// 60 s of stereo up to 192 kHz. The length limit alone let a 64-channel 768 kHz file take
  /// 2 GB for 10 s, and ~12 GB per effect at 60 s.
  public static let maxEffectBytes = 128 << 20
  /// Most memory all loaded effects may hold together (at the engine rate).
  public static let maxEffectBankBytes = 1 << 30

  /// Loads a short audio file into memory as effect `settings.name`, converted to the engine's
  /// rate once here (best-quality sinc), so firing it costs nothing but mixing.
  public func loadEffect(path: String, settings: EffectSettings) throws(MixerError) {
    try lock.locked { () throws(MixerError) in
      if let problem = NameRules.effectProblem(settings.name) { throw MixerError(problem) }
      if effectsByName[settings.name] != nil || offlineEffects.contains(where: { $0.settings.name == settings.name }) {
        throw MixerError("an effect named '\(settings.name)' is already loaded ('sfx unload \(settings.name)' first)")
      }
      try MixerError.check(settings.volume, .volume, "effect volume")
      try MixerError.check(settings.pan, .pan, "effect pan")
      guard let slot = (0..<Int32(EffectBank.maxEffects)).first(where: { s in !effectsByName.values.contains { $0.slot == s } && !effectsUnloading.contains { $0.slot == s } }) else {
        throw MixerError("cannot load effect '\(settings.name)': all \(EffectBank.maxEffects) effect slots are in use")
      }
      let samples: [Float], channels: Int, fileRate: Int
      do throws(MixerError) {
        let file: SoundFile
        do { file = try SoundFile(readingFrom: path) } catch { throw MixerError("\(error)") }
        fileRate = file.info.sampleRate
        // What it will hold at the engine rate, against what the others already hold.
        let held = effectsByName.values.reduce(0) { $0 + $1.frames * $1.channels * MemoryLayout<Float>.size }
        let frames = min(file.info.frameCount, Int(Self.maxEffectSeconds * Double(fileRate)))
        let needed = Int(Double(frames) * sampleRate / Double(fileRate)) * min(file.info.channelCount, 2) * MemoryLayout<Float>.size
        if held + needed > Self.maxEffectBankBytes {
          throw MixerError("\(path): the loaded effects hold \(held >> 20) MB and this one needs \(needed >> 20) MB; effects may hold at most \(Self.maxEffectBankBytes >> 20) MB in all ('sfx unload' some first)")
        }
        do {
          (samples, channels) = try file.readAll(maxFrames: Int(Self.maxEffectSeconds * Double(fileRate)), maxBytes: Self.maxEffectBytes)
        } catch { throw MixerError("\(error)") }
      } catch {
        throw MixerError("cannot load effect '\(settings.name)': \(error)")
      }
      var converted = samples
      if fileRate != Int(sampleRate) {
        let ratio = sampleRate / Double(fileRate)
        let inFrames = samples.count / channels
        var out = [Float](repeating: 0, count: (Int(Double(inFrames) * ratio) + 64) * channels)
        var produced = 0
        let error: Int32 = samples.withUnsafeBufferPointer { i in
          out.withUnsafeMutableBufferPointer { o in
            var d = SRC_DATA()
            d.data_in = i.baseAddress
            d.data_out = o.baseAddress
            d.input_frames = inFrames
            d.output_frames = o.count / channels
            d.src_ratio = ratio
            let e = src_simple(&d, Int32(SRC_SINC_BEST_QUALITY), Int32(channels))
            produced = d.output_frames_gen
            return e
          }
        }
        if error != 0 {
          throw MixerError("cannot load effect '\(settings.name)': resampling failed: \(String(cString: src_strerror(error)))")
        }
        converted = Array(out.prefix(produced * channels))
      }
      let frames = converted.count / channels
      guard frames > 0 else { throw MixerError("cannot load effect '\(settings.name)': \(path) has no audio") }
      let data = UnsafeMutablePointer<Float>.allocate(capacity: converted.count)
      converted.withUnsafeBufferPointer { data.initialize(from: $0.baseAddress!, count: converted.count) }
      let effect = LoadedEffect(settings: settings, path: path, slot: slot, data: data, frames: frames, channels: channels)
      do throws(MixerError) {
        try send(.loadEffect(slot: slot, sample: EffectSample(data: data, frames: frames, channels: channels)))
      } catch {
        data.deallocate()
        throw error
      }
      effectsByName[settings.name] = effect
      effectOrder.append(settings.name)
      isDirty = true
    }
  }

  func effect(_ name: String) throws(MixerError) -> LoadedEffect {
    if let e = effectsByName[name] { return e }
    let known = effectOrder
    if known.isEmpty { throw MixerError("unknown effect '\(name)' (no effects are loaded; 'sfx load NAME PATH')") }
    if let guess = Suggestion.closest(to: name, in: known) {
      throw MixerError("unknown effect '\(name)' — did you mean '\(guess)'?")
    }
    throw MixerError("unknown effect '\(name)' (effects: \(known.joined(separator: ", ")))")
  }

  /// Plays an effect now (it sounds from the start of the next period), polyphonically.
  public func fireEffect(_ name: String, volume: Double? = nil, pan: Double? = nil) throws(MixerError) {
    try lock.locked { () throws(MixerError) in
      let e = try effect(name)
      let v = volume ?? e.settings.volume
      let p = pan ?? e.settings.pan
      try MixerError.check(v, .volume, "effect volume")
      try MixerError.check(p, .pan, "effect pan")
      let g = PanLaw.gains(pan: p, channelCount: e.channels)
      try send(.fireEffect(slot: e.slot, left: Float(g.left * v), right: Float(g.right * v)))
    }
  }

  /// Fades out an effect's playing instances (nil: every effect).
  public func stopEffect(_ name: String?) throws(MixerError) {
    try lock.locked { () throws(MixerError) in
      let slot = try name.map { (n: String) throws(MixerError) in try effect(n).slot } ?? -1
      try send(.stopEffect(slot: slot))
    }
  }

  /// Unloads an effect; its memory is freed once the renderer lets go of it.
  public func unloadEffect(_ name: String) throws(MixerError) {
    try lock.locked { () throws(MixerError) in
      if let index = offlineEffects.firstIndex(where: { $0.settings.name == name }) {
        offlineEffects.remove(at: index)  // one whose file was missing at open
        isDirty = true
        return
      }
      let e = try effect(name)
      try send(.unloadEffect(slot: e.slot))
      effectsByName[name] = nil
      effectOrder.removeAll { $0 == name }
      effectsUnloading.append(e)
      isDirty = true
    }
  }

  public func effectStatuses() -> [EffectStatus] {
    lock.locked {
      effectOrder.compactMap { effectsByName[$0] }.map {
        EffectStatus(settings: $0.settings, path: $0.path, seconds: Double($0.frames) / sampleRate, channels: $0.channels)
      }
    }
  }

  /// Frees an effect's memory after the renderer reported `effectUnloaded` (called by pump).
  func effectReleased(slot: Int32) {
    if let index = effectsUnloading.firstIndex(where: { $0.slot == slot }) {
      effectsUnloading[index].data.deallocate()
      effectsUnloading.remove(at: index)
    }
  }

  /// Frees every effect (shutdown, after the driver stopped).
  func freeAllEffects() {
    for e in effectsByName.values { e.data.deallocate() }
    for e in effectsUnloading { e.data.deallocate() }
    effectsByName.removeAll()
    effectsUnloading.removeAll()
    effectOrder.removeAll()
  }
}
