import CJack
import Foundation
import StemdeckEngine
import StemdeckSession
import StemdeckText

// The patchbay side of the driver: our ports' intended connections, healing them, and folding
// in what other patchbays change. See docs/live-jack.md (routing) and docs/architecture.md.
extension JackDriver {
  func requireClient() throws(JackError) -> JackClient {
    guard let client else { throw JackError.notConnected(server: serverName) }
    return client
  }

  /// Expands a short name of our own port ("master_L") to its full name.
  func fullName(_ name: String) -> String {
    name.contains(":") ? name : "\(clientName):\(name)"
  }

  public func ports(matching pattern: String? = nil) throws(JackError) -> [PortInfo] {
    try lock.locked { () throws(JackError) -> [PortInfo] in try requireClient().ports(matching: pattern) }
  }

  public func connect(_ a: String, _ b: String) throws(JackError) { try change(a, b, connected: true) }

  public func disconnect(_ a: String, _ b: String) throws(JackError) { try change(a, b, connected: false) }

  /// Makes or removes the connection between `a` and `b` (short names of our ports allowed), and
  /// records it in the intended routing.
  func change(_ a: String, _ b: String, connected: Bool) throws(JackError) {
    try lock.locked { () throws(JackError) in
      let client = try requireClient()
      let (fa, fb) = (fullName(a), fullName(b))
      if connected { try client.connect(fa, fb) } else { try client.disconnect(fa, fb) }
      remember(fa, fb, connected: connected)
    }
  }

  /// Records a connection change of one of our ports in `intended`.
  func remember(_ a: String, _ b: String, connected: Bool) {
    let prefix = "\(clientName):"
    for (mine, peer) in [(a, b), (b, a)] where mine.hasPrefix(prefix) {
      let short = String(mine.dropFirst(prefix.count))
      if connected { intended[short, default: []].insert(peer) } else { intended[short]?.remove(peer) }
      // A removed connection stays in `lastSeen` until the graph no longer shows it: right after
      // jack_disconnect the client's copy of the graph can still list it for a moment, and a peer
      // missing from `lastSeen` but present in the graph reads as another patchbay's new
      // connection (adopted, then healed back: a `disconnect` undone under load).
      if connected { lastSeen[short, default: []].insert(peer) }
    }
  }

  /// Our ports' connections: intended versus actual (`routes`). `isInput`: our port receives
  /// (`in_L`, `in_R`), so the signal flows from the peer to it.
  public func routes() -> [(port: String, peer: String, connected: Bool, isInput: Bool)] {
    lock.locked {
      var out: [(String, String, Bool, Bool)] = []
      for port in ourPortShortNames() {
        let actual = Set(client?.connections(of: fullName(port)) ?? [])
        let input = client?.isInput(fullName(port)) ?? ["in_L", "in_R"].contains(port)
        for peer in (intended[port] ?? []).union(actual).sorted() {
          out.append((port, peer, actual.contains(peer), input))
        }
      }
      return out
    }
  }

  func ourPortShortNames() -> [String] {
    var names = ["master_L", "master_R", "in_L", "in_R"]
    if effectPorts != nil { names += ["sfx_L", "sfx_R"] }
    if clickPorts != nil { names += ["click_L", "click_R"] }
    if cuePorts != nil { names += ["cue_L", "cue_R"] }
    if midiPort != nil { names.append("midi_in") }
    if midiOutPort != nil { names.append("midi_out") }
    for kind in Self.portSetKinds { names += portSetNames(kind) }
    for (name, _) in directPorts.sorted(by: { $0.key < $1.key }) { names += ["\(name)_L", "\(name)_R"] }
    for key in intended.keys.sorted() where !names.contains(key) { names.append(key) }
    return names
  }

  /// The intended connections, for saving in a session.
  public var intendedConnections: [String: [String]] {
    lock.locked { intended.filter { !$0.value.isEmpty }.mapValues { $0.sorted() } }
  }

  /// Replaces the intended connections (opening a session) and makes those whose peers exist.
  /// Returns connections whose peer port does not exist yet (kept, and made when it appears).
  ///
  /// Connections the new session also wants are left in place (a setlist song change must not
  /// drop the master for a moment). Direct outs of stems the new session does not have are left
  /// connected too: they only carry an old song fading out, and go away with their ports.
  @discardableResult
  public func setIntendedConnections(_ connections: [String: [String]]) -> [String] {
    lock.locked {
      refreshPlan()
      let current = plan.currentStems
      let leavingPorts = Set(directPorts.keys.filter { !current.contains($0) }.flatMap { ["\($0)_L", "\($0)_R"] })
        .filter { connections[$0] == nil }
      if let client {
        for port in ourPortShortNames() where !leavingPorts.contains(port) {
          let keep = Set(connections[port] ?? [])
          for peer in client.connections(of: fullName(port)) where !keep.contains(peer) {
            try? client.disconnect(fullName(port), peer)
          }
        }
      }
      intended = connections.mapValues { Set($0) }
      lastSeen = [:]
      // The session's live inputs get their ports now, so their connections are made below.
      for kind in Self.portSetKinds where client != nil && portSetsOutOfStep(kind) { syncPortSets(kind) }
      // The leaving ports' connections are the old song's: seen already, so that they are not
      // adopted into the new song's routing (and saved with it).
      if let client {
        for port in leavingPorts { lastSeen[port] = Set(client.connections(of: fullName(port))) }
      }
      return healRouting()
    }
  }

