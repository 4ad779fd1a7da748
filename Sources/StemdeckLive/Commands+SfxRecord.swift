import Foundation
import StemdeckAudioFile
import StemdeckControl
import StemdeckJack
import StemdeckSession
import StemdeckText

/// `sfx` and `record`: one-shot sound effects and recording takes.
extension CommandTable {
  package static let effectAndRecordCommands: [CommandSpec] = [
    CommandSpec(
      name: "sfx", usage: "sfx [load NAME PATH | wait [NAME] | fire NAME [VOL] [PAN] | stop NAME|all | unload NAME | out master|ports]",
      summary: "one-shot sound effects held in memory, fired polyphonically within one period",
      details: """
        sfx load NAME PATH    load a short file (up to 60 s) into memory, in the background:
                              it answers at once; "effect 'NAME' loaded" says when it is ready
        sfx wait [NAME]       wait until every effect (or NAME) has loaded; fails if one failed
        sfx fire NAME [VOL] [PAN]   play it now (32 voices; the oldest is stolen when all sound)
        sfx stop NAME|all     fade out playing instances
        sfx unload NAME       free it (or cancel its loading)
        sfx out master|ports  mix them into the master (default), or play them on their own
                              ports sfx_L/sfx_R instead (a cue feed); saved in the session
        sfx                   list loaded effects (and those still loading)
        """,
      argumentCount: 0...4, completions: [.keyword(["load", "wait", "fire", "stop", "unload", "out"])], accessWhenGiven: ["load": .files]
    ) { (c, a) throws(CommandError) in
      guard let verb = a.first?.lowercased() else {
        let list = c.mixer.effects.statuses()
        let loading = c.mixer.effects.stillLoading
        if list.isEmpty && loading.isEmpty { c.write("no effects loaded ('sfx load NAME PATH')") }
        for e in list {
          c.write(
            "\(e.settings.name.padded(12)) \(NumberFormat.time(e.seconds))  ch \(e.channels)  vol \(Display.volume(e.settings.volume))  pan \(NumberFormat.fixed(e.settings.pan, 2))  \(e.path)"
          )
        }
        for name in loading { c.write("\(name.padded(12)) loading…") }
        return
      }
      let rest = Array(a.dropFirst())
      switch verb {
      case "load":
        guard rest.count == 2 else { throw CommandError(usage: "sfx load NAME PATH") }
        let path = Console.absolutePath(rest[1])
        let superseded = try c.mixerCall { () throws(MixerError) -> Bool in
          try c.mixer.effects.startLoading(path: path, settings: EffectSettings(name: rest[0], file: path))
        }
        c.write("loading effect \(rest[0])…" + (superseded ? " (the earlier load of '\(rest[0])' is cancelled)" : ""))
      case "wait":
        guard rest.count <= 1 else { throw CommandError(usage: "sfx wait [NAME]") }
        try c.waitForEffects(rest.first)
      case "fire", "play":
        guard (1...3).contains(rest.count) else { throw CommandError(usage: "sfx fire NAME [VOL] [PAN]") }
        let vol = rest.count > 1 ? try ValueParser.volume(rest[1]) : nil
        let pan = rest.count > 2 ? try ValueParser.number(rest[2], "pan") : nil
        // A script written when `sfx load` finished before answering (`sfx load k …; sfx fire k`)
        // still works: outside the REPL, firing an effect that is still loading waits for it.
        // At the REPL it is a clear error instead (a person is not kept waiting by a key).
        if !c.interactive && c.mixer.effects.stillLoading.contains(rest[0]) { try c.waitForEffects(rest[0], parking: false) }
        try c.mixerCall { () throws(MixerError) in try c.mixer.effects.fire(rest[0], volume: vol, pan: pan) }
      case "stop":
        guard rest.count == 1 else { throw CommandError(usage: "sfx stop NAME|all") }
        try c.mixerCall { () throws(MixerError) in try c.mixer.effects.stop(rest[0] == "all" ? nil : rest[0]) }
      case "out", "output":
        guard rest.count <= 1 else { throw CommandError(usage: "sfx out master|ports") }
        guard let word = rest.first else { c.write("sfx out: \(c.mixer.options.effectsOutput.rawValue)"); return }
        guard let output = EffectsOutput(rawValue: word.lowercased()) else {
          throw CommandError("sfx out must be master or ports (got '\(ValueParser.printable(word))')")
        }
        var o = c.mixer.options
        o.effectsOutput = output
        try c.mixerCall { () throws(MixerError) in try c.mixer.setOptions(o) }
        c.write(
          output == .ports
            ? "sound effects play on \(c.driver?.clientName ?? "stemdeck"):sfx_L/sfx_R, not in the master"
            : "sound effects play in the master")
      case "unload", "remove":
        guard rest.count == 1 else { throw CommandError(usage: "sfx unload NAME") }
        try c.mixerCall { () throws(MixerError) in try c.mixer.effects.unload(rest[0]) }
        c.write("unloaded effect \(rest[0])")
      default:
        throw CommandError("sfx: unknown action '\(ValueParser.printable(verb))' (load, wait, fire, stop, unload, out)")
      }
    },
    CommandSpec(
      name: "record", aliases: ["rec"], usage: "record [NAME] [from PORT…|from INPUT] | record INPUT | record pause|resume|stop",
      summary: "record the inputs in_L/in_R (or a live input strip) to a new file; on stop the take becomes a stem",
      details: """
        The take lines up with the transport: JACK's playback latency of master_L plus the
        capture latency of in_L is subtracted, and a take armed before 'play' is anchored
        where the transport starts rolling (what came before becomes its lead-in).
        'from PORT…' connects those ports to in_L/in_R first (one port feeds both).
        'from INPUT' (or 'record INPUT') records a live input strip instead: its signal after
        its EQ and before its fader, pan, mute and solo (pre-fader, as a console's direct
        recording; a mono input fills both sides), aligned by its own ports' capture latency.
        Files go to the session's folder (or its recording folder) as NAME.wav (32-bit float)
        or as set in the session's "recording" section; an existing file is never overwritten.
        """,
      argumentCount: 0...12, completions: [.keyword(["pause", "resume", "stop", "from"])], access: .files
    ) { (c, a) throws(CommandError) in
      switch a.first?.lowercased() {
      case "pause": try c.mixerCall { () throws(MixerError) in try c.mixer.recorder.pause(true) }; return
      case "resume": try c.mixerCall { () throws(MixerError) in try c.mixer.recorder.pause(false) }; return
      case "stop":
        // Latencies are read again now: JACK recomputes them after connections change.
        if let d = c.driver, let r = c.mixer.recorder.status {
          c.mixer.recorder.setLatency(r.input.map { d.roundTripLatencyFrames(input: $0) } ?? d.roundTripLatencyFrames)
        }
        try c.mixerCall { () throws(MixerError) in try c.mixer.recorder.stop() }
        return
      case "status":
        if let r = c.mixer.recorder.status {
          c.write(
            "recording '\(r.name)': \(NumberFormat.time(r.seconds))\(r.paused ? " (paused)" : "")\(r.dropped > 0 ? ", \(r.dropped) frames dropped" : "") → \(r.path)"
          )
        } else {
          c.write("not recording")
        }
        return
      default: break
      }
      var words = a[...]
      var name: String?
      let inputNames = c.mixer.inputs.names
      var input: String?
      if words.count == 1, let first = words.first, inputNames.contains(first) {
        input = first  // `record mic`: the strip, under the next take name
        words = []
      }
      if let first = words.first, first.lowercased() != "from" { name = first; words = words.dropFirst() }
      var ports: [String] = []
      if let first = words.first {
        guard first.lowercased() == "from", words.count >= 2 else { throw CommandError(usage: "record [NAME] [from PORT…|from INPUT]") }
        ports = Array(words.dropFirst())
        guard ports.count <= 2 else { throw CommandError("record: at most two ports (left and right) after 'from'") }
        if ports.count == 1, inputNames.contains(ports[0]) {
          input = ports[0]
          ports = []
        }
      }
      let takeName = name ?? c.nextTakeName()
      let settings = c.mixer.recorder.settings
      let folder = c.takeFolder(settings)
      let ext = settings.format == .flac24 ? "flac" : "wav"
      let path = folder + "/" + takeName + "." + ext
      if !ports.isEmpty {
        let d = try c.jack()
        let targets = ports.count == 1 ? [(ports[0], "in_L"), (ports[0], "in_R")] : [(ports[0], "in_L"), (ports[1], "in_R")]
        for (src, dst) in targets {
          do throws(JackError) { try d.connect(src, dst) } catch { throw CommandError(error) }
        }
      }
      let latency = input.map { c.driver?.roundTripLatencyFrames(input: $0) ?? 0 } ?? c.driver?.roundTripLatencyFrames ?? 0
      let format: OutputFormat = settings.format == .flac24 ? .flac : settings.format == .wav24 ? .wav24 : .wavFloat
      try c.mixerCall { () throws(MixerError) in
        try c.mixer.recorder.start(
          path: path, name: takeName, format: format, latencyFrames: latency, muted: settings.takesMuted, input: input)
      }
      c.write("recording '\(takeName)'\(input.map { " from input \($0) (pre-fader)" } ?? "") → \(path)")
    }
  ]
}

extension Console {
  /// "take-1", "take-2", … the first name not used by a stem or an existing file.
  package func nextTakeName() -> String {
    let names = Set(mixer.stems.allNames)
    // lstat, not fileExists: a symbolic link pointing nowhere occupies a name too.
    func occupied(_ path: String) -> Bool {
      var info = stat()
      return lstat(RawFileName.cPath(path), &info) == 0
    }
    var n = 1
    while names.contains("take-\(n)") || occupied(takeFolder(mixer.recorder.settings) + "/take-\(n).wav")
      || occupied(takeFolder(mixer.recorder.settings) + "/take-\(n).flac")
    { n += 1 }
    return "take-\(n)"
  }

  /// The folder takes are written to: the session's recording folder, relative to the session.
  package func takeFolder(_ settings: RecordingSettings) -> String {
    let base =
      sessionPath.map { URL(fileURLWithPath: $0).deletingLastPathComponent().path }
      ?? FileManager.default.currentDirectoryPath
    if settings.folder.isEmpty { return base }
    return settings.folder.hasPrefix("/") ? settings.folder : base + "/" + settings.folder
  }
}
