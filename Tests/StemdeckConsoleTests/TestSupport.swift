// Shared fixtures for the console tests (temporary folders and the 16-bit PCM WAV files they
// write are in StemdeckTestSupport): a console harness over an offline mixer,
// and a snapshot of the mixer state used to prove that rejected commands change nothing.
import Foundation
@testable import StemdeckConsole
import StemdeckControl
// Not declared in Package.swift for this target, but importable because StemdeckControl depends
// on them. TODO(lead): add "StemdeckSession" and "StemdeckEngine" to StemdeckConsoleTests.
import StemdeckEngine
import StemdeckSession

@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

#if canImport(Glibc)
import Glibc
import StemdeckTestSupport
#endif

/// Collects what the console writes.
final class OutputLines {
  var lines: [String] = []
}

/// A console driving an offline mixer (no JACK), with helpers to run lines and read output.
///
/// Call `shutdown()` at the end of every test (use `defer`).
final class ConsoleHarness {
  let folder: TemporaryFolder
  let mixer: Mixer
  let console: Console
  private let output = OutputLines()

  init() throws {
    folder = try TemporaryFolder()
    mixer = Mixer(sampleRate: 48000, streaming: .synchronous)
    let sink = output
    console = Console(mixer: mixer) { sink.lines.append($0) }
  }

  /// A harness with two stems: `drums` (stereo, 48 kHz, 2 s) and `bass` (mono, 44.1 kHz, 1 s),
  /// both full-scale sines, then marked saved.
  static func withStems() throws -> ConsoleHarness {
    let h = try ConsoleHarness()
    try h.folder.wav("drums.wav", channels: 2, sampleRate: 48000, seconds: 2)
    try h.folder.wav("bass.wav", channels: 1, sampleRate: 44100, seconds: 1, frequency: 110)
    for line in ["add \(h.drums)", "add \(h.bass)"] {
      let result = h.run(line)
      guard result.ok else { throw CommandError("setup failed: \(line): \(result.output)") }
    }
    h.mixer.markSaved()
    return h
  }

  var drums: String { folder.file("drums.wav") }
  var bass: String { folder.file("bass.wav") }

  /// Runs one line; returns whether it succeeded and the lines it wrote.
  @discardableResult
  func run(_ line: String, stopOnError: Bool = false, sayingSkipped: Bool = false) -> (ok: Bool, output: [String]) {
    output.lines.removeAll()
    let ok = console.execute(line: line, stopOnError: stopOnError, sayingSkipped: sayingSkipped)
    return (ok, output.lines)
  }

  /// Renders `blocks` blocks of 1024 frames through the engine, filling the streams first, the
  /// way the offline renderer does. Returns the largest |sample| on the master.
  @discardableResult
  func render(blocks: Int) -> Float {
    let left = UnsafeMutablePointer<Float>.allocate(capacity: 1024)
    let right = UnsafeMutablePointer<Float>.allocate(capacity: 1024)
    defer { left.deallocate(); right.deallocate() }
    var peak: Float = 0
    for _ in 0..<blocks {
      mixer.engine.fillStreams()
      renderBlock(mixer.renderState, left: left, right: right, frameCount: 1024)
      for i in 0..<1024 { peak = max(peak, abs(left[i]), abs(right[i])) }
    }
    return peak
  }

  /// What the host does between commands: prints the mixer's events, then runs `periodic`.
  /// Returns the lines written (events and whatever `periodic` did).
  func idle() -> [String] {
    output.lines.removeAll()
    for event in mixer.pump() { console.writeEvent(event.description) }
    console.periodic()
    return output.lines
  }

  func shutdown() { mixer.shutdown() }
}

/// Everything a command may change, for "a rejected command changes nothing" checks.
struct MixerSnapshot: Equatable, CustomStringConvertible {
  var stems: [StemSettings]
  var paths: [String]
  var masterVolume: Double
  var quality: ResamplerQuality
  var options: SessionOptions
  var position: Double
  var isDirty: Bool
  var sessionPath: String?
  var autosaveInterval: Double
  var setlist: [String]?
  var setlistIndex: Int
  var effects: [String]
  var recording: String?

  init(_ h: ConsoleHarness) {
    let statuses = h.mixer.stems.statuses()
    stems = statuses.map(\.settings)
    paths = statuses.map(\.path)
    masterVolume = h.mixer.master.volume
    quality = h.mixer.quality
    options = h.mixer.options
    position = h.mixer.transport.position
    isDirty = h.mixer.isDirty
    sessionPath = h.console.sessionPath
    autosaveInterval = h.console.autosaveInterval
    setlist = h.console.setlist?.songs
    setlistIndex = h.console.setlistIndex
    effects = h.mixer.effects.statuses().map(\.settings.name)
    recording = h.mixer.recorder.status?.name
  }

  var description: String {
    let s = stems.map {
      "\($0.name)(vol \($0.volume) pan \($0.pan) rate \($0.rate) loops \($0.loops) mute \($0.mute) solo \($0.solo) direct \($0.directOut) offset \($0.startOffset))"
    }
    return
      "stems \(s) master \(masterVolume) quality \(quality) options \(options) position \(position) dirty \(isDirty) session \(sessionPath ?? "-") autosave \(autosaveInterval) setlist \(setlist ?? []) #\(setlistIndex) effects \(effects) recording \(recording ?? "-")"
  }

  /// The settings of the stem called `name` (for building expected snapshots).
  subscript(stem name: String) -> StemSettings {
    get { stems.first { $0.name == name }! }
    set { stems[stems.firstIndex { $0.name == name }!] = newValue }
  }
}

/// `10^(db/20)`, computed independently of the code under test.
func linear(decibels db: Double) -> Double { pow(10, db / 20) }
