import StemdeckEngine
import StemdeckSession
import StemdeckText

// The cue bus (issue 42, item 4): `cue STRIP [pfl|afl]` puts a stem, bus or live input on
// `stemdeck:cue_L/R` for headphones without changing the master (StemdeckEngine's
// Renderer/Cue.swift). A listening state, like a console's PFL buttons: not saved, not undone;
// a song change starts with none (a rig's bus or input keeps its own). docs/architecture.md,
// *Cue bus*.

extension Mixer {
  /// Puts strip `name` (a stem, bus or live input) on the cue bus before its fader
  /// (`.preFader`), after it (`.afterFader`), or takes it off (`.off`).
  public func setCue(_ name: String, _ tap: CueTap) throws(MixerError) {
    try lock.locked { () throws(MixerError) in
      let strip = try strip(named: name)
      guard cueTap(of: strip) != tap else { return }
      try send(.setCue(target(of: strip), tap: tap))
      switch strip {
      case .stem(let stem): stem.cue = tap
      case .bus(let p): busTable.buses[p].cue = tap
      case .input(let input): input.cue = tap
      }
    }
  }

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

  /// Takes every strip off the cue bus.
  public func clearCues() throws(MixerError) {
    try lock.locked { () throws(MixerError) in
      for strip in cuedStrips() {
        try send(.setCue(target(of: strip), tap: .off))
        switch strip {
        case .stem(let stem): stem.cue = .off
        case .bus(let p): busTable.buses[p].cue = .off
        case .input(let input): input.cue = .off
        }
      }
    }
  }

  /// The cued strips, in the console's order (stems, buses, live inputs), and how.
  public var cues: [(name: String, tap: CueTap)] {
    lock.locked { cuedStrips().map { (name(of: $0), cueTap(of: $0)) } }
  }

  /// How strip `name` is cued (`.off` for an unknown name).
  public func cue(of name: String) -> CueTap {
    lock.locked { (try? strip(named: name)).map(cueTap(of:)) ?? .off }
  }

  /// Whether the cue bus wants its JACK ports (`stemdeck:cue_L`/`cue_R`): a strip is cued.
  public var cuePortsWanted: Bool { lock.locked { !cuedStrips().isEmpty } }
}
