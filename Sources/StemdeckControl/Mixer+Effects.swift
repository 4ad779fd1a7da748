import Foundation
import CSampleRate
import StemdeckAudioFile
import StemdeckEngine
import StemdeckSession
import StemdeckText

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

/// An effect's samples at the engine rate, decoded and not yet handed to the renderer.
struct DecodedEffect: @unchecked Sendable {
  let data: UnsafeMutablePointer<Float>
  let frames: Int
  let channels: Int
}

/// An effect loading on its own thread (`mixer.effects.startLoading`). The thread decodes; the
/// control thread takes the result in `pump`. A job cancelled before it ends frees its own result.
final class EffectLoadJob: @unchecked Sendable {
  let settings: EffectSettings
  let path: String
  let slot: Int32
  let sampleRate: Double
  let neededBytes: Int
  private let lock = NSLock()
  private var file: SoundFile?
  private var result: Result<DecodedEffect, MixerError>?
  private var cancelled = false

  init(settings: EffectSettings, path: String, slot: Int32, sampleRate: Double, file: consuming SoundFile) {
    self.settings = settings
    self.path = path
    self.slot = slot
    self.sampleRate = sampleRate
    self.neededBytes = Mixer.effectBytes(file, sampleRate: sampleRate)
    self.file = consume file
  }

  /// Whether `cancel()` was called (asked by the thread between blocks).
  var isCancelled: Bool { lock.withLock { cancelled } }

  /// Whether the thread has ended.
  var isFinished: Bool { lock.withLock { finished } }
  private var finished = false

  /// The load thread's body.
  func run() {
    defer { lock.withLock { finished = true } }
    lock.lock()
    let taken = file.take()
    lock.unlock()
    guard let file = taken else { return }
    let outcome: Result<DecodedEffect, MixerError>
    do throws(MixerError) {
      outcome = .success(
        try Mixer.decodeEffect(
          file, name: settings.name, path: path, sampleRate: sampleRate,
          cancelled: { [self] in isCancelled }))
    } catch {
      outcome = .failure(error)
    }
    _ = consume file  // closed now, not when the job goes
    lock.withLock {
      if cancelled {
        if case .success(let decoded) = outcome { decoded.data.deallocate() }
      } else {
        result = outcome
      }
    }
  }

  /// The result once the thread is done (taken once), nil while it runs.
  func takeResult() -> Result<DecodedEffect, MixerError>? {
    lock.withLock {
      defer { result = nil }
      return result
    }
  }

  func cancel() {
    lock.withLock {
      cancelled = true
      if case .success(let decoded) = result { decoded.data.deallocate() }
      result = nil
    }
  }
}

/// What `sfx` lists.
public struct EffectStatus: Sendable {
  public var settings: EffectSettings
  public var path: String
  public var seconds: Double
  public var channels: Int
}

/// The mixer's sound effects, by concern: what is loaded (in the order loaded), what is being
/// decoded, what waits to be freed, and what a session named but could not load.
struct EffectsState {
  var byName: [String: LoadedEffect] = [:]
  var order: [String] = []
  /// Unloaded effects whose samples wait for the renderer to let go of them.
  var unloading: [LoadedEffect] = []
  /// Effects decoding on their own threads (`sfx load`), in the order asked for.
  var loading: [EffectLoadJob] = []
  /// Loads cancelled whose thread may still be running (`effects.loadThreadsRunning`).
  var loadsCancelled: [EffectLoadJob] = []
  /// Effects of a session whose audio file could not be loaded: kept (and saved) as they were.
  var offline: [OfflineEffect] = []
}

extension Mixer {

  /// Installs the background loads that are done (called by pump).
  func finishEffectLoads() -> [MixerEvent] {
    var events: [MixerEvent] = []
    // The finished jobs leave the list first: installing touches `effects` too.
    var done: [(EffectLoadJob, Result<DecodedEffect, MixerError>)] = []
    effectsState.loading.removeAll { job in
      guard let result = job.takeResult() else { return false }
      done.append((job, result))
      return true
    }
    for (job, result) in done {
      switch result {
      case .success(let decoded):
        do throws(MixerError) {
          try installEffect(settings: job.settings, path: job.path, slot: job.slot, decoded: decoded)
          events.append(.effectLoaded(job.settings.name))
        } catch {
          events.append(.effectFailed(job.settings.name, error.text))
        }
      case .failure(let error):
        events.append(.effectFailed(job.settings.name, "\(error)"))
      }
    }
    return events
  }

