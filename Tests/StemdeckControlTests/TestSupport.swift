import Foundation
import StemdeckAudioFile
import StemdeckControl
import StemdeckEngine
import StemdeckSession
import StemdeckTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

// Helpers shared by the control tests (temporary folders and the seeded generator are in
// StemdeckTestSupport): deterministic signals, real audio files
// written and read back through libsndfile, a synchronous mixer rig, and error measures.

// MARK: - Signals (one channel each; `interleave` combines them)

enum Signal {
  static func sine(frequency: Double, sampleRate: Double, frames: Int, amplitude: Double = 1, phase: Double = 0) -> [Float] {
    (0..<frames).map { Float(amplitude * sin(2 * Double.pi * frequency * Double($0) / sampleRate + phase)) }
  }

  /// Uniform white noise in ±amplitude.
  static func noise(frames: Int, amplitude: Double = 1, seed: UInt64) -> [Float] {
    var rng = SplitMix64(seed: seed)
    return (0..<frames).map { _ in Float(Double.random(in: -amplitude...amplitude, using: &rng)) }
  }

  /// A rising ramp from `from` (inclusive) toward `to` (exclusive): every frame has its own value.
  static func ramp(frames: Int, from: Double = -1, to: Double = 1) -> [Float] {
    (0..<frames).map { Float(from + (to - from) * Double($0) / Double(frames)) }
  }

  static func constant(_ value: Float, frames: Int) -> [Float] {
    [Float](repeating: value, count: frames)
  }

  /// Interleaves equally long channels into frames.
  static func interleave(_ channels: [[Float]]) -> [Float] {
    let frames = channels[0].count
    precondition(channels.allSatisfy { $0.count == frames })
    var out = [Float](repeating: 0, count: frames * channels.count)
    for (c, channel) in channels.enumerated() {
      for f in 0..<frames { out[f * channels.count + c] = channel[f] }
    }
    return out
  }
}

// MARK: - Audio files

/// An audio file's facts and its samples, as libsndfile decodes them.
struct Audio {
  var info: SoundFileInfo
  /// Interleaved samples.
  var samples: [Float]
  var channels: Int { info.channelCount }
  var frames: Int { info.frameCount }

  /// One channel, deinterleaved.
  func channel(_ c: Int) -> [Float] {
    (0..<frames).map { samples[$0 * channels + c] }
  }
}

/// Writes `channels` (equally long, one array each) to `path` with libsndfile.
func writeAudio(_ path: String, format: OutputFormat, sampleRate: Int = 48000, channels: [[Float]]) throws {
  let writer = try SoundFileWriter(path: path, format: format, sampleRate: sampleRate, channelCount: channels.count)
  let interleaved = Signal.interleave(channels)
  if interleaved.isEmpty { return }
  try interleaved.withUnsafeBufferPointer { buffer in
    try writer.write(buffer.baseAddress!, frameCount: channels[0].count)
  }
  // The writer closes (and finalizes the header) when it goes out of scope here.
}

/// Reads a whole audio file.
func readAudio(_ path: String) throws -> Audio {
  let file = try SoundFile(readingFrom: path)
  let info = file.info
  var samples = [Float](repeating: 0, count: info.frameCount * info.channelCount)
  var done = 0
  try samples.withUnsafeMutableBufferPointer { buffer in
    while done < info.frameCount {
      let got = file.readFrames(into: buffer.baseAddress! + done * info.channelCount, frameCount: info.frameCount - done)
      if got <= 0 { throw SoundFileError(path: path, reason: "short read at frame \(done)") }
      done += got
    }
  }
  return Audio(info: info, samples: samples)
}

/// A stereo signal as two arrays.
struct Stereo {
  var left: [Float]
  var right: [Float]
  var count: Int { left.count }

  init(left: [Float], right: [Float]) {
    self.left = left
    self.right = right
  }

  init(frames: Int) {
    left = [Float](repeating: 0, count: frames)
    right = left
  }

  /// Splits an interleaved stereo file.
  init(_ audio: Audio) {
    precondition(audio.channels == 2)
    left = audio.channel(0)
    right = audio.channel(1)
  }

  mutating func append(_ other: Stereo) {
    left += other.left
    right += other.right
  }

  subscript(range: Range<Int>) -> Stereo {
    Stereo(left: Array(left[range]), right: Array(right[range]))
  }
}

/// Renders `session` offline into a float WAV in `folder` and reads it back.
func renderOffline(
  _ session: Session, in folder: TemporaryFolder, duration: Double? = nil, name: String = "render.wav",
  sampleRate: Int = 48000, blockFrames: Int = 1024
) throws -> (summary: OfflineRenderer.Summary, output: Stereo) {
  let output = folder.file(name)
  let summary = try OfflineRenderer.render(
    session: session, sessionPath: folder.file("session.stemdeck"), outputPath: output,
    duration: duration, sampleRate: sampleRate, blockFrames: blockFrames)
  let audio = try readAudio(output)
  #expect(audio.info.sampleRate == sampleRate)
  #expect(audio.frames == summary.frames)
  return (summary, Stereo(audio))
}

// MARK: - A mixer driven by the test

/// A `Mixer` with synchronous streaming and the test as its audio thread.
final class MixerRig {
  let mixer: Mixer
  /// Every frame rendered so far.
  private(set) var rendered = 0

