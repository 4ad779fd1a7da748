import Foundation
import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import Testing

/// Plugins with atom sequence ports (x42's fil4 and dpl: a control input and a notify output
/// each), the LV2 worker and file parameters (x42's convoLV2), rendered through real plugins
/// (scripts/install-deps installs x42-plugins).
@Suite struct InsertAtomTests {
  static let fil4 = "http://gareus.org/oss/lv2/fil4#mono"
  static let dpl = "http://gareus.org/oss/lv2/dpl#stereo"

  @Test("x42 dpl (atom control and notify ports) passes a signal below its threshold exactly, late by the latency it reports")
  func limiterPasses() throws {
    let folder = try TemporaryFolder()
    let frames = 9_600
    let (rig, left, right) = try InsertRenderTests.rig(folder, frames: frames, amplitude: 0.25)
    try rig.mixer.inserts.add("noise", plugin: Self.dpl)
    let symbols = try rig.mixer.inserts.controls(of: "noise", position: 1).map(\.0.symbol)
    #expect(symbols.contains("threshold") && symbols.contains("release"), "params: \(symbols)")
    try rig.mixer.transport.play()
    let out = rig.render(frames, block: 256)
    _ = rig.mixer.pump()
    let latency = try #require(try rig.mixer.inserts.list(of: "noise").first?.latency)
    #expect(latency == 64, "dpl reports its look-ahead")
    // −12 dBFS noise under a −1 dB threshold: the limiter's gain stays exactly 1.
    #expect(peak(out.left[0..<latency]) == 0, "sound before the look-ahead")
    #expect(firstMismatch(out.left[latency...], left[0..<(frames - latency)]) == nil, "left is not the input \(latency) frames late")
    #expect(firstMismatch(out.right[latency...], right[0..<(frames - latency)]) == nil, "right is not the input \(latency) frames late")
  }

  @Test("x42 fil4 (a mono EQ with atom ports) runs as two linked instances on a stereo stem: its params listed, a −18 dB gain heard")
  func equalizerRuns() throws {
    let folder = try TemporaryFolder()
    let frames = 19_200
    let (rig, left, _) = try InsertRenderTests.rig(folder, frames: frames, amplitude: 0.25)
    try rig.mixer.inserts.add("noise", plugin: Self.fil4)
    let symbols = try rig.mixer.inserts.controls(of: "noise", position: 1).map(\.0.symbol)
    #expect(["enable", "gain", "HighPass", "freq1", "gain1", "HSgain"].allSatisfy(symbols.contains), "params: \(symbols)")
    try rig.mixer.inserts.setValue("noise", position: 1, symbol: "gain", -18)
    try rig.mixer.transport.play()
    let out = rig.render(frames, block: 256)
    let settled = 9_600..<frames
    func rms(_ x: ArraySlice<Float>) -> Double { (x.reduce(0) { $0 + Double($1 * $1) } / Double(x.count)).squareRoot() }
    let ratio = 20 * log10(rms(out.left[settled]) / rms(left[settled]))
    #expect(out.left.allSatisfy(\.isFinite) && out.right.allSatisfy(\.isFinite))
    #expect(abs(ratio + 18) < 0.5, "fil4 at −18 dB changed the level by \(ratio) dB")
    #expect(rms(out.right[settled]) > 0, "the right instance ran")
  }
}
