import Foundation
import StemdeckControl
import StemdeckEngine
import StemdeckSession
import StemdeckTestSupport
import Testing

/// Latency compensation between strips, to the sample: x42's `nodelay` delays by whole samples
/// and reports the delay as its latency (`lv2:reportsLatency`), so a strip with it and a strip
/// without must still meet at the master on the same frame.
@Suite struct InsertLatencyTests {
  /// Three mono stems, each one impulse at frame 1000 (0.5, 0.25, 0.125): `a` with a 100-frame
  /// nodelay, through bus `grp` (with a 30-frame nodelay) with `b`; `c` straight to the master.
  static func session(_ folder: TemporaryFolder) throws -> Session {
    var session = Session()
    for (name, amplitude) in [("a", Float(0.5)), ("b", 0.25), ("c", 0.125)] {
      var samples = [Float](repeating: 0, count: 4800)
      samples[1000] = amplitude
      try writeAudio(folder.file("\(name).wav"), format: .wavFloat, channels: [samples])
      session.stems.append(stem(name, "\(name).wav") { s in s.bus = name == "c" ? nil : "grp" })
    }
    let nodelay = { (frames: Double) in
      InsertSettings(uri: InsertRenderTests.delay, values: [InsertValue(symbol: "delay", value: frames)])
    }
    session.stems[0].strip.inserts = [nodelay(100)]
    var bus = BusSettings(name: "grp")
    bus.strip.inserts = [nodelay(30)]
    session.buses = [bus]
    return session
  }

  /// The frames where a channel is not silent.
  static func sounding(_ samples: [Float]) -> [Int] { samples.indices.filter { samples[$0] != 0 } }

  @Test("impulses on strips with and without latency meet at the master on one frame, offline and live alike")
  func impulsesAligned() throws {
    let folder = try TemporaryFolder()
    let session = try Self.session(folder)
    let (_, offline) = try renderOffline(session, in: folder, duration: 0.1, blockFrames: 256)
    // a: 100 (its own) + 30 (the bus); b: delayed 100 to meet a at the bus; c: delayed 130.
    #expect(Self.sounding(offline.left) == [1130] && Self.sounding(offline.right) == [1130], "offline: \(Self.sounding(offline.left))")
    let rig = MixerRig()
    _ = try rig.mixer.load(session, sessionPath: folder.file("session.stemdeck"))
    #expect(try ["a", "b", "c", "grp"].map { try rig.mixer.inserts.compensationDelay(of: $0) } == [0, 100, 130, 0])
    #expect(rig.mixer.inserts.latency == 130)
    #expect(try rig.mixer.inserts.list(of: "a").map(\.latency) == [100])
    try rig.mixer.transport.play()
    let live = rig.render(offline.left.count, block: 128)
    let at = firstMismatch(live.left[...], offline.left[...])
    #expect(at == nil && firstMismatch(live.right[...], offline.right[...]) == nil, "live ≠ offline from frame \(String(describing: at))")
    // Bypassing a's insert takes its latency out: b no longer waits for it, c waits for the bus only.
    try rig.mixer.inserts.bypass("a", position: 1, true)
    #expect(try ["a", "b", "c", "grp"].map { try rig.mixer.inserts.compensationDelay(of: $0) } == [0, 0, 30, 0])
    #expect(rig.mixer.inserts.latency == 30)
  }
}

/// A change of the latency plan while playing keeps the compensated strips' audio running: the
/// delay line a strip's new chain gets takes over what the old one held (InsertDelay.swift).
@Suite struct InsertDelayCarryTests {
  /// The delay of each frame of `out` behind `source`, in segments: where a segment starts and
  /// its delay (0…400 frames); or the first frame that equals no frame of `source` that far
  /// back (a silent or foreign sample). Noise makes every match unambiguous. A segment may
  /// begin with the crossfade a longer delay takes over with (`jumpFadeFrames`):
  /// frame j of it is the old delay's sample moved toward the new one's by (j + 1) / (fade + 1).
  static func delays(_ out: [Float], behind source: [Float]) -> (segments: [(frame: Int, delay: Int, faded: Bool)], unexplained: Int?) {
    var segments: [(frame: Int, delay: Int, faded: Bool)] = []
    var delay = -1
    var skipTo = 0
    let fade = jumpFadeFrames
    func explains(_ d: Int, at t: Int) -> Bool {
      (0..<4).allSatisfy { t + $0 >= out.count || t + $0 - d >= 0 && out[t + $0] == source[t + $0 - d] }
    }
    func crossfade(from old: Int, to new: Int, at t: Int) -> Bool {
      (0..<fade).allSatisfy { j in
        guard t + j < out.count else { return true }
        guard t + j - new >= 0, t + j - old >= 0 else { return false }
        let w = Float(j + 1) / Float(fade + 1)
        let a = source[t + j - old], b = source[t + j - new]
        return abs(out[t + j] - (a + w * (b - a))) <= 1e-6
      }
    }
    for t in out.indices where t >= skipTo {
      if delay >= 0, t - delay >= 0, out[t] == source[t - delay] { continue }
      if let d = (0...min(400, t)).first(where: { explains($0, at: t) }) {
        delay = d
        segments.append((t, d, false))
      } else if delay >= 0, let d = (delay + 1...400).first(where: { explains($0, at: t + fade) && crossfade(from: delay, to: $0, at: t) })
      {
        delay = d
        segments.append((t, d, true))
        skipTo = t + fade
      } else {
        return (segments, t)
      }
    }
    return (segments, nil)
  }

