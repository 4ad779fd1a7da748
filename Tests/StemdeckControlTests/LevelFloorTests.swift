import Foundation
import StemdeckAudioFile
// @testable: `Loudness` and `LiveLoudness` are built here from chosen levels (their initialisers
// are internal).
@testable import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import StemdeckText
import Testing

// The level floor (issue 37, item 4): levels at or below −160 dBFS print `-inf`, one rule for
// every level printed (`NumberFormat.level`): the meters, `analyze`'s lines, the render summary's
// peak/RMS line; `null` in JSON. Checked at −159.9 (a number), −160 and −165 (the floor and
// under it) and digital silence; a level that rounds to the floor as shown is -inf too.

@Suite struct LevelFloorTests {
  /// (dBFS, the text a level there prints as); nil: digital silence.
  static let levels: [(Double?, String)] = [(-159.9, "-159.9"), (-160, "-inf"), (-165, "-inf"), (nil, "-inf")]

  static func amplitude(_ db: Double?) -> Double { db.map { pow(10, $0 / 20) } ?? 0 }

  @Test("NumberFormat.level and Decibels.isSilent: -159.9 prints, -160, -165 and silence are -inf (from dB and from amplitude)")
  func rule() {
    for (db, text) in Self.levels {
      let amplitude = Self.amplitude(db)
      #expect(NumberFormat.level(Decibels.fromAmplitude(amplitude)) == text, "\(String(describing: db))")
      #expect(NumberFormat.level(db ?? -.infinity) == text, "\(String(describing: db))")
      #expect(Decibels.isSilent(db ?? -.infinity) == (text == "-inf"))
    }
    #expect(NumberFormat.level(-3.25, 2) == "-3.25")
    // The floor is never shown as a number: a level that rounds to it, as shown, is -inf.
    #expect(NumberFormat.level(-159.96) == "-inf" && NumberFormat.level(-159.94) == "-159.9")
    #expect(NumberFormat.level(-159.996, 2) == "-inf" && NumberFormat.level(-159.96, 2) == "-159.96")
    #expect(Decibels.isSilent(-159.96) && !Decibels.isSilent(-159.96, decimals: 2) && !Decibels.isSilent(.nan))
  }

  @Test("analyze's and render --normalize's loudness lines and the live meter line: the same rule for true and sample peak")
  func loudnessLines() {
    for (db, text) in Self.levels {
      let a = Self.amplitude(db)
      let loudness = Loudness(integrated: -.infinity, range: 0, truePeak: a, samplePeak: a)
      #expect(
        loudness.lines == [
          "integrated loudness -inf LUFS", "loudness range 0.0 LU", "true peak \(text) dBTP", "sample peak \(text) dBFS"
        ], "\(String(describing: db))")
      let live = LiveLoudness(
        momentary: db ?? -.infinity, shortTerm: -.infinity, integrated: -.infinity, range: 0, truePeak: a, seconds: 1, droppedFrames: 0)
      #expect(live.line == "M \(text)  S -inf  I -inf LUFS  LRA 0.0 LU  TP \(text) dBTP (over 0:01.000)", "\(live.line)")
    }
  }

  @Test("analyze of a session at -159.9, -160, -165 dBFS and silence: the peak/RMS line and the sample peak line follow the one rule")
  func analyzeLines() throws {
    let folder = try TemporaryFolder()
    let frames = 96000, ramp = 240
    for (db, text) in Self.levels {
      // A constant level with 5 ms raised-cosine ends (no step for the true-peak filter to ring on).
      let a = Float(Self.amplitude(db))
      let samples = (0..<frames).map { i -> Float in
        let edge = min(i, frames - 1 - i)
        return edge >= ramp ? a : a * Float(0.5 - 0.5 * cos(Double.pi * Double(edge) / Double(ramp)))
      }
      let name = "level\(db.map { String(Int(-$0 * 10)) } ?? "silence").wav"
      try writeAudio(folder.file(name), format: .wavFloat, channels: [samples, samples])
      var session = Session()
      session.stems = [stem("level", name)]
      let summary = try OfflineRenderer.analyze(session: session, sessionPath: folder.file("s.stemdeck"), duration: nil)
      let loudness = try #require(summary.loudness)
      #expect(loudness.lines.last == "sample peak \(text) dBFS", "\(String(describing: db)): \(loudness.lines)")
      // The RMS lies a little under the level (the ramps): -159.9 still prints as -159.9.
      #expect(
        summary.levelsLine == "peak L \(text) dB, R \(text) dB; RMS L \(text) dB, R \(text) dB; clipped samples 0",
        "\(String(describing: db)): \(summary.levelsLine)")
      if db == nil || db! < -160 { #expect(loudness.lines[2] == "true peak -inf dBTP", "\(loudness.lines)") }
    }
  }
}
