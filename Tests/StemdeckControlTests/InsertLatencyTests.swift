import Foundation
import StemdeckControl
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
    #expect(try ["a", "b", "c", "grp"].map { try rig.mixer.compensationDelay(of: $0) } == [0, 100, 130, 0])
    #expect(rig.mixer.insertLatency == 130)
    #expect(try rig.mixer.inserts(of: "a").map(\.latency) == [100])
    try rig.mixer.play()
    let live = rig.render(offline.left.count, block: 128)
    let at = firstMismatch(live.left[...], offline.left[...])
    #expect(at == nil && firstMismatch(live.right[...], offline.right[...]) == nil, "live ≠ offline from frame \(String(describing: at))")
    // Bypassing a's insert takes its latency out: b no longer waits for it, c waits for the bus only.
    try rig.mixer.bypassInsert("a", position: 1, true)
    #expect(try ["a", "b", "c", "grp"].map { try rig.mixer.compensationDelay(of: $0) } == [0, 0, 30, 0])
    #expect(rig.mixer.insertLatency == 30)
  }
}
