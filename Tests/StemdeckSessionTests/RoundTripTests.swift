import Foundation
import StemdeckTestSupport
import Testing
@testable import StemdeckSession

@Suite("Encoding and round trips")
struct RoundTripTests {
  @Test("a demo-like document decodes and encodes back byte for byte")
  func demoLikeRoundTrip() throws {
    let text = demoLikeDocument
    #expect(text.hasSuffix("}\n"))
    let session = try decode(text)
    #expect(session.quality == .fast)
    #expect(session.masterVolume == 0.9)
    #expect(session.options == SessionOptions())
    #expect(session.stems.map(\.name) == ["drums", "bass", "chords"])
    #expect(session.stems[2].pan == -0.2)
    #expect(session.stems[2].volume == 0.45)
    #expect(session.stems[0].loops == 3)
    #expect(session.position == 0 && session.connections.isEmpty)
    #expect(SessionFile.encode(session) == text)
  }

  @Test("Sessions/demo.json in the repository round-trips byte for byte")
  func repositoryDemoRoundTrip() throws {
    let path = repositoryRoot + "/Sessions/demo.json"
    let original = try #require(contents(of: path))
    let session = try SessionFile.load(path: path)
    #expect(session.stems.count == 5)
    #expect(Array(SessionFile.encode(session).utf8) == original)
  }

  @Test("a session with every field non-default survives encode → decode → encode")
  func everythingRoundTrip() throws {
    let session = everythingSession()
    try session.validate()
    let first = SessionFile.encode(session)
    let decoded = try decode(first)
    #expect(decoded == session)
    #expect(SessionFile.encode(decoded) == first)
    // The optional parts are present only because they are non-default.
    #expect(first.contains("\"position\" : 12.345"))
    #expect(first.contains("\"directOut\" : true"))
    #expect(first.contains("\"startOffset\" : 1.5"))
    #expect(first.contains("\"startOffset\" : 1e-10"))
    #expect(first.contains("\"volume\" : 0.30000000000000004"))
    #expect(first.contains("    \"master_L\" : [ \"system:playback_1\", \"jack_capture:input_1\" ],\n"))
    // The stem that leaves them at their defaults does not mention them.
    let oddLine = try #require(first.split(separator: "\n").first { $0.contains("odd.name-2_x") })
    #expect(!oddLine.contains("directOut"))
    #expect(!oddLine.contains("\"mode\""))
    // The loop region, crossfade, mode and pitch follow the other optional stem fields, in order.
    #expect(
      first.contains(
        """
            { "name" : "kick", "file" : "/abs/path/kick.wav", "volume" : 0.30000000000000004, "pan" : -1, \
        "rate" : 0.5, "loops" : -1, "mute" : true, "solo" : true, "directOut" : true, "startOffset" : 1.5, \
        "loopStart" : 1.25, "loopEnd" : 9.25, "crossfade" : 0.005, "mode" : "stretch", "pitch" : 2 },

        """))
    #expect(oddLine.hasSuffix(#""startOffset" : 1e-10, "loopStart" : 0, "loopEnd" : 86400, "crossfade" : 1 }"#))
    // Options, recording, tempo and effects, each in its place.
    let header = #"""

        "options" : { "autoPauseOnDisconnect" : true, "meterPoint" : "pre", "songChange" : "crossfade", \#
      "crossfadeSeconds" : 0.75, "transportSync" : "lead" },
        "recording" : { "format" : "wav32f", "takesMuted" : true, "folder" : "takes/späť \"live\"\t\u0001" },
        "tempo" : { "bpm" : 128.25, "beatsPerBar" : 7 },
        "position" : 12.345,

