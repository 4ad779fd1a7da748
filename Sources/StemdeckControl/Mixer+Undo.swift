import StemdeckAudioFile
import StemdeckSession
import StemdeckText

// Undo and redo (issue 41; docs/architecture.md, *Undo and redo*). The console keeps the session
// as it was before and after each change (`snapshot`); undoing a step moves the live mix from its
// "after" to its "before" (`revert(from:to:)`), redoing it the other way. Only what the two differ
// in is touched, element by element (a stem, a bus, a live input, an aux send, a top-level value),
// so a change made since to another strip stays as it is. Everything goes through the mixer's own
// change paths (`changeStrip`, `stems.add`, `buses.add`, …): checked, sent and glitch-free as any
// command, and a re-added stem joins the transport where the loop is, as if never removed.

extension Mixer {

  /// The moves of `revert`, in an order every intermediate state accepts: what `target` adds
  /// comes first (aux sends, then buses, inputs and stems, so a route or a send finds its
  /// destination), then the changed elements, then what `target` removes (a bus once nothing
  /// feeds it), then the order of each list. Under the lock.
  func move(from a: Session, to b: Session) throws(MixerError) {
    try moveTopLevel(from: a, to: b)
    let sendsA = Self.byName(a.sends, \.name)
    for s in b.sends where sendsA[s.name] == nil && sendTable.position(s.name) == nil {
      try sends.add(s.name, returnVolume: s.returnVolume)
    }
    for s in b.sends where sendsA[s.name].map({ $0 != s }) ?? false { try sends.setReturnVolume(s.name, s.returnVolume) }
    let busesA = Self.byName(a.buses, \.name)
    // New buses come in bare (a bus may feed another that comes in here); their strips follow.
    for bus in b.buses where busesA[bus.name] == nil && busPosition(bus.name) == nil { try buses.add(BusSettings(name: bus.name)) }
    let inputsA = Self.byName(a.inputs, \.name)
    for input in b.inputs where liveInputs.find(input.name) != nil && (inputsA[input.name].map { $0.channels != input.channels } ?? false) {
      try inputs.remove(input.name)  // a mono input that was stereo: a new strip
    }
    for input in b.inputs where liveInputs.find(input.name) == nil && (inputsA[input.name].map { $0 != input } ?? true) {
      var bare = input
      bare.strip.bus = nil
      bare.strip.sends = []
      try inputs.add(bare)
    }
    let stemsA = Self.byName(a.stems, \.name)
    for (index, stem) in b.stems.enumerated() {
      let before = stemsA[stem.name]
      if before?.file != stem.file, before != nil, hasStem(stem.name) { try stems.remove(stem.name) }  // `replace`d
      if !hasStem(stem.name) && before != stem { try bringBack(stem, at: index) }
    }
    // The changed elements: their strips (a route, solo, EQ…), their own fields, their sends.
    for bus in b.buses where busesA[bus.name] != bus {
      try setStrip(bus.name, to: bus.strip, from: busesA[bus.name]?.strip)
    }
    for input in b.inputs where inputsA[input.name] != input {
      try setStrip(input.name, to: input.strip, from: inputsA[input.name]?.strip)
    }
    for stem in b.stems where stemsA[stem.name] != stem { try setStem(stem, from: stemsA[stem.name]) }
    // What `target` has not: stems and inputs first, then buses (nothing feeds them any more).
    let namesB = Set(b.stems.map(\.name)), inputsB = Set(b.inputs.map(\.name)), busesB = Set(b.buses.map(\.name))
    for stem in a.stems where !namesB.contains(stem.name) && hasStem(stem.name) { try stems.remove(stem.name) }
    for input in a.inputs where !inputsB.contains(input.name) && liveInputs.find(input.name) != nil { try inputs.remove(input.name) }
    for bus in a.buses.reversed() where !busesB.contains(bus.name) && busPosition(bus.name) != nil { try buses.remove(bus.name) }
    let sendsB = Set(b.sends.map(\.name))
    for s in a.sends where !sendsB.contains(s.name) && sendTable.position(s.name) != nil { try sends.remove(s.name) }
    try reorder(like: b)
    try moveInserts(from: a, to: b)  // Mixer+InsertUndo.swift
  }

