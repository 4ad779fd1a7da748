import StemdeckEngine
import StemdeckSession
import StemdeckText

// Buses (subgroups) on the control side: the bus table, routes, solo along the graph, and the
// renderer's routing plan (StemdeckEngine Renderer/Buses.swift), built here and sent whole
// through the command ring. docs/architecture.md, *Buses*.

/// One bus as the control thread keeps it: its settings and its index in the renderer's bank.
struct Bus {
  var settings: BusSettings
  let index: Int32
  var sentAudible = true
  /// On the cue bus (Mixer+Cue.swift): a listening state, never saved.
  var cue = CueTap.off
}

/// The buses in console order and the renderer's free bus indices.
struct BusTable {
  var buses: [Bus] = []
  var freeIndices: [Int32] = (0..<Int32(BusBank.maxBuses)).reversed()
}

/// A bus as `stems`, `meters` and the views show it.
public struct BusStatus: Sendable {
  public var settings: BusSettings
  /// What feeds it: stems (offline ones too), live inputs and buses, in console order.
  public var members: [String]
  public var meter: MeterReading
  /// Whether mute and solo (along the graph) let it be heard.
  public var audible: Bool
  /// Where its running glides have got to (nil: that parameter is not gliding); the settings
  /// hold the targets.
  public var gliding = GlideReading()
  public var glidingVolume: Double? { gliding.volume }
  public var glidingPan: Double? { gliding.pan }
}

extension Mixer {
  // MARK: - Queries

  func busPosition(_ name: String) -> Int? { busTable.buses.firstIndex { $0.settings.name == name } }

  func membersLocked(of bus: String) -> [String] {
    savedOrder().filter { $0.settings.bus == bus }.map(\.settings.name)
      + liveInputs.inputs.filter { $0.settings.bus == bus }.map(\.settings.name)
      + busTable.buses.filter { $0.settings.bus == bus }.map(\.settings.name)
  }

  /// `alsoKnown`: other names the request takes (`insert`'s `master`), listed and suggested too.
  func unknownStrip(_ name: String, alsoKnown: [String] = []) -> MixerError {
    let known =
      table.stems.map(\.settings.name) + table.offline.map(\.settings.name) + liveInputs.inputs.map(\.settings.name)
      + busTable.buses.map(\.settings.name) + alsoKnown
    return MixerError.unknown(.strip(withInputs: !liveInputs.inputs.isEmpty), name, known: known)
  }

  func unknownBus(_ name: String) -> MixerError {
    MixerError.unknown(.bus, name, known: busTable.buses.map(\.settings.name))
  }

  // MARK: - Adding, removing, routing

  /// Sends a bus's starting state to the renderer and adds it to the table (no plan yet).
  func installBus(_ settings: BusSettings, index: Int32) throws(MixerError) {
    // Its send levels live in the send table (Mixer+Sends.swift), set after the buses.
    var settings = settings
    settings.sends = []
    try send(.resetBus(bus: index))
    try send(.setStripLevels(.bus(index), Self.allLevels(settings.strip, audible: !settings.mute)))
    try sendEQ(.bus(index), from: nil, to: settings.eq)
    renderState.pointee.buses.meters[Int(index)].requestReset()
    busTable.buses.append(Bus(settings: settings, index: index, sentAudible: !settings.mute))
  }

  func routeLocked(_ source: String, to destination: String?, publish: Bool) throws(MixerError) {
    if let target = destination {
      guard busPosition(target) != nil else { throw unknownBus(target) }
    }
    if let p = busPosition(source) {
      if let target = destination {
        if target == source { throw MixerError("cannot route bus '\(source)' to itself") }
        if let loop = BusGraph(buses: busTable.buses.map(\.settings)).loop(routing: source, to: target) {
          throw MixerError("cannot route '\(source)' to '\(target)': it would make a loop (\(loop)); nothing was changed")
        }
      }
      guard busTable.buses[p].settings.bus != destination else { return }
      busTable.buses[p].settings.bus = destination
      if publish { try publishBusPlan() }
      return
    }
    if let stem = table.stems.first(where: { $0.settings.name == source }) {
      guard stem.settings.bus != destination else { return }
      try send(.setStemBus(slot: stem.slot, bus: busIndex(destination)))
      stem.settings.bus = destination
      return
    }
    if let i = table.offline.firstIndex(where: { $0.settings.name == source }) {
      table.offline[i].settings.bus = destination
      return
    }
    if let input = liveInputs.find(source) {
      guard input.settings.bus != destination else { return }
      // Crossfades (10 ms) whatever the transport does (InputStrips.swift `setBus`).
      try send(.setInputBus(index: Int32(input.index), bus: busIndex(destination), crossfade: true))
      input.settings.bus = destination
      return
    }
    throw unknownStrip(source)
  }

