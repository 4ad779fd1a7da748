// The in-memory session model: plain values, no I/O. `SessionFile` reads and writes it.

/// The rate converter a session asks for, from cheapest to best.
///
/// The raw value is the word written in the session file (`"quality" : "fast"`).
public enum ResamplerQuality: String, CaseIterable, Sendable {
  /// Linear interpolation (`SRC_LINEAR`): cheapest, audible aliasing.
  case linear
  /// stemdeck's own band-limited sinc (`SincResampler`, SIMD): a lower worst-case residual than
  /// libsamplerate's `SRC_SINC_FASTEST`, which it replaced (not tone by tone: README, Sound), at a
  /// third of the CPU; while a stem holds a rate other than 1, zita-resampler's `VResampler` set
  /// up for that rate (StemdeckEngine, HeldConverter.swift). The default.
  case fast
  /// The medium-quality sinc converter (`SRC_SINC_MEDIUM_QUALITY`).
  case medium
  /// The best-quality sinc converter (`SRC_SINC_BEST_QUALITY`): most CPU.
  case best
}

/// Where the meters tap each stem's signal.
public enum MeterPoint: String, CaseIterable, Sendable {
  /// Before the stem's volume and pan (what the file contains).
  case pre
  /// After volume and pan (what goes into the mix). The default.
  case post
}

/// How a setlist moves from one song to the next (`"options" : { "songChange" : ... }`).
public enum SongChange: String, CaseIterable, Sendable {
  /// The next song starts exactly where the previous one ends. The default.
  case gapless
  /// The songs overlap by `SessionOptions.crossfadeSeconds`, one fading out as the next fades in.
  case crossfade
}

/// The audio file format of recorded takes (`"recording" : { "format" : ... }`).
public enum TakeFormat: String, CaseIterable, Sendable {
  /// FLAC, 24-bit integer samples. The default.
  case flac24
  /// WAV, 32-bit float samples.
  case wav32f
  /// WAV, 24-bit integer samples.
  case wav24
}

/// How a stem's speed (`StemSettings.rate`) is applied (`"mode"` of a stem).
public enum RateMode: String, CaseIterable, Sendable {
  /// Resampling, like a tape machine: speed and pitch change together. The default.
  case varispeed
  /// Time-stretching: the speed changes and the pitch stays, shifted by `StemSettings.pitch`.
  case stretch
}

/// Which time-stretcher a stem in stretch mode uses (`"stretch"` of a stem, format version 3).
public enum StretchQuality: String, CaseIterable, Sendable {
  /// Rubber Band R3 (its short window): the best sound, about 4 % of a core per stereo stem.
  /// The default.
  case fine
  /// stemdeck's own WSOLA (`WsolaStretcher`): pitch as exact, about a fortieth of the CPU, a
  /// little rougher on dense material. A pitch-shifted stem uses Rubber Band all the same.
  case fast
}

/// How the transport follows JACK's transport (`"options" : { "transportSync" : ... }`).
public enum TransportSync: String, CaseIterable, Sendable {
  /// stemdeck's transport ignores JACK's. The default.
  case off
  /// stemdeck starts, stops and locates when JACK's transport does.
  case follow
  /// stemdeck's transport drives JACK's: starting, stopping and locating stemdeck moves JACK's too.
  case lead
}

/// The allowed values of every numeric setting. The session decoder, `Session.validate()` and
/// (through them) the console all use these ranges, so an error message and a check never disagree.
public enum SettingRange {
  /// Linear gain: 0 is silence, 1 is unity, 2 is about +6 dB of headroom.
  public static let volume: ClosedRange<Double> = 0...2
  /// -1 is hard left, 0 centre, 1 hard right.
  public static let pan: ClosedRange<Double> = -1.0...1.0
  /// Varispeed ratio: 0.5 is half speed, 2 is double speed.
  public static let rate: ClosedRange<Double> = 0.5...2.0
  /// AVAudioPlayer's `numberOfLoops`: 0 plays once, N plays N+1 times, -1 loops forever.
  public static let loops: ClosedRange<Int> = -1...1_000_000
  /// Seconds: a stem's start offset on the transport timeline. The upper bound (about 11.5 days)
  /// only keeps later conversions to frame counts far away from integer overflow.
  public static let startOffset: ClosedRange<Double> = 0...1_000_000
  /// Seconds: the saved transport position. Same bound as `startOffset`, for the same reason.
  public static let position: ClosedRange<Double> = 0...1_000_000
  /// The length of a stem or effect name, in characters.
  public static let nameLength: ClosedRange<Int> = 1...64
  /// Seconds: how long consecutive setlist songs overlap when `SongChange.crossfade` is chosen.
  public static let crossfadeSeconds: ClosedRange<Double> = 0.05...30
  /// The length of `RecordingSettings.folder`, in UTF-8 bytes (empty means the session's folder).
  public static let recordingFolderBytes: ClosedRange<Int> = 0...4096
  /// Beats per minute of the session's tempo (`Tempo.bpm`).
  public static let bpm: ClosedRange<Double> = 20.0...400.0
  /// Beats in one bar of the session's tempo (`Tempo.beatsPerBar`).
  public static let beatsPerBar: ClosedRange<Int> = 1...32
  /// Seconds: the equal-power crossfade at a stem's loop seam (`StemSettings.crossfade`). Not to be
  /// confused with `crossfadeSeconds`, the overlap between setlist songs.
  public static let crossfade: ClosedRange<Double> = 0.0...1.0
  /// Semitones: a stem's pitch shift in stretch mode (`StemSettings.pitch`).
  public static let pitch: ClosedRange<Double> = -24.0...24.0
  /// Seconds in a stem's audio file: the bounds of `StemSettings.loopStart` and `loopEnd`. The file's
  /// length is not known when a session is read, so the upper bound is a day, not the file's end.
  public static let loopPoint: ClosedRange<Double> = 0.0...86400.0
}

