import StemdeckEngine
import StemdeckSession
import StemdeckText

// Plugin inserts on the control side: each strip's list of LV2 effects (PluginInstance.swift),
// sent to the renderer as a whole chain (StemdeckEngine's Inserts.swift) whenever it changes;
// the replaced chain comes back through the event ring and is freed here with any instance no
// chain holds any more. docs/architecture.md, *Plugin inserts*.

/// A strip as the insert racks key it.
enum InsertKey: Hashable {
  case stem(Int32), bus(Int32), input(Int32), master

  init(_ target: StripTarget) {
    switch target {
    case .stem(let slot): self = .stem(slot)
    case .bus(let b): self = .bus(b)
    case .input(let i): self = .input(i)
    case .master: self = .master
    }
  }
}

/// Every strip's inserts and the chains the renderer holds.
struct InsertState {
  var racks: [InsertKey: [InsertInstance]] = [:]
  /// Chains sent and not yet handed back, by address, with the instances each holds.
  var chains: [Int: [InsertInstance]] = [:]
  /// Instances taken off their strip, freed once no chain holds them.
  var released: [InsertInstance] = []
  /// Each strip's compensation delay in the chain the renderer has (Mixer+InsertLatency.swift).
  var delays: [InsertKey: Int] = [:]
  /// The latency at the master's output, as last planned.
  var totalLatency = 0
  /// The plan may be out of date: a rack, a route, a bus, a send or the set of strips changed
  /// since it was made (Mixer+InsertLatency.swift); and how many plans were made (tests).
  var planStale = true
  var plansMade = 0
}

/// One insert as `insert list` shows it.
public struct InsertStatus: Sendable, Equatable {
  /// 1-based.
  public let position: Int
  public let uri: String
  /// The plugin's name, or nil for a placeholder (the plugin is not installed).
  public let name: String?
  public let bypass: Bool
  public let values: [String: Double]
  /// The latency the plugin last reported (`lv2:reportsLatency`), in frames; nil when it
  /// reports none. Other strips are delayed to meet it (Mixer+InsertLatency.swift).
  public var latency: Int? = nil
}

extension Mixer {
  /// The strip `name` for inserts: "master" (unless a strip is called that), a bus, an input or
  /// a stem; with its channel count (1 or 2).
  func insertStrip(_ name: String) throws(MixerError) -> (target: StripTarget, channels: Int) {
    guard let ref = try? strip(named: name) else {
      if name.lowercased() == "master" { return (.master, 2) }
      throw unknownStrip(name, alsoKnown: ["master"])  // the master takes inserts too
    }
    switch ref {
    case .stem(let stem): return (target(of: ref), stem.channels)
    case .bus: return (target(of: ref), 2)
    case .input(let input): return (target(of: ref), input.settings.channels == .mono ? 1 : 2)
    }
  }

  /// Refuses a plugin whose audio ports fit no strip of `channels`, or that needs what stemdeck
  /// does not provide, saying why.
  static func checkFit(_ info: PluginInfo, channels: Int, strip: String) throws(MixerError) {
    if let feature = info.missingFeature {
      throw MixerError("'\(info.name)' requires the LV2 feature <\(feature)>, which stemdeck does not provide")
    }
    if let port = info.unsupportedPort {
      throw MixerError(
        "'\(info.name)' has a port stemdeck cannot connect ('\(port)': CV and event ports, and atom ports other than sequences, are not supported)"
      )
    }
    let shape = (info.audioInputs, info.audioOutputs)
    if shape == (1, 1) || (shape == (2, 2) && channels == 2) { return }
    if shape == (2, 2) {
      throw MixerError("'\(info.name)' is a stereo plugin (2 in, 2 out) and '\(strip)' is a mono strip: choose a mono version")
    }
    throw MixerError(
      "'\(info.name)' has \(info.audioInputs) audio inputs and \(info.audioOutputs) outputs: an insert needs 1 in and 1 out (run twice on a stereo strip) or 2 in and 2 out"
    )
  }

  static func checkPosition(_ position: Int, in count: Int, _ name: String) throws(MixerError) -> Int {
    guard count > 0, (1...count).contains(position) else {
      throw MixerError(count == 0 ? "'\(name)' has no inserts" : "insert position must be 1 to \(count) on '\(name)' (got \(position))")
    }
    return position
  }

  func insertAt(_ name: String, _ position: Int) throws(MixerError) -> (target: StripTarget, instance: InsertInstance) {
    let target = try insertStrip(name).target
    let rack = insertRacks.racks[InsertKey(target)] ?? []
    let p = try Self.checkPosition(position, in: rack.count, name)
    return (target, rack[p - 1])
  }

