import StemdeckAudioFile
import StemdeckControl
import StemdeckEngine
import StemdeckJack

/// Text views of the mixer: the `stems` table, `status` lines, meters and the live bar view.
/// Script mode output is documented in the README; keep these formats stable.
enum Display {
  static func db(_ v: Double) -> String {
    v <= -160 ? "-inf" : NumberFormat.fixed(v, 1)
  }

  static func volume(_ v: Double) -> String {
    "\(NumberFormat.fixed(v, 2))"
  }

  static func stemsTable(_ stems: [StemStatus], offline: [OfflineStem] = []) -> [String] {
    if stems.isEmpty && offline.isEmpty { return ["no stems (add one with 'add PATH')"] }
    let offlineLines = offline.map { "offline: \($0.settings.name) (\($0.path): \($0.reason))" }
    if stems.isEmpty { return offlineLines }
    let header = ["name", "file", "ch", "Hz", "length", "vol", "pan", "rate", "loops", "flags", "loop", "position", "peak dB"]
    var rows: [[String]] = [header]
    for s in stems {
      var flags = ""
      if s.settings.mute { flags += "M" }
      if s.settings.solo { flags += "S" }
      if s.settings.directOut { flags += "D" }
      if s.finished { flags += "E" }
      if s.failed { flags += "!" }
      if s.underruns > 0 { flags += "U" }
      if s.isGliding { flags += "G" }
      if flags.isEmpty { flags = "-" }
      let file = String(s.path.split(separator: "/").last ?? "")
      let peaks = s.meter.channels.map { db($0.peak) }.joined(separator: "/")
      rows.append([
        s.settings.name, file, channelsCell(s.info), "\(s.info.sampleRate)", NumberFormat.time(s.length),
        s.glidingVolume.map { "\(volume($0))→\(volume(s.settings.volume))" } ?? volume(s.settings.volume),
        s.glidingPan.map { "\(NumberFormat.fixed($0, 2))→\(NumberFormat.fixed(s.settings.pan, 2))" } ?? NumberFormat.fixed(s.settings.pan, 2),
        s.glidingRate.map { "\(NumberFormat.fixed($0, 2))→\(NumberFormat.fixed(s.settings.rate, 2))" } ?? NumberFormat.fixed(s.settings.rate, 2),
        s.settings.loops < 0 ? "forever" : "\(s.settings.loops)", flags,
        "\(s.loopIndex + 1)", NumberFormat.time(s.positionInFile), peaks,
      ])
    }
    var widths = [Int](repeating: 0, count: header.count)
    for r in rows { for (i, cell) in r.enumerated() { widths[i] = max(widths[i], cell.count) } }
    let numeric: Set<Int> = [2, 3, 5, 6, 7, 10]
    return rows.map { r in
      r.enumerated().map { i, cell in numeric.contains(i) ? cell.padLeft(widths[i]) : cell.padded(widths[i]) }
        .joined(separator: "  ").trimmingTrailingSpaces()
    } + offlineLines + ["flags: M muted, S solo, D direct outs, E ended, U underruns, G gliding, ! unreadable"]
      + (stems.contains { $0.info.channelCount > 2 }
         ? ["ch: more than 2 channels are downmixed by their layout (ITU-R BS.775; 'fold': no known layout, odd channels averaged left, even right)"]
         : [])
  }

  /// The `ch` cell: the channel count, and for more than two the layout the downmix uses
  /// ("6 5.1") or "fold" when the file has none.
  static func channelsCell(_ info: SoundFileInfo) -> String {
    guard info.channelCount > 2 else { return "\(info.channelCount)" }
    return "\(info.channelCount) \(info.layout?.name ?? "fold")"
  }

