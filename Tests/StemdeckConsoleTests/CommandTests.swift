import Foundation
import Testing
@testable import StemdeckConsole
import StemdeckControl
import StemdeckSession
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

/// What a rejected line must print: exactly one line, given in full or by fragments.
enum ExpectedError: Sendable {
  case exact(String)
  case contains([String])
}

/// A line the console must reject, with the error it prints. `{DRUMS}`, `{TEXT}`, `{EMPTY}` and
/// `{DIR}` stand for the harness's drums WAV, a text file, an empty file and its folder.
struct Rejection: Sendable, CustomTestStringConvertible {
  let line: String
  let error: ExpectedError
  init(_ line: String, _ message: String) { self.line = line; error = .exact(message) }
  init(_ line: String, containing fragments: String...) { self.line = line; error = .contains(fragments) }
  var testDescription: String { line }
}

/// A line the console must accept, what it prints, and how it changes the mixer.
struct Acceptance: Sendable, CustomTestStringConvertible {
  let line: String
  let output: [String]
  let change: @Sendable (inout MixerSnapshot, ConsoleHarness) -> Void
  init(_ line: String, _ output: [String] = [], change: @escaping @Sendable (inout MixerSnapshot, ConsoleHarness) -> Void = { _, _ in }) {
    self.line = line
    self.output = output
    self.change = change
  }
  var testDescription: String { line }
}

extension ConsoleHarness {
  /// `text` with the placeholders of `Rejection` replaced by real paths.
  func expand(_ text: String) -> String {
    text.replacingOccurrences(of: "{DRUMS}", with: drums)
      .replacingOccurrences(of: "{TEXT}", with: folder.file("notes.txt"))
      .replacingOccurrences(of: "{EMPTY}", with: folder.file("empty.wav"))
      .replacingOccurrences(of: "{DIR}", with: folder.path)
  }

  /// `withStems()` plus a few non-default settings and the helper files, marked saved.
  static func forValidation() throws -> ConsoleHarness {
    let h = try withStems()
    try h.folder.write("not audio\n", to: "notes.txt")
    try h.folder.write("", to: "empty.wav")
    for line in ["vol drums 0.8", "pan bass -0.5", "loops drums 2", "sfx load hit \(h.drums); sfx wait"] { h.run(line) }
    h.mixer.markSaved()
    return h
  }
}

@Suite("Command validation")
struct CommandValidationTests {
  static let noJack = "not running with JACK (routing commands need the live client)"
  static let positionFormat = "position must be seconds (83.5), m:ss (1:23.5) or h:mm:ss, optionally +/- for relative"

