import Foundation

// Port sets by index: the ports of one of the mixer's numbered objects (a live input's one or
// two, an aux send's four), registered on the control thread and published to the process
// callback through the process context's atomic slots. Live inputs (JackDriver+Inputs.swift)
// and aux sends (JackDriver+Sends.swift) share this one syncer. docs/architecture.md, *Live
// inputs* and *Aux sends*.

/// The ports registered for one index: their short names and the ports, in slot order.
struct RegisteredPorts: Equatable {
  var names: [String]
  var ports: [OpaquePointer]
}

/// How one kind of port set is registered and published.
struct PortSetKind: Sendable {
  /// What the sets are, for the refusals' bookkeeping ("input", "send", "direct out").
  let name: String
  /// Slots the process context keeps for each index (a live input 2, a send 4); slot `k` of
  /// index `i` is `slotsPerIndex × i + k`.
  let slotsPerIndex: Int
  /// Stores the port (nil: clears the slot) in slot `slot` of the process context.
  let publish: @Sendable (UnsafeMutablePointer<ProcessContext>, _ slot: Int, OpaquePointer?) -> Void
  /// Whether port `k` of a set named `names` is an output, and its pretty name.
  let describe: @Sendable (_ k: Int, _ names: [String]) -> (isOutput: Bool, prettyName: String)
  /// The sets the host wants, names by index, in its port plan.
  let planned: KeyPath<PortPlan, [Int: [String]]> & Sendable
  /// The driver's record of the sets registered.
  let registered: ReferenceWritableKeyPath<JackDriver, [Int: RegisteredPorts]> & Sendable
  /// How many slots the process context keeps for every set of the kind.
  let slotCount: @Sendable (UnsafeMutablePointer<ProcessContext>) -> Int
}

extension JackDriver {
  /// Every kind of port set, in the order they are synced.
  static let portSetKinds = [liveInputPortSet, sendPortSet]

  /// Forgets every port but the master's, here and in the process context's port sets: a new
  /// client registers them anew (`attach`), or the server went away with them (`poll`).
  func forgetPorts() {
    directPorts = [:]
    effectPorts = nil
    clickPorts = nil
    cuePorts = nil
    midiPort = nil
    midiOutPort = nil
    for kind in Self.portSetKinds { forgetPortSets(kind) }
  }

  /// Waits (at most 0.2 s) until the process callback has begun two more periods, so that it no
  /// longer uses a port cleared from the process context before that: then the port may be
  /// unregistered.
  func waitForTheProcessCallbackToLetGo() {
    let p = periods
    let deadline = Date().addingTimeInterval(0.2)
    while periods < p + 2 && Date() < deadline { usleep(1000) }
  }

  /// Makes the registered sets of `kind` match the host's (`wantedPortSets`): the sets that
  /// changed or went are cleared from the process context, and unregistered once the process
  /// callback let go of them (their connections forgotten, so one added again is connected
  /// anew); the new ones are registered and published. A set JACK refuses a port of (a name
  /// refused or already taken) is not registered at all, told once, and not tried again while it
  /// stays wanted, until stemdeck lets go of a port (`refuse`): it was tried at every poll, and
  /// jackd logged each refusal, some 280 lines a second.
  func syncPortSets(_ kind: PortSetKind) {
    guard let client, let context else { return }
    let wanted = wantedPortSets(kind), registered = kind.registered
    var released: [OpaquePointer] = []
    let stillWanted = Set(wanted.values.flatMap { $0 })
    for (index, entry) in self[keyPath: registered] where wanted[index] != entry.names {
      for k in 0..<kind.slotsPerIndex { kind.publish(context, kind.slotsPerIndex * index + k, nil) }
      released += entry.ports
      self[keyPath: registered][index] = nil
      for name in entry.names where !stillWanted.contains(name) {
        lastSeen[name] = nil
        intended[name] = nil
      }
    }
    if !released.isEmpty {
      waitForTheProcessCallbackToLetGo()
      for port in released { client.unregister(port) }
      portsReleased()
    }
    for (index, names) in wanted.sorted(by: { $0.key < $1.key })
    where self[keyPath: registered][index] == nil && (1...kind.slotsPerIndex).contains(names.count) {
      var ports: [OpaquePointer] = []
      for (k, name) in names.enumerated() {
        let port = kind.describe(k, names)
        do { ports.append(try client.registerAudioPort(name, isOutput: port.isOutput, prettyName: port.prettyName)) } catch {
          refuse(names, kind: kind.name, error)
          break
        }
      }
      guard ports.count == names.count else {
        for port in ports { client.unregister(port) }
        continue
      }
      self[keyPath: registered][index] = RegisteredPorts(names: names, ports: ports)
      for k in 0..<kind.slotsPerIndex { kind.publish(context, kind.slotsPerIndex * index + k, k < ports.count ? ports[k] : nil) }
    }
  }

