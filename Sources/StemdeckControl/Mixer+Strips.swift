import StemdeckEngine
import StemdeckSession
import StemdeckText

/// Every strip's mix at one moment (stems, buses, live inputs, the master), to put back when a
/// change of several strips fails half way (`mixer.strips.restore`; the console's `commit`).
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
  /// The strip named `name`: a bus, a live input or a stem (an offline stem throws, with what
  /// `find` says). A name of nothing is an unknown stem while stems are all there is, else an
  /// unknown strip, with the closest name of any kind.
  func strip(named name: String) throws(MixerError) -> StripRef {
    if let p = busPosition(name) { return .bus(p) }
    if let input = liveInputs.find(name) { return .input(input) }
    let isStem = table.stems.contains { $0.settings.name == name } || table.offline.contains { $0.settings.name == name }
    if !isStem && !(busTable.buses.isEmpty && liveInputs.inputs.isEmpty) { throw unknownStrip(name) }
    return .stem(try find(name))
  }

  /// Where the renderer keeps the strip.
  func target(of strip: StripRef) -> StripTarget {
    switch strip {
    case .stem(let stem): .stem(slot: stem.slot)
    case .bus(let p): .bus(busTable.buses[p].index)
    case .input(let input): .input(Int32(input.index))
    }
  }

  /// The strip's mix as set (every kind's `StripSettings`).
  func mix(of strip: StripRef) -> StripSettings {
    switch strip {
    case .stem(let stem): stem.settings.strip
    case .bus(let p): busTable.buses[p].settings.strip
    case .input(let input): input.settings.strip
    }
  }

  func store(_ mix: StripSettings, in strip: StripRef) {
    switch strip {
    case .stem(let stem): stem.settings.strip = mix
    case .bus(let p): busTable.buses[p].settings.strip = mix
    case .input(let input): input.settings.strip = mix
    }
  }

  /// Whether the strip is heard with solo as it is (`anySolo`): see `stripAudible`, `busAudible`.
  func isAudible(_ strip: StripRef, anySolo solo: Bool) -> Bool {
    switch strip {
    case .bus(let p): busAudible(busTable.buses[p].settings, anySolo: solo)
    case .stem, .input: stripAudible(mix(of: strip), anySolo: solo)
    }
  }

  /// The audibility last sent to the renderer (only changes are sent: `pushAllGains`).
  func sentAudible(_ strip: StripRef) -> Bool {
    switch strip {
    case .stem(let stem): stem.sentAudible
    case .bus(let p): busTable.buses[p].sentAudible
    case .input(let input): input.sentAudible
    }
  }

  /// Where the strip's running glides have got to, as the renderer last published it (nil: that
  /// parameter is not gliding).
  func glideProgress(of strip: StripRef) -> GlideReading {
    glideCells(of: strip).pointee.reading()
  }

  /// Where the renderer publishes the strip's glides.
  func glideCells(of strip: StripRef) -> UnsafeMutablePointer<GlideCells> {
    switch strip {
    case .stem(let stem): stem.shared.pointer.pointee.glides
    case .bus(let p): renderState.pointee.buses.glides + Int(busTable.buses[p].index)
    case .input(let input): renderState.pointee.inputs.glides + input.index
    }
  }

  /// Every live strip: stems, buses, inputs.
  var allStrips: [StripRef] {
    table.stems.map { .stem($0) } + busTable.buses.indices.map { .bus($0) } + liveInputs.inputs.map { .input($0) }
  }

  /// Sends a strip's levels (only those in `levels`, so the others' glides run on) and its
  /// audibility.
  func pushLevels(_ strip: StripRef, _ levels: Set<GlideParameter> = [], anySolo solo: Bool? = nil) throws(MixerError) {
    let audible = isAudible(strip, anySolo: solo ?? anySolo())
    try send(.setStripLevels(target(of: strip), Self.levelChange(mix(of: strip), levels, audible: audible)))
    // A value set ends its glide: not told as running from now on.
    glideCells(of: strip).pointee.forget(Array(levels))
    switch strip {
    case .stem(let stem): stem.sentAudible = audible
    case .bus(let p): busTable.buses[p].sentAudible = audible
    case .input(let input): input.sentAudible = audible
    }
  }

  /// The table's rows the renderer hears as a strip's levels (volume, pan, width…): a number
  /// row kept in `StripSettings` whose key names a `GlideParameter`.
  static let levelRows: [(GlideParameter, WritableKeyPath<StripSettings, Double> & Sendable)] = StripParameter.all.compactMap { row in
    guard case .number(let keyPath)? = row.field, let parameter = GlideParameter(rawValue: row.key) else { return nil }
    return (parameter, keyPath)
  }

  /// The renderer's levels of a strip's mix: those in `levels`, the others left as they are.
  static func levelChange(_ mix: StripSettings, _ levels: Set<GlideParameter>, audible: Bool) -> StripLevelChange {
    var change = StripLevelChange(audible: audible)
    for (parameter, keyPath) in levelRows where levels.contains(parameter) { change[parameter] = mix[keyPath: keyPath] }
    return change
  }

  /// Every level of a strip's mix (a strip the renderer starts with).
  static func allLevels(_ mix: StripSettings, audible: Bool) -> StripLevelChange {
    levelChange(mix, Set(levelRows.map(\.0)), audible: audible)
  }

  /// The renderer's levels that differ between two mixes.
  static func levelsChanged(from old: StripSettings, to new: StripSettings) -> Set<GlideParameter> {
    Set(levelRows.filter { old[keyPath: $0.1] != new[keyPath: $0.1] }.map(\.0))
  }

  /// Sends the audibility of every strip whose mute/solo state as heard changed since it was
  /// last sent. Only the changes go: a solo on a large session costs one command per strip it
  /// silences or brings back, so adding N soloed stems (or `solo all`) is linear, not N²
  /// commands (which overflowed the command ring at about 127 stems). Solo follows the buses
  /// (Mixer+Buses.swift).
  func pushAllGains() throws(MixerError) {
    let solo = anySolo()
    for strip in allStrips where isAudible(strip, anySolo: solo) != sentAudible(strip) { try pushLevels(strip, anySolo: solo) }
  }

  /// Applies a checked change to the strip named `name`, whatever its kind, under one lock: the
  /// name is resolved once. Nothing changes when `body` throws.
  func changeStrip(_ name: String, _ body: (inout StripSettings) throws(MixerError) -> Void) throws(MixerError) {
    try lock.locked { () throws(MixerError) in try changeStrip(try strip(named: name), body) }
  }

  /// The one change path of a strip's mix (a stem's own fields go through `change`): the new
  /// mix is checked, stored and what changed is sent (`publish`). Under the lock.
  func changeStrip(_ strip: StripRef, _ body: (inout StripSettings) throws(MixerError) -> Void) throws(MixerError) {
    let old = mix(of: strip)
    var new = old
    try body(&new)
    guard new != old else { return }
    for control in StripParameter.all {
      if case .number(let keyPath)? = control.field, let rule = control.rule {
        try MixerError.check(new[keyPath: keyPath], rule, control.key)
      }
    }
    if new.eq != old.eq { try Mixer.checkEQ(new.eq, of: "'\(printableText(name(of: strip)))'") }
    if new.bus != old.bus { try routeLocked(name(of: strip), to: new.bus, publish: true) }
    store(new, in: strip)
    try publish(strip, from: old, to: new)
    isDirty = true
  }

  func name(of strip: StripRef) -> String {
    switch strip {
    case .stem(let stem): stem.settings.name
    case .bus(let p): busTable.buses[p].settings.name
    case .input(let input): input.settings.name
    }
  }

  /// Sends what changed in a strip's mix, stored already (the route went with `routeLocked`):
  /// its EQ, its levels and audibility, and everyone's audibility when solo or the route moved.
  func publish(_ strip: StripRef, from old: StripSettings, to new: StripSettings) throws(MixerError) {
    if new.eq != old.eq { try sendEQ(target(of: strip), from: old.eq, to: new.eq) }
    let levels = Self.levelsChanged(from: old, to: new)
    let heard = new.mute != old.mute || new.solo != old.solo || new.soloSafe != old.soloSafe
    if !levels.isEmpty || heard || new.bus != old.bus {
      try pushLevels(strip, levels)
    }
    // Everyone's audibility when what solo silences or keeps open changed: a solo, a solo-safe
    // flag, a solo-safe strip's mute (the buses it keeps open), or a route.
    let opens = new.solo != old.solo || new.soloSafe != old.soloSafe || (new.soloSafe && new.mute != old.mute)
    if opens || new.bus != old.bus { try pushAllGains() }
  }

}

