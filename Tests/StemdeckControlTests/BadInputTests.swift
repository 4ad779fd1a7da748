import Foundation
import StemdeckAudioFile
import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import Testing

/// Runs `body`, which must throw a `MixerError` whose message contains every one of `fragments`.
/// The message is `flagged`: a render option it names is written `--NAME`.
func expectMixerError(
  _ fragments: [String], sourceLocation: SourceLocation = #_sourceLocation,
  _ body: () throws(MixerError) -> Void
) {
  do {
    try body()
    Issue.record("expected a MixerError containing \(fragments)", sourceLocation: sourceLocation)
  } catch {
    let message = flagged(error)
    for fragment in fragments {
      #expect(
        message.contains(fragment), "message \"\(message)\" lacks \"\(fragment)\"",
        sourceLocation: sourceLocation)
    }
  }
}

/// An error's message with each render option it names (typed: `ControlText`) written `--NAME`
/// (`sampleRate` as `--sample-rate`), so a test sees where the option sits; actions in neutral
/// words. The console's own wording (its flags, the REPL's syntax) is StemdeckConsole's
/// ErrorText.swift, held to the same texts by `ErrorTextTests`.
func flagged(_ error: MixerError) -> String {
  error.words(
    option: { o in "--" + o.rawValue.map { $0.isUppercase ? "-" + $0.lowercased() : String($0) }.joined() },
    action: \.plain)
}

@Suite struct BadInputTests {
  /// Two stems, playing, with known settings.
  static func rig(in folder: TemporaryFolder) throws -> MixerRig {
    try writeAudio(folder.file("drums.wav"), format: .wavFloat, channels: [Signal.constant(0.25, frames: 96000)])
    try writeAudio(folder.file("bass.flac"), format: .flac, channels: [Signal.constant(0.5, frames: 96000)])
    let rig = MixerRig()
    try rig.mixer.stems.add(
      path: folder.file("drums.wav"),
      settings: stem("drums", "drums.wav") {
        $0.pan = -1; $0.volume = 0.8; $0.loops = 1
      })
    try rig.mixer.stems.add(
      path: folder.file("bass.flac"),
      settings: stem("bass", "bass.flac") {
        $0.pan = 1; $0.rate = 1
      })
    try rig.mixer.master.setVolume(1)
    return rig
  }

  @Test("bad setting values are rejected with the field, the allowed range and the value; nothing changes")
  func badSettings() throws {
    let folder = try TemporaryFolder()
    let rig = try Self.rig(in: folder)
    try rig.mixer.transport.play()
    let beforeAudio = rig.render(2048)
    let before = snapshot(rig.mixer)
    #expect(before.count == 2)

    let cases: [(fragments: [String], body: () throws(MixerError) -> Void)] = [
      (["volume must be a number between 0 and 2", "(got 3)"], { () throws(MixerError) in try rig.mixer.strips.setVolume("drums", 3) }),
      (["volume", "(got -0.5)"], { () throws(MixerError) in try rig.mixer.strips.setVolume("drums", -0.5) }),
      (["volume", "(got nan)"], { () throws(MixerError) in try rig.mixer.strips.setVolume("drums", .nan) }),
      (["pan must be a number between -1 and 1 (got 7)"], { () throws(MixerError) in try rig.mixer.strips.setPan("drums", 7) }),
      (["pan", "(got -inf)"], { () throws(MixerError) in try rig.mixer.strips.setPan("bass", -.infinity) }),
      (["rate must be a number between 0.5 and 2 (got 0.1)"], { () throws(MixerError) in try rig.mixer.stems.setRate("bass", 0.1) }),
      (["rate", "(got 2.5)"], { () throws(MixerError) in try rig.mixer.stems.setRate("bass", 2.5) }),
      (
        ["loops must be an integer from -1 (forever) up to", "(got -2)"],
        { () throws(MixerError) in try rig.mixer.stems.setLoops("drums", -2) }
      ),
      (["master volume must be a number between 0 and 2", "(got 2.5)"], { () throws(MixerError) in try rig.mixer.master.setVolume(2.5) }),
      (["start offset", "(got -1)"], { () throws(MixerError) in try rig.mixer.stems.setStartOffset("drums", -1) }),
      (
        ["seek position must be a number of seconds from 0 to 1000000", "(got nan)"],
        { () throws(MixerError) in try rig.mixer.transport.seek(toSeconds: .nan) }
      ),
      (["unknown stem 'drms'", "did you mean 'drums'?"], { () throws(MixerError) in try rig.mixer.strips.setVolume("drms", 1) }),
      (["unknown stem 'Bas'", "did you mean 'bass'?"], { () throws(MixerError) in try rig.mixer.strips.setMute("Bas", true) }),
      (["unknown stem 'vocals'", "drums", "bass"], { () throws(MixerError) in try rig.mixer.strips.setSolo("vocals", true) }),
      (["unknown stem 'guitar'"], { () throws(MixerError) in try rig.mixer.stems.remove("guitar") })
    ]
    for (fragments, body) in cases {
      expectMixerError(fragments, body)
      #expect(snapshot(rig.mixer) == before, "state changed after the error for \(fragments)")
    }
    #expect(rig.mixer.master.volume == 1)
    // The renderer got nothing either: the audio goes on exactly as before.
    let afterAudio = rig.render(2048)
    #expect(afterAudio.left.allSatisfy { $0 == beforeAudio.left.last! })
    #expect(afterAudio.right.allSatisfy { $0 == beforeAudio.right.last! })
    #expect(beforeAudio.left.last! == Float(0.25) * 0.8)
    #expect(beforeAudio.right.last! == 0.5)
  }

