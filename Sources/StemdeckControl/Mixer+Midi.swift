import Foundation
import StemdeckEngine
import StemdeckSession
import StemdeckText

/// The control thread's side of MIDI control (docs/architecture.md, *MIDI control*).
///
/// The session's mappings live here; `publishMidi` sends them to the renderer's mapping table
/// (one `setMidiBinding` per mapping, by the stems' current slots), so volume, pan and rate move
/// in the renderer at the MIDI event's frame. `pumpMidi` (from `pump`) drains the renderer's MIDI
/// reports: applied values are recorded in the stems' settings (saved, marked dirty), and the
/// events for the control thread run their actions (sound effects, toggles, transport) or
/// complete a `midi learn`.
struct MidiControlState {
  /// The table last sent to the renderer (its bindings' fields, to send only after a change).
  var published: [[Int]] = []
  /// `midi on`: the port is wanted even without mappings.
  var enabled = false
  /// The mapping a `midi learn` is waiting to bind (its source is filled in by the next move).
  var learning: MidiMapping?
  /// Per mapping index, whether its controller was last at 64 or more (presses of CC actions).
  var down: [Int: Bool] = [:]
  /// When each controller mapping last counted a press, and how soon after it a rise is a bounce.
  var lastPress: [Int: ContinuousClock.Instant] = [:]
  static let debounce = Duration.milliseconds(40)
  /// Moves held back by soft takeover (a figure for `midi maps`).
  var held = 0
  /// Soft takeover of the volume and pan mappings of buses and inputs, per mapping index (those
  /// move on the control thread; the stems' move in the renderer, `MidiTable.takeover`).
  var stripTakeover: [Int: SoftTakeover] = [:]
  /// The setlist song playing, from 0 (0 without a setlist): what song buttons show on `midi_out`.
  var songNumber = 0
}

/// A bus's or a live input's fader and mute/solo switches, as MIDI reads and sets them.
/// How a controller's position (0…127) maps to a strip control's value: the fader's gain curve,
/// the pan curve, or a row's range evenly (`width`).
enum MidiFaderCurve {
  case gain, pan
  case linear(ClosedRange<Double>)
  /// A plugin insert's control: its range, logarithmic where the port says (Mixer+InsertMidi.swift).
  case plugin(PluginControl)

  init(_ control: StripParameter) {
    if control.value.isGain {
      self = .gain
    } else if control.key == StripParameter.pan.key {
      self = .pan
    } else {
      self = .linear(control.rule?.range ?? 0...1)
    }
  }

  func position(of value: Double) -> Double {
    switch self {
    case .gain: MidiCurve.position(gain: value)
    case .pan: MidiCurve.position(pan: value)
    case .linear(let r): (value - r.lowerBound) / (r.upperBound - r.lowerBound) * 127
    case .plugin(let control): Mixer.insertPosition(control, value: value)
    }
  }

  func value(at position: Double) -> Double {
    switch self {
    case .gain: MidiCurve.gain(position: position)
    case .pan: MidiCurve.pan(position: position)
    case .linear(let r): r.lowerBound + Swift.min(1, Swift.max(0, position / 127)) * (r.upperBound - r.lowerBound)
    case .plugin(let control): Mixer.insertValue(control, position: position)
    }
  }
}

extension Mixer {

  func checkMidiMapping(_ mapping: MidiMapping) throws(MixerError) {
    if let problem = mapping.problem() { throw MixerError("midi mapping \(problem.field): \(problem.message)") }
    if mapping.action.targetsStem, !table.stems.contains(where: { $0.settings.name == mapping.target }) {
      // Buses and live inputs take every action a stem does but rate.
      if mapping.action == .rate || !isMidiControlStrip(mapping.target) {
        throw MixerError(
          mapping.action == .rate
            ? "no stem named '\(printableText(mapping.target))' (midi rate drives a stem)"
            : "no stem, bus or input named '\(printableText(mapping.target))' (midi \(mapping.action.rawValue) drives one)")
      }
    }
    if mapping.action == .send, sendTable.position(mapping.send) == nil {
      throw unknownSend(printableText(mapping.send))
    }
    if mapping.action == .insert { _ = try insertControl(of: mapping) }
    if mapping.action == .sfx, effectsState.byName[mapping.target] == nil,
      !effectsState.loading.contains(where: { $0.settings.name == mapping.target })
    {
      throw MixerError("no effect named '\(printableText(mapping.target))' (\(action: .loadThatEffect) first)")
    }
    if midiSettings.mappings.contains(mapping) { throw MixerError("that mapping exists already (\(mapping.description))") }
    if midiSettings.mappings.count >= min(MidiTable.capacity, MidiSettings.maximumMappings) {
      throw MixerError(reason: .limit(what: .midiMappings, max: MidiSettings.maximumMappings, adding: nil))
    }
  }