  static let rejections: [Rejection] = [
    // Unknown commands, with and without a suggestion.
    Rejection("frobnicate", "error: unknown command 'frobnicate' (type 'help' for the list)"),
    Rejection("pley", "error: unknown command 'pley' — did you mean 'play'? (type 'help' for the list)"),
    Rejection("stms", "error: unknown command 'stms' — did you mean 'stems'? (type 'help' for the list)"),
    Rejection("mode drums stretch quick", "error: stretch quality must be fine or fast (got 'quick')"),
    Rejection(
      "mode drums varispeed fast", "error: mode: a quality (fast) goes with stretch only: mode NAME stretch fine|fast"),
    Rejection("echo 'x", "error: unbalanced quote: a ' is not closed"),
    // add
    Rejection("add", "error: add: expected 1 to 3 arguments, got 0 — usage: add PATH [as NAME]"),
    Rejection("add /nonexistent.wav", "error: cannot add stem 'nonexistent': /nonexistent.wav: no such file"),
    Rejection("add {TEXT}", containing: "error: cannot add stem 'notes': {TEXT}: not a readable audio file"),
    Rejection("add {EMPTY}", "error: cannot add stem 'empty': {EMPTY}: the file is empty"),
    Rejection("add {DIR}", containing: "error: cannot add stem '", "{DIR}: is a directory, not an audio file"),
    Rejection("add {DRUMS} as drums", "error: a stem named 'drums' already exists; choose another name with 'as NAME'"),
    Rejection(
      "add {DRUMS} as all", "error: the stem name \"all\" is reserved (it means every stem in console commands); choose another name"),
    // The session format refuses any case of 'all': accepting one here would save a session
    // that cannot be opened again.
    Rejection(
      "add {DRUMS} as All", "error: the stem name \"All\" is reserved (it means every stem in console commands); choose another name"),
    Rejection(
      "add {DRUMS} as 'my drums'",
      "error: invalid stem name \"my drums\": a space is not allowed (allowed: 1 to 64 ASCII letters, digits, '_', '-' and '.')"),
    Rejection("add {DRUMS} as ''", "error: a stem name must not be empty (allowed: 1 to 64 letters, digits, '_', '-' and '.')"),
    Rejection("add {DRUMS} as", "error: add: usage: add PATH [as NAME]"),
    Rejection("add {DRUMS} like kick", "error: add: usage: add PATH [as NAME]"),
    Rejection("add {DRUMS} as kick now", "error: add: expected 1 to 3 arguments, got 4 — usage: add PATH [as NAME]"),
    // remove
    Rejection("remove", "error: remove: expected 1 argument, got 0 — usage: remove NAME|all"),
    Rejection("rm nosuch", "error: unknown stem 'nosuch' (stems: drums, bass)"),
    Rejection("stems extra", "error: stems: expected 0 arguments, got 1 — usage: stems"),
    // vol
    Rejection("vol drms 0.5", "error: unknown stem 'drms' — did you mean 'drums'?"),
    Rejection("vol DRUMS 0.5", "error: unknown stem 'DRUMS' — did you mean 'drums'?"),
    Rejection("vol guitar 0.5", "error: unknown stem 'guitar' (stems: drums, bass)"),
    // The name is checked before the value (the unknown name is the mistake to fix first).
    Rejection("vol nope 3", "error: unknown stem 'nope' (stems: drums, bass)"),
    Rejection("pan drms 7", "error: unknown stem 'drms' — did you mean 'drums'?"),
    Rejection("rate nope fast", "error: unknown stem 'nope' (stems: drums, bass)"),
    Rejection("vol drums", "error: vol: expected 2 to 6 arguments, got 1 — usage: vol NAME|all VALUE [over TIME [exp]]"),
    Rejection("vol drums 0.5 0.5 0.5", "error: vol: usage: vol NAME|all VALUE [over TIME [exp]]"),
    Rejection("vol drums 3", "error: volume must be a number between 0 and 2, or a level in dB such as \"-6dB\" (got 3)"),
    Rejection("vol all 3", "error: volume must be a number between 0 and 2, or a level in dB such as \"-6dB\" (got 3)"),
    Rejection("vol all -0.1", "error: volume must be a number between 0 and 2, or a level in dB such as \"-6dB\" (got -0.1)"),
    Rejection(
      "vol drums +7dB",
      "error: volume must be a number between 0 and 2, or a level in dB such as \"-6dB\" (got +7dB, which is a gain of 2.239)"),
    Rejection(
      "vol drums +7 dB",
      "error: volume must be a number between 0 and 2, or a level in dB such as \"-6dB\" (got +7dB, which is a gain of 2.239)"),
    Rejection("vol drums nan", "error: volume must be a number (got 'nan')"),
    Rejection("vol drums inf", "error: volume must be a number (got 'inf')"),
    Rejection("vol drums loud", "error: volume must be a number (got 'loud')"),
    // pan
    Rejection("pan drums 7", "error: pan must be a number between -1 and 1 (got 7)"),
    Rejection("pan all -1.5", "error: pan must be a number between -1 and 1 (got -1.5)"),
    Rejection("pan drums left", "error: pan must be a number (got 'left')"),
    Rejection("pan drums", "error: pan: expected 2 to 5 arguments, got 1 — usage: pan NAME|all VALUE [over TIME]"),
    Rejection("pan drums 0 1", "error: pan: usage: pan NAME|all VALUE [over TIME]"),
    // glides
    Rejection("vol drums 0 over", "error: vol: 'over' needs a time, e.g. 'over 4s' or 'over 500ms'"),
    Rejection("vol drums 0 over soon", "error: duration must be seconds (2, 2s, 500ms) or m:ss (1:30) (got 'soon')"),
    Rejection("vol drums 0 over 4s fast", "error: vol: after the glide time comes 'exp' or 'lin' (got 'fast')"),
    Rejection("vol drums 0 over 4s exp now", "error: vol: too many words after 'over 4s'"),
    Rejection("vol drums 0 over 0s", "error: glide time must be more than 0 and at most 3600 seconds (got 0)"),
    Rejection("vol drums 0 over 2:00:00", "error: glide time must be more than 0 and at most 3600 seconds (got 7200)"),
    Rejection("vol drums 3 over 4s", "error: volume must be a number between 0 and 2, or a level in dB such as \"-6dB\" (got 3)"),
    Rejection("pan drums 0 over 4s exp", "error: 'exp' glides are for vol and rate only (pan glides linearly)"),
    Rejection("pan drums 7 over 4s", "error: pan must be a number between -1 and 1 (got 7)"),
    Rejection("rate drums 3 over 2s", "error: rate must be a number between 0.5 and 2 (got 3)"),
    Rejection("glide stop drums", "error: glide: usage: glide cancel NAME|all (start a glide with 'vol NAME VALUE over TIME')"),
    Rejection("glide cancel drms", "error: unknown stem 'drms' — did you mean 'drums'?"),
    Rejection("glide cancel", "error: glide: expected 2 arguments, got 1 — usage: glide cancel NAME|all"),
    // loop regions (drums is 2 s long)
    Rejection("loop drums 1.5 0.5", "error: a loop region needs 0 ≤ start < end (got 1.5 to 0.5)"),
    Rejection("loop drums 0 3", "error: loop end 0:03.000 is past the end of 'drums' (0:02.000)"),
    Rejection("loop drums 0.5 1.5 xfade 1s", "error: a 1 s crossfade needs that much audio before the loop start (0:00.500)"),
    Rejection("loop drums 1.2 1.5 xfade 0.5", "error: the crossfade (0.5 s) is longer than the loop (0.30000000000000004 s)"),
    Rejection("loop drums 0.5 1.5 fade 5ms", "error: loop: usage: loop NAME START END [xfade TIME] | loop NAME off"),
    Rejection("loop drums on", "error: loop: usage: loop NAME START END [xfade TIME] | loop NAME off"),
    Rejection("loop drums +0.5 1.5", "error: loop: start and end are positions in the file (no + or -)"),
    Rejection("loop drums abc 1.5", "error: \(positionFormat) (got 'abc')"),
    Rejection("loop drms off", "error: unknown stem 'drms' — did you mean 'drums'?"),
    Rejection("loop drums", "error: loop: expected 2 to 5 arguments, got 1 — usage: loop NAME START END [xfade TIME] | loop NAME off"),
    Rejection("xfade drums 5ms", "error: xfade: 'drums' has no loop region (set one with 'loop drums START END')"),
    Rejection("xfade drums -5ms", "error: duration must not have a sign (got '-5ms')"),
    // rate, loops
    Rejection("rate drums 3", "error: rate must be a number between 0.5 and 2 (got 3)"),
    Rejection("rate all 0.25", "error: rate must be a number between 0.5 and 2 (got 0.25)"),
    Rejection("rate drums 0x1", "error: rate must be a number (got '0x1')"),
    Rejection("loops drums 1.5", "error: loops must be a whole number (got '1.5')"),
    Rejection("loops drums -2", "error: loops must be an integer from -1 (forever) up to 1000000 (got -2)"),
    Rejection("loops all 1000001", "error: loops must be an integer from -1 (forever) up to 1000000 (got 1000001)"),
    // mute, solo
    Rejection("mute", "error: mute: expected 1 argument, got 0 — usage: mute NAME|all"),
    Rejection("mute drms", "error: unknown stem 'drms' — did you mean 'drums'?"),
    Rejection("unmute drums bass", "error: unmute: expected 1 argument, got 2 — usage: unmute NAME|all"),
    Rejection("solo nosuch", "error: unknown stem 'nosuch' (stems: drums, bass)"),
    Rejection("unsolo", "error: unsolo: expected 1 argument, got 0 — usage: unsolo NAME|all"),
    // offset, directout
    Rejection("offset drums -1", "error: start offset must be a number of seconds from 0 to 1000000 (got -1)"),
    Rejection("offset drums 1000001", "error: start offset must be a number of seconds from 0 to 1000000 (got 1000001)"),
    Rejection("offset drums soon", "error: duration must be seconds (2, 2s, 500ms) or m:ss (1:30) (got 'soon')"),
    Rejection("directout drums maybe", "error: directout must be on or off (got 'maybe')"),
    Rejection("directout drums", "error: directout: expected 2 arguments, got 1 — usage: directout NAME|all on|off"),
    // master, quality
    Rejection("master 3", "error: volume must be a number between 0 and 2, or a level in dB such as \"-6dB\" (got 3)"),
    Rejection(
      "master +7dB",
      "error: volume must be a number between 0 and 2, or a level in dB such as \"-6dB\" (got +7dB, which is a gain of 2.239)"),
    Rejection("master", "error: master: expected 1 to 2 arguments, got 0 — usage: master VALUE"),
    Rejection("master -6 dB x", "error: master: expected 1 to 2 arguments, got 3 — usage: master VALUE"),
    Rejection("quality ultra", "error: quality must be one of linear, fast, medium, best (got 'ultra')"),
    Rejection("quality fast best", "error: quality: expected 0 to 1 arguments, got 2 — usage: quality linear|fast|medium|best"),
    // transport
    Rejection("play now", "error: play: expected 0 arguments, got 1 — usage: play"),
    Rejection("pause 1", "error: pause: expected 0 arguments, got 1 — usage: pause"),
    Rejection("stop 1", "error: stop: expected 0 arguments, got 1 — usage: stop"),
    Rejection("seek", "error: seek: expected 1 to 2 arguments, got 0 — usage: seek POSITION | seek bar N[.BEAT]"),
    Rejection("seek bar 3", "error: bar positions need a tempo: set one with 'tempo BPM [BEATS_PER_BAR]'"),
    Rejection("seek bars 3", "error: seek: usage: seek POSITION | seek bar N[.BEAT]"),
    Rejection("tempo 500", "error: tempo must be a number of beats per minute from 20 to 400 (got 500)"),
    Rejection("tempo fast", "error: tempo must be a number (got 'fast')"),
    Rejection("tempo 120 0", "error: beats per bar must be an integer number of beats per bar from 1 to 32 (got 0)"),
    Rejection("tempo 120 4.5", "error: beats per bar must be a whole number (got '4.5')"),
    Rejection("tempo 120 4 x", "error: tempo: expected 0 to 2 arguments, got 3 — usage: tempo [BPM [BEATS_PER_BAR] | off]"),
    // groups and timed changes
    Rejection("commit", "error: no group is open (start one with 'begin')"),
    Rejection("abort", "error: no group is open"),
    Rejection("begin now", "error: begin: expected 0 arguments, got 1 — usage: begin"),
    Rejection("at 1:00 vol drums 0", "error: usage: at POSITION { CMD; CMD } (POSITION: m:ss, seconds, bar N, next-loop STEM)"),
    Rejection(
      "at 1:00 { add {DRUMS} }",
      "error: 'add' cannot land at a time (only eq, glide, master, mute, pan, rate, safe, solo, unmute, unsafe, unsolo, vol, volume, width)"
    ),
    Rejection("at 1:00 { }", "error: the group is empty: nothing to commit"),
    Rejection("at bar 3 { mute drums }", "error: bar positions need a tempo: set one with 'tempo BPM [BEATS_PER_BAR]'"),
    Rejection("at abc { mute drums }", "error: \(positionFormat) (got 'abc')"),
    Rejection("at next-loop drms { mute drums }", containing: "error: ", "drms"),
    Rejection("seek abc", "error: \(positionFormat) (got 'abc')"),
    Rejection("seek 1:75", "error: position '1:75': minutes and seconds after ':' must be below 60"),
    Rejection("status now", "error: status: expected 0 arguments, got 1 — usage: status"),
    Rejection("wait", "error: wait: expected 1 argument, got 0 — usage: wait SECONDS|end"),
    Rejection("wait 100000", "error: wait: at most 86400 seconds (got 100000)"),
    Rejection("wait -1", "error: duration must not have a sign (got '-1')"),
    // meters
    Rejection("meters nosuch", "error: unknown stem 'nosuch' (stems: drums, bass)"),
    Rejection(
      "meters drums --watch now", "error: meters: expected 0 to 2 arguments, got 3 — usage: meters [NAME|master|input|reset] [--watch]"),
    Rejection("watch now", "error: watch: expected 0 arguments, got 1 — usage: watch"),
    // sound effects (the harness has loaded 'hit')
    Rejection("sfx bogus", "error: sfx: unknown action 'bogus' (load, wait, fire, stop, unload, out)"),
    Rejection("sfx out cue", "error: sfx out must be master or ports (got 'cue')"),
    Rejection("sfx out master ports", "error: usage: sfx out master|ports"),
    Rejection("sfx load hit", "error: usage: sfx load NAME PATH"),
    Rejection("sfx load a b c", "error: usage: sfx load NAME PATH"),
    Rejection(
      "sfx load a b c d",
      "error: sfx: expected 0 to 4 arguments, got 5 — usage: sfx [load NAME PATH | wait [NAME] | fire NAME [VOL] [PAN] | stop NAME|all | unload NAME | out master|ports]"
    ),
    Rejection("sfx load hit {DRUMS}", "error: an effect named 'hit' is already loaded ('sfx unload hit' first)"),
    Rejection(
      "sfx load all {DRUMS}", "error: the effect name \"all\" is reserved (it means every effect in console commands); choose another name"),
    Rejection(
      "sfx load ALL {DRUMS}", "error: the effect name \"ALL\" is reserved (it means every effect in console commands); choose another name"),
    Rejection(
      "sfx load 'big boom' {DRUMS}",
      "error: invalid effect name \"big boom\": a space is not allowed (allowed: 1 to 64 ASCII letters, digits, '_', '-' and '.')"),
    Rejection("sfx load boom /nonexistent.wav", "error: cannot load effect 'boom': /nonexistent.wav: no such file"),
    Rejection("sfx load boom {TEXT}", containing: "error: cannot load effect 'boom': {TEXT}: not a readable audio file"),
    Rejection("sfx load boom {EMPTY}", "error: cannot load effect 'boom': {EMPTY}: the file is empty"),
    Rejection("sfx fire", "error: usage: sfx fire NAME [VOL] [PAN]"),
    Rejection("sfx fire nosuch", "error: unknown effect 'nosuch' (effects: hit)"),
    Rejection("sfx fire hitt", "error: unknown effect 'hitt' — did you mean 'hit'?"),
    Rejection("sfx fire hit 3", "error: volume must be a number between 0 and 2, or a level in dB such as \"-6dB\" (got 3)"),
    Rejection(
      "sfx fire hit +7dB",
      "error: volume must be a number between 0 and 2, or a level in dB such as \"-6dB\" (got +7dB, which is a gain of 2.239)"),
    Rejection("sfx fire hit 1 7", "error: effect pan must be a number between -1 and 1 (got 7)"),
    Rejection("sfx fire hit 1 left", "error: pan must be a number (got 'left')"),
    Rejection("sfx stop", "error: usage: sfx stop NAME|all"),
    Rejection("sfx stop nosuch", "error: unknown effect 'nosuch' (effects: hit)"),
    Rejection("sfx unload nosuch", "error: unknown effect 'nosuch' (effects: hit)"),
    // recording (nothing is recording; no JACK)
    Rejection("record pause", "error: not recording (start with 'record [NAME]')"),
    Rejection("rec resume", "error: not recording (start with 'record [NAME]')"),
    Rejection("record stop", "error: not recording (start with 'record [NAME]')"),
    Rejection("record from", "error: usage: record [NAME] [from PORT…|from INPUT]"),
    Rejection("record take extra", "error: usage: record [NAME] [from PORT…|from INPUT]"),
    Rejection("record take from a b c", "error: record: at most two ports (left and right) after 'from'"),
    Rejection("record take from system:capture_1", "error: \(noJack)"),
    Rejection("record drums", "error: a stem named 'drums' already exists; choose another take name"),
    Rejection("record all", "error: the stem name \"all\" is reserved (it means every stem in console commands); choose another name"),
    // routing without JACK (argument counts are checked first)
    Rejection("ports", "error: \(noJack)"),
    Rejection("ports 'system:.*'", "error: \(noJack)"),
    Rejection("connect master_L system:playback_1", "error: \(noJack)"),
    Rejection("connect master_L", "error: connect: expected 2 arguments, got 1 — usage: connect SRC DST"),
    Rejection("disconnect master_L system:playback_1", "error: \(noJack)"),
    Rejection("connections", "error: \(noJack)"),
    Rejection("routes", "error: \(noJack)"),
    // session
    Rejection("save", "error: no session file yet: give a path, e.g. 'save Sessions/mysong.json'"),
    Rejection("save a.json b.json", "error: save: expected 0 to 1 arguments, got 2 — usage: save [PATH]"),
    Rejection(
      "save /nonexistent-dir/x.json", "error: /nonexistent-dir/x.json: cannot save: the folder \"/nonexistent-dir\" does not exist"),
    Rejection("open", "error: open: expected 1 argument, got 0 — usage: open PATH"),
    Rejection("open /nonexistent.json", "error: /nonexistent.json: no such file"),
    Rejection("load /nonexistent.json", "error: /nonexistent.json: no such file"),
    Rejection("open {TEXT}", containing: "error: {TEXT}: invalid JSON: ", "(line 1, column 1)"),
    Rejection("open {DIR}", "error: {DIR}: is a directory, not a session file"),
    Rejection("new now", "error: new: expected 0 arguments, got 1 — usage: new"),
    Rejection("recover", "error: recover: no session is open"),
    Rejection("recover discard", "error: recover: no session is open"),
    Rejection("recover discard now", "error: recover: expected 0 to 1 arguments, got 2 — usage: recover [discard]"),
    Rejection("autosave 0.5", "error: autosave must be from 1 to 3600 seconds, or off (got 0.5)"),
    Rejection("autosave 2:00:00", "error: autosave must be from 1 to 3600 seconds, or off (got 7200)"),
    Rejection("autosave -5", "error: duration must not have a sign (got '-5')"),
    Rejection("autosave 5 10", "error: autosave: expected 0 to 1 arguments, got 2 — usage: autosave SECONDS|off"),
    Rejection("setlist", "error: no setlist loaded (use 'setlist FILE')"),
    Rejection("setlist /nonexistent.txt", "error: /nonexistent.txt: cannot read the setlist: no such file"),
    Rejection("setlist {DIR}", "error: {DIR}: cannot read the setlist: is a directory, not a setlist"),
    Rejection("next", "error: no setlist loaded (use 'setlist FILE')"),
    Rejection("next!", "error: no setlist loaded (use 'setlist FILE')"),
    Rejection("prev", "error: no setlist loaded (use 'setlist FILE')"),
    Rejection("previous 1", "error: prev: expected 0 arguments, got 1 — usage: prev"),
    Rejection("goto 1", "error: no setlist loaded (use 'setlist FILE')"),
    Rejection("goto", "error: goto: expected 1 to 2 arguments, got 0 — usage: goto MARK [now|bar|end] | goto N|SONG"),
    Rejection("autopause maybe", "error: autopause must be on or off (got 'maybe')"),
    Rejection("meterpoint sideways", "error: meterpoint must be pre or post (got 'sideways')"),
    // click and count-in
    Rejection("click level 9dB", "error: click level must be a level in dB from -60 to 6 (got 9)"),
    Rejection("click to monitors", "error: click to: the click goes to 'click' (its own ports) or 'master' (got 'monitors')"),
    Rejection("countin 17", "error: count-in must be a whole number of bars from 0 to 16 (got 17)"),
    Rejection("cue drums loud", "error: cue: the tap is pfl, afl or off (got 'loud')"),
    Rejection("click loud", "error: click: usage: \(CommandTable.clickUsage)"),
    Rejection("click sample /nonexistent/wood.wav", containing: "error: click sample: ", "/nonexistent/wood.wav", "at most 2 s"),
    Rejection(
      "click accent {DRUMS}",
      "error: click accent: set the beats' sample first ('click sample FILE'); the accent replaces it on the bar's first beat"),
    Rejection("mark add a b c", "error: mark add: usage: mark add NAME [at POSITION | at bar N[.BEAT]]"),
    Rejection("goto intro sometime", "error: goto: a jump lands now, bar or end (got 'sometime')"),
    // other
    Rejection("help nosuch", "error: no help for 'nosuch': unknown command (type 'help' for the list)"),
    Rejection("help pan vol", "error: help: usage: help [COMMAND], help GROUP or help group GROUP"),
    Rejection(
      "help group nope",
      "error: help: no group 'nope' (groups: stems, buses, inputs, sends, transport, monitoring, meters, effects, midi, routing, inserts, "
        + "session, other)"),
    Rejection("quit now", "error: quit: expected 0 arguments, got 1 — usage: quit")
  ]

