import StemdeckAudioFile
import StemdeckSession
import StemdeckText

extension Mixer {
  /// Replaces the mixer's content with `session` (whose file is at `sessionPath`, for resolving
  /// relative stem paths). Everything is checked first (settings, names, every audio file opens
  /// and decodes); on an error nothing changes and the error names the session file, the stem
  /// and the field or audio file.
  ///
  /// A stem whose audio file is missing or unreadable is an error in `strict` mode; otherwise the
  /// rest opens and that stem stays listed as offline (returned as warnings, saved unchanged).
  @discardableResult
  public func load(_ session: Session, sessionPath: String, strict: Bool = false) throws(MixerError) -> [MixerWarning] {
    probeInserts(of: session)
    return try lock.locked { () throws(MixerError) -> [MixerWarning] in
      let (offline, warnings, end) = try check(session, sessionPath: sessionPath, strict: strict)
      try completePendingSongChange()
      // All or nothing: the new stems are built beside the current ones (which keep their slots
      // until the renderer hands them back), so a failure part-way takes the new ones back and
      // leaves the current session as it was. Only then are the current stems removed.
      let needed = session.stems.count - offline.count
      reclaimSlots(needed)
      if needed > table.freeSlots.count {
        let limit = renderState.pointee.maxVoices
        throw MixerError(
          file: sessionPath,
          needed > limit
            ? "the session has \(needed) stems; stemdeck plays at most \(limit) — nothing was opened"
            : "its \(needed) stems need \(needed) free stem slots, but only \(table.freeSlots.count) of \(limit) are free while the current stems are in use — nothing was opened; try again in a moment"
        )
      }
      let oldStems = table.stems, oldOffline = table.offline, oldQuality = quality, oldDirty = isDirty
      // The new stems are added with no buses (so the old session's bus names do not clash);
      // the new buses are installed once they are all in (`installBuses`).
      let oldBuses = busTable
      busTable = BusTable()
      table.stems = []
      table.offline = []  // the new session's names may be the current one's
      quality = session.quality  // new stems' converters
      do throws(MixerError) {
        let offlineNames = Set(offline.map(\.settings.name))  // a set: 50,000 offline stems were O(N²)
        for (index, stem) in session.stems.enumerated() where !offlineNames.contains(stem.name) {
          let path = SessionFile.resolve(file: stem.file, sessionPath: sessionPath)
          do { try insertStem(path: path, settings: stem, pendingAt: nil) } catch {
            throw MixerError(file: sessionPath, "stems[\(index)] (\(stem.name)): \(error) — nothing was opened")
          }
        }
      } catch {
        for stem in table.stems { retire(stem) }
        table.stems = oldStems
        table.offline = oldOffline
        quality = oldQuality
        isDirty = oldDirty
        busTable = oldBuses
        throw error
      }
      for stem in oldStems { retire(stem) }
      let effectWarnings = try installParts(of: session, offline: offline, sessionPath: sessionPath, strict: strict)
      let (start, atEnd) = Self.startPosition(of: session, end: end, sessionPath: sessionPath)
      try locate(toFrame: Int((start * sampleRate).rounded()))
      isDirty = false
      return warnings + effectWarnings + (atEnd.map { [$0] } ?? [])
    }
  }

  /// Takes a stem out of the renderer (it fades out) without touching `stems`: its resources
  /// are freed once the renderer hands it back (`pump`).
  func retire(_ stem: Stem) {
    try? send(.removeVoice(slot: stem.slot))
    clearSends(ofStem: stem.settings.name, slot: stem.slot)
    dropInserts(of: .stem(slot: stem.slot))
    stem.shared.pointer.pointee.closing.store(true, ordering: .relaxed)
    table.retiring.append(stem)
  }

