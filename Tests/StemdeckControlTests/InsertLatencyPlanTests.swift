import Foundation
import StemdeckSession
import StemdeckTestSupport
import Testing

@testable import StemdeckControl

/// The latency plan is made again only when something it reads changes (a rack, a route, a bus,
/// the set of strips, a plugin's reported latency), not at every pump; and what it gives (the
/// strips' delays, the mix's latency that the JACK ports report) follows every such change.
@Suite struct InsertLatencyPlanTests {
  @Test("pumps plan again only after a route, a bus, a strip, an insert or a reported latency changed, and the delays follow")
  func incremental() throws {
    let folder = try TemporaryFolder()
    let rig = MixerRig()
    for name in ["a", "b"] {
      let path = folder.file("\(name).wav")
      try writeAudio(path, format: .wavFloat, channels: [Signal.noise(frames: 48_000, amplitude: 0.25, seed: 7)])
      try rig.mixer.stems.add(path: path, settings: stem(name, path))
    }
    try rig.mixer.inserts.add("a", plugin: InsertRenderTests.delay)
    try rig.mixer.inserts.setValue("a", position: 1, symbol: "delay", 100)
    try rig.mixer.transport.play()
    /// Renders a little and pumps; returns how many plans that made.
    func pumpPlans() -> Int {
      let before = rig.mixer.lock.locked { rig.mixer.insertRacks.plansMade }
      _ = rig.render(512)
      _ = rig.mixer.pump()
      return rig.mixer.lock.locked { rig.mixer.insertRacks.plansMade } - before
    }
    #expect(pumpPlans() == 1, "nodelay's new latency (100) read after a run")
    #expect(try rig.mixer.inserts.compensationDelay(of: "b") == 100 && rig.mixer.inserts.latency == 100)
    #expect((0..<5).map { _ in pumpPlans() } == [0, 0, 0, 0, 0], "nothing changed: no plan")
    try rig.mixer.strips.set(.volume, of: "b", to: 0.5)
    #expect(pumpPlans() == 0, "a volume is not in the plan")
    // b through a new bus: the bus now waits for a, b does not.
    try rig.mixer.buses.add(BusSettings(name: "grp"))
    try rig.mixer.buses.route("b", to: "grp")
    #expect(pumpPlans() == 1)
    #expect(try [rig.mixer.inserts.compensationDelay(of: "b"), rig.mixer.inserts.compensationDelay(of: "grp")] == [0, 100])
    #expect(pumpPlans() == 0)
    // The latent stem removed: nothing waits, the mix has no latency (the JACK ports say 0).
    try rig.mixer.stems.remove("a")
    #expect(pumpPlans() == 1)
    #expect(try rig.mixer.inserts.compensationDelay(of: "grp") == 0 && rig.mixer.inserts.latency == 0)
    // A reported latency moving with a control: planned again at the next pump.
    try rig.mixer.inserts.add("master", plugin: InsertRenderTests.delay)
    try rig.mixer.inserts.setValue("master", position: 1, symbol: "delay", 32)
    _ = pumpPlans()
    #expect(rig.mixer.inserts.latency == 32)
    try rig.mixer.inserts.setValue("master", position: 1, symbol: "delay", 48)
    #expect(pumpPlans() == 1 && rig.mixer.inserts.latency == 48)
    #expect(pumpPlans() == 0)
  }
}
