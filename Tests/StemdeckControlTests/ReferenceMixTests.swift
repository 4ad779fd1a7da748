import Foundation
import StemdeckAudioFile
import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import Testing

/// −90 dBFS: the largest difference allowed between a render and its reference.
let referenceTolerance = 3.16e-5

/// A stem of the reference mix: its settings and the file's decoded samples.
struct ReferenceStem {
  var settings: StemSettings
  var audio: Audio
}

/// The mix of `stems` computed directly from the documented laws: per-sample gain, pan or balance,
/// loops and start offsets, then the master volume. Only for stems that need no rate conversion.
func referenceMix(_ stems: [ReferenceStem], frames: Int, sampleRate: Double, master: Double) -> (left: [Double], right: [Double]) {
  var left = [Double](repeating: 0, count: frames)
  var right = left
  for s in stems {
    precondition(Double(s.audio.info.sampleRate) == sampleRate && s.settings.rate == 1)
    let channels = s.audio.channels
    precondition(channels <= 2)
    let g = referenceGains(pan: s.settings.pan, channels: channels)
    let gl = g.left * s.settings.volume, gr = g.right * s.settings.volume
    let start = Int((s.settings.startOffset * sampleRate).rounded())
    let n = s.audio.frames
    let played = n * (s.settings.loops + 1)
    for t in start..<min(frames, start + played) {
      let f = (t - start) % n
      if channels == 1 {
        let x = Double(s.audio.samples[f])
        left[t] += x * gl
        right[t] += x * gr
      } else {
        left[t] += Double(s.audio.samples[2 * f]) * gl
        right[t] += Double(s.audio.samples[2 * f + 1]) * gr
      }
    }
  }
  for i in 0..<frames {
    left[i] *= master
    right[i] *= master
  }
  return (left, right)
}

@Suite struct ReferenceMixTests {
  /// Five stems in four file formats, mono and stereo, 48 and 44.1 kHz, with loops and a start
  /// offset: writes the files and returns the session and the stems that need no conversion.
  static func makeSession(
    in folder: TemporaryFolder, master: Double
  ) throws -> (session: Session, direct: [ReferenceStem], resampled: StemSettings) {
    // Mono 32-bit float noise, played twice.
    try writeAudio(
      folder.file("noise.wav"), format: .wavFloat,
      channels: [Signal.noise(frames: 30000, amplitude: 0.5, seed: 1)])
    // Stereo 16-bit WAV: two sines.
    try writeAudio(
      folder.file("pad.wav"), format: .wav16,
      channels: [
        Signal.sine(frequency: 220, sampleRate: 48000, frames: 50000, amplitude: 0.4),
        Signal.sine(frequency: 330, sampleRate: 48000, frames: 50000, amplitude: 0.3, phase: 1)
      ])
    // Stereo 24-bit FLAC: noise plus a sine, starting 0.1 s into the transport.
    let bassLeft = zip(
      Signal.noise(frames: 70000, amplitude: 0.2, seed: 2),
      Signal.sine(frequency: 55, sampleRate: 48000, frames: 70000, amplitude: 0.5)
    ).map { $0 + $1 }
    try writeAudio(
      folder.file("bass.flac"), format: .flac,
      channels: [
        bassLeft, Signal.noise(frames: 70000, amplitude: 0.6, seed: 3)
      ])
    // Mono 24-bit AIFF, short, played three times, hard right.
    try writeAudio(
      folder.file("perc.aiff"), format: .aiff,
      channels: [Signal.noise(frames: 9000, amplitude: 0.9, seed: 4)])
    // Mono float WAV at 44.1 kHz: goes through the resampler.
    try writeAudio(
      folder.file("keys.wav"), format: .wavFloat, sampleRate: 44100,
      channels: [Signal.sine(frequency: 440, sampleRate: 44100, frames: 44100, amplitude: 0.5)])

    var session = Session()
    session.masterVolume = master
    let direct = [
      stem("noise", "noise.wav") {
        $0.volume = 0.8; $0.pan = -0.3; $0.loops = 1
      },
      stem("pad", "pad.wav") {
        $0.volume = 0.5; $0.pan = 0.4
      },
      stem("bass", "bass.flac") {
        $0.volume = 1.2; $0.pan = -0.6; $0.startOffset = 0.1
      },
      stem("perc", "perc.aiff") {
        $0.volume = 0.3; $0.pan = 1; $0.loops = 2
      }
    ]
    let keys = stem("keys", "keys.wav") {
      $0.volume = 0.7; $0.pan = 0.5
    }
    session.stems = direct + [keys]
    let stems = try direct.map { ReferenceStem(settings: $0, audio: try readAudio(folder.file($0.file))) }
    return (session, stems, keys)
  }

