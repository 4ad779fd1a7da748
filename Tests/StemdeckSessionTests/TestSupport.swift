import Foundation
@testable import StemdeckSession

#if canImport(Glibc)
import Glibc
#endif

/// Reads a whole file as bytes (nil if it cannot be read).
func contents(of path: String) -> [UInt8]? {
  FileManager.default.contents(atPath: path).map { [UInt8]($0) }
}

/// Writes bytes to a file, replacing it.
func write(_ bytes: [UInt8], to path: String) throws {
  try Data(bytes).write(to: URL(fileURLWithPath: path))
}

func write(_ text: String, to path: String) throws {
  try write(Array(text.utf8), to: path)
}

/// Decodes a document given as text.
func decode(_ text: String) throws(SessionError) -> Session {
  try SessionFile.decode(Data(text.utf8), source: "test.json")
}

/// The repository root, found from this file's path (Tests/StemdeckSessionTests/TestSupport.swift).
let repositoryRoot = URL(fileURLWithPath: #filePath)
  .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

/// A document in the exact layout of Sessions/demo.json.
let demoLikeDocument = """
  {
    "format" : "stemdeck-session",
    "version" : 3,
    "quality" : "fast",
    "master" : { "volume" : 0.9 },
    "options" : { "autoPauseOnDisconnect" : false, "meterPoint" : "post" },
    "stems" : [
      { "name" : "drums", "file" : "../Samples/drums.flac", "volume" : 0.8, "pan" : 0, "rate" : 1, "loops" : 3, "mute" : false, "solo" : false },
      { "name" : "bass", "file" : "../Samples/bass.flac", "volume" : 0.4, "pan" : 0, "rate" : 1, "loops" : 3, "mute" : false, "solo" : false },
      { "name" : "chords", "file" : "../Samples/chords.flac", "volume" : 0.45, "pan" : -0.2, "rate" : 1, "loops" : 3, "mute" : false, "solo" : false }
    ]
  }

  """

/// A session with every field away from its default.
func everythingSession() -> Session {
  var session = Session()
  session.quality = .best
  session.masterVolume = 1.25
  session.options.autoPauseOnDisconnect = true
  session.options.meterPoint = .pre
  session.options.songChange = .crossfade
  session.options.crossfadeSeconds = 0.75
  session.options.transportSync = .lead
  session.recording.format = .wav32f
  session.recording.takesMuted = true
  session.recording.folder = "takes/späť \"live\"\t\u{01}"
  session.tempo = Tempo(bpm: 128.25, beatsPerBar: 7)
  session.position = 12.345
  session.connections = [
    "master_L": ["system:playback_1", "jack_capture:input_1"],
    "master_R": ["system:playback_2"],
    "kick_L": ["a2j:Midi Through [14] (capture): port"]
  ]
  var kick = StemSettings(name: "kick", file: "/abs/path/kick.wav")
  kick.volume = 0.1 + 0.2
  kick.pan = -1
  kick.rate = 0.5
  kick.loops = -1
  kick.mute = true
  kick.solo = true
  kick.directOut = true
  kick.startOffset = 1.5
  kick.loopStart = 1.25
  kick.loopEnd = 9.25
  kick.crossfade = 0.005
  kick.mode = .stretch
  kick.pitch = 2
  var odd = StemSettings(name: "odd.name-2_x", file: "we\"ird\\ päth/\tファイル\u{01}.flac")
  odd.volume = 2
  odd.pan = 1
  odd.rate = 2
  odd.loops = 1_000_000
  odd.startOffset = 1e-10
  odd.loopStart = 0  // the edges: a loop region over the whole allowed span, the longest crossfade
  odd.loopEnd = 86400
  odd.crossfade = 1
  // No pitch: a pitch shift in varispeed mode is refused (issue 17), as the REPL refuses it.
  session.stems = [kick, odd]
  var horn = EffectSettings(name: "horn", file: "../Samples/horn.wav")
  horn.volume = 0.1 + 0.2
  horn.pan = -1
  var oddEffect = EffectSettings(name: "kick", file: "/abs/ef\"fe\\ct ファイル.flac")  // a stem's name is fine
  oddEffect.volume = 2
  oddEffect.pan = 1e-10
  session.effects = [horn, oddEffect, EffectSettings(name: "Z.z-_0", file: "z.wav")]
  return session
}

/// Checks that every value of a decoded session obeys the session rules.
func isWithinRules(_ session: Session) -> Bool {
  func ok(_ value: Double, _ range: ClosedRange<Double>) -> Bool { value.isFinite && range.contains(value) }
  guard ok(session.masterVolume, SettingRange.volume), ok(session.position, SettingRange.position) else {
    return false
  }
  var names = Set<String>()
  for stem in session.stems {
    guard ok(stem.volume, SettingRange.volume), ok(stem.pan, SettingRange.pan),
      ok(stem.rate, SettingRange.rate), SettingRange.loops.contains(stem.loops),
      ok(stem.startOffset, SettingRange.startOffset), !stem.file.isEmpty,
      (stem.loopStart == nil) == (stem.loopEnd == nil),
      stem.loopStart.map({ ok($0, SettingRange.loopPoint) }) ?? true,
      stem.loopEnd.map({ ok($0, SettingRange.loopPoint) }) ?? true,
      (stem.loopStart ?? 0) < (stem.loopEnd ?? 1),
      ok(stem.crossfade, SettingRange.crossfade), ok(stem.pitch, SettingRange.pitch),
      SettingRange.nameLength.contains(stem.name.count),
      stem.name.lowercased() != "all",
      stem.name.unicodeScalars.allSatisfy({
        $0.isASCII
          && ($0.properties.isAlphabetic
            || ("0"..."9").contains($0) || "_-.".unicodeScalars.contains($0))
      }),
      names.insert(stem.name).inserted
    else { return false }
  }
  if let tempo = session.tempo {
    guard ok(tempo.bpm, SettingRange.bpm), SettingRange.beatsPerBar.contains(tempo.beatsPerBar) else { return false }
  }
  guard ok(session.options.crossfadeSeconds, SettingRange.crossfadeSeconds),
    !session.recording.folder.utf8.contains(0),
    SettingRange.recordingFolderBytes.contains(session.recording.folder.utf8.count)
  else { return false }
  var effectNames = Set<String>()
  for effect in session.effects {
    guard ok(effect.volume, SettingRange.volume), ok(effect.pan, SettingRange.pan), !effect.file.isEmpty,
      !effect.file.utf8.contains(0),
      SettingRange.nameLength.contains(effect.name.count),
      effect.name.lowercased() != "all",
      effect.name.unicodeScalars.allSatisfy({
        $0.isASCII
          && ($0.properties.isAlphabetic
            || ("0"..."9").contains($0) || "_-.".unicodeScalars.contains($0))
      }),
      effectNames.insert(effect.name).inserted
    else { return false }
  }
  for (port, peers) in session.connections {
    guard !port.isEmpty, !port.contains(":"), peers.allSatisfy({ $0.contains(":") }) else { return false }
  }
  return true
}
