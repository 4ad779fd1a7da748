import Foundation
import StemdeckAudioFile
import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import Testing

@Suite struct SessionLoadTests {
  static func writeStems(in folder: TemporaryFolder) throws {
    try writeAudio(folder.file("drums.wav"), format: .wavFloat, channels: [Signal.constant(0.25, frames: 96000)])
    try writeAudio(folder.file("bass.flac"), format: .flac, channels: [Signal.constant(0.5, frames: 96000)])
    try writeAudio(folder.file("keys.wav"), format: .wav16, channels: [Signal.constant(0.125, frames: 96000)])
  }

  static func firstSession() -> Session {
    var s = Session()
    s.stems = [
      stem("drums", "drums.wav") {
        $0.pan = -1; $0.volume = 0.8
      },
      stem("bass", "bass.flac") {
        $0.pan = 1; $0.loops = 1
      }
    ]
    return s
  }

  @Test("strict: a session with one missing audio file fails naming the session, stems[i], the stem and the file; the loaded stems stay")
  func missingFileKeepsPreviousSession() throws {
    let folder = try TemporaryFolder()
    try Self.writeStems(in: folder)
    let rig = MixerRig()
    let firstPath = folder.file("first.stemdeck")
    try rig.mixer.load(Self.firstSession(), sessionPath: firstPath)
    try rig.mixer.transport.play()
    let before = rig.render(2048)
    #expect(before.left.last! == Float(0.25) * 0.8)
    #expect(before.right.last! == 0.5)
    let loaded = snapshot(rig.mixer)

    var bad = Session()
    bad.masterVolume = 0.5
    bad.stems = [
      stem("keys", "keys.wav"),
      stem("vox", "takes/vox.wav")
    ]
    let badPath = folder.file("second.stemdeck")
    expectMixerError([badPath, "stems[1]", "vox", folder.file("takes/vox.wav"), "no such file"]) { () throws(MixerError) in
      try rig.mixer.load(bad, sessionPath: badPath, strict: true)
    }
    #expect(rig.mixer.stems.names == ["drums", "bass"])
    #expect(snapshot(rig.mixer) == loaded)
    #expect(rig.mixer.master.volume == 1)
    let after = rig.render(2048)
    #expect(after.left.allSatisfy { $0 == before.left.last! })
    #expect(after.right.allSatisfy { $0 == before.right.last! })
  }

  @Test("strict: other bad stems in a session name the session, stems[i] and the field; nothing changes")
  func badFieldsKeepPreviousSession() throws {
    let folder = try TemporaryFolder()
    try Self.writeStems(in: folder)
    let rig = MixerRig()
    try rig.mixer.load(Self.firstSession(), sessionPath: folder.file("first.stemdeck"))
    let loaded = snapshot(rig.mixer)
    let path = folder.file("bad.stemdeck")

    var volume = Session()
    volume.stems = [stem("keys", "keys.wav"), stem("drums", "drums.wav") { $0.volume = 3 }]
    var duplicate = Session()
    duplicate.stems = [stem("keys", "keys.wav"), stem("keys", "drums.wav")]
    var notAudio = Session()
    try Data("text".utf8).write(to: URL(fileURLWithPath: folder.file("readme.wav")))
    notAudio.stems = [stem("readme", "readme.wav")]
    var master = Session()
    master.stems = [stem("keys", "keys.wav")]
    master.masterVolume = 9

    let cases: [(Session, [String])] = [
      (volume, [path, "stems[1]", "drums", "volume", "(got 3)"]),
      (duplicate, [path, "stems[1]", "duplicate stem name 'keys'", "stems[0]"]),
      (notAudio, [path, "stems[0]", "readme", folder.file("readme.wav"), "not a readable audio file"]),
      (master, [path, "master.volume", "(got 9)"])
    ]
    for (session, fragments) in cases {
      expectMixerError(fragments) { () throws(MixerError) in try rig.mixer.load(session, sessionPath: path, strict: true) }
      #expect(snapshot(rig.mixer) == loaded)
    }
  }