  @Test("a rejected line prints one error line and changes nothing", arguments: rejections)
  func rejected(_ row: Rejection) throws {
    let h = try ConsoleHarness.forValidation()
    defer { h.shutdown() }
    let before = MixerSnapshot(h)
    let result = h.run(h.expand(row.line))
    #expect(!result.ok)
    #expect(result.output.count == 1, "expected one line, got \(result.output)")
    switch row.error {
    case .exact(let message):
      #expect(result.output == [h.expand(message)])
    case .contains(let fragments):
      for f in fragments {
        #expect(result.output.first?.contains(h.expand(f)) == true, "'\(h.expand(f))' not in \(result.output)")
      }
    }
    #expect(MixerSnapshot(h) == before)
    #expect(!h.console.quitRequested)
  }

  static let acceptances: [Acceptance] = [
    Acceptance("") { _, _ in },
    Acceptance("   # only a comment") { _, _ in },
    Acceptance("vol drums 0.5") { s, _ in
      s[stem: "drums"].volume = 0.5; s.isDirty = true
    },
    Acceptance("mode all stretch fast") { s, _ in
      for n in ["drums", "bass"] { s[stem: n].mode = .stretch; s[stem: n].stretch = .fast }
      s.isDirty = true
    },
    Acceptance("mode drums stretch FINE") { s, _ in
      s[stem: "drums"].mode = .stretch; s.isDirty = true
    },
    Acceptance("vol all 0.5") { s, _ in
      s[stem: "drums"].volume = 0.5; s[stem: "bass"].volume = 0.5; s.isDirty = true
    },
    Acceptance("VOLUME all 2") { s, _ in
      s[stem: "drums"].volume = 2; s[stem: "bass"].volume = 2; s.isDirty = true
    },
    Acceptance("vol bass -inf dB") { s, _ in
      s[stem: "bass"].volume = 0; s.isDirty = true
    },
    Acceptance("vol drums 0.8") { _, _ in },  // already 0.8: not a change, not dirty
    Acceptance("pan all -1") { s, _ in
      s[stem: "drums"].pan = -1; s[stem: "bass"].pan = -1; s.isDirty = true
    },
    Acceptance("pan drums 0.25") { s, _ in
      s[stem: "drums"].pan = 0.25; s.isDirty = true
    },
    Acceptance("rate drums 0.5") { s, _ in
      s[stem: "drums"].rate = 0.5; s.isDirty = true
    },
    Acceptance("rate all 2") { s, _ in
      s[stem: "drums"].rate = 2; s[stem: "bass"].rate = 2; s.isDirty = true
    },
    Acceptance("loops bass -1") { s, _ in
      s[stem: "bass"].loops = -1; s.isDirty = true
    },
    Acceptance("loops all 1000000") { s, _ in
      s[stem: "drums"].loops = 1_000_000; s[stem: "bass"].loops = 1_000_000; s.isDirty = true
    },
    Acceptance("mute all") { s, _ in
      s[stem: "drums"].mute = true; s[stem: "bass"].mute = true; s.isDirty = true
    },
    Acceptance("mute drums; unmute all") { s, _ in s.isDirty = true },
    Acceptance("solo bass") { s, _ in
      s[stem: "bass"].solo = true; s.isDirty = true
    },
    Acceptance("solo all; unsolo drums") { s, _ in
      s[stem: "bass"].solo = true; s.isDirty = true
    },
    Acceptance("directout all on") { s, _ in
      s[stem: "drums"].directOut = true; s[stem: "bass"].directOut = true; s.isDirty = true
    },
    Acceptance("directout drums off") { _, _ in },
    Acceptance("offset drums 1:30") { s, _ in
      s[stem: "drums"].startOffset = 90; s.isDirty = true
    },
    Acceptance("offset bass 250ms") { s, _ in
      s[stem: "bass"].startOffset = 0.25; s.isDirty = true
    },
    Acceptance("master 0.5") { s, _ in
      s.masterVolume = 0.5; s.isDirty = true
    },
    Acceptance("master 1") { _, _ in },
    Acceptance("master -inf dB") { s, _ in
      s.masterVolume = 0; s.isDirty = true
    },
    Acceptance("quality", ["quality: fast"]) { _, _ in },
    Acceptance("quality BEST") { s, _ in
      s.quality = .best; s.isDirty = true
    },
    Acceptance("quality fast") { _, _ in },
    Acceptance("autopause", ["autopause: off"]) { _, _ in },
    Acceptance("autopause on") { s, _ in
      s.options.autoPauseOnDisconnect = true; s.isDirty = true
    },
    Acceptance("meterpoint", ["meterpoint: post"]) { _, _ in },
    Acceptance("meterpoint pre") { s, _ in
      s.options.meterPoint = .pre; s.isDirty = true
    },
    Acceptance("seek 1:23.5") { s, _ in s.position = 83.5 },
    Acceptance("seek 30; seek +10") { s, _ in s.position = 40 },
    Acceptance("seek 30; seek -50") { s, _ in s.position = 0 },
    Acceptance("seek 1:02:03") { s, _ in s.position = 3723 },
    Acceptance("seek 30; stop") { s, _ in s.position = 0 },
    Acceptance("play; pause") { _, _ in },
    Acceptance("remove drums", ["removed drums"]) { s, _ in
      s.stems.removeFirst(); s.paths.removeFirst(); s.isDirty = true
    },
    Acceptance("rm all", ["removed drums, bass"]) { s, _ in
      s.stems = []; s.paths = []; s.isDirty = true
    },
    Acceptance("add {DRUMS} as kick", ["added kick"]) { s, h in
      s.stems.append(StemSettings(name: "kick", file: h.drums)); s.paths.append(h.drums); s.isDirty = true
    },
    Acceptance("add {DRUMS}", ["added drums-2"]) { s, h in
      s.stems.append(StemSettings(name: "drums-2", file: h.drums)); s.paths.append(h.drums); s.isDirty = true
    },
    Acceptance("echo hello   'big  world'", ["hello big  world"]) { _, _ in },
    Acceptance("echo", [""]) { _, _ in },
    Acceptance("autosave", ["autosave: 30 s"]) { _, _ in },
    Acceptance("tempo", ["tempo: off"]) { _, _ in },
    // A glide's target is the setting at once (what a save stores); the sound gets there on time.
    Acceptance("vol drums 0 over 4s exp") { s, _ in
      s[stem: "drums"].volume = 0; s.isDirty = true
    },
    Acceptance("pan all 1 over 500ms") { s, _ in
      s[stem: "drums"].pan = 1; s[stem: "bass"].pan = 1; s.isDirty = true
    },
    Acceptance("rate drums 1.5 over 2s lin") { s, _ in
      s[stem: "drums"].rate = 1.5; s.isDirty = true
    },
    Acceptance("rate drums 1.5 over 2s exp") { s, _ in
      s[stem: "drums"].rate = 1.5; s.isDirty = true
    },
    Acceptance("glide cancel all") { _, _ in },
    Acceptance("tempo 120; tempo", ["tempo: 120 bpm, 4 beats per bar"]) { s, _ in s.isDirty = true },
    Acceptance("tempo 90 3; seek bar 3.2") { s, _ in
      s.position = 7 * 60 / 90; s.isDirty = true
    },
    Acceptance("tempo 120; seek bar 2") { s, _ in
      s.position = 2; s.isDirty = true
    },
    Acceptance("loop drums 0.5 1.5 xfade 5ms") { s, _ in
      s[stem: "drums"].loopStart = 0.5; s[stem: "drums"].loopEnd = 1.5; s[stem: "drums"].crossfade = 0.005; s.isDirty = true
    },
    Acceptance("loop drums 0.5 1.5; xfade drums 10ms") { s, _ in
      s[stem: "drums"].loopStart = 0.5; s[stem: "drums"].loopEnd = 1.5; s[stem: "drums"].crossfade = 0.01; s.isDirty = true
    },
    Acceptance("loop drums 0:00.5 1.5; loop drums off") { s, _ in s.isDirty = true },
    Acceptance("begin; vol drums 0.5; mute bass; abort", ["dropped 2 queued changes"]) { _, _ in },
    Acceptance("begin; vol drums 0.5; mute bass; commit", ["2 changes land now"]) { s, _ in
      s[stem: "drums"].volume = 0.5; s[stem: "bass"].mute = true; s.isDirty = true
    },
    Acceptance("at 1:00 { vol drums 0.5; pan bass 0.5 }", ["2 changes land at 1:00.000"]) { s, _ in
      s[stem: "drums"].volume = 0.5; s[stem: "bass"].pan = 0.5; s.isDirty = true
    },
    Acceptance("sfx", ["hit          0:02.000  ch 2  vol 1.00  pan 0.00  {DRUMS}"]) { _, _ in },
    Acceptance("sfx fire hit") { _, _ in },
    Acceptance("sfx play hit -6dB -0.5") { _, _ in },
    Acceptance("sfx stop hit; sfx stop all") { _, _ in },
    Acceptance("sfx unload hit", ["unloaded effect hit"]) { s, _ in
      s.effects = []; s.isDirty = true
    },
    Acceptance("sfx load boom {DRUMS}; sfx wait", ["loading effect boom…", "effect 'boom' loaded"]) { s, _ in
      s.effects.append("boom"); s.isDirty = true
    },
    Acceptance("record status", ["not recording"]) { _, _ in },
    Acceptance("meters input", ["input        L peak   -inf avg   -inf hold   -inf clips 0 | R peak   -inf avg   -inf hold   -inf clips 0"])
    { _, _ in },
    Acceptance("autosave off") { s, _ in s.autosaveInterval = 0 },
    Acceptance("autosave 90s") { s, _ in s.autosaveInterval = 90 },
    Acceptance("autosave 1:00") { s, _ in s.autosaveInterval = 60 },
    Acceptance("vol drums 0.3; pan drums 0.2 # and a comment") { s, _ in
      s[stem: "drums"].volume = 0.3; s[stem: "drums"].pan = 0.2; s.isDirty = true
    }
  ]