  /// Cancels the loads still running (their memory is freed by their thread when it ends).
  func cancelEffectLoads() {
    for job in effectsState.loading { retire(job) }
    effectsState.loading.removeAll()
  }

  /// Cancels `job` (no longer in `effects.loading`); its thread stops within a block.
  func retire(_ job: EffectLoadJob) {
    job.cancel()
    effectsState.loadsCancelled.removeAll { $0.isFinished }
    effectsState.loadsCancelled.append(job)
  }

  /// The checks before a load: the name, the settings, a free slot (returned).
  private func checkNewEffect(_ settings: EffectSettings) throws(MixerError) -> Int32 {
    if let problem = NameRules.effectProblem(settings.name) { throw MixerError(ControlText(problem)) }
    if effectsState.loading.contains(where: { $0.settings.name == settings.name }) {
      throw MixerError("an effect named '\(settings.name)' is still loading (\(action: .unloadEffect(settings.name)) cancels it)")
    }
    if effectsState.byName[settings.name] != nil || effectsState.offline.contains(where: { $0.settings.name == settings.name }) {
      throw MixerError("an effect named '\(settings.name)' is already loaded (\(action: .unloadEffect(settings.name)) first)")
    }
    try MixerError.check(settings.volume, .volume, "effect volume")
    try MixerError.check(settings.pan, .pan, "effect pan")
    let taken = Set(effectsState.byName.values.map(\.slot) + effectsState.unloading.map(\.slot) + effectsState.loading.map(\.slot))
    guard let slot = (0..<Int32(EffectBank.maxEffects)).first(where: { !taken.contains($0) }) else {
      throw MixerError("cannot load effect '\(settings.name)': all \(EffectBank.maxEffects) effect slots are in use")
    }
    return slot
  }

  /// Opens the effect's file and checks, from its header, the limits: its length, its memory, and
  /// what it will hold at the engine rate against what the others (loaded or loading) hold.
  private func openEffectFile(path: String, settings: EffectSettings) throws(MixerError) -> SoundFile {
    do throws(MixerError) {
      let file: SoundFile
      do { file = try SoundFile(readingFrom: path) } catch { throw MixerError("\(error)") }
      let fileRate = file.info.sampleRate
      do {
        try file.checkFits(maxFrames: Int(Mixer.Effects.maxSeconds * Double(fileRate)), maxBytes: Mixer.Effects.maxBytes)
      } catch { throw MixerError("\(error)") }
      let held =
        effectsState.byName.values.reduce(0) { $0 + $1.frames * $1.channels * MemoryLayout<Float>.size }
        + effectsState.loading.reduce(0) { $0 + $1.neededBytes }
      let needed = Self.effectBytes(file, sampleRate: sampleRate)
      if held + needed > Mixer.Effects.maxBankBytes {
        throw MixerError(
          "\(path): the loaded effects hold \(held >> 20) MB and this one needs \(needed >> 20) MB; effects may hold at most \(Mixer.Effects.maxBankBytes >> 20) MB in all (\(action: .unloadEffect(nil)) some first)"
        )
      }
      return file
    } catch {
      throw MixerError("cannot load effect '\(settings.name)': \(error)")
    }
  }

  /// What an effect's file holds at the engine rate, in bytes.
  static func effectBytes(_ file: borrowing SoundFile, sampleRate: Double) -> Int {
    let fileRate = file.info.sampleRate
    let frames = min(file.info.frameCount, Int(Effects.maxSeconds * Double(fileRate)))
    return Int(Double(frames) * sampleRate / Double(fileRate)) * min(file.info.channelCount, 2) * MemoryLayout<Float>.size
  }