  @Test("not strict: a missing file leaves that stem offline with a warning; the rest opens and it is saved unchanged")
  func missingFileGoesOffline() throws {
    let folder = try TemporaryFolder()
    try Self.writeStems(in: folder)
    let rig = MixerRig()
    try rig.mixer.load(Self.firstSession(), sessionPath: folder.file("first.stemdeck"))
    var session = Session()
    session.stems = [
      stem("keys", "keys.wav") { $0.pan = -1 },
      stem("vox", "takes/vox.wav") {
        $0.volume = 0.3; $0.loops = 2
      }
    ]
    let path = folder.file("second.stemdeck")
    let warnings = try rig.mixer.load(session, sessionPath: path)
    #expect(warnings.count == 1)
    #expect(warnings.first?.file == path, "the warning names the session file in its own field: \(warnings)")
    for fragment in [path, "stems[1]", "vox", folder.file("takes/vox.wav"), "no such file", "offline"] {
      #expect(warnings.first?.description.contains(fragment) == true, "warning \(warnings) lacks \(fragment)")
    }
    #expect(rig.mixer.stems.names == ["keys"])
    #expect(rig.mixer.stems.allNames == ["keys", "vox"])
    #expect(rig.mixer.offlineStems.map(\.settings.name) == ["vox"])
    expectMixerError(["stem 'vox' is offline", "no such file"]) { () throws(MixerError) in try rig.mixer.strips.setVolume("vox", 1) }
    expectMixerError(["'vox' already exists"]) { () throws(MixerError) in
      try rig.mixer.stems.add(path: folder.file("drums.wav"), settings: stem("vox", "drums.wav"))
    }
    // Saved back unchanged.
    let saved = rig.mixer.session(savingTo: path)
    #expect(saved.stems.map(\.name) == ["keys", "vox"])
    #expect(saved.stems[1] == session.stems[1])
    // The stem that opened plays (after one block, as a live driver would have rendered).
    _ = rig.render(256)
    try rig.mixer.transport.play()
    let out = rig.render(1024)
    #expect(out.left.allSatisfy { $0 == 0.125 })
  }

  @Test("loading replaces the stems, resolves paths against the session's folder, and saves back relative paths")
  func loadReplacesAndRoundTrips() throws {
    let folder = try TemporaryFolder()
    try Self.writeStems(in: folder)
    try FileManager.default.createDirectory(atPath: folder.file("sessions"), withIntermediateDirectories: false)
    let rig = MixerRig()
    try rig.mixer.load(Self.firstSession(), sessionPath: folder.file("first.stemdeck"))

    var second = Session()
    second.masterVolume = 0.5
    second.position = 1.25
    second.quality = .medium
    second.stems = [
      stem("keys", "../keys.wav") {
        $0.pan = -1; $0.volume = 2
      },
      stem("drums", folder.file("drums.wav")) {
        $0.pan = 1; $0.rate = 0.5; $0.loops = 3
      }
    ]
    let sessionPath = folder.file("sessions/second.stemdeck")
    try rig.mixer.load(second, sessionPath: sessionPath)
    #expect(rig.mixer.stems.names == ["keys", "drums"])
    #expect(rig.mixer.stems.statuses().map(\.path) == [folder.file("keys.wav"), folder.file("drums.wav")])
    #expect(rig.mixer.quality == .medium)
    #expect(rig.mixer.master.volume == 0.5)
    #expect(rig.mixer.transport.position == 1.25)
    #expect(!rig.mixer.isDirty)
    // The previous session's stems are gone once the renderer hands them back.
    _ = rig.render(1024)
    _ = rig.mixer.pump()
    #expect(!rig.mixer.engine.hasPendingRemovals)

    let saved = rig.mixer.session(savingTo: sessionPath)
    #expect(saved.stems.map(\.file) == ["../keys.wav", "../drums.wav"])
    #expect(saved.stems.map(\.name) == ["keys", "drums"])
    #expect(saved.stems[1].rate == 0.5 && saved.stems[1].loops == 3 && saved.stems[1].pan == 1)
    #expect(saved.stems[0].volume == 2)
    #expect(saved.masterVolume == 0.5 && saved.quality == .medium && saved.position == 1.25)

    // Playing: keys (16-bit 0.125 ×2, hard left) and drums (0.25 at half speed, hard right),
    // both at master 0.5, after the fade-in from 1.25 s.
    try rig.mixer.transport.play()
    let out = rig.render(4096)
    #expect(abs(out.left.last! - 0.125) < 1e-4, "left \(out.left.last!)")
    #expect(abs(out.right.last! - 0.125) < 1e-3, "right \(out.right.last!)")
  }
}