  /// The renderer's index of bus `name` (−1: the master, or a bus that does not exist).
  func busIndex(_ name: String?) -> Int32 {
    guard let name, let p = busPosition(name) else { return -1 }
    return busTable.buses[p].index
  }

  /// Builds the routing plan from the table and sends it; the renderer hands the old one back.
  func publishBusPlan() throws(MixerError) {
    let graph = BusGraph(buses: busTable.buses.map(\.settings))
    let order = graph.renderOrder(busTable.buses.map(\.settings.name)).map { busIndex($0) }
    var destinations: [Int32: Int32] = [:]
    for bus in busTable.buses { destinations[bus.index] = bus.settings.bus.map { busIndex($0) } ?? BusPlan.master }
    let plan = BusPlan.make(order: order, destinations: destinations)
    do { try send(.setBusPlan(plan)) } catch {
      BusPlan.free(plan)
      throw error
    }
  }

  /// Replaces every bus with `list` (a session being loaded), then routes the stems by their
  /// settings. `list` has been checked (`Session.busProblem`).
  func installBuses(_ list: [BusSettings]) throws(MixerError) {
    for bus in busTable.buses { busTable.freeIndices.append(bus.index) }
    busTable.buses = []
    busTable.freeIndices.sort(by: >)
    for settings in list.prefix(BusBank.maxBuses) {
      guard let index = busTable.freeIndices.popLast() else { break }
      try installBus(settings, index: index)
    }
    try publishBusPlan()
    for stem in table.stems { try send(.setStemBus(slot: stem.slot, bus: busIndex(stem.settings.bus))) }
    for input in liveInputs.inputs {
      try send(.setInputBus(index: Int32(input.index), bus: busIndex(input.settings.bus), crossfade: true))
    }
    try pushAllGains()
  }

  // MARK: - A bus's settings

  /// (name, direct-out index) of every bus with direct outs: index `maxVoices + bus`, after the
  /// stems' slots in the renderer's direct-out table.
  func busDirectOutSlots() -> [(name: String, slot: Int)] {
    busTable.buses.filter(\.settings.directOut).map { ($0.settings.name, renderState.pointee.maxVoices + Int($0.index)) }
  }

  // MARK: - Solo along the graph

  /// Whether any stem or bus is soloed.
  var anyBusSolo: Bool { busTable.buses.contains { $0.settings.solo } }

  /// The buses from `bus` to the master (`bus` first).
  func busPath(_ bus: String?) -> [String] {
    guard let bus else { return [] }
    return BusGraph(buses: busTable.buses.map(\.settings)).path(from: bus)
  }

  /// Whether a stem or live input is heard: not muted, and with a solo anywhere, soloed itself,
  /// solo-safe, or feeding a soloed bus (directly or further down). A muted bus on its way
  /// silences it at the bus.
  func stripAudible(_ strip: StripSettings, anySolo solo: Bool) -> Bool {
    if strip.mute { return false }
    if !solo || strip.solo || strip.soloSafe { return true }
    let soloed = Set(busTable.buses.filter(\.settings.solo).map(\.settings.name))
    return busPath(strip.bus).contains { soloed.contains($0) }
  }