  @Test("an accepted line prints what it should and makes exactly its change", arguments: acceptances)
  func accepted(_ row: Acceptance) throws {
    let h = try ConsoleHarness.forValidation()
    defer { h.shutdown() }
    var expected = MixerSnapshot(h)
    row.change(&expected, h)
    let result = h.run(h.expand(row.line))
    #expect(result.ok)
    #expect(result.output == row.output.map(h.expand))
    #expect(MixerSnapshot(h) == expected)
  }

  @Test("volumes in dB through vol and master")
  func decibelVolumes() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("vol drums -6dB").ok)
    #expect(h.run("vol bass +3 dB").ok)
    #expect(h.run("master -6 dB").ok)
    let s = MixerSnapshot(h)
    #expect(abs(s[stem: "drums"].volume - 0.501187) < 1e-6)
    #expect(abs(s[stem: "bass"].volume - linear(decibels: 3)) < 1e-9)
    #expect(abs(s.masterVolume - linear(decibels: -6)) < 1e-9)
  }

  @Test("'all' and stem names with no stems")
  func noStems() throws {
    let h = try ConsoleHarness()
    defer { h.shutdown() }
    for line in ["vol all 0.5", "mute all", "remove all", "directout all on"] {
      #expect(h.run(line) == (false, ["error: there are no stems (add one with 'add PATH')"]), "\(line)")
    }
    #expect(h.run("pan drums 0") == (false, ["error: unknown stem 'drums' (there are no stems; add one with 'add PATH')"]))
    #expect(h.run("wait end") == (false, ["error: wait end: there are no stems"]))
    #expect(MixerSnapshot(h).stems.isEmpty)
  }

  @Test("wait end refuses when nothing would end")
  func waitEnd() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("loops all -1").ok)
    #expect(
      h.run("wait end") == (false, ["error: wait end: every stem loops forever (loops -1), so the end never comes; use 'wait SECONDS'"]))
  }

  @Test("debug heap: heap in use, own and anonymous resident memory, in bytes; the heap figure follows a real allocation")
  func debugHeap() throws {
    let h = try ConsoleHarness()
    defer { h.shutdown() }
    func figures() -> [String: Int] {
      let r = h.run("debug heap")
      #expect(r.ok, "\(r.output)")
      var out: [String: Int] = [:]
      for line in r.output {
        let parts = line.split(separator: ":", maxSplits: 1)
        if parts.count == 2, let n = parts[1].split(separator: " ").first.flatMap({ Int($0) }) { out[String(parts[0])] = n }
      }
      return out
    }
    let before = figures()
    #expect(Set(before.keys) == ["heap in use", "own resident", "anonymous resident"], "\(before)")
    #expect((before["anonymous resident"] ?? 0) > 0)
    // Under AddressSanitizer (scripts/test runs the unit tests so too) malloc is ASan's, not glibc's,
    // and glibc's counts do not see it: there the figures' form is what is checked.
    if dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") != nil { return }
    #expect((before["heap in use"] ?? 0) > 0)
    // 64 MB held (and touched) while measuring shows in the heap figure; freed, it is gone again.
    // Tests run in parallel in this process and their allocations move the figure too (once by
    // 40 MB between two readings): up to 5 tries, one of which must show both steps.
    var seen: [String] = []
    for _ in 0..<5 {
      let start = figures()
      let block = UnsafeMutableRawPointer.allocate(byteCount: 64 << 20, alignment: 16)
      block.initializeMemory(as: UInt8.self, repeating: 1, count: 64 << 20)
      let held = figures()
      block.deallocate()
      let after = figures()
      let up = (held["heap in use"] ?? 0) - (start["heap in use"] ?? 0), down = (held["heap in use"] ?? 0) - (after["heap in use"] ?? 0)
      seen.append("+\(up) −\(down)")
      if up >= 48 << 20 && down >= 48 << 20 { break }
    }
    #expect(seen.last.map { $0.split(separator: " ").allSatisfy { Int($0.dropFirst())! >= 48 << 20 } } == true, "steps seen: \(seen)")
    #expect(h.run("debug nonsense") == (false, ["error: debug: unknown diagnostic 'nonsense' (there is: heap)"]))
  }

  @Test("wait with a short time returns")
  func waitShort() throws {
    let h = try ConsoleHarness()
    defer { h.shutdown() }
    let start = ContinuousClock.now
    #expect(h.run("wait 50ms") == (true, []))
    #expect(ContinuousClock.now - start >= .milliseconds(50))
  }

  @Test("quit stops the rest of the line")
  func quitStopsLine() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("quit; vol drums 0; echo after") == (true, []))
    #expect(h.console.quitRequested)
    #expect(MixerSnapshot(h)[stem: "drums"].volume == 1)
  }

  @Test("sfx load refuses a file longer than 60 s and loads nothing")
  func effectTooLong() throws {
    let h = try ConsoleHarness()
    defer { h.shutdown() }
    let long = try h.folder.wav("long.wav", channels: 1, sampleRate: 8000, seconds: 61)
    let result = h.run("sfx load long \(long)")
    #expect(!result.ok)
    #expect(result.output.count == 1)
    #expect(result.output.first?.hasPrefix("error: cannot load effect 'long': \(long): too long") == true, "\(result.output)")
    #expect(h.mixer.effects.statuses().isEmpty)
    let ok = try h.folder.wav("short.wav", channels: 1, sampleRate: 8000, seconds: 59)
    #expect(h.run("sfx load short \(ok); sfx wait short") == (true, ["loading effect short…", "effect 'short' loaded"]))
  }

  @Test("every alias runs its command", arguments: CommandTable.all.flatMap { spec in spec.aliases.map { (spec.name, $0) } })
  func aliases(_ name: String, _ alias: String) {
    #expect(CommandTable.lookup(alias)?.name == name)
  }

  @Test("command names and aliases are unique")
  func uniqueNames() {
    let names = CommandTable.allNames
    #expect(Set(names).count == names.count)
  }

  // MARK: Regressions: bugs this suite found, now fixed

  @Test("a transposed command name gets a suggestion")
  func transposition() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("paly") == (false, ["error: unknown command 'paly' — did you mean 'play'? (type 'help' for the list)"]))
    #expect(h.run("vol durms 1") == (false, ["error: unknown stem 'durms' — did you mean 'drums'?"]))
  }

  @Test("meters rejects a second name instead of ignoring it")
  func metersExtraArgument() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let result = h.run("meters drums bass")
    #expect(!result.ok)
    #expect(result.output.count == 1)
    #expect(result.output.first?.hasPrefix("error: ") == true)
  }

  @Test("stopOnError (script mode without --keep-going): a failed command stops the rest of its line")
  func stopOnError() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(
      h.run("pan drums 7; vol drums 0.3; echo after", stopOnError: true) == (
        false, ["error: pan must be a number between -1 and 1 (got 7)"]
      ))
    #expect(MixerSnapshot(h)[stem: "drums"].volume == 1)
    #expect(h.run("vol drums 0.3; vol bass 0.2", stopOnError: true) == (true, []))
    #expect(MixerSnapshot(h)[stem: "bass"].volume == 0.2)
  }

  @Test("without stopOnError (interactive, --keep-going) the rest of the line still runs")
  func keepGoing() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("pan drums 7; vol drums 0.3; echo after") == (false, ["error: pan must be a number between -1 and 1 (got 7)", "after"]))
    #expect(MixerSnapshot(h)[stem: "drums"].volume == 0.3)
  }

  @Test("seek to an absurd position is rejected instead of crashing")
  func seekOverflow() async {
    await #expect(processExitsWith: .success) {
      let mixer = Mixer(sampleRate: 48000, streaming: .synchronous)
      let console = Console(mixer: mixer) { _ in }
      let ok = console.execute(line: "seek 999999999999999") || console.execute(line: "seek +999999999999999")
      exit(ok ? 1 : 0)
    }
  }

  @Test("unknown stem names are echoed with control characters escaped")
  func unknownStemPrintable() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("vol 'x\u{1B}[2J' 1") == (false, ["error: unknown stem 'x\\u{1b}[2J' (stems: drums, bass)"]))
  }
}