  /// Checks everything in `session` that can fail before anything changes: settings, names,
  /// every audio file opens and decodes. Returns the stems that stay offline and the warnings.
  func check(
    _ session: Session, sessionPath: String, strict: Bool
  ) throws(MixerError) -> (
    offline: [OfflineStem], warnings: [MixerWarning], end: SongEnd
  ) {
    var offline: [OfflineStem] = []
    var warnings: [MixerWarning] = []
    var end = SongEnd()
    var seen: [String: Int] = [:]
    for (index, stem) in session.stems.enumerated() {
      let place = "stems[\(index)] (\(stem.name))"
      do { try validate(stem, isNew: false) } catch { throw MixerError(file: sessionPath, "\(place): \(error)") }
      if let first = seen[stem.name] {
        throw MixerError(file: sessionPath, "\(place): duplicate stem name '\(stem.name)' (also stems[\(first)])")
      }
      seen[stem.name] = index
      let path = SessionFile.resolve(file: stem.file, sessionPath: sessionPath)
      let info: SoundFileInfo
      do throws(SoundFileError) { info = try SoundFile(readingFrom: path).info } catch {
        if strict { throw MixerError(file: sessionPath, "\(place).file: \(error)") }
        offline.append(OfflineStem(settings: stem, path: path, reason: error.reason, index: index))
        warnings.append(MixerWarning(file: sessionPath, "\(place).file: \(error) — the stem stays offline; the rest of the session opens"))
        continue
      }
      // The loop region must lie in the file, as the REPL's 'loop' requires.
      do {
        try Self.checkLoopRegion(
          start: stem.loopStart, end: stem.loopEnd, crossfade: stem.crossfade,
          length: Double(info.frameCount) / Double(info.sampleRate), name: stem.name)
      } catch { throw MixerError(file: sessionPath, "\(place).loopEnd: \(error)") }
      end.add(Stem.duration(stem, info))
    }
    // In strict mode an effect that cannot load is an error: find it before anything changes.
    if strict {
      for (index, effect) in session.effects.enumerated() {
        let path = SessionFile.resolve(file: effect.file, sessionPath: sessionPath)
        do throws(SoundFileError) { _ = try SoundFile(readingFrom: path) } catch {
          throw MixerError(file: sessionPath, "effects[\(index)] (\(effect.name)).file: \(error)")
        }
      }
    }
    // Takes are written where the session says: say so when that is outside its folder.
    let folder = session.recording.folder
    if folder.hasPrefix("/") || folder.split(separator: "/").contains("..") {
      warnings.append(
        MixerWarning(
          file: sessionPath,
          "recording.folder '\(printableText(folder))' lies outside the session's folder (\(folder.hasPrefix("/") ? "an absolute path" : "it climbs with ..")); takes recorded will be written to \(printableText(SessionFile.resolve(file: folder, sessionPath: sessionPath)))"
        ))
    }
    if let problem = session.busProblem() { throw MixerError(file: sessionPath, "\(problem.location): \(problem.message)") }
    // Live inputs: the session's rules (names, clashes with stems, count, ranges).
    do throws(SessionError) {
      try session.validateInputs(source: sessionPath)
    } catch { throw MixerError(file: sessionPath, "\(error.location ?? "inputs"): \(error.message)") }
    if let problem = session.sendProblem() ?? session.portProblem() {
      throw MixerError(file: sessionPath, "\(problem.location): \(problem.message)")
    }
    do {
      try MixerError.check(session.masterVolume, .volume, "master.volume")
      try Mixer.checkEQ(session.masterEQ, of: "master")
    } catch { throw MixerError(file: sessionPath, "\(error)") }
    return (offline, warnings, end)
  }

  var songChangePending: Bool {
    renderState.pointee.status.pointee.songChanges.load(ordering: .relaxed) < transportTracking.songChangesSent
  }

  /// Makes a song change that still waits for the disk happen now, so that what the control
  /// thread sends next (a session load, stems added outside a song change) applies to the new
  /// song as the current one rather than racing the switch.
  func completePendingSongChange() throws(MixerError) {
    if songChangePending { try send(.completeSongChange) }
  }

