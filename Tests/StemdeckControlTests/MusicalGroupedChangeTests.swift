import Foundation
import StemdeckAudioFile
import StemdeckControl
import StemdeckEngine
import StemdeckSession
import StemdeckTestSupport
import Testing

// One topic of MusicalTests (the suite and its helpers: MusicalSupport.swift).
extension MusicalTests {
  // MARK: - 2. Grouped changes

  /// Two mono DC stems at volume 1, `a` hard left and `b` hard right.
  static func twoSides(_ folder: TemporaryFolder, frames: Int = 48000) throws -> MixerRig {
    let path = try Musical.mono(folder, "dc.wav", Signal.constant(1, frames: frames))
    let rig = MixerRig()
    try rig.mixer.stems.add(path: path, settings: stem("a", path) { $0.pan = -1 })
    try rig.mixer.stems.add(path: path, settings: stem("b", path) { $0.pan = 1 })
    return rig
  }

  /// Checks both channels hold 1 before `frame` and ramp (10 ms, 480 frames) from exactly
  /// `frame`: left 1 → 0, right 1 → 0.5.
  static func expectLanding(_ out: Stereo, at frame: Int, _ label: String) {
    let firstL = Musical.firstChange(out.left), firstR = Musical.firstChange(out.right)
    #expect(
      out.left[..<frame].allSatisfy { $0 == 1 } && out.right[..<frame].allSatisfy { $0 == 1 },
      "\(label): changed before frame \(frame) (first changes \(firstL ?? -1), \(firstR ?? -1))")
    #expect(firstL == firstR, "\(label): left first changes at \(firstL ?? -1), right at \(firstR ?? -1)")
    #expect(firstL == frame || firstL == frame + 1, "\(label): left first changes at \(firstL ?? -1), want \(frame)")
    let dl = Musical.deviation(out.left, at: frame, over: 0...480) { 1 - Double($0) / 480 }
    let dr = Musical.deviation(out.right, at: frame, over: 0...480) { 1 - 0.5 * Double($0) / 480 }
    #expect(dl < 1e-4 && dr < 1e-4, "\(label): ramps not starting at frame \(frame): off by \(dl), \(dr)")
    #expect(abs(out.left[frame + 600]) < 1e-6 && out.right[frame + 600] == 0.5, "\(label): end values")
  }

  @Test(
    "a group at 0.25 s lands on frame 12000 in both channels, whatever the block size",
    arguments: [256, 1000, 4096, 777], ["volume", "mute"])
  func groupLandsOnOneFrame(block: Int, how: String) throws {
    let folder = try TemporaryFolder()
    let rig = try Self.twoSides(folder)
    try rig.mixer.transport.play()
    try rig.mixer.beginGroup(atSeconds: 0.25)
    if how == "mute" { try rig.mixer.strips.setMute("a", true) } else { try rig.mixer.strips.setVolume("a", 0) }
    try rig.mixer.strips.setVolume("b", 0.5)
    try rig.mixer.endGroup()
    let out = rig.render(16000, block: block)
    Self.expectLanding(out, at: 12000, "block \(block), \(how)")
  }

  @Test("a group sent while playing, at a later time, lands on its frame", arguments: [256, 4096])
  func groupWhilePlaying(block: Int) throws {
    let folder = try TemporaryFolder()
    let rig = try Self.twoSides(folder)
    try rig.mixer.transport.play()
    var out = rig.render(5000, block: block)
    try rig.mixer.beginGroup(atSeconds: 0.2)
    try rig.mixer.strips.setVolume("a", 0)
    try rig.mixer.strips.setVolume("b", 0.5)
    try rig.mixer.endGroup()
    out.append(rig.render(11000, block: block))
    Self.expectLanding(out, at: 9600, "block \(block)")
  }

  @Test("beginGroup(atSeconds: nil) lands at the start of the next block, same frame on both stems")
  func groupAtNextPass() throws {
    let folder = try TemporaryFolder()
    let rig = try Self.twoSides(folder)
    try rig.mixer.transport.play()
    var out = rig.render(1000, block: 500)
    try rig.mixer.beginGroup(atSeconds: nil)
    try rig.mixer.strips.setVolume("a", 0)
    try rig.mixer.strips.setVolume("b", 0.5)
    try rig.mixer.endGroup()
    out.append(rig.render(2000, block: 500))
    Self.expectLanding(out, at: 1000, "next pass")
  }

  /// The renderer splits a pass at a due change only when `state.playing` is already true when
  /// the pass starts. The first pass after `play` from a stopped transport begins while still
  /// holding (it becomes playing inside `renderPass`), so it is not split: a group due inside
  /// the first block lands at the end of that block instead of on its frame.
  @Test(
    "a group due inside the first block after play still lands on its frame",
    arguments: [256, 4096])
  func groupInFirstBlock(block: Int) throws {
    let folder = try TemporaryFolder()
    let rig = try Self.twoSides(folder)
    try rig.mixer.beginGroup(atSeconds: 0.004)  // frame 192
    try rig.mixer.strips.setVolume("a", 0)
    try rig.mixer.strips.setVolume("b", 0.5)
    try rig.mixer.endGroup()
    try rig.mixer.transport.play()
    let out = rig.render(8192, block: block)
    Self.expectLanding(out, at: 192, "block \(block)")
  }
}
