import StemdeckSession

/// Every strip's mix at one moment (stems, buses, live inputs, the master), to put back when a
/// change of several strips fails half way (`Mixer.restoreMix`; the console's `commit`).
public struct MixSnapshot: Sendable {
  let stems: [StemSettings]
  let buses: [BusSettings]
  let inputs: [InputSettings]
  let masterVolume: Double
  let masterEQ: EQSettings
}

/// A strip found by its name, once (the name tells the kind: stems, buses and live inputs share
/// one set of names): what the change paths and glides work on.
enum StripRef {
  case stem(Stem)
  /// The bus's position in `busTable.buses`.
  case bus(Int)
  case input(LiveInput)
}

extension Mixer {
  /// The strip named `name`: a bus, a live input or a stem (an offline or unknown stem throws,
  /// with what `find` says).
  func strip(named name: String) throws(MixerError) -> StripRef {
    if let p = busPosition(name) { return .bus(p) }
    if let input = liveInputs.find(name) { return .input(input) }
    return .stem(try find(name))
  }

  /// Applies a checked change to the strip named `name`, whatever its kind, under one lock: the
  /// name is resolved once and the kind's path sends what changed. Nothing changes when `body`
  /// throws.
  func changeStrip(_ name: String, _ body: (inout StripSettings) throws(MixerError) -> Void) throws(MixerError) {
    try lock.locked { () throws(MixerError) in
      switch try strip(named: name) {
      case .bus: try changeBus(name) { (b: inout BusSettings) throws(MixerError) in try body(&b.strip) }
      case .input(let input): try changeInput(input) { (s: inout InputSettings) throws(MixerError) in try body(&s.strip) }
      case .stem: try change(name) { (s: inout StemSettings) throws(MixerError) in try body(&s.strip) }
      }
    }
  }

  /// A strip's volume (a stem's, a bus's or a live input's), in `SettingRange.volume`.
  public func setVolume(_ name: String, _ volume: Double) throws(MixerError) {
    try changeStrip(name) { (s: inout StripSettings) throws(MixerError) in
      try MixerError.check(volume, .volume, "volume")
      s.volume = volume
    }
  }

  /// A strip's pan (a mono source) or balance (stereo), in `SettingRange.pan`.
  public func setPan(_ name: String, _ pan: Double) throws(MixerError) {
    try changeStrip(name) { (s: inout StripSettings) throws(MixerError) in
      try MixerError.check(pan, .pan, "pan")
      s.pan = pan
    }
  }

  public func setMute(_ name: String, _ mute: Bool) throws(MixerError) {
    try changeStrip(name) { (s: inout StripSettings) throws(MixerError) in s.mute = mute }
  }

  public func setSolo(_ name: String, _ solo: Bool) throws(MixerError) {
    try changeStrip(name) { (s: inout StripSettings) throws(MixerError) in s.solo = solo }
  }

  /// A strip's channel EQ (it glides there while the transport plays).
  public func setEQ(_ name: String, _ eq: EQSettings) throws(MixerError) {
    try changeStrip(name) { (s: inout StripSettings) throws(MixerError) in
      try Mixer.checkEQ(eq, of: "'\(name)'")
      s.eq = eq
    }
  }

  /// Turns a strip's direct outs on or off (the JACK driver registers the ports from
  /// `directOutSlots()`; with them the strip leaves its destination).
  public func setDirectOut(_ name: String, _ on: Bool) throws(MixerError) {
    try changeStrip(name) { (s: inout StripSettings) throws(MixerError) in s.directOut = on }
  }

  /// The mix of every strip now.
  public func mixSnapshot() -> MixSnapshot {
    lock.locked {
      MixSnapshot(
        stems: table.stems.map(\.settings), buses: busTable.buses.map(\.settings), inputs: liveInputs.inputs.map(\.settings),
        masterVolume: masterVolume, masterEQ: masterEQ)
    }
  }

  /// Puts back every strip's mix as `snapshot` had it, one change per strip through its kind's
  /// path (a strip that did not change is not touched, so a glide running on it runs on): the
  /// strip's mix (`StripSettings.withMix(of:)`: volume, pan, mute, solo, EQ and any field added
  /// to the strip), a stem's rate, the master's volume and EQ. Strips added or removed since are
  /// left as they are; routing, sends and direct outs are not part of the mix.
  public func restoreMix(_ snapshot: MixSnapshot) {
    lock.locked {
      // A strip removed since throws (unknown name): nothing to put back.
      for old in snapshot.stems {
        try? change(old.name) { (s: inout StemSettings) throws(MixerError) in
          s.strip = s.strip.withMix(of: old.strip)
          s.rate = old.rate
        }
      }
      for (name, old) in snapshot.buses.map({ ($0.name, $0.strip) }) + snapshot.inputs.map({ ($0.name, $0.strip) }) {
        try? changeStrip(name) { (s: inout StripSettings) throws(MixerError) in s = s.withMix(of: old) }
      }
      if masterVolume != snapshot.masterVolume { try? setMasterVolume(snapshot.masterVolume) }
      if masterEQ != snapshot.masterEQ { try? setMasterEQ(snapshot.masterEQ) }
    }
  }
}