  /// `maxBlockFrames` and `pluginWork` as `Mixer.init` takes them (plugins' LV2 work runs at once
  /// unless `.thread`).
  init(
    sampleRate: Double = 48000, quality: ResamplerQuality = .fast, maxVoices: Int = 64, maxBlockFrames: Int = 4096,
    pluginWork: Mixer.Streaming? = nil
  ) {
    mixer = Mixer(
      sampleRate: sampleRate, quality: quality, streaming: .synchronous, maxVoices: maxVoices, maxBlockFrames: maxBlockFrames,
      pluginWork: pluginWork)
  }

  deinit { mixer.shutdown() }

  /// Renders `frames` frames in blocks of `block`, filling the streams before each block.
  /// Events stay queued for the test to `pump()`.
  func render(_ frames: Int, block: Int = 256) -> Stereo {
    var out = Stereo(frames: frames)
    var done = 0
    out.left.withUnsafeMutableBufferPointer { l in
      out.right.withUnsafeMutableBufferPointer { r in
        while done < frames {
          let n = min(block, frames - done)
          mixer.engine.fillStreams()
          renderBlock(mixer.renderState, left: l.baseAddress! + done, right: r.baseAddress! + done, frameCount: n)
          done += n
        }
      }
    }
    rendered += frames
    return out
  }
}

// MARK: - Measures

/// Largest |a[i] - b[i]| (arrays of equal length).
func maxAbsError(_ a: [Float], _ b: [Float]) -> Double {
  precondition(a.count == b.count, "lengths differ: \(a.count) vs \(b.count)")
  var worst = 0.0
  for i in a.indices { worst = max(worst, abs(Double(a[i]) - Double(b[i]))) }
  return worst
}

func maxAbsError(_ a: [Float], _ b: [Double]) -> Double {
  precondition(a.count == b.count, "lengths differ: \(a.count) vs \(b.count)")
  var worst = 0.0
  for i in a.indices { worst = max(worst, abs(Double(a[i]) - b[i])) }
  return worst
}

/// The first index where `a` and `b` differ by more than `tolerance`, or nil.
func firstMismatch(_ a: ArraySlice<Float>, _ b: ArraySlice<Float>, tolerance: Double = 0) -> Int? {
  precondition(a.count == b.count)
  for (i, j) in zip(a.indices, b.indices) where abs(Double(a[i]) - Double(b[j])) > tolerance { return i }
  return nil
}

func peak(_ a: ArraySlice<Float>) -> Double { a.reduce(0) { max($0, abs(Double($1))) } }
func peak(_ a: [Float]) -> Double { peak(a[...]) }

func rms(_ a: ArraySlice<Float>) -> Double {
  (a.reduce(0) { $0 + Double($1) * Double($1) } / Double(a.count)).squareRoot()
}

/// Largest |a[i+1] - a[i]| over `range` (pairs whose first index lies in it).
func maxStep(_ a: [Float], in range: Range<Int>? = nil) -> Double {
  let r = range ?? 0..<(a.count - 1)
  var worst = 0.0
  for i in r where i + 1 < a.count { worst = max(worst, abs(Double(a[i + 1]) - Double(a[i]))) }
  return worst
}

/// Times (fractional frame indices) of upward zero crossings in `range`, linearly interpolated.
func upwardZeroCrossings(_ a: [Float], in range: Range<Int>) -> [Double] {
  var out: [Double] = []
  for i in range.lowerBound..<(range.upperBound - 1) where a[i] < 0 && a[i + 1] >= 0 {
    let x0 = Double(a[i]), x1 = Double(a[i + 1])
    out.append(Double(i) + (-x0) / (x1 - x0))
  }
  return out
}

/// Frequency (Hz) of a sine from its upward zero crossings in `range`.
func estimatedFrequency(_ a: [Float], sampleRate: Double, in range: Range<Int>) -> Double {
  let z = upwardZeroCrossings(a, in: range)
  guard z.count >= 2 else { return 0 }
  return Double(z.count - 1) / (z.last! - z.first!) * sampleRate
}

/// The fractional index where `a` first crosses `level` going in `rising` direction, from `start`.
func crossing(_ a: [Float], level: Double, rising: Bool, from start: Int = 0) -> Double? {
  for i in start..<(a.count - 1) {
    let x0 = Double(a[i]), x1 = Double(a[i + 1])
    let hit = rising ? (x0 < level && x1 >= level) : (x0 > level && x1 <= level)
    if hit { return Double(i) + (level - x0) / (x1 - x0) }
  }
  return nil
}

func decibels(_ amplitude: Double) -> Double { 20 * log10(amplitude) }

/// Settings for a stem, configured in one expression.
func stem(_ name: String, _ file: String, _ configure: (inout StemSettings) -> Void = { _ in }) -> StemSettings {
  var s = StemSettings(name: name, file: file)
  configure(&s)
  return s
}

/// Mono constant-power gains and stereo balance gains, written out from the documented laws
/// (deliberately not calling `PanLaw`).
func referenceGains(pan: Double, channels: Int) -> (left: Double, right: Double) {
  if channels == 1 {
    let theta = (pan + 1) * Double.pi / 4
    return (cos(theta), sin(theta))
  }
  return (min(1, 1 - pan), min(1, 1 + pan))
}

/// What a snapshot of the mixer's stems looks like, for before/after comparisons.
struct StemSnapshot: Equatable, CustomStringConvertible {
  var settings: StemSettings
  var path: String
  var info: SoundFileInfo
  var description: String {
    "\(settings.name) \(path) vol \(settings.volume) pan \(settings.pan) rate \(settings.rate) loops \(settings.loops)"
  }
}

func snapshot(_ mixer: Mixer) -> [StemSnapshot] {
  mixer.stems.statuses().map { StemSnapshot(settings: $0.settings, path: $0.path, info: $0.info) }
}
