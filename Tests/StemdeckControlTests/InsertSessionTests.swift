import Foundation
import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import Testing

/// Inserts in sessions: saved and reopened identical, rendered offline as live, and a plugin
/// that is not installed kept as a pass-through placeholder and written back unchanged.
@Suite struct InsertSessionTests {
  @Test("a session's inserts render offline as live, and save → open → save is byte-identical")
  func saveReopenRender() throws {
    let folder = try TemporaryFolder()
    let frames = 9_600
    let (rig, left, right) = try InsertRenderTests.rig(folder, frames: frames)
    try rig.mixer.inserts.add("noise", plugin: InsertRenderTests.amp)
    try rig.mixer.inserts.setValue("noise", position: 1, symbol: "gain", -20)
    try rig.mixer.inserts.add("noise", plugin: InsertRenderTests.amp)
    try rig.mixer.inserts.bypass("noise", position: 2, true)
    try rig.mixer.inserts.add("master", plugin: InsertRenderTests.delay)
    try rig.mixer.inserts.setValue("master", position: 1, symbol: "report_latency", 0)
    try rig.mixer.inserts.setValue("master", position: 1, symbol: "delay", 37)
    let sessionPath = folder.file("session.stemdeck")
    let saved = rig.mixer.session(savingTo: sessionPath)
    let text = SessionFile.encode(saved)
    #expect(text.contains("\"inserts\" : [ { \"uri\" : \"http://plugin.org.uk/swh-plugins/amp\", \"values\" : { \"gain\" : -20 } }, "))
    #expect(text.contains("\"bypass\" : true"))
    let reopened = try SessionFile.decode(Data(text.utf8), source: sessionPath)
    #expect(reopened.stems.first?.strip.inserts == saved.stems.first?.strip.inserts)
    #expect(reopened.masterInserts == saved.masterInserts && saved.masterInserts.count == 1)
    let other = MixerRig()
    _ = try other.mixer.load(reopened, sessionPath: sessionPath)
    #expect(SessionFile.encode(other.mixer.session(savingTo: sessionPath)) == text, "save → open → save changed the file")
    // Offline render of the saved session: the stem × 0.1, 37 frames late (nodelay is primed
    // with its saved delay when instantiated), as the reopened session plays it live.
    let (_, offline) = try renderOffline(reopened, in: folder, duration: Double(frames) / 48000, blockFrames: 512)
    try other.mixer.transport.play()
    let live = other.render(frames, block: 512)
    let g = powf(10, Float(-20) * 0.05)
    let settled = 37..<frames
    let wantL = left[(settled.lowerBound - 37)..<(frames - 37)].map { $0 * g }
    let wantR = right[(settled.lowerBound - 37)..<(frames - 37)].map { $0 * g }
    #expect(firstMismatch(offline.left[settled], wantL[...]) == nil && firstMismatch(offline.right[settled], wantR[...]) == nil, "offline")
    let at = firstMismatch(live.left[...], offline.left[...])
    #expect(at == nil && firstMismatch(live.right[...], offline.right[...]) == nil, "live ≠ offline from frame \(String(describing: at))")
  }

  @Test("a missing plugin opens as a placeholder: reported once, passes audio through, saved back unchanged")
  func missingPlaceholder() throws {
    let folder = try TemporaryFolder()
    let frames = 4_800
    let left = Signal.noise(frames: frames, amplitude: 0.5, seed: 1)
    let right = Signal.noise(frames: frames, amplitude: 0.5, seed: 2)
    let path = folder.file("noise.wav")
    try writeAudio(path, format: .wavFloat, channels: [left, right])
    let missing = "urn:stemdeck:test:no-such-plugin"
    let sessionPath = folder.file("session.stemdeck")
    var session = Session()
    var s = stem("noise", "noise.wav")
    s.strip.inserts = [
      InsertSettings(
        uri: missing, bypass: true, values: [InsertValue(symbol: "zeta", value: 2.5), InsertValue(symbol: "alpha", value: -1)]),
      InsertSettings(uri: missing)
    ]
    session.stems = [s]
    session.masterInserts = [InsertSettings(uri: missing)]
    let text = SessionFile.encode(session)
    let rig = MixerRig()
    let warnings = try rig.mixer.load(try SessionFile.decode(Data(text.utf8), source: sessionPath), sessionPath: sessionPath)
    let placeholderWarnings = warnings.filter { $0.detail.contains("placeholder") }
    #expect(placeholderWarnings.count == 1, "warnings: \(warnings)")
    #expect(placeholderWarnings.first?.detail.contains("<\(missing)> is not installed") == true)
    #expect(try rig.mixer.inserts.list(of: "noise").map(\.name) == [nil, nil])
    try rig.mixer.transport.play()
    let out = rig.render(frames)
    #expect(
      firstMismatch(out.left[...], left[...]) == nil && firstMismatch(out.right[...], right[...]) == nil, "a placeholder changed the audio")
    #expect(
      SessionFile.encode(rig.mixer.session(savingTo: sessionPath)).contains(
        "\"inserts\" : [ { \"uri\" : \"\(missing)\", \"bypass\" : true, \"values\" : { \"zeta\" : 2.5, \"alpha\" : -1 } }, { \"uri\" : \"\(missing)\", \"values\" : {} } ]"
      ))
    var expected = session
    expected.position = 0.1
    #expect(SessionFile.encode(rig.mixer.session(savingTo: sessionPath)) == SessionFile.encode(expected), "saving changed the session")
  }
}
