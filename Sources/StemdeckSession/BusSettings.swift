// Buses (subgroups, session format version 3): the optional top-level `"buses"` list and a stem's
// `"bus"`. Written only when used, so a session without buses is written as before.
//
//   "buses" : [
//     { "name" : "drums_bus", "volume" : 0.8, "pan" : 0, "mute" : false, "solo" : false },
//     { "name" : "band", "volume" : 1, "pan" : 0, "mute" : false, "solo" : false, "bus" : "..." }
//   ]                         <- "directOut", "eq" and "bus" (the bus it feeds) only when used
//   "stems" : [ { "name" : "kick", …, "bus" : "drums_bus" } ]   <- absent: the stem feeds the master
//
// A bus's name follows the stem name rules and shares their namespace: no stem and no other bus
// may have it, and `all`/`master` are refused. Buses may feed buses; a loop is refused.

/// One bus: a strip that sums the stems (and buses) routed to it, with its own EQ, volume,
/// balance, mute and solo, and feeds the master or another bus.
public struct BusSettings: Equatable, Sendable {
  /// The most buses a session may hold (the renderer preallocates this many).
  public static let maximumBuses = 64
  /// The fields of a `"buses"` element.
  public static let fields = ["name"] + StripParameter.sessionKeys(of: .bus) + ["directOut", "eq", "bus", "sends", "inserts"]

  /// The bus's name: the stem name rules, unique among stems and buses.
  public var name: String
  /// The strip: volume, balance (a bus is stereo), mute, solo, direct outs (its own JACK ports
  /// `<name>_L`, `<name>_R` instead of its destination), EQ, the bus it feeds (nil: the master)
  /// and its sends; also read and written as `volume`, `pan`, … (StripSettings.swift).
  public var strip = StripSettings()

  /// A bus at unity, centred, feeding the master.
  public init(name: String) {
    self.name = name
  }
}

/// The routing graph of stems and buses: who feeds whom, the loops, the render order.
/// Pure values; the mixer builds the renderer's plan from it, the session checks files with it.
public struct BusGraph: Sendable {
  /// Each bus's destination (nil: the master), by bus name.
  public var destinations: [String: String?]

  public init(buses: [BusSettings]) {
    var d: [String: String?] = [:]
    for bus in buses { d[bus.name] = .some(bus.bus) }
    destinations = d
  }

  /// The chain of buses from `bus` to the master: `bus` first. Stops at a loop (the first bus
  /// met twice ends the chain) or an unknown name.
  public func path(from bus: String) -> [String] {
    var chain: [String] = []
    var next: String? = bus
    while let name = next, destinations[name] != nil, !chain.contains(name) {
      chain.append(name)
      next = destinations[name] ?? nil
    }
    return chain
  }

  /// The loop that routing `source` (a bus) to `destination` would close, written as
  /// `a → b → a`, or nil when it makes none.
  public func loop(routing source: String, to destination: String?) -> String? {
    var graph = self
    graph.destinations[source] = .some(destination)
    return graph.loop(from: source)
  }

  /// The loop met when following the routes from `bus`, as `a → b → a`, or nil.
  public func loop(from bus: String) -> String? {
    var chain: [String] = []
    var next: String? = bus
    while let name = next, destinations[name] != nil {
      if let at = chain.firstIndex(of: name) {
        return (chain[at...] + [name]).joined(separator: " → ")
      }
      chain.append(name)
      next = destinations[name] ?? nil
    }
    return nil
  }

  /// How many buses lie between `bus` and the master (0: it feeds the master). Loops count as 0.
  public func depth(of bus: String) -> Int { max(0, path(from: bus).count - 1) }

  /// The buses in an order the renderer can sum them in: every bus after all the buses that
  /// feed it (deepest first); ties in `order`'s order.
  public func renderOrder(_ order: [String]) -> [String] {
    let depths = Dictionary(uniqueKeysWithValues: order.map { ($0, depth(of: $0)) })
    return order.enumerated().sorted { a, b in
      let da = depths[a.element]!, db = depths[b.element]!
      return da != db ? da > db : a.offset < b.offset
    }.map(\.element)
  }
}

extension NameRules {
  /// Why `name` is not a valid bus name, or nil (the stem rules, worded for a bus).
  public static func busProblem(_ name: String) -> String? {
    SessionRules.nameProblem(name, of: .bus)
  }
}

extension Session {
  /// The first problem of the buses and routes, with its location, or nil: bus names (the stem
  /// rules, unique, no stem of that name), ranges, EQ, routes to known buses, no loop, at most
  /// `BusSettings.maximumBuses`.
  public func busProblem() -> (location: String, message: String)? {
    if buses.count > BusSettings.maximumBuses {
      return ("buses", "has \(buses.count) buses; at most \(BusSettings.maximumBuses)")
    }
    let stemIndex = Dictionary(stems.enumerated().map { ($0.element.name, $0.offset) }, uniquingKeysWith: { a, _ in a })
    var busNames = SessionRules.NameList(of: .bus)
    func check(_ value: Double, _ rule: SettingRule, _ location: String) -> (String, String)? {
      rule.accepts(value) ? nil : (location, rule.rule + " (got \(SessionRules.number(value)))")
    }
    for (index, bus) in buses.enumerated() {
      let base = "buses[\(index)]"
      if let problem = busNames.problem(bus.name, at: index) { return (base + ".name", problem) }
      if let stem = stemIndex[bus.name] {
        return (base + ".name", "bus name '\(bus.name)' is also the name of stems[\(stem)]; stems and buses need different names")
      }
      if let p = bus.strip.ruleProblem(of: .bus) { return (base + "." + p.key, p.message) }
      if let problem = bus.eq.problem() { return (base + ".eq." + problem.field, problem.message) }
    }
    let busIndex = busNames.firstIndexByName
    let known = buses.map(\.name)
    func unknown(_ target: String) -> String {
      let list = known.isEmpty ? "there are no buses" : "the buses are " + known.map { "'\($0)'" }.joined(separator: ", ")
      return "names no bus (got \(SessionRules.quote(target)); \(list), or leave it out for the master)"
    }
    for (index, bus) in buses.enumerated() {
      guard let target = bus.bus else { continue }
      if busIndex[target] == nil { return ("buses[\(index)].bus", unknown(target)) }
    }
    let graph = BusGraph(buses: buses)
    for (index, bus) in buses.enumerated() where bus.bus != nil {
      if let loop = graph.loop(from: bus.name) {
        return ("buses[\(index)].bus", "makes a loop (\(loop)); a bus cannot feed itself, directly or through other buses")
      }
    }
    for (index, stem) in stems.enumerated() {
      guard let target = stem.bus else { continue }
      if busIndex[target] == nil { return ("stems[\(index)].bus", unknown(target)) }
    }
    return nil
  }
}