  /// Reads the whole file and converts it to the engine rate: the slow part, on any thread (it
  /// touches nothing but the file and the memory it returns). `cancelled` is asked between
  /// blocks of the reading and of the conversion: a load cancelled (`sfx unload`, a newer `sfx
  /// load` of the name, Ctrl-C during `sfx wait`) stops within a block and keeps nothing.
  static func decodeEffect(
    _ file: borrowing SoundFile, name: String, path: String, sampleRate: Double,
    cancelled: () -> Bool = { false }
  ) throws(MixerError) -> DecodedEffect {
    let fileRate = file.info.sampleRate
    let samples: [Float], channels: Int
    do {
      (samples, channels) = try file.readAll(
        maxFrames: Int(Effects.maxSeconds * Double(fileRate)), maxBytes: Effects.maxBytes,
        cancelled: cancelled)
    } catch { throw MixerError("cannot load effect '\(name)': \(error)") }
    var converted = samples
    if fileRate != Int(sampleRate) {
      let ratio = sampleRate / Double(fileRate)
      let inFrames = samples.count / channels
      var out = [Float](repeating: 0, count: (Int(Double(inFrames) * ratio) + 64) * channels)
      var produced = 0
      var error: Int32 = 0
      guard let converter = src_new(Int32(SRC_SINC_BEST_QUALITY), Int32(channels), &error) else {
        throw MixerError("cannot load effect '\(name)': resampling failed: \(String(cString: src_strerror(error)))")
      }
      defer { src_delete(converter) }
      // A block at a time (the same result as one call: the converter keeps its state), so that
      // a cancel is seen within a block.
      let block = 1 << 16
      var consumed = 0
      samples.withUnsafeBufferPointer { i in
        out.withUnsafeMutableBufferPointer { o in
          while error == 0 && !cancelled() {
            let take = min(block, inFrames - consumed)
            guard o.count / channels > produced else { break }
            var d = SRC_DATA()
            d.data_in = i.baseAddress.map { $0 + consumed * channels }
            d.data_out = o.baseAddress.map { $0 + produced * channels }
            d.input_frames = take
            d.output_frames = o.count / channels - produced
            d.src_ratio = ratio
            d.end_of_input = consumed + take == inFrames ? 1 : 0
            error = src_process(converter, &d)
            consumed += d.input_frames_used
            produced += d.output_frames_gen
            // Done once the input is all in and the converter gives nothing more (or makes no progress).
            if d.output_frames_gen == 0 && (take == 0 || d.input_frames_used == 0) { break }
          }
        }
      }
      if cancelled() { throw MixerError("cannot load effect '\(name)': \(path): cancelled") }
      if error != 0 {
        throw MixerError("cannot load effect '\(name)': resampling failed: \(String(cString: src_strerror(error)))")
      }
      converted = Array(out.prefix(produced * channels))
    }
    let frames = converted.count / channels
    guard frames > 0 else { throw MixerError("cannot load effect '\(name)': \(path) has no audio") }
    let data = UnsafeMutablePointer<Float>.allocate(capacity: converted.count)
    converted.withUnsafeBufferPointer { data.initialize(from: $0.baseAddress!, count: converted.count) }
    return DecodedEffect(data: data, frames: frames, channels: channels)
  }

  /// Hands a decoded effect to the renderer (command ring) and records it; frees it on failure.
  private func installEffect(settings: EffectSettings, path: String, slot: Int32, decoded: DecodedEffect) throws(MixerError) {
    let effect = LoadedEffect(
      settings: settings, path: path, slot: slot, data: decoded.data, frames: decoded.frames, channels: decoded.channels)
    do throws(MixerError) {
      try send(.loadEffect(slot: slot, sample: EffectSample(data: decoded.data, frames: decoded.frames, channels: decoded.channels)))
    } catch {
      decoded.data.deallocate()
      throw error
    }
    effectsState.byName[settings.name] = effect
    effectsState.order.append(settings.name)
  }

  func effect(_ name: String) throws(MixerError) -> LoadedEffect {
    if let e = effectsState.byName[name] { return e }
    if effectsState.loading.contains(where: { $0.settings.name == name }) {
      throw MixerError("effect '\(name)' is still loading (\(action: .waitForEffect(name)) waits for it)")
    }
    throw MixerError.unknown(.effect, name, known: effectsState.order)
  }

  /// Frees an effect's memory after the renderer reported `effectUnloaded` (called by pump).
  func effectReleased(slot: Int32) {
    if let index = effectsState.unloading.firstIndex(where: { $0.slot == slot }) {
      effectsState.unloading[index].data.deallocate()
      effectsState.unloading.remove(at: index)
    }
  }

