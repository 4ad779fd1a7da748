import CSampleRate
import Foundation
import StemdeckAudioFile
import StemdeckEngine
import StemdeckSession
import StemdeckText
import Synchronization

/// Stems: adding, replacing, removing and changing them (docs/architecture.md, *Control*).
extension Mixer {
  // MARK: - Stems

  /// `stems.add`, or with `pendingAt`, a stem of the next song: its voice is placed for transport
  /// frame `pendingAt` of the new song and stays silent until a `songs.change` switch.
  @discardableResult
  func insertStem(path: String, settings: StemSettings, pendingAt: Int?) throws(MixerError) -> String {
    try lock.locked { () throws(MixerError) -> String in
      try validate(settings, isNew: true)
      if pendingAt == nil { try completePendingSongChange() }
      let file: SoundFile
      do { file = try SoundFile(readingFrom: path) } catch {
        throw MixerError("cannot add stem '\(settings.name)': \(error)")
      }
      guard let slot = table.freeSlots.popLast() else {
        throw MixerError("cannot add stem '\(settings.name)': all \(renderState.pointee.maxVoices) stem slots are in use")
      }
      let prepared: PreparedStem
      do throws(MixerError) {
        prepared = try prepareStem(
          file: file, path: path, settings: settings, slot: slot, quality: quality,
          atTransportFrame: pendingAt ?? joinTransportFrame(), anySolo: anySolo(including: settings))
      } catch {
        table.freeSlots.append(slot)
        throw MixerError("cannot add stem '\(settings.name)': \(error)")
      }
      let stem = prepared.stem, voice = prepared.voice
      disk.add(prepared.stream)
      do throws(MixerError) {
        try send(
          pendingAt == nil
            ? .addVoice(slot: slot, voice: voice) : .addPendingVoice(slot: slot, voice: voice, song: transportTracking.songChangesSent + 1))
      } catch {
        disk.remove(prepared.stream)
        discard(prepared)
        table.freeSlots.append(slot)
        throw error
      }
      table.stems.append(stem)
      if settings.strip.changesOthersUnderSolo { try? pushAllGains() }
      isDirty = true
      return settings.name
    }
  }

  /// A stem built for the renderer but not yet handed to it (nothing is sent or streaming yet).
  struct PreparedStem {
    let stem: Stem
    let voice: UnsafeMutablePointer<StemVoice>
    let stream: DiskStream
  }

  /// Builds a stem's converter, ring, shared state, voice and stream for `slot`, placed for
  /// `atTransportFrame`. Throws (having built nothing) when the converter cannot be made.
  func prepareStem(
    file: consuming SoundFile, path: String, settings: StemSettings, slot: Int32, quality: ResamplerQuality,
    atTransportFrame frame: Int, anySolo solo: Bool
  ) throws(MixerError) -> PreparedStem {
    let info = file.info
    let channels = min(info.channelCount, 2)
    // A converted stem's ring carries engine-rate frames (Stem.swift, `diskConversion`).
    let conversion = try quality.diskConversion(
      mode: settings.mode, engineRate: sampleRate, fileRate: Int(info.sampleRate), channels: channels, path: path)
    let ringRate = conversion == nil ? Double(info.sampleRate) : sampleRate
    let converter: RateConverter
    do {
      converter = try quality.makeConverter(channels: channels, engineRate: sampleRate, fileRate: Int(ringRate))
    } catch {
      if case .soxr(let soxr)? = conversion { soxr.free() }
      throw error
    }
    let ringFrames = Self.ringFrames(
      engineRate: sampleRate, fileRate: ringRate, maxBlockFrames: renderState.pointee.maxBlockFrames)
    let ends = SPSCRing.make(minimumCapacity: ringFrames * channels, of: Float.self)
    let shared = UnsafeMutablePointer<StemShared>.allocate(capacity: 1)
    shared.initialize(to: StemShared(loops: settings.loops))
    let stem = Stem(settings: settings, path: path, info: info, slot: slot, shared: StemSharedRef(shared))
    stem.ringScale = sampleRate / ringRate
    stem.publishRegion(sampleRate: Double(info.sampleRate))
    let place = placement(for: stem, atTransportFrame: frame)
    shared.pointee.requestedFrame.store(place.sourceFrame, ordering: .relaxed)
    shared.pointee.requestedEpoch.store(transportTracking.epoch, ordering: .releasing)
    let stream = DiskStream(file: file, producer: ends.producer, shared: stem.shared, conversion: conversion)
    stem.stream = stream
    let audible = stripAudible(settings.strip, anySolo: solo)
    stem.sentAudible = audible
    var stretch: UnsafeMutablePointer<StretchState>?
    if settings.mode == .stretch {
      stretch = .allocate(capacity: 1)
      stretch!.initialize(
        to: StretchState(
          channels: channels, engineRate: sampleRate, fileRate: Double(info.sampleRate),
          rate: settings.rate, pitchSemitones: settings.pitch, slot: Int(slot), fast: settings.stretch == .fast))
    }
    let voice = UnsafeMutablePointer<StemVoice>.allocate(capacity: 1)
    voice.initialize(
      to: StemVoice(
        shared: shared, audio: ends.consumer, channels: channels, converter: converter,
        rateScale: sampleRate / Double(info.sampleRate), ringScale: sampleRate / ringRate, rate: settings.rate,
        levels: Self.allLevels(settings.strip, audible: audible),
        sampleRate: sampleRate, epoch: transportTracking.epoch, joinFrame: place.joinFrame,
        stretch: stretch,
        pitchScale: StretchState.pitchScale(semitones: settings.pitch, fileRate: Double(info.sampleRate), engineRate: sampleRate),
        eq: settings.eq.engineParameters, held: heldConverter(stem, quality: quality, rate: settings.rate)))
    voice.pointee.bus = busIndex(settings.bus)
    return PreparedStem(stem: stem, voice: voice, stream: stream)
  }

