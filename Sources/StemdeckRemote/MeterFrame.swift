import Foundation
import StemdeckControl
import StemdeckLive
import StemdeckSession

/// One meter frame as pushed to subscribers (`{"push": "meters", …}`, docs/remote-control.md):
/// read from the mixer once a tick, written as JSON text by hand. Foundation's
/// `JSONSerialization` of the same frame as a dictionary cost the control thread about 3 ms at
/// 64 stems (boxing, dynamic casts, keys sorted through collation), 9 % of a core at 30 frames
/// a second (docs/measurements.md, *The web mixer*); this writer does the same in a fraction of it.
/// The text parses to what `RemotePush.meters` gives (MeterFrameTests), keys sorted likewise.
package struct MeterFrame {
  package var master: MeterReading
  package var loudness: LiveLoudness?
  package var stems: [(name: String, meter: MeterReading)]
  package var inputs: [(name: String, meter: MeterReading)]
  package var buses: [(name: String, meter: MeterReading)]
  package var returns: [(name: String, meter: MeterReading)]

  /// The master, every stem, bus, live input and send return, now.
  package init(_ mixer: Mixer) {
    master = mixer.master.meter()
    // The figures the meter thread last published (≤ 300 ms old, as the mixer view shows them):
    // `loudness.current()` would wait for the meter thread to integrate anew, 30 times a second.
    loudness = mixer.loudness.published()
    stems = mixer.stems.meters()
    inputs = mixer.inputs.statuses().map { ($0.settings.name, $0.meter) }
    buses = mixer.buses.statuses().map { ($0.settings.name, $0.meter) }
    returns = mixer.sends.returnMeters()
  }

  /// The frame's line as the bytes queued for a client (with its line break).
  package func line(dropped: Int) -> [UInt8] { Array((json(dropped: dropped) + "\n").utf8) }

  /// The frame's text: `{"buses"?, "dropped", "inputs"?, "master", "push": "meters", "returns"?, "stems"}`.
  package func json(dropped: Int) -> String {
    var out = "{"
    out.reserveCapacity(96 + 90 * (stems.count + inputs.count + buses.count + returns.count))
    if !buses.isEmpty { Self.group("buses", buses, into: &out) }
    out += "\"dropped\":\(dropped),"
    if !inputs.isEmpty { Self.group("inputs", inputs, into: &out) }
    out += "\"master\":"
    Self.reading(master, loudness: loudness, into: &out)
    out += ",\"push\":\"meters\","
    if !returns.isEmpty { Self.group("returns", returns, into: &out) }
    out += "\"stems\":{"
    Self.members(stems, into: &out)
    out += "}}"
    return out
  }

  private static func group(_ key: String, _ list: [(name: String, meter: MeterReading)], into out: inout String) {
    out += "\"\(key)\":{"
    members(list, into: &out)
    out += "},"
  }

  private static func members(_ list: [(name: String, meter: MeterReading)], into out: inout String) {
    for (i, m) in list.sorted(by: { $0.name < $1.name }).enumerated() {
      if i > 0 { out += "," }
      string(m.name, into: &out)
      out += ":"
      reading(m.meter, loudness: nil, into: &out)
    }
  }

  /// `{"clips": [..], "loudness"?: {…}, "peak": [..], "rms": [..]}`.
  private static func reading(_ m: MeterReading, loudness: LiveLoudness?, into out: inout String) {
    out += "{\"clips\":["
    for (i, c) in m.channels.enumerated() { out += (i > 0 ? "," : "") + String(c.clips) }
    out += "],"
    if let l = loudness {
      out += "\"loudness\":{\"droppedFrames\":\(l.droppedFrames),\"integrated\":"
      db(l.integrated, into: &out)
      out += ",\"momentary\":"
      db(l.momentary, into: &out)
      out += ",\"range\":" + number((l.range * 100).rounded() / 100) + ",\"seconds\":" + number((l.seconds * 1000).rounded() / 1000)
      out += ",\"shortTerm\":"
      db(l.shortTerm, into: &out)
      out += ",\"truePeak\":"
      db(l.truePeakDecibels, into: &out)
      out += "},"
    }
    out += "\"peak\":["
    for (i, c) in m.channels.enumerated() {
      if i > 0 { out += "," }
      db(c.peak, into: &out)
    }
    out += "],\"rms\":["
    for (i, c) in m.channels.enumerated() {
      if i > 0 { out += "," }
      db(c.average, into: &out)
    }
    out += "]}"
  }

  /// A level as `RemotePush.db` gives it (two decimals, null for silence), without boxing it.
  private static func db(_ v: Double, into out: inout String) {
    guard v.isFinite, !Decibels.isSilent(v, decimals: 2) else {
      out += "null"
      return
    }
    out += number((v * 100).rounded() / 100)
  }

  /// A finite number as JSON: integers without a fraction, others in Swift's shortest form.
  package static func number(_ v: Double) -> String {
    guard v.isFinite else { return "null" }
    if v == v.rounded(), abs(v) < 1e15 { return String(Int(v)) }
    return String(v)
  }

  /// A JSON string literal, escaped as `ControlServer.encode` escapes: quotes, backslashes,
  /// control characters and the line and bidirectional separators as `\uXXXX`.
  package static func string(_ s: String, into out: inout String) {
    out += "\""
    for scalar in s.unicodeScalars {
      switch scalar.value {
      case 0x22: out += "\\\""
      case 0x5C: out += "\\\\"
      case 0..<0x20, 0x7F...0x9F, 0x2028...0x202E, 0x2066...0x2069:
        let hex = String(scalar.value, radix: 16)
        out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      default: out.unicodeScalars.append(scalar)
      }
    }
    out += "\""
  }
}