  @Test(
    "a latent insert added, changed and removed while playing: the other strip's audio never stops (in flight carried over, a longer delay repeats instead of going silent)"
  )
  func continuousAcrossPlanChanges() throws {
    let folder = try TemporaryFolder()
    let frames = 12_000
    // Stem a on the left only, b on the right only: the right channel is b alone.
    let x = Signal.noise(frames: frames, amplitude: 0.5, seed: 139)
    let silence = [Float](repeating: 0, count: frames)
    try writeAudio(folder.file("a.wav"), format: .wavFloat, channels: [Signal.noise(frames: frames, amplitude: 0.5, seed: 140), silence])
    try writeAudio(folder.file("b.wav"), format: .wavFloat, channels: [silence, x])
    let rig = MixerRig()
    try rig.mixer.stems.add(path: folder.file("a.wav"), settings: stem("a", folder.file("a.wav")))
    try rig.mixer.stems.add(path: folder.file("b.wav"), settings: stem("b", folder.file("b.wav")))
    // b through swh's amp at -20 dB (exact: input × powf(10, -1)), so b has a chain of its own.
    try rig.mixer.inserts.add("b", plugin: InsertRenderTests.amp)
    try rig.mixer.inserts.setValue("b", position: 1, symbol: "gain", -20)
    let y = x.map { $0 * powf(10, Float(-20) * 0.05) }
    try rig.mixer.transport.play()
    var right = rig.render(2048).right
    // x42's nodelay on a, set to 100 frames: it reports 100 after a run; the pump plans b's delay.
    try rig.mixer.inserts.add("a", plugin: InsertRenderTests.delay)
    try rig.mixer.inserts.setValue("a", position: 1, symbol: "delay", 100)
    right += rig.render(1024).right
    _ = rig.mixer.pump()
    #expect(try rig.mixer.inserts.compensationDelay(of: "b") == 100)
    let grew = rig.rendered  // 3072: the new chain is installed at the start of the next block
    right += rig.render(2048).right
    // A second (unity) amp on b: b's chain is sent again with the same delay, its line carried.
    try rig.mixer.inserts.add("b", plugin: InsertRenderTests.amp)
    right += rig.render(1024).right
    // nodelay to 150: b's delay grows by 50 with 100 frames in flight.
    try rig.mixer.inserts.setValue("a", position: 1, symbol: "delay", 150)
    right += rig.render(1024).right
    _ = rig.mixer.pump()
    #expect(try rig.mixer.inserts.compensationDelay(of: "b") == 150)
    let grewAgain = rig.rendered
    right += rig.render(2048).right
    // nodelay removed: b's delay goes back to 0, skipping what was in flight.
    try rig.mixer.inserts.remove("a", position: 1)
    #expect(try rig.mixer.inserts.compensationDelay(of: "b") == 0)
    let shrank = rig.rendered
    right += rig.render(1024).right
    let (segments, unexplained) = Self.delays(right, behind: y)
    #expect(
      unexplained == nil,
      "b's channel is not b's audio from frame \(unexplained ?? 0) (\(right[(unexplained ?? 0)...].prefix(4))…): a gap of silence")
    // A longer delay plays on at the old one until its line is full, then crossfades to the full
    // delay (repeating the difference once).
    let want = [(0, 0, false), (grew + 100, 100, true), (grewAgain + 150, 150, true), (shrank, 0, false)]
    #expect(
      segments.map(\.frame) == want.map(\.0) && segments.map(\.delay) == want.map(\.1) && segments.map(\.faded) == want.map(\.2),
      "segments: \(segments)")
  }
}
