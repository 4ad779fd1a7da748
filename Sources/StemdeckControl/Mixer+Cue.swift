import StemdeckEngine
import StemdeckSession
import StemdeckText

// The cue bus (issue 42, item 4): `cue STRIP [pfl|afl]` puts a stem, bus or live input on
// `stemdeck:cue_L/R` for headphones without changing the master (StemdeckEngine's
// Renderer/Cue.swift). A listening state, like a console's PFL buttons: not saved, not undone;
// a song change starts with none (a rig's bus or input keeps its own). docs/architecture.md,
// *Cue bus*.

extension Mixer {

  /// How a strip is cued.
  func cueTap(of strip: StripRef) -> CueTap {
    switch strip {
    case .stem(let stem): stem.cue
    case .bus(let p): busTable.buses[p].cue
    case .input(let input): input.cue
    }
  }

  /// Every strip on the cue bus, in the console's order (stems, buses, live inputs).
  func cuedStrips() -> [StripRef] {
    table.stems.filter { $0.cue != .off }.map { .stem($0) }
      + busTable.buses.indices.filter { busTable.buses[$0].cue != .off }.map { .bus($0) }
      + liveInputs.inputs.filter { $0.cue != .off }.map { .input($0) }
  }

}

extension Mixer.Cues {
  /// Puts strip `name` (a stem, bus or live input) on the cue bus before its fader
  /// (`.preFader`), after it (`.afterFader`), or takes it off (`.off`).
  public func set(_ name: String, _ tap: CueTap) throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      let strip = try mixer.strip(named: name)
      guard mixer.cueTap(of: strip) != tap else { return }
      try mixer.send(.setCue(mixer.target(of: strip), tap: tap))
      switch strip {
      case .stem(let stem): stem.cue = tap
      case .bus(let p): mixer.busTable.buses[p].cue = tap
      case .input(let input): input.cue = tap
      }
    }
  }

  /// Takes every strip off the cue bus.
  public func clear() throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      for strip in mixer.cuedStrips() {
        try mixer.send(.setCue(mixer.target(of: strip), tap: .off))
        switch strip {
        case .stem(let stem): stem.cue = .off
        case .bus(let p): mixer.busTable.buses[p].cue = .off
        case .input(let input): input.cue = .off
        }
      }
    }
  }

  /// The cued strips, in the console's order (stems, buses, live inputs), and how.
  public var all: [(name: String, tap: CueTap)] {
    mixer.lock.locked { mixer.cuedStrips().map { (mixer.name(of: $0), mixer.cueTap(of: $0)) } }
  }

  /// How strip `name` is cued (`.off` for an unknown name).
  public func tap(of name: String) -> CueTap {
    mixer.lock.locked { (try? mixer.strip(named: name)).map(mixer.cueTap(of:)) ?? .off }
  }

  /// Whether the cue bus wants its JACK ports (`stemdeck:cue_L`/`cue_R`): a strip is cued.
  public var portsWanted: Bool { mixer.lock.locked { !mixer.cuedStrips().isEmpty } }
}