  /// The session-wide values: quality, options, recording, tempo, scenes, the master, MIDI mappings.
  func moveTopLevel(from a: Session, to b: Session) throws(MixerError) {
    if a.quality != b.quality { try setQuality(b.quality) }
    if a.options != b.options { try setOptions(b.options) }
    // Values the renderer does not hold: taken as they are.
    func take<T: Equatable>(_ field: ReferenceWritableKeyPath<Mixer, T>, _ a: T, _ b: T) {
      guard a != b, self[keyPath: field] != b else { return }
      self[keyPath: field] = b
      isDirty = true
    }
    take(\.recording, a.recording, b.recording)
    take(\.tempoSetting, a.tempo, b.tempo)
    take(\.clickSetting, a.click, b.click)
    take(\.markList, a.marks, b.marks)
    take(\.sceneStore, a.scenes, b.scenes)
    take(\.recallSafe, a.recallSafe, b.recallSafe)
    if a.masterVolume != b.masterVolume { try master.setVolume(b.masterVolume) }
    if a.masterEQ != b.masterEQ { try master.setEQ(b.masterEQ) }
    if a.midi != b.midi && midiSettings != b.midi {
      midiSettings = b.midi
      midiState.learning = nil
      midiState.stripTakeover = [:]
      try publishMidi()
      isDirty = true
    }
  }

  func hasStem(_ name: String) -> Bool {
    table.stems.contains { $0.settings.name == name } || table.offline.contains { $0.settings.name == name }
  }

  /// Puts a removed stem back: its file opened again, joining the transport where the others are
  /// (so it plays in place, the same frame of its loop as if never removed). A file that cannot
  /// be opened any more brings it back offline, as an open of the session would. Its sends follow
  /// with its strip (`setStem`).
  func bringBack(_ settings: StemSettings, at index: Int) throws(MixerError) {
    var bare = settings
    bare.strip.sends = []
    do throws(SoundFileError) { _ = try SoundFile(readingFrom: settings.file) } catch {
      table.offline.append(OfflineStem(settings: bare, path: settings.file, reason: error.reason, index: index))
      isDirty = true
      return
    }
    try insertStem(path: settings.file, settings: bare, pendingAt: nil)
  }

  /// A bus's or live input's strip to `strip` (its sends set one by one); `old`: what the step
  /// had before, so that only the sends it changed are touched.
  func setStrip(_ name: String, to strip: StripSettings, from old: StripSettings?) throws(MixerError) {
    try changeStrip(name) { (s: inout StripSettings) throws(MixerError) in
      let sends = s.sends
      s = strip
      s.sends = sends
    }
    try setSends(of: name, to: strip.sends, from: old?.sends)
  }

  /// A stem's settings to `target`: its strip through the one strip path, its rate and loop
  /// count through `change`, and what needs a new voice (mode, stretcher, pitch, loop region,
  /// start offset) through one rebuild that re-syncs the transport.
  func setStem(_ target: StemSettings, from old: StemSettings?) throws(MixerError) {
    let name = target.name
    if let i = table.offline.firstIndex(where: { $0.settings.name == name }) {
      table.offline[i].settings = target
      isDirty = true
      return
    }
    let stem = try find(name)
    var rebuilt = stem.settings
    rebuilt.mode = target.mode
    rebuilt.stretch = target.stretch
    rebuilt.pitch = target.pitch
    rebuilt.loopStart = target.loopStart
    rebuilt.loopEnd = target.loopEnd
    rebuilt.crossfade = target.crossfade
    rebuilt.startOffset = target.startOffset
    if rebuilt != stem.settings {
      let position = currentTransportFrame()
      try rebuildStems([(stem, rebuilt)], quality: quality, what: "put '\(printableText(name))' back")
      try locate(toFrame: position)
      isDirty = true
    }
    try change(name) { (s: inout StemSettings) throws(MixerError) in
      let sends = s.strip.sends
      s.strip = target.strip
      s.strip.sends = sends
      s.rate = target.rate
      s.loops = target.loops
    }
    try setSends(of: name, to: target.strip.sends, from: old?.strip.sends)
  }

