import Foundation
import StemdeckAudioFile
import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import Testing

@Suite struct MuteSoloTests {
  /// Three mono DC stems hard left at 0.1, 0.2 and 0.4, so every combination has its own level.
  static func rig(in folder: TemporaryFolder) throws -> MixerRig {
    let rig = MixerRig()
    for (name, level) in [("a", Float(0.1)), ("b", 0.2), ("c", 0.4)] {
      try writeAudio(folder.file("\(name).wav"), format: .wavFloat, channels: [Signal.constant(level, frames: 240_000)])
      try rig.mixer.stems.add(path: folder.file("\(name).wav"), settings: stem(name, "\(name).wav") { $0.pan = -1 })
    }
    return rig
  }

  /// Renders long enough for every gain ramp to finish; returns the settled left level.
  static func level(_ rig: MixerRig) -> Float {
    let out = rig.render(1024)
    let tail = out.left[600...]
    #expect(tail.allSatisfy { $0 == tail.first! }, "level not settled")
    #expect(out.right.allSatisfy { abs($0) < 1e-7 }, "hard left leaks to the right")
    // The largest change here is 0.5 (a and c together), spread over a 480-frame ramp.
    #expect(maxStep(out.left) <= 0.5 / 450, "a gain change was not smoothed")
    return tail.first!
  }

  @Test("solo silences the others, mute silences, unmute and unsolo bring stems back")
  func muteAndSolo() throws {
    let folder = try TemporaryFolder()
    let rig = try Self.rig(in: folder)
    try rig.mixer.transport.play()
    func expectLevel(_ expected: Float, _ what: String) {
      let got = Self.level(rig)
      #expect(abs(got - expected) < 1e-6, "\(what): level \(got), expected \(expected)")
    }
    expectLevel(0.7, "all three")
    try rig.mixer.strips.setSolo("b", true)
    expectLevel(0.2, "b soloed")
    try rig.mixer.strips.setMute("a", true)
    expectLevel(0.2, "b soloed, a muted")
    try rig.mixer.strips.setSolo("c", true)
    expectLevel(0.6, "b and c soloed")
    try rig.mixer.strips.setMute("c", true)
    expectLevel(0.2, "b and c soloed, c muted (mute wins)")
    try rig.mixer.strips.setSolo("b", false)
    try rig.mixer.strips.setSolo("c", false)
    expectLevel(0.2, "no solo, a and c muted")
    try rig.mixer.strips.setMute("a", false)
    expectLevel(0.3, "a unmuted")
    try rig.mixer.strips.setMute("c", false)
    expectLevel(0.7, "all unmuted")
    // Volume changes while muted are kept for the unmute.
    try rig.mixer.strips.setMute("c", true)
    try rig.mixer.strips.setVolume("c", 0.5)
    expectLevel(0.3, "c muted with a new volume")
    try rig.mixer.strips.setMute("c", false)
    expectLevel(0.5, "c back at half volume")
    let statuses = rig.mixer.stems.statuses()
    #expect(statuses.map(\.settings.mute) == [false, false, false])
    #expect(statuses.map(\.settings.solo) == [false, false, false])
  }

  @Test("removing a soloed stem brings the others back; removed stems are freed")
  func removeSoloed() throws {
    let folder = try TemporaryFolder()
    let rig = try Self.rig(in: folder)
    try rig.mixer.transport.play()
    try rig.mixer.strips.setSolo("c", true)
    #expect(abs(Self.level(rig) - 0.4) < 1e-6)
    try rig.mixer.stems.remove("c")
    #expect(rig.mixer.stems.names == ["a", "b"])
    #expect(abs(Self.level(rig) - 0.3) < 1e-6)
    _ = rig.mixer.pump()
    #expect(!rig.mixer.engine.hasPendingRemovals)
    // The name is free again.
    try rig.mixer.stems.add(
      path: folder.file("c.wav"),
      settings: stem("c", "c.wav") {
        $0.pan = -1; $0.solo = true
      })
    let out = rig.render(20000)
    // A stem added while playing joins 0.3 s (14400 frames) later, sample-aligned; the solo
    // silences the others at once.
    #expect(out.left[600..<14400].allSatisfy { $0 == 0 })
    #expect(out.left[14400...].allSatisfy { abs($0 - 0.4) < 1e-7 }, "c joins at frame 14400")
  }
}
