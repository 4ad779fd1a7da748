import Foundation
import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import Testing

/// Plugins' own state (the LV2 state extension) in sessions: x42's convoLV2 keeps its impulse
/// response's path there; the file is kept beside the session, and the session's folder can move.
@Suite struct InsertStateTests {
  /// Stops (rendering while its fade-out ends), seeks to 2 s, plays, and renders 4096 + 4096
  /// frames; returns the last 4096 and the transport frame they start at.
  static func renderFromTwoSeconds(_ rig: MixerRig) throws -> ([Float], [Float], Int) {
    try rig.mixer.transport.stop()
    _ = rig.render(1024, block: 256)
    try rig.mixer.transport.seek(toSeconds: 2)
    try rig.mixer.transport.play()
    _ = rig.render(4096, block: 256)
    let out = rig.render(4096, block: 256)
    return (out.left, out.right, Int((rig.mixer.transport.position * 48000).rounded()) - 4096)
  }

  @Test(
    "convoLV2's state is saved with the session, its impulse response copied beside it; reopened after the folder moved, it sounds the same"
  )
  func roundTrip() throws {
    let sessionFolder = try TemporaryFolder()
    let elsewhere = try TemporaryFolder()
    // The plugins' work runs at once (offline, as `render` does): convoLV2 rebuilds its
    // convolver when a pass is shorter than its block (play splits one), and the two mixers
    // then do so at the same frames.
    let (rig, input) = try InsertConvolutionTests.rig(sessionFolder, pluginWork: .synchronous)
    let ir = elsewhere.file("room.wav")
    try InsertConvolutionTests.impulse(ir)
    try rig.mixer.inserts.add("master", plugin: InsertConvolutionTests.convolver)
    try rig.mixer.transport.play()
    _ = rig.render(1024, block: 256)
    try InsertConvolutionTests.load(rig, ir)
    let before = try Self.renderFromTwoSeconds(rig)
    #expect(InsertConvolutionTests.convolutionError(before.0, input, start: before.2, from: 0) < 1e-6, "before saving")

    let sessionPath = sessionFolder.file("show.stemdeck")
    // Compared, not written (`diff`, the unsaved-changes checks): the session names where the
    // copy goes, and nothing on disk changes.
    let compared = SessionFile.encode(rig.mixer.session(savingTo: sessionPath))
    #expect(!FileManager.default.fileExists(atPath: sessionFolder.file("show-files")), "a comparison copied a file")
    let text = SessionFile.encode(rig.mixer.session(savingTo: sessionPath, copyingFiles: true))
    #expect(compared == text, "the comparison and the save name the file differently")
    try Data(text.utf8).write(to: URL(fileURLWithPath: sessionPath))
    let kept = sessionFolder.file("show-files/room.wav")
    #expect(FileManager.default.contentsEqual(atPath: kept, andPath: ir), "the impulse response is not kept beside the session")
    #expect(text.contains("\"type\" : \"http://lv2plug.in/ns/ext/atom#Path\", \"flags\" : 3, \"text\" : \"show-files/room.wav\""))
    // Saving again reuses the copy (same content) rather than making another.
    _ = rig.mixer.session(savingTo: sessionPath, copyingFiles: true)
    #expect(try FileManager.default.contentsOfDirectory(atPath: sessionFolder.file("show-files")) == ["room.wav"])

    // The session's folder moves; the original impulse response is gone.
    try FileManager.default.removeItem(atPath: ir)
    let moved = elsewhere.file("moved")
    try FileManager.default.moveItem(atPath: sessionFolder.path, toPath: moved)
    defer { try? FileManager.default.moveItem(atPath: moved, toPath: sessionFolder.path) }
    let movedPath = moved + "/show.stemdeck"
    let reopened = try SessionFile.decode(Data(contentsOf: URL(fileURLWithPath: movedPath)), source: movedPath)
    let other = MixerRig(maxBlockFrames: 256, pluginWork: .synchronous)
    let warnings = try other.mixer.load(reopened, sessionPath: movedPath)
    #expect(warnings.isEmpty, "warnings: \(warnings)")
    #expect(SessionFile.encode(other.mixer.session(savingTo: movedPath)) == text, "save → open → save changed the file")
    let after = try Self.renderFromTwoSeconds(other)
    #expect(after.0 == before.0 && after.1 == before.1 && after.2 == before.2, "the reopened convolver sounds different")
    #expect(InsertConvolutionTests.convolutionError(after.1, input, start: after.2, from: 0) < 1e-6, "after reopening")
  }

