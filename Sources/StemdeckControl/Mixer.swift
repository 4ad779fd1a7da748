import CSampleRate
import Foundation
import StemdeckAudioFile
import StemdeckEngine
import StemdeckSession
import Synchronization

/// The engine as the control thread sees it: stems with their settings, the transport, the
/// master, meters and events. The REPL, the session loader, the offline renderer, the JACK
/// driver and the tests all drive this one API.
///
/// - Thread: any non-realtime thread; every public method takes the mixer's lock, so the REPL
///   and the event pump may call it concurrently. It talks to the renderer only through the
///   command ring, the event and return rings, and atomics; it never waits for the audio thread.
/// - Errors: every setter validates first and changes nothing when it throws.
public final class Mixer: @unchecked Sendable {
  /// How stems' rings are filled.
  public enum Streaming: Sendable {
    /// A disk thread fills them (live playback).
    case thread
    /// The caller fills them by calling `fillStreams()` before each block (offline render).
    case synchronous
  }

  public let sampleRate: Double
  public let streaming: Streaming
  /// The renderer's state: hand it to `renderBlock` from exactly one audio thread.
  public let renderState: UnsafeMutablePointer<RenderState>
  let lock = NSRecursiveLock()
  var rings: EngineRings
  let disk: DiskStreamer
  /// The stems: playing, offline, on their way out, and the free voice slots.
  var table: StemTable
  /// Stems of a session whose audio file could not be opened: kept (and saved) as they were.
  public internal(set) var offlineStems: [OfflineStem] {
    get { table.offline }
    set { table.offline = newValue }
  }
  var masterVolume: Double = 1
  /// The master bus's channel EQ (Mixer+EQ.swift).
  var masterEQ = EQSettings()
  /// The buses (subgroups) and the renderer's free bus indices (Mixer+Buses.swift).
  var busTable = BusTable()
  /// The aux sends (Mixer+Sends.swift).
  var sendTable = SendTable()
  public internal(set) var quality: ResamplerQuality
  public private(set) var options = SessionOptions()
  /// How takes are recorded (kept for the session file; used by the console's `record`).
  public var recordingSettings: RecordingSettings {
    get { lock.locked { recording } }
    set { lock.locked { if recording != newValue { recording = newValue; isDirty = true } } }
  }
  var recording = RecordingSettings()
  /// The session's tempo (for bar positions and JACK transport), if set.
  public var tempo: Tempo? {
    get { lock.locked { tempoSetting } }
    set { lock.locked { if tempoSetting != newValue { tempoSetting = newValue; isDirty = true } } }
  }
  var tempoSetting: Tempo?
  var commandsSent = 0
  /// Between `beginGroup` and `endGroup`/`abortGroup`, and the grouped commands sent so far
  /// (compare with `EngineStatus.scheduleReleased`: how many wait in the renderer's schedule).
  var groupOpen = false
  var groupedSent = 0
  var groupedInThisGroup = 0
  /// The block count at which a wait for room in the command ring last gave up (see `send`).
  var stalledAtBlock = -1
  /// The transport as the control side drives it: seeks, song changes, the song's end.
  var transport = TransportTracking()
  /// The sound effects, loaded, loading and offline (Mixer+Effects.swift).
  var effects = EffectsState()
  /// The take being recorded, if any (Mixer+Recording.swift).
  var takes = TakeState()
  /// The session's MIDI mappings and the MIDI control state (Mixer+Midi.swift).
  var midi = MidiSettings()
  var midiState = MidiControlState()
  /// Set when something changed since the last `markSaved()`.
  public internal(set) var isDirty = false
  /// Seconds of look-ahead a stem added while playing is given before it joins.
  static let joinMargin = 0.3
  /// The master's live loudness meter, fed from the renderer's tap (Mixer+Loudness.swift).
  var liveLoudness: LiveLoudnessMeter?
  /// Live input strips (Mixer+Inputs.swift).
  var liveInputs = InputTable()

  public init(
    sampleRate: Double, quality: ResamplerQuality = .fast, streaming: Streaming = .thread,
    maxVoices: Int = 1024, maxBlockFrames: Int = 4096, diskPacing: (any DiskReadPacing)? = nil
  ) {
    self.sampleRate = sampleRate
    disk = DiskStreamer(pacing: diskPacing)
    self.quality = quality
    self.streaming = streaming
    let made = RenderState.make(sampleRate: sampleRate, maxVoices: maxVoices, maxBlockFrames: maxBlockFrames)
    renderState = made.state
    rings = made.rings
    table = StemTable(freeSlots: (0..<Int32(maxVoices)).reversed())
    if streaming == .thread { disk.start() }
  }

  /// Stops the disk thread and frees everything. Call only after the audio driver has stopped
  /// calling `renderBlock` with `renderState`.
  public func shutdown() {
    lock.locked {
      disk.stop()
      liveLoudness = nil  // ends the loudness meter's thread
      // A take in progress (quit or a signal while recording): the renderer has stopped, so
      // the writer drains what was captured and closes the file complete, not just up to the
      // last half-second flush.
      if let r = takes.recorder {
        r.finish()
        takes.recorder = nil
      }
      // Voices the renderer handed back but nobody collected yet.
      while let voice = rings.retired.pop() {
        voice.deinitialize(count: 1)
        voice.deallocate()
      }
      RenderState.destroy(renderState) { voice in
        voice.deinitialize(count: 1)
        voice.deallocate()
      }
      // Bus plans handed back and not collected yet (the renderer freed the one it held).
      while let event = rings.events.pop() {
        if case .busPlanRetired(let address) = event, let plan = UnsafeMutablePointer<BusPlan>(bitPattern: address) {
          BusPlan.free(plan)
        }
      }
      // Commands still queued were applied by `destroy`: a rebuild's replacement that had not
      // taken over yet may have been handed back just now.
      while let voice = rings.retired.pop() {
        voice.deinitialize(count: 1)
        voice.deallocate()
      }
      for stem in table.stems + table.retiring + table.detaching { stem.freeShared() }
      freeAllEffects()
      table.stems.removeAll()
      table.retiring.removeAll()
      table.detaching.removeAll()
    }
  }