  /// Makes intended connections whose peers exist; returns those still missing. Changes made
  /// by other patchbays are folded in first, so a deliberate disconnection is not undone.
  @discardableResult
  func healRouting() -> [String] {
    guard let client else { return [] }
    refreshSeen()
    var missing: [String] = []
    for (port, peers) in intended {
      let mine = fullName(port)
      guard client.portExists(mine) else { continue }
      let actual = Set(client.connections(of: mine))
      let arrow = client.isInput(mine) == true ? "←" : "→"
      // A connection just seen vanishing is left alone until it is known whether a user removed it.
      for peer in peers where !actual.contains(peer) && vanishedSince["\(port)\u{0}\(peer)"] == nil {
        if client.portExists(peer) {
          if (try? client.connect(mine, peer)) == nil { missing.append("\(port) \(arrow) \(peer)") }
        } else {
          missing.append("\(port) \(arrow) \(peer)")
        }
      }
    }
    refreshSeen()
    return missing.sorted()
  }

  /// Folds connection changes made by other patchbays into `intended`: a new connection is
  /// adopted; a vanished one is dropped only if its peer still exists (the user disconnected
  /// it). If the peer went away, the connection stays intended and heals when it returns.
  ///
  /// A vanished connection is only forgotten once it has stayed gone for a quarter second while
  /// the server kept running stemdeck's process callback: a server that was killed answers "no
  /// connections" for a while before stemdeck hears that it died (its periods stop at once), and
  /// that must not erase the routing to restore.
  func refreshSeen() {
    guard let client else { return }
    let now = Date()
    let unregistered = context?.pointee.portsUnregistered.load(ordering: .acquiring) ?? 0
    for port in ourPortShortNames() {
      let mine = fullName(port)
      guard client.portExists(mine) else { continue }
      let actual = Set(client.connections(of: mine))
      let before = lastSeen[port] ?? []
      for peer in actual.subtracting(before) { intended[port, default: []].insert(peer) }
      for peer in actual { vanishedSince["\(port)\u{0}\(peer)"] = nil }
      for peer in before.subtracting(actual) where client.portExists(peer) {
        vanishedSince["\(port)\u{0}\(peer)"] = vanishedSince["\(port)\u{0}\(peer)"] ?? (now, periods, unregisteredAtLastSeen)
      }
      lastSeen[port] = actual
    }
    // A vanished connection is compared with the count when it was last seen present, so a peer
    // gone and back between two looks is caught too.
    unregisteredAtLastSeen = unregistered
    let serverAlive = !(context?.pointee.serverGone.load(ordering: .acquiring) ?? true)
    for (key, since) in vanishedSince
    where serverAlive && now.timeIntervalSince(since.time) >= 0.25 && periods > since.periods + 8 {
      let parts = key.split(separator: "\u{0}", maxSplits: 1).map(String.init)
      // Forgotten only if the peer is still there and no port went away meanwhile: JACK
      // disconnects a port just before it unregisters it (a net slave losing its master does
      // that to system:playback_N), so a connection first seen vanishing with its peer present
      // may turn out to have gone with its peer, and must then heal when the peer comes back,
      // even when a port of that name is back within the quarter second (a NetJack2 link that
      // came back at once lost master_L's connection that way, 2026-12-03). JACK may give the
      // new port the old one's id and UUID, so the names and ids cannot tell; any port
      // unregistered meanwhile keeps the connection (a user's disconnect at the very moment
      // another client closes is made again: one more disconnect, not a silent show).
      if parts.count == 2, client.portExists(parts[1]), since.unregistered == unregistered,
        !(Set(client.connections(of: fullName(parts[0]))).contains(parts[1]))
      {
        intended[parts[0]]?.remove(parts[1])
      }
      vanishedSince[key] = nil
    }
  }

  func masterConnectionCount() -> Int {
    guard let client else { return 0 }
    return client.connections(of: fullName("master_L")).count + client.connections(of: fullName("master_R")).count
  }

  /// Frames between a sound leaving the master ports and the same moment arriving back at the
  /// inputs through the outside world: the playback latency of the master ports plus the capture
  /// latency of the inputs (JACK's port latency API; the larger of left and right each, since a
  /// player may hear either side and a mono source may feed either input). Subtracted from a
  /// take's position so overdubs line up.
  public var roundTripLatencyFrames: Int {
    lock.locked {
      guard let client, let master = masterPorts, let input = inputPorts else { return 0 }
      let playback = max(client.latency(of: master.0, capture: false), client.latency(of: master.1, capture: false))
      let capture = max(client.latency(of: input.0, capture: true), client.latency(of: input.1, capture: true))
      return playback + capture
    }
  }
}
