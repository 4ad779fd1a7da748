import StemdeckControl
import StemdeckSession

/// The console commands of the strip controls, built from their rows of the table
/// (StripParameter.swift): `vol`, `pan`, `rate` take a value and glide; `mute`/`unmute`,
/// `solo`/`unsolo` switch. A new row has its command without a line here (docs/architecture.md, *Strips*).
extension CommandTable {
  /// A command per value row of the table (`vol`, `pan`, `width`, `rate`), in its order.
  package static let stripLevelCommands = StripParameter.all.filter { !$0.isToggle }.map(level)
  /// `WORD` and `unWORD` per toggle row (`mute`/`unmute`, `solo`/`unsolo`, `safe`/`unsafe`).
  package static let stripToggleCommands = StripParameter.all.filter(\.isToggle).flatMap { [toggle($0, on: true), toggle($0, on: false)] }

  /// `WORD NAME|all VALUE [over TIME [exp]]`: a level (linear or dB, which may be two words:
  /// `-6 dB`) or a number under the row's rule; `over` glides it.
  package static func level(_ control: StripParameter) -> CommandSpec {
    let glide = control.glides ? (control.exponentialGlide ? " [over TIME [exp]]" : " [over TIME]") : ""
    let usage = "\(control.word) NAME|all VALUE" + glide
    let valueWords = control.value.isGain ? 2 : 1
    // The name, the value, and `over TIME exp` (refused by the glide where it does not apply).
    let most = 1 + valueWords + (control.glides ? 3 : 0)
    return CommandSpec(
      name: control.word, aliases: control.aliases, usage: usage, summary: control.summary, details: control.details,
      argumentCount: 2...most, completions: [.stemOrAll]
    ) { (c, a) throws(CommandError) in
      let g = try GlideSyntax.split(Array(a.dropFirst()), command: control.word)
      guard (1...valueWords).contains(g.value.count) else { throw CommandError("\(control.word): usage: \(usage)") }
      let v = control.value.isGain ? try ValueParser.volume(g.value.joined()) : try ValueParser.number(g.value[0], control.word)
      if let seconds = g.seconds {
        guard let target = GlideTarget(control, to: v) else { throw CommandError("\(control.word) does not glide: usage: \(usage)") }
        try c.each(a[0]) { (n: String) throws(MixerError) in
          try c.mixer.strips.glide(n, to: target, seconds: seconds, exponential: g.exponential)
        }
      } else {
        try c.each(a[0]) { (n: String) throws(MixerError) in try c.mixer.strips.set(control, of: n, to: v) }
      }
    }
  }

  /// `WORD NAME|all` turns a toggle on; `unWORD NAME|all` off; a row that `takesOnOff` also
  /// reads `WORD NAME|all on|off`.
  package static func toggle(_ control: StripParameter, on: Bool) -> CommandSpec {
    let word = (on ? "" : "un") + control.word
    let onOff = on && control.takesOnOff
    let usage = "\(word) NAME|all" + (onOff ? " [on|off]" : "")
    return CommandSpec(
      name: word, usage: usage, summary: on ? control.summary : "undo \(control.word)",
      details: on ? control.details : "", argumentCount: 1...(onOff ? 2 : 1),
      completions: onOff ? [.stemOrAll, .keyword(["on", "off"])] : [.stemOrAll]
    ) { (c, a) throws(CommandError) in
      let value = a.count == 2 ? try ValueParser.onOff(a[1], word) : on
      try c.each(a[0]) { (n: String) throws(MixerError) in try c.mixer.strips.set(control, of: n, to: value ? 1 : 0) }
    }
  }
}
