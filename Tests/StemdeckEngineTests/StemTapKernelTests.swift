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

  @Test(
    "tapStereoSteadyInterleaved stores in its interleaved tap what tapStereoSteady stores in its two, bit for bit, at any offset, and adds and meters alike",
    arguments: [1021, 5, 4, 3, 1, 0])
  func interleavedTapEqualsPlanar(frames: Int) {
    var seed: UInt64 = 0x9E37_79B9
    func next() -> Float {
      seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Float(Int64(bitPattern: seed) >> 40) / Float(1 << 23)
    }
    var source = (0..<(2 * frames)).map { _ in next() }
    if frames > 2 { source[2] = -0.0; source[5] = .nan }  // signs and NaNs pass as the planar kernel's
    let before = (0..<frames).map { _ in next() }
    for metering in [false, true] {
      for offset in [0, 1, 3] {  // the tap's frames start anywhere in the chunk (a late stem)
        var tapL = [Float](repeating: 9, count: frames), tapR = [Float](repeating: -9, count: frames)
        var mixL = before, mixR = before.reversed() as [Float]
        let planar = tapStereoSteady(
          source, frames: frames, gainLeft: 0.37, gainRight: -1.3, tapLeft: &tapL, tapRight: &tapR,
          left: &mixL, right: &mixR, metering: metering)
        var chunk = [Float](repeating: 7, count: 2 * (frames + offset) + 2)
        var gotL = before, gotR = before.reversed() as [Float]
        let levels = chunk.withUnsafeMutableBufferPointer { c in
          tapStereoSteadyInterleaved(
            source, frames: frames, gainLeft: 0.37, gainRight: -1.3, tap: c.baseAddress! + 2 * offset,
            left: &gotL, right: &gotR, metering: metering)
        }
        let expected = zip(tapL, tapR).flatMap { [$0.0, $0.1] }
        #expect(
          Array(chunk[(2 * offset)..<(2 * (offset + frames))]).map(\.bitPattern) == expected.map(\.bitPattern),
          "the interleaved tap is the planar one, frame by frame (metering \(metering), offset \(offset))")
        #expect(chunk[0..<(2 * offset)].allSatisfy { $0 == 7 } && chunk.suffix(2).allSatisfy { $0 == 7 }, "nothing outside its frames")
        #expect(gotL.map(\.bitPattern) == mixL.map(\.bitPattern) && gotR.map(\.bitPattern) == mixR.map(\.bitPattern))
        let a = [levels.peak.0, levels.peak.1, levels.sumSquares.0, levels.sumSquares.1]
        let b = [planar.peak.0, planar.peak.1, planar.sumSquares.0, planar.sumSquares.1]
        #expect(a.map(\.bitPattern) == b.map(\.bitPattern))
      }
    }
  }
}