  static func status(_ c: Console) -> [String] {
    let m = c.mixer
    let state: String
    switch m.transportState {
    case .playing: state = "playing"
    case .paused: state = m.position == 0 ? "stopped" : "paused"
    case .waitingForDisk: state = "starting"
    }
    let duration = m.duration
    var lines = [
      "state: \(state)",
      "position: \(NumberFormat.time(m.position)) / \(duration.map(NumberFormat.time) ?? "-")\(m.hasEndlessStems ? " (some stems loop forever)" : "")",
    ]
    if let d = c.driver {
      lines.append("sample rate: \(d.sampleRate) Hz")
      lines.append("buffer: \(d.bufferSize) frames")
      lines.append("dsp load: \(NumberFormat.fixed(d.cpuLoad, 1)) %")
      lines.append("xruns: \(d.xruns)")
      lines.append("server: \(d.serverName) (\(d.connected ? "connected" : "disconnected, retrying"))")
      lines.append("client: \(d.clientName)")
      switch m.options.transportSync {
      case .off: break
      case .follow: lines.append("JACK transport: following")
      case .lead:
        if let lock = d.transportLock {
          let how = lock.locked ? "sample-locked" : (m.transportState == .playing ? "locking" : "stopped")
          lines.append("JACK transport: leading (\(how); \(lock.corrections) locate\(lock.corrections == 1 ? "" : "s") to stay in step)")
        } else {
          lines.append("JACK transport: leading")
        }
      }
    } else {
      lines.append("sample rate: \(Int(m.sampleRate)) Hz")
      lines.append("server: none (offline)")
    }
    let statuses = m.stemStatuses()
    lines.append("underruns: \(statuses.reduce(0) { $0 + $1.underruns })")
    lines.append("stems: \(statuses.count)")
    lines.append("master: \(volume(m.masterVolumeSetting)) (\(db(Decibels.fromAmplitude(m.masterVolumeSetting))) dB)")
    lines.append("quality: \(m.quality.rawValue)")
    if let path = c.sessionPath { lines.append("session: \(path)\(m.isDirty ? " (unsaved changes)" : "")") }
    return lines
  }

  static func meterLine(_ name: String, _ r: MeterReading) -> String {
    let chans = r.channels.enumerated().map { i, ch in
      let label = r.channels.count == 1 ? "M" : (i == 0 ? "L" : "R")
      return "\(label) peak \(db(ch.peak).padLeft(6)) avg \(db(ch.average).padLeft(6)) hold \(db(ch.hold).padLeft(6)) clips \(ch.clips)"
    }
    return "\(name.padded(12)) " + chans.joined(separator: " | ")
  }

  static func meters(_ c: Console, only: String?) -> [String] {
    var lines: [String] = []
    if only == nil || only == "master" { lines.append(meterLine("master", c.mixer.masterMeter())) }
    if only == "input" || (only == nil && c.mixer.recordingStatus != nil) { lines.append(meterLine("input", c.mixer.inputMeter())) }
    for s in c.mixer.stemStatuses() where only == nil || only == s.settings.name {
      lines.append(meterLine(s.settings.name, s.meter))
    }
    return lines
  }

  /// One frame of the live view: a bar per channel from -60 dB to 0 dB, with the hold marker.
  static func meterBars(_ c: Console, width: Int, color: Bool) -> [String] {
    let barWidth = max(10, min(60, width - 30))
    func bar(_ ch: MeterReading.Channel) -> String {
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
    var lines = ["\(c.mixer.transportState == .playing ? "▶" : "■") \(NumberFormat.time(c.mixer.position))  (press any key to leave)"]
    let m = c.mixer.masterMeter()
    for (i, ch) in m.channels.enumerated() { lines.append("\((i == 0 ? "master L" : "master R").padded(14)) \(bar(ch))") }
    for s in c.mixer.stemStatuses() {
      for (i, ch) in s.meter.channels.enumerated() {
        let label = s.meter.channels.count == 1 ? s.settings.name : "\(s.settings.name) \(i == 0 ? "L" : "R")"
        lines.append("\(String(label.prefix(14)).padded(14)) \(bar(ch))")
      }
    }
    return lines
  }
}

extension String {
  func trimmingTrailingSpaces() -> String {
    var s = Substring(self)
    while s.last == " " { s = s.dropLast() }
    return String(s)
  }
}
