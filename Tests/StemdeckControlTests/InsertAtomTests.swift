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

  /// A −12 dBFS stereo noise stem of `frames` with plugin `uri` inserted: the rig, the input's
  /// channels and the insert's control symbols.
  static func inserted(_ uri: String, frames: Int, in folder: TemporaryFolder) throws -> (MixerRig, [Float], [Float], [String]) {
    let (rig, left, right) = try InsertRenderTests.rig(folder, frames: frames, amplitude: 0.25)
    try rig.mixer.inserts.add("noise", plugin: uri)
    return (rig, left, right, try rig.mixer.inserts.controls(of: "noise", position: 1).map(\.0.symbol))
  }

  @Test("x42 dpl (atom control and notify ports) passes a signal below its threshold exactly, late by the latency it reports")
  func limiterPasses() throws {
    let folder = try TemporaryFolder()
    let frames = 9_600
    let (rig, left, right, symbols) = try Self.inserted(Self.dpl, frames: frames, in: folder)
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
    let (rig, left, _, symbols) = try Self.inserted(Self.fil4, frames: frames, in: folder)
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

/// x42's convoLV2: a worker loads its impulse response, set as a file parameter.
@Suite struct InsertConvolutionTests {
  static let convolver = "http://gareus.org/oss/lv2/convoLV2#Mono"

  /// A mono impulse response: one sample of 0.5 at frame 7.
  static func impulse(_ path: String) throws {
    var ir = [Float](repeating: 0, count: 64)
    ir[7] = 0.5
    try writeAudio(path, format: .wavFloat, channels: [ir])
  }

  /// Waits until the worker of `strip`'s first insert has run `count` requests (the plugin's
  /// `work` returned), polling the counter; false if that took more than 10 s.
  static func waitForWork(_ rig: MixerRig, strip: String = "master", count: Int) throws -> Bool {
    let deadline = ContinuousClock.now + .seconds(10)
    while try rig.mixer.inserts.workCounts(strip, position: 1).worked < count {
      if ContinuousClock.now > deadline { return false }
      Thread.sleep(forTimeInterval: 0.001)
    }
    return true
  }

  /// A 10 s stereo noise stem in a rig whose blocks are 256 frames (convoLV2 convolves in
  /// blocks of the maximum length it was given, and is silent for other lengths) and whose
  /// plugins' work runs on the worker thread, as live (or at once: `.synchronous`).
  static func rig(_ folder: TemporaryFolder, pluginWork: Mixer.Streaming = .thread) throws -> (MixerRig, [Float]) {
    let left = Signal.noise(frames: 480_000, amplitude: 0.5, seed: 39)
    let path = folder.file("noise.wav")
    try writeAudio(path, format: .wavFloat, channels: [left, left])
    let rig = MixerRig(maxBlockFrames: 256, pluginWork: pluginWork)
    try rig.mixer.stems.add(path: path, settings: stem("noise", path))
    return (rig, left)
  }

  /// Sets the master's convolver's impulse response to `ir` while playing and waits until it is
  /// in use: the message reaches the plugin in a block, its worker loads the file, the next block
  /// hands the new convolver back.
  static func load(_ rig: MixerRig, _ ir: String) throws {
    try rig.mixer.inserts.setFile("master", position: 1, parameter: "impulse", path: ir)
    _ = rig.render(256, block: 256)
    #expect(try waitForWork(rig, count: 2), "the worker did not load the impulse response")
    _ = rig.render(256, block: 256)
    #expect(try rig.mixer.inserts.workCounts("master", position: 1).delivered == 2)
  }

  /// The largest |out[i] − 0.25 × input[start + i − 7]| from frame `from` on.
  static func convolutionError(_ out: [Float], _ input: [Float], start: Int, from: Int) -> Float {
    var worst: Float = 0
    for i in from..<out.count { worst = max(worst, abs(out[i] - 0.25 * input[start + i - 7])) }
    return worst
  }

  @Test("convoLV2 loads an impulse response set as a file parameter on its worker: the output is the input × 0.25, 7 frames late")
  func convolves() throws {
    let folder = try TemporaryFolder()
    let (rig, input) = try Self.rig(folder)
    try Self.impulse(folder.file("ir.wav"))
    try rig.mixer.inserts.add("master", plugin: Self.convolver)  // mono: two linked instances
    let files = try rig.mixer.inserts.fileParameters(of: "master", position: 1)
    #expect(files.map(\.parameter.symbol) == ["impulse"] && files.first?.path == nil)
    try rig.mixer.transport.play()
    _ = rig.render(1024, block: 256)
    try Self.load(rig, folder.file("ir.wav"))
    #expect(try rig.mixer.inserts.fileParameters(of: "master", position: 1).first?.path == folder.file("ir.wav"))
    // convoLV2 scales an impulse response by its default IR gain of 0.5 (convolution.cc), so
    // a 0.5 at frame 7 makes out[t] = 0.25 × in[t − 7]; it adds no latency (lv2info: none).
    // The new convolver took over after the last block's run, with no history: its first 7
    // frames lack the input before it.
    let start = rig.rendered
    let out = rig.render(4096, block: 256)
    #expect(Self.convolutionError(out.left, input, start: start, from: 7) < 1e-6, "left")
    #expect(Self.convolutionError(out.right, input, start: start, from: 7) < 1e-6, "right")
  }

  @Test("a file parameter refuses a missing or unreadable file, a directory and an unknown name, naming them")
  func fileRefusals() throws {
    let folder = try TemporaryFolder()
    let (rig, _) = try Self.rig(folder)
    try rig.mixer.inserts.add("master", plugin: Self.convolver)
    func refusal(_ name: String, _ path: String) -> String {
      do {
        try rig.mixer.inserts.setFile("master", position: 1, parameter: name, path: path)
        return "accepted"
      } catch { return error.description }
    }
    let missing = folder.file("nope.wav")
    #expect(refusal("impulse", missing).contains(missing) && refusal("impulse", missing).contains("no such file"))
    #expect(refusal("impulse", folder.path).contains("is a directory"))
    let locked = folder.file("locked.wav")
    try Self.impulse(locked)
    chmod(locked, 0)
    if getuid() != 0 { #expect(refusal("impulse", locked).contains("not readable")) }
    #expect(refusal("sample", locked).contains("no file parameter 'sample' (its file parameters: impulse)"))
  }
}
