import StemdeckEngine
import StemdeckSession

// The cue bus (issue 42, item 4): `cue STEM [pfl|afl]` puts a stem on `stemdeck:cue_L/R` for
// headphones without changing the master (StemdeckEngine's Renderer/Cue.swift). A listening
// state, like a console's PFL buttons: not saved, not undone; a song change starts with none.
// docs/architecture.md, *Cue bus*.

extension Mixer {
  /// Puts stem `name` on the cue bus before its fader (`.preFader`), after it (`.afterFader`),
  /// or takes it off (`.off`). Buses and live inputs have no cue yet: refused, naming them.
  public func setCue(_ name: String, _ tap: CueTap) throws(MixerError) {
    try lock.locked { () throws(MixerError) in
      switch try strip(named: name) {
      case .bus: throw MixerError("'\(printableText(name))' is a bus; the cue takes stems only (for now)")
      case .input: throw MixerError("'\(printableText(name))' is a live input; the cue takes stems only (for now)")
      case .stem(let stem):
        guard stem.cue != tap else { return }
        try send(.setCue(slot: stem.slot, tap: tap))
        stem.cue = tap
      }
    }
  }

  /// Takes every stem off the cue bus.
  public func clearCues() throws(MixerError) {
    try lock.locked { () throws(MixerError) in
      for stem in table.stems where stem.cue != .off {
        try send(.setCue(slot: stem.slot, tap: .off))
        stem.cue = .off
      }
    }
  }

  /// The cued stems, in the session's order, and how.
  public var cues: [(name: String, tap: CueTap)] {
    lock.locked { table.stems.filter { $0.cue != .off }.map { ($0.settings.name, $0.cue) } }
  }

  /// Whether the cue bus wants its JACK ports (`stemdeck:cue_L`/`cue_R`): a stem is cued.
  public var cuePortsWanted: Bool { lock.locked { table.stems.contains { $0.cue != .off } } }
}