  /// Sends `rack` as `target`'s chain and keeps it as the strip's inserts, then compensates
  /// the strips for the latency it may have changed. Under the lock.
  func sendRack(_ rack: [InsertInstance], _ target: StripTarget) throws(MixerError) {
    try sendChain(rack, target, delay: insertRacks.delays[InsertKey(target)] ?? 0)
    insertRacks.planStale = true
    compensateLatency()
  }

  /// Sends `rack` with a compensation delay of `delay` frames as `target`'s chain (none: nil).
  func sendChain(_ rack: [InsertInstance], _ target: StripTarget, delay: Int) throws(MixerError) {
    let chain = rack.isEmpty && delay <= 0 ? nil : InsertChain.make(rack.map { $0.stage() }, delayFrames: delay)
    do { try send(.setInserts(target, chain)) } catch {
      if let chain { InsertChain.free(chain) }
      throw error
    }
    if let chain { insertRacks.chains[Int(bitPattern: chain)] = rack }
    insertRacks.racks[InsertKey(target)] = rack.isEmpty ? nil : rack
  }

  /// Takes every insert and the compensation delay off a strip that is going away (its
  /// renderer index may be reused).
  func dropInserts(of target: StripTarget) {
    let key = InsertKey(target)
    guard insertRacks.racks[key] != nil || insertRacks.delays[key] != nil else { return }
    let rack = insertRacks.racks[key] ?? []
    if (try? sendChain([], target, delay: 0)) != nil {
      insertRacks.released += rack
      insertRacks.delays[key] = nil
      insertRacks.planStale = true
    }
  }

  /// A chain the renderer handed back: frees it and every released instance no chain holds.
  func insertChainRetired(address: Int) {
    guard let chain = UnsafeMutablePointer<InsertChain>(bitPattern: address) else { return }
    insertRacks.chains[address] = nil
    InsertChain.free(chain)
    let held = Set(insertRacks.chains.values.flatMap { $0.map(ObjectIdentifier.init) })
    let racked = Set(insertRacks.racks.values.flatMap { $0.map(ObjectIdentifier.init) })
    insertRacks.released.removeAll { x in
      let id = ObjectIdentifier(x)
      guard !held.contains(id), !racked.contains(id) else { return false }
      x.free()
      return true
    }
  }

  /// An insert put out NaN or infinity: it is bypassed (the renderer already did) and kept so.
  func insertFaulted(_ target: StripTarget, index: Int32) -> MixerEvent? {
    guard let rack = insertRacks.racks[InsertKey(target)], Int(index) < rack.count else { return nil }
    let instance = rack[Int(index)]
    instance.bypass = true
    try? sendRack(rack, target)
    isDirty = true
    let strip = stripName(of: target) ?? "?"
    return .insertFaulted(strip, Int(index) + 1, instance.info?.name ?? instance.uri)
  }

  func stripName(of target: StripTarget) -> String? {
    switch target {
    case .master: return "master"
    case .stem(let slot): return table.stems.first(where: { $0.slot == slot })?.settings.name
    case .bus(let b): return busTable.buses.first(where: { $0.index == b })?.settings.name
    case .input(let i): return liveInputs.inputs.first(where: { $0.index == Int(i) })?.settings.name
    }
  }

  /// Frees every instance (shutdown, after the renderer's state is destroyed).
  func freeAllInserts() {
    for rack in insertRacks.racks.values { for x in rack { x.free() } }
    for x in insertRacks.released { x.free() }
    for rack in insertRacks.chains.values { for x in rack { x.free() } }
    insertRacks = InsertState()
  }
}

extension Mixer.Inserts {
  /// The inserts of strip `name`, in order.
  public func list(of name: String) throws(MixerError) -> [InsertStatus] {
    try mixer.lock.locked { () throws(MixerError) -> [InsertStatus] in
      let key = InsertKey(try mixer.insertStrip(name).target)
      return (mixer.insertRacks.racks[key] ?? []).enumerated().map { i, x in
        InsertStatus(
          position: i + 1, uri: x.uri, name: x.info?.name, bypass: x.bypass,
          values: Dictionary(x.values.map { ($0.symbol, $0.value) }, uniquingKeysWith: { a, _ in a }), latency: x.latency)
      }
    }
  }

  /// The control ports of insert `position` (1-based) of strip `name`, with their values.
  public func controls(of name: String, position: Int) throws(MixerError) -> [(PluginControl, Double)] {
    try mixer.lock.locked { () throws(MixerError) -> [(PluginControl, Double)] in
      let x = try mixer.insertAt(name, position).instance
      guard let info = x.info else { throw MixerError("insert \(position) of '\(name)' is a placeholder: <\(x.uri)> is not installed") }
      return info.controls.map { c in (c, x.values.first(where: { $0.symbol == c.symbol })?.value ?? c.defaultValue) }
    }
  }