/// The session's musical tempo (the `"tempo"` object).
public struct Tempo: Equatable, Sendable {
  /// Beats per minute, in `SettingRange.bpm`.
  public var bpm: Double
  /// Beats in one bar, in `SettingRange.beatsPerBar`.
  public var beatsPerBar: Int

  /// A tempo of `bpm` beats per minute, `beatsPerBar` beats to the bar.
  public init(bpm: Double, beatsPerBar: Int = 4) {
    self.bpm = bpm
    self.beatsPerBar = beatsPerBar
  }
}

/// One stem: an audio file and how it is mixed.
public struct StemSettings: Equatable, Sendable {
  /// The stem's name: 1–64 ASCII letters, digits, `_`, `-`, `.`; unique in a session; never `all`.
  /// It names the stem in the console and in its direct-out JACK port names.
  public var name: String
  /// The audio file as written in the session: relative to the session file's folder, or absolute.
  /// Use `SessionFile.resolve(file:sessionPath:)` to get the path to open.
  public var file: String
  /// The strip: volume (a session file may also give it in dB, e.g. `"-6dB"`), pan, mute, solo,
  /// direct outs, EQ (format version 2), the bus it feeds (version 3) and its sends; also read and
  /// written as `volume`, `pan`, … (StripSettings.swift).
  public var strip = StripSettings()
  /// Varispeed ratio, in `SettingRange.rate`.
  public var rate: Double = 1
  /// Extra repetitions, in `SettingRange.loops`: 0 plays once, -1 loops forever.
  public var loops: Int = 0
  /// Seconds, in `SettingRange.startOffset`: the transport time at which the stem starts.
  public var startOffset: Double = 0
  /// Seconds in the stem's audio file (not transport time), in `SettingRange.loopPoint`: where its
  /// loop region starts. Set together with `loopEnd` (both nil: no loop region), and less than it.
  public var loopStart: Double? = nil
  /// Seconds in the stem's audio file (not transport time), in `SettingRange.loopPoint`: where its
  /// loop region ends. Set together with `loopStart`, and greater than it.
  public var loopEnd: Double? = nil
  /// Seconds, in `SettingRange.crossfade`: the equal-power crossfade at the loop seam; 0 is a cut.
  public var crossfade: Double = 0
  /// How `rate` is applied: varispeed (pitch follows speed) or time-stretch.
  public var mode: RateMode = .varispeed
  /// The time-stretcher used in `.stretch` mode (kept, unused, in varispeed).
  public var stretch: StretchQuality = .fine
  /// Semitones, in `SettingRange.pitch`: the pitch shift, in `.stretch` mode only (a session
  /// with a non-zero pitch in `.varispeed` mode is refused, as the REPL's `pitch` is).
  public var pitch: Double = 0

  /// A stem with default mix settings (unity volume, centre, normal speed, plays once).
  public init(name: String, file: String) {
    self.name = name
    self.file = file
  }
}

/// One sound effect: a short audio file fired on demand (the `"effects"` list).
public struct EffectSettings: Equatable, Sendable {
  /// The effect's name, under the same rules as a stem name (1–64 ASCII letters, digits, `_`, `-`,
  /// `.`; never `all`); unique among the session's effects.
  public var name: String
  /// The audio file as written in the session: relative to the session file's folder, or absolute.
  /// Use `SessionFile.resolve(file:sessionPath:)` to get the path to open.
  public var file: String
  /// Linear gain, in `SettingRange.volume`. (A session file may also give it in dB, e.g. `"-6dB"`.)
  public var volume: Double = 1
  /// Pan position, in `SettingRange.pan`.
  public var pan: Double = 0

