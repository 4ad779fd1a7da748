import Foundation
import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import Testing

/// LV2 presets that hold plugin state, not only control values: x42's zeroconvolv (x42-plugins)
/// ships "No-OP" presets whose state names an impulse response in the plugin's bundle (a delta
/// spike: the output is the input). Loading one replaces the insert with an instance given that
/// state; the session then keeps the file beside it, as any plugin state's.
@Suite struct InsertPresetStateTests {
  static let convolver = "http://gareus.org/oss/lv2/zeroconvolv#Mono"

  /// The largest |out[i] − input[start + i]|.
  static func error(_ out: [Float], _ input: [Float], start: Int) -> Float {
    zip(out.indices, out).reduce(0) { worst, x in max(worst, abs(x.1 - input[start + x.0])) }
  }

  @Test(
    "a preset holding state (zeroconvolv's No-OP Mono) loads into a new instance: silence before, the input after; saved and reopened the same"
  )
  func statePreset() throws {
    let folder = try TemporaryFolder()
    let (rig, input) = try InsertConvolutionTests.rig(folder, pluginWork: .synchronous)
    try rig.mixer.inserts.add("master", plugin: Self.convolver)  // mono: two linked instances
    let presets = try rig.mixer.inserts.presets(of: "master", position: 1).map(\.label)
    #expect(presets.contains("No-OP Mono"), "presets: \(presets)")
    try rig.mixer.transport.play()
    let before = rig.render(4096, block: 256)
    #expect(before.left.allSatisfy { $0 == 0 }, "without an impulse response zeroconvolv should be silent")
    #expect(try rig.mixer.inserts.loadPreset("master", position: 1, preset: "no-op mono") == "No-OP Mono")
    _ = rig.render(1024, block: 256)
    let start = Int((rig.mixer.transport.position * 48000).rounded())
    let after = rig.render(4096, block: 256)
    // zeroconvolv convolves in 64-frame partitions here and reports that as its latency.
    let latency = try #require(try rig.mixer.inserts.list(of: "master").first?.latency)
    #expect(Self.error(after.left, input, start: start - latency) < 1e-6, "left is not the input, \(latency) frames late")
    #expect(Self.error(after.right, input, start: start - latency) < 1e-6, "right is not the input, \(latency) frames late")
    _ = rig.mixer.pump()  // frees the instance the preset replaced

    let sessionPath = folder.file("show.stemdeck")
    let text = SessionFile.encode(rig.mixer.session(savingTo: sessionPath, copyingFiles: true))
    try Data(text.utf8).write(to: URL(fileURLWithPath: sessionPath))
    let kept = folder.file("show-files/delta-48k.wav")
    #expect(FileManager.default.fileExists(atPath: kept), "the preset's impulse response is not kept beside the session")
    #expect(text.contains("show-files/delta-48k.wav"), "\(text)")
    let reopened = try SessionFile.decode(Data(contentsOf: URL(fileURLWithPath: sessionPath)), source: sessionPath)
    let other = MixerRig(maxBlockFrames: 256, pluginWork: .synchronous)
    #expect(try other.mixer.load(reopened, sessionPath: sessionPath).isEmpty)
    try other.mixer.transport.seek(toSeconds: 1)
    try other.mixer.transport.play()
    _ = other.render(1024, block: 256)
    let again = other.render(4096, block: 256)
    #expect(Self.error(again.left, input, start: 48000 + 1024 - latency) < 1e-6, "reopened: left is not the input")
  }

  @Test("a preset of another plugin's or an unknown name is refused, naming the presets there are; the insert is unchanged")
  func refusals() throws {
    let folder = try TemporaryFolder()
    let (rig, _) = try InsertConvolutionTests.rig(folder, pluginWork: .synchronous)
    try rig.mixer.inserts.add("master", plugin: Self.convolver)
    do {
      try rig.mixer.inserts.loadPreset("master", position: 1, preset: "No-OP Stereo")
      Issue.record("another plugin's preset was loaded")
    } catch {
      #expect(error.detail.contains("has no preset 'No-OP Stereo'") && error.detail.contains("'No-OP Mono'"), "\(error.detail)")
    }
    #expect(try rig.mixer.inserts.list(of: "master").count == 1)
  }
}
