import StemdeckEngine
import StemdeckSession

// Plugin inserts in undo and redo (Mixer+Undo.swift): the snapshots carry every strip's inserts
// (`storeInserts`), and `move(from:to:)` ends here, moving each strip whose inserts the two
// differ in. The same plugins in the same order with the same state take the target's values and
// bypass in place (a control value goes down as `insert set` sends it: no new instance, no gap);
// otherwise (a plugin's own state differs too: a file set) the strip's rack is built again from
// the target (`build`, as a session's open does, restoring the state).
// docs/architecture.md, *Plugin inserts*.

extension Mixer {
  /// Every strip whose inserts differ between `a` and `b` takes `b`'s. Under the lock.
  func moveInserts(from a: Session, to b: Session) throws(MixerError) {
    var moves: [(target: StripTarget, channels: Int, name: String, inserts: [InsertSettings])] = []
    if a.masterInserts != b.masterInserts { moves.append((.master, 2, "master", b.masterInserts)) }
    let busesA = Self.byName(a.buses, \.name), inputsA = Self.byName(a.inputs, \.name), stemsA = Self.byName(a.stems, \.name)
    for bus in b.buses where busesA[bus.name]?.strip.inserts ?? [] != bus.strip.inserts {
      if let index = busTable.buses.first(where: { $0.settings.name == bus.name })?.index {
        moves.append((.bus(index), 2, bus.name, bus.strip.inserts))
      }
    }
    for input in b.inputs where inputsA[input.name]?.strip.inserts ?? [] != input.strip.inserts {
      if let live = liveInputs.find(input.name) {
        moves.append((.input(Int32(live.index)), live.settings.channels == .mono ? 1 : 2, input.name, input.strip.inserts))
      }
    }
    for stem in b.stems where stemsA[stem.name]?.strip.inserts ?? [] != stem.strip.inserts {
      if let live = table.stems.first(where: { $0.settings.name == stem.name }) {
        moves.append((.stem(slot: live.slot), live.channels, stem.name, stem.strip.inserts))
      }
    }
    for m in moves where insertSettings(m.target) != m.inserts {
      try moveRack(m.target, channels: m.channels, strip: m.name, to: m.inserts)
    }
  }

  /// Strip `target`'s rack to `inserts`: in place when the plugins are the same, else built anew.
  private func moveRack(_ target: StripTarget, channels: Int, strip: String, to inserts: [InsertSettings]) throws(MixerError) {
    let rack = insertRacks.racks[InsertKey(target)] ?? []
    let sameState = zip(rack, inserts).allSatisfy { x, wanted in x.saveState(sessionPath: nil).state == wanted.state }
    if rack.map(\.uri) == inserts.map(\.uri) && rack.allSatisfy({ $0.info != nil }) && sameState {
      for (x, wanted) in zip(rack, inserts) {
        for v in wanted.values {
          guard let port = x.port(v.symbol), let i = x.values.firstIndex(where: { $0.symbol == v.symbol }), x.values[i].value != v.value
          else { continue }
          try send(.setInsertControl(port: port, value: Float(v.value)))
          x.values[i].value = v.value
        }
      }
      let bypassed = rack.map(\.bypass)
      for (x, wanted) in zip(rack, inserts) { x.bypass = wanted.bypass }
      if bypassed != rack.map(\.bypass) {
        do throws(MixerError) { try sendRack(rack, target) } catch {
          for (x, was) in zip(rack, bypassed) { x.bypass = was }
          throw error
        }
      }
    } else {
      let built = inserts.map { build($0, channels: channels, strip: strip).0 }
      do throws(MixerError) { try sendRack(built, target) } catch {
        for x in built { x.free() }
        throw error
      }
      insertRacks.released += rack
    }
    isDirty = true
  }
}