  /// Sends the mapping table to the renderer if it changed (mappings, or the slots of their
  /// stems). Called after every mapping change and from `pump`.
  func publishMidi() throws(MixerError) {
    let table: [[Int]] = midiSettings.mappings.map { m in
      let kind: MidiSourceKind
      switch m.source {
      case .cc: kind = .cc
      case .note: kind = .note
      case .bend: kind = .bend
      case .pc: kind = .program
      }
      var target: MidiTarget
      var slot: Int32 = -1
      switch m.action {
      case .volume: target = .volume
      case .pan: target = .pan
      case .rate: target = .rate
      default: target = .control
      }
      if target != .control {
        if let stem = self.table.stems.first(where: { $0.settings.name == m.target }) {
          slot = stem.slot
        } else if isMidiControlStrip(m.target) {
          // A bus's or an input's volume or pan: its events come to `pumpMidi` (`moveStrip`).
          target = .control
        }
      }
      return [Int(kind.rawValue), (m.channel ?? 0) - 1, m.number, Int(target.rawValue), Int(slot)] + feedbackRow(m)
    }
    guard table != midiState.published else { return }
    guard waitForCommandRoom(count: table.count + 1) else {
      throw MixerError("the renderer is not taking commands; MIDI mappings not sent")
    }
    for (index, row) in table.enumerated() {
      let binding = MidiBinding(
        kind: MidiSourceKind(rawValue: UInt8(row[0])) ?? .cc, channel: Int8(row[1]),
        number: Int16(row[2]), target: MidiTarget(rawValue: UInt8(row[3])) ?? .control,
        slot: Int32(row[4]), feedback: row[5] == 1 ? .playing : row[5] == 2 ? .song(Int16(row[6])) : .none)
      try send(.setMidiBinding(index: Int32(index), binding: binding, count: Int32(index + 1)))
    }
    if table.count < midiState.published.count || table.isEmpty {
      try send(
        .setMidiBinding(
          index: -1, binding: MidiBinding(kind: .cc, channel: -1, number: 0, target: .control, slot: -1),
          count: Int32(table.count)))
    }
    midiState.published = table
  }

  /// A mapping's feedback as two table columns (kind: 0 none, 1 the transport, 2 the song; the
  /// song's number): a play button shows the transport, a song button (`next`, `prev`, a `do`
  /// line that plays, pauses or changes song) the setlist song (issue 42, item 3).
  func feedbackRow(_ m: MidiMapping) -> [Int] {
    let word: String
    switch m.action {
    case .play: word = "play"
    case .next, .prev: word = "next"
    case .command: word = m.target.split(separator: " ").first.map { $0.lowercased() } ?? ""
    default: word = ""
    }
    switch word {
    case "play", "pause": return [1, 0]
    case "next", "prev", "goto", "song": return [2, midiState.songNumber]
    default: return [0, 0]
    }
  }

