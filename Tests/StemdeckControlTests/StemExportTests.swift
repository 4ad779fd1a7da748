import Foundation
import StemdeckAudioFile
import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import Testing

// `render --stems DIR`: every stem to its own file in the same pass as the master.

@Suite struct StemExportTests {
  /// Three stems of different shapes (mono panned, stereo, a late start), master volume 0.7.
  static func session(in folder: TemporaryFolder) throws -> Session {
    try writeAudio(
      folder.file("bass.wav"), format: .wavFloat,
      channels: [Signal.sine(frequency: 110, sampleRate: 48000, frames: 96_000, amplitude: 0.4)])
    try writeAudio(
      folder.file("pad.flac"), format: .flac, sampleRate: 44100,
      channels: [Signal.noise(frames: 88_200, amplitude: 0.2, seed: 1), Signal.noise(frames: 88_200, amplitude: 0.2, seed: 2)])
    try writeAudio(
      folder.file("lead.wav"), format: .wavFloat,
      channels: [
        Signal.sine(frequency: 880, sampleRate: 48000, frames: 48_000, amplitude: 0.3),
        Signal.sine(frequency: 660, sampleRate: 48000, frames: 48_000, amplitude: 0.3)
      ])
    var s = Session()
    s.masterVolume = 0.7
    s.stems = [
      stem("bass", "bass.wav") { $0.pan = -0.4 }, stem("pad", "pad.flac") { $0.volume = 0.5 },
      stem("lead", "lead.wav") { $0.startOffset = 0.25 }
    ]
    return s
  }

  /// Largest |master − Σ stems| over both channels, in dBFS.
  static func residual(master: Stereo, stems: [Stereo]) -> Double {
    var worst = 0.0
    for i in 0..<master.count {
      var l = Double(master.left[i]), r = Double(master.right[i])
      for s in stems { l -= Double(s.left[i]); r -= Double(s.right[i]) }
      worst = max(worst, abs(l), abs(r))
    }
    return worst == 0 ? -.infinity : 20 * log10(worst)
  }