  // MARK: - Commands to the renderer

  func send(_ command: EngineCommand) throws(MixerError) {
    let grouped: Bool
    switch command {
    case .beginGroup: grouped = false; groupOpen = true; groupedInThisGroup = 0
    case .endGroup: grouped = false; groupOpen = false
    case .abortGroup:
      // The renderer drops the group's commands without counting them released.
      grouped = false; groupOpen = false; groupedSent -= groupedInThisGroup; groupedInThisGroup = 0
    default: grouped = groupOpen
    }
    if grouped {
      // A grouped command waits in the renderer's schedule for its frame; one that did not fit
      // would be applied at once, breaking the group's one frame and its all-or-nothing promise.
      let status = renderState.pointee.status
      let waiting = groupedSent - status.pointee.scheduleReleased.load(ordering: .acquiring)
      let limit = renderState.pointee.scheduleLimit
      if waiting >= limit {
        throw MixerError(
          "too many changes waiting for their frame: at most \(limit) at once (\(waiting) are already held, from this group and earlier ones still waiting)"
        )
      }
    }
    guard rings.commands.push(command) || (waitForCommandRoom() && rings.commands.push(command)) else {
      throw MixerError("the audio engine is not keeping up with commands (command queue full); try again")
    }
    commandsSent += 1
    if grouped {
      groupedSent += 1
      groupedInThisGroup += 1
    }
    switch command {
    case .seek, .play, .addVoice, .addPendingVoice, .changeSong: disk.wake()  // audio needed now
    default: break
    }
  }

  /// Waits (a bounded time) for room in a full command ring while the renderer is draining it: a
  /// burst of commands on a large session (`vol all` on 1,000 stems, a few times in a script)
  /// may outrun a period or two of the renderer, and is then delivered rather than refused.
  /// Returns false at once when no renderer runs (offline, not started yet, or stalled since the
  /// last wait gave up, e.g. the JACK server is gone), and after half a second without a block.
  func waitForCommandRoom(count: Int = 1) -> Bool {
    if rings.commands.freeCount() >= count { return true }
    let status = renderState.pointee.status
    var lastBlocks = status.pointee.blocksRendered.load(ordering: .relaxed)
    guard streaming == .thread, count <= rings.commands.capacity, lastBlocks > 0, lastBlocks != stalledAtBlock else { return false }
    var idle = 0
    for _ in 0..<2000 {  // at most 2 s
      usleep(1000)
      if rings.commands.freeCount() >= count { return true }
      let blocks = status.pointee.blocksRendered.load(ordering: .relaxed)
      // No block for half a second: no period is that long, the renderer has stopped.
      if blocks == lastBlocks { idle += 1; if idle >= 500 { break } } else { idle = 0; lastBlocks = blocks }
    }
    stalledAtBlock = lastBlocks
    return false
  }

  /// Waits (control thread, without the lock) until the renderer has applied every command sent
  /// so far and published a block after them, so that what `transportState` and the position
  /// say includes them (`play` then `status` never says stopped). Gives up after `timeout`
  /// seconds, or at once when the renderer is not rendering (no block for 50 ms: the server
  /// stopped, or an offline mixer nobody renders); returns whether it saw them applied.
  @discardableResult
  public func waitUntilApplied(timeout: Double = 0.5) -> Bool {
    waitForApplication(timeout: timeout) != nil
  }

  /// `waitUntilApplied`, returning the transport frame the renderer's block that applied the
  /// last of the commands left the transport at (`EngineStatus.commandFrame`: where a `play`
  /// starts, a `pause` begins its fade, a `seek` or `stop` lands), or nil when it did not see
  /// them applied.
  public func waitForApplication(timeout: Double = 0.5) -> Int? {
    let status = renderState.pointee.status
    let target = lock.locked { commandsSent }
    let start = ContinuousClock.now
    var lastBlocks = status.pointee.blocksRendered.load(ordering: .relaxed)
    var lastProgress = start
    var appliedAtBlock: Int?
    var frame = 0
    while ContinuousClock.now - start < .milliseconds(Int(timeout * 1000)) {
      let blocks = status.pointee.blocksRendered.load(ordering: .acquiring)
      if let at = appliedAtBlock {
        if blocks > at { return frame }
      } else if status.pointee.commandsApplied.load(ordering: .acquiring) >= target {
        // Only the control thread sends commands, and it is here: no later block stores another frame.
        frame = status.pointee.commandFrame.load(ordering: .relaxed)
        appliedAtBlock = blocks
        continue
      }
      if blocks != lastBlocks {
        lastBlocks = blocks
        lastProgress = ContinuousClock.now
      } else if ContinuousClock.now - lastProgress > .milliseconds(50) {
        return nil
      }
      usleep(250)
    }
    return nil
  }

  /// Commands accepted and commands applied by the renderer so far (latency measurement).
  public var commandCounts: (sent: Int, applied: Int) {
    lock.locked { (commandsSent, renderState.pointee.status.pointee.commandsApplied.load(ordering: .relaxed)) }
  }

  /// Sends a command that changes nothing and returns the count of commands sent with it, to
  /// measure when the renderer has applied it (`commandCounts.applied`).
  public func probeCommand() throws(MixerError) -> Int {
    try lock.locked { () throws(MixerError) -> Int in
      try send(.setStemMetering(true))
      return commandsSent
    }
  }

  /// Fills every stream's ring once (offline rendering; the disk thread does this when live).
  ///
  /// Every ring is topped up as far as it goes (a pass reads at most 32,768 frames a stream, less
  /// than one block of a high-rate file at rate 2 consumes: a render must never underrun, it can
  /// wait for the disk).
  public func fillStreams() {
    var passes = 0
    while passes < 256 && disk.fillAll() > 0 { passes += 1 }
  }

