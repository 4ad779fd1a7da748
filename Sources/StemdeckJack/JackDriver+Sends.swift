import CJack
import Foundation
import StemdeckEngine

// Aux send ports (issue 22, item 2): `stemdeck:NAME_send_L/R` (outputs) and `NAME_return_L/R`
// (inputs) for each of the mixer's sends, registered here on the control thread and published
// to the process callback as atomics (`ProcessContext.sendPorts`), which hands their buffers to
// the renderer (`RenderState.sends`) every period. The live inputs' pattern
// (JackDriver+Inputs.swift). docs/architecture.md, *Aux sends*.

/// A send's registered ports: the short names and the ports (send L/R, return L/R).
struct SendPorts {
  var names: [String]
  var ports: [OpaquePointer]
}

extension JackDriver {
  /// Registers the ports of new sends and removes those of sends gone (cleared in the process
  /// context first, unregistered two periods later). A port JACK refuses is tried again at each poll.
  func syncSends() {
    guard let client, let context else { return }
    let wanted = mixer.sendPorts()
    var released: [OpaquePointer] = []
    let stillWanted = Set(wanted.values.flatMap { $0 })
    for (index, entry) in sendRegistered where wanted[index] != entry.names {
      for k in 0..<4 { context.pointee.setSendPort(4 * index + k, nil) }
      released += entry.ports
      sendRegistered[index] = nil
      for name in entry.names where !stillWanted.contains(name) {
        lastSeen[name] = nil
        intended[name] = nil
      }
    }
    if !released.isEmpty {
      let p = periods
      let deadline = Date().addingTimeInterval(0.2)
      while periods < p + 2 && Date() < deadline { usleep(1000) }
      for port in released { client.unregister(port) }
    }
    for (index, names) in wanted.sorted(by: { $0.key < $1.key }) where sendRegistered[index] == nil && names.count == 4 {
      var ports: [OpaquePointer] = []
      for (k, name) in names.enumerated() {
        let output = k < 2
        let pretty = "stemdeck \(output ? "send" : "return") \(name)"
        guard let port = try? client.registerAudioPort(name, isOutput: output, prettyName: pretty) else { break }
        ports.append(port)
      }
      guard ports.count == 4 else {
        for port in ports { client.unregister(port) }
        continue
      }
      sendRegistered[index] = SendPorts(names: names, ports: ports)
      for k in 0..<4 { context.pointee.setSendPort(4 * index + k, ports[k]) }
    }
  }

  /// Whether the registered send ports differ from the mixer's sends.
  func sendsOutOfStep() -> Bool {
    let wanted = mixer.sendPorts()
    return wanted.count != sendRegistered.count || wanted.contains { sendRegistered[$0.key]?.names != $0.value }
  }

  /// Registers or removes send ports now (after `send add`/`remove`), rather than at the next `poll`.
  public func updateSends() {
    lock.locked { if sendsOutOfStep() { syncSends() } }
  }

  /// The sends' registered port short names.
  var sendPortNames: [String] {
    sendRegistered.sorted { $0.key < $1.key }.flatMap(\.value.names)
  }

  /// Forgets the ports (a new client, or the server went away) and clears the process callback's copies.
  func forgetSends() {
    sendRegistered = [:]
    guard let context else { return }
    for i in 0..<context.pointee.sendPortCount { context.pointee.setSendPort(i, nil) }
  }
}

// MARK: - The external loop's latency

/// JACK's latency callback (its notification thread, never the process thread). What JACK does
/// for a client without one, except across the aux loops: every output's capture latency is the
/// largest of the inputs' but not the returns' (a return's latency comes through the external
/// effect from the send itself: counting it would feed the loop's latency back into the send at
/// every recompute), and every input's playback latency the largest of the outputs' but not the
/// sends'. `JackDriver.returnLatencies` then reads a loop's latency as the return's capture
/// latency minus the send's. docs/architecture.md, *Aux sends*.
func stemdeckLatency(_ mode: jack_latency_callback_mode_t, _ arg: UnsafeMutableRawPointer?) {
  guard let context = arg?.assumingMemoryBound(to: ProcessContext.self), let client = context.pointee.client else { return }
  var sendOutputs = Set<Int>(), returnInputs = Set<Int>()
  for i in 0..<context.pointee.sendPortCount {
    let port = context.pointee.sendPorts[i].load(ordering: .acquiring)
    if port == 0 { continue }
    if i % 4 < 2 { sendOutputs.insert(port) } else { returnInputs.insert(port) }
  }
  guard let list = jack_get_ports(client, nil, nil, 0) else { return }
  defer { jack_free(UnsafeMutableRawPointer(mutating: list)) }
  var inputs: [OpaquePointer] = [], outputs: [OpaquePointer] = []
  var i = 0
  while let name = list[i] {
    i += 1
    guard let port = jack_port_by_name(client, name), jack_port_is_mine(client, port) != 0 else { continue }
    if UInt32(jack_port_flags(port)) & JackPortIsInput.rawValue != 0 { inputs.append(port) } else { outputs.append(port) }
  }
  let capture = mode == JackCaptureLatency
  let key = { (port: OpaquePointer) in Int(bitPattern: UnsafeRawPointer(port)) }
  // Capture: from the inputs (not the returns) to the outputs; playback: the other way (not the sends).
  let from = capture ? inputs.filter { !returnInputs.contains(key($0)) } : outputs.filter { !sendOutputs.contains(key($0)) }
  let to = capture ? outputs : inputs
  var range = jack_latency_range_t(min: UInt32.max, max: 0)
  for port in from {
    var r = jack_latency_range_t()
    jack_port_get_latency_range(port, mode, &r)
    range.min = min(range.min, r.min)
    range.max = max(range.max, r.max)
  }
  if range.min == UInt32.max { range.min = 0 }
  for port in to { jack_port_set_latency_range(port, mode, &range) }
}

/// An aux loop's latency as JACK reports it.
public enum ReturnLatency: Equatable, Sendable {
  /// The send's outputs or its return's inputs have no connection.
  case notConnected
  /// The return's capture latency minus the send's, in frames (0 or more).
  case frames(Int)
}

extension JackDriver {
  /// Each send's loop latency by send name (control thread): read from JACK's port latency
  /// ranges each time (JACK recomputes them when the graph changes and calls `stemdeckLatency`).
  public func returnLatencies() -> [String: ReturnLatency] {
    let names = Dictionary(uniqueKeysWithValues: mixer.auxSends.map { ($0.index, $0.name) })
    return lock.locked {
      guard let client else { return [:] }
      var result: [String: ReturnLatency] = [:]
      for (index, entry) in sendRegistered {
        guard let name = names[index], entry.ports.count == 4 else { continue }
        let sends = entry.ports[0..<2], returns = entry.ports[2..<4]
        let connected = { (port: OpaquePointer) in jack_port_connected(port) > 0 }
        guard sends.contains(where: connected), returns.contains(where: connected) else {
          result[name] = .notConnected
          continue
        }
        let out = sends.map { client.latency(of: $0, capture: true) }.max() ?? 0
        let back = returns.map { client.latency(of: $0, capture: true) }.max() ?? 0
        result[name] = .frames(max(0, back - out))
      }
      return result
    }
  }
}