  /// Adds plugin `query` (a URI or an unambiguous name) to strip `name` at `position` (1-based;
  /// nil: last). Live, a plugin not declared realtime safe is refused unless `force`.
  @discardableResult
  public func add(
    _ name: String, plugin query: String, at position: Int? = nil, force: Bool = false
  ) throws(MixerError)
    -> InsertStatus
  {
    let info = try PluginHost.shared.find(query)
    // Tried in a child process first (once per plugin), before the mixer's lock is taken.
    try PluginProbe.check(info, sampleRate: mixer.sampleRate, maxBlockFrames: mixer.renderState.pointee.maxBlockFrames)
    return try mixer.lock.locked { () throws(MixerError) -> InsertStatus in
      let (target, channels) = try mixer.insertStrip(name)
      try Mixer.checkFit(info, channels: channels, strip: name)
      if mixer.streaming == .thread && !info.hardRTCapable && !force {
        throw MixerError(
          "'\(info.name)' does not declare lv2:hardRTCapable: its run() may allocate or lock on the audio thread and cause dropouts; add 'force' to insert it anyway"
        )
      }
      let key = InsertKey(target)
      var rack = mixer.insertRacks.racks[key] ?? []
      let at = try Mixer.checkPosition(position ?? rack.count + 1, in: rack.count + 1, name)
      let instance = try InsertInstance(
        info, channels: channels, sampleRate: mixer.sampleRate, maxBlockFrames: mixer.renderState.pointee.maxBlockFrames, bypass: false,
        values: [], host: PluginHost.shared, worker: mixer.pluginWorker)
      rack.insert(instance, at: at - 1)
      do throws(MixerError) { try mixer.sendRack(rack, target) } catch {
        instance.free()
        throw error
      }
      mixer.isDirty = true
      return InsertStatus(position: at, uri: info.uri, name: info.name, bypass: false, values: [:])
    }
  }

  /// Removes insert `position` of strip `name`.
  public func remove(_ name: String, position: Int) throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      let (target, instance) = try mixer.insertAt(name, position)
      var rack = mixer.insertRacks.racks[InsertKey(target)] ?? []
      rack.remove(at: position - 1)
      try mixer.sendRack(rack, target)
      mixer.insertRacks.released.append(instance)
      mixer.isDirty = true
    }
  }

  /// Moves insert `from` of strip `name` to position `to`.
  public func move(_ name: String, from: Int, to: Int) throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      let (target, instance) = try mixer.insertAt(name, from)
      var rack = mixer.insertRacks.racks[InsertKey(target)] ?? []
      _ = try Mixer.checkPosition(to, in: rack.count, name)
      rack.remove(at: from - 1)
      rack.insert(instance, at: to - 1)
      try mixer.sendRack(rack, target)
      mixer.isDirty = true
    }
  }

  /// Bypasses insert `position` of strip `name` (nil: toggles); returns the new state.
  @discardableResult
  public func bypass(_ name: String, position: Int, _ on: Bool? = nil) throws(MixerError) -> Bool {
    try mixer.lock.locked { () throws(MixerError) -> Bool in
      let (target, instance) = try mixer.insertAt(name, position)
      let new = on ?? !instance.bypass
      guard new != instance.bypass else { return new }
      instance.bypass = new
      do throws(MixerError) { try mixer.sendRack(mixer.insertRacks.racks[InsertKey(target)] ?? [], target) } catch {
        instance.bypass = !new
        throw error
      }
      mixer.isDirty = true
      return new
    }
  }

  /// Sets control `symbol` of insert `position` of strip `name`, checked against its range.
  public func setValue(_ name: String, position: Int, symbol: String, _ value: Double) throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      let instance = try mixer.insertAt(name, position).instance
      guard let info = instance.info else {
        throw MixerError("insert \(position) of '\(name)' is a placeholder (<\(instance.uri)> is not installed): its values cannot change")
      }
      guard let c = info.controls.first(where: { $0.symbol == symbol }), let port = instance.port(symbol) else {
        let known = info.controls.map(\.symbol).joined(separator: ", ")
        throw MixerError("'\(info.name)' has no control '\(symbol)' (its controls: \(known.isEmpty ? "none" : known))")
      }
      guard value.isFinite, value >= c.minimum, value <= c.maximum else {
        throw MixerError(
          "\(info.name) \(symbol) must be from \(NumberFormat.plain(c.minimum)) to \(NumberFormat.plain(c.maximum)) (got \(NumberFormat.plain(value)))"
        )
      }
      let stored = c.properties.contains("integer") || c.properties.contains("toggled") ? value.rounded() : value
      try mixer.send(.setInsertControl(port: port, value: Float(stored)))
      if let i = instance.values.firstIndex(where: { $0.symbol == symbol }) { instance.values[i].value = stored }
      mixer.isDirty = true
    }
  }
}
