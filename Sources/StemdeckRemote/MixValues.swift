import Foundation
import StemdeckControl
import StemdeckLive
import StemdeckSession

/// The mix's settable values by their OSC address, for the `values` topic: a control surface
/// (TouchOSC, Open Stage Control) that subscribes gets each value pushed to the address it would
/// send to set it, so its faders, buttons and knobs follow changes made anywhere (the REPL, MIDI,
/// another surface, undo, a scene). Levels in dB (−160: off, as `/stemdeck/KIND/NAME/vol` takes
/// it), switches 1/0, the rest as the table's numbers; insert parameters at
/// `/stemdeck/strip/NAME/insert/N/SYMBOL`. docs/remote-control.md, *Values*.
package enum MixValues {
  /// Every value now, by address. Control thread.
  package static func snapshot(_ mixer: Mixer) -> [String: Double] {
    var out: [String: Double] = [:]
    let prefix = OSCServer.prefix
    func strip(_ kind: StripKind, _ name: String, _ mix: StripSettings, rate: Double? = nil) {
      for row in StripParameter.all where row.kinds.contains(kind) {
        guard let word = row.osc.first else { continue }
        let value: Double
        switch row.field {
        case .number(let keyPath)?: value = mix[keyPath: keyPath]
        case .toggle(let keyPath)?: value = mix[keyPath: keyPath] ? 1 : 0
        case nil:
          guard row.key == StripParameter.rate.key, let rate else { continue }
          value = rate
        }
        out["\(prefix)/\(kind.rawValue)/\(name)/\(word)"] = row.value.isGain ? level(value) : value
      }
    }
    for s in mixer.stems.statuses() { strip(.stem, s.settings.name, s.settings.strip, rate: s.settings.rate) }
    for b in mixer.buses.statuses() { strip(.bus, b.settings.name, b.settings.strip) }
    for i in mixer.inputs.statuses() { strip(.input, i.settings.name, i.settings.strip) }
    out["\(prefix)/master/vol"] = level(mixer.master.volume)
    for send in mixer.sends.all {
      out["\(prefix)/return/\(send.name)"] = level(send.returnVolume)
      for (source, l) in send.levels { out["\(prefix)/send/\(source)/\(send.name)"] = level(l.gain) }
    }
    for name in mixer.inserts.chips().keys {
      for insert in (try? mixer.inserts.list(of: name)) ?? [] {
        for (symbol, value) in insert.values { out["\(prefix)/strip/\(name)/insert/\(insert.position)/\(symbol)"] = value }
      }
    }
    return out
  }

  /// A gain as a surface's level: dB, the silence floor (−160) for off.
  static func level(_ gain: Double) -> Double { max(Decibels.floor, Decibels.fromAmplitude(gain)) }

  /// The addresses whose value differs from `old` (or that `old` lacks), in a stable order.
  package static func changes(from old: [String: Double], to new: [String: Double]) -> [(String, Double)] {
    new.filter { old[$0.key] != $0.value }.sorted { $0.key < $1.key }
  }
}

/// What a front end has pushed of the `values` topic: the values last told, and when the mix was
/// last looked at. A snapshot is made when the mixer's change count moved (any change that
/// marks the session unsaved: a command, MIDI, undo, a scene, a session opened), or once a second
/// in case a change went by uncounted; only what differs is sent.
package struct ValuesTracker {
  package private(set) var seen: [String: Double] = [:]
  private var changesSeen = -1
  private var lookedAt = Date.distantPast

  package init() {}

  /// The values changed since the last look, when a look is due; empty otherwise.
  package mutating func due(_ mixer: Mixer, now: Date = Date()) -> [(String, Double)] {
    let count = mixer.history.changeCount
    guard count != changesSeen || now.timeIntervalSince(lookedAt) >= 1 else { return [] }
    changesSeen = count
    lookedAt = now
    let new = MixValues.snapshot(mixer)
    defer { seen = new }
    return MixValues.changes(from: seen, to: new)
  }

  /// Every value, for a new subscriber (looked at now).
  package mutating func all(_ mixer: Mixer) -> [(String, Double)] {
    _ = due(mixer, now: .distantFuture)
    return seen.sorted { $0.key < $1.key }
  }
}