  @Test(
    "the stem files are as long as the master, named after the stems, and sum to it to -100 dBFS (normalised too, and through the true-peak limiter)",
    arguments: ["plain", "normalized", "limited"])
  func stemsSumToMaster(mode: String) throws {
    let folder = try TemporaryFolder()
    let session = try Self.session(in: folder)
    let normalize: OfflineRenderer.Normalize? =
      switch mode {
      case "normalized": .init(target: -16)
      case "limited": .init(target: -6, truePeakCeiling: -1)
      default: nil
      }
    let summary = try OfflineRenderer.render(
      session: session, sessionPath: folder.file("s.stemdeck"), outputPath: folder.file("mix.wav"), duration: nil,
      normalize: normalize, stemsFolder: folder.file("stems"))
    // The limiter's gain curve is the master's, applied to every stem.
    #expect((summary.normalization?.limiter != nil) == (mode == "limited"))
    if mode == "limited" {
      #expect(try #require(summary.normalization?.limiter).maxReduction > 1)
      let meter = try LoudnessMeter(sampleRate: 48000)
      try meter.add(try readAudio(folder.file("mix.wav")).samples)
      #expect(meter.loudness.truePeakDecibels <= -1.0)
    }
    let master = Stereo(try readAudio(folder.file("mix.wav")))
    #expect(master.count == summary.frames)
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.file("stems")).sorted() == ["bass.wav", "lead.wav", "pad.wav"])
    var stems: [Stereo] = []
    for name in ["bass", "pad", "lead"] {
      let audio = try readAudio(folder.file("stems/\(name).wav"))
      #expect(audio.frames == master.count, "\(name)")
      #expect(audio.info.sampleRate == 48000)
      stems.append(Stereo(audio))
    }
    #expect(peak(stems[0].left) > 0.1 && peak(stems[1].right) > 0.01 && peak(stems[2].left) > 0.1, "every stem has sound")
    // The late stem is silent before its start in its own file too (aligned, not shifted).
    #expect(peak(stems[2].left[0..<11_900]) == 0)
    #expect(peak(stems[2].left[12_100..<13_000]) > 0.05)
    let residual = Self.residual(master: master, stems: stems)
    #expect(residual < -100, "master − Σ stems peaks at \(residual) dBFS")
  }

  @Test(
    "a stem's tap is written once a block, not cleared and added to: a stem starting and ending inside a block is exactly silent outside its span, and at master volume 1 the master is the stems' float sum bit for bit",
    arguments: [1.0, 0.7])
  func tapsWrittenOnce(masterVolume: Double) throws {
    let folder = try TemporaryFolder()
    var session = try Self.session(in: folder)
    session.masterVolume = masterVolume
    // lead: frames 12,000 to 60,000, both inside a 1,024-frame block.
    let summary = try OfflineRenderer.render(
      session: session, sessionPath: folder.file("s.stemdeck"), outputPath: folder.file("mix.wav"), duration: nil,
      stemsFolder: folder.file("stems"))
    let master = Stereo(try readAudio(folder.file("mix.wav")))
    let stems = try ["bass", "pad", "lead"].map { Stereo(try readAudio(folder.file("stems/\($0).wav"))) }
    #expect(master.count == summary.frames && master.count == 96_000)
    let lead = stems[2]
    #expect(peak(lead.left[0..<12_000]) == 0 && peak(lead.right[0..<12_000]) == 0, "silent before its start")
    #expect(peak(lead.left[60_000...]) == 0 && peak(lead.right[60_000...]) == 0, "silent after its end")
    #expect(peak(lead.left[12_000..<12_100]) > 0 && peak(lead.left[59_900..<60_000]) > 0, "sounds up to its ends")
    if masterVolume == 1 {
      // The master stage is identity: the master is (bass + pad) + lead as the mix summed them.
      var differing = 0
      for i in 0..<master.count {
        if master.left[i] != stems[0].left[i] + stems[1].left[i] + stems[2].left[i] { differing += 1 }
        if master.right[i] != stems[0].right[i] + stems[1].right[i] + stems[2].right[i] { differing += 1 }
      }
      #expect(differing == 0)
    } else {
      let residual = Self.residual(master: master, stems: stems)
      #expect(residual < -100, "master − Σ stems peaks at \(residual) dBFS")
    }
  }

  @Test(
    "live inputs on the master get their own files (--input NAME=FILE, or silent); an input on a bus is in the bus's; the files sum to the master to -100 dBFS",
    arguments: ["plain", "limited"])
  func inputsSumToMaster(mode: String) throws {
    let folder = try TemporaryFolder()
    var session = try Self.session(in: folder)
    try writeAudio(
      folder.file("voice.wav"), format: .wavFloat,
      channels: [Signal.sine(frequency: 330, sampleRate: 48000, frames: 72_000, amplitude: 0.5)])
    try writeAudio(
      folder.file("synth.wav"), format: .wavFloat,
      channels: [Signal.noise(frames: 96_000, amplitude: 0.3, seed: 3), Signal.noise(frames: 96_000, amplitude: 0.3, seed: 4)])
    var bus = BusSettings(name: "band")
    bus.volume = 0.8
    session.buses = [bus]
    session.stems[0].bus = "band"
    var mic = InputSettings(name: "mic", channels: .mono)
    mic.volume = 0.8
    mic.pan = -0.3
    mic.eq.highPass = EQHighPass(frequency: 120)
    var keys = InputSettings(name: "keys", channels: .stereo)
    keys.bus = "band"
    session.inputs = [mic, keys, InputSettings(name: "idle", channels: .mono)]
    let summary = try OfflineRenderer.render(
      session: session, sessionPath: folder.file("s.stemdeck"), outputPath: folder.file("mix.wav"), duration: nil,
      normalize: mode == "limited" ? .init(target: -6, truePeakCeiling: -1) : nil, stemsFolder: folder.file("stems"),
      inputs: [RenderInput(name: "mic", path: folder.file("voice.wav")), RenderInput(name: "keys", path: folder.file("synth.wav"))])
    let names = ["pad", "lead", "band", "mic", "idle"]
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.file("stems")).sorted() == names.sorted().map { $0 + ".wav" })
    let master = Stereo(try readAudio(folder.file("mix.wav")))
    let files = try names.map { Stereo(try readAudio(folder.file("stems/\($0).wav"))) }
    #expect(files.allSatisfy { $0.count == master.count && master.count == summary.frames })
    #expect(peak(files[3].left) > 0.1 && peak(files[4].left) == 0 && peak(files[4].right) == 0, "mic sounds, idle is silent")
    let residual = Self.residual(master: master, stems: files)
    #expect(residual < -100, "master − Σ files peaks at \(residual) dBFS")
  }

  @Test("a render stopped after the stem writer thread has written chunks: its thread ends, no temporary is left, previous stem files stay")
  func cancelledWhileWriting() throws {
    let folder = try TemporaryFolder()
    let session = try Self.session(in: folder)
    try FileManager.default.createDirectory(atPath: folder.file("out"), withIntermediateDirectories: false)
    let previous = Data("previous".utf8)
    try previous.write(to: URL(fileURLWithPath: folder.file("out/pad.wav")))
    // 2 s = 94 blocks of 1,024 frames; chunks of 32,768 frames go to the writer after blocks 32 and 64.
    var asked = 0
    expectMixerError(["interrupted"]) { () throws(MixerError) in
      _ = try OfflineRenderer.render(
        session: session, sessionPath: folder.file("s.stemdeck"), outputPath: folder.file("mix.wav"),
        duration: nil, stemsFolder: folder.file("out"),
        cancelled: {
          asked += 1; return asked > 80
        })
    }
    #expect(asked == 81)
    #expect(try Data(contentsOf: URL(fileURLWithPath: folder.file("out/pad.wav"))) == previous)
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.file("out")) == ["pad.wav"], "no temporary left")
    #expect(!FileManager.default.fileExists(atPath: folder.file("mix.wav")))
    // The same render to the end writes every file in full.
    let summary = try OfflineRenderer.render(
      session: session, sessionPath: folder.file("s.stemdeck"), outputPath: folder.file("mix.wav"),
      duration: nil, stemsFolder: folder.file("out"))
    for name in ["bass", "pad", "lead"] {
      #expect(try readAudio(folder.file("out/\(name).wav")).frames == summary.frames, "\(name)")
    }
  }

  @Test("solo and mute hold in the stem files as in the master")
  func soloAndMute() throws {
    let folder = try TemporaryFolder()
    var session = try Self.session(in: folder)
    session.stems[0].solo = true
    session.stems[1].solo = true
    session.stems[1].mute = true
    _ = try OfflineRenderer.render(
      session: session, sessionPath: folder.file("s.stemdeck"), outputPath: folder.file("mix.flac"),
      duration: nil, stemsFolder: folder.file("out"))
    let bass = Stereo(try readAudio(folder.file("out/bass.flac")))
    let pad = Stereo(try readAudio(folder.file("out/pad.flac")))
    let lead = Stereo(try readAudio(folder.file("out/lead.flac")))
    #expect(peak(bass.left) > 0.1)
    #expect(peak(pad.left) == 0 && peak(lead.left) == 0 && peak(lead.right) == 0)
    let master = Stereo(try readAudio(folder.file("mix.flac")))
    #expect(maxAbsError(master.left, bass.left) < 1e-6)
  }

  @Test("--stems that is a file is refused before anything is written; a failed render leaves previous stem files")
  func refusals() throws {
    let folder = try TemporaryFolder()
    let session = try Self.session(in: folder)
    try Data("x".utf8).write(to: URL(fileURLWithPath: folder.file("notafolder")))
    expectMixerError(["--stems", "notafolder", "is not a folder"]) { () throws(MixerError) in
      _ = try OfflineRenderer.render(
        session: session, sessionPath: folder.file("s.stemdeck"), outputPath: folder.file("mix.wav"),
        duration: nil, stemsFolder: folder.file("notafolder"))
    }
    #expect(!FileManager.default.fileExists(atPath: folder.file("mix.wav")))
    try FileManager.default.createDirectory(atPath: folder.file("out"), withIntermediateDirectories: false)
    let previous = Data("previous".utf8)
    try previous.write(to: URL(fileURLWithPath: folder.file("out/bass.wav")))
    var asked = 0
    expectMixerError(["interrupted"]) { () throws(MixerError) in
      _ = try OfflineRenderer.render(
        session: session, sessionPath: folder.file("s.stemdeck"), outputPath: folder.file("mix.wav"),
        duration: nil, stemsFolder: folder.file("out"),
        cancelled: {
          asked += 1; return asked > 20
        })
    }
    #expect(try Data(contentsOf: URL(fileURLWithPath: folder.file("out/bass.wav"))) == previous)
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.file("out")) == ["bass.wav"], "no temporary left")
    // A stem file that would land on the master itself, or on an input, is refused.
    expectMixerError(["--stems", "stem 'pad' would be written over --output", "choose another folder"]) { () throws(MixerError) in
      _ = try OfflineRenderer.render(
        session: session, sessionPath: folder.file("s.stemdeck"), outputPath: folder.file("out/pad.wav"),
        duration: nil, stemsFolder: folder.file("out"))
    }
    expectMixerError(["--stems", "bass.wav: is the audio file of stem 'bass'", "choose another --stems folder"]) { () throws(MixerError) in
      _ = try OfflineRenderer.render(
        session: session, sessionPath: folder.file("s.stemdeck"), outputPath: folder.file("mix.wav"),
        duration: nil, stemsFolder: folder.path)
    }
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.file("out")) == ["bass.wav"])
  }

  @Test("a render that refuses (saved position past the end) or is interrupted leaves no --stems folder it made")
  func refusedRenderMakesNoFolder() throws {
    let folder = try TemporaryFolder()
    var session = try Self.session(in: folder)
    session.position = 60
    expectMixerError(["nothing to render: the session's saved position (1:00.000) is at or past its end"]) {
      () throws(MixerError) in
      _ = try OfflineRenderer.render(
        session: session, sessionPath: folder.file("s.stemdeck"), outputPath: folder.file("mix.wav"),
        duration: nil, stemsFolder: folder.file("fresh"))
    }
    #expect(!FileManager.default.fileExists(atPath: folder.file("fresh")), "the refused render left its --stems folder")
    session.position = 0
    var asked = 0
    expectMixerError(["interrupted"]) { () throws(MixerError) in
      _ = try OfflineRenderer.render(
        session: session, sessionPath: folder.file("s.stemdeck"), outputPath: folder.file("mix.wav"),
        duration: nil, stemsFolder: folder.file("fresh"),
        cancelled: {
          asked += 1
          return asked > 20
        })
    }
    #expect(!FileManager.default.fileExists(atPath: folder.file("fresh")), "the interrupted render left its --stems folder")
    // A folder that was there stays, even empty.
    try FileManager.default.createDirectory(atPath: folder.file("kept"), withIntermediateDirectories: false)
    expectMixerError(["interrupted"]) { () throws(MixerError) in
      _ = try OfflineRenderer.render(
        session: session, sessionPath: folder.file("s.stemdeck"), outputPath: folder.file("mix.wav"),
        duration: nil, stemsFolder: folder.file("kept"), cancelled: { true })
    }
    #expect(FileManager.default.fileExists(atPath: folder.file("kept")))
  }

  @Test("a limited render names its passes in order (measuring, limiter pass 1…, writing); each pass's progress stays in its span")
  func passesInOrder() throws {
    let folder = try TemporaryFolder()
    let session = try Self.session(in: folder)
    final class Log: @unchecked Sendable {
      var passes: [OfflineRenderer.Pass] = []
      var outside: [(String, Double)] = []
    }
    let log = Log()
    _ = try OfflineRenderer.render(
      session: session, sessionPath: folder.file("s.stemdeck"), outputPath: folder.file("mix.wav"), duration: nil,
      normalize: .init(target: -6, truePeakCeiling: -1),
      progress: { f in
        if let p = log.passes.last, !(p.span.lowerBound - 1e-9...p.span.upperBound + 1e-9).contains(f) { log.outside.append((p.name, f)) }
      },
      pass: { log.passes.append($0) })
    let names = log.passes.map(\.name)
    #expect(names.first == "measuring" && names.last == "writing" && names.count >= 3, "\(names)")
    #expect(names.dropFirst().dropLast() == ArraySlice((1...max(1, names.count - 2)).map { "limiter pass \($0)" }), "\(names)")
    #expect(log.outside.isEmpty, "progress outside its pass's span: \(log.outside.prefix(5))")
    // The spans tile the bar from 0, in order, and the last ends at 1.
    #expect(log.passes.first?.span.lowerBound == 0 && log.passes.last?.span.upperBound == 1)
    for (a, b) in zip(log.passes, log.passes.dropFirst()) { #expect(a.span.upperBound <= b.span.lowerBound + 1e-9, "\(a) then \(b)") }
  }
}