  /// Drains the renderer's MIDI reports (from `pump`, under the lock).
  func pumpMidi() -> [MixerEvent] {
    var out: [MixerEvent] = []
    try? publishMidi()
    while let report = rings.midiReports.pop() {
      switch report {
      case .applied(_, let slot, let target, let value):
        guard let stem = table.stems.first(where: { $0.slot == slot }) else { continue }
        var s = stem.settings
        switch target {
        case .volume: s.volume = value
        case .pan: s.pan = value
        case .rate: s.rate = value
        case .control: continue
        }
        if s != stem.settings {
          stem.settings = s
          isDirty = true
        }
      case .held:
        midiState.held += 1
      case .event(let binding, let status, let data1, let data2):
        if let learning = midiState.learning, let event = learned(learning, status: status, data1: data1) {
          out.append(event)
          continue
        }
        guard binding >= 0, Int(binding) < midiSettings.mappings.count else { continue }
        let mapping = midiSettings.mappings[Int(binding)]
        if mapping.action.isEQGain {
          // Every value the controller sends, not presses: the band's gain follows it.
          guard status & 0xF0 == 0xB0 else { continue }
          do throws(MixerError) {
            try setEQGain(mapping, MidiMapping.eqGain(value: Int(data2)))
          } catch {
            out.append(.midiFailed("\(mapping.description): \(error)"))
          }
          continue
        }
        if mapping.action.isContinuous && mapping.action != .rate {
          // A strip control that follows a controller on the control thread: a bus's or an
          // input's volume and pan, any strip's width, every send level (a stem's volume and
          // pan move in the renderer).
          do throws(MixerError) {
            try moveStrip(index: Int(binding), mapping, status: status, data1: data1, data2: Int(data2))
          } catch {
            out.append(.midiFailed("\(mapping.description): \(error)"))
          }
          continue
        }
        guard isPress(index: Int(binding), status: status, value: Int(data2)) else { continue }
        if mapping.action.isShowCommand {
          out.append(.midiCommand(mapping.action.rawValue))
          continue
        }
        if mapping.action == .scene || mapping.action == .command {  // `scene recall NAME`, a `do` line
          out.append(.midiCommand(mapping.action == .scene ? "scene recall " + mapping.target : mapping.target))
          continue
        }
        do throws(MixerError) {
          try run(mapping)
        } catch {
          out.append(.midiFailed("\(mapping.description): \(error)"))
        }
      }
    }
    return out
  }

  /// A note on (velocity > 0), a controller rising to 64 or more, or a program change.
  func isPress(index: Int, status: UInt8, value: Int) -> Bool {
    switch status & 0xF0 {
    case 0xC0: return true
    case 0x90: return value > 0
    case 0xB0:
      let wasDown = midiState.down[index] ?? false
      let isDown = value >= 64
      midiState.down[index] = isDown
      guard isDown && !wasDown else { return false }
      // A pedal's contacts bounce: a press within `MidiControlState.debounce` of the last one
      // of the same mapping is the same press.
      let now = ContinuousClock.now
      defer { midiState.lastPress[index] = now }
      return midiState.lastPress[index].map { $0.duration(to: now) >= MidiControlState.debounce } ?? true
    default: return false
    }
  }

  func run(_ mapping: MidiMapping) throws(MixerError) {
    switch mapping.action {
    case .sfx: try effects.fire(mapping.target)
    case .mute: try strips.setMute(mapping.target, !(try isMuted(mapping.target)))
    case .solo: try strips.setSolo(mapping.target, !(try isSoloed(mapping.target)))
    case .safe:
      try strips.set(.soloSafe, of: mapping.target, to: mix(of: try strip(named: mapping.target)).soloSafe ? 0 : 1)
    case .play: if transport.state == .paused { try transport.play() } else { pause() }
    case .next, .prev, .stop, .undo, .redo, .scene, .command: break  // the front end's commands (`pumpMidi` reports them)
    case .eq:
      var eq = try strips.eq(mapping.target)
      eq.enabled.toggle()
      try strips.setEQ(mapping.target, eq)
    default: break  // followed, not pressed (`isContinuous`, `isEQGain`): volume, pan, width, rate, send, the EQ's gains
    }
  }

  /// Whether the stem, bus or input `name` is muted / soloed (for the toggles).
  func isMuted(_ name: String) throws(MixerError) -> Bool { mix(of: try strip(named: name)).mute }

  func isSoloed(_ name: String) throws(MixerError) -> Bool { mix(of: try strip(named: name)).solo }

  /// Whether `name` is a bus, a live input or the master (`MidiMapping.master`, whose volume
  /// alone a mapping may drive: `MidiMapping.problem`): a strip whose mappings are followed on
  /// the control thread (a stem's volume and pan move in the renderer).
  func isMidiControlStrip(_ name: String) -> Bool {
    name == MidiMapping.master || busPosition(name) != nil || liveInputs.find(name) != nil
  }