  /// Whether a bus is heard: not muted, and with a solo anywhere, soloed itself, solo-safe, on
  /// the way of a soloed bus (downstream), or fed by a soloed strip or a heard solo-safe one
  /// (upstream), so the path stays open; the other strips on it still follow solo.
  func busAudible(_ settings: BusSettings, anySolo solo: Bool) -> Bool {
    if settings.mute { return false }
    if !solo || settings.solo || settings.soloSafe { return true }
    let soloedBuses = busTable.buses.filter(\.settings.solo).map(\.settings.name)
    if busPath(settings.bus).contains(where: { soloedBuses.contains($0) }) { return true }
    let name = settings.name
    func opens(_ strip: StripSettings) -> Bool { strip.solo || (strip.soloSafe && !strip.mute) }
    for bus in busTable.buses where opens(bus.settings.strip) && busPath(bus.settings.name).dropFirst().contains(name) { return true }
    for stem in table.stems where opens(stem.settings.strip) && busPath(stem.settings.bus).contains(name) { return true }
    for input in liveInputs.inputs where opens(input.settings.strip) && busPath(input.settings.bus).contains(name) { return true }
    return false
  }

}

extension StripSettings {
  /// Whether a strip with these settings, added or removed, changes what solo lets the others be
  /// heard: it is soloed, or it is solo-safe, heard and on a bus (which it keeps open).
  var changesOthersUnderSolo: Bool { solo || (soloSafe && !mute && bus != nil) }
}

extension Mixer.Buses {
  /// The buses' names, in console order.
  public var names: [String] { mixer.lock.locked { mixer.busTable.buses.map(\.settings.name) } }

  /// The buses' settings, in console order (what a session saves).
  public var settings: [BusSettings] { mixer.lock.locked { mixer.busTable.buses.map(\.settings) } }

  /// Whether `name` names a bus.
  public func contains(_ name: String) -> Bool { mixer.lock.locked { mixer.busPosition(name) != nil } }

  /// Every bus with what feeds it and its meter.
  public func statuses() -> [BusStatus] {
    mixer.lock.locked {
      let solo = mixer.anySolo()
      return mixer.busTable.buses.indices.map { p in
        let bus = mixer.busTable.buses[p]
        return BusStatus(
          settings: bus.settings, members: mixer.membersLocked(of: bus.settings.name),
          meter: MeterReading(cells: mixer.renderState.pointee.buses.meters + Int(bus.index), channels: 2),
          audible: mixer.busAudible(bus.settings, anySolo: solo), gliding: mixer.glideProgress(of: .bus(p)))
      }
    }
  }

  /// The stems (offline ones too), live inputs and buses routed to `bus`, in console order.
  public func members(of bus: String) -> [String] { mixer.lock.locked { mixer.membersLocked(of: bus) } }

  /// Every stem (offline ones too, in console order), live input and bus with where it goes
  /// (nil: the master).
  public func routing() -> [(name: String, bus: String?, isBus: Bool, directOut: Bool)] {
    mixer.lock.locked {
      mixer.savedOrder().map { ($0.settings.name, $0.settings.bus, false, $0.settings.directOut) }
        + mixer.liveInputs.inputs.map { ($0.settings.name, $0.settings.bus, false, $0.settings.directOut) }
        + mixer.busTable.buses.map { ($0.settings.name, $0.settings.bus, true, $0.settings.directOut) }
    }
  }

  /// Where a stem or bus goes: a bus's name, or nil for the master.
  public func destination(of name: String) throws(MixerError) -> String? {
    try mixer.lock.locked { () throws(MixerError) -> String? in
      if let p = mixer.busPosition(name) { return mixer.busTable.buses[p].settings.bus }
      if let stem = mixer.table.stems.first(where: { $0.settings.name == name }) { return stem.settings.bus }
      if let stem = mixer.table.offline.first(where: { $0.settings.name == name }) { return stem.settings.bus }
      if let input = mixer.liveInputs.find(name) { return input.settings.bus }
      throw mixer.unknownStrip(name)
    }
  }

