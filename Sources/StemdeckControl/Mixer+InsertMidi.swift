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

  /// Where controller position a value sits (0…127): `insertValue`'s inverse.
  static func insertPosition(_ control: PluginControl, value: Double) -> Double {
    guard control.maximum > control.minimum else { return 0 }
    let v = min(max(value, control.minimum), control.maximum)
    let t: Double
    if control.properties.contains("logarithmic") && control.minimum > 0 {
      t = log(v / control.minimum) / log(control.maximum / control.minimum)
    } else {
      t = (v - control.minimum) / (control.maximum - control.minimum)
    }
    return t * 127
  }

  /// An `insert` mapping moved: the control takes the controller's value once the controller has
  /// reached it (soft takeover, as a fader's: a knob left elsewhere, by a preset, a scene, OSC or
  /// the console, does not make the parameter jump; it picks it up where it passes). A toggle
  /// switches at once. Under the lock.
  func moveInsertControl(index: Int, _ mapping: MidiMapping, position: Double) throws(MixerError) {
    let control = try insertControl(of: mapping)
    guard let p = mapping.insertParameter else { return }
    let value: Double
    if control.properties.contains("toggled") {
      value = Self.insertValue(control, position: position)
    } else {
      let instance = try insertAt(mapping.target, p.position).instance
      let current = instance.values.first { $0.symbol == p.symbol }?.value ?? control.defaultValue
      guard let v = takeOver(index: index, position: position, current: current, curve: .plugin(control)) else { return }
      value = v
    }
    try inserts.setValue(mapping.target, position: p.position, symbol: p.symbol, value)
  }
}