  /// Frees a prepared stem the renderer never saw (its stream was never given to the disk).
  func discard(_ prepared: PreparedStem) {
    countHeldConverters(of: prepared.voice)
    prepared.voice.deinitialize(count: 1)
    prepared.voice.deallocate()
    prepared.stem.stream = nil
    prepared.stem.freeShared()
  }

  /// Rebuilds stems in place with new settings and/or resampler quality (a mode, pitch or
  /// quality change): each keeps its slot and its place in the list; the renderer fades the old
  /// voice out and the new one takes the slot (`EngineCommand.replaceVoice`), so this needs no
  /// free slot, and a session using 600 of the 1,024 slots can still rebuild all of them.
  ///
  /// All or nothing: every new stem is built (its file opened again, its converter made) and
  /// room in the command ring is secured before the first is swapped; if anything fails the
  /// error says which stem and why (`what` names the change) and every stem plays on as it was.
  /// The caller re-syncs the transport afterwards (`seek`).
  func rebuildStems(
    _ targets: [(stem: Stem, settings: StemSettings)], quality newQuality: ResamplerQuality,
    what: String
  ) throws(MixerError) {
    try completePendingSongChange()
    let frame = joinTransportFrame()
    let solo = anySolo()
    var prepared: [PreparedStem] = []
    prepared.reserveCapacity(targets.count)
    for (old, settings) in targets {
      do throws(MixerError) {
        let file: SoundFile
        do { file = try SoundFile(readingFrom: old.path) } catch { throw MixerError("\(error)") }
        prepared.append(
          try prepareStem(
            file: file, path: old.path, settings: settings, slot: old.slot, quality: newQuality,
            atTransportFrame: frame, anySolo: solo))
      } catch {
        for p in prepared { discard(p) }
        let others = targets.count > 1 ? "; no stem was changed" : ""
        throw MixerError("cannot \(what): stem '\(printableText(old.settings.name))': \(error) — it plays on as it was\(others)")
      }
    }
    // The swaps and the re-sync that follows (a join frame per stem and the seek) must all fit.
    guard waitForCommandRoom(count: prepared.count + table.stems.count + 2) else {
      for p in prepared { discard(p) }
      throw MixerError(
        "cannot \(what): the audio engine is not keeping up with commands (command queue full); nothing was changed; try again")
    }
    var index: [ObjectIdentifier: Int] = [:]
    for (i, stem) in table.stems.enumerated() { index[ObjectIdentifier(stem)] = i }
    for (p, (old, _)) in zip(prepared, targets) {
      disk.add(p.stream)
      // Cannot fail: the room was secured above and only this thread (under the lock) pushes.
      try? send(.replaceVoice(slot: old.slot, voice: p.voice))
      old.shared.pointer.pointee.closing.store(true, ordering: .relaxed)
      old.slotHandedOver = true
      table.retiring.append(old)
      if let i = index[ObjectIdentifier(old)] { table.stems[i] = p.stem }
      p.stem.cue = old.cue  // the slot keeps its cue in the renderer
    }
  }