  /// Adds a bus (it feeds `settings.bus`, or the master). Refused: a bad or taken name (stems and
  /// buses share names), more than `BusBank.maxBuses`, an unknown destination.
  public func add(_ settings: BusSettings) throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      let name = settings.name
      if let problem = NameRules.busProblem(name) { throw MixerError(ControlText(problem)) }
      if mixer.busPosition(name) != nil { throw MixerError("a bus named '\(name)' already exists") }
      if mixer.table.stems.contains(where: { $0.settings.name == name })
        || mixer.table.offline.contains(where: { $0.settings.name == name })
      {
        throw MixerError("a stem named '\(name)' already exists; stems and buses need different names")
      }
      if mixer.liveInputs.find(name) != nil {
        throw MixerError("a live input named '\(name)' already exists; inputs and buses need different names")
      }
      try mixer.checkNotASend(name, kind: "bus")
      if settings.directOut { try mixer.checkPorts(PortOwner("bus", name, ports: PortOwner.directOutPorts(name))) }
      if let p = settings.strip.ruleProblem(of: .bus) { throw MixerError("\(p.key) \(p.message)") }
      try Mixer.checkEQ(settings.eq, of: "'\(name)'")
      if let target = settings.bus {
        guard mixer.busPosition(target) != nil else { throw mixer.unknownBus(target) }
      }
      guard let index = mixer.busTable.freeIndices.last else {
        throw MixerError(reason: .limit(what: .buses, max: BusBank.maxBuses, adding: name))
      }
      try mixer.installBus(settings, index: index)
      mixer.busTable.freeIndices.removeLast()
      try mixer.publishBusPlan()
      try mixer.pushAllGains()
      mixer.isDirty = true
    }
  }

  /// Removes a bus. What fed it (stems and buses) is routed to where the bus went (its
  /// destination, or the master); returns their names, so the caller can say so.
  @discardableResult
  public func remove(_ name: String) throws(MixerError) -> (members: [String], destination: String?) {
    try mixer.lock.locked { () throws(MixerError) -> (members: [String], destination: String?) in
      guard let p = mixer.busPosition(name) else { throw mixer.unknownBus(name) }
      let bus = mixer.busTable.buses[p]
      let target = bus.settings.bus
      let members = mixer.membersLocked(of: name)
      for member in members { try mixer.routeLocked(member, to: target, publish: false) }
      mixer.clearSends(ofStrip: name, address: .bus(bus.index))
      mixer.dropInserts(of: .bus(bus.index))
      mixer.busTable.buses.remove(at: p)
      try mixer.publishBusPlan()
      // The index is free again: a bus added later resets it, after this plan (commands keep order).
      mixer.busTable.freeIndices.append(bus.index)
      try mixer.pushAllGains()
      mixer.isDirty = true
      return (members, target)
    }
  }

  /// Routes a stem (or an offline stem, a live input, or a bus) to bus `destination`, or to the
  /// master (nil).
  /// A route that would close a loop of buses is refused, naming the loop.
  public func route(_ source: String, to destination: String?) throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      try mixer.routeLocked(source, to: destination, publish: true)
      try mixer.pushAllGains()
      mixer.isDirty = true
    }
  }

  /// One bus's settings.
  public func setting(_ name: String) throws(MixerError) -> BusSettings {
    try mixer.lock.locked { () throws(MixerError) -> BusSettings in
      guard let p = mixer.busPosition(name) else { throw mixer.unknownBus(name) }
      return mixer.busTable.buses[p].settings
    }
  }
}

extension Mixer.Strips {
  /// The strips soloed now (stems, buses, inputs): while there is one, a solo is active and the
  /// strips neither soloed, nor solo-safe, nor on a soloed bus's way are silent. What `status`,
  /// the view and the socket's JSON show.
  public var soloed: [String] {
    mixer.lock.locked { mixer.allStrips.filter { mixer.mix(of: $0).solo }.map { mixer.name(of: $0) } }
  }

  /// Whether a solo is active (`strips.soloed` is not empty), without listing them: what the
  /// pushes check at every service step.
  public var soloActive: Bool { mixer.lock.locked { mixer.anySolo() } }
}

// The buses' part of the session file (Mixer+Session.swift calls these under the lock).
extension Mixer.Buses {
  /// Writes the buses in console order, each with its send levels.
  func save(into s: inout Session) {
    s.buses = mixer.busTable.buses.map(\.settings)
    for i in s.buses.indices { s.buses[i].sends = mixer.stemSends(s.buses[i].name) }
  }
}
