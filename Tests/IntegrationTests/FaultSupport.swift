// Helpers shared by the server-fault and disk-fault tests: reading stemdeck's `stems` table,
// a peer client (jack_capture with manual connections) whose ports stemdeck is routed to, and
// measurements of recorded audio (level, gaps, pitch).

import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// One row of the `stems` table.
struct StemRow: Equatable, CustomStringConvertible {
  var name: String
  var volume: String
  var pan: String
  var flags: String
  var description: String { "\(name) vol \(volume) pan \(pan) flags \(flags)" }
}

/// Parses the lines `stems` printed (header, rows, the flags legend; events are skipped).
func parseStemsTable(_ lines: [String]) -> [String: StemRow] {
  var out: [String: StemRow] = [:]
  for line in lines where !line.hasPrefix("event: ") && !line.hasPrefix("flags:") && !line.hasPrefix("name ") {
    // name file ch Hz length vol pan rate loops flags loop position peak
    let f = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
    guard f.count >= 10, Int(f[2]) != nil else { continue }
    out[f[0]] = StemRow(name: f[0], volume: f[5], pan: f[6], flags: f[9])
  }
  return out
}

extension StemdeckProcess {
  /// The `stems` table by name.
  func stemsTable(sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: StemRow] {
    parseStemsTable(try await run("stems", sourceLocation: sourceLocation))
  }

  /// Events so far that contain `text`.
  func eventCount(_ text: String) -> Int { events.filter { $0.contains(text) }.count }

  /// Keeps commands flowing (events are printed while a command runs) until `count` events
  /// containing `text` have been seen, or `timeout` passes. True when they were.
  func waitForEvents(_ text: String, count: Int, timeout: Double) async throws -> Bool {
    try await eventually(timeout: timeout, interval: 0) {
      try await self.run("wait 0.05")
      return self.eventCount(text) >= count
    }
  }
}

extension PrivateJackServer {
  /// Starts jack_capture with manual connections (ports jack_capture:input1/2) recording for
  /// `seconds`, and waits until its ports exist.
  func startPeer(recording seconds: Double, to path: String, dir: IntegrationTempDir) async throws -> CaptureRun {
    let peer = try startCapture(ports: [], seconds: seconds, to: path, hookDir: dir, manualConnections: true)
    // Polled every 50 ms: each look is a JACK client that comes and goes (see `runTool`).
    let registered = try await eventually(timeout: 5, interval: 0.05) {
      try await self.ports().contains("jack_capture:input2")
    }
    if !registered {
      peer.child.terminate(grace: 1)
      throw HarnessError("jack_capture did not register its inputs; log:\n\(peer.log)")
    }
    return peer
  }

  /// Waits until stemdeck's master feeds the peer's two inputs.
  func waitForMasterToPeer(timeout: Double) async throws -> Bool {
    try await eventually(timeout: timeout, interval: 0.05) {
      let graph = try await self.connections()
      return graph["stemdeck:master_L"]?.contains("jack_capture:input1") == true
        && graph["stemdeck:master_R"]?.contains("jack_capture:input2") == true
    }
  }
}

extension CaptureRun {
  /// Waits `seconds` for jack_capture to stop by itself, else asks it to stop with SIGINT (it
  /// then closes its file properly). jack_capture now and then keeps running after a buffer-size
  /// change although its recording time is up; that is the recorder, not what it records.
  /// Returns its xrun count and whether it had to be stopped.
  func finish(orStopAfter seconds: Double) async throws -> (xruns: Int, stopped: Bool) {
    var stopped = false
    if await child.waitForExit(timeout: seconds) == nil {
      child.send(signal: SIGINT)
      stopped = true
    }
    return (try await finish(timeout: 10).xruns, stopped)
  }
}

// MARK: - Measuring recorded audio

/// The largest magnitude of `channel` over `frames`.
func peakLevel(_ audio: AudioData, channel: Int, frames: Range<Int>) -> Float {
  var m: Float = 0
  for f in frames.clamped(to: 0..<audio.frames) { m = max(m, abs(audio.sample(f, channel))) }
  return m
}

/// The longest run of frames of `channel` within `frames` whose magnitude stays below
/// `threshold` (a sine crosses zero in a frame or two; a dropout lasts a period or more).
/// `sharedWith`: frames where every one of those channels is silent too are not `channel`'s own
/// silence (a period the whole client missed); they end a run.
func longestSilence(
  _ audio: AudioData, channel: Int, frames: Range<Int>, threshold: Float = 1e-4, sharedWith: [Int] = []
) -> Int {
  var longest = 0, run = 0
  for f in frames.clamped(to: 0..<audio.frames) {
    let silent = abs(audio.sample(f, channel)) < threshold
    let shared = !sharedWith.isEmpty && sharedWith.allSatisfy { abs(audio.sample(f, $0)) < threshold }
    if silent && !shared { run += 1; longest = max(longest, run) } else { run = 0 }
  }
  return longest
}

/// The pitch of a sine from its upward zero crossings over `frames` (Hz), 0 if too few.
func sineFrequency(_ audio: AudioData, channel: Int, frames: Range<Int>) -> Double {
  let r = frames.clamped(to: 1..<max(1, audio.frames))
  var first = -1, last = -1, count = 0
  for f in r where audio.sample(f - 1, channel) <= 0 && audio.sample(f, channel) > 0 {
    if first < 0 { first = f }
    last = f
    count += 1
  }
  guard count >= 3, last > first else { return 0 }
  return Double(count - 1) * Double(audio.sampleRate) / Double(last - first)
}

/// Sample-to-sample jumps larger than `limit` within `frames` (a sine of amplitude A and
/// frequency F never moves more than 2πFA/rate in one frame; a dropout or a skip does).
func jumps(_ audio: AudioData, channel: Int, frames: Range<Int>, limit: Float) -> Int {
  var n = 0
  for f in frames.clamped(to: 1..<max(1, audio.frames)) where abs(audio.sample(f, channel) - audio.sample(f - 1, channel)) > limit {
    n += 1
  }
  return n
}

func twoDecimals(_ x: Double) -> String { String(format: "%.2f", x) }
