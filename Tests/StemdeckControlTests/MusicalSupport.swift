import Foundation
import StemdeckAudioFile
import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

// The MusicalTests suite and its helpers: small generated stems and measures of where a change lands.
// Its tests are in one file per topic: MusicalGlideTests, MusicalGroupedChangeTests,
// MusicalLoopSeamTests, MusicalLoopRegionTests, MusicalStretchTests.

/// Musical controls, rendered offline from real generated files with the test as the audio
/// thread: glides, grouped changes on one frame, loop seams, loop regions with crossfades, and
/// stretch mode (Rubber Band) against varispeed.
@Suite struct MusicalTests {
  static let sr = 48000
}

enum Musical {
  static let sr = 48000.0

  /// Writes a mono float WAV of `samples` into `folder` and returns its path.
  @discardableResult
  static func mono(_ folder: TemporaryFolder, _ name: String, _ samples: [Float], sampleRate: Int = 48000) throws -> String {
    let path = folder.file(name)
    try writeAudio(path, format: .wavFloat, sampleRate: sampleRate, channels: [samples])
    return path
  }

  /// The first index ≥ `from` where `a` differs from `a[from]`, or nil.
  static func firstChange(_ a: [Float], from: Int = 0) -> Int? {
    let v = a[from]
    return a[from...].firstIndex { $0 != v }
  }

  /// Largest |a[start + k] − expected(k)| for k in `ks`.
  static func deviation(_ a: [Float], at start: Int, over ks: ClosedRange<Int>, _ expected: (Int) -> Double) -> Double {
    var worst = 0.0
    for k in ks { worst = max(worst, abs(Double(a[start + k]) - expected(k))) }
    return worst
  }

  /// Catches the mixer error a call throws (nil when it does not throw).
  static func error(_ body: () throws(MixerError) -> Void) -> MixerError? {
    do throws(MixerError) { try body() } catch { return error }
    return nil
  }
}