  /// An effect at unity volume, centred.
  public init(name: String, file: String) {
    self.name = name
    self.file = file
  }
}

/// Where and how takes are recorded (the `"recording"` object).
public struct RecordingSettings: Equatable, Sendable {
  /// The audio file format of new takes.
  public var format: TakeFormat = .wav32f  // float WAV: its header is rewritten as it records, so a killed process leaves a valid file
  /// Whether a take, once recorded, joins the mix muted.
  public var takesMuted = false
  /// The folder for new takes, relative to the session file's folder (or absolute); `""` is the
  /// session file's folder itself. At most `SettingRange.recordingFolderBytes` UTF-8 bytes, no NUL.
  /// `SessionFile.resolve(file:sessionPath:)` turns it into an absolute path (`""` included).
  public var folder: String = ""

  /// The default recording settings (32-bit float WAV, takes not muted, the session's folder).
  public init() {}
}

/// Where fired sound effects are heard (`"options" : { "effectsOutput" : ... }`).
public enum EffectsOutput: String, CaseIterable, Sendable {
  /// Mixed into the master, through the master volume. The default.
  case master
  /// On their own JACK ports `sfx_L` / `sfx_R` (a cue mix, a separate PA feed), not in the master.
  case ports
}

/// Session-wide behaviour switches (the `"options"` object).
public struct SessionOptions: Equatable, Sendable {
  /// Pause the transport when the master outputs lose their last JACK connection.
  public var autoPauseOnDisconnect = false
  /// Where the meters tap each stem.
  public var meterPoint: MeterPoint = .post
  /// How a setlist moves from one song to the next.
  public var songChange: SongChange = .gapless
  /// Seconds, in `SettingRange.crossfadeSeconds`: the overlap used when `songChange` is
  /// `.crossfade`. Kept (and checked) whatever `songChange` is.
  public var crossfadeSeconds: Double = 2
  /// How the transport follows JACK's transport.
  public var transportSync: TransportSync = .off
  /// Where fired sound effects are heard.
  public var effectsOutput: EffectsOutput = .master

  /// The default options.
  public init() {}
}

/// A whole mixer session: what `SessionFile` loads and saves.
///
/// A freshly made `Session()` is valid and empty. Values set in code are not checked until
/// `validate()` runs (which `SessionFile.save` does before writing anything).
public struct Session: Equatable, Sendable {
  /// The newest session format version this build reads and the one it writes.
  public static let currentVersion = 3

  /// The sample-rate converter quality for varispeed and file-rate conversion.
  public var quality: ResamplerQuality = .fast
  /// The master bus's linear gain, in `SettingRange.volume`.
  public var masterVolume: Double = 1
  /// The master bus's channel EQ (before the master volume); flat by default (format version 2).
  public var masterEQ = EQSettings()
  /// The master's plugin inserts (InsertSettings.swift), after its EQ.
  public var masterInserts: [InsertSettings] = []
  /// Session-wide options.
  public var options = SessionOptions()
  /// Recording settings.
  public var recording = RecordingSettings()
  /// The musical tempo, or nil when the session has none.
  public var tempo: Tempo? = nil
  /// The click and the count-in (ClickSettings.swift).
  public var click = ClickSettings()
  /// Named positions for `goto` (MarkSettings.swift), in the order they were added; written
  /// only when there are some.
  public var marks: [Mark] = []
  /// The stems, in console order.
  public var stems: [StemSettings] = []
  /// The sound effects, in console order.
  public var effects: [EffectSettings] = []
  /// The transport position in seconds, in `SettingRange.position`.
  public var position: Double = 0
  /// JACK connections to restore: a stemdeck port's short name (e.g. `"master_L"`) mapped to the
  /// full names of the peer ports it connects to (e.g. `["system:playback_1"]`).
  public var connections: [String: [String]] = [:]
  /// MIDI control mappings (MidiMapping.swift); written only when there are some.
  public var midi = MidiSettings()
  /// The buses (subgroups, BusSettings.swift), in console order; written only when there are some.
  public var buses: [BusSettings] = []
  /// Live input strips (InputSettings.swift); written only when there are some.
  public var inputs: [InputSettings] = []
  /// Aux sends (SendSettings.swift); written only when there are some.
  public var sends: [SendSettings] = []
  /// Stored mixes (SceneSettings.swift), and the strips a recall leaves alone; written only when
  /// there are some.
  public var scenes: [SceneSettings] = []
  public var recallSafe: [String] = []

  /// An empty session with default settings.
  public init() {}
}

extension StemSettings {
  /// The characters stem and effect names may hold: ASCII letters, digits, '_', '-' and '.'.
  /// The one definition the session format and the console both use.
  public static func isNameCharacter(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar {
    case "a"..."z", "A"..."Z", "0"..."9", "_", "-", ".": return true
    default: return false
    }
  }
}
