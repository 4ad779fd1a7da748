import StemdeckAudioFile
import StemdeckSession

extension Mixer {
  /// Replaces the mixer's content with `session` (whose file is at `sessionPath`, for resolving
  /// relative stem paths). Everything is checked first (settings, names, every audio file opens
  /// and decodes); on an error nothing changes and the error names the session file, the stem
  /// and the field or audio file.
  ///
  /// A stem whose audio file is missing or unreadable is an error in `strict` mode; otherwise the
  /// rest opens and that stem stays listed as offline (returned as warnings, saved unchanged).
  @discardableResult
  public func load(_ session: Session, sessionPath: String, strict: Bool = false) throws(MixerError) -> [String] {
    try lock.locked { () throws(MixerError) -> [String] in
      var offline: [OfflineStem] = []
      var warnings: [String] = []
      var seen: [String: Int] = [:]
      for (index, stem) in session.stems.enumerated() {
        let place = "\(sessionPath): stems[\(index)] (\(stem.name))"
        do { try validate(stem, isNew: false) } catch { throw MixerError("\(place): \(error)") }
        if let first = seen[stem.name] {
          throw MixerError("\(place): duplicate stem name '\(stem.name)' (also stems[\(first)])")
        }
        seen[stem.name] = index
        let path = SessionFile.resolve(file: stem.file, sessionPath: sessionPath)
        do throws(SoundFileError) { _ = try SoundFile(readingFrom: path) } catch {
          if strict { throw MixerError("\(place).file: \(error)") }
          offline.append(OfflineStem(settings: stem, path: path, reason: error.reason, index: index))
          warnings.append("\(place).file: \(error) — the stem stays offline; the rest of the session opens")
        }
      }
      do {
        try MixerError.check(session.masterVolume, in: SettingRange.volume, "master.volume", allowed: "between 0 and 2 (+6 dB)")
      } catch { throw MixerError("\(sessionPath): \(error)") }

      try removeAllStems()
      for name in effectOrder { try unloadEffect(name) }
      recording = session.recording
      tempoSetting = session.tempo
      if session.quality != quality { try setQuality(session.quality) }
      try setOptions(session.options)
      try setMasterVolume(session.masterVolume)
      for (index, stem) in session.stems.enumerated() where !offline.contains(where: { $0.settings.name == stem.name }) {
        let path = SessionFile.resolve(file: stem.file, sessionPath: sessionPath)
        do { try addStem(path: path, settings: stem) } catch {
          throw MixerError("\(sessionPath): stems[\(index)] (\(stem.name)): \(error)")
        }
      }
      offlineStems = offline
      for (index, effect) in session.effects.enumerated() {
        let path = SessionFile.resolve(file: effect.file, sessionPath: sessionPath)
        do throws(MixerError) { try loadEffect(path: path, settings: effect) } catch {
          if strict { throw MixerError("\(sessionPath): effects[\(index)] (\(effect.name)): \(error)") }
          warnings.append("\(sessionPath): effects[\(index)] (\(effect.name)): \(error) — not loaded")
        }
      }
      try seek(toFrame: Int((max(0, session.position) * sampleRate).rounded()))
      isDirty = false
      return warnings
    }
  }

  /// The mixer's state as a session to be saved at `sessionPath` (stem paths relative to it
  /// when they lie under its folder). `connections` are filled in by the JACK side.
  public func session(savingTo sessionPath: String) -> Session {
    lock.locked {
      var s = Session()
      s.quality = quality
      s.masterVolume = masterVolume
      s.options = options
      s.position = (Double(currentTransportFrame()) / sampleRate * 1000).rounded() / 1000
      s.stems = stems.map { stem in
        var settings = stem.settings
        settings.file = SessionFile.storedPath(forAudioFile: stem.path, sessionPath: sessionPath)
        return settings
      }
      // Offline stems go back to the places they had in the session they came from.
      for stem in offlineStems.sorted(by: { $0.index < $1.index }) {
        var settings = stem.settings
        settings.file = SessionFile.storedPath(forAudioFile: stem.path, sessionPath: sessionPath)
        s.stems.insert(settings, at: min(stem.index, s.stems.count))
      }
      s.recording = recording
      s.tempo = tempoSetting
      s.effects = effectOrder.compactMap { effectsByName[$0] }.map { e in
        var settings = e.settings
        settings.file = SessionFile.storedPath(forAudioFile: e.path, sessionPath: sessionPath)
        return settings
      }
      return s
    }
  }
}