  /// Frees every effect (shutdown, after the driver stopped).
  func freeAllEffects() {
    for e in effectsState.byName.values { e.data.deallocate() }
    for e in effectsState.unloading { e.data.deallocate() }
    effectsState.byName.removeAll()
    effectsState.unloading.removeAll()
    cancelEffectLoads()
    effectsState.order.removeAll()
  }
}

extension Mixer.Effects {
  /// Longest sound effect held in memory.
  public static let maxSeconds = 60.0

  /// Most memory one effect's file may take once decoded (folded to stereo, at its own rate):
  /// 60 s of stereo up to 192 kHz. The length limit alone let a 64-channel 768 kHz file take
  /// 2 GB for 10 s, and ~12 GB per effect at 60 s.
  public static let maxBytes = 128 << 20

  /// Most memory all loaded effects may hold together (at the engine rate).
  public static let maxBankBytes = 1 << 30

  /// Loads a short audio file into memory as effect `settings.name`, converted to the engine's
  /// rate once here (best-quality sinc), so firing it costs nothing but mixing. Synchronous (a
  /// session's effects, a rebuild at a new rate); `sfx load` uses `effects.startLoading`.
  public func load(path: String, settings: EffectSettings) throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      let slot = try mixer.checkNewEffect(settings)
      let file = try mixer.openEffectFile(path: path, settings: settings)
      let decoded = try Mixer.decodeEffect(file, name: settings.name, path: path, sampleRate: mixer.sampleRate)
      try mixer.installEffect(settings: settings, path: path, slot: slot, decoded: decoded)
      mixer.isDirty = true
    }
  }

  /// Starts loading an effect on a background thread: what can be checked at once is (the name,
  /// a free slot, the file opens as audio, the length and memory limits from its header), then
  /// the decoding and the conversion to the engine rate run off the control thread. `pump`
  /// installs the effect when it is done (handing it to the renderer through the command ring,
  /// as `effects.load` does) and reports `.effectLoaded` or `.effectFailed`.
  ///
  /// A load of the same name still running is superseded: once the new one has passed its
  /// checks, the old one is cancelled (its thread stops within a block and keeps nothing); if
  /// the new one fails them, the old one runs on. Returns whether one was superseded.
  @discardableResult
  public func startLoading(path: String, settings: EffectSettings) throws(MixerError) -> Bool {
    try mixer.lock.locked { () throws(MixerError) -> Bool in
      let running = mixer.effectsState.loading.firstIndex { $0.settings.name == settings.name }
      let old = running.map { mixer.effectsState.loading.remove(at: $0) }
      let slot: Int32
      let file: SoundFile
      do throws(MixerError) {
        slot = try mixer.checkNewEffect(settings)
        file = try mixer.openEffectFile(path: path, settings: settings)
      } catch {
        if let old, let running { mixer.effectsState.loading.insert(old, at: running) }
        throw error
      }
      if let old { mixer.retire(old) }
      let job = EffectLoadJob(settings: settings, path: path, slot: slot, sampleRate: mixer.sampleRate, file: file)
      mixer.effectsState.loading.append(job)
      mixer.isDirty = true
      let thread = Thread {
        nameCurrentThread("stemdeck-sfx")
        job.run()
      }
      thread.name = "stemdeck-sfx"
      thread.start()
      return old != nil
    }
  }

  /// Names of the effects still loading, in the order they were asked for.
  public var stillLoading: [String] { mixer.lock.locked { mixer.effectsState.loading.map(\.settings.name) } }

  /// Effect load threads still running, cancelled ones included (a cancel ends its thread's
  /// work within a block: the tests measure it).
  public var loadThreadsRunning: Int {
    mixer.lock.locked {
      mixer.effectsState.loadsCancelled.removeAll { $0.isFinished }
      return mixer.effectsState.loading.filter { !$0.isFinished }.count + mixer.effectsState.loadsCancelled.count
    }
  }

  /// Plays an effect now (it sounds from the start of the next period), polyphonically.
  public func fire(_ name: String, volume: Double? = nil, pan: Double? = nil) throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      let e = try mixer.effect(name)
      let v = volume ?? e.settings.volume
      let p = pan ?? e.settings.pan
      try MixerError.check(v, .volume, "effect volume")
      try MixerError.check(p, .pan, "effect pan")
      let g = PanLaw.gains(pan: p, channelCount: e.channels)
      try mixer.send(.fireEffect(slot: e.slot, left: Float(g.left * v), right: Float(g.right * v)))
    }
  }

  /// Fades out an effect's playing instances (nil: every effect).
  public func stop(_ name: String?) throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      let slot = try name.map { (n: String) throws(MixerError) in try mixer.effect(n).slot } ?? -1
      try mixer.send(.stopEffect(slot: slot))
    }
  }

  /// Unloads an effect; its memory is freed once the renderer lets go of it.
  public func unload(_ name: String) throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      if let index = mixer.effectsState.offline.firstIndex(where: { $0.settings.name == name }) {
        mixer.effectsState.offline.remove(at: index)  // one whose file was missing at open
        mixer.isDirty = true
        return
      }
      if let index = mixer.effectsState.loading.firstIndex(where: { $0.settings.name == name }) {
        mixer.retire(mixer.effectsState.loading.remove(at: index))  // still loading: its thread frees what it made
        mixer.isDirty = true
        return
      }
      let e = try mixer.effect(name)
      try mixer.send(.unloadEffect(slot: e.slot))
      mixer.effectsState.byName[name] = nil
      mixer.effectsState.order.removeAll { $0 == name }
      mixer.effectsState.unloading.append(e)
      mixer.isDirty = true
    }
  }

  public func statuses() -> [EffectStatus] {
    mixer.lock.locked {
      mixer.effectsState.order.compactMap { mixer.effectsState.byName[$0] }.map {
        EffectStatus(settings: $0.settings, path: $0.path, seconds: Double($0.frames) / mixer.sampleRate, channels: $0.channels)
      }
    }
  }
}

