import StemdeckControl
import StemdeckEngine

// The cue bus (issue 42, item 4): `cue STRIP [pfl|afl]`, `cue STRIP off`, `cue off`, `cue` to list;
// a strip is a stem, a bus or a live input.
// docs/architecture.md, *Cue bus*.

extension CommandTable {
  package static let cueUsage = "cue [STRIP [pfl|afl|off] | off]"

  package static let cueCommands: [CommandSpec] = [
    CommandSpec(
      name: "cue", usage: cueUsage,
      summary:
        "listen to stems, buses or live inputs on stemdeck:cue_L/R (headphones), before or after their fader; the master is unchanged",
      details: """
        cue drums                 the drums on cue_L/R before their fader (PFL: a stem after
                                  its EQ, at unity, not panned; a bus or live input where its
                                  pre-fader sends tap it: after EQ, inserts and width)
        cue drums afl             after their fader, pan, mute and solo (as in the mix)
        cue drums off             takes the drums off the cue
        cue off                   takes every strip off
        Several strips can be cued; cue_L/R exist while one is. Not saved (a listening state).
        In the mixer view: flag C, key c (PFL on/off).
        """,
      argumentCount: 0...2, completions: [.stem, .keyword(["pfl", "afl", "off"])]
    ) { (c, a) throws(CommandError) in
      if a.isEmpty {
        c.write(cueLine(c.mixer))
        return
      }
      if a.count == 1 && a[0].lowercased() == "off" {
        try c.mixerCall { () throws(MixerError) in try c.mixer.cues.clear() }
        c.write(cueLine(c.mixer))
        return
      }
      var tap = CueTap.preFader
      if a.count == 2 {
        switch a[1].lowercased() {
        case "pfl": tap = .preFader
        case "afl": tap = .afterFader
        case "off": tap = .off
        default: throw CommandError("cue: the tap is pfl, afl or off (got '\(ValueParser.printable(a[1]))')")
        }
      }
      try c.mixerCall { () throws(MixerError) in try c.mixer.cues.set(a[0], tap) }
      c.write(cueLine(c.mixer))
    }
  ]

  /// "cue: drums (pfl), bass (afl) on cue_L/R" or "cue: off".
  package static func cueLine(_ mixer: Mixer) -> String {
    let cues = mixer.cues.all
    if cues.isEmpty { return "cue: off" }
    return "cue: " + cues.map { "\($0.name) (\($0.tap == .afterFader ? "afl" : "pfl"))" }.joined(separator: ", ") + " on cue_L/R"
  }
}
