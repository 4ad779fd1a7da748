// Issue 16, item 11 and its edge: a group that fails while a glide is in flight. The group is
// all or nothing, so the glide must run on exactly as if the group had never been typed: the
// same settings, and the same samples out of the renderer.
import Foundation
@testable import StemdeckConsole
import StemdeckControl
import StemdeckEngine
import StemdeckSession
import StemdeckTestSupport
import Testing
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

@Suite("Groups and glides in flight (issue 16)")
struct GroupGlideTests {
  /// Renders `blocks` blocks of 512 frames and returns the master's left and right samples.
  static func render(_ h: ConsoleHarness, blocks: Int) -> [Float] {
    var out: [Float] = []
    let left = UnsafeMutablePointer<Float>.allocate(capacity: 512)
    let right = UnsafeMutablePointer<Float>.allocate(capacity: 512)
    defer { left.deallocate(); right.deallocate() }
    for _ in 0..<blocks {
      h.mixer.engine.fillStreams()
      renderBlock(h.mixer.renderState, left: left, right: right, frameCount: 512)
      for i in 0..<512 { out.append(left[i]); out.append(right[i]) }
    }
    return out
  }

  static let failingGroups = [
    "at 0:00.4 { vol drums 0.9; pan drums 7 }",  // lands later
    "begin; vol drums 0.9; glide cancel drums; solo nosuch; commit",  // lands now
    "at 0:00.1 { vol drums 0.1 over 0.1; rate drums 1.5 over 1s; pan drums 9 }",  // in the past: now
    "at 0:00.2 { glide cancel drums; vol bass 0.2; mute nosuch }"
  ]

  @Test(
    "a failing group during 'vol drums 0.5 over 1s' (and a rate glide): same settings and the same samples as without it",
    arguments: failingGroups)
  func failingGroupLeavesTheGlide(group: String) throws {
    let reference = try ConsoleHarness.withStems()
    let tested = try ConsoleHarness.withStems()
    defer { reference.shutdown(); tested.shutdown() }
    for h in [reference, tested] {
      #expect(h.run("play; vol drums 0.2 over 1s; rate bass 0.8 over 0.6s").ok)
    }
    var expected = Self.render(reference, blocks: 12)
    var got = Self.render(tested, blocks: 12)
    let before = MixerSnapshot(tested)
    let result = tested.run(group)
    #expect(!result.ok)
    #expect(result.output.last?.hasPrefix("error: nothing changed: the group is all or nothing") == true, "\(result.output)")
    #expect(MixerSnapshot(tested) == before, "settings changed by a failed group")
    // Past the group's landing time and the glides' ends (1 s = 94 blocks).
    expected += Self.render(reference, blocks: 110)
    got += Self.render(tested, blocks: 110)
    let worst = zip(expected, got).reduce(Float(0)) { max($0, abs($1.0 - $1.1)) }
    let first = zip(expected, got).enumerated().first { abs($0.element.0 - $0.element.1) > 0 }?.offset
    #expect(worst == 0, "output differs from the glide alone by up to \(worst), from frame \((first ?? 0) / 2)")
    // (Each harness has its own folder: the settings and state are compared, not the paths.)
    #expect(MixerSnapshot(tested).description == MixerSnapshot(reference).description)
  }

  /// The renderer holds at most 1,024 grouped commands waiting for their frame; one more used to
  /// be applied at once, off the group's frame and past its all-or-nothing promise.
  @Test("a group that would overflow the renderer's schedule is refused whole; the groups already waiting still land")
  func groupTooLargeForTheSchedule() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("play").ok)
    _ = Self.render(h, blocks: 2)
    // Each change differs from the one before (an unchanged value sends nothing).
    func group(_ count: Int, volume: Double, at time: String) -> String {
      "at \(time) { " + (0..<count).map { i in "vol drums \(i == count - 1 ? volume : i % 2 == 0 ? 0.3 : 0.4)" }.joined(separator: "; ")
        + " }"
    }
    func drums() -> Double? { h.mixer.stems.statuses().first { $0.settings.name == "drums" }?.settings.volume }
    let before = MixerSnapshot(h)
    let tooMany = h.run(group(1100, volume: 0.5, at: "0:01"))
    #expect(!tooMany.ok)
    #expect(
      tooMany.output.last?.contains("nothing changed: the group is all or nothing") == true
        && tooMany.output.last?.contains("at most 1024 at once") == true, "\(tooMany.output)")
    #expect(MixerSnapshot(h) == before)
    // Two groups waiting at once: the second would not fit beside the first, so it is refused
    // whole and the first still lands on its frame.
    #expect(h.run(group(600, volume: 0.7, at: "0:00.5")).ok)
    let second = h.run(group(600, volume: 0.2, at: "0:00.6"))
    #expect(!second.ok && second.output.last?.contains("are already held") == true, "\(second.output)")
    _ = Self.render(h, blocks: 60)  // past 0:00.6 (56 blocks of 512)
    #expect(drums() == 0.7)
    // Landed, they left the schedule: a group of 1,000 fits again.
    #expect(h.run(group(1000, volume: 0.9, at: "0:01")).ok)
    _ = Self.render(h, blocks: 40)
    #expect(drums() == 0.9)
  }

  @Test("a group that succeeds during a glide still lands (the abort path is only for failures)")
  func succeedingGroupLands() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("play; vol drums 0.2 over 1s").ok)
    _ = Self.render(h, blocks: 12)
    #expect(h.run("begin; vol drums 0.9; pan drums 0.5; commit").ok)
    _ = Self.render(h, blocks: 4)
    let drums = h.mixer.stems.statuses().first { $0.settings.name == "drums" }
    #expect(drums?.settings.volume == 0.9 && drums?.settings.pan == 0.5)
    #expect(drums?.glidingVolume == nil, "the plain change should have ended the glide")
  }
}
