import StemdeckAudioFile
import StemdeckControl
import StemdeckEngine
import StemdeckSession
import StemdeckText

/// What the full-screen mixer view shows, read from the live session on the control thread
/// (between `serviceOnce` steps) and nothing else: the drawing (`MixerScreen`) only renders a
/// model, and the view (`MixerView`) only turns keys into the same `Mixer` calls the commands make.
/// Values are the mixer's own (linear volume, pan −1…1, rate, dB meters), not text. The REPL's
/// `stems` and `meters` (Display.swift) are drawn from the same strips.
package struct MixerViewModel {
  package struct Meter: Equatable {
    /// dB (−160 for silence, above 0 for overs).
    package var peak: Double
    package var rms: Double
    /// The highest peak of the last 3 seconds (the meter's hold).
    package var hold: Double
    package var clipped: Bool
    /// Samples over full scale since the last `meters reset`.
    package var clips = 0
    package init(peak: Double, rms: Double, hold: Double, clipped: Bool, clips: Int = 0) {
      self.peak = peak
      self.rms = rms
      self.hold = hold
      self.clipped = clipped
      self.clips = clips
    }
  }

  package struct Flags: OptionSet, Equatable {
    package let rawValue: Int
    package init(rawValue: Int) { self.rawValue = rawValue }
    package static let mute = Flags(rawValue: 1)
    package static let solo = Flags(rawValue: 2)
    package static let directOut = Flags(rawValue: 4)
    package static let gliding = Flags(rawValue: 8)
    package static let ended = Flags(rawValue: 16)
    package static let underrun = Flags(rawValue: 32)
    package static let unreadable = Flags(rawValue: 64)
    /// The stem's channel EQ is on and not flat (`eq NAME`).
    package static let eq = Flags(rawValue: 128)
    /// The stem is in stretch mode: `fine` (Rubber Band) or `fast` (WSOLA); the `stems` table's T and F.
    package static let stretch = Flags(rawValue: 256)
    package static let stretchFast = Flags(rawValue: 512)
    /// Solo-safe: heard whatever is soloed (`safe NAME`; live inputs are from the start).
    package static let soloSafe = Flags(rawValue: 1024)
    /// On the cue bus, before or after its fader (`cue NAME`; the view's C, not the table's).
    package static let cue = Flags(rawValue: 2048)
    /// Plugin inserts, at least one of them in (`insert add`; the view's X).
    package static let inserts = Flags(rawValue: 4096)
    /// Plugin inserts, every one bypassed (the view's x, and its `x` key).
    package static let insertsOut = Flags(rawValue: 8192)

    /// The letters of the `stems` table (its legend: M muted, S solo, D direct outs, G gliding,
    /// E ended, U underruns, ! unreadable, L solo-safe; the view adds Q: EQ on).
    package static let letters: [(Flags, Character)] = [
      (.mute, "M"), (.solo, "S"), (.directOut, "D"), (.gliding, "G"),
      (.ended, "E"), (.underrun, "U"), (.unreadable, "!"), (.eq, "Q"), (.soloSafe, "L"), (.cue, "C"),
      (.inserts, "X"), (.insertsOut, "x")
    ]
    package var text: String { String(Self.letters.filter { contains($0.0) }.map(\.1)) }

    /// The letters in the order of the `stems` table's flags column (kept as it always was:
    /// scripts read it).
    package static let tableLetters: [(Flags, Character)] = [
      (.mute, "M"), (.solo, "S"), (.directOut, "D"), (.ended, "E"),
      (.unreadable, "!"), (.underrun, "U"), (.gliding, "G"), (.eq, "Q"), (.stretch, "T"), (.stretchFast, "F"),
      (.soloSafe, "L")
    ]
    package var tableText: String { String(Self.tableLetters.filter { contains($0.0) }.map(\.1)) }
  }

  package struct Strip: Equatable {
    /// What the strip is: one kind instead of a flag per kind.
    package enum Kind: Equatable {
      /// A stem (offline ones too: `offline` says why).
      case stem
      /// A bus (Commands+Buses.swift): fader, balance, mute, solo and meter; its name reaches
      /// the bus through the same `Mixer` setters as a stem's.
      case bus
      /// A live input's strip (Commands+Inputs.swift): fader, pan, mute, solo, meters; no file,
      /// rate or loop.
      case input
      case master
      /// The sound effects' strip (`sfx out master`): their meter only; no fader (each effect
      /// has its own volume), pan, rate, loop, mute or solo.
      case effects
    }

    package var name: String
    package var kind: Kind = .stem
    /// The fader: linear 0…2 (the value reached now while a glide runs).
    package var volume: Double
    package var pan: Double?
    package var rate: Double?
    /// The pass being played (1-based) and the number of passes (-1: forever); nil on the master.
    package var loop: Int?
    package var loops: Int?
    package var flags: Flags = []
    package var meters: [Meter]
    package var file: String?
    /// Where a running glide goes (the setting), per parameter; nil when it does not glide.
    package var volumeTarget: Double? = nil
    package var panTarget: Double? = nil
    package var rateTarget: Double? = nil
    /// The audio file: its path as opened, what it holds, its length (s) and where it plays
    /// now within the current pass (s). nil on the master and the effects (and `info`,
    /// `length` and `position` on an offline stem).
    package var path: String? = nil
    package var info: SoundFileInfo? = nil
    package var length: Double? = nil
    package var position: Double? = nil
    /// An offline stem (its file could not be opened; flag `!`): why. It plays nothing; its
    /// fader sets the volume kept in the session for when the file is back.
    package var offline: String? = nil
    /// The frequency of the channel EQ's high-pass (Hz) while the EQ is on (flag `.eq`) and it
    /// is in.
    package var eqHighPass: Double? = nil
    /// The plugin inserts, in order (`insert list NAME`).
    package var inserts: [InsertChip] = []

    package var volumeDB: Double { Decibels.fromAmplitude(volume) }
    package var isMaster: Bool { kind == .master }
    package var isBus: Bool { kind == .bus }
    package var isInput: Bool { kind == .input }
    package var isEffects: Bool { kind == .effects }
    package var isStem: Bool { kind == .stem }
    package var hasFader: Bool { kind != .effects }
    /// Drawn in the normal weight, with "-" for no flags: stems and live inputs (buses, the
    /// master and the effects are bold).
    package var isPlain: Bool { kind == .stem || kind == .input }
  }

  package struct Transport: Equatable {
    package enum State: Equatable { case playing, paused, stopped, starting }
    package var state: State
    package var position: Double
    package var length: Double?
    package var endless: Bool
    package var tempo: Tempo?
    package var dspLoad: Double?
    package var xruns: Int?
    package var server: String?
    package var serverConnected = true
    package var session: String?
    package var unsaved: Bool
    /// The master's live loudness (short-term and integrated LUFS, true peak), when measured.
    package var loudness: LiveLoudness? = nil
    /// Whether a strip is soloed (the others, but solo-safe ones, silent): the bar says SOLO.
    package var soloActive = false
    /// The last mark at or before the position, and a quantised jump waiting (Commands+Marks.swift).
    package var mark: String? = nil
    package var jump: WaitingJump? = nil
  }

  /// The stems, in the session's order (offline ones where the session has them).
  package var strips: [Strip]
  package var master: Strip
  package var transport: Transport
  /// The sound effects, when they play into the master and one is loaded.
  package var effects: Strip? = nil
  /// The recording inputs, while a take is recorded (`meters`; not drawn in the view).
  package var input: Strip? = nil
  /// The live inputs' strips (drawn at the right edge, before the effects and the master).
  package var inputs: [Strip] = []

  package static func meter(_ reading: MeterReading) -> [Meter] {
    reading.channels.map { Meter(peak: $0.peak, rms: $0.average, hold: $0.hold, clipped: $0.clips > 0, clips: $0.clips) }
  }

  /// A playing stem's strip.
  package static func strip(_ s: StemStatus) -> Strip {
    var flags: Flags = []
    if s.settings.mute { flags.insert(.mute) }
    if s.settings.solo { flags.insert(.solo) }
    if s.settings.soloSafe { flags.insert(.soloSafe) }
    if s.settings.directOut { flags.insert(.directOut) }
    if s.isGliding { flags.insert(.gliding) }
    if s.finished { flags.insert(.ended) }
    if s.underruns > 0 { flags.insert(.underrun) }
    if s.failed { flags.insert(.unreadable) }
    if !s.settings.eq.isBypassed { flags.insert(.eq) }
    if s.settings.mode == .stretch { flags.insert(s.settings.stretch == .fast ? .stretchFast : .stretch) }
    let eqHighPass = s.settings.eq.isBypassed ? nil : s.settings.eq.highPass?.frequency
    let loops = s.settings.loops
    // A finished stem's read position has passed its last pass: show the last one.
    var strip = Strip(
      name: s.settings.name, volume: s.glidingVolume ?? s.settings.volume, pan: s.glidingPan ?? s.settings.pan,
      rate: s.glidingRate ?? s.settings.rate,
      loop: loops >= 0 ? min(s.loopIndex, loops) + 1 : s.loopIndex + 1, loops: loops, flags: flags,
      meters: meter(s.meter), file: fileName(s.path))
    if s.glidingVolume != nil { strip.volumeTarget = s.settings.volume }
    if s.glidingPan != nil { strip.panTarget = s.settings.pan }
    if s.glidingRate != nil { strip.rateTarget = s.settings.rate }
    strip.eqHighPass = eqHighPass
    strip.path = s.path
    strip.info = s.info
    strip.length = s.length
    strip.position = s.positionInFile
    return strip
  }

  /// The last component of `path`, escaped as `RawFileName` shows it. Built for every strip on
  /// every frame of the view: a scan for the last '/' (the `split` it replaces was a tenth of
  /// the view's cost at 64 stems).
  package static func fileName(_ path: String) -> String? {
    let bytes = path.utf8
    let start = bytes.lastIndex(of: UInt8(ascii: "/")).map { bytes.index(after: $0) } ?? bytes.startIndex
    guard start != bytes.endIndex else { return path.split(separator: "/").last.map { RawFileName.escaped(String($0)) } }
    return RawFileName.escaped(String(path[start...]))
  }

  /// An offline stem's strip: its settings as the session has them, flag `!`, a silent meter.
  package static func strip(_ o: OfflineStem) -> Strip {
    var flags: Flags = [.unreadable]
    if o.settings.mute { flags.insert(.mute) }
    if o.settings.solo { flags.insert(.solo) }
    if o.settings.soloSafe { flags.insert(.soloSafe) }
    if o.settings.directOut { flags.insert(.directOut) }
    var strip = Strip(
      name: o.settings.name, volume: o.settings.volume, pan: o.settings.pan, rate: o.settings.rate,
      loop: 1, loops: o.settings.loops, flags: flags, meters: [],
      file: fileName(o.path))
    strip.path = o.path
    strip.offline = o.reason
    return strip
  }

  /// Every stem's strip in the session's order: the playing ones in their order, each offline
  /// one merged in at its place in the session (as `Mixer.savedOrder` saves them).
  package static func stemStrips(_ m: Mixer) -> [Strip] {
    let offline = m.offlineStems.sorted { $0.index < $1.index }
    var out: [Strip] = []
    var j = 0
    for s in m.stems.statuses() {
      while j < offline.count && offline[j].index <= out.count {
        out.append(strip(offline[j]))
        j += 1
      }
      out.append(strip(s))
    }
    for k in j..<offline.count { out.append(strip(offline[k])) }
    return out
  }

  /// The buses, after the stems (drawn bold, like the master).
  package static func busStrips(_ m: Mixer) -> [Strip] {
    m.buses.statuses().map { b in
      mixerStrip(b.settings.name, .bus, b.settings.strip, meter(b.meter), gliding: b.gliding)
    }
  }

  /// A bus's or live input's strip from its mix: flags M, S, D, Q, L; while a glide runs, flag G
  /// and the value reached, with the target beside it (as a stem's).
  package static func mixerStrip(
    _ name: String, _ kind: Strip.Kind, _ mix: StripSettings, _ meters: [Meter], gliding: GlideReading
  ) -> Strip {
    var flags: Flags = []
    if mix.mute { flags.insert(.mute) }
    if mix.solo { flags.insert(.solo) }
    if mix.soloSafe { flags.insert(.soloSafe) }
    if mix.directOut { flags.insert(.directOut) }
    if !mix.eq.isBypassed { flags.insert(.eq) }
    var strip = Strip(
      name: name, kind: kind, volume: gliding.volume ?? mix.volume, pan: gliding.pan ?? mix.pan, flags: flags, meters: meters)
    if gliding.any { strip.flags.insert(.gliding) }
    if gliding.volume != nil { strip.volumeTarget = mix.volume }
    if gliding.pan != nil { strip.panTarget = mix.pan }
    return strip
  }

  package static func masterStrip(_ m: Mixer) -> Strip {
    let eq = m.master.eq
    var strip = Strip(
      name: "master", kind: .master, volume: m.master.volume, flags: eq.isBypassed ? [] : .eq,
      meters: meter(m.master.meter()))
    strip.eqHighPass = eq.isBypassed ? nil : eq.highPass?.frequency
    return strip
  }

  /// The effects' strip when they mix into the master and at least one is loaded (or loading).
  package static func effectsStrip(_ m: Mixer) -> Strip? {
    guard m.options.effectsOutput == .master, m.effects.count > 0 else { return nil }
    return Strip(name: "effects", kind: .effects, volume: 1, meters: meter(m.effects.meter()))
  }

  /// The live inputs' strips, in the order they were added.
  package static func liveInputStrips(_ m: Mixer) -> [Strip] {
    m.inputs.statuses().map { i in
      mixerStrip(i.settings.name, .input, i.settings.strip, meter(i.meter), gliding: i.gliding)
    }
  }

  package static func inputStrip(_ m: Mixer) -> Strip {
    Strip(name: "input", volume: 1, meters: meter(m.recorder.meter()))
  }

  /// The model of `console`'s live session now. Control thread only. `freshLoudness`: the
  /// master's loudness measured up to now (waits for the meter's thread: `meters`, queries);
  /// false: as last published, at most about 300 ms old (the mixer view, 30 times a second).
  package static func make(_ console: Console, freshLoudness: Bool = true) -> MixerViewModel {
    let m = console.mixer
    // The cue (Mixer+Cue.swift) is a listening state, not part of a strip's mix: flag C here.
    let cued = Set(m.cues.all.map(\.name))
    // Inserts too: flag X while one is in, x when all are bypassed.
    let chips = m.inserts.chips()
    func cue(_ list: [Strip]) -> [Strip] {
      list.map { s in
        var s = s
        if cued.contains(s.name) { s.flags.insert(.cue) }
        if let c = chips[s.name], s.kind != .effects { withInserts(&s, c) }
        return s
      }
    }
    let strips = cue(stemStrips(m) + busStrips(m))
    var master = masterStrip(m)
    if let c = chips["master"] { withInserts(&master, c) }
    let state: Transport.State
    switch m.transport.state {
    case .playing: state = .playing
    case .paused: state = m.transport.position == 0 ? .stopped : .paused
    case .waitingForDisk: state = .starting
    }
    let duration = m.transport.duration
    var position = m.transport.position
    // As `status`: at the end of a song the position shown is the end, never past it.
    if let duration, !m.transport.hasEndlessStems, m.transport.songHasEnded { position = min(position, duration) }
    var transport = Transport(
      state: state, position: position, length: duration, endless: m.transport.hasEndlessStems, tempo: m.tempo,
      session: console.sessionPath.map { String($0.split(separator: "/").last ?? Substring($0)) },
      unsaved: m.isDirty)
    transport.loudness = freshLoudness ? m.loudness.current() : m.loudness.published()
    transport.soloActive = m.strips.soloActive
    transport.mark = m.marks.all.filter { $0.at <= position + 0.0005 }.max { ($0.at, $0.name) < ($1.at, $1.name) }?.name
    transport.jump = m.marks.waitingJump
    if let d = console.driver {
      transport.dspLoad = d.cpuLoad
      transport.xruns = d.xruns
      transport.server = d.serverName
      transport.serverConnected = d.connected
    }
    return MixerViewModel(
      strips: strips, master: master, transport: transport, effects: effectsStrip(m),
      input: m.recorder.status != nil ? inputStrip(m) : nil, inputs: cue(liveInputStrips(m)))
  }
}

