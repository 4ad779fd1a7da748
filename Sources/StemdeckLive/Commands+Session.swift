import Foundation
import StemdeckControl
import StemdeckEngine
import StemdeckJack
import StemdeckSession
import StemdeckText

// The session commands of the REPL's table (Commands.swift): save, open, new, autosave, setlists,
// song changes and the session's options.
extension CommandTable {
  // MARK: Session

  package static let sessionCommands: [CommandSpec] = [
    CommandSpec(
      name: "save", usage: "save [PATH]", summary: "save the session (atomic; keeps PATH.bak)", argumentCount: 0...1, completions: [.file],
      access: .files
    ) { (c, a) throws(CommandError) in
      try c.save(to: a.first)
    },
    CommandSpec(
      name: "diff", usage: "diff [FILE]", summary: "what the live mix changed from the saved session (or from FILE)",
      details: """
        One line per value: 'drums volume 0.8 → 0.5', 'bass bus master → drums_bus',
        'bus verb added', 'connection master_L → system:playback_1 removed'. Values as the
        session file writes them; '(default)' where the file leaves one out. The transport's
        position is left out. Nothing is changed or saved.
        """,
      argumentCount: 0...1, completions: [.file], accessWhenGiven: ["*": .files]
    ) { (c, a) throws(CommandError) in
      let (changes, shown) = try c.diff(against: a.first)
      if changes.isEmpty { c.write("no differences from \(shown)") }
      for change in changes { c.write(change.line) }
    },
    CommandSpec(
      name: "undo", usage: "undo [N]", summary: "take back the last change to the mix (or the last N)",
      details: """
        Every change to the mix is one step, from any front end: a command (a 'commit' group,
        a glide, 'remove all'), a fader drag or key in the mixer view, a MIDI controller's
        sweep. Undoing a removed stem brings it back playing in place. 'history' lists the
        steps; 'redo' does undone ones again. The last \(UndoHistory.limit) steps are kept; 'open'
        and 'new' start afresh, 'save' does not. JACK connections and sound effects are not
        part of it.
        """,
      argumentCount: 0...1
    ) { (c, a) throws(CommandError) in
      for line in try c.undo(try historyCount(a.first, "undo"), redo: false) { c.write(line) }
    },
    CommandSpec(
      name: "redo", usage: "redo [N]", summary: "do again the last undone change (or the last N)", argumentCount: 0...1
    ) { (c, a) throws(CommandError) in
      for line in try c.undo(try historyCount(a.first, "redo"), redo: true) { c.write(line) }
    },
    CommandSpec(
      name: "history", usage: "history", summary: "the undoable steps: what each changed and where it came from", argumentCount: 0...0
    ) { (c, _) throws(CommandError) in
      for line in c.historyLines() { c.write(line) }
    },
    sceneCommand,
    CommandSpec(
      name: "open", aliases: ["open!", "load"], usage: "open PATH", summary: "open a session file (open! discards unsaved changes)",
      argumentCount: 1...1, completions: [.file], access: .files
    ) { (c, a) throws(CommandError) in
      try c.open(a[0], force: c.commandWord.hasSuffix("!"))
    },
    CommandSpec(
      name: "new", aliases: ["new!"], usage: "new", summary: "start an empty session (new! discards unsaved changes)", argumentCount: 0...0,
      access: .rig
    ) { (c, _) throws(CommandError) in
      try c.newSession(force: c.commandWord.hasSuffix("!"))
    },
    CommandSpec(
      name: "recover", usage: "recover [discard]", summary: "open the autosave of unsaved changes (or delete it)",
      argumentCount: 0...1, completions: [.keyword(["discard"])], access: .files
    ) { (c, a) throws(CommandError) in
      try c.recover(discard: a.first?.lowercased() == "discard")
    },
    CommandSpec(
      name: "autosave", usage: "autosave SECONDS|off",
      summary: "how often unsaved changes go to the .NAME.autosave.json sidecar (default 30)",
      argumentCount: 0...1, completions: [.keyword(["off"])], accessWhenGiven: ["*": .rig]
    ) { (c, a) throws(CommandError) in
      guard let w = a.first else {
        c.write("autosave: \(c.autosaveInterval > 0 ? NumberFormat.plain(c.autosaveInterval) + " s" : "off")"); return
      }
      if w.lowercased() == "off" { c.autosaveInterval = 0; return }
      let s = try ValueParser.duration(w)
      guard s >= 1, s <= 3600 else { throw CommandError("autosave must be from 1 to 3600 seconds, or off (got \(NumberFormat.plain(s)))") }
      c.autosaveInterval = s
    },
    CommandSpec(
      name: "setlist", aliases: ["setlist!"], usage: "setlist [FILE]",
      summary: "load a setlist (sessions, one per line) and open its first song; without FILE, show it",
      argumentCount: 0...1, completions: [.file], accessWhenGiven: ["*": .files]
    ) { (c, a) throws(CommandError) in
      if let f = a.first { try c.loadSetlist(f) } else { try c.showSetlist() }
    },
    CommandSpec(
      name: "advance", aliases: ["autoadvance"], usage: "advance [off|cue|play]",
      summary: "when a setlist song ends: stay (off), open the next one ready to play (cue), or play it (play)",
      details: """
        A song ends when every stem that can finish has (none loops forever); the transport stops
        there. cue opens the next song, stopped; play opens it and starts it from its first
        sample, 10–20 ms after the last one ended (for a seamless segue use 'next' while the
        song plays: see songchange). The last song ends the show: nothing wraps around. In interactive
        mode a song with unsaved changes is not left automatically. Not saved in sessions.
        Without an argument, shows the setting.
        """,
      argumentCount: 0...1, completions: [.keyword(SetlistAdvance.allCases.map(\.rawValue))]
    ) { (c, a) throws(CommandError) in
      guard let w = a.first else {
        c.write("advance: \(c.advance.rawValue)" + (c.setlist == nil ? " (no setlist loaded)" : ""))
        return
      }
      guard let mode = SetlistAdvance(rawValue: w.lowercased()) else {
        throw CommandError("advance must be off, cue or play (got '\(ValueParser.printable(w))')")
      }
      c.advance = mode
    },
    CommandSpec(
      name: "next", aliases: ["next!"], usage: "next",
      summary: "open the next song of the setlist (wraps around); while playing, gapless or crossfaded (see songchange)",
      argumentCount: 0...0
    ) { (c, _) throws(CommandError) in
      try c.switchSong(to: c.setlistIndex + 1)
    },
    CommandSpec(
      name: "prev", aliases: ["prev!", "previous"], usage: "prev", summary: "open the previous song (wraps around)", argumentCount: 0...0
    ) { (c, _) throws(CommandError) in
      try c.switchSong(to: c.setlistIndex - 1)
    },
    CommandSpec(
      name: "goto", aliases: ["goto!"], usage: "goto MARK [now|bar|end] | goto N|SONG",
      summary: "jump to a mark (on the next bar line, now, or at the loop's or song's end), or open song N or SONG",
      details: """
        goto chorus               at the next bar line of the tempo (at least 0.25 s ahead),
                                  frame-exactly, no gap: the song goes on from the mark
        goto chorus now           at once (a seek: a 5 ms fade)
        goto chorus end           at the end of the current pass of the looping stems (the
                                  earliest loop seam), or at the song's end when none loops
        goto 3, goto intro        open song 3, or the song 'intro', of the setlist (a mark of
                                  that name is looked up first)
        Stopped, a goto is a seek. A jump waiting for its bar line is shown by 'mark list' and
        'status'; another may replace it on the same frame; a seek cancels it.
        """,
      argumentCount: 1...2, completions: [.keyword(JumpLanding.allCases.map(\.rawValue))]
    ) { (c, a) throws(CommandError) in
      try c.gotoMarkOrSong(a)
    },
    CommandSpec(
      name: "autopause", usage: "autopause on|off", summary: "pause when the master outputs lose their last connection",
      argumentCount: 0...1, completions: [.keyword(["on", "off"])]
    ) { (c, a) throws(CommandError) in
      guard let w = a.first else { c.write("autopause: \(c.mixer.options.autoPauseOnDisconnect ? "on" : "off")"); return }
      var o = c.mixer.options
      o.autoPauseOnDisconnect = try ValueParser.onOff(w, "autopause")
      try c.mixerCall { () throws(MixerError) in try c.mixer.setOptions(o) }
    },
    CommandSpec(
      name: "transport", usage: "transport off|follow|lead",
      summary: "JACK transport: follow it (others start/stop/locate stemdeck) or lead it (with bar/beat/tick from the tempo)",
      argumentCount: 0...1, completions: [.keyword(["off", "follow", "lead"])], accessWhenGiven: ["*": .rig]
    ) { (c, a) throws(CommandError) in
      guard let w = a.first else { c.write("transport: \(c.mixer.options.transportSync.rawValue)"); return }
      guard let sync = TransportSync(rawValue: w.lowercased()) else {
        throw CommandError("transport must be off, follow or lead (got '\(ValueParser.printable(w))')")
      }
      var o = c.mixer.options
      o.transportSync = sync
      try c.mixerCall { () throws(MixerError) in try c.mixer.setOptions(o) }
    },
    CommandSpec(
      name: "songchange", usage: "songchange [gapless | crossfade [TIME]]",
      summary: "how 'next'/'prev'/'goto' leave this song while playing: gapless, or a crossfade (default 2s)",
      details: """
        The song being left decides (this session's options.songChange and crossfadeSeconds).
        gapless: the next song is opened and buffered while this one plays, then it starts on
        the frame after this song's last. crossfade TIME (50ms…30s): this song fades out as the
        next fades in, equal power (cos/sin), both starting on the same frame.
        Without an argument, shows the setting.
        """,
      argumentCount: 0...2, completions: [.keyword(["gapless", "crossfade"])]
    ) { (c, a) throws(CommandError) in
      var o = c.mixer.options
      guard let w = a.first else {
        c.write("songchange: \(o.songChange == .crossfade ? "crossfade \(NumberFormat.plain(o.crossfadeSeconds)) s" : "gapless")")
        return
      }
      guard let change = SongChange(rawValue: w.lowercased()) else {
        throw CommandError("songchange must be gapless or crossfade [TIME] (got '\(ValueParser.printable(w))')")
      }
      if a.count == 2 {
        guard change == .crossfade else { throw CommandError("songchange: only crossfade takes a time (usage: songchange crossfade 2s)") }
        let seconds = try ValueParser.duration(a[1])
        guard SettingRule.crossfadeSeconds.accepts(seconds) else {
          throw CommandError(SettingRule.crossfadeSeconds.refusal("songchange: the crossfade", got: seconds))
        }
        o.crossfadeSeconds = seconds
      }
      o.songChange = change
      try c.mixerCall { () throws(MixerError) in try c.mixer.setOptions(o) }
    },
    CommandSpec(
      name: "meterpoint", usage: "meterpoint pre|post", summary: "meter stems before or after their fader",
      argumentCount: 0...1, completions: [.keyword(["pre", "post"])]
    ) { (c, a) throws(CommandError) in
      guard let w = a.first else { c.write("meterpoint: \(c.mixer.options.meterPoint.rawValue)"); return }
      guard let p = MeterPoint(rawValue: w.lowercased()) else {
        throw CommandError("meterpoint must be pre or post (got '\(ValueParser.printable(w))')")
      }
      var o = c.mixer.options
      o.meterPoint = p
      try c.mixerCall { () throws(MixerError) in try c.mixer.setOptions(o) }
    }
  ]
}

/// `undo N`'s and `redo N`'s count: a whole number from 1 (none: 1).
private func historyCount(_ word: String?, _ command: String) throws(CommandError) -> Int {
  guard let word else { return 1 }
  guard let n = Int(word), n >= 1, n <= UndoHistory.limit else {
    throw CommandError(
      "\(command): the number of steps must be a whole number from 1 to \(UndoHistory.limit) (got '\(ValueParser.printable(word))')")
  }
  return n
}
