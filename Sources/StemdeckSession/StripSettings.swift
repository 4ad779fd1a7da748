/// What every strip has, whatever feeds it: a stem (a file), a bus (the strips routed to it) or a
/// live input (JACK ports). Embedded as `strip` in `StemSettings`, `BusSettings` and
/// `InputSettings` (each also answers `volume`, `pan`, … directly), so code that changes or
/// restores a strip's mix does it once for all three kinds (docs/architecture.md, *Strips*).
///
/// The session file keeps its per-kind fields (`"volume"`, `"pan"`, …) as they were; this is the
/// model's shape, not a format change.
public struct StripSettings: Equatable, Sendable {
  /// Linear gain, in `SettingRange.volume`.
  public var volume: Double = 1
  /// Pan (a mono source, constant power) or balance (stereo), in `SettingRange.pan`.
  public var pan: Double = 0
  /// Stereo width (mid/side) of a two-channel strip, in `SettingRange.width`; 1 leaves it as is.
  public var width: Double = 1
  public var mute = false
  public var solo = false
  /// Solo-safe: heard whatever is soloed elsewhere (a singer's mic, a reverb return), and a bus
  /// it feeds stays open. Live inputs are solo-safe unless made otherwise (`defaults(of:)`).
  public var soloSafe = false
  /// Whether the strip goes out on its own JACK ports (`<name>_L`, `<name>_R`) instead of its
  /// destination.
  public var directOut = false
  /// The strip's channel EQ, before its fader.
  public var eq = EQSettings()
  /// The bus the strip feeds (BusSettings.swift), or nil for the master.
  public var bus: String? = nil
  /// Levels into the session's aux sends (SendSettings.swift).
  public var sends: [StemSend] = []
  /// Plugin inserts as the session file holds them (InsertSettings.swift); the mixer's racks
  /// are the live truth, written here when a session is saved.
  public var inserts: [InsertSettings] = []

  /// A strip at unity, centred, flat, feeding the master.
  public init() {}

  /// A new strip of `kind`: as `init()`, but a live input is solo-safe (soloing a backing track
  /// must not silence the singer).
  public static func defaults(of kind: StripKind) -> StripSettings {
    var strip = StripSettings()
    strip.soloSafe = kind == .input
    return strip
  }
}

/// A kind of strip settings: `strip` holds the mix every kind has; the kind adds its own fields.
public protocol StripSettingsHolder {
  var name: String { get }
  var strip: StripSettings { get set }
}

extension StripSettingsHolder {
  public var volume: Double {
    get { strip.volume }
    set { strip.volume = newValue }
  }
  public var pan: Double {
    get { strip.pan }
    set { strip.pan = newValue }
  }
  public var width: Double {
    get { strip.width }
    set { strip.width = newValue }
  }
  public var mute: Bool {
    get { strip.mute }
    set { strip.mute = newValue }
  }
  public var solo: Bool {
    get { strip.solo }
    set { strip.solo = newValue }
  }
  public var soloSafe: Bool {
    get { strip.soloSafe }
    set { strip.soloSafe = newValue }
  }
  public var directOut: Bool {
    get { strip.directOut }
    set { strip.directOut = newValue }
  }
  public var eq: EQSettings {
    get { strip.eq }
    set { strip.eq = newValue }
  }
  public var bus: String? {
    get { strip.bus }
    set { strip.bus = newValue }
  }
  public var sends: [StemSend] {
    get { strip.sends }
    set { strip.sends = newValue }
  }
}

extension StemSettings: StripSettingsHolder {}
extension BusSettings: StripSettingsHolder {}
extension InputSettings: StripSettingsHolder {}

extension StripSettings {
  /// This strip with `other`'s mix: every field but where the strip goes (`bus`, `directOut`)
  /// and its `sends`, which have paths of their own (routing checks loops; sends and direct outs
  /// change ports), and its `inserts` (live in the mixer's racks). A field added to the strip is part of the mix unless listed here, so a
  /// group's rollback (`mixer.strips.restore`) puts it back without being told.
  public func withMix(of other: StripSettings) -> StripSettings {
    var mixed = other
    mixed.bus = bus
    mixed.directOut = directOut
    mixed.sends = sends
    mixed.inserts = inserts  // the mixer's insert racks are the truth (Mixer+Inserts.swift)
    return mixed
  }
}
