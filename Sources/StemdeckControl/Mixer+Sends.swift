import Foundation
import StemdeckEngine
import StemdeckSession
import StemdeckText

// Aux sends and returns (issue 22, item 2) on the control side: the sends by name, each with its
// index in the renderer's `SendBank` (Sends.swift), its return's volume and the levels of the
// strips (stems, buses, live inputs) into it. docs/architecture.md, *Aux sends*.

/// A strip's level into one send: linear gain, before or after the strip's fader.
public struct SendLevel: Sendable, Equatable {
  public var gain: Double
  public var preFader: Bool
  public init(gain: Double, preFader: Bool) {
    self.gain = gain
    self.preFader = preFader
  }
}

/// One aux send.
public struct AuxSend: Sendable, Equatable {
  public var name: String
  /// Its index in the renderer's `SendBank` and the driver's port table.
  public var index: Int
  /// The return's volume (linear gain, 0…`SettingRule.volume`'s maximum).
  public var returnVolume: Double
  /// The strips that feed it, by name: stems (offline ones too), buses and live inputs (they
  /// share one set of names).
  public var levels: [String: SendLevel]

  /// The JACK port short names: the send's outputs, then its return inputs.
  public var outputPorts: [String] { ["\(name)_send_L", "\(name)_send_R"] }
  public var returnPorts: [String] { ["\(name)_return_L", "\(name)_return_R"] }
}

/// The sends in the order they were added.
struct SendTable {
  var sends: [AuxSend] = []
  func position(_ name: String) -> Int? { sends.firstIndex { $0.name == name } }
}

extension Mixer {

  /// Which renderer strip holds a strip's send levels (`EngineCommand.setSendLevel`); nil for an
  /// offline stem (nothing plays). Under the lock.
  func sendAddress(of name: String) throws(MixerError) -> StripTarget? {
    if let stem = table.stems.first(where: { $0.settings.name == name }) { return .stem(slot: stem.slot) }
    if let p = busPosition(name) { return .bus(busTable.buses[p].index) }
    if let input = liveInputs.find(name) { return .input(Int32(input.index)) }
    if table.offline.contains(where: { $0.settings.name == name }) { return nil }
    throw unknownStrip(name)
  }

  /// Silences a bus's or live input's sends and forgets its levels (it is being removed; its
  /// index may be taken by another). `address`: its `sendAddress`. Under the lock.
  func clearSends(ofStrip name: String, address: StripTarget) {
    for position in sendTable.sends.indices where sendTable.sends[position].levels[name] != nil {
      let aux = sendTable.sends[position]
      try? send(
        .setSendLevel(address, index: Int32(aux.index), gain: 0, preFader: aux.levels[name]?.preFader ?? false))
      sendTable.sends[position].levels[name] = nil
    }
  }

  /// Silences a removed stem's sends (its slot may be taken by another stem). Under the lock.
  /// Its levels stay in the table when a stem of the same name plays in another slot (the next
  /// song's, after a song change): they are that stem's.
  func clearSends(ofStem name: String, slot: Int32) {
    let successor = table.stems.contains { $0.settings.name == name && $0.slot != slot }
    for position in sendTable.sends.indices where sendTable.sends[position].levels[name] != nil {
      try? send(.setSendLevel(.stem(slot: slot), index: Int32(sendTable.sends[position].index), gain: 0, preFader: false))
      if !successor { sendTable.sends[position].levels[name] = nil }
    }
  }

