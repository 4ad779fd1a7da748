import Foundation
import StemdeckControl
import StemdeckRemote
import StemdeckLive

/// The progress line of `render` and `analyze` on a terminal: a bar, the percentage, the pass
/// (`measuring`, `limiter pass N`, `writing`) and the time that pass has left, on stderr, redrawn
/// in place. The time left is the pass's own: a normalised render's passes take different times
/// and their number is known only as they go, so an estimate over all of them would jump. Nothing for the first second (a short render shows no bar),
/// nothing at all when stderr is not a terminal or with `--quiet`; the line is erased before any
/// other output (`clear()`), so warnings and the summary never share a line with it.
final class RenderProgress {
  let enabled: Bool
  let clock: () -> Double
  let start: Double
  /// Seconds before the bar first appears.
  static let delay = 1.0
  /// Seconds between redraws (10 per second at most).
  static let interval = 0.1
  var lastDraw = -Double.infinity
  var shown = false
  /// The pass under way, and when it began (nil: one pass over the whole bar, unnamed).
  var pass: OfflineRenderer.Pass?
  var passStart: Double

  init(enabled: Bool, clock: @escaping () -> Double = { ProcessInfo.processInfo.systemUptime }) {
    self.enabled = enabled
    self.clock = clock
    start = clock()
    passStart = start
  }

  /// A new pass begins (`OfflineRenderer`'s `pass` callback).
  func begin(_ pass: OfflineRenderer.Pass) {
    self.pass = pass
    passStart = clock()
  }

  /// Called with the fraction done (0…1) as the render goes.
  func update(_ fraction: Double) {
    guard enabled else { return }
    let now = clock()
    let elapsed = now - start
    guard elapsed >= Self.delay, now - lastDraw >= Self.interval else { return }
    lastDraw = now
    shown = true
    let line = Self.line(fraction: fraction, elapsed: now - passStart, pass: pass?.name, span: pass?.span ?? 0...1)
    printErrorNoNewline("\r" + line + "\u{1B}[K")
  }

  /// Erases the line if it was drawn.
  func clear() {
    guard shown else { return }
    shown = false
    printErrorNoNewline("\r\u{1B}[K")
  }

  /// `[################........................]  40%  writing, 0:06 left` — the bar and the
  /// percentage are of the whole; the time left is the pass's: `elapsed` (the time the pass has
  /// taken) scaled by what remains of its `span` (shown once 1 % of it is done; "--:--" before).
  static func line(
    fraction: Double, elapsed: Double, width: Int = 40, pass: String? = nil, span: ClosedRange<Double> = 0...1
  ) -> String {
    let f = min(max(fraction.isFinite ? fraction : 0, 0), 1)
    let filled = Int(f * Double(width))
    let percent = pad(String(Int(f * 100)), 3, " ")
    let length = span.upperBound - span.lowerBound
    let local = length > 0 ? min(max((f - span.lowerBound) / length, 0), 1) : 1
    let left = local >= 0.01 ? clockTime(elapsed * (1 - local) / local) : "--:--"
    return "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "] \(percent)%  "
      + (pass.map { "\($0), " } ?? "") + "\(left) left"
  }

  /// m:ss, or h:mm:ss from an hour on (seconds rounded up, so "0:00 left" means done).
  static func clockTime(_ seconds: Double) -> String {
    let total = Int(max(0, seconds).rounded(.up))
    let h = total / 3600, m = (total / 60) % 60, s = total % 60
    let ss = pad(String(s), 2, "0")
    return h > 0 ? "\(h):\(pad(String(m), 2, "0")):\(ss)" : "\(m):\(ss)"
  }

  private static func pad(_ text: String, _ width: Int, _ with: Character) -> String {
    text.count >= width ? text : String(repeating: with, count: width - text.count) + text
  }
}