  @Test("a placeholder keeps its plugin's saved state (text and bytes) and writes it back unchanged")
  func placeholderState() throws {
    let folder = try TemporaryFolder()
    let path = folder.file("noise.wav")
    try writeAudio(path, format: .wavFloat, channels: [Signal.noise(frames: 480, amplitude: 0.5, seed: 1)])
    let sessionPath = folder.file("session.stemdeck")
    var session = Session()
    session.stems = [stem("noise", "noise.wav")]
    session.masterInserts = [
      InsertSettings(
        uri: "urn:stemdeck:test:no-such-plugin", values: [InsertValue(symbol: "mix", value: 0.5)],
        state: [
          InsertStateValue(
            key: "urn:test:file", type: "http://lv2plug.in/ns/ext/atom#Path", flags: 3, bytes: Array("ir/a b.wav".utf8) + [0]),
          InsertStateValue(key: "urn:test:blob", type: "urn:test:Blob", flags: 1, bytes: [0, 1, 2, 255, 0])
        ])
    ]
    let text = SessionFile.encode(session)
    #expect(text.contains("\"text\" : \"ir/a b.wav\"") && text.contains("\"base64\" : \"AAEC/wA=\""), "\(text)")
    let decoded = try SessionFile.decode(Data(text.utf8), source: sessionPath)
    #expect(decoded.masterInserts == session.masterInserts, "decoding changed the state")
    let rig = MixerRig()
    _ = try rig.mixer.load(decoded, sessionPath: sessionPath)
    var expected = session
    expected.position = 0
    #expect(SessionFile.encode(rig.mixer.session(savingTo: sessionPath)) == SessionFile.encode(expected), "saving changed the session")
  }

  @Test("a state entry without a value, or with two, is refused with its place in the file")
  func badState() throws {
    let base = "{ \"key\" : \"urn:k\", \"type\" : \"urn:t\""
    for (entry, want) in [
      (base + " }", "state[0]: needs exactly one of \"text\" and \"base64\""),
      (base + ", \"text\" : \"a\", \"base64\" : \"YQ==\" }", "needs exactly one of"),
      (base + ", \"base64\" : \"@@\" }", "state[0].base64: is not valid base64")
    ] {
      let text =
        "{ \"format\" : \"stemdeck-session\", \"version\" : 3, \"stems\" : [], \"master\" : { \"inserts\" : [ { \"uri\" : \"urn:x\", \"state\" : [ \(entry) ] } ] } }"
      do {
        _ = try SessionFile.decode(Data(text.utf8), source: "/tmp/s.stemdeck")
        Issue.record("accepted \(entry)")
      } catch { #expect("\(error)".contains(want), "\(error)") }
    }
  }
}

/// Undo across a plugin's own state: a file set is undone by rebuilding the insert with the
/// state it had.
@Suite struct InsertStateUndoTests {
  @Test("undoing a file parameter's change brings the plugin's earlier file back")
  func undoFile() throws {
    let folder = try TemporaryFolder()
    let (rig, _) = try InsertConvolutionTests.rig(folder, pluginWork: .synchronous)
    let (first, second) = (folder.file("first.wav"), folder.file("second.wav"))
    try InsertConvolutionTests.impulse(first)
    try InsertConvolutionTests.impulse(second)
    try rig.mixer.inserts.add("master", plugin: InsertConvolutionTests.convolver)
    try InsertConvolutionTests.load(rig, first)
    let before = rig.mixer.history.snapshot()
    try rig.mixer.inserts.setFile("master", position: 1, parameter: "impulse", path: second)
    _ = rig.render(512, block: 256)
    let after = rig.mixer.history.snapshot()
    func impulse(_ s: Session) -> String? { s.masterInserts.first?.state?.first { $0.key.hasSuffix("#impulse") }?.text }
    #expect(impulse(before) == first && impulse(after) == second, "snapshots keep absolute paths")
    try rig.mixer.history.revert(from: after, to: before)
    #expect(impulse(rig.mixer.history.snapshot()) == first, "undo did not bring the first file back")
  }
}