extension Mixer.Strips {
  /// The refusal of `name` when it names no strip, as `strip(named:)` words it: an unknown stem
  /// while stems are all there is, else an unknown strip with the closest name of any kind.
  public func unknownError(_ name: String) -> MixerError {
    mixer.lock.locked {
      guard mixer.busTable.buses.isEmpty && mixer.liveInputs.inputs.isEmpty else { return mixer.unknownStrip(name) }
      return MixerError.unknownStem(name, known: mixer.table.stems.map(\.settings.name) + mixer.table.offline.map(\.settings.name))
    }
  }

  /// Sets the control `control` (a row of the strip controls' table, StripParameter.swift) of
  /// the strip `name`: a level or number to `value`, a toggle on when `value` is not 0. What a
  /// front end driven by the table calls; the named setters below are the same changes.
  public func set(_ control: StripParameter, of name: String, to value: Double) throws(MixerError) {
    switch control.field {
    case .toggle(let keyPath)?:
      try mixer.changeStrip(name) { (s: inout StripSettings) throws(MixerError) in s[keyPath: keyPath] = value != 0 }
    case .number(let keyPath)?:
      try mixer.changeStrip(name) { (s: inout StripSettings) throws(MixerError) in
        if let rule = control.rule { try MixerError.check(value, rule, control.key) }
        s[keyPath: keyPath] = value
      }
    case nil:
      // The controls a kind keeps itself: a stem's rate.
      guard control.key == StripParameter.rate.key else { throw MixerError("'\(name)': \(control.key) cannot be set") }
      try mixer.stems.setRate(name, value)
    }
  }

