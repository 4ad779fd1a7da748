// The one dB conversion (StemdeckSession's `Decibels`): the meters, the session format and the
// console all go through it.
import Testing
import StemdeckSession

@Suite struct DecibelTests {
  @Test func conversions() {
    #expect(abs(Decibels.toAmplitude(-6) - 0.501187) < 1e-6)
    #expect(Decibels.toAmplitude(-200) == 0)
    #expect(Decibels.fromAmplitude(0) == -160)
    #expect(abs(Decibels.fromAmplitude(2) - 6.0206) < 1e-4)
  }

  @Test(
    "dB text as the session file and the console write it",
    arguments: [
      ("-6dB", 0.501187), ("-6 dB", 0.501187), ("+3dB", 1.412538), ("0.5db", 1.059254),
      ("-inf dB", 0), ("-infinity dB", 0), ("-200dB", 0)
    ])
  func text(_ text: String, _ gain: Double) {
    let value = Decibels.linearGain(text: text)
    #expect(value != nil && abs(value! - gain) < 1e-6, "\(text) → \(String(describing: value))")
  }

  @Test("not dB text", arguments: ["6", "dB", "nan dB", "0x10dB", "1e1dB", "--6dB", "6 d B"])
  func notText(_ text: String) {
    #expect(Decibels.linearGain(text: text) == nil)
  }
}