  /// Applies a validated change to one stem's settings and sends what changed to the renderer:
  /// its mix through the one strip path (`changeStrip`), then its own fields.
  func change(_ name: String, _ body: (inout StemSettings) throws(MixerError) -> Void) throws(MixerError) {
    try lock.locked { () throws(MixerError) in
      let stem = try find(name)
      var settings = stem.settings
      try body(&settings)
      let old = stem.settings
      guard settings != old else { return }
      try changeStrip(.stem(stem)) { (s: inout StripSettings) throws(MixerError) in s = settings.strip }
      stem.settings = settings
      if settings.loops != old.loops {
        transportTracking.endReported = false
        stem.shared.pointer.pointee.loops.store(settings.loops, ordering: .relaxed)
      }
      if settings.rate != old.rate {
        offerHeldConverter(stem, rate: settings.rate)
        try send(.setRate(slot: stem.slot, rate: settings.rate))
      }
      isDirty = true
    }
  }

  func anySolo(including extra: StemSettings? = nil) -> Bool {
    (extra?.solo ?? false) || table.stems.contains { $0.settings.solo } || anyBusSolo || anyInputSolo
  }

  /// Changes the resampler quality: every stem gets a new converter, and the transport re-syncs
  /// at its current position (a few milliseconds' fade).
  public func setQuality(_ newQuality: ResamplerQuality) throws(MixerError) {
    try lock.locked { () throws(MixerError) in
      guard newQuality != quality else { return }
      let position = currentTransportFrame()
      try rebuildStems(table.stems.map { ($0, $0.settings) }, quality: newQuality, what: "change the quality to \(newQuality.rawValue)")
      quality = newQuality
      try locate(toFrame: position)
      isDirty = true
    }
  }

  public func setOptions(_ newOptions: SessionOptions) throws(MixerError) {
    try lock.locked { () throws(MixerError) in
      try MixerError.check(newOptions.crossfadeSeconds, .crossfadeSeconds, "song crossfade")
      if newOptions.meterPoint != options.meterPoint {
        try send(.setMeterPoint(preFader: newOptions.meterPoint == .pre))
      }
      if newOptions != options { isDirty = true }
      options = newOptions
    }
  }

  /// Marks the state as changed (e.g. after recovering an autosave).
  public func markDirty() { lock.locked { isDirty = true } }

  /// Marks the current state as saved.
  public func markSaved() { lock.locked { isDirty = false } }
}

extension Mixer {

  /// A new mixer at another sample rate with the same stems (offline ones too), settings, effects,
  /// tempo, recording settings and position (used when a JACK server comes back at a different
  /// rate). Its transport is paused.
  public func copy(atSampleRate newRate: Double) throws(MixerError) -> Mixer {
    var warnings: [ControlText] = []
    return try copy(atSampleRate: newRate, warnings: &warnings)
  }