      """#
    #expect(first.contains(header))
    #expect(
      first.hasSuffix(
        """
          ],
          "effects" : [
            { "name" : "horn", "file" : "../Samples/horn.wav", "volume" : 0.30000000000000004, "pan" : -1 },
            { "name" : "kick", "file" : "/abs/ef\\"fe\\\\ct ファイル.flac", "volume" : 2, "pan" : 1e-10 },
            { "name" : "Z.z-_0", "file" : "z.wav", "volume" : 1, "pan" : 0 }
          ]
        }

        """))
    #expect(decoded.effects.map(\.name) == ["horn", "kick", "Z.z-_0"])
    #expect(decoded.recording.folder == "takes/späť \"live\"\t\u{01}")
  }

  @Test("the new sections have a fixed layout and appear only when not default")
  func newSectionsLayout() throws {
    var session = Session()
    session.stems = [StemSettings(name: "drums", file: "drums.flac")]
    session.effects = [EffectSettings(name: "horn", file: "../Samples/horn.wav")]
    session.recording.folder = "takes"
    session.options.songChange = .crossfade
    let text = SessionFile.encode(session)
    #expect(
      text == """
        {
          "format" : "stemdeck-session",
          "version" : 3,
          "quality" : "fast",
          "master" : { "volume" : 1 },
          "options" : { "autoPauseOnDisconnect" : false, "meterPoint" : "post", "songChange" : "crossfade" },
          "recording" : { "format" : "wav32f", "takesMuted" : false, "folder" : "takes" },
          "stems" : [
            { "name" : "drums", "file" : "drums.flac", "volume" : 1, "pan" : 0, "rate" : 1, "loops" : 0, "mute" : false, "solo" : false }
          ],
          "effects" : [
            { "name" : "horn", "file" : "../Samples/horn.wav", "volume" : 1, "pan" : 0 }
          ]
        }

        """)
    #expect(try decode(text) == session)

    // Only the options key that differs is appended.
    var onlySeconds = Session()
    onlySeconds.options.crossfadeSeconds = 30
    #expect(
      SessionFile.encode(onlySeconds).contains(
        "\"options\" : { \"autoPauseOnDisconnect\" : false, \"meterPoint\" : \"post\", \"crossfadeSeconds\" : 30 },\n"))
    #expect(try decode(SessionFile.encode(onlySeconds)) == onlySeconds)

    // Any single non-default recording field brings out the whole object; effects with no stems
    // follow an empty stems list.
    for change in [{ (r: inout RecordingSettings) in r.format = .wav24 }, { $0.takesMuted = true }] {
      var changed = Session()
      change(&changed.recording)
      changed.effects = [EffectSettings(name: "e", file: "e.wav")]
      let encoded = SessionFile.encode(changed)
      #expect(
        encoded.contains(
          "\"recording\" : { \"format\" : \"\(changed.recording.format.rawValue)\", "
            + "\"takesMuted\" : \(changed.recording.takesMuted), \"folder\" : \"\" },\n"))
      #expect(
        encoded.hasSuffix(
          "  \"stems\" : [],\n  \"effects\" : [\n"
            + "    { \"name\" : \"e\", \"file\" : \"e.wav\", \"volume\" : 1, \"pan\" : 0 }\n  ]\n}\n"))
      #expect(try decode(encoded) == changed)
    }

    // Defaults stay out of the file.
    let plain = SessionFile.encode(Session())
    for word in ["recording", "effects", "songChange", "crossfadeSeconds", "tempo", "transportSync", "effectsOutput"] {
      #expect(!plain.contains(word))
    }
    #expect(
      plain.contains(
        "  \"options\" : { \"autoPauseOnDisconnect\" : false, \"meterPoint\" : \"post\" },\n  \"stems\" : []\n}\n"))
  }

  @Test("tempo, loop regions, stretch mode and quality and transport sync have a fixed layout and appear only when set")
  func musicalFieldsLayout() throws {
    var session = Session()
    session.tempo = Tempo(bpm: 100)
    session.options.transportSync = .follow
    var drums = StemSettings(name: "drums", file: "drums.flac")
    drums.loopStart = 1.25
    drums.loopEnd = 9.25
    drums.crossfade = 0.005
    drums.mode = .stretch
    drums.pitch = 2
    var bass = StemSettings(name: "bass", file: "bass.flac")
    bass.mode = .stretch
    bass.stretch = .fast  // written after "mode"; the default "fine" is not written
    var keys = StemSettings(name: "keys", file: "keys.flac")
    keys.startOffset = 4
    keys.mode = .stretch
    keys.pitch = -0.5
    var pad = StemSettings(name: "pad", file: "pad.flac")
    pad.loopStart = 0
    pad.loopEnd = 2
    session.stems = [drums, bass, keys, pad]
    try session.validate()
    let text = SessionFile.encode(session)
    #expect(
      text == """
        {
          "format" : "stemdeck-session",
          "version" : 3,
          "quality" : "fast",
          "master" : { "volume" : 1 },
          "options" : { "autoPauseOnDisconnect" : false, "meterPoint" : "post", "transportSync" : "follow" },
          "tempo" : { "bpm" : 100, "beatsPerBar" : 4 },
          "stems" : [
            { "name" : "drums", "file" : "drums.flac", "volume" : 1, "pan" : 0, "rate" : 1, "loops" : 0, "mute" : false, "solo" : false, "loopStart" : 1.25, "loopEnd" : 9.25, "crossfade" : 0.005, "mode" : "stretch", "pitch" : 2 },
            { "name" : "bass", "file" : "bass.flac", "volume" : 1, "pan" : 0, "rate" : 1, "loops" : 0, "mute" : false, "solo" : false, "mode" : "stretch", "stretch" : "fast" },
            { "name" : "keys", "file" : "keys.flac", "volume" : 1, "pan" : 0, "rate" : 1, "loops" : 0, "mute" : false, "solo" : false, "startOffset" : 4, "mode" : "stretch", "pitch" : -0.5 },
            { "name" : "pad", "file" : "pad.flac", "volume" : 1, "pan" : 0, "rate" : 1, "loops" : 0, "mute" : false, "solo" : false, "loopStart" : 0, "loopEnd" : 2 }
          ]
        }

        """)
    #expect(try decode(text) == session)

    // "tempo" sits between "recording" and "position"; "transportSync" follows the crossfade options.
    var full = Session()
    full.recording.takesMuted = true
    full.tempo = Tempo(bpm: 92.5, beatsPerBar: 3)
    full.position = 3
    full.options.songChange = .crossfade
    full.options.crossfadeSeconds = 4
    full.options.transportSync = .lead
    full.options.effectsOutput = .ports
    let fullText = SessionFile.encode(full)
    #expect(
      fullText.contains(
        """
          "options" : { "autoPauseOnDisconnect" : false, "meterPoint" : "post", "songChange" : "crossfade", \
        "crossfadeSeconds" : 4, "transportSync" : "lead", "effectsOutput" : "ports" },
          "recording" : { "format" : "wav32f", "takesMuted" : true, "folder" : "" },
          "tempo" : { "bpm" : 92.5, "beatsPerBar" : 3 },
          "position" : 3,
          "stems" : []

        """))
    #expect(try decode(fullText) == full)

    // A tempo at the default beats per bar still writes both keys; each transport sync choice and
    // rate mode round-trips.
    var edges = Session()
    edges.tempo = Tempo(bpm: 20, beatsPerBar: 32)
    #expect(SessionFile.encode(edges).contains("  \"tempo\" : { \"bpm\" : 20, \"beatsPerBar\" : 32 },\n"))
    #expect(try decode(SessionFile.encode(edges)) == edges)
    for sync in TransportSync.allCases {
      var chosen = Session()
      chosen.options.transportSync = sync
      #expect(SessionFile.encode(chosen).contains("transportSync") == (sync != .off))
      #expect(try decode(SessionFile.encode(chosen)) == chosen)
    }
    for mode in RateMode.allCases {
      var chosen = Session()
      chosen.stems = [StemSettings(name: "s", file: "s.wav")]
      chosen.stems[0].mode = mode
      #expect(SessionFile.encode(chosen).contains("\"mode\"") == (mode != .varispeed))
      #expect(try decode(SessionFile.encode(chosen)) == chosen)
    }
    // -0 is the default pitch and crossfade too, so it is not written.
    var negativeZero = Session()
    negativeZero.stems = [StemSettings(name: "s", file: "s.wav")]
    negativeZero.stems[0].pitch = -0.0
    negativeZero.stems[0].crossfade = -0.0
    #expect(!SessionFile.encode(negativeZero).contains("pitch"))
    #expect(!SessionFile.encode(negativeZero).contains("crossfade"))
  }

  @Test("the musical fields written out at their defaults decode to the defaults")
  func musicalFieldsAtDefaults() throws {
    let text = """
      {
        "format" : "stemdeck-session", "version" : 1,
        "options" : { "transportSync" : "off" },
        "stems" : [ { "name" : "x", "file" : "x.wav", "crossfade" : 0, "mode" : "varispeed", "pitch" : 0 } ]
      }
      """
    var expected = Session()
    expected.stems = [StemSettings(name: "x", file: "x.wav")]
    let session = try decode(text)
    #expect(session == expected)
    #expect(session.tempo == nil && session.stems[0].loopStart == nil && session.stems[0].loopEnd == nil)
    for word in ["transportSync", "crossfade", "mode", "pitch", "loopStart", "loopEnd", "tempo"] {
      #expect(!SessionFile.encode(session).contains(word))
    }
    // beatsPerBar defaults to 4 and is then written; the keys may come in any order.
    let tempo = try decode(#"{"format":"stemdeck-session","version":1,"tempo":{"bpm":120}}"#)
    #expect(tempo.tempo == Tempo(bpm: 120, beatsPerBar: 4))
    #expect(SessionFile.encode(tempo).contains("\"tempo\" : { \"bpm\" : 120, \"beatsPerBar\" : 4 }"))
    let reordered = try decode(
      #"{"format":"stemdeck-session","version":1,"tempo":{"beatsPerBar":6.0,"bpm":1.2e2},"#
        + #""stems":[{"loopEnd":3,"name":"x","loopStart":0.5,"file":"x.wav"}]}"#)
    #expect(reordered.tempo == Tempo(bpm: 120, beatsPerBar: 6))
    #expect(reordered.stems[0].loopStart == 0.5 && reordered.stems[0].loopEnd == 3)
    #expect(SessionFile.encode(reordered).contains("\"solo\" : false, \"loopStart\" : 0.5, \"loopEnd\" : 3 }"))
  }

  @Test("new sections written out at their defaults decode to the defaults")
  func newSectionsAtDefaults() throws {
    let text = """
      {
        "format" : "stemdeck-session", "version" : 1,
        "options" : { "songChange" : "gapless", "crossfadeSeconds" : 2 },
        "recording" : { "format" : "wav32f", "takesMuted" : false, "folder" : "" },
        "effects" : []
      }
      """
    #expect(try decode(text) == Session())
    #expect(try decode(#"{"format":"stemdeck-session","version":1,"recording":{}}"#) == Session())
    let partial = try decode(
      #"{"format":"stemdeck-session","version":1,"recording":{"folder":"t"},"#
        + #""options":{"songChange":"crossfade"},"effects":[{"name":"h","file":"h.wav"}]}"#)
    var expected = Session()
    expected.recording.folder = "t"
    expected.options.songChange = .crossfade
    expected.effects = [EffectSettings(name: "h", file: "h.wav")]
    #expect(partial == expected)
    #expect(partial.options.crossfadeSeconds == 2)
    #expect(partial.recording.format == .wav32f && !partial.recording.takesMuted)
    // An effect volume in dB is read as linear gain and saved in dB again, like a stem's.
    let decibels = try decode(
      #"{"format":"stemdeck-session","version":1,"#
        + #""effects":[{"name":"h","file":"h.wav","volume":"-6dB","pan":-0.5}]}"#)
    #expect(abs(decibels.effects[0].volume - 0.501187) < 1e-6)
    #expect(decibels.effects[0].pan == -0.5)
    #expect(SessionFile.encode(decibels).contains("\"volume\" : \"-6dB\""))
    #expect(try decode(SessionFile.encode(decibels)) == decibels)
  }

  @Test("a dB volume is read as linear gain and saved as a number")
  func decibelVolumeBecomesLinear() throws {
    let text = """
      {
        "format" : "stemdeck-session", "version" : 1,
        "master" : { "volume" : "-6 dB" },
        "position" : 3,
        "connections" : { "master_R" : [ "system:playback_2" ], "master_L" : [ "system:playback_1" ] },
        "stems" : [
          { "name" : "a", "file" : "a.wav", "volume" : "-6dB", "directOut" : true, "startOffset" : 0.25 },
          { "name" : "b", "file" : "b.wav", "volume" : "+3dB" },
          { "name" : "c", "file" : "c.wav", "volume" : "-inf dB" },
          { "name" : "d", "file" : "d.wav", "volume" : "-200dB" },
          { "name" : "e", "file" : "e.wav", "volume" : "0dB" },
          { "name" : "f", "file" : "f.wav", "volume" : " +6 DB " }
        ]
      }
      """
    let session = try decode(text)
    #expect(abs(session.masterVolume - 0.501187) < 1e-6)
    #expect(abs(session.stems[0].volume - 0.501187) < 1e-6)
    #expect(abs(session.stems[1].volume - 1.412538) < 1e-6)
    #expect(session.stems[2].volume == 0)
    #expect(session.stems[3].volume == 0)  // below the -160 dB floor
    #expect(session.stems[4].volume == 1)
    #expect(abs(session.stems[5].volume - 1.995262) < 1e-6)
    let encoded = SessionFile.encode(session)
    // Written back in dB, as given (GainTextTests): the same gains to the last bit.
    #expect(encoded.contains("\"master\" : { \"volume\" : \"-6dB\""))
    #expect(encoded.contains("\"volume\" : \"3dB\"") && encoded.contains("\"volume\" : \"6dB\""))
    let again = try decode(encoded)
    #expect(again == session)
    #expect(SessionFile.encode(again) == encoded)
  }

  @Test("a minimal document takes every default, and an empty session encodes and decodes")
  func defaults() throws {
    let minimal = try decode(#"{ "format" : "stemdeck-session", "version" : 1 }"#)
    #expect(minimal == Session())
    let stemDefaults = try decode(#"{"format":"stemdeck-session","version":1,"stems":[{"name":"x","file":"x.wav"}]}"#)
    #expect(stemDefaults.stems == [StemSettings(name: "x", file: "x.wav")])
    let empty = SessionFile.encode(Session())
    #expect(empty.contains("\"stems\" : []\n}"))
    #expect(try decode(empty) == Session())
    #expect(empty.hasSuffix("}\n"))
  }

  @Test(
    "numbers: integral values have no decimal point, others read back exactly",
    arguments: [0.0, 1, 3, -1, 0.45, -0.2, 0.1 + 0.2, 1e-10, 1.0 / 3, 2 - 1e-15, 123456.5])
  func numberFormatting(value: Double) throws {
    var session = Session()
    session.stems = [StemSettings(name: "s", file: "s.wav")]
    session.stems[0].pan = max(-1, min(1, value))
    session.position = abs(value)
    let text = SessionFile.encode(session)
    let back = try decode(text)
    #expect(back.stems[0].pan == session.stems[0].pan)
    #expect(back.position == session.position)
    if value == value.rounded() {
      #expect(!SessionRules.number(value).contains("."))
    }
  }

  @Test("a byte order mark and other legal JSON spellings are accepted")
  func lenientButLegalSpellings() throws {
    let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
    let body = #"{"format":"stemdeck-session","version":1.0,"stems":[{"name":"x","file":"\u0078\/y.wav","pan":-5e-1}]}"#
    let session = try SessionFile.decode(Data(bom + Array(body.utf8)), source: "bom.json")
    #expect(session.stems.first?.file == "x/y.wav")
    #expect(session.stems.first?.pan == -0.5)
  }

  @Test("validate() rejects values set in code that a file could not hold")
  func validateRejectsBadModelValues() throws {
    var session = everythingSession()
    session.masterVolume = .nan
    #expect(throws: SessionError.self) { try session.validate() }
    do {
      try session.validate(source: "x.json")
      Issue.record("expected an error")
    } catch {
      #expect(error.location == "master.volume")
      #expect(error.message.contains("(got nan)"))
    }
    // encode never writes NaN: the document it produces fails to load instead of loading wrong.
    let text = SessionFile.encode(session)
    #expect(!text.lowercased().contains("nan"))
    #expect(throws: SessionError.self) { try decode(text) }

    var duplicate = Session()
    duplicate.stems = [StemSettings(name: "a", file: "a"), StemSettings(name: "a", file: "b")]
    #expect(
      throws: SessionError(
        file: "session", location: "stems[1].name",
        message: "duplicate stem name 'a' (also stems[0])")
    ) {
      try duplicate.validate()
    }
    var badPort = Session()
    badPort.connections = ["master_L": ["nocolon"]]
    #expect(throws: SessionError.self) { try badPort.validate() }
  }

  @Test("validate() checks effects, recording and the crossfade the way the decoder does")
  func validateNewFields() throws {
    func problem(_ change: (inout Session) -> Void) -> SessionError? {
      var session = everythingSession()
      change(&session)
      do {
        try session.validate(source: "v.json")
        return nil
      } catch {
        return error
      }
    }
    func expectProblem(
      _ location: String, _ fragment: String, sourceLocation: SourceLocation = #_sourceLocation,
      _ change: (inout Session) -> Void
    ) {
      let error = problem(change)
      #expect(error?.file == "v.json", sourceLocation: sourceLocation)
      #expect(error?.location == location, "\(String(describing: error))", sourceLocation: sourceLocation)
      #expect(
        error?.message.contains(fragment) == true, "\(String(describing: error))",
        sourceLocation: sourceLocation)
    }
    #expect(problem { _ in } == nil)
    expectProblem("effects[2].name", "duplicate effect name 'horn' (also effects[0])") {
      $0.effects[2].name = "horn"
    }
    expectProblem("effects[1].name", "the effect name \"All\" is reserved") { $0.effects[1].name = "All" }
    expectProblem("effects[0].name", "invalid effect name \"a b\": a space is not allowed") {
      $0.effects[0].name = "a b"
    }
    expectProblem("effects[0].name", "an effect name must not be empty") { $0.effects[0].name = "" }
    expectProblem("effects[1].file", "must not be empty") { $0.effects[1].file = "" }
    expectProblem("effects[1].file", "NUL") { $0.effects[1].file = "a\u{0}b" }
    expectProblem("effects[2].volume", "or a level in dB such as \"-6dB\" (got 2.5)") { $0.effects[2].volume = 2.5 }
    expectProblem("effects[2].pan", "must be a number between -1 and 1 (got nan)") { $0.effects[2].pan = .nan }
    expectProblem("options.crossfadeSeconds", "must be a number of seconds from 0.05 to 30 (got 0)") {
      $0.options.crossfadeSeconds = 0
    }
    expectProblem("options.crossfadeSeconds", "(got inf)") { $0.options.crossfadeSeconds = .infinity }
    // Checked even when songs change gaplessly: the value is still saved.
    expectProblem("options.crossfadeSeconds", "(got 31)") {
      $0.options.songChange = .gapless
      $0.options.crossfadeSeconds = 31
    }
    expectProblem("recording.folder", "must not contain a NUL character") { $0.recording.folder = "takes\u{0}" }
    expectProblem("recording.folder", "is too long (4098 bytes; at most 4096)") {
      $0.recording.folder = String(repeating: "é", count: 2049)
    }
    // The edges are allowed, and a stem and an effect may share a name.
    #expect(
      problem {
        $0.options.crossfadeSeconds = 0.05
        $0.recording.folder = String(repeating: "x", count: 4096)
        $0.effects = [EffectSettings(name: $0.stems[0].name, file: "x.wav")]
      } == nil)
    #expect(problem { $0.options.crossfadeSeconds = 30 } == nil)
    // save refuses what validate refuses, and encode never writes an unloadable value as a number.
    var bad = everythingSession()
    bad.options.crossfadeSeconds = .nan
    let text = SessionFile.encode(bad)
    #expect(text.contains("\"crossfadeSeconds\" : null"))
    #expect(throws: SessionError.self) { try decode(text) }
    let folder = try TemporaryFolder()
    #expect(throws: SessionError.self) { try SessionFile.save(bad, to: folder.file("bad.json")) }
    #expect(folder.entries().isEmpty)
  }

  @Test("validate() checks the tempo, loop regions, crossfade and pitch the way the decoder does")
  func validateMusicalFields() throws {
    func problem(_ change: (inout Session) -> Void) -> SessionError? {
      var session = everythingSession()
      change(&session)
      do {
        try session.validate(source: "v.json")
        return nil
      } catch {
        return error
      }
    }
    func expectProblem(
      _ location: String, _ fragment: String, sourceLocation: SourceLocation = #_sourceLocation,
      _ change: (inout Session) -> Void
    ) {
      let error = problem(change)
      #expect(error?.file == "v.json", sourceLocation: sourceLocation)
      #expect(error?.location == location, "\(String(describing: error))", sourceLocation: sourceLocation)
      #expect(
        error?.message.contains(fragment) == true, "\(String(describing: error))",
        sourceLocation: sourceLocation)
    }
    expectProblem("tempo.bpm", "must be a number of beats per minute from 20 to 400 (got 19.5)") {
      $0.tempo?.bpm = 19.5
    }
    expectProblem("tempo.bpm", "(got 400.5)") { $0.tempo?.bpm = 400.5 }
    expectProblem("tempo.bpm", "(got nan)") { $0.tempo = Tempo(bpm: .nan) }
    expectProblem("tempo.beatsPerBar", "must be an integer number of beats per bar from 1 to 32 (got 0)") {
      $0.tempo?.beatsPerBar = 0
    }
    expectProblem("tempo.beatsPerBar", "(got 33)") { $0.tempo?.beatsPerBar = 33 }
    expectProblem("stems[0].loopStart", "must be a number of seconds in the stem's audio file from 0 to 86400 (got -1)") {
      $0.stems[0].loopStart = -1
    }
    expectProblem("stems[1].loopEnd", "(got 86400.5)") { $0.stems[1].loopEnd = 86400.5 }
    expectProblem("stems[1].loopEnd", "(got inf)") { $0.stems[1].loopEnd = .infinity }
    expectProblem(
      "stems[0].loopEnd",
      "is missing: a loop region needs both \"loopStart\" and \"loopEnd\" (only \"loopStart\" is given"
    ) {
      $0.stems[0].loopEnd = nil
    }
    expectProblem("stems[1].loopStart", "(only \"loopEnd\" is given; remove it for no loop region)") {
      $0.stems[1].loopStart = nil
    }
    expectProblem("stems[0].loopEnd", "must be greater than loopStart (got loopStart 9.25, loopEnd 9.25)") {
      $0.stems[0].loopStart = 9.25
    }
    expectProblem("stems[0].loopEnd", "(got loopStart 9.25, loopEnd 1.25)") {
      $0.stems[0].loopStart = 9.25
      $0.stems[0].loopEnd = 1.25
    }
    expectProblem(
      "stems[1].crossfade",
      "must be a number of seconds from 0 to 1 (the crossfade at the loop seam; "
        + "0 for none) (got 1.5)"
    ) { $0.stems[1].crossfade = 1.5 }
    expectProblem("stems[0].crossfade", "(got -0.001)") { $0.stems[0].crossfade = -0.001 }
    expectProblem("stems[0].pitch", "must be a number of semitones from -24 to 24 (got 24.5)") { $0.stems[0].pitch = 24.5 }
    // Checked in varispeed mode as well: the value is still saved.
    expectProblem("stems[1].pitch", "(got -inf)") {
      $0.stems[1].mode = .varispeed
      $0.stems[1].pitch = -.infinity
    }
    expectProblem("stems[1].pitch", "a pitch shift needs \"mode\" : \"stretch\"") { $0.stems[1].pitch = 2 }
    // The edges are allowed, and so is no tempo and no loop region.
    #expect(
      problem {
        $0.tempo = Tempo(bpm: 400, beatsPerBar: 1)
        $0.stems[0].loopStart = 86399.999
        $0.stems[0].loopEnd = 86400
        $0.stems[0].crossfade = 0
        $0.stems[0].pitch = 24
      } == nil)
    #expect(
      problem {
        $0.tempo = nil
        $0.stems[0].loopStart = nil
        $0.stems[0].loopEnd = nil
      } == nil)

    // encode writes whatever the model holds; a file with half a loop region fails to load with
    // exactly the error validate() gives, and save refuses it.
    var half = everythingSession()
    half.stems[1].loopEnd = nil
    let text = SessionFile.encode(half)
    #expect(text.contains("\"loopStart\" : 0, \"crossfade\" : 1"))
    var decoded: SessionError?
    do { _ = try SessionFile.decode(Data(text.utf8), source: "v.json") } catch { decoded = error }
    var validated: SessionError?
    do { try half.validate(source: "v.json") } catch { validated = error }
    #expect(decoded?.location == "stems[1].loopEnd")
    #expect(decoded?.location == validated?.location)
    #expect(decoded?.message == validated?.message)
    var reversed = everythingSession()
    reversed.stems[0].loopStart = 10
    do { _ = try SessionFile.decode(Data(SessionFile.encode(reversed).utf8), source: "v.json") } catch { decoded = error }
    do { try reversed.validate(source: "v.json") } catch { validated = error }
    #expect(decoded?.location == "stems[0].loopEnd")
    #expect(decoded?.message == validated?.message)
    var badTempo = everythingSession()
    badTempo.tempo?.beatsPerBar = 64
    do { _ = try SessionFile.decode(Data(SessionFile.encode(badTempo).utf8), source: "v.json") } catch { decoded = error }
    do { try badTempo.validate(source: "v.json") } catch { validated = error }
    #expect(decoded?.location == "tempo.beatsPerBar")
    #expect(decoded?.message == validated?.message)
    let folder = try TemporaryFolder()
    #expect(throws: SessionError.self) { try SessionFile.save(half, to: folder.file("half.json")) }
    #expect(folder.entries().isEmpty)
  }

  @Test("the error description names file, location, message and position")
  func errorDescription() {
    let error = SessionError(
      file: "Sessions/x.json", location: "stems[2].pan", line: 9, column: 5,
      message: "must be a number between -1 and 1 (got 7)")
    #expect(
      error.description
        == "Sessions/x.json: stems[2].pan: must be a number between -1 and 1 (got 7) (line 9, column 5)")
    let whole = SessionError(file: "a.json", message: "no such file")
    #expect(whole.description == "a.json: no such file")
  }
}