  /// A `vol`/`pan` mapping of a bus or live input moved: the same curves and soft takeover as a
  /// stem's (`MidiCurve`, `SoftTakeover`), 7-bit, applied on the control thread.
  /// A `send` mapping moves the strip's level into its send the same way (the volume curve; the
  /// tap point stays, post-fader for a new level).
  func moveStrip(index: Int, _ mapping: MidiMapping, status: UInt8, data1: UInt8, data2: Int) throws(MixerError) {
    let position: Double
    switch status & 0xF0 {
    case 0xB0, 0x90: position = Double(data2)
    case 0xE0: position = Double(data2 * 128 + Int(data1)) / 128
    default: return
    }
    if mapping.action == .send {
      try moveSendLevel(index: index, mapping, position: position)
    } else if mapping.action == .insert {
      try moveInsertControl(index: index, mapping, position: position)  // Mixer+InsertMidi.swift
    } else {
      try moveStripFader(index: index, mapping, position: position)
    }
  }

  /// A `send` mapping: the level of its strip into its send, the tap point kept.
  func moveSendLevel(index: Int, _ mapping: MidiMapping, position: Double) throws(MixerError) {
    guard let aux = sendTable.sends.first(where: { $0.name == mapping.send }) else {
      throw unknownSend(printableText(mapping.send))
    }
    let level = aux.levels[mapping.target]
    guard let gain = takeOver(index: index, position: position, current: level?.gain ?? 0, curve: .gain) else { return }
    try sends.set(strip: mapping.target, send: mapping.send, level: SendLevel(gain: gain, preFader: level?.preFader ?? false))
  }

  /// A strip control's mapping followed on the control thread (`vol`/`pan` of a bus, an input
  /// or the master's volume; `width` of any strip): the row's curve and soft takeover.
  func moveStripFader(index: Int, _ mapping: MidiMapping, position: Double) throws(MixerError) {
    guard let control = StripParameter.row(midi: mapping.action), case .number(let keyPath)? = control.field else { return }
    let curve = MidiFaderCurve(control)
    if mapping.target == MidiMapping.master {
      guard control.key == StripParameter.volume.key,
        let value = takeOver(index: index, position: position, current: masterVolume, curve: curve)
      else { return }
      return try master.setVolume(value)
    }
    let current = mix(of: try strip(named: mapping.target))[keyPath: keyPath]
    guard let value = takeOver(index: index, position: position, current: current, curve: curve) else { return }
    try strips.set(control, of: mapping.target, to: value)
  }

  /// The value mapping `index` sets for a control at `position` (0…127) when the control has
  /// taken over the parameter (now `current`), or nil while soft takeover holds it (counted in
  /// `midiState.held`). A volume (or send level) follows `MidiCurve`'s gain curve, a pan its
  /// pan curve, another row its range evenly.
  func takeOver(index: Int, position: Double, current: Double, curve: MidiFaderCurve) -> Double? {
    var takeover = midiState.stripTakeover[index] ?? SoftTakeover()
    defer { midiState.stripTakeover[index] = takeover }
    guard takeover.accept(position: position, currentPosition: curve.position(of: current), current: current) else {
      midiState.held += 1
      return nil
    }
    let value = curve.value(at: position)
    takeover.lastApplied = value
    return value
  }

  /// An `eqlow`/`eqmid`/`eqhigh` mapping's band set to `gain` dB (its frequency and Q kept).
  func setEQGain(_ mapping: MidiMapping, _ gain: Double) throws(MixerError) {
    var eq = try strips.eq(mapping.target)
    switch mapping.action {
    case .eqlow: eq.low.gain = gain
    case .eqmid: eq.mid.gain = gain
    default: eq.high.gain = gain
    }
    try strips.setEQ(mapping.target, eq)
  }

  /// Completes a learn with this event if it is of a kind the action takes.
  func learned(_ learning: MidiMapping, status: UInt8, data1: UInt8) -> MixerEvent? {
    let type = status & 0xF0
    let source: MidiMapping.Source
    switch (type, learning.action) {
    case (0xE0, let a) where a.isContinuous: source = .bend
    case (0xB0, let a) where a != .rate: source = .cc
    case (0x90, .sfx), (0x90, .mute), (0x90, .solo), (0x90, .play), (0x90, .eq), (0x90, .next), (0x90, .prev), (0x90, .stop),
      (0x90, .undo), (0x90, .redo), (0x90, .scene), (0x90, .command), (0x90, .safe):
      source = .note
    case (0xC0, let a) where !a.isContinuous && !a.isEQGain: source = .pc
    default: return nil
    }
    let mapping = MidiMapping(
      source: source, number: source == .bend ? 0 : Int(data1), channel: Int(status & 0x0F) + 1,
      action: learning.action, target: learning.target, send: learning.send)
    midiState.learning = nil
    do throws(MixerError) {
      try checkMidiMapping(mapping)
      midiSettings.mappings.append(mapping)
      isDirty = true
      try publishMidi()
      return .midiLearned(mapping.description)
    } catch {
      return .midiFailed("learn \(mapping.description): \(error)")
    }
  }
}

