import Foundation
import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import Testing

/// LV2 presets of an insert, through lilv: saved as a preset bundle (what `insert preset … save`
/// writes to ~/.lv2; here a temporary folder), listed, and loaded back into the running insert.
/// None of the Debian plugins the tests install ships a preset that holds only control values
/// and fits a strip (x42's presets are for plugins with atom ports or the worker), so the
/// preset is made here, with swh's amp.
@Suite struct InsertPresetTests {
  @Test("a saved preset is listed and loading it sets the insert's controls: the stem comes out scaled by the preset's gain")
  func saveListLoad() throws {
    let folder = try TemporaryFolder()
    let (rig, left, _) = try InsertRenderTests.rig(folder, frames: 4800)
    try rig.mixer.inserts.add("noise", plugin: InsertRenderTests.amp)
    try rig.mixer.inserts.setValue("noise", position: 1, symbol: "gain", -12)
    let bundle = try rig.mixer.inserts.savePreset("noise", position: 1, label: "Quiet twelve", directory: folder.path)
    #expect(
      FileManager.default.fileExists(atPath: bundle + "/Quiet_twelve.ttl")
        && FileManager.default.fileExists(atPath: bundle + "/manifest.ttl"))
    #expect(try rig.mixer.inserts.presets(of: "noise", position: 1).contains { $0.label == "Quiet twelve" })
    try rig.mixer.inserts.setValue("noise", position: 1, symbol: "gain", 0)
    #expect(try rig.mixer.inserts.loadPreset("noise", position: 1, preset: "quiet TWELVE") == "Quiet twelve")
    #expect(try rig.mixer.inserts.list(of: "noise").first?.values["gain"] == -12)
    try rig.mixer.transport.play()
    let out = rig.render(4800)
    let g = powf(10, Float(-12) * 0.05)
    #expect(firstMismatch(out.left[...], left.map { $0 * g }[...]) == nil, "left is not input × \(g)")
    do {
      try rig.mixer.inserts.loadPreset("noise", position: 1, preset: "no such preset")
      Issue.record("an unknown preset was accepted")
    } catch { #expect(error.detail.contains("has no preset 'no such preset' (its presets: ")) }
  }
}
