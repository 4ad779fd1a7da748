import Testing
@testable import StemdeckEngine

/// `render --stems`' mix kernel (DSP/MixKernels.swift, `tapStereoSteady`; Renderer/StemTaps.swift):
/// a stem's tap written in the mix's own pass must hold exactly what the mix gets from it.
@Suite("Stem tap kernel")
struct StemTapKernelTests {
  @Test(
    "tapStereoSteady stores in the tap what mixStereoSteady adds, bit for bit, adds the same to the mix, and meters alike",
    arguments: [1021, 4, 3, 0])
  func tapEqualsMix(frames: Int) {
    var seed: UInt64 = 0x1234_5678
    func next() -> Float {
      seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Float(Int64(bitPattern: seed) >> 40) / Float(1 << 23)
    }
    let source = (0..<(2 * frames)).map { _ in next() }
    let before = (0..<frames).map { _ in next() }
    for metering in [false, true] {
      // The tap holds leftovers of an earlier block: they are overwritten, not added to.
      var tapL = [Float](repeating: 9, count: frames), tapR = [Float](repeating: -9, count: frames)
      var mixL = before, mixR = before.reversed() as [Float]
      var expectL = before, expectR = before.reversed() as [Float]
      var aloneL = [Float](repeating: 0, count: frames), aloneR = [Float](repeating: 0, count: frames)
      let levels = tapStereoSteady(
        source, frames: frames, gainLeft: 0.37, gainRight: 1.3, tapLeft: &tapL, tapRight: &tapR,
        left: &mixL, right: &mixR, metering: metering)
      let reference = mixStereoSteady(
        source, frames: frames, gainLeft: 0.37, gainRight: 1.3, left: &aloneL, right: &aloneR, metering: metering)
      _ = mixStereoSteady(
        source, frames: frames, gainLeft: 0.37, gainRight: 1.3, left: &expectL, right: &expectR, metering: false)
      #expect(tapL == aloneL && tapR == aloneR, "the tap is the stem alone (metering \(metering))")
      #expect(mixL == expectL && mixR == expectR, "the mix gets what mixStereoSteady adds (metering \(metering))")
      if frames > 0 { #expect(tapL.contains { $0 != 0 } && tapR.contains { $0 != 0 }) }
      let got = [levels.peak.0, levels.peak.1, levels.sumSquares.0, levels.sumSquares.1]
      #expect(got == [reference.peak.0, reference.peak.1, reference.sumSquares.0, reference.sumSquares.1])
    }
  }
}