  /// The mixer's state as a session to be saved at `sessionPath` (stem paths relative to it
  /// when they lie under its folder). `connections` are filled in by the JACK side.
  /// `copyingFiles`: the session is being written to `sessionPath` now, so a file a plugin's
  /// state names from elsewhere is copied into the files folder beside it (PluginState.swift);
  /// without, the session names where the copy would go and nothing on disk changes (a
  /// comparison: `diff`, the unsaved-changes checks).
  public func session(savingTo sessionPath: String, copyingFiles: Bool = false) -> Session {
    lock.locked {
      // Each component writes its own part; the sends after the strips they fill in.
      var s = Session()
      s.quality = quality
      s.options = options
      s.position = (Double(currentTransportFrame()) / sampleRate * 1000).rounded() / 1000
      master.save(into: &s)
      stems.save(into: &s, sessionPath: sessionPath)
      buses.save(into: &s)
      inputs.save(into: &s)
      sends.save(into: &s)
      s.recording = recording
      click.save(into: &s, sessionPath: sessionPath)
      s.marks = markList
      scenes.save(into: &s)
      midi.save(into: &s)
      effects.save(into: &s, sessionPath: sessionPath)
      storeInserts(in: &s, sessionPath: sessionPath, copyingFiles: copyingFiles)
      return s
    }
  }

  /// Every stem in saved order: the playing ones in their order, each offline one merged in at
  /// its `index` (its place in the session it came from). Linear: inserting them one by one
  /// moved the whole list each time (40,000 offline stems took minutes).
  func savedOrder() -> [(settings: StemSettings, path: String, stem: Stem?, offline: OfflineStem?)] {
    let offline = table.offline.sorted { $0.index < $1.index }
    var out: [(settings: StemSettings, path: String, stem: Stem?, offline: OfflineStem?)] = []
    out.reserveCapacity(table.stems.count + offline.count)
    var j = 0
    for stem in table.stems {
      while j < offline.count && offline[j].index <= out.count {
        out.append((offline[j].settings, offline[j].path, nil, offline[j]))
        j += 1
      }
      out.append((stem.settings, stem.path, stem, nil))
    }
    for k in j..<offline.count { out.append((offline[k].settings, offline[k].path, nil, offline[k])) }
    return out
  }

  /// The end of a song's stems as `check` finds them (the stems that open): the longest finite
  /// one, unless one loops forever.
  struct SongEnd {
    var longest: Double?
    var endless = false

    mutating func add(_ duration: Double?) {
      guard let duration else { endless = true; return }
      longest = max(longest ?? duration, duration)
    }
  }

  /// Where a session starts, loaded or switched to by a setlist: its saved position, or the top
  /// when that is at or past the end of every stem that ends (a session saved after its song
  /// finished played nothing on `--play`, `play`, OSC or a playing `next`). Then a warning says so.
  static func startPosition(of session: Session, end song: SongEnd, sessionPath: String) -> (seconds: Double, atEnd: MixerWarning?) {
    let saved = max(0, session.position)
    guard saved > 0, !song.endless, let end = song.longest, end > 0, saved >= end else { return (saved, nil) }
    return (
      0,
      MixerWarning(
        file: sessionPath,
        "position: saved at \(NumberFormat.time(saved)), at or past the end of the song (\(NumberFormat.time(end))): opened at the top"
      )
    )
  }

  /// Everything of `session` but its stems, in place of the current one's, for `open` and a
  /// song change alike: effects, recording, tempo, MIDI map, options, the master, offline stems,
  /// buses, inputs and sends. Returns the effects' warnings.
  func installParts(
    of session: Session, offline: [OfflineStem], sessionPath: String, strict: Bool
  ) throws(MixerError) -> [MixerWarning] {
    // Each component installs its own part, in an order that lets each find what it refers to:
    // the strips before the sends into them, every strip before its inserts and MIDI mappings.
    try effects.clear()
    recording = session.recording
    let clickWarnings = click.install(from: session, sessionPath: sessionPath)
    markList = session.marks
    scenes.install(from: session)
    midi.install(from: session)
    try setOptions(session.options)
    try master.install(from: session)
    table.offline = offline
    try installBuses(session.buses)
    try replaceInputs(with: session.inputs)
    try replaceSends(with: session.sends, stems: session.stems, buses: session.buses, inputs: session.inputs)
    let warnings = try effects.install(from: session, sessionPath: sessionPath, strict: strict)
    try publishMidi()
    return warnings + installInserts(of: session, sessionPath: sessionPath) + clickWarnings
  }
}

extension Mixer.Songs {
  /// Whether the song change in progress has happened in the renderer (a setlist switch waits
  /// for the next song's audio before it happens).
  public var changeDone: Bool { mixer.lock.locked { !mixer.songChangePending } }