  /// `copy(atSampleRate:)`, keeping a stem whose audio file cannot be opened any more (moved or
  /// deleted during the show) as an offline stem, as a session load does, with a line in
  /// `warnings`: the engine follows the server rather than failing over one file. On an error
  /// the half-built copy is shut down (its disk threads and memory freed) before the throw.
  public func copy(atSampleRate newRate: Double, warnings: inout [ControlText]) throws(MixerError) -> Mixer {
    try lock.locked { () throws(MixerError) -> Mixer in
      let other = Mixer(
        sampleRate: newRate, quality: quality, streaming: streaming,
        maxVoices: renderState.pointee.maxVoices, maxBlockFrames: renderState.pointee.maxBlockFrames)
      var lost: [ControlText] = []
      do throws(MixerError) {
        try other.setOptions(options)
        try other.master.setVolume(masterVolume)
        try other.master.setEQ(masterEQ)
        other.recording = recording
        other.tempoSetting = tempoSetting
        other.clickSetting = clickSetting
        other.markList = markList
        other.midiSettings = midiSettings
        other.midiState.enabled = midiState.enabled
        // The inputs at the master for now: their buses come with `installBuses` below.
        for input in liveInputs.inputs {
          var settings = input.settings
          settings.bus = nil
          try other.inputs.add(settings)
        }
        // Every stem in its saved order (offline ones at their places), so that a stem going
        // offline here is saved back where it was.
        var offline: [OfflineStem] = []
        for (index, entry) in savedOrder().enumerated() {
          if var stem = entry.offline {
            stem.index = index
            offline.append(stem)
          } else if let stem = entry.stem {
            do throws(SoundFileError) { _ = try SoundFile(readingFrom: stem.path) } catch {
              offline.append(OfflineStem(settings: stem.settings, path: stem.path, reason: error.reason, index: index))
              lost.append(
                "stem '\(printableText(stem.settings.name))' is offline: \(printableText(error.description)) (its settings are kept and saved; fix the file and \(action: .reopenSession))"
              )
              continue
            }
            try other.stems.add(path: stem.path, settings: stem.settings)
          }
        }
        other.offlineStems = offline
        other.effectsState.offline = effectsState.offline
        // Effects are converted to the engine rate when loaded: load them again at the new rate.
        // One whose file has gone since is kept offline (saved back unchanged) rather than keeping
        // the server unfollowed.
        for (index, name) in effectsState.order.enumerated() {
          guard let effect = effectsState.byName[name] else { continue }
          if (try? other.effects.load(path: effect.path, settings: effect.settings)) == nil {
            other.effectsState.offline.append(OfflineEffect(settings: effect.settings, path: effect.path, index: index))
          }
        }
        // Those still loading here load there (at its rate), synchronously.
        for job in effectsState.loading {
          if (try? other.effects.load(path: job.path, settings: job.settings)) == nil {
            other.effectsState.offline.append(OfflineEffect(settings: job.settings, path: job.path, index: other.effectsState.order.count))
          }
        }
        try other.installBuses(busTable.buses.map(\.settings))
        for input in liveInputs.inputs where input.settings.bus != nil {
          try other.buses.route(input.settings.name, to: input.settings.bus)
        }
        // The sends with their ports' names and every stem's levels (offline stems' kept for saving).
        let sendSettings = sendTable.sends.map { SendSettings(name: $0.name, returnVolume: $0.returnVolume) }
        let stemLevels = savedOrder().map { entry in
          var settings = entry.settings
          settings.sends = stemSends(settings.name)
          return settings
        }
        var busLevels = busTable.buses.map(\.settings)
        for i in busLevels.indices { busLevels[i].sends = stemSends(busLevels[i].name) }
        var inputLevels = liveInputs.inputs.map(\.settings)
        for i in inputLevels.indices { inputLevels[i].sends = stemSends(inputLevels[i].name) }
        try other.lock.locked { () throws(MixerError) in
          try other.replaceSends(with: sendSettings, stems: stemLevels, buses: busLevels, inputs: inputLevels)
        }
        try other.transport.seek(toSeconds: Double(currentTransportFrame()) / sampleRate)
        try other.publishMidi()
        lost += copyInserts(to: other).map(\.text)  // instantiated again at the new rate
      } catch {
        other.shutdown()
        throw error
      }
      other.isDirty = isDirty
      warnings += lost
      return other
    }
  }
}

extension Mixer.Stems {
  /// The names of all stems, in order.
  public var names: [String] { mixer.lock.locked { mixer.table.stems.map(\.settings.name) } }

  /// Names of all stems including offline ones.
  public var allNames: [String] { mixer.lock.locked { mixer.table.stems.map(\.settings.name) + mixer.table.offline.map(\.settings.name) } }