// The sound effects' part of the session file (Mixer+Session.swift calls these under the lock).
extension Mixer.Effects {
  /// Writes the effects: the loaded ones in order, those still loading, and the offline ones back
  /// at the places they had (each file stored relative to `sessionPath`).
  func save(into s: inout Session, sessionPath: String) {
    let state = mixer.effectsState
    func stored(_ settings: EffectSettings, _ path: String) -> EffectSettings {
      var settings = settings
      settings.file = SessionFile.storedPath(forAudioFile: path, sessionPath: sessionPath)
      return settings
    }
    s.effects = state.order.compactMap { state.byName[$0] }.map { stored($0.settings, $0.path) }
    // Those still loading are part of the session already.
    s.effects += state.loading.map { stored($0.settings, $0.path) }
    for effect in state.offline.sorted(by: { $0.index < $1.index })
    where !s.effects.contains(where: { $0.name == effect.settings.name }) {
      s.effects.insert(stored(effect.settings, effect.path), at: min(effect.index, s.effects.count))
    }
  }

  /// Unloads every effect and cancels the loads running: the first step of installing a session.
  func clear() throws(MixerError) {
    for name in mixer.effectsState.order { try unload(name) }
    mixer.cancelEffectLoads()
    mixer.effectsState.offline = []
  }

  /// Loads the session's sound effects; a failure is a warning (an error in strict mode), and the
  /// effect is kept as it was (like an offline stem) so the next save writes it back unchanged.
  func install(from session: Session, sessionPath: String, strict: Bool) throws(MixerError) -> [MixerWarning] {
    var warnings: [MixerWarning] = []
    for (index, effect) in session.effects.enumerated() {
      let path = SessionFile.resolve(file: effect.file, sessionPath: sessionPath)
      do throws(MixerError) { try load(path: path, settings: effect) } catch {
        if strict { throw MixerError(file: sessionPath, "effects[\(index)] (\(effect.name)): \(error)") }
        mixer.effectsState.offline.append(OfflineEffect(settings: effect, path: path, index: index))
        warnings.append(
          MixerWarning(file: sessionPath, "effects[\(index)] (\(effect.name)): \(error) — not loaded; kept in the session as it is"))
      }
    }
    return warnings
  }
}