  /// Replaces the sends with a session's (`open`, a song change): sends of the same name keep
  /// their index (and so their ports and connections), the others go or come; then the stems'
  /// levels (`StemSettings.sends`) are set, an offline stem's kept for saving, and the buses' and
  /// inputs' (installed before this). Under the lock; the session was validated
  /// (`Session.sendProblem`).
  func replaceSends(
    with sends: [SendSettings], stems: [StemSettings], buses: [BusSettings] = [], inputs: [InputSettings] = []
  ) throws(MixerError) {
    let wanted = Set(sends.map(\.name))
    // The buses and inputs that stay (an input of the same name keeps its strip) would keep their
    // levels in the renderer: silenced first, the session's are set below.
    for aux in sendTable.sends where wanted.contains(aux.name) {
      for (name, level) in aux.levels where busPosition(name) != nil || liveInputs.find(name) != nil {
        if let address = try? sendAddress(of: name) {
          try send(.setSendLevel(address, index: Int32(aux.index), gain: 0, preFader: level.preFader))
        }
      }
    }
    for aux in sendTable.sends where !wanted.contains(aux.name) {
      try send(.removeSend(index: Int32(aux.index)))
    }
    var kept = sendTable.sends.filter { wanted.contains($0.name) }
    for position in kept.indices { kept[position].levels = [:] }
    var result: [AuxSend] = []
    for settings in sends {
      if var aux = kept.first(where: { $0.name == settings.name }) {
        if aux.returnVolume != settings.returnVolume {
          try send(.setReturnGain(index: Int32(aux.index), gain: Float(settings.returnVolume)))
          aux.returnVolume = settings.returnVolume
        }
        result.append(aux)
      } else {
        let used = Set(kept.map(\.index) + result.map(\.index))
        guard let index = (0..<SendBank.maxSends).first(where: { !used.contains($0) }) else {
          throw MixerError(reason: .limit(what: .sends, max: SendBank.maxSends, adding: settings.name))
        }
        try send(.addSend(index: Int32(index), returnGain: Float(settings.returnVolume)))
        result.append(AuxSend(name: settings.name, index: index, returnVolume: settings.returnVolume, levels: [:]))
      }
    }
    sendTable.sends = result
    for stem in stems where !stem.sends.isEmpty {
      let slot = table.stems.first { $0.settings.name == stem.name }?.slot
      for level in stem.sends {
        guard let position = sendTable.position(level.to) else { continue }
        if let slot {
          try send(
            .setSendLevel(
              .stem(slot: slot), index: Int32(sendTable.sends[position].index), gain: Float(level.level), preFader: level.preFader))
        }
        sendTable.sends[position].levels[stem.name] = SendLevel(gain: level.level, preFader: level.preFader)
      }
    }
    let strips = buses.map { ($0.name, $0.sends) } + inputs.map { ($0.name, $0.sends) }
    for (name, levels) in strips where !levels.isEmpty {
      // A bus or input of the session: installed before the sends (`load`, `copy(atSampleRate:)`).
      guard let address = try? sendAddress(of: name) else { continue }
      for level in levels {
        guard let position = sendTable.position(level.to) else { continue }
        try send(
          .setSendLevel(
            address, index: Int32(sendTable.sends[position].index), gain: Float(level.level), preFader: level.preFader))
        sendTable.sends[position].levels[name] = SendLevel(gain: level.level, preFader: level.preFader)
      }
    }
  }

  /// Strip `name`'s levels into the sends (a stem's, a bus's, an input's), in the sends' order
  /// (for saving). Under the lock.
  func stemSends(_ name: String) -> [StemSend] {
    sendTable.sends.compactMap { aux in
      aux.levels[name].map { StemSend(to: aux.name, level: $0.gain, preFader: $0.preFader) }
    }
  }

  func unknownSend(_ name: String) -> MixerError {
    let known = sendTable.sends.map(\.name)
    return MixerError(
      "no send named '\(name)'\(known.isEmpty ? " (there are no sends; add one with 'send add NAME')" : " (sends: \(known.joined(separator: ", ")))")"
    )
  }
}

// MARK: - One set of names and ports for every part

extension Mixer {
  /// The JACK ports every part wants now (PortNames.swift), but the part `kind` `name` itself:
  /// the strips' direct outs, the inputs' ports, the sends', stemdeck's own. Removed parts still
  /// fading out are left out (their ports go within milliseconds; the driver tries a refused
  /// port again once they do).
  func portOwners(except kind: String, _ name: String) -> [PortOwner] {
    var owners = [PortOwner.own]
    for settings in table.stems.map(\.settings) + table.offline.map(\.settings) where settings.directOut {
      owners.append(PortOwner("stem", settings.name, ports: PortOwner.directOutPorts(settings.name)))
    }
    for bus in busTable.buses where bus.settings.directOut {
      owners.append(PortOwner("bus", bus.settings.name, ports: PortOwner.directOutPorts(bus.settings.name)))
    }
    for input in liveInputs.inputs {
      let s = input.settings
      owners.append(PortOwner("input", s.name, ports: s.portNames + (s.directOut ? PortOwner.directOutPorts(s.name) : [])))
    }
    for aux in sendTable.sends { owners.append(PortOwner("send", aux.name, ports: PortOwner.sendPorts(aux.name))) }
    return owners.filter { !($0.kind == kind && $0.name == name) }
  }

  /// Refuses `owner` (a part added, or given direct outs) when another part has one of its
  /// ports: JACK has one port per name, and the second never got its ports (issue 43, item 11).
  func checkPorts(_ owner: PortOwner) throws(MixerError) {
    if let problem = owner.clashProblem(with: portOwners(except: owner.kind, owner.name)) {
      throw MixerError(
        "cannot \(owner.kind == "send" ? "add" : "give") \(owner.what)\(owner.kind == "send" ? "" : " its ports"): \(problem)")
    }
  }

  /// Refuses a new stem, bus or input named like a send (one set of names for every part).
  func checkNotASend(_ name: String, kind: String) throws(MixerError) {
    if sendTable.position(name) != nil {
      throw MixerError(
        "'\(name)' is a send's name; sends, stems, buses and inputs need different names: choose another name for the \(kind)")
    }
  }

  /// What kind of strip `name` is ("stem", "bus", "input"), or nil.
  func stripKind(of name: String) -> String? {
    if table.stems.contains(where: { $0.settings.name == name }) || table.offline.contains(where: { $0.settings.name == name }) {
      return "stem"
    }
    if busPosition(name) != nil { return "bus" }
    return liveInputs.find(name) != nil ? "input" : nil
  }
}

extension Mixer.Sends {
  /// The aux sends, in order (for `sends`, `stems`, `routes` and the driver).
  public var all: [AuxSend] { mixer.lock.locked { mixer.sendTable.sends } }

