import CJack
import Foundation
import StemdeckEngine
import StemdeckText

// Aux send ports (issue 22, item 2): `stemdeck:NAME_send_L/R` (outputs) and `NAME_return_L/R`
// (inputs) for each of the mixer's sends, registered here on the control thread and published
// to the process callback as atomics (`ProcessContext.sendPorts`), which hands their buffers to
// the renderer (`RenderState.sends`) every period. The live inputs' pattern
// (JackDriver+Inputs.swift). docs/architecture.md, *Aux sends*.

extension JackDriver {
  /// Aux sends' port sets: `NAME_send_L`, `NAME_send_R` (outputs), `NAME_return_L`,
  /// `NAME_return_R` (inputs), in slots 4i to 4i+3.
  static let sendPortSet = PortSetKind(
    name: "send", slotsPerIndex: 4, publish: { context, slot, port in context.pointee.setSendPort(slot, port) },
    describe: { k, names in
      (k < 2, "stemdeck \(k < 2 ? "send" : "return") \(names[k])")
    }, planned: \.sends, registered: \.sendRegistered, slotCount: { $0.pointee.sendPortCount })

  /// Registers or removes send ports now (after `send add`/`remove`), rather than at the next `poll`.
  public func updateSends() {
    updatePortSets(Self.sendPortSet)
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
  // Only this client's ports (a regular expression of its name, escaped), not the whole graph's.
  guard let own = jack_get_client_name(client) else { return }
  let special = Set("\\^$.|?*+()[]{}")
  let pattern = "^" + String(cString: own).map { special.contains($0) ? "\\\($0)" : "\($0)" }.joined() + ":"
  guard let list = jack_get_ports(client, pattern, nil, 0) else { return }
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
  // The inserts' latency at the master (JackDriver+Latency.swift): stemdeck's own.
  let added = UInt32(clamping: max(0, context.pointee.processingLatency.load(ordering: .acquiring)))
  range.min &+= added
  range.max &+= added
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
    lock.locked {
      guard let client else { return [:] }
      refreshPlan()
      let names = plan.sendNames
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