extension Mixer.Midi {
  /// The session's MIDI mappings, in order.
  public var mappings: [MidiMapping] { mixer.lock.locked { mixer.midiSettings.mappings } }

  /// Whether the JACK MIDI input port should exist: there are mappings, a learn waits, or `midi on`.
  public var portWanted: Bool {
    mixer.lock.locked { mixer.midiState.enabled || !mixer.midiSettings.mappings.isEmpty || mixer.midiState.learning != nil }
  }

  /// `midi on` / `midi off`. Off also forgets a learn in progress (mappings stay; while there are
  /// mappings the port stays).
  public func setEnabled(_ on: Bool) {
    mixer.lock.locked {
      mixer.midiState.enabled = on
      if !on { mixer.midiState.learning = nil }
    }
  }

  public var enabled: Bool { mixer.lock.locked { mixer.midiState.enabled } }

  /// `midi out on|off`: whether `midi_out` sends the mapped volumes and pans back (saved).
  public var feedback: Bool { mixer.lock.locked { mixer.midiSettings.feedback } }

  public func setFeedback(_ on: Bool) {
    mixer.lock.locked {
      if mixer.midiSettings.feedback != on {
        mixer.midiSettings.feedback = on
        mixer.isDirty = true
      }
    }
  }

  /// The mapping `midi learn` waits for (its source is a placeholder), if any.
  public var learning: MidiMapping? { mixer.lock.locked { mixer.midiState.learning } }

  /// Moves held back by soft takeover so far.
  public var heldMoves: Int { mixer.lock.locked { mixer.midiState.held } }

  /// Adds a mapping. Throws (changing nothing) when it is invalid, its stem or effect is not in
  /// the session, it repeats one, or the table is full.
  public func add(_ mapping: MidiMapping) throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      try mixer.checkMidiMapping(mapping)
      mixer.midiSettings.mappings.append(mapping)
      mixer.isDirty = true
      try mixer.publishMidi()
    }
  }

  /// Removes the mappings `matching` says; returns them.
  @discardableResult
  public func remove(where matching: (MidiMapping) -> Bool) throws(MixerError) -> [MidiMapping] {
    try mixer.lock.locked { () throws(MixerError) -> [MidiMapping] in
      let removed = mixer.midiSettings.mappings.filter(matching)
      guard !removed.isEmpty else { return [] }
      mixer.midiSettings.mappings.removeAll(where: matching)
      mixer.midiState.down = [:]
      mixer.midiState.lastPress = [:]
      mixer.midiState.stripTakeover = [:]
      mixer.isDirty = true
      try mixer.publishMidi()
      return removed
    }
  }

  /// Waits for the next controller moved (a note for sound effects and toggles, pitch bend for
  /// rate) and binds it to `action` on `target`. Checked now: the stem or effect must exist.
  public func learn(action: MidiMapping.Action, target: String, send: String = "") throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      let placeholder = MidiMapping(
        source: action == .rate ? .bend : .cc, number: 0, action: action, target: target, send: send)
      try mixer.checkMidiMapping(placeholder)
      mixer.midiState.learning = placeholder
    }
  }

  public func cancelLearn() { mixer.lock.locked { mixer.midiState.learning = nil } }

  /// Tells song buttons' feedback which setlist song plays (from 0).
  public func setSongNumber(_ number: Int) {
    mixer.lock.locked {
      mixer.midiState.songNumber = Swift.max(0, Swift.min(127, number))
      try? mixer.publishMidi()
    }
  }
}

// The MIDI map's part of the session file (Mixer+Session.swift calls these under the lock).
extension Mixer.Midi {
  func save(into s: inout Session) { s.midi = mixer.midiSettings }

  /// Takes the session's mappings and forgets the old ones' learn, takeover and debounce state.
  func install(from session: Session) {
    mixer.midiSettings = session.midi
    mixer.midiState.learning = nil
    mixer.midiState.down = [:]
    mixer.midiState.lastPress = [:]
    mixer.midiState.stripTakeover = [:]
  }
}
