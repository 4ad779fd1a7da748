import StemdeckAudioFile
import StemdeckControl
import StemdeckEngine
import StemdeckJack
import StemdeckSession
import StemdeckText

/// Text views of the mixer: the `stems` table, `status` lines, meters and the live bar view.
/// Script mode output is documented in the README; keep these formats stable.
package enum Display {
  /// A level: "-12.3", "-inf" at or below −160 dB (`NumberFormat.level`, the one rule).
  package static func db(_ v: Double) -> String { NumberFormat.level(v) }

  package static func volume(_ v: Double) -> String {
    "\(NumberFormat.fixed(v, 2))"
  }

  /// The `stems` table, drawn from the mixer view's strips (`MixerViewModel.stemStrips`): a
  /// row per playing stem, a line per offline one. With `width` (a terminal's columns,
  /// interactive mode) columns are dropped, least useful first, and the file name shortened in
  /// the middle until each row fits; stem names are never cut. Without it (script mode), every
  /// column, as documented.
  /// A value, or while a glide runs, where it has got to and its target: `0.42→0.00`.
  package static func gliding(_ value: Double, to target: Double?, _ format: (Double) -> String) -> String {
    target.map { "\(format(value))→\(format($0))" } ?? format(value)
  }

  /// A bus's or input's setting while its glide has got to `reached` (nil: no glide).
  package static func gliding(reached: Double?, setting: Double, _ format: (Double) -> String) -> String {
    gliding(reached ?? setting, to: reached == nil ? nil : setting, format)
  }

  package static func fixed2(_ v: Double) -> String { NumberFormat.fixed(v, 2) }

  package static func stemsTable(_ strips: [MixerViewModel.Strip], width: Int? = nil) -> [String] {
    if strips.isEmpty { return ["no stems (add one with 'add PATH')"] }
    let stems = strips.filter { $0.offline == nil }
    let offlineLines = strips.compactMap { s in s.offline.map { "offline: \(s.name) (\(s.path ?? ""): \($0))" } }
    if stems.isEmpty { return offlineLines }
    let header = ["name", "file", "ch", "Hz", "length", "vol", "pan", "rate", "loops", "flags", "loop", "position", "peak dB"]
    var rows: [[String]] = [header]
    for s in stems {
      let flags = s.flags.tableText.isEmpty ? "-" : s.flags.tableText
      let peaks = s.meters.map { db($0.peak) }.joined(separator: "/")
      let pan = s.pan ?? 0, rate = s.rate ?? 1, loops = s.loops ?? 0
      rows.append([
        s.name, s.file ?? "", s.info.map(channelsCell) ?? "", s.info.map { "\($0.sampleRate)" } ?? "", NumberFormat.time(s.length ?? 0),
        gliding(s.volume, to: s.volumeTarget, volume), gliding(pan, to: s.panTarget, fixed2), gliding(rate, to: s.rateTarget, fixed2),
        loops < 0 ? "forever" : "\(loops)", flags,
        "\(s.loop ?? 1)", NumberFormat.time(s.position ?? 0), peaks
      ])
    }
    let numeric: Set<Int> = [2, 3, 5, 6, 7, 10]
    var shown = Array(0..<header.count)
    func widths() -> [Int] {
      var w = [Int](repeating: 0, count: header.count)
      for r in rows { for (i, cell) in r.enumerated() { w[i] = max(w[i], TerminalInfo.displayWidth(cell)) } }
      return w
    }
    func total() -> Int { let w = widths(); return shown.reduce(0) { $0 + w[$1] } + 2 * (shown.count - 1) }
    let flagsLine =
      "flags: M muted, S solo, D direct outs, E ended, U underruns, G gliding, Q EQ, T stretch, F stretch fast, ! unreadable, L solo-safe"
    var legend = [flagsLine]
    if let width {
      // Least useful first: channels, rate in Hz, loop number, peak, length; then the file
      // name is shortened (down to 12 columns), and last the position.
      for column in [2, 3, 10, 12, 4] where total() > width { shown.removeAll { $0 == column } }
      if total() > width {
        let over = total() - width
        let fileWidth = max(12, widths()[1] - over)
        for r in rows.indices { rows[r][1] = Self.shortened(rows[r][1], to: fileWidth) }
      }
      if total() > width { shown.removeAll { $0 == 11 } }
      legend = Self.wrapped(flagsLine, width: width)
    }
    let w = widths()
    let table: [String] = rows.map { (r: [String]) -> String in
      let cells: [String] = shown.map { (i: Int) -> String in
        // Padding counts columns, not characters (é is one, a wide character two).
        let pad = max(0, w[i] - TerminalInfo.displayWidth(r[i]))
        return numeric.contains(i) ? String(repeating: " ", count: pad) + r[i] : r[i] + String(repeating: " ", count: pad)
      }
      return cells.joined(separator: "  ").trimmingTrailingSpaces()
    }
    var offlineShown: [String] = []
    for line in offlineLines { offlineShown += width.map { Self.wrapped(line, width: $0) } ?? [line] }
    if stems.contains(where: { ($0.info?.channelCount ?? 0) > 2 }) {
      let channelsLine =
        "ch: more than 2 channels are downmixed by their layout (ITU-R BS.775; 'fold': no known layout, odd channels averaged left, even right)"
      legend += width.map { Self.wrapped(channelsLine, width: $0) } ?? [channelsLine]
    }
    return table + offlineShown + legend
  }

  /// `text` shortened to `width` columns with "…" in the middle (both ends stay readable).
  package static func shortened(_ text: String, to width: Int) -> String {
    guard TerminalInfo.displayWidth(text) > width, width >= 3 else { return text }
    let characters = Array(text)
    let keep = width - 1
    let head = (keep + 1) / 2, tail = keep - head
    return String(characters.prefix(head)) + "…" + String(characters.suffix(tail))
  }

  /// `text` cut to `width` columns with "…" at the end.
  package static func shortened(_ text: String, toEnd width: Int) -> String {
    guard TerminalInfo.displayWidth(text) > width, width >= 2 else { return text }
    var out = ""
    var used = 0
    for c in text {
      let w = TerminalInfo.displayWidth(String(c))
      if used + w > width - 1 { break }
      out.append(c)
      used += w
    }
    return out.trimmingTrailingSpaces() + "…"
  }

  /// `text` wrapped at spaces into lines of at most `width` columns; continuation lines are
  /// indented by `indent` spaces. A word longer than a line is broken.
  package static func wrapped(_ text: String, width: Int, indent: Int = 2) -> [String] {
    guard width > indent + 8, TerminalInfo.displayWidth(text) > width else { return [text] }
    var lines: [String] = []
    var line = ""
    var lineWidth = 0
    for word in text.split(separator: " ", omittingEmptySubsequences: false).map(String.init) {
      var word = word
      var wordWidth = TerminalInfo.displayWidth(word)
      if lineWidth > 0 && lineWidth + 1 + wordWidth > width {
        lines.append(line)
        line = String(repeating: " ", count: indent)
        lineWidth = indent
      } else if lineWidth > 0 {
        line += " "
        lineWidth += 1
      }
      while lineWidth + wordWidth > width {
        let room = max(1, width - lineWidth)
        line += String(word.prefix(room))
        word = String(word.dropFirst(room))
        wordWidth = TerminalInfo.displayWidth(word)
        lines.append(line)
        line = String(repeating: " ", count: indent)
        lineWidth = indent
      }
      line += word
      lineWidth += wordWidth
    }
    if !line.trimmingSpaces().isEmpty { lines.append(line) }
    return lines
  }

  /// The `ch` cell: the channel count, and for more than two the layout the downmix uses
  /// ("6 5.1") or "fold" when the file has none.
  package static func channelsCell(_ info: SoundFileInfo) -> String {
    guard info.channelCount > 2 else { return "\(info.channelCount)" }
    return "\(info.channelCount) \(info.layout?.name ?? "fold")"
  }

  /// What `status` reports, as values: the text lines (`lines`) and the control socket's JSON
  /// (`QueryJSON.status`) both come from it.
  package struct StatusReport {
    /// "playing", "paused", "stopped" or "starting".
    package var state: String
    /// Seconds; at the end of a song the end, never past it.
    package var position: Double
    /// The longest finite stem, seconds (nil: no finite stem).
    package var length: Double?
    package var endless: Bool
    package var sampleRate: Int
    /// The JACK side; nil offline.
    package struct Server {
      package var bufferSize: Int
      package var dspLoad: Double
      package var xruns: Int
      package var name: String
      package var connected: Bool
      /// False while the server does not answer stemdeck's requests (stopped or stuck).
      package var answering = true
      /// The `driver:` line after the colon; nil when the server's process cannot be seen.
      package var driver: String?
      package var client: String
      /// "following", "leading" or nil (off).
      package var transportSync: String?
      /// While leading: sample-locked, and the locates made to stay in step.
      package var transportLocked: Bool?
      package var transportCorrections: Int?
    }
    package var server: Server?
    package var underruns: Int
    package var stems: Int
    package var masterVolume: Double
    package var quality: String
    package var session: String?
    package var unsaved: Bool
    /// Where other programs reach this stemdeck: the control socket's path, the OSC server's
    /// `HOST:PORT` (nil: off).
    package var control: String?
    package var osc: String?
    /// The strips soloed (a solo is active while there is one).
    package var soloed: [String] = []
    /// The plugin inserts' latency at the master after compensation, in frames.
    package var insertLatency = 0
    /// The song's marks, in time order, and a quantised jump waiting for its frame.
    package var marks: [Mark] = []
    package var jump: WaitingJump?

    /// The `status` lines (script mode output is documented in the README: keep them stable).
    package var lines: [String] {
      var lines = [
        "state: \(state)",
        "position: \(NumberFormat.time(position)) / \(length.map(NumberFormat.time) ?? "-")\(endless ? " (some stems loop forever)" : "")"
      ]
      if let d = server {
        lines.append("sample rate: \(sampleRate) Hz")
        lines.append("buffer: \(d.bufferSize) frames")
        lines.append("dsp load: \(NumberFormat.fixed(d.dspLoad, 1)) %")
        lines.append("xruns: \(d.xruns)")
        let state = !d.connected ? "disconnected, retrying" : d.answering ? "connected" : "connected, not answering: stopped or stuck"
        lines.append("server: \(d.name) (\(state))")
        lines.append("driver: \(d.driver ?? "unknown (the server's process is not visible from here)")")
        lines.append("client: \(d.client)")
        switch d.transportSync {
        case "following"?: lines.append("JACK transport: following")
        case "leading"?:
          if let locked = d.transportLocked, let corrections = d.transportCorrections {
            let how = locked ? "sample-locked" : (state == "playing" ? "locking" : "stopped")
            lines.append("JACK transport: leading (\(how); \(corrections) locate\(corrections == 1 ? "" : "s") to stay in step)")
          } else {
            lines.append("JACK transport: leading")
          }
        default: break
        }
      } else {
        lines.append("sample rate: \(sampleRate) Hz")
        lines.append("server: none (offline)")
      }
      lines.append("underruns: \(underruns)")
      lines.append("stems: \(stems)")
      if !marks.isEmpty { lines.append("marks: " + marks.map { "\($0.name) \(NumberFormat.time($0.at))" }.joined(separator: ", ")) }
      if let jump { lines.append(CommandTable.jumpLine(jump, nil)) }
      if !soloed.isEmpty {
        lines.append("solo: active (\(soloed.joined(separator: ", "))): strips neither soloed nor solo-safe are silent")
      }
      lines.append("master: \(Display.volume(masterVolume)) (\(Display.db(Decibels.fromAmplitude(masterVolume))) dB)")
      if insertLatency > 0 { lines.append("latency: \(insertLatency) frames (plugin inserts, strips compensated)") }
      lines.append("quality: \(quality)")
      if let session { lines.append("session: \(session)\(unsaved ? " (unsaved changes)" : "")") }
      if let control { lines.append("control socket: \(control)") }
      if let osc { lines.append("OSC: \(osc) (UDP)") }
      return lines
    }
  }

  package static func statusReport(_ c: Console) -> StatusReport {
    let m = c.mixer
    let state: String
    switch m.transport.state {
    case .playing: state = "playing"
    case .paused: state = m.transport.position == 0 ? "stopped" : "paused"
    case .waitingForDisk: state = "starting"
    }
    let duration = m.transport.duration
    // The transport runs on for part of a period after the last stem ends (it stops at the next
    // look): at the end of a song the position shown is the end, never past it.
    var position = m.transport.position
    if let duration, !m.transport.hasEndlessStems, m.transport.songHasEnded { position = min(position, duration) }
    var server: StatusReport.Server?
    var sampleRate = Int(m.sampleRate)
    if let d = c.driver {
      sampleRate = d.sampleRate
      // The driver from the server's own command line (libjack does not say): net slaves show
      // their master and network latency.
      var info = ServerDriverInfo.of(server: d.serverName)
      if info?.driver == "net", d.connected, d.serverAnswering { info?.linked = ((try? d.ports()) ?? []).contains { $0.isPhysical } }
      var s = StatusReport.Server(
        bufferSize: d.bufferSize, dspLoad: d.cpuLoad, xruns: d.xruns, name: d.serverName,
        connected: d.connected, answering: d.serverAnswering, driver: info?.description, client: d.clientName)
      switch m.options.transportSync {
      case .off: break
      case .follow: s.transportSync = "following"
      case .lead:
        s.transportSync = "leading"
        if let lock = d.transportLock { s.transportLocked = lock.locked; s.transportCorrections = lock.corrections }
      }
      server = s
    }
    let statuses = m.stems.statuses()
    return StatusReport(
      state: state, position: position, length: duration, endless: m.transport.hasEndlessStems, sampleRate: sampleRate,
      server: server, underruns: statuses.reduce(0) { $0 + $1.underruns }, stems: statuses.count,
      masterVolume: m.master.volume, quality: m.quality.rawValue, session: c.sessionPath, unsaved: m.isDirty,
      control: c.listening.control, osc: c.listening.osc, soloed: m.strips.soloed, insertLatency: m.inserts.latency,
      marks: m.marks.all.sorted { ($0.at, $0.name) < ($1.at, $1.name) }, jump: m.marks.waitingJump)
  }

  package static func status(_ c: Console) -> [String] { statusReport(c).lines }

  /// One of stemdeck's port connections, intended or made (`routes`, `connections`): the text
  /// lines and the control socket's JSON both come from it.
  package struct RouteReport {
    /// stemdeck's port (short name: master_L) and the peer's full name.
    package var port: String
    package var peer: String
    package var connected: Bool
    /// The signal flows from the peer to stemdeck's port (in_L, in_R, midi_in).
    package var isInput: Bool
  }

  /// The routes of `c`'s JACK client: every intended and made connection (`connectedOnly`: made ones).
  package static func routes(_ c: Console, connectedOnly: Bool) throws(CommandError) -> [RouteReport] {
    let all = try c.jackCall { (d: JackDriver) throws(JackError) in d.routes() }
    return all.map { RouteReport(port: $0.port, peer: $0.peer, connected: $0.connected, isInput: $0.isInput) }
      .filter { !connectedOnly || $0.connected }
  }

  /// The `routes` lines.
  package static func routeLines(_ routes: [RouteReport]) -> [String] {
    if routes.isEmpty { return ["no routes"] }
    return routes.map { "\($0.connected ? "connected" : "waiting  ")  \($0.port) \($0.isInput ? "←" : "→") \($0.peer)" }
  }

  /// The `connections` lines.
  package static func connectionLines(_ routes: [RouteReport]) -> [String] {
    if routes.isEmpty { return ["no connections"] }
    return routes.map { "\($0.port) \($0.isInput ? "←" : "→") \($0.peer)" }
  }

  /// A channel's meter text: "L peak  -6.0 avg  -9.0 hold  -3.0 clips 0".
  package static func meterChannel(_ i: Int, of meters: [MixerViewModel.Meter]) -> String {
    let ch = meters[i]
    let label = meters.count == 1 ? "M" : (i == 0 ? "L" : "R")
    return "\(label) peak \(db(ch.peak).padLeft(6)) avg \(db(ch.rms).padLeft(6)) hold \(db(ch.hold).padLeft(6)) clips \(ch.clips)"
  }

  package static func meterLine(_ name: String, _ meters: [MixerViewModel.Meter]) -> String {
    "\(name.padded(12)) " + meters.indices.map { meterChannel($0, of: meters) }.joined(separator: " | ")
  }

  /// The meter lines of `name`, fitted to `width` when given: one line when it fits, else one
  /// line per channel (the name on the first, or on its own line when it is long).
  package static func meterLines(_ name: String, _ meters: [MixerViewModel.Meter], width: Int?) -> [String] {
    let line = meterLine(name, meters)
    guard let width, TerminalInfo.displayWidth(line) > width else { return [line] }
    let chans = meters.indices.map { meterChannel($0, of: meters) }
    let nameWidth = max(12, TerminalInfo.displayWidth(name))
    let longest = chans.map { TerminalInfo.displayWidth($0) }.max() ?? 0
    if nameWidth + 1 + longest <= width {
      return chans.enumerated().map { i, c in (i == 0 ? name.padded(nameWidth) : String(repeating: " ", count: nameWidth)) + " " + c }
    }
    return Self.wrapped(name, width: width) + chans.map { "  " + $0 }
  }

  /// `meters`: the master (and its loudness when measured), the inputs while recording (or when
  /// asked), then every playing stem; drawn from the mixer view's model (`MixerViewModel`).
  package static func meters(_ c: Console, only: String?, width: Int? = nil) -> [String] {
    let model = MixerViewModel.make(c)
    var lines: [String] = []
    if only == nil || only == "master" {
      lines += meterLines("master", model.master.meters, width: width)
      if let loudness = model.transport.loudness { lines.append("master loudness: " + loudness.line) }
    }
    if only == "input" || (only == nil && model.input != nil) {
      lines += meterLines("input", (model.input ?? MixerViewModel.inputStrip(c.mixer)).meters, width: width)
    }
    for s in model.strips where s.offline == nil && !s.isBus && (only == nil || only == s.name) {
      lines += meterLines(s.name, s.meters, width: width)
    }
    for b in c.mixer.buses.statuses() where only == nil || only == b.settings.name {
      lines += meterLines("bus " + b.settings.name, MixerViewModel.meter(b.meter), width: width)
    }
    lines += inputMeterLines(c, only: only, width: width)
    for r in c.mixer.sends.returnMeters() where only == nil || only == r.name {
      lines += meterLines("return " + r.name, MixerViewModel.meter(r.meter), width: width)
    }
    return lines
  }

  /// One frame of the live view, `width` columns wide: a bar per channel from -60 dB to 0 dB,
  /// with the hold marker. Labels are never cut (two long names that share a beginning must
  /// not look alike): a label too long for a bar beside it gets a line of its own.
  package static func meterBars(_ c: Console, width: Int, color: Bool) -> [String] {
    var rows: [(label: String, channel: MixerViewModel.Meter)] = []
    for (i, ch) in MixerViewModel.masterStrip(c.mixer).meters.enumerated() { rows.append((i == 0 ? "master L" : "master R", ch)) }
    for s in MixerViewModel.stemStrips(c.mixer) where s.offline == nil {
      for (i, ch) in s.meters.enumerated() {
        rows.append((s.meters.count == 1 ? s.name : "\(s.name) \(i == 0 ? "L" : "R")", ch))
      }
    }
    for b in c.mixer.buses.statuses() {
      for (i, ch) in MixerViewModel.meter(b.meter).enumerated() { rows.append(("bus \(b.settings.name) \(i == 0 ? "L" : "R")", ch)) }
    }
    for input in c.mixer.inputs.statuses() {
      let meters = MixerViewModel.meter(input.meter)
      for (i, ch) in meters.enumerated() {
        rows.append((meters.count == 1 ? input.settings.name : "\(input.settings.name) \(i == 0 ? "L" : "R")", ch))
      }
    }
    for r in c.mixer.sends.returnMeters() {
      for (i, ch) in MixerViewModel.meter(r.meter).enumerated() { rows.append(("return \(r.name) \(i == 0 ? "L" : "R")", ch)) }
    }
    let valueWidth = 12  // " -160.0 CLIP"
    let longest = rows.map { TerminalInfo.displayWidth($0.label) }.max() ?? 8
    // The label column takes the longest label if a bar of 10 still fits beside it.
    let labelWidth = min(longest, max(8, width - valueWidth - 11))
    let barWidth = max(4, min(60, width - labelWidth - 1 - valueWidth))
    func bar(_ ch: MixerViewModel.Meter) -> String {
      func cells(_ db: Double) -> Int { Int(((max(-60, min(0, db)) + 60) / 60 * Double(barWidth)).rounded()) }
      let filled = cells(ch.peak)
      let hold = cells(ch.hold)
      var s = ""
      for i in 0..<barWidth {
        if i < filled { s += "#" } else if i == max(0, hold - 1) && ch.hold > -60 { s += "|" } else { s += "." }
      }
      if color {
        let code = ch.peak > -1 ? "31" : ch.peak > -12 ? "33" : "32"
        s = "\u{1B}[\(code)m" + s + "\u{1B}[0m"
      }
      return s + " " + db(ch.peak).padLeft(6) + (ch.clips > 0 ? " CLIP" : "")
    }
    let state = c.mixer.transport.state == .playing ? "▶" : "■"
    var lines = [shortened("\(state) \(NumberFormat.time(c.mixer.transport.position))  (press any key to leave)", to: width)]
    for row in rows {
      if TerminalInfo.displayWidth(row.label) > labelWidth {
        lines += wrapped(row.label, width: width)
        lines.append(String(repeating: " ", count: labelWidth) + " " + bar(row.channel))
      } else {
        lines.append(row.label.padded(labelWidth + row.label.count - TerminalInfo.displayWidth(row.label)) + " " + bar(row.channel))
      }
    }
    return lines
  }
}

extension String {
  package func trimmingTrailingSpaces() -> String {
    var s = Substring(self)
    while s.last == " " { s = s.dropLast() }
    return String(s)
  }
}