  @Test("offline render equals the per-sample reference mix within -90 dBFS")
  func offlineRenderMatchesReference() throws {
    let folder = try TemporaryFolder()
    let made = try Self.makeSession(in: folder, master: 1)
    let (summary, output) = try renderOffline(made.session, in: folder)

    // Longest stem: bass, 0.1 s + 70000 frames.
    #expect(summary.frames == 4800 + 70000)
    #expect(summary.underruns == 0)

    // The 44.1 kHz stem's contribution is what it renders alone (same converter, same blocks);
    // its accuracy is checked separately by the resampling tests.
    var alone = Session()
    alone.stems = [made.resampled]
    let keys = try renderOffline(alone, in: folder, duration: Double(summary.frames) / 48000, name: "keys-alone.wav").output
    #expect(keys.count == output.count)
    #expect(peak(keys.right) > 0.3, "the 44.1 kHz stem should be audible")

    let reference = referenceMix(made.direct, frames: summary.frames, sampleRate: 48000, master: 1)
    let left = zip(output.left, keys.left).map { $0 - $1 }
    let right = zip(output.right, keys.right).map { $0 - $1 }
    let errorLeft = maxAbsError(left, reference.left)
    let errorRight = maxAbsError(right, reference.right)
    #expect(errorLeft < referenceTolerance, "left: max error \(errorLeft) (\(decibels(errorLeft)) dBFS)")
    #expect(errorRight < referenceTolerance, "right: max error \(errorRight) (\(decibels(errorRight)) dBFS)")
    // The reference is not trivially silent.
    #expect(peak(output.left) > 0.5 && peak(output.right) > 0.5)
    // The summary agrees with the file.
    #expect(abs(summary.peak.left - peak(output.left)) < 1e-6)
    #expect(abs(summary.peak.right - peak(output.right)) < 1e-6)
  }

  @Test("the session's master volume applies from the first sample of an offline render")
  func masterVolumeFromFirstSample() throws {
    let folder = try TemporaryFolder()
    let made = try Self.makeSession(in: folder, master: 0.6)
    var session = made.session
    session.stems.removeLast()  // only stems without rate conversion
    let (summary, output) = try renderOffline(session, in: folder)
    let reference = referenceMix(made.direct, frames: summary.frames, sampleRate: 48000, master: 0.6)
    let errorLeft = maxAbsError(output.left, reference.left)
    let errorRight = maxAbsError(output.right, reference.right)
    #expect(errorLeft < referenceTolerance, "left: max error \(errorLeft)")
    #expect(errorRight < referenceTolerance, "right: max error \(errorRight)")
  }

  @Test("a soloed stem in a session silences the others from the first sample")
  func sessionSoloFromFirstSample() throws {
    let folder = try TemporaryFolder()
    let made = try Self.makeSession(in: folder, master: 1)
    var session = made.session
    session.stems.removeLast()
    session.stems[3].solo = true  // perc, the last stem
    session.stems[1].mute = true  // pad
    let (summary, output) = try renderOffline(session, in: folder)
    let reference = referenceMix([made.direct[3]], frames: summary.frames, sampleRate: 48000, master: 1)
    #expect(summary.frames == 4800 + 70000)
    let errorLeft = maxAbsError(output.left, reference.left)
    let errorRight = maxAbsError(output.right, reference.right)
    #expect(
      errorLeft < referenceTolerance,
      "left: max error \(errorLeft) at \(String(describing: firstMismatch(output.left[...], reference.left.map(Float.init)[...], tolerance: referenceTolerance)))"
    )
    #expect(errorRight < referenceTolerance, "right: max error \(errorRight)")
  }

  @Test("output formats: FLAC and AIFF renders decode to the float render within their 24-bit resolution")
  func otherOutputFormats() throws {
    let folder = try TemporaryFolder()
    try writeAudio(
      folder.file("a.wav"), format: .wavFloat,
      channels: [Signal.noise(frames: 20000, amplitude: 0.7, seed: 9)])
    var session = Session()
    session.stems = [stem("a", "a.wav") { $0.pan = 0.2 }]
    let float = try renderOffline(session, in: folder, name: "out.wav").output
    for name in ["out.flac", "out.aiff", "out.AIF"] {
      let other = try renderOffline(session, in: folder, name: name).output
      #expect(other.count == float.count)
      // 24-bit quantization: one step is 2^-23.
      #expect(maxAbsError(other.left, float.left) < 2.5e-7, "\(name)")
      #expect(maxAbsError(other.right, float.right) < 2.5e-7, "\(name)")
    }
  }
}
