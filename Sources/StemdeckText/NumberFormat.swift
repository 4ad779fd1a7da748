/// Formatting numbers for messages and tables.
public enum NumberFormat {
  /// A number as people write it: "7", "0.25", "-0.3", "nan".
  public static func plain(_ v: Double) -> String {
    if v.isNaN { return "nan" }
    if v.isInfinite { return v > 0 ? "inf" : "-inf" }
    if v == v.rounded(), abs(v) < 1e15 { return String(Int(v)) }
    return String(v)
  }

  /// m:ss.mmm (h:mm:ss.mmm past an hour).
  public static func time(_ seconds: Double) -> String {
    guard seconds.isFinite else { return "--:--.---" }
    let totalMillis = Int((max(0, seconds) * 1000).rounded())
    let ms = totalMillis % 1000
    let s = (totalMillis / 1000) % 60
    let m = (totalMillis / 60000) % 60
    let h = totalMillis / 3_600_000
    let msText = String(ms).leftPadded(to: 3)
    if h > 0 { return "\(h):\(String(m).leftPadded(to: 2)):\(String(s).leftPadded(to: 2)).\(msText)" }
    return "\(m):\(String(s).leftPadded(to: 2)).\(msText)"
  }

  /// Fixed decimals without Foundation's String(format:).
  public static func fixed(_ v: Double, _ decimals: Int) -> String {
    guard v.isFinite else { return plain(v) }
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let r = (abs(v) * scale).rounded()
    let whole = Int(r / scale)
    let frac = Int(r - Double(whole) * scale)
    let sign = v < 0 && r > 0 ? "-" : ""
    if decimals == 0 { return "\(sign)\(whole)" }
    return "\(sign)\(whole).\(String(frac).leftPadded(to: decimals))"
  }
}

extension String {
  public func leftPadded(to width: Int, with pad: Character = "0") -> String {
    count >= width ? self : String(repeating: pad, count: width - count) + self
  }
}