  // MARK: - Stems

  /// The names of all stems, in order.
  public var stemNames: [String] { lock.locked { table.stems.map(\.settings.name) } }

  /// Names of all stems including offline ones.
  public var allStemNames: [String] { lock.locked { table.stems.map(\.settings.name) + table.offline.map(\.settings.name) } }

  /// Adds a stem playing the audio file at `path` (absolute or relative to the current
  /// directory). Its settings come from `settings` (name and all), validated first.
  @discardableResult
  public func addStem(path: String, settings: StemSettings) throws(MixerError) -> String {
    try addStem(path: path, settings: settings, pendingAt: nil)
  }

  /// `addStem`, or with `pendingAt`, a stem of the next song: its voice is placed for transport
  /// frame `pendingAt` of the new song and stays silent until a `changeSong` switch.
  @discardableResult
  func addStem(path: String, settings: StemSettings, pendingAt: Int?) throws(MixerError) -> String {
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
            ? .addVoice(slot: slot, voice: voice) : .addPendingVoice(slot: slot, voice: voice, song: transport.songChangesSent + 1))
      } catch {
        disk.remove(prepared.stream)
        discard(prepared)
        table.freeSlots.append(slot)
        throw error
      }
      table.stems.append(stem)
      if settings.solo { try? pushAllGains() }
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
    let converter = try quality.makeConverter(channels: channels, rateScale: sampleRate / Double(info.sampleRate))
    let ringFrames = Self.ringFrames(
      engineRate: sampleRate, fileRate: Double(info.sampleRate),
      maxBlockFrames: renderState.pointee.maxBlockFrames)
    let ends = SPSCRing.make(minimumCapacity: ringFrames * channels, of: Float.self)
    let shared = UnsafeMutablePointer<StemShared>.allocate(capacity: 1)
    shared.initialize(to: StemShared(loops: settings.loops))
    let stem = Stem(settings: settings, path: path, info: info, slot: slot, shared: StemSharedRef(shared))
    stem.publishRegion(sampleRate: Double(info.sampleRate))
    let place = placement(for: stem, atTransportFrame: frame)
    shared.pointee.requestedFrame.store(place.sourceFrame, ordering: .relaxed)
    shared.pointee.requestedEpoch.store(transport.epoch, ordering: .releasing)
    let stream = DiskStream(file: file, producer: ends.producer, shared: stem.shared)
    stem.stream = stream
    let audible = stemAudible(settings, anySolo: solo)
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
        rateScale: sampleRate / Double(info.sampleRate), rate: settings.rate,
        volume: settings.volume, pan: settings.pan, audible: audible,
        sampleRate: sampleRate, epoch: transport.epoch, joinFrame: place.joinFrame,
        stretch: stretch,
        pitchScale: StretchState.pitchScale(semitones: settings.pitch, fileRate: Double(info.sampleRate), engineRate: sampleRate),
        eq: settings.eq.engineParameters))
    voice.pointee.bus = busIndex(settings.bus)
    return PreparedStem(stem: stem, voice: voice, stream: stream)
  }

  /// Frees a prepared stem the renderer never saw (its stream was never given to the disk).
  func discard(_ prepared: PreparedStem) {
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
    }
  }

  /// Removes a stem: it fades out and its resources are freed once the renderer hands it back.
  public func removeStem(_ name: String) throws(MixerError) {
    try lock.locked { () throws(MixerError) in
      if let index = table.offline.firstIndex(where: { $0.settings.name == name }) {
        table.offline.remove(at: index)
        isDirty = true
        return
      }
      let stem = try find(name)
      try send(.removeVoice(slot: stem.slot))
      clearSends(ofStem: name, slot: stem.slot)
      table.stems.removeAll { $0 === stem }
      stem.shared.pointer.pointee.closing.store(true, ordering: .relaxed)
      table.retiring.append(stem)
      if stem.settings.solo { try? pushAllGains() }
      isDirty = true
    }
  }

  /// Removes every stem.
  public func removeAllStems() throws(MixerError) {
    try lock.locked { () throws(MixerError) in
      for name in table.stems.map(\.settings.name) { try removeStem(name) }
      if !table.offline.isEmpty { table.offline.removeAll(); isDirty = true }
    }
  }

  public func setVolume(_ name: String, _ volume: Double) throws(MixerError) {
    if isBus(name) { return try setBusVolume(name, volume) }
    try change(name) { (s: inout StemSettings) throws(MixerError) in
      try MixerError.check(volume, .volume, "volume")
      s.volume = volume
    }
  }

  public func setPan(_ name: String, _ pan: Double) throws(MixerError) {
    if isBus(name) { return try setBusPan(name, pan) }
    try change(name) { (s: inout StemSettings) throws(MixerError) in
      try MixerError.check(pan, .pan, "pan")
      s.pan = pan
    }
  }

  public func setRate(_ name: String, _ rate: Double) throws(MixerError) {
    try change(name) { (s: inout StemSettings) throws(MixerError) in
      try MixerError.check(rate, .rate, "rate")
      s.rate = rate
    }
  }

  public func setLoops(_ name: String, _ loops: Int) throws(MixerError) {
    try change(name) { (s: inout StemSettings) throws(MixerError) in
      try MixerError.check(loops, .loops, "loops")
      s.loops = loops
    }
  }

  public func setMute(_ name: String, _ mute: Bool) throws(MixerError) {
    if isBus(name) { return try setBusMute(name, mute) }
    try change(name) { (s: inout StemSettings) throws(MixerError) in s.mute = mute }
  }

  public func setSolo(_ name: String, _ solo: Bool) throws(MixerError) {
    if isBus(name) { return try setBusSolo(name, solo) }
    try change(name) { (s: inout StemSettings) throws(MixerError) in s.solo = solo }
  }

  /// Applies a validated change to one stem's settings and sends what changed to the renderer.
  func change(_ name: String, _ body: (inout StemSettings) throws(MixerError) -> Void) throws(MixerError) {
    try lock.locked { () throws(MixerError) in
      if let input = liveInputs.find(name) { return try changeInput(input, stemChange: body) }
      let stem = try find(name)
      var settings = stem.settings
      try body(&settings)
      let old = stem.settings
      guard settings != old else { return }
      stem.settings = settings
      if settings.loops != old.loops {
        transport.endReported = false
        stem.shared.pointer.pointee.loops.store(settings.loops, ordering: .relaxed)
      }
      if settings.rate != old.rate {
        try send(.setRate(slot: stem.slot, rate: settings.rate))
      }
      if settings.eq != old.eq { try sendEQ(.stem(slot: stem.slot), from: old.eq, to: settings.eq) }
      if settings.solo != old.solo {
        try pushAllGains()
      } else if settings.volume != old.volume || settings.pan != old.pan || settings.mute != old.mute {
        try pushGains(stem, volume: settings.volume != old.volume, pan: settings.pan != old.pan)
      }
      isDirty = true
    }
  }

  func anySolo(including extra: StemSettings? = nil) -> Bool {
    (extra?.solo ?? false) || table.stems.contains { $0.settings.solo } || anyBusSolo || anyInputSolo
  }

  /// Sends a stem's levels: volume and pan only when they changed (so glides of the others keep
  /// running), audibility always.
  func pushGains(_ stem: Stem, volume: Bool = false, pan: Bool = false, anySolo solo: Bool? = nil) throws(MixerError) {
    let audible = stemAudible(stem.settings, anySolo: solo ?? anySolo())
    try send(
      .setLevels(
        slot: stem.slot, volume: volume ? stem.settings.volume : nil, pan: pan ? stem.settings.pan : nil,
        audible: audible))
    stem.sentAudible = audible
  }

  /// Sends the audibility of every stem whose mute/solo state as heard changed since it was last
  /// sent. Only the changes go: a solo on a large session costs one command per stem it
  /// silences or brings back, so adding N soloed stems (or `solo all`) is linear, not N² commands
  /// (which overflowed the command ring at about 127 stems).
  /// Solo follows the buses (Mixer+Buses.swift): the buses' audibility goes too, and
  /// `levelsOf` names a bus whose volume and balance are sent with it.
  func pushAllGains(levelsOf: String? = nil) throws(MixerError) {
    let solo = anySolo()
    for stem in table.stems where stemAudible(stem.settings, anySolo: solo) != stem.sentAudible { try pushGains(stem, anySolo: solo) }
    try pushBusGains(anySolo: solo, levelsOf: levelsOf)
    try pushAllInputGains(anySolo: solo)
  }

  /// Master volume, linear 0…2.
  public func setMasterVolume(_ volume: Double) throws(MixerError) {
    try lock.locked { () throws(MixerError) in
      try MixerError.check(volume, .volume, "master volume")
      try send(.setMasterGain(Float(volume)))
      if masterVolume != volume { isDirty = true }
      masterVolume = volume
    }
  }

  public var masterVolumeSetting: Double { lock.locked { masterVolume } }

  /// Changes the resampler quality: every stem gets a new converter, and the transport re-syncs
  /// at its current position (a few milliseconds' fade).
  public func setQuality(_ newQuality: ResamplerQuality) throws(MixerError) {
    try lock.locked { () throws(MixerError) in
      guard newQuality != quality else { return }
      let position = currentTransportFrame()
      try rebuildStems(table.stems.map { ($0, $0.settings) }, quality: newQuality, what: "change the quality to \(newQuality.rawValue)")
      quality = newQuality
      try seek(toFrame: position)
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

  /// Turns per-stem metering on or off (the offline renderer turns it off: nobody reads it).
  public func setStemMetering(_ on: Bool) throws(MixerError) {
    try lock.locked { () throws(MixerError) in try send(.setStemMetering(on)) }
  }

  /// Marks the state as changed (e.g. after recovering an autosave).
  public func markDirty() { lock.locked { isDirty = true } }

  /// Marks the current state as saved.
  public func markSaved() { lock.locked { isDirty = false } }

  // MARK: - Transport

  public func play() throws(MixerError) {
    try lock.locked { () throws(MixerError) in
      let seekPending = renderState.pointee.status.pointee.appliedEpoch.load(ordering: .relaxed) != transport.epoch
      if transport.endReported
        || (!seekPending && !table.stems.isEmpty && !table.stems.contains { $0.settings.loops < 0 } && allFiniteStemsFinishedLocked())
      {
        try seek(toFrame: 0)  // played to the end: start again from the top
      }
      try send(.play(fadeIn: currentTransportFrame() > 0))
    }
  }

  public func pause() throws(MixerError) {
    try lock.locked { () throws(MixerError) in try send(.pause) }
  }

  /// Stops and rewinds to 0.
  public func stop() throws(MixerError) {
    try lock.locked { () throws(MixerError) in
      try send(.pause)
      try seek(toFrame: 0)
    }
  }

  /// Moves the transport to `seconds` (clamped at 0). Every stem keeps its own loop phase.
  public func seek(toSeconds seconds: Double) throws(MixerError) {
    // Below 0 is clamped (a relative seek past the start), not refused.
    guard seconds.isFinite, seconds <= SettingRule.position.range.upperBound else {
      throw MixerError(ControlText(SettingRule.position.refusal("seek position", got: seconds)))
    }
    try lock.locked { () throws(MixerError) in
      try seek(toFrame: Int((max(0, seconds) * sampleRate).rounded()))
    }
  }

  func seek(toFrame frame: Int) throws(MixerError) {
    transport.endReported = false
    transport.epoch += 1
    transport.seekTarget = frame
    for stem in table.stems {
      let place = placement(for: stem, atTransportFrame: frame)
      let shared = stem.shared.pointer
      shared.pointee.requestedFrame.store(place.sourceFrame, ordering: .relaxed)
      shared.pointee.requestedEpoch.store(transport.epoch, ordering: .releasing)
      if place.joinFrame != frame {
        try send(.setJoinFrameAfterSeek(slot: stem.slot, frame: place.joinFrame))
      }
    }
    try send(.seek(frame: frame, epoch: transport.epoch))
  }

  /// The transport position the control thread should assume: a seek not yet applied by the
  /// renderer counts as done.
  func currentTransportFrame() -> Int {
    let status = renderState.pointee.status
    if status.pointee.appliedEpoch.load(ordering: .relaxed) != transport.epoch { return transport.seekTarget }
    return status.pointee.transportFrame.load(ordering: .relaxed)
  }

  /// Where a stem added now joins: the current position when paused, a little ahead when playing.
  func joinTransportFrame() -> Int {
    let frame = currentTransportFrame()
    let state = renderState.pointee.status.pointee.transportState.load(ordering: .relaxed)
    return state == TransportState.paused.rawValue ? frame : frame + Int(Self.joinMargin * sampleRate)
  }

  /// The source frame (in the looped stream) and the transport frame where a stem should be at
  /// transport frame `t`, accounting for its start offset and rate.
  func placement(for stem: Stem, atTransportFrame t: Int) -> (sourceFrame: Int, joinFrame: Int) {
    let start = Int((stem.settings.startOffset * sampleRate).rounded())
    if t <= start { return (0, start) }
    let source = Double(t - start) * Double(stem.info.sampleRate) * stem.settings.rate / sampleRate
    return (Int(source.rounded()), t)
  }

  public var transportState: TransportState {
    TransportState(rawValue: renderState.pointee.status.pointee.transportState.load(ordering: .relaxed)) ?? .paused
  }

  /// Transport position in seconds.
  public var position: Double { lock.locked { Double(currentTransportFrame()) / sampleRate } }

  /// Length of the longest finite stem (all loops, at its rate, after its start offset), or nil
  /// when there are no stems. Stems looping forever are left out; `hasEndlessStems` says so.
  public var duration: Double? {
    lock.locked {
      let finite = table.stems.compactMap { $0.duration }
      return finite.max()
    }
  }

  public var hasEndlessStems: Bool { lock.locked { table.stems.contains { $0.settings.loops < 0 } } }

  /// True when every stem that can finish has finished (and there is at least one such stem).
  /// Counts the ends of songs reported by `pump` (the transport stopped there); the console's
  /// setlist auto-advance and `wait end` watch it change.
  public var songEnds: Int { lock.locked { transport.songEnds } }
  /// Whether the song has played to its end (reported, and not moved since).
  public var songHasEnded: Bool { lock.locked { transport.endReported } }

  public var allFiniteStemsFinished: Bool {
    lock.locked { allFiniteStemsFinishedLocked() }
  }

  // MARK: - Status, stems and meters

  public func stemStatuses() -> [StemStatus] {
    lock.locked { table.stems.map { $0.status(engineRate: sampleRate, preFader: options.meterPoint == .pre) } }
  }

  public func stemStatus(_ name: String) throws(MixerError) -> StemStatus {
    try lock.locked { () throws(MixerError) -> StemStatus in
      try find(name).status(engineRate: sampleRate, preFader: options.meterPoint == .pre)
    }
  }

  public func masterMeter() -> MeterReading {
    MeterReading(cells: renderState.pointee.status.pointee.masterMeters, channels: 2)
  }

  /// Clears peak hold and clip counts of every stem and the master, and restarts the master's
  /// loudness integration (integrated loudness, range, true peak) when it is measured.
  public func resetMeters() {
    lock.locked {
      resetLoudnessLocked()
      renderState.pointee.status.pointee.masterMeters.pointee.requestReset()
      renderState.pointee.status.pointee.effectsMeters.pointee.requestReset()
      for stem in table.stems { stem.shared.pointer.pointee.meters.pointee.requestReset() }
      for bus in busTable.buses { renderState.pointee.buses.meters[Int(bus.index)].requestReset() }
      for input in liveInputs.inputs { (renderState.pointee.inputs.meters + input.index).pointee.requestReset() }
    }
  }

  // MARK: - Events

  /// Drains the renderer's events and returned voices, frees what the renderer let go, and
  /// returns what happened, in order. Call it every few tens of milliseconds.
  public func pump() -> [MixerEvent] {
    lock.locked {
      var out: [MixerEvent] = []
      while let event = rings.events.pop() {
        switch event {
        case .stemFinished(let slot):
          if let stem = table.stems.first(where: { $0.slot == slot }) {
            out.append(.stemFinished(stem.settings.name))
          }
        case .underrun(let slot):
          if let stem = table.stems.first(where: { $0.slot == slot }) { out.append(.underrun(stem.settings.name)) }
        case .primeTimeout:
          out.append(.primeTimeout)
        case .badSamples(let slot):
          if let stem = table.stems.first(where: { $0.slot == slot }) { out.append(.badSamples(stem.settings.name)) }
        case .effectUnloaded(let slot):
          effectReleased(slot: slot)
        case .recordingStopped:
          out += finishTake()
        case .busPlanRetired(let address):
          if let plan = UnsafeMutablePointer<BusPlan>(bitPattern: address) { BusPlan.free(plan) }
        }
      }
      collectRetired()
      drainLoudnessLocked()
      out += finishEffectLoads()
      out += pumpMidi()
      // The end of the song: every stem that can finish has, and none loops forever. The
      // transport stops there (as a player does); `play` then starts again from the top.
      // Not while a seek is on its way to the renderer: the stems' `finished` flags are the old
      // position's until it is applied (`play` at the end rewinds that way).
      let seekPending = renderState.pointee.status.pointee.appliedEpoch.load(ordering: .relaxed) != transport.epoch
      if !transport.endReported && !seekPending && !table.stems.isEmpty && !table.stems.contains(where: { $0.settings.loops < 0 })
        && allFiniteStemsFinishedLocked()
      {
        transport.endReported = true
        transport.songEnds += 1
        out.append(.allFinished)
        if transportState == .playing { try? send(.pause) }
      }
      for stem in table.stems where !stem.badSamplesReported && stem.shared.pointer.pointee.badSamples.load(ordering: .relaxed) {
        stem.badSamplesReported = true
        var settings = stem.settings
        settings.mute = true
        stem.settings = settings
        try? pushGains(stem)
        isDirty = true
        out.append(.badSamples(stem.settings.name))
      }
      if let r = takes.recorder, !r.failureReported, let reason = r.failureIfAny {
        r.failureReported = true
        let kept = NumberFormat.time(Double(r.framesWritten) / sampleRate)
        out.append(.recordingFailed(r.name, "\(reason) — the take keeps its first \(kept), a valid file; 'record stop' adds it as a stem"))
      }
      for stem in table.stems where !stem.failureReported {
        if let message = stem.stream?.failure {
          stem.failureReported = true
          out.append(.readFailed(stem.settings.name, message))
        }
      }
      return out
    }
  }

  /// True when a stem's disk reader has found NaN or infinite samples that `pump` has not
  /// reported (and muted) yet. Cheap: one atomic load per stem.
  public var hasUnreportedBadSamples: Bool {
    lock.locked { table.stems.contains { !$0.badSamplesReported && $0.shared.pointer.pointee.badSamples.load(ordering: .relaxed) } }
  }

  /// Frees the voices the renderer handed back and the stems they belonged to, returning their
  /// slots to the free list.
  func collectRetired() {
    while let voice = rings.retired.pop() {
      let shared = voice.pointee.shared
      voice.deinitialize(count: 1)
      voice.deallocate()
      if let index = table.retiring.firstIndex(where: { $0.shared.pointer == shared }) {
        let stem = table.retiring.remove(at: index)
        table.detaching.append(stem)
      }
    }
    // A retired stem's shared state is freed once no disk worker holds its stream; a worker
    // stuck in a stalled read of it only delays that (never the REPL: this does not wait).
    // (The freed slots are collected first: `table` is being changed by removeAll.)
    var freed: [Int32] = []
    table.detaching.removeAll { stem in
      if let stream = stem.stream, !disk.tryRemove(stream) { return false }
      stem.stream = nil
      stem.freeShared()
      if !stem.slotHandedOver { freed.append(stem.slot) }
      return true
    }
    table.freeSlots += freed
  }

  /// Makes sure `count` slots are free if the renderer can hand enough back: collects what it
  /// has returned and, while it runs and still holds stems on their way out, waits for them
  /// (bounded, 2 s). Song changes in a row (`next` 200 times while playing) used to run out of
  /// slots because the songs they superseded had not been collected yet.
  func reclaimSlots(_ count: Int) {
    collectRetired()
    guard table.freeSlots.count < count, streaming == .thread else { return }
    let deadline = Date().addingTimeInterval(2)
    while table.freeSlots.count < count && !(table.retiring.isEmpty && table.detaching.isEmpty) && Date() < deadline {
      usleep(1000)
      collectRetired()
    }
  }

  func allFiniteStemsFinishedLocked() -> Bool {
    // Until the renderer has applied the latest seek (e.g. 'play' after the end rewinds to 0),
    // the stems' finished flags describe the old position: not finished yet.
    guard renderState.pointee.status.pointee.appliedEpoch.load(ordering: .relaxed) == transport.epoch else { return false }
    let finite = table.stems.filter { $0.settings.loops >= 0 }
    return !finite.isEmpty && finite.allSatisfy { $0.shared.pointer.pointee.finished.load(ordering: .acquiring) }
  }

  /// True once every removed stem has been handed back and freed.
  public var hasPendingRemovals: Bool { lock.locked { !table.retiring.isEmpty } }

  // MARK: - Helpers

  func find(_ name: String) throws(MixerError) -> Stem {
    if let stem = table.stems.first(where: { $0.settings.name == name }) { return stem }
    if let offline = table.offline.first(where: { $0.settings.name == name }) {
      throw MixerError(
        "stem '\(name)' is offline: \(offline.reason) (fix the file and \(action: .reopenSession), or \(action: .removeStem(name)))")
    }
    if busPosition(name) != nil {
      throw MixerError("'\(name)' is a bus; this applies to stems only (a bus has volume, pan, mute, solo, eq, directout and route)")
    }
    if liveInputs.find(name) != nil { throw notForInputs(name) }
    throw MixerError.unknownStem(name, known: table.stems.map(\.settings.name))
  }

  func validate(_ s: StemSettings, isNew: Bool) throws(MixerError) {
    if let problem = NameRules.stemProblem(s.name) { throw MixerError(ControlText(problem)) }
    if isNew, table.stems.contains(where: { $0.settings.name == s.name }) || table.offline.contains(where: { $0.settings.name == s.name }) {
      throw MixerError("a stem named '\(s.name)' already exists; \(action: .nameNewStem)")
    }
    if isNew, busPosition(s.name) != nil {
      throw MixerError("a bus named '\(s.name)' already exists (stems and buses need different names); \(action: .nameNewStem)")
    }
    if isNew, liveInputs.find(s.name) != nil {
      throw MixerError("'\(s.name)' is a live input's name; stems and inputs share one set of names, \(action: .nameNewStem)")
    }
    try MixerError.check(s.volume, .volume, "volume")
    try MixerError.check(s.pan, .pan, "pan")
    try MixerError.check(s.rate, .rate, "rate")
    try MixerError.check(s.loops, .loops, "loops")
    try MixerError.check(s.startOffset, .startOffset, "start offset")
    try MixerError.check(s.crossfade, .crossfade, "crossfade")
    try MixerError.check(s.pitch, .pitch, "pitch")
    try Mixer.checkEQ(s.eq, of: "'\(s.name)'")
    if s.mode == .varispeed && s.pitch != 0 {
      throw MixerError(
        "pitch shifts need stretch mode (got pitch \(NumberFormat.plain(s.pitch)) for '\(s.name)' in varispeed mode, where the pitch follows the rate)"
      )
    }
  }

  /// Ring size per stem, in frames: about 1.4 s at 48 kHz (a power of two).
  static func ringFrames(sampleRate: Double) -> Int {
    var n = 1
    while Double(n) < sampleRate * 1.25 { n <<= 1 }
    return n
  }

  /// Ring size for a stem's file, in file frames (a power of two): 1.25 s of the file's audio at
  /// rate 1 (never less than the engine-rate size), and at least four of the largest periods'
  /// worth at the top rate. The ring holds the file's frames, so sizing it in engine frames alone
  /// starved files recorded above the engine rate: a 384 kHz stem underran every 4096-frame
  /// period live, and a 192 kHz stem at rate 2 rendered at 12 kHz was mostly silence.
  static func ringFrames(engineRate: Double, fileRate: Double, maxBlockFrames: Int) -> Int {
    let perPeriod = Double(maxBlockFrames) * fileRate / engineRate * SettingRange.rate.upperBound
    var n = ringFrames(sampleRate: max(engineRate, fileRate))
    while Double(n) < 4 * perPeriod + 64 { n <<= 1 }
    return n
  }
}

/// The control thread's record of one stem.
final class Stem {
  var settings: StemSettings
  /// The audio file's path as opened (absolute when loaded from a session).
  let path: String
  let info: SoundFileInfo
  let slot: Int32
  let shared: StemSharedRef
  var stream: DiskStream?
  var failureReported = false
  var badSamplesReported = false
  /// The audibility (mute and solo) last sent to the renderer (see `pushAllGains`).
  var sentAudible = true
  /// Rebuilt in place (`rebuildStems`): its slot belongs to the new stem, not the free list.
  var slotHandedOver = false
  /// Part of a song being left by a setlist change: still playing (or fading out) until the
  /// renderer hands its voice back.
  var leavingSong = false
  var sharedFreed = false

  init(settings: StemSettings, path: String, info: SoundFileInfo, slot: Int32, shared: StemSharedRef) {
    self.settings = settings
    self.path = path
    self.info = info
    self.slot = slot
    self.shared = shared
  }

  func freeShared() {
    guard !sharedFreed else { return }
    sharedFreed = true
    shared.pointer.deinitialize(count: 1)
    shared.pointer.deallocate()
  }

  var channels: Int { min(info.channelCount, 2) }

  func ratio(engineRate: Double) -> Double {
    engineRate / (Double(info.sampleRate) * settings.rate)
  }

  /// Whether mute and solo let the stem be heard.
  func isAudible(anySolo: Bool) -> Bool {
    !(settings.mute || (anySolo && !settings.solo))
  }

  /// Frames in one pass: the loop region, or the whole file.
  var loopFrames: Int { Self.loopFrames(settings, info) }

  static func loopFrames(_ settings: StemSettings, _ info: SoundFileInfo) -> Int {
    guard let start = settings.loopStart, let end = settings.loopEnd else { return info.frameCount }
    let a = min(max(0, Int((start * Double(info.sampleRate)).rounded())), info.frameCount - 1)
    let b = min(max(a + 1, Int((end * Double(info.sampleRate)).rounded())), info.frameCount)
    return b - a
  }

  /// Tells the disk reader the loop region and crossfade (frames in the file).
  func publishRegion(sampleRate fileRate: Double) {
    let s = shared.pointer
    if let start = settings.loopStart, let end = settings.loopEnd {
      s.pointee.regionStart.store(Int((start * fileRate).rounded()), ordering: .relaxed)
      s.pointee.regionEnd.store(Int((end * fileRate).rounded()), ordering: .relaxed)
    } else {
      s.pointee.regionStart.store(-1, ordering: .relaxed)
    }
    s.pointee.crossfadeFrames.store(Int((settings.crossfade * fileRate).rounded()), ordering: .relaxed)
    s.pointee.regionVersion.add(1, ordering: .releasing)
  }

  /// Seconds from transport 0 until this stem has played all its loops; nil when endless.
  var duration: Double? { Self.duration(settings, info) }

  /// The same for a stem not made yet (a song's stems checked before they are opened).
  static func duration(_ settings: StemSettings, _ info: SoundFileInfo) -> Double? {
    guard settings.loops >= 0 else { return nil }
    let plays = Double(settings.loops + 1)
    return settings.startOffset + plays * Double(loopFrames(settings, info)) / (Double(info.sampleRate) * settings.rate)
  }

  /// Post-fader meters have two channels (the stem after pan); pre-fader ones follow the file.
  func status(engineRate: Double, preFader: Bool) -> StemStatus {
    let s = shared.pointer
    let start = s.pointee.epochStartFrame.load(ordering: .relaxed)
    let synced = s.pointee.synced.load(ordering: .relaxed)
    // As heard (the ring's read counter runs ahead of a resampled or stretched stem's output).
    let sourceFrame = synced ? start + Int(s.pointee.heardPosition().sourceFrames) : start
    let glides = s.pointee.glides.load(ordering: .relaxed)
    return StemStatus(
      settings: settings, path: path, info: info,
      loopIndex: sourceFrame / max(1, loopFrames),
      positionInFile: (Double(sourceFrame % max(1, loopFrames)) + (settings.loopStart ?? 0) * Double(info.sampleRate))
        / Double(info.sampleRate),
      length: Double(info.frameCount) / Double(info.sampleRate),
      finished: s.pointee.finished.load(ordering: .relaxed),
      underruns: s.pointee.underruns.load(ordering: .relaxed),
      failed: s.pointee.readFailed.load(ordering: .relaxed),
      meter: MeterReading(cells: s.pointee.meters, channels: preFader ? channels : 2),
      glidingVolume: glides & 1 != 0 ? Double(bitPattern: s.pointee.glidingVolume.load(ordering: .relaxed)) : nil,
      glidingPan: glides & 2 != 0 ? Double(bitPattern: s.pointee.glidingPan.load(ordering: .relaxed)) : nil,
      glidingRate: glides & 4 != 0 ? Double(bitPattern: s.pointee.glidingRate.load(ordering: .relaxed)) : nil)
  }
}

extension ResamplerQuality {
  /// A converter for a stem whose ratio at rate 1 is `rateScale` (engine rate / file rate):
  /// stemdeck's own sinc (`SincResampler`) for `fast`, libsamplerate for the others (its
  /// converter constants import as Int, docs/architecture.md).
  func makeConverter(channels: Int, rateScale: Double) throws(MixerError) -> RateConverter {
    let type: Int
    switch self {
    case .fast:
      // The ratio is rateScale / rate, and rate goes up to its range's top.
      return .makeSinc(channels: channels, minimumRatio: rateScale / SettingRange.rate.upperBound)
    case .linear: type = SRC_LINEAR
    case .medium: type = SRC_SINC_MEDIUM_QUALITY
    case .best: type = SRC_SINC_BEST_QUALITY
    }
    var errorCode: Int32 = 0
    guard let state = src_new(Int32(type), Int32(channels), &errorCode) else {
      throw MixerError("libsamplerate: \(String(cString: src_strerror(errorCode)))")
    }
    return .libsamplerate(state)
  }
}

extension Mixer {
  /// Turns a stem's, a bus's or a live input's direct outs on or off (the JACK driver registers
  /// the ports).
  public func setDirectOut(_ name: String, _ on: Bool) throws(MixerError) {
    if isBus(name) { return try setBusDirectOut(name, on) }
    try change(name) { (s: inout StemSettings) throws(MixerError) in s.directOut = on }
  }

  /// Sets when a stem starts, in transport seconds (`SettingRule.startOffset`); takes effect at the
  /// next seek or stop.
  public func setStartOffset(_ name: String, _ seconds: Double) throws(MixerError) {
    try change(name) { (s: inout StemSettings) throws(MixerError) in
      try MixerError.check(seconds, .startOffset, "start offset")
      s.startOffset = seconds
    }
  }

  /// (name, slot) of every stem that wants direct outs.
  public func directOutSlots() -> [(name: String, slot: Int)] {
    lock.locked {
      // An old song fading out after a crossfade keeps its direct outs until it is handed back.
      (table.stems + table.retiring.filter(\.leavingSong)).filter(\.settings.directOut).map { ($0.settings.name, Int($0.slot)) }
        + busDirectOutSlots() + inputDirectOutSlots()
    }
  }

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
        try other.setMasterVolume(masterVolume)
        try other.setMasterEQ(masterEQ)
        other.recording = recording
        other.tempoSetting = tempoSetting
        other.midi = midi
        other.midiState.enabled = midiState.enabled
        // The inputs at the master for now: their buses come with `installBuses` below.
        for input in liveInputs.inputs {
          var settings = input.settings
          settings.bus = nil
          try other.addInput(settings)
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
            try other.addStem(path: stem.path, settings: stem.settings)
          }
        }
        other.offlineStems = offline
        other.effects.offline = effects.offline
        // Effects are converted to the engine rate when loaded: load them again at the new rate.
        // One whose file has gone since is kept offline (saved back unchanged) rather than keeping
        // the server unfollowed.
        for (index, name) in effects.order.enumerated() {
          guard let effect = effects.byName[name] else { continue }
          if (try? other.loadEffect(path: effect.path, settings: effect.settings)) == nil {
            other.effects.offline.append(OfflineEffect(settings: effect.settings, path: effect.path, index: index))
          }
        }
        // Those still loading here load there (at its rate), synchronously.
        for job in effects.loading {
          if (try? other.loadEffect(path: job.path, settings: job.settings)) == nil {
            other.effects.offline.append(OfflineEffect(settings: job.settings, path: job.path, index: other.effects.order.count))
          }
        }
        try other.installBuses(busTable.buses.map(\.settings))
        for input in liveInputs.inputs where input.settings.bus != nil { try other.route(input.settings.name, to: input.settings.bus) }
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
        try other.seek(toSeconds: Double(currentTransportFrame()) / sampleRate)
        try other.publishMidi()
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

/// The mixer's stems by where they are in their life.
struct StemTable {
  /// Playing (or ready to), in session order.
  var stems: [Stem] = []
  /// Stems of a session whose audio file could not be opened: kept (and saved) as they were.
  var offline: [OfflineStem] = []
  /// Removed, replaced or left behind by a song change: waiting for the renderer to hand their
  /// voices back (see `pump`).
  var retiring: [Stem] = []
  /// Retired stems whose stream a disk worker may still be in the middle of (see `pump`).
  var detaching: [Stem] = []
  /// Voice slots no stem holds.
  var freeSlots: [Int32]

  init(freeSlots: [Int32]) { self.freeSlots = freeSlots }
}

/// The transport as the control side drives it (the renderer owns the transport itself).
struct TransportTracking {
  /// Bumped by every seek and song change; voices and the renderer follow the newest.
  var epoch = 0
  /// Where the last seek lands (what `position` says until the renderer has applied it).
  var seekTarget = 0
  /// Setlist song changes sent to the renderer (compare with `EngineStatus.songChanges`).
  var songChangesSent = 0
  /// Set once the end of the song has been reported; cleared by seeks.
  var endReported = false
  /// How many times the end of a song has been reported (`MixerEvent.allFinished`).
  var songEnds = 0
}