  /// Old songs' stems still in the renderer (playing until the switch, or fading out after a
  /// crossfade); 0 once every one has been handed back and freed.
  public var leavingStemCount: Int { mixer.lock.locked { mixer.table.retiring.filter(\.leavingSong).count } }

  /// Moves to the next song of a setlist: `session` (whose file is at `sessionPath`) replaces the
  /// current one, checked first exactly as `load` does; on an error nothing changes and the
  /// current song plays on untouched.
  ///
  /// The song being left decides how: its `options.songChange` (and `crossfadeSeconds`). While
  /// the transport runs, the new song's stems are opened and streamed *before* the old song
  /// stops, then the renderer switches on one block boundary — gapless (the old song's last frame
  /// is followed by the new song's first) or with an equal-power crossfade during which the old
  /// song, detached from the transport, fades out as the new one fades in. Paused, it is a `load`.
  @discardableResult
  public func change(to session: Session, sessionPath: String, strict: Bool = false) throws(MixerError) -> [MixerWarning] {
    mixer.probeInserts(of: session)
    return try mixer.lock.locked { () throws(MixerError) -> [MixerWarning] in
      guard mixer.transport.state != .paused else { return try mixer.load(session, sessionPath: sessionPath, strict: strict) }
      let (offline, warnings, end) = try mixer.check(session, sessionPath: sessionPath, strict: strict)
      mixer.reclaimSlots(session.stems.count - offline.count)
      let fadeFrames = mixer.options.songChange == .crossfade ? Int((mixer.options.crossfadeSeconds * mixer.sampleRate).rounded()) : 0
      // A song saved at or past its end comes in at its top, as `load` opens it.
      let (start, atEnd) = Mixer.startPosition(of: session, end: end, sessionPath: sessionPath)
      let frame = Int((start * mixer.sampleRate).rounded())
      // Everything needed to undo: the next song's stems go in beside the old ones.
      let oldStems = mixer.table.stems, oldOffline = mixer.table.offline, oldQuality = mixer.quality,
        oldEpoch = mixer.transportTracking.epoch
      let oldBuses = mixer.busTable
      mixer.busTable = BusTable()  // the next song's buses are installed once its stems are in
      mixer.table.stems = []
      mixer.table.offline = []  // the new song's names may be the old song's (offline ones included)
      mixer.quality = session.quality  // new stems' converters; the old song keeps its own
      mixer.transportTracking.epoch += 1
      do throws(MixerError) {
        let offlineNames = Set(offline.map(\.settings.name))
        for (index, stem) in session.stems.enumerated() where !offlineNames.contains(stem.name) {
          let path = SessionFile.resolve(file: stem.file, sessionPath: sessionPath)
          do { try mixer.insertStem(path: path, settings: stem, pendingAt: frame) } catch {
            throw MixerError(file: sessionPath, "stems[\(index)] (\(stem.name)): \(error)")
          }
        }
        try mixer.send(
          .changeSong(
            frame: frame, epoch: mixer.transportTracking.epoch, fadeFrames: fadeFrames, song: mixer.transportTracking.songChangesSent + 1))
      } catch {
        // Take the half-built song back (its voices are still pending, so silent) and restore.
        for stem in mixer.table.stems {
          try? mixer.send(.removeVoice(slot: stem.slot))
          stem.shared.pointer.pointee.closing.store(true, ordering: .relaxed)
          mixer.table.retiring.append(stem)
        }
        mixer.table.stems = oldStems
        mixer.table.offline = oldOffline
        mixer.quality = oldQuality
        mixer.transportTracking.epoch = oldEpoch
        mixer.busTable = oldBuses
        throw error
      }
      mixer.transportTracking.songChangesSent += 1
      mixer.transportTracking.seekTarget = frame
      mixer.transportTracking.endReported = false
      for stem in oldStems {
        // Keeps streaming until the renderer hands its voice back: at the switch (gapless), when
        // its fade-out ends (crossfade), or at once if it belongs to a song that never started
        // because this change superseded it.
        stem.leavingSong = true
        mixer.table.retiring.append(stem)
      }
      let effectWarnings = try mixer.installParts(of: session, offline: offline, sessionPath: sessionPath, strict: strict)
      mixer.isDirty = false
      return warnings + effectWarnings + (atEnd.map { [$0] } ?? [])
    }
  }
}
