import Foundation
import StemdeckEngine
import StemdeckText

// Live input ports (issue 22, item 3): `stemdeck:NAME_in` (mono) or `NAME_in_L`/`NAME_in_R`
// (stereo) for each of the mixer's live inputs, registered here on the control thread
// (jack_port_register is not realtime-safe) and published to the process callback as atomics
// (`ProcessContext.liveInputPorts`), which hands their buffers to the renderer every period.
// docs/architecture.md, *Live inputs*.

extension JackDriver {
  /// Live inputs' port sets: `NAME_in`, or `NAME_in_L` and `NAME_in_R`, in slots 2i and 2i+1.
  static let liveInputPortSet = PortSetKind(
    name: "input", slotsPerIndex: 2, publish: { context, slot, port in context.pointee.setLiveInputPort(slot, port) },
    describe: { k, names in
      (false, "stemdeck input \(names[k])" + (names.count == 1 ? "" : k == 0 ? " left" : " right"))
    }, planned: \.liveInputs, registered: \.liveInputRegistered, slotCount: { $0.pointee.liveInputPortCount })

  /// Registers or removes input ports now (after `input add`/`remove`), rather than at the next `poll`.
  public func updateLiveInputs() {
    updatePortSets(Self.liveInputPortSet)
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
}
