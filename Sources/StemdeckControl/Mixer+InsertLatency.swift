import StemdeckEngine
import StemdeckSession
import StemdeckText

// Latency compensation between strips: each insert's reported latency (`lv2:reportsLatency`) is
// summed per strip, and every strip that meets others at a bus or at the master is delayed so
// that they all arrive there together (a delay line at the end of the strip's insert chain,
// sized here and sent with the chain: StemdeckEngine's Inserts.swift). The master's total is
// what stemdeck reports on its JACK ports. docs/architecture.md, *Plugin inserts*, *Latency*.

/// Where every strip's signal meets the others, in frames of latency.
struct LatencyPlan: Equatable {
  /// The compensation delay of each strip that needs one.
  var delays: [InsertKey: Int] = [:]
  /// The latency of the mix at the master's output: what arrives there plus the master's inserts.
  var total = 0
}

extension InsertKey {
  /// The renderer's name of the strip.
  var target: StripTarget {
    switch self {
    case .stem(let slot): .stem(slot: slot)
    case .bus(let b): .bus(b)
    case .input(let i): .input(i)
    case .master: .master
    }
  }
}

extension Mixer {
  /// The latency of a strip's own inserts: every one not bypassed, as it last reported it.
  func ownLatency(_ key: InsertKey) -> Int {
    (insertRacks.racks[key] ?? []).reduce(0) { sum, x in sum + (x.bypass ? 0 : x.latency ?? 0) }
  }

  /// The plan for the strips as they are routed now. Stems and live inputs feed a bus or the
  /// master; buses are taken in render order (every bus after those that feed it), so a bus's
  /// arrival (the latest of its feeders) is known when its own output is. A feeder's delay is
  /// its destination's arrival minus its own output latency. Under the lock.
  func latencyPlan() -> LatencyPlan {
    var arrivals: [Int32: Int] = [:]
    var master = 0
    var feeders: [(key: InsertKey, bus: Int32)] = []
    for stem in table.stems { feeders.append((.stem(stem.slot), busIndex(stem.settings.bus))) }
    for input in liveInputs.inputs { feeders.append((.input(Int32(input.index)), busIndex(input.settings.bus))) }
    func arrive(_ bus: Int32, _ frames: Int) {
      if bus >= 0 { arrivals[bus] = max(arrivals[bus] ?? 0, frames) } else { master = max(master, frames) }
    }
    for f in feeders { arrive(f.bus, ownLatency(f.key)) }
    let order = BusGraph(buses: busTable.buses.map(\.settings)).renderOrder(busTable.buses.map(\.settings.name))
    var buses: [(key: InsertKey, bus: Int32, out: Int)] = []
    for name in order {
      let index = busIndex(name)
      guard index >= 0, let bus = busTable.buses.first(where: { $0.index == index }) else { continue }
      let out = (arrivals[index] ?? 0) + ownLatency(.bus(index))
      let destination = busIndex(bus.settings.bus)
      buses.append((.bus(index), destination, out))
      arrive(destination, out)
    }
    func arrival(_ bus: Int32) -> Int { bus >= 0 ? arrivals[bus] ?? 0 : master }
    var plan = LatencyPlan()
    for f in feeders {
      let d = arrival(f.bus) - ownLatency(f.key)
      if d > 0 { plan.delays[f.key] = d }
    }
    for b in buses {
      let d = arrival(b.bus) - b.out
      if d > 0 { plan.delays[b.key] = d }
    }
    plan.total = master + ownLatency(.master)
    return plan
  }

  /// Makes the renderer's delays match the plan: a strip whose delay changes gets its chain
  /// again with the new delay line (which carries on what the old one held: Engine
  /// InsertDelay.swift). Under the lock; after any change of inserts, and at every `pump`,
  /// where it plans again only when something the plan reads changed: a rack, a route, a bus,
  /// a send or the set of strips (`planStale`, set by `send` for the commands that change them,
  /// `movesLatencyPlan`), or a plugin's reported latency (it may move with its controls).
  func compensateLatency() {
    guard insertRacks.planStale || reportedLatencyMoved() else { return }
    insertRacks.planStale = false
    insertRacks.plansMade &+= 1
    for rack in insertRacks.racks.values { for x in rack { x.plannedLatency = x.latency } }
    let plan = latencyPlan()
    insertRacks.totalLatency = plan.total
    // The click plays the mix's latency late (Engine Click.swift); again at the next pump when
    // the command ring is full.
    if (try? syncClick()) == nil { insertRacks.planStale = true }
    for key in Set(plan.delays.keys).union(insertRacks.delays.keys) {
      let want = plan.delays[key] ?? 0
      guard want != insertRacks.delays[key] ?? 0 else { continue }
      guard (try? sendChain(insertRacks.racks[key] ?? [], key.target, delay: want)) != nil else {
        insertRacks.planStale = true  // the command ring is full: again at the next pump
        continue
      }
      insertRacks.delays[key] = want == 0 ? nil : want
    }
  }

  /// True when a plugin reports another latency than the plan last read from it (an atomic
  /// load per insert; no allocation).
  func reportedLatencyMoved() -> Bool {
    for rack in insertRacks.racks.values { for x in rack where x.latency != x.plannedLatency { return true } }
    return false
  }

}

extension EngineCommand {
  /// True for the commands that change what the latency plan reads: the strips that feed the
  /// mix, their routes, the buses, the sends (`Mixer.send` marks the plan stale for these).
  var movesLatencyPlan: Bool {
    switch self {
    case .addVoice, .addPendingVoice, .changeSong, .completeSongChange, .removeVoice, .replaceVoice, .setBusPlan, .resetBus,
      .setStemBus, .addInput, .removeInput, .setInputBus, .addSend, .removeSend:
      true
    default: false
    }
  }
}

extension Mixer.Inserts {
  /// The latency of the mix at the master's output in frames (the latest path to the master,
  /// after compensation, plus the master's inserts): what stemdeck's JACK ports report.
  public var latency: Int { mixer.lock.locked { mixer.insertRacks.totalLatency } }

  /// The compensation delay strip `name` runs now, in frames (0: none).
  public func compensationDelay(of name: String) throws(MixerError) -> Int {
    try mixer.lock.locked { () throws(MixerError) -> Int in mixer.insertRacks.delays[InsertKey(try mixer.insertStrip(name).target)] ?? 0 }
  }
}
