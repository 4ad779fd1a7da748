import CSampleRate
import Foundation
import StemdeckAudioFile
import StemdeckEngine
import StemdeckSession
import StemdeckText
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
    /// The caller fills them by calling `engine.fillStreams()` before each block (offline render).
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
  /// zita's converters for `fast` stems holding a rate (Stem.swift, `heldConverter`): how many
  /// were made and freed (tests check that none is lost), and whether they are made at all
  /// (tests turn them off to render the sinc alone, the reference a hand-over is compared with).
  package var heldConverters = (enabled: true, made: 0, freed: 0)
  public internal(set) var options = SessionOptions()
  var recording = RecordingSettings()
  /// The session's tempo (for bar positions and JACK transport), if set.
  public var tempo: Tempo? {
    get { lock.locked { tempoSetting } }
    set { lock.locked { if tempoSetting != newValue { tempoSetting = newValue; isDirty = true } } }
  }
  var tempoSetting: Tempo? {
    // The click follows the tempo (Mixer+Click.swift); one not sent now is sent by `play`.
    didSet { if tempoSetting != oldValue { try? syncClick() } }
  }
  /// The click and count-in (Mixer+Click.swift), and the parameters the renderer was last sent.
  var clickSetting = ClickSettings() {
    didSet { if clickSetting != oldValue { try? syncClick() } }
  }
  var clickSent = ClickParameters.off
  /// The click samples the renderer was sent (beat, accent: absolute paths; empty: none sent
  /// yet), and why the last ones could not be read (Mixer+Click.swift).
  var clickSamplesSent: [String?] = []
  var clickSampleProblem: ControlText?
  /// The song's marks (Mixer+Marks.swift), in the order they were added.
  var markList: [Mark] = []
  var commandsSent = 0
  /// Between `beginGroup` and `endGroup`/`abortGroup`, and the grouped commands sent so far
  /// (compare with `EngineStatus.scheduleReleased`: how many wait in the renderer's schedule).
  var groupOpen = false
  var groupedSent = 0
  var groupedInThisGroup = 0
  /// The block count at which a wait for room in the command ring last gave up (see `send`).
  var stalledAtBlock = -1
  /// The transport as the control side drives it: seeks, song changes, the song's end.
  var transportTracking = TransportTracking()
  /// The sound effects, loaded, loading and offline (Mixer+Effects.swift).
  var effectsState = EffectsState()
  /// The take being recorded, if any (Mixer+Recording.swift).
  var takes = TakeState()
  /// The session's MIDI mappings and the MIDI control state (Mixer+Midi.swift).
  var midiSettings = MidiSettings()
  var midiState = MidiControlState()
  /// The session's scenes and its recall-safe strips (Mixer+Scenes.swift).
  var sceneStore: [SceneSettings] = []
  var recallSafe: [String] = []
  /// Set when something changed since the last `markSaved()`; each time it is set, `changes`
  /// counts one more change (undo's history looks for a change by it, Mixer+Undo.swift).
  public internal(set) var isDirty = false {
    didSet { if isDirty { changes &+= 1 } }
  }
  var changes = 0
  /// How long `engine.waitForApplication` waits for the next block before it takes the renderer for
  /// stopped (seconds). 50 ms by default: an offline mixer that nobody renders (tests) answers at
  /// once. A live session sets more (`LiveSession`): a JACK server without realtime scheduling on
  /// a loaded machine can leave 50 ms between periods, and `play` then answered before the
  /// renderer took it (`status` said stopped: CI, once in three runs).
  var stallTolerance = 0.05
  /// Seconds of look-ahead a stem added while playing is given before it joins.
  static let joinMargin = 0.3
  /// The master's live loudness meter, fed from the renderer's tap (Mixer+Loudness.swift).
  var liveLoudness: LiveLoudnessMeter?
  /// Live input strips (Mixer+Inputs.swift).
  var liveInputs = InputTable()
  /// Every strip's plugin inserts (Mixer+Inserts.swift).
  var insertRacks = InsertState()
  /// The thread that runs plugins' LV2 `work` (PluginFeatures.swift); nil: `work` runs at once
  /// inside the plugin's `run` (a mixer driven offline, with no audio thread to keep on time).
  let pluginWorker: PluginWorker?

  public init(
    sampleRate: Double, quality: ResamplerQuality = .fast, streaming: Streaming = .thread,
    maxVoices: Int = 1024, maxBlockFrames: Int = 4096, diskPacing: (any DiskReadPacing)? = nil,
    pluginWork: Streaming? = nil
  ) {
    self.sampleRate = sampleRate
    disk = DiskStreamer(pacing: diskPacing)
    self.quality = quality
    self.streaming = streaming
    // Plugins' LV2 work: on a thread when live; `pluginWork` chooses otherwise (tests).
    pluginWorker = (pluginWork ?? streaming) == .thread ? PluginWorker() : nil
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
      RenderState.destroy(
        renderState,
        dispose: { voice in
          voice.deinitialize(count: 1)
          voice.deallocate()
        },
        disposeInserts: { chain in
          insertRacks.chains[Int(bitPattern: chain)] = nil
          InsertChain.free(chain)
        })
      // Bus plans handed back and not collected yet (the renderer freed the one it held).
      while let event = rings.events.pop() {
        if case .busPlanRetired(let address) = event, let plan = UnsafeMutablePointer<BusPlan>(bitPattern: address) {
          BusPlan.free(plan)
        }
        if case .insertChainRetired(let address) = event { insertChainRetired(address: address) }
        if case .clickSamplesRetired(let address) = event, let samples = UnsafeMutablePointer<ClickSamples>(bitPattern: address) {
          ClickSamples.free(samples)
        }
        if case .converterRetired(let address) = event { ZitaResampler.free(address: address) }
      }
      // Commands still queued were applied by `destroy`: a rebuild's replacement that had not
      // taken over yet may have been handed back just now.
      while let voice = rings.retired.pop() {
        voice.deinitialize(count: 1)
        voice.deallocate()
      }
      for stem in table.stems + table.retiring + table.detaching { stem.freeShared() }
      freeAllEffects()
      freeAllInserts()
      pluginWorker?.stop()
      table.stems.removeAll()
      table.retiring.removeAll()
      table.detaching.removeAll()
    }
  }

  // MARK: - Commands to the renderer

  func send(_ command: EngineCommand) throws(MixerError) {
    if command.movesLatencyPlan { insertRacks.planStale = true }  // Mixer+InsertLatency.swift
    let grouped: Bool
    switch command {
    case .beginGroup: grouped = false; groupOpen = true; groupedInThisGroup = 0
    case .endGroup: grouped = false; groupOpen = false
    case .abortGroup:
      // The renderer drops the group's commands without counting them released.
      grouped = false; groupOpen = false; groupedSent -= groupedInThisGroup; groupedInThisGroup = 0
    case .offerConverter: grouped = false  // applied on arrival (it changes nothing heard)
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

extension Mixer.Recorder {
  /// How takes are recorded (kept for the session file; used by the console's `record`).
  public var settings: RecordingSettings {
    get { mixer.lock.locked { mixer.recording } }
    nonmutating set { mixer.lock.locked { if mixer.recording != newValue { mixer.recording = newValue; mixer.isDirty = true } } }
  }
}

extension Mixer.Engine {
  /// Waits (control thread, without the lock) until the renderer has applied every command sent
  /// so far and published a block after them, so that what `transport.state` and the position
  /// say includes them (`play` then `status` never says stopped). Gives up after `timeout`
  /// seconds, or at once when the renderer is not rendering (no block for `engine.stallLimit`:
  /// the server stopped, or an offline mixer nobody renders); returns whether it saw them applied.
  @discardableResult
  public func waitUntilApplied(timeout: Double = 0.5) -> Bool {
    waitForApplication(timeout: timeout) != nil
  }

  /// `engine.waitUntilApplied`, returning the transport frame the renderer's block that applied the
  /// last of the commands left the transport at (`EngineStatus.commandFrame`: where a `play`
  /// starts, a `pause` begins its fade, a `seek` or `stop` lands), or nil when it did not see
  /// them applied.
  public func waitForApplication(timeout: Double = 0.5) -> Int? {
    let status = mixer.renderState.pointee.status
    let (target, tolerance) = mixer.lock.locked { (mixer.commandsSent, mixer.stallTolerance) }
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
      } else if ContinuousClock.now - lastProgress > .milliseconds(Int(tolerance * 1000)) {
        return nil
      }
      usleep(250)
    }
    return nil
  }

  /// Commands accepted and commands applied by the renderer so far (latency measurement).
  public var commandCounts: (sent: Int, applied: Int) {
    mixer.lock.locked { (mixer.commandsSent, mixer.renderState.pointee.status.pointee.commandsApplied.load(ordering: .relaxed)) }
  }

  /// Sends a command that changes nothing and returns the count of commands sent with it, to
  /// measure when the renderer has applied it (`engine.commandCounts.applied`).
  public func probeCommand() throws(MixerError) -> Int {
    try mixer.lock.locked { () throws(MixerError) -> Int in
      try mixer.send(.setStemMetering(true))
      return mixer.commandsSent
    }
  }

  /// Fills every stream's ring once (offline rendering; the disk thread does this when live).
  ///
  /// Every ring is topped up as far as it goes (a pass reads at most 32,768 frames a stream, less
  /// than one block of a high-rate file at rate 2 consumes: a render must never underrun, it can
  /// wait for the disk).
  public func fillStreams() {
    var passes = 0
    while passes < 256 && mixer.disk.fillAll() > 0 { passes += 1 }
  }

  /// How long a wait for the renderer (`engine.waitForApplication`) gives it between blocks before it
  /// takes it for stopped, in seconds (0.05 by default; a live session sets more).
  public var stallLimit: Double {
    get { mixer.lock.locked { mixer.stallTolerance } }
    nonmutating set { mixer.lock.locked { mixer.stallTolerance = max(0.01, newValue) } }
  }
}