  /// Each send's return meter (after the return's volume, where it joins the master), in the
  /// order of `sends.all`.
  public func returnMeters() -> [(name: String, meter: MeterReading)] {
    mixer.lock.locked {
      mixer.sendTable.sends.map { ($0.name, MeterReading(cells: mixer.renderState.pointee.sends.returnMeters + $0.index, channels: 2)) }
    }
  }

  /// Adds aux send `name` (ports `NAME_send_L/R` and `NAME_return_L/R`, registered by the JACK
  /// driver), its return at `returnVolume`. Refused: a bad or taken name, more than
  /// `SendBank.maxSends`.
  public func add(_ name: String, returnVolume: Double = 1) throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      if let problem = NameRules.busProblem(name) {
        throw MixerError(ControlText(problem.replacingOccurrences(of: "bus", with: "send")))
      }
      if mixer.sendTable.position(name) != nil { throw MixerError("a send named '\(name)' already exists") }
      if let kind = mixer.stripKind(of: name) {
        throw MixerError(
          "'\(name)' is a \(kind)'s name; sends, stems, buses and inputs need different names: choose another name for the send")
      }
      try mixer.checkPorts(PortOwner("send", name, ports: PortOwner.sendPorts(name)))
      try MixerError.check(returnVolume, .volume, "return volume")
      let used = Set(mixer.sendTable.sends.map(\.index))
      guard let index = (0..<SendBank.maxSends).first(where: { !used.contains($0) }) else {
        throw MixerError(reason: .limit(what: .sends, max: SendBank.maxSends, adding: name))
      }
      try mixer.send(.addSend(index: Int32(index), returnGain: Float(returnVolume)))
      mixer.sendTable.sends.append(AuxSend(name: name, index: index, returnVolume: returnVolume, levels: [:]))
      (mixer.renderState.pointee.sends.returnMeters + index).pointee.requestReset()
      mixer.isDirty = true
    }
  }

  /// Removes aux send `name` (its ports go at the driver's next poll; its return fades out).
  public func remove(_ name: String) throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      guard let position = mixer.sendTable.position(name) else { throw mixer.unknownSend(name) }
      try mixer.send(.removeSend(index: Int32(mixer.sendTable.sends[position].index)))
      mixer.sendTable.sends.remove(at: position)
      mixer.isDirty = true
    }
  }

  /// Sets stem `stem`'s level into send `sendName` (nil: off), pre- or post-fader; `stem` may
  /// name a bus or a live input too (`sends.set(strip:send:level:)`).
  public func set(stem: String, send sendName: String, level: SendLevel?) throws(MixerError) {
    try mixer.sends.set(strip: stem, send: sendName, level: level)
  }

  /// Sets a strip's level into send `sendName` (nil: off), pre- or post-fader: a stem's (an
  /// offline stem's is kept for saving), a bus's or a live input's. Ramped in the renderer
  /// (10 ms), so a change never clicks; a bus's, like a stem's, at once while stopped.
  public func set(strip: String, send sendName: String, level: SendLevel?) throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      guard let position = mixer.sendTable.position(sendName) else { throw mixer.unknownSend(sendName) }
      let address = try mixer.sendAddress(of: strip)
      if let level { try MixerError.check(level.gain, .volume, "send level") }
      let aux = mixer.sendTable.sends[position]
      if let address {
        try mixer.send(
          .setSendLevel(
            address, index: Int32(aux.index), gain: Float(level?.gain ?? 0),
            preFader: level?.preFader ?? aux.levels[strip]?.preFader ?? false))
      }
      mixer.sendTable.sends[position].levels[strip] = level
      mixer.isDirty = true
    }
  }

  /// The volume of send `sendName`'s return (ramped).
  public func setReturnVolume(_ sendName: String, _ volume: Double) throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      guard let position = mixer.sendTable.position(sendName) else { throw mixer.unknownSend(sendName) }
      try MixerError.check(volume, .volume, "return volume")
      try mixer.send(.setReturnGain(index: Int32(mixer.sendTable.sends[position].index), gain: Float(volume)))
      mixer.sendTable.sends[position].returnVolume = volume
      mixer.isDirty = true
    }
  }

  /// The sends' JACK ports by send index: `NAME_send_L`, `NAME_send_R` (outputs), then
  /// `NAME_return_L`, `NAME_return_R` (inputs). For the driver (JackDriver+Sends.swift).
  public func ports() -> [Int: [String]] {
    mixer.lock.locked {
      var ports: [Int: [String]] = [:]
      for aux in mixer.sendTable.sends { ports[aux.index] = aux.outputPorts + aux.returnPorts }
      return ports
    }
  }
}

// The aux sends' part of the session file (Mixer+Session.swift calls this under the lock); each
// strip's levels are written with the strip.
extension Mixer.Sends {
  func save(into s: inout Session) {
    s.sends = mixer.sendTable.sends.map { SendSettings(name: $0.name, returnVolume: $0.returnVolume) }
  }
}
