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