  @Test("bad audio files are rejected with the path and the reason; nothing changes")
  func badFiles() throws {
    let folder = try TemporaryFolder()
    let rig = try Self.rig(in: folder)
    let before = snapshot(rig.mixer)

    let text = folder.file("notes.wav")
    try Data("these are not samples\n".utf8).write(to: URL(fileURLWithPath: text))
    let empty = folder.file("empty.wav")
    #expect(FileManager.default.createFile(atPath: empty, contents: Data()))
    let directory = folder.file("takes.wav")
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
    // A WAV header with no frames.
    try writeAudio(folder.file("noframes.wav"), format: .wav16, channels: [[]])
    let missing = folder.file("missing.wav")

    let cases: [(path: String, reason: String)] = [
      (missing, "no such file"),
      (text, "not a readable audio file"),
      (empty, "the file is empty"),
      (directory, "is a directory"),
      (folder.file("noframes.wav"), "contains no audio frames")
    ]
    for (path, reason) in cases {
      expectMixerError(["cannot add stem 'vocals'", path, reason]) { () throws(MixerError) in
        try rig.mixer.stems.add(path: path, settings: stem("vocals", path))
      }
      #expect(snapshot(rig.mixer) == before, "state changed after adding \(path)")
    }
  }

  @Test("bad settings in stems.add are rejected before the file is opened; nothing changes")
  func badNewStems() throws {
    let folder = try TemporaryFolder()
    let rig = try Self.rig(in: folder)
    let before = snapshot(rig.mixer)
    let good = folder.file("drums.wav")
    let cases: [(fragments: [String], settings: StemSettings)] = [
      (["volume must be a number between 0 and 2", "(got 3)"], stem("vox", good) { $0.volume = 3 }),
      (["pan must be a number between -1 and 1 (got 7)"], stem("vox", good) { $0.pan = 7 }),
      (["rate must be a number between 0.5 and 2 (got 0.1)"], stem("vox", good) { $0.rate = 0.1 }),
      (["loops", "(got -2)"], stem("vox", good) { $0.loops = -2 }),
      (["start offset"], stem("vox", good) { $0.startOffset = -.infinity }),
      (["a stem named 'drums' already exists"], stem("drums", good)),
      (["the stem name \"all\" is reserved"], stem("all", good)),
      (["a stem name must not be empty"], stem("", good)),
      (["invalid stem name \"a b\": a space is not allowed", "letters, digits"], stem("a b", good))
    ]
    for (fragments, settings) in cases {
      expectMixerError(fragments) { () throws(MixerError) in try rig.mixer.stems.add(path: good, settings: settings) }
      #expect(snapshot(rig.mixer) == before, "state changed after \(fragments)")
    }
    // After all that, adding a good stem still works (no slot or voice leaked into the way).
    try rig.mixer.stems.add(path: good, settings: stem("vox", good))
    #expect(rig.mixer.stems.names == ["drums", "bass", "vox"])
  }

  @Test("a failing setter leaves the other settings of that stem as they were")
  func setterAtomicity() throws {
    let folder = try TemporaryFolder()
    let rig = try Self.rig(in: folder)
    try rig.mixer.strips.setVolume("drums", 0.3)
    expectMixerError(["pan"]) { () throws(MixerError) in try rig.mixer.strips.setPan("drums", 1.5) }
    let status = try rig.mixer.stems.status("drums")
    #expect(status.settings.volume == 0.3)
    #expect(status.settings.pan == -1)
    #expect(status.settings.loops == 1)
    expectMixerError(["unknown stem 'nope'"]) { () throws(MixerError) in _ = try rig.mixer.stems.status("nope") }
  }
}