  // MARK: - Refused sets

  /// `wanted` without the sets JACK refused (`refusedPorts`); the refusals of `kind`'s sets that
  /// are no longer wanted are forgotten (one wanted again is tried again).
  func unrefused<Key: Hashable>(_ wanted: [Key: [String]], kind: String) -> [Key: [String]] {
    let sets = Set(wanted.values)
    refusedPorts[kind] = refusedPorts[kind]?.filter { sets.contains($0.key) }
    toldRefusals[kind] = toldRefusals[kind]?.filter { sets.contains($0) }
    guard let refused = refusedPorts[kind], !refused.isEmpty else { return wanted }
    return wanted.filter { refused[$0.value] == nil }
  }

  /// Notes that JACK refused a port of `names` (a set of `kind`): not tried again while wanted
  /// (until `portsReleased`), told once in `poll`'s events. A server that did not answer refused
  /// nothing: the set is tried again once it answers.
  func refuse(_ names: [String], kind: String, _ error: JackError) {
    guard !error.serverNotAnswering else { return }
    refusedPorts[kind, default: [:]][names] = error.description
    if toldRefusals[kind, default: []].insert(names).inserted {
      pendingEvents.append(.portsRefused(ports: names, reason: error.description))
    }
  }

  /// After stemdeck unregistered ports: a name it held may be free now, so every refused set is
  /// tried once more (a setlist crossfade's old stem had the direct outs a new song's send wants);
  /// a refusal again is not told again.
  func portsReleased() {
    refusedPorts = [:]
  }

  // MARK: - Every kind alike

  /// The host's sets of `kind` but those JACK refused.
  func wantedPortSets(_ kind: PortSetKind) -> [Int: [String]] {
    unrefused(plan[keyPath: kind.planned], kind: kind.name)
  }

  /// Whether the registered sets of `kind` differ from the host's.
  func portSetsOutOfStep(_ kind: PortSetKind) -> Bool {
    let wanted = wantedPortSets(kind), registered = self[keyPath: kind.registered]
    return wanted.count != registered.count || wanted.contains { registered[$0.key]?.names != $0.value }
  }

  /// Registers or removes the ports of `kind` now (after `input add`, `send remove`…), rather
  /// than at the next `poll`.
  func updatePortSets(_ kind: PortSetKind) {
    lock.locked {
      refreshPlan()
      if portSetsOutOfStep(kind) { syncPortSets(kind) }
    }
  }

  /// The registered port short names of `kind`, by index.
  func portSetNames(_ kind: PortSetKind) -> [String] {
    self[keyPath: kind.registered].sorted { $0.key < $1.key }.flatMap(\.value.names)
  }

  /// Forgets the registered sets of `kind` (a new client, or the server went away) and clears
  /// every slot of theirs in the process context.
  func forgetPortSets(_ kind: PortSetKind) {
    self[keyPath: kind.registered] = [:]
    guard let context else { return }
    for i in 0..<kind.slotCount(context) { kind.publish(context, i, nil) }
  }
}
