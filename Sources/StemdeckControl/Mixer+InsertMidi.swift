import Foundation
import StemdeckSession

// A plugin insert's control as a MIDI target (`midi map cc 21 insert drums 1 gain`, `midi learn
// insert drums 1 gain`): the controller's 0…127 (or pitch bend's 14 bits) spans the port's range,
// on a logarithmic curve where the plugin marks the port logarithmic (and its range is
// positive), linear otherwise; toggles switch at the middle, integers round. Applied on the
// control thread as `insert set` (Mixer+Inserts.swift). docs/architecture.md, *Plugin inserts*.

extension Mixer {
  /// The control an `insert` mapping drives, or the reason it cannot (no such strip, insert or
  /// control). Under the lock.
  func insertControl(of mapping: MidiMapping) throws(MixerError) -> PluginControl {
    guard let p = mapping.insertParameter else { throw MixerError("midi mapping parameter: must be \"N/SYMBOL\"") }
    let instance = try insertAt(mapping.target, p.position).instance
    guard let info = instance.info else {
      throw MixerError("insert \(p.position) of '\(mapping.target)' is a placeholder: <\(instance.uri)> is not installed")
    }
    guard let control = info.controls.first(where: { $0.symbol == p.symbol }) else {
      let known = info.controls.map(\.symbol).joined(separator: ", ")
      throw MixerError("'\(info.name)' has no control '\(p.symbol)' (its controls: \(known.isEmpty ? "none" : known))")
    }
    return control
  }

  /// The value of `control` at controller `position` (0…127, fractional for pitch bend).
  static func insertValue(_ control: PluginControl, position: Double) -> Double {
    let t = min(max(position / 127, 0), 1)
    if control.properties.contains("toggled") { return t >= 0.5 ? control.maximum : control.minimum }
    var v: Double
    if control.properties.contains("logarithmic") && control.minimum > 0 && control.maximum > control.minimum {
      v = control.minimum * pow(control.maximum / control.minimum, t)
    } else {
      v = control.minimum + t * (control.maximum - control.minimum)
    }
    if control.properties.contains("integer") { v = v.rounded() }
    return min(max(v, control.minimum), control.maximum)
  }

  /// An `insert` mapping moved: the control takes the controller's value. Under the lock.
  func moveInsertControl(_ mapping: MidiMapping, position: Double) throws(MixerError) {
    let control = try insertControl(of: mapping)
    guard let p = mapping.insertParameter else { return }
    try setInsertValue(mapping.target, position: p.position, symbol: p.symbol, Self.insertValue(control, position: position))
  }
}
