import Foundation
import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import Testing

/// LV2 plugin inserts rendered offline through real plugins (scripts/install-deps installs
/// swh-lv2 and x42-plugins): swh's `amp` (output = input × 10^(gain/20), computed in float), x42's
/// `nodelay` (a whole-sample delay line).
@Suite struct InsertRenderTests {
  static let amp = "http://plugin.org.uk/swh-plugins/amp"
  static let delay = "http://gareus.org/oss/lv2/nodelay"

  /// A stereo noise stem in a fresh rig, playing.
  static func rig(_ folder: TemporaryFolder, frames: Int, amplitude: Double = 0.5) throws -> (MixerRig, [Float], [Float]) {
    let left = Signal.noise(frames: frames, amplitude: amplitude, seed: 39)
    let right = Signal.noise(frames: frames, amplitude: amplitude, seed: 40)
    let path = folder.file("noise.wav")
    try writeAudio(path, format: .wavFloat, channels: [left, right])
    let rig = MixerRig()
    try rig.mixer.stems.add(path: path, settings: stem("noise", path))
    return (rig, left, right)
  }

  @Test("a gain insert scales a stereo stem exactly (a mono plugin as two linked instances), bypass and removal restore it")
  func exactGain() throws {
    let folder = try TemporaryFolder()
    let frames = 12_000
    let (rig, left, right) = try Self.rig(folder, frames: frames)
    let added = try rig.mixer.inserts.add("noise", plugin: "Simple amplifier")
    #expect(added.position == 1 && added.uri == Self.amp)
    try rig.mixer.inserts.setValue("noise", position: 1, symbol: "gain", -20)
    try rig.mixer.transport.play()
    // swh's amp: output = input × powf(10, gain × 0.05), in float.
    let g = powf(10, Float(-20) * 0.05)
    var out = rig.render(4800, block: 256)
    #expect(firstMismatch(out.left[...], left[0..<4800].map { $0 * g }[...]) == nil, "left is not input × \(g)")
    #expect(firstMismatch(out.right[...], right[0..<4800].map { $0 * g }[...]) == nil, "right is not input × \(g)")
    try rig.mixer.inserts.bypass("noise", position: 1, true)
    out = rig.render(2400, block: 100)
    #expect(
      firstMismatch(out.left[...], left[4800..<7200]) == nil && firstMismatch(out.right[...], right[4800..<7200]) == nil,
      "bypassed: not bit-exact")
    try rig.mixer.inserts.bypass("noise", position: 1, false)
    out = rig.render(2400, block: 77)
    #expect(firstMismatch(out.left[...], left[7200..<9600].map { $0 * g }[...]) == nil, "back in, not input × \(g)")
    try rig.mixer.inserts.remove("noise", position: 1)
    out = rig.render(2400)
    _ = rig.mixer.pump()  // frees the chains handed back
    #expect(
      firstMismatch(out.left[...], left[9600..<12000]) == nil && firstMismatch(out.right[...], right[9600..<12000]) == nil,
      "removed: not bit-exact")
    #expect(try rig.mixer.inserts.list(of: "noise").isEmpty)
  }

  @Test("a delay insert on the master offsets the mix by exactly its delay; inserts run in order")
  func exactDelay() throws {
    let folder = try TemporaryFolder()
    let frames = 9_600
    let (rig, left, right) = try Self.rig(folder, frames: frames)
    try rig.mixer.inserts.add("master", plugin: Self.delay)
    try rig.mixer.inserts.setValue("master", position: 1, symbol: "report_latency", 0)  // delay, do not report
    try rig.mixer.inserts.setValue("master", position: 1, symbol: "delay", 137)
    try rig.mixer.inserts.add("master", plugin: Self.amp, at: 1)
    try rig.mixer.inserts.setValue("master", position: 1, symbol: "gain", 6)
    #expect(try rig.mixer.inserts.list(of: "master").map(\.uri) == [Self.amp, Self.delay])
    // nodelay glides to a new delay time: let it settle on silence (the master's inserts run
    // while the transport is stopped), then play.
    _ = rig.render(9600)
    try rig.mixer.transport.play()
    let out = rig.render(frames, block: 128)
    let g = powf(10, Float(6) * 0.05)
    #expect(peak(out.left[0..<137]) == 0 && peak(out.right[0..<137]) == 0, "sound before the delay")
    let wantL = [Float](repeating: 0, count: 137) + left[0..<(frames - 137)].map { $0 * g }
    let wantR = [Float](repeating: 0, count: 137) + right[0..<(frames - 137)].map { $0 * g }
    #expect(firstMismatch(out.left[...], wantL[...]) == nil, "left is not the input × \(g) 137 frames later")
    #expect(firstMismatch(out.right[...], wantR[...]) == nil, "right is not the input × \(g) 137 frames later")
  }

  @Test("insert list reports the latency a plugin reports (x42 nodelay set to 100 frames), none for a plugin without a latency port")
  func latencyReported() throws {
    let folder = try TemporaryFolder()
    let (rig, _, _) = try Self.rig(folder, frames: 4800)
    try rig.mixer.inserts.add("master", plugin: Self.delay)  // mode 1: delay and report latency
    try rig.mixer.inserts.setValue("master", position: 1, symbol: "delay", 100)
    try rig.mixer.inserts.add("master", plugin: Self.amp)
    // Primed on zero frames when added, at its default delay (0); the new delay after a run.
    #expect(try rig.mixer.inserts.list(of: "master").map(\.latency) == [0, nil], "as added")
    _ = rig.render(1024)
    _ = rig.mixer.pump()
    #expect(try rig.mixer.inserts.list(of: "master").map(\.latency) == [100, nil])
    #expect(rig.mixer.inserts.latency == 100, "the master's inserts are the mix's latency")
  }

  @Test("a bus runs its inserts after its EQ: a stem through a bus with swh amp at -20 dB comes out scaled exactly")
  func busInsert() throws {
    let folder = try TemporaryFolder()
    let (rig, left, right) = try Self.rig(folder, frames: 4800)
    try rig.mixer.buses.add(BusSettings(name: "grp"))
    try rig.mixer.buses.route("noise", to: "grp")
    try rig.mixer.inserts.add("grp", plugin: Self.amp)
    try rig.mixer.inserts.setValue("grp", position: 1, symbol: "gain", -20)
    try rig.mixer.transport.play()
    let out = rig.render(4800)
    let g = powf(10, Float(-20) * 0.05)
    #expect(firstMismatch(out.left[...], left.map { $0 * g }[...]) == nil, "left is not input × \(g)")
    #expect(firstMismatch(out.right[...], right.map { $0 * g }[...]) == nil, "right is not input × \(g)")
  }

  @Test("an insert that puts out infinity is bypassed at once, reported once, and nothing non-finite reaches the mix")
  func nonFiniteContained() throws {
    let folder = try TemporaryFolder()
    // 1e36 is finite; swh's amp at +70 dB makes it about 3e39: infinity in float.
    let (rig, _, _) = try Self.rig(folder, frames: 4800, amplitude: 1e36)
    try rig.mixer.inserts.add("noise", plugin: Self.amp)
    try rig.mixer.inserts.setValue("noise", position: 1, symbol: "gain", 70)
    try rig.mixer.transport.play()
    let out = rig.render(4800)
    #expect(out.left.allSatisfy(\.isFinite) && out.right.allSatisfy(\.isFinite), "a non-finite sample reached the mix")
    let events = rig.mixer.pump()
    #expect(events.filter { if case .insertFaulted("noise", 1, _) = $0 { true } else { false } }.count == 1, "events: \(events)")
    #expect(try rig.mixer.inserts.list(of: "noise").first?.bypass == true)
  }

  @Test(
    "a faulting stage in a chain of two is replaced by the signal that went into it, from the first block, on a stem and the master",
    arguments: [("noise", true), ("noise", false), ("master", true), ("master", false)])
  func faultInChain(strip: String, firstFaults: Bool) throws {
    let folder = try TemporaryFolder()
    // 1e36 is finite; swh's amp at +70 dB makes it about 3e39: infinity in float.
    let (rig, left, right) = try Self.rig(folder, frames: 4800, amplitude: 1e36)
    try rig.mixer.inserts.add(strip, plugin: Self.amp)
    try rig.mixer.inserts.add(strip, plugin: Self.amp)
    try rig.mixer.inserts.setValue(strip, position: 1, symbol: "gain", firstFaults ? 70 : 0)
    try rig.mixer.inserts.setValue(strip, position: 2, symbol: "gain", firstFaults ? -20 : 70)
    try rig.mixer.transport.play()
    let out = rig.render(4800, block: 256)
    // The first faulting: the second stage gets the strip's own samples (× 0.1); the second
    // faulting: the strip gets the first stage's output (× 1, exactly the input).
    let g = firstFaults ? powf(10, Float(-20) * 0.05) : 1
    #expect(firstMismatch(out.left[...], left.map { $0 * g }[...]) == nil, "left is not input × \(g)")
    #expect(firstMismatch(out.right[...], right.map { $0 * g }[...]) == nil, "right is not input × \(g)")
    let events = rig.mixer.pump()
    let faulted = firstFaults ? 1 : 2
    #expect(
      events.filter { if case .insertFaulted(strip, faulted, _) = $0 { true } else { false } }.count == 1, "events: \(events)")
    #expect(try rig.mixer.inserts.list(of: strip).map(\.bypass) == [firstFaults, !firstFaults])
  }

  @Test("refusals say why: ambiguous or unknown names, a stereo plugin on a mono strip, ports that fit no strip, values out of range")
  func refusals() throws {
    let folder = try TemporaryFolder()
    let path = folder.file("mono.wav")
    try writeAudio(path, format: .wavFloat, channels: [Signal.constant(0.25, frames: 480)])
    let rig = MixerRig()
    try rig.mixer.stems.add(path: path, settings: stem("mono", path))
    func refusal(_ body: () throws -> Void) -> String {
      do {
        try body()
        return "accepted"
      } catch { return (error as? MixerError)?.detail ?? "\(error)" }
    }
    #expect(refusal { try rig.mixer.inserts.add("mono", plugin: "nodelay") }.contains("matches 3 plugins"))
    #expect(refusal { try rig.mixer.inserts.add("mono", plugin: "no such plugin xyz") }.contains("no installed LV2 effect"))
    #expect(refusal { try rig.mixer.inserts.add("mono", plugin: "L/C/R Delay") }.contains("mono strip"))
    #expect(refusal { try rig.mixer.inserts.add("mono", plugin: "Modulatable delay") }.contains("2 audio inputs and 1 outputs"))
    try rig.mixer.inserts.add("mono", plugin: Self.amp)
    #expect(
      refusal { try rig.mixer.inserts.setValue("mono", position: 1, symbol: "gain", 71) }
        == "Simple amplifier gain must be from -70 to 70 (got 71)")
    #expect(refusal { try rig.mixer.inserts.setValue("mono", position: 1, symbol: "volume", 1) }.contains("its controls: gain"))
    #expect(refusal { try rig.mixer.inserts.remove("mono", position: 2) } == "insert position must be 1 to 1 on 'mono' (got 2)")
    #expect(try rig.mixer.inserts.list(of: "mono").count == 1)
  }
}
