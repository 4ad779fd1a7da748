import StemdeckEngine
import StemdeckSession
import StemdeckText

// Channel EQ on the control side: settings checked here, sent to the renderer's `ChannelEQ`
// (a stem's voice, or the master, slot −1) one band per command. docs/architecture.md, *Channel EQ*.

extension EQSettings {
  /// The numbers the renderer's `ChannelEQ` takes.
  public var engineParameters: EQParameters {
    var p = EQParameters()
    p.enabled = enabled
    p.highPassFrequency = highPass?.frequency ?? 0
    p.highPassSections = highPass?.slope == 24 ? 2 : 1
    p.lowFrequency = low.frequency; p.lowGain = low.gain
    p.midFrequency = mid.frequency; p.midGain = mid.gain; p.midQ = mid.q
    p.highFrequency = high.frequency; p.highGain = high.gain
    return p
  }
}

extension Mixer {
  /// Refuses settings out of range: `eq mid.q must be a Q from 0.1 to 10 (got 20)`.
  static func checkEQ(_ eq: EQSettings, of what: String) throws(MixerError) {
    if let problem = eq.problem() { throw MixerError("\(what) eq \(problem.field) \(problem.message)") }
  }

  /// Sends what differs between `old` and `new` (everything when `old` is nil).
  func sendEQ(_ target: StripTarget, from old: EQSettings?, to new: EQSettings) throws(MixerError) {
    let o = old?.engineParameters, n = new.engineParameters
    if o == nil || o!.highPassFrequency != n.highPassFrequency || o!.highPassSections != n.highPassSections {
      try send(
        .setEQ(target, band: .highPass, frequency: n.highPassFrequency, gain: 0, q: Double(n.highPassSections)))
    }
    if o == nil || o!.lowFrequency != n.lowFrequency || o!.lowGain != n.lowGain {
      try send(.setEQ(target, band: .low, frequency: n.lowFrequency, gain: n.lowGain, q: 0))
    }
    if o == nil || o!.midFrequency != n.midFrequency || o!.midGain != n.midGain || o!.midQ != n.midQ {
      try send(.setEQ(target, band: .mid, frequency: n.midFrequency, gain: n.midGain, q: n.midQ))
    }
    if o == nil || o!.highFrequency != n.highFrequency || o!.highGain != n.highGain {
      try send(.setEQ(target, band: .high, frequency: n.highFrequency, gain: n.highGain, q: 0))
    }
    if o == nil || o!.enabled != n.enabled { try send(.setEQEnabled(target, on: n.enabled)) }
  }

}

extension Mixer.Master {
  /// Sets the master bus's channel EQ.
  public func setEQ(_ eq: EQSettings) throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      try Mixer.checkEQ(eq, of: "master")
      guard eq != mixer.masterEQ else { return }
      try mixer.sendEQ(.master, from: mixer.masterEQ, to: eq)
      mixer.masterEQ = eq
      mixer.isDirty = true
    }
  }

  /// The master bus's channel EQ.
  public var eq: EQSettings { mixer.lock.locked { mixer.masterEQ } }
}

extension Mixer.Strips {
  /// A stem's channel EQ (an offline stem's too: it is kept and saved).
  public func eq(_ name: String) throws(MixerError) -> EQSettings {
    try mixer.lock.locked { () throws(MixerError) in
      if let offline = mixer.table.offline.first(where: { $0.settings.name == name }) { return offline.settings.eq }
      if let p = mixer.busPosition(name) { return mixer.busTable.buses[p].settings.eq }
      if let input = mixer.liveInputs.find(name) { return input.settings.eq }
      return try mixer.find(name).settings.eq
    }
  }
}

// The master strip's part of the session file (Mixer+Session.swift calls these under the lock).
extension Mixer.Master {
  func save(into s: inout Session) {
    s.masterVolume = mixer.masterVolume
    s.masterEQ = mixer.masterEQ
  }

  func install(from session: Session) throws(MixerError) {
    try setVolume(session.masterVolume)
    try setEQ(session.masterEQ)
  }
}
