import Foundation
import StemdeckEngine

// Live input ports (issue 22, item 3): `stemdeck:NAME_in` (mono) or `NAME_in_L`/`NAME_in_R`
// (stereo) for each of the mixer's live inputs, registered here on the control thread
// (jack_port_register is not realtime-safe) and published to the process callback as atomics
// (`ProcessContext.liveInputPorts`), which hands their buffers to the renderer every period.
// docs/architecture.md, *Live inputs*.

/// A live input's registered ports: the short names and the ports, by strip index.
struct LiveInputPorts {
  var names: [String]
  var ports: [OpaquePointer]
}

extension JackDriver {
  /// Registers the ports of new inputs and removes those of inputs gone (after the process
  /// callback has let go of them: cleared, then two periods, as the sfx ports). A port that
  /// cannot be registered (a name JACK refuses or already taken) is tried again at each poll.
  func syncLiveInputs() {
    guard let client, let context else { return }
    let wanted = mixer.liveInputPorts()
    var released: [OpaquePointer] = []
    let stillWanted = Set(wanted.values.flatMap { $0 })
    for (index, entry) in liveInputRegistered where wanted[index] != entry.names {
      context.pointee.setLiveInputPort(2 * index, nil)
      context.pointee.setLiveInputPort(2 * index + 1, nil)
      released += entry.ports
      liveInputRegistered[index] = nil
      // A removed input's connections go with it (an input added again is connected anew).
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
    for (index, names) in wanted.sorted(by: { $0.key < $1.key }) where liveInputRegistered[index] == nil {
      var ports: [OpaquePointer] = []
      for name in names {
        let side = names.count == 1 ? "" : (name.hasSuffix("_L") ? " left" : " right")
        guard let port = try? client.registerAudioPort(name, isOutput: false, prettyName: "stemdeck input \(name)\(side)") else { break }
        ports.append(port)
      }
      guard ports.count == names.count else {
        for port in ports { client.unregister(port) }
        continue
      }
      liveInputRegistered[index] = LiveInputPorts(names: names, ports: ports)
      context.pointee.setLiveInputPort(2 * index, ports[0])
      context.pointee.setLiveInputPort(2 * index + 1, ports.count > 1 ? ports[1] : nil)
    }
  }

  /// Whether the registered input ports differ from the mixer's inputs.
  func liveInputsOutOfStep() -> Bool {
    let wanted = mixer.liveInputPorts()
    return wanted.count != liveInputRegistered.count || wanted.contains { liveInputRegistered[$0.key]?.names != $0.value }
  }

  /// Registers or removes input ports now (after `input add`/`remove`), rather than at the next `poll`.
  public func updateLiveInputs() {
    lock.locked { if liveInputsOutOfStep() { syncLiveInputs() } }
  }

  /// The round-trip latency of a take recorded from live input `name` (`record from mic`): the
  /// master's playback latency plus its ports' capture latency (0 for a port not registered).
  public func roundTripLatencyFrames(input name: String) -> Int {
    lock.locked {
      guard let client, let master = masterPorts else { return 0 }
      let playback = max(client.latency(of: master.0, capture: false), client.latency(of: master.1, capture: false))
      let entry = liveInputRegistered.values.first { $0.names == [name + "_in"] || $0.names == [name + "_in_L", name + "_in_R"] }
      return playback + (entry?.ports.map { client.latency(of: $0, capture: true) }.max() ?? 0)
    }
  }

  /// The live inputs' registered port short names.
  var liveInputPortNames: [String] {
    liveInputRegistered.sorted { $0.key < $1.key }.flatMap(\.value.names)
  }

  /// Forgets the ports (a new client, or the server went away) and clears the process callback's copies.
  func forgetLiveInputs() {
    liveInputRegistered = [:]
    guard let context else { return }
    for i in 0..<context.pointee.liveInputPortCount { context.pointee.setLiveInputPort(i, nil) }
  }
}