  /// The value of the control `control` (a value row of the table) of the strip `name`, as set.
  public func value(of control: StripParameter, of name: String) throws(MixerError) -> Double {
    try mixer.lock.locked { () throws(MixerError) -> Double in
      let strip = try mixer.strip(named: name)
      switch (control.field, strip) {
      case (.number(let keyPath)?, _): return mixer.mix(of: strip)[keyPath: keyPath]
      case (.toggle(let keyPath)?, _): return mixer.mix(of: strip)[keyPath: keyPath] ? 1 : 0
      case (nil, .stem(let stem)) where control.key == StripParameter.rate.key: return stem.settings.rate
      default: throw MixerError("'\(name)' has no \(control.key)")
      }
    }
  }

  /// A strip's volume (a stem's, a bus's or a live input's), in `SettingRange.volume`: `set(.volume, …)`.
  public func setVolume(_ name: String, _ volume: Double) throws(MixerError) {
    try set(.volume, of: name, to: volume)
  }

  /// A strip's pan (a mono source) or balance (stereo), in `SettingRange.pan`: `set(.pan, …)`.
  public func setPan(_ name: String, _ pan: Double) throws(MixerError) {
    try set(.pan, of: name, to: pan)
  }

  public func setMute(_ name: String, _ mute: Bool) throws(MixerError) {
    try set(.mute, of: name, to: mute ? 1 : 0)
  }

  public func setSolo(_ name: String, _ solo: Bool) throws(MixerError) {
    try set(.solo, of: name, to: solo ? 1 : 0)
  }

  /// A strip's channel EQ (it glides there while the transport plays).
  public func setEQ(_ name: String, _ eq: EQSettings) throws(MixerError) {
    try mixer.changeStrip(name) { (s: inout StripSettings) throws(MixerError) in
      try Mixer.checkEQ(eq, of: "'\(name)'")
      s.eq = eq
    }
  }

  /// Turns a strip's direct outs on or off (the JACK driver registers the ports from
  /// `stems.directOutSlots()`; with them the strip leaves its destination).
  /// Refused when another part has one of its ports (`checkPorts`, Mixer+Sends.swift).
  public func setDirectOut(_ name: String, _ on: Bool) throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      if on, let kind = mixer.stripKind(of: name) {
        let input = mixer.liveInputs.find(name).map(\.settings.portNames) ?? []
        try mixer.checkPorts(PortOwner(kind, name, ports: input + PortOwner.directOutPorts(name)))
      }
      try mixer.changeStrip(name) { (s: inout StripSettings) throws(MixerError) in s.directOut = on }
    }
  }

  /// The mix of every strip now.
  public func snapshot() -> MixSnapshot {
    mixer.lock.locked {
      MixSnapshot(
        stems: mixer.table.stems.map(\.settings), buses: mixer.busTable.buses.map(\.settings),
        inputs: mixer.liveInputs.inputs.map(\.settings),
        masterVolume: mixer.masterVolume, masterEQ: mixer.masterEQ)
    }
  }

  /// Puts back every strip's mix as `snapshot` had it, one change per strip through its kind's
  /// path (a strip that did not change is not touched, so a glide running on it runs on): the
  /// strip's mix (`StripSettings.withMix(of:)`: volume, pan, mute, solo, EQ and any field added
  /// to the strip), a stem's rate, the master's volume and EQ. Strips added or removed since are
  /// left as they are; routing, sends and direct outs are not part of the mix.
  public func restore(_ snapshot: MixSnapshot) {
    mixer.lock.locked {
      // A strip removed since throws (unknown name): nothing to put back.
      for old in snapshot.stems {
        try? mixer.change(old.name) { (s: inout StemSettings) throws(MixerError) in
          s.strip = s.strip.withMix(of: old.strip)
          s.rate = old.rate
        }
      }
      for (name, old) in snapshot.buses.map({ ($0.name, $0.strip) }) + snapshot.inputs.map({ ($0.name, $0.strip) }) {
        try? mixer.changeStrip(name) { (s: inout StripSettings) throws(MixerError) in s = s.withMix(of: old) }
      }
      if mixer.masterVolume != snapshot.masterVolume { try? mixer.master.setVolume(snapshot.masterVolume) }
      if mixer.masterEQ != snapshot.masterEQ { try? mixer.master.setEQ(snapshot.masterEQ) }
    }
  }
}