  /// A strip's levels into the aux sends: those `target` and `old` disagree on (all of them
  /// when `old` is nil: the strip came back).
  func setSends(of name: String, to target: [StemSend], from old: [StemSend]?) throws(MixerError) {
    guard target != old else { return }
    let wanted = Dictionary(target.map { ($0.to, $0) }, uniquingKeysWith: { x, _ in x })
    let had = Dictionary((old ?? []).map { ($0.to, $0) }, uniquingKeysWith: { x, _ in x })
    for sendName in Set(wanted.keys).union(had.keys) where old == nil || wanted[sendName] != had[sendName] {
      guard sendTable.position(sendName) != nil else { continue }
      try sends.set(strip: name, send: sendName, level: wanted[sendName].map { SendLevel(gain: $0.level, preFader: $0.preFader) })
    }
  }

  /// Each list in `session`'s order (a stem brought back goes back to its place, so the session
  /// saved after an undo is the one saved before the change); what `session` has not stays after.
  func reorder(like session: Session) throws(MixerError) {
    func rank(_ names: [String]) -> [String: Int] {
      Dictionary(names.enumerated().map { ($1, $0) }, uniquingKeysWith: { x, _ in x })
    }
    let stems = rank(session.stems.map(\.name))
    table.stems = Self.ordered(table.stems, by: stems) { $0.settings.name }
    for i in table.offline.indices { table.offline[i].index = stems[table.offline[i].settings.name] ?? table.offline[i].index }
    let buses = Self.ordered(busTable.buses, by: rank(session.buses.map(\.name))) { $0.settings.name }
    if buses.map(\.settings.name) != busTable.buses.map(\.settings.name) {
      busTable.buses = buses
      try publishBusPlan()
    }
    liveInputs.inputs = Self.ordered(liveInputs.inputs, by: rank(session.inputs.map(\.name))) { $0.settings.name }
    sendTable.sends = Self.ordered(sendTable.sends, by: rank(session.sends.map(\.name))) { $0.name }
  }

  /// A list's elements by name (the first of a name, should one repeat).
  static func byName<T>(_ items: [T], _ name: KeyPath<T, String>) -> [String: T] {
    Dictionary(items.map { ($0[keyPath: name], $0) }, uniquingKeysWith: { x, _ in x })
  }

  /// `items` sorted by their names' ranks, the unranked after in their order (a stable sort).
  static func ordered<T>(_ items: [T], by rank: [String: Int], name: (T) -> String) -> [T] {
    items.enumerated().sorted { x, y in
      let rx = rank[name(x.element)] ?? Int.max, ry = rank[name(y.element)] ?? Int.max
      return rx != ry ? rx < ry : x.offset < y.offset
    }.map(\.element)
  }
}

extension Mixer.History {
  /// The file name snapshots are taken for: its folder is `/`, so every stem's file stays an
  /// absolute path and a removed stem can be opened again from its snapshot.
  public static let snapshotPath = "/stemdeck-undo.json"

  /// How many changes the mixer has taken (each one that marks the session unsaved): the console
  /// compares it before and after a command, a MIDI move or a key of the mixer view to know
  /// whether the mix may have changed, without taking a snapshot each time.
  public var changeCount: Int { mixer.lock.locked { mixer.changes } }

  /// The mix as undo sees it: the session as it would be saved, without what is not the mix (the
  /// transport's position, JACK connections, which the patchbay owns, and the sound effects).
  public func snapshot() -> Session {
    var s = mixer.session(savingTo: Self.snapshotPath)
    s.position = 0
    s.connections = [:]
    s.effects = []
    return s
  }

  /// Moves the live mix from `from` to `target` wherever the two differ (what undo and redo do).
  /// All or nothing: when a part cannot be moved (a stem's file is gone, no stem slot is free),
  /// what was moved already is moved back and the error says which part and why.
  public func revert(from: Session, to target: Session) throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      do throws(MixerError) { try mixer.move(from: from, to: target) } catch {
        try? mixer.move(from: target, to: from)
        throw error
      }
    }
  }
}
