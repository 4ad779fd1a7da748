import StemdeckEngine
import StemdeckSession
import StemdeckText

// Plugin inserts in sessions: saved from the racks (Mixer+Inserts.swift) with their values by
// port symbol; opened into new racks. A plugin that is not installed (or no longer fits its
// strip, or fails to instantiate) becomes a placeholder that passes audio through and is saved
// back exactly as it was read; the open reports it once per plugin. docs/architecture.md,
// *Plugin inserts*.

extension Mixer {
  /// `target`'s inserts as the session file at `sessionPath` holds them (nil: a copy in memory,
  /// paths in plugin state kept absolute), with each plugin's state (PluginState.swift) unless
  /// `withState` is false (a scene: a mix, not a rig); `copyingFiles`: the session is being
  /// written, so files its plugins' state names from elsewhere are copied beside it.
  func insertSettings(
    _ target: StripTarget, sessionPath: String? = nil, withState: Bool = true, copyingFiles: Bool = false
  ) -> [InsertSettings] {
    (insertRacks.racks[InsertKey(target)] ?? []).map { x in
      InsertSettings(
        uri: x.uri, bypass: x.bypass, values: x.values.map { InsertValue(symbol: $0.symbol, value: $0.value) },
        state: withState ? x.saveState(sessionPath: sessionPath, copyingFiles: copyingFiles).state : nil)
    }
  }

  /// Writes every strip's inserts into `session` (for the file at `sessionPath`; `copyingFiles`:
  /// being written there).
  func storeInserts(in session: inout Session, sessionPath: String? = nil, copyingFiles: Bool = false) {
    func insertSettings(_ target: StripTarget) -> [InsertSettings] {
      self.insertSettings(target, sessionPath: sessionPath, copyingFiles: copyingFiles)
    }
    session.masterInserts = insertSettings(.master)
    for i in session.buses.indices {
      if let bus = busTable.buses.first(where: { $0.settings.name == session.buses[i].name }) {
        session.buses[i].strip.inserts = insertSettings(.bus(bus.index))
      }
    }
    for i in session.inputs.indices {
      if let input = liveInputs.find(session.inputs[i].name) {
        session.inputs[i].strip.inserts = insertSettings(.input(Int32(input.index)))
      }
    }
    for i in session.stems.indices {
      if let stem = table.stems.first(where: { $0.settings.name == session.stems[i].name }) {
        session.stems[i].strip.inserts = insertSettings(.stem(slot: stem.slot))
      }
    }
  }

  /// Tries every plugin `session`'s strips insert in a child process (PluginProbe) before the
  /// caller takes the mixer's lock, so that an open or a song change does not hold the lock
  /// while children run. Answers nothing here: `installInserts`, under the lock, finds the ones
  /// that passed remembered, and probes (and reports) a crashing one again.
  func probeInserts(of session: Session) {
    let uris = Set(
      session.masterInserts.map(\.uri) + session.stems.flatMap { $0.strip.inserts.map(\.uri) }
        + session.buses.flatMap { $0.strip.inserts.map(\.uri) } + session.inputs.flatMap { $0.strip.inserts.map(\.uri) })
    guard !uris.isEmpty else { return }
    let maxBlockFrames = renderState.pointee.maxBlockFrames
    for info in PluginHost.shared.plugins() where uris.contains(info.uri) {
      try? PluginProbe.check(info, sampleRate: sampleRate, maxBlockFrames: maxBlockFrames)
    }
  }

  /// Replaces every strip's inserts with `session`'s (its stems, buses and inputs are in
  /// place). Returns a warning per plugin that is kept as a placeholder.
  func installInserts(of session: Session, sessionPath: String?) -> [MixerWarning] {
    for (key, rack) in insertRacks.racks where (try? sendRack([], key.target)) != nil { insertRacks.released += rack }
    var reported: Set<String> = []
    var warnings: [MixerWarning] = []
    func install(_ inserts: [InsertSettings], _ target: StripTarget, channels: Int, strip: String) {
      guard !inserts.isEmpty else { return }
      var rack: [InsertInstance] = []
      for (i, x) in inserts.enumerated() {
        let (instance, problem) = build(x, channels: channels, strip: strip, sessionPath: sessionPath)
        rack.append(instance)
        if let problem, reported.insert(x.uri + "\n" + problem).inserted {
          warnings.append(
            MixerWarning(
              file: sessionPath, "'\(strip)' insert \(i + 1): \(problem); kept as a placeholder (passes audio through, saved unchanged)"))
        }
      }
      if (try? sendRack(rack, target)) == nil { for x in rack { x.free() } }
    }
    install(session.masterInserts, .master, channels: 2, strip: "master")
    for bus in busTable.buses {
      let inserts = session.buses.first(where: { $0.name == bus.settings.name })?.strip.inserts ?? []
      install(inserts, .bus(bus.index), channels: 2, strip: bus.settings.name)
    }
    for input in liveInputs.inputs {
      let inserts = session.inputs.first(where: { $0.name == input.settings.name })?.strip.inserts ?? []
      install(inserts, .input(Int32(input.index)), channels: input.settings.channels == .mono ? 1 : 2, strip: input.settings.name)
    }
    let stems = Dictionary(session.stems.map { ($0.name, $0.strip.inserts) }, uniquingKeysWith: { a, _ in a })
    for stem in table.stems {
      install(stems[stem.settings.name] ?? [], .stem(slot: stem.slot), channels: stem.channels, strip: stem.settings.name)
    }
    return warnings
  }

  /// Instantiates every strip's inserts again in `other` (a copy at another sample rate), with
  /// their values and bypass; returns what became a placeholder there.
  func copyInserts(to other: Mixer) -> [MixerWarning] {
    var s = Session()
    s.stems = table.stems.map(\.settings)
    s.buses = busTable.buses.map(\.settings)
    s.inputs = liveInputs.inputs.map(\.settings)
    storeInserts(in: &s)
    return other.lock.locked { other.installInserts(of: s, sessionPath: nil) }
  }

  /// An instance of `x` with its state restored (relative paths in it: the folder of the session
  /// at `sessionPath`), or a placeholder with the reason.
  func build(_ x: InsertSettings, channels: Int, strip: String, sessionPath: String? = nil) -> (InsertInstance, String?) {
    let values = x.values.map { (symbol: $0.symbol, value: $0.value) }
    let maxBlockFrames = renderState.pointee.maxBlockFrames
    let placeholder = InsertInstance(
      placeholder: x.uri, bypass: x.bypass, values: values, state: x.state, maxBlockFrames: maxBlockFrames)
    guard let info = PluginHost.shared.plugins().first(where: { $0.uri == x.uri }) else {
      return (placeholder, "the LV2 plugin <\(x.uri)> is not installed")
    }
    do throws(MixerError) {
      try Self.checkFit(info, channels: channels, strip: strip)
      let instance = try InsertInstance(
        info, channels: channels, sampleRate: sampleRate, maxBlockFrames: maxBlockFrames, bypass: x.bypass, values: values,
        host: PluginHost.shared, worker: pluginWorker)
      if let state = x.state {
        do throws(MixerError) { try instance.restoreState(state, sessionPath: sessionPath) } catch {
          instance.free()
          throw error
        }
      }
      placeholder.free()
      return (instance, nil)
    } catch {
      return (placeholder, error.detail)
    }
  }
}