extension MixerViewModel {
  /// `strip` with its inserts and their flag.
  static func withInserts(_ strip: inout Strip, _ chips: [InsertChip]) {
    strip.inserts = chips
    strip.flags.insert(chips.allSatisfy(\.bypassed) ? .insertsOut : .inserts)
  }
}

/// Formatting of the view's values (shared by the strips and the status line).
package enum MixerText {
  /// "-2.0", "+3.5", "0.0", "-inf".
  package static func db(_ v: Double) -> String {
    if Decibels.isSilent(v) || !v.isFinite { return "-inf" }
    let text = NumberFormat.fixed(v, 1)
    return v > 0.04 ? "+" + text : text == "-0.0" ? "0.0" : text
  }

  /// "C", "L25", "R100".
  package static func pan(_ p: Double) -> String {
    let percent = Int((abs(p) * 100).rounded())
    return percent == 0 ? "C" : (p < 0 ? "L" : "R") + String(percent)
  }

  /// "1/1", "2/4", "3/∞" (ASCII: "3/inf").
  /// "4/4": the pass being played (1-based) of how many, for a stem set to `loops` extra
  /// repetitions (`loops 3` plays 4 times; -1 forever: "7/∞").
  package static func loop(_ index: Int, of loops: Int, unicode: Bool) -> String {
    "\(index)/" + (loops < 0 ? (unicode ? "∞" : "inf") : String(loops + 1))
  }

  /// Bar and beat (1-based) at `seconds` for `tempo`: "12.3".
  package static func barBeat(_ seconds: Double, _ tempo: Tempo) -> String {
    let beats = Int((max(0, seconds) * tempo.bpm / 60).rounded(.down))
    let perBar = max(1, tempo.beatsPerBar)
    return "\(beats / perBar + 1).\(beats % perBar + 1)"
  }
}
