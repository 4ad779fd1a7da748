import Foundation
import StemdeckTestSupport
import Testing
@testable import StemdeckSession

/// How a session file writes gains (volumes, send levels, return volumes): short numbers as
/// they are, a gain set in dB as that dB level, anything else as the number in full, and always
/// read back to the same bits.
@Suite("gains in a session file")
struct GainTextTests {
  @Test("a gain set in dB is written in dB; a short number stays a number; others are the full number")
  func forms() {
    #expect(JSONText.gain(Decibels.toAmplitude(-3)) == "\"-3dB\"")
    #expect(JSONText.gain(Decibels.toAmplitude(-4.5)) == "\"-4.5dB\"")
    #expect(JSONText.gain(Decibels.toAmplitude(-12.25)) == "\"-12.25dB\"")
    #expect(JSONText.gain(Decibels.toAmplitude(3)) == "\"3dB\"")
    for short in [0.0, 1, 2, 0.8, 0.45, 0.25, 0.125] { #expect(JSONText.gain(short) == JSONText.number(short)) }
    // Not the conversion of a dB level with two decimals: the number, whole.
    #expect(JSONText.gain(0.7385923141) == "0.7385923141")
    #expect(JSONText.gain(Decibels.toAmplitude(-3.125)) == JSONText.number(Decibels.toAmplitude(-3.125)))
  }

  /// Every dB level a person types with two decimals, −60.00 … +6.00 dB (6,601 of them, where
  /// 10,000 random draws from the same range met 78 % of them), and 2,000 random numbers.
  @Test("every form reads back to the same gain, bit for bit (every dB level -60.00…+6.00 and 2,000 random numbers)")
  func readsBack() throws {
    var random = SplitMix64(seed: 36)
    var gains: [Double] = (-6000...600).map { Decibels.toAmplitude(Double($0) / 100) }
    gains += (0..<2_000).map { _ in Double.random(in: 0...2, using: &random) }
    var inDB = 0
    for gain in gains where gain <= 2 {
      var session = Session()
      var stem = StemSettings(name: "s", file: "s.wav")
      stem.volume = gain
      session.stems = [stem]
      session.masterVolume = gain
      let text = SessionFile.encode(session)
      if text.contains("dB\"") { inDB += 1 }
      let back = try decode(text)
      #expect(back.stems[0].volume.bitPattern == gain.bitPattern && back.masterVolume.bitPattern == gain.bitPattern, "\(gain): \(text)")
    }
    #expect(inDB > 6_000, "\(inDB) of 8,601 written in dB")
  }
}
