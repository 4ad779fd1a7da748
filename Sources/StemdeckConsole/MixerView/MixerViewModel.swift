import StemdeckControl
import StemdeckEngine
import StemdeckSession

/// What the full-screen mixer view shows, read from the live session on the control thread
/// (between `serviceOnce` steps) and nothing else: the drawing (`MixerScreen`) only renders a
/// model, and the view (`MixerView`) only turns keys into the same `Mixer` calls the commands make.
/// Values are the mixer's own (linear volume, pan −1…1, rate, dB meters), not text.
struct MixerViewModel {
  struct Meter: Equatable {
    /// dB (−160 for silence, above 0 for overs).
    var peak: Double
    var rms: Double
    /// The highest peak of the last 3 seconds (the meter's hold).
    var hold: Double
    var clipped: Bool
  }

  struct Flags: OptionSet, Equatable {
    let rawValue: Int
    static let mute = Flags(rawValue: 1)
    static let solo = Flags(rawValue: 2)
    static let directOut = Flags(rawValue: 4)
    static let gliding = Flags(rawValue: 8)
    static let ended = Flags(rawValue: 16)
    static let underrun = Flags(rawValue: 32)
    static let unreadable = Flags(rawValue: 64)

    /// The letters of the `stems` table (its legend: M muted, S solo, D direct outs, G gliding,
    /// E ended, U underruns, ! unreadable).
    static let letters: [(Flags, Character)] = [(.mute, "M"), (.solo, "S"), (.directOut, "D"), (.gliding, "G"),
                                                 (.ended, "E"), (.underrun, "U"), (.unreadable, "!")]
    var text: String { String(Self.letters.filter { contains($0.0) }.map(\.1)) }
  }

  struct Strip: Equatable {
    var name: String
    var isMaster = false
    /// The fader: linear 0…2 (the value reached now while a glide runs).
    var volume: Double
    var pan: Double?
    var rate: Double?
    /// The pass being played (1-based) and the number of passes (-1: forever); nil on the master.
    var loop: Int?
    var loops: Int?
    var flags: Flags = []
    var meters: [Meter]
    var file: String?

    var volumeDB: Double { Decibels.fromAmplitude(volume) }
  }

  struct Transport: Equatable {
    enum State: Equatable { case playing, paused, stopped, starting }
    var state: State
    var position: Double
    var length: Double?
    var endless: Bool
    var tempo: Tempo?
    var dspLoad: Double?
    var xruns: Int?
    var server: String?
    var serverConnected = true
    var session: String?
    var unsaved: Bool
    /// The master's live loudness (short-term and integrated LUFS, true peak), when measured.
    var loudness: LiveLoudness? = nil
  }

  var strips: [Strip]
  var master: Strip
  var transport: Transport

  static func meter(_ reading: MeterReading) -> [Meter] {
    reading.channels.map { Meter(peak: $0.peak, rms: $0.average, hold: $0.hold, clipped: $0.clips > 0) }
  }

  /// The model of `console`'s live session now. Control thread only.
  static func make(_ console: Console) -> MixerViewModel {
    let m = console.mixer
    let strips = m.stemStatuses().map { s -> Strip in
      var flags: Flags = []
      if s.settings.mute { flags.insert(.mute) }
      if s.settings.solo { flags.insert(.solo) }
      if s.settings.directOut { flags.insert(.directOut) }
      if s.isGliding { flags.insert(.gliding) }
      if s.finished { flags.insert(.ended) }
      if s.underruns > 0 { flags.insert(.underrun) }
      if s.failed { flags.insert(.unreadable) }
      let loops = s.settings.loops
      return Strip(name: s.settings.name, volume: s.glidingVolume ?? s.settings.volume, pan: s.glidingPan ?? s.settings.pan,
                   rate: s.glidingRate ?? s.settings.rate,
                   loop: loops >= 0 ? min(s.loopIndex, loops) + 1 : s.loopIndex + 1, loops: loops, flags: flags,
                   meters: meter(s.meter), file: s.path.split(separator: "/").last.map(String.init))
    }
    let master = Strip(name: "master", isMaster: true, volume: m.masterVolumeSetting, meters: meter(m.masterMeter()))
    let state: Transport.State
    switch m.transportState {
    case .playing: state = .playing
    case .paused: state = m.position == 0 ? .stopped : .paused
    case .waitingForDisk: state = .starting
    }
    let duration = m.duration
    var position = m.position
    // As `status`: at the end of a song the position shown is the end, never past it.
    if let duration, !m.hasEndlessStems, m.songHasEnded { position = min(position, duration) }
    var transport = Transport(state: state, position: position, length: duration, endless: m.hasEndlessStems, tempo: m.tempo,
                              session: console.sessionPath.map { String($0.split(separator: "/").last ?? Substring($0)) },
                              unsaved: m.isDirty)
    transport.loudness = m.masterLoudness()
    if let d = console.driver {
      transport.dspLoad = d.cpuLoad
      transport.xruns = d.xruns
      transport.server = d.serverName
      transport.serverConnected = d.connected
    }
    return MixerViewModel(strips: strips, master: master, transport: transport)
  }
}

/// Formatting of the view's values (shared by the strips and the status line).
enum MixerText {
  /// "-2.0", "+3.5", "0.0", "-inf".
  static func db(_ v: Double) -> String {
    if v <= -160 || !v.isFinite { return "-inf" }
    let text = NumberFormat.fixed(v, 1)
    return v > 0.04 ? "+" + text : text == "-0.0" ? "0.0" : text
  }

  /// "C", "L25", "R100".
  static func pan(_ p: Double) -> String {
    let percent = Int((abs(p) * 100).rounded())
    return percent == 0 ? "C" : (p < 0 ? "L" : "R") + String(percent)
  }

  /// "1/1", "2/4", "3/∞" (ASCII: "3/inf").
  static func loop(_ index: Int, of loops: Int, unicode: Bool) -> String {
    "\(index)/" + (loops < 0 ? (unicode ? "∞" : "inf") : String(loops))
  }

  /// Bar and beat (1-based) at `seconds` for `tempo`: "12.3".
  static func barBeat(_ seconds: Double, _ tempo: Tempo) -> String {
    let beats = Int((max(0, seconds) * tempo.bpm / 60).rounded(.down))
    let perBar = max(1, tempo.beatsPerBar)
    return "\(beats / perBar + 1).\(beats % perBar + 1)"
  }
}