  /// Adds a stem playing the audio file at `path` (absolute or relative to the current
  /// directory). Its settings come from `settings` (name and all), validated first.
  @discardableResult
  /// (A session's stems come through `load`, which checks the session's names and ports as a
  /// whole: `Session.portProblem`.)
  public func add(path: String, settings: StemSettings) throws(MixerError) -> String {
    try mixer.lock.locked { () throws(MixerError) -> String in
      if NameRules.stemProblem(settings.name) == nil {
        try mixer.checkNotASend(settings.name, kind: "stem")
        if settings.directOut { try mixer.checkPorts(PortOwner("stem", settings.name, ports: PortOwner.directOutPorts(settings.name))) }
      }
      try mixer.checkNoJumpWaiting("cannot add stem '\(settings.name)'")
      return try mixer.insertStem(path: path, settings: settings, pendingAt: nil)
    }
  }

  /// Removes a stem: it fades out and its resources are freed once the renderer hands it back.
  public func remove(_ name: String) throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      if let index = mixer.table.offline.firstIndex(where: { $0.settings.name == name }) {
        mixer.table.offline.remove(at: index)
        mixer.isDirty = true
        return
      }
      let stem = try mixer.find(name)
      try mixer.send(.removeVoice(slot: stem.slot))
      mixer.clearSends(ofStem: name, slot: stem.slot)
      mixer.dropInserts(of: .stem(slot: stem.slot))
      mixer.table.stems.removeAll { $0 === stem }
      stem.shared.pointer.pointee.closing.store(true, ordering: .relaxed)
      mixer.table.retiring.append(stem)
      if stem.settings.strip.changesOthersUnderSolo { try? mixer.pushAllGains() }
      mixer.isDirty = true
    }
  }

  /// Removes every stem.
  public func removeAll() throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      for name in mixer.table.stems.map(\.settings.name) { try mixer.stems.remove(name) }
      if !mixer.table.offline.isEmpty { mixer.table.offline.removeAll(); mixer.isDirty = true }
    }
  }

  public func setRate(_ name: String, _ rate: Double) throws(MixerError) {
    try mixer.change(name) { (s: inout StemSettings) throws(MixerError) in
      try MixerError.check(rate, .rate, "rate")
      s.rate = rate
    }
  }

  public func setLoops(_ name: String, _ loops: Int) throws(MixerError) {
    try mixer.change(name) { (s: inout StemSettings) throws(MixerError) in
      try MixerError.check(loops, .loops, "loops")
      s.loops = loops
    }
  }

  /// Turns per-stem metering on or off (the offline renderer turns it off: nobody reads it).
  public func setMetering(_ on: Bool) throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in try mixer.send(.setStemMetering(on)) }
  }

  /// Sets when a stem starts, in transport seconds (`SettingRule.startOffset`); takes effect at the
  /// next seek or stop.
  public func setStartOffset(_ name: String, _ seconds: Double) throws(MixerError) {
    try mixer.change(name) { (s: inout StemSettings) throws(MixerError) in
      try MixerError.check(seconds, .startOffset, "start offset")
      s.startOffset = seconds
    }
  }

  /// (name, slot) of every stem that wants direct outs.
  public func directOutSlots() -> [(name: String, slot: Int)] {
    mixer.lock.locked {
      // An old song fading out after a crossfade keeps its direct outs until it is handed back.
      (mixer.table.stems + mixer.table.retiring.filter(\.leavingSong)).filter(\.settings.directOut).map { ($0.settings.name, Int($0.slot)) }
        + mixer.busDirectOutSlots() + mixer.inputDirectOutSlots()
    }
  }
}

extension Mixer.Master {
  /// Master volume, linear 0…2.
  public func setVolume(_ volume: Double) throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      try MixerError.check(volume, .volume, "master volume")
      try mixer.send(.setMasterGain(Float(volume)))
      if mixer.masterVolume != volume { mixer.isDirty = true }
      mixer.masterVolume = volume
    }
  }

  public var volume: Double { mixer.lock.locked { mixer.masterVolume } }
}

// The stems' part of the session file (Mixer+Session.swift calls this under the lock).
extension Mixer.Stems {
  /// Writes the stems in saved order (offline ones back at the places they had in the session
  /// they came from), each file stored relative to `sessionPath`, each with its send levels.
  func save(into s: inout Session, sessionPath: String) {
    s.stems = mixer.savedOrder().map { entry in
      var settings = entry.settings
      settings.file = SessionFile.storedPath(forAudioFile: entry.path, sessionPath: sessionPath)
      settings.sends = mixer.stemSends(settings.name)
      return settings
    }
  }
}
