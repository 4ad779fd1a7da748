import Foundation
import StemdeckAudioFile
import StemdeckControl
import StemdeckSession
import Testing

@Suite struct OfflineRenderErrorTests {
  static func session(in folder: TemporaryFolder, loops: Int = 0) throws -> Session {
    try writeAudio(folder.file("a.wav"), format: .wavFloat, channels: [Signal.ramp(frames: 4800)])
    var s = Session()
    s.stems = [stem("a", "a.wav") { $0.loops = loops }]
    return s
  }

  func render(_ session: Session, _ folder: TemporaryFolder, output: String = "out.wav",
              duration: Double? = nil, sampleRate: Int = 48000) throws(MixerError) -> OfflineRenderer.Summary {
    try OfflineRenderer.render(session: session, sessionPath: folder.file("s.stemdeck"), outputPath: folder.file(output),
                               duration: duration, sampleRate: sampleRate)
  }

  @Test("a stem looping forever needs --duration")
  func endlessNeedsDuration() throws {
    let folder = try TemporaryFolder()
    let session = try Self.session(in: folder, loops: -1)
    expectMixerError(["--duration", folder.file("s.stemdeck"), "loops forever"]) { () throws(MixerError) in
      _ = try render(session, folder)
    }
    #expect(!FileManager.default.fileExists(atPath: folder.file("out.wav")), "no output file is left behind")
    // With a duration it renders that long.
    let summary = try render(session, folder, duration: 0.5)
    #expect(summary.frames == 24000)
    let out = try readAudio(folder.file("out.wav"))
    #expect(out.frames == 24000)
  }

  @Test("unknown output extensions are rejected before anything is written", arguments: ["out.mp3", "out", "out.wav.txt", "out.ogg"])
  func unknownExtension(output: String) throws {
    let folder = try TemporaryFolder()
    let session = try Self.session(in: folder)
    expectMixerError([folder.file(output), "unknown output format", ".wav", ".flac", ".aiff"]) { () throws(MixerError) in
      _ = try render(session, folder, output: output)
    }
    #expect(!FileManager.default.fileExists(atPath: folder.file(output)))
  }

  @Test("other bad render requests name what is wrong")
  func otherErrors() throws {
    let folder = try TemporaryFolder()
    let session = try Self.session(in: folder)
    for bad in [0, -1, Double.nan, .infinity, 100_000] {
      expectMixerError(["--duration must be a number of seconds"]) { () throws(MixerError) in
        _ = try render(session, folder, duration: bad)
      }
    }
    expectMixerError(["sample rate must be between 8000 and 384000 Hz (got 1000)"]) { () throws(MixerError) in
      _ = try render(session, folder, sampleRate: 1000)
    }
    expectMixerError([folder.file("s.stemdeck"), "no stems"]) { () throws(MixerError) in
      _ = try render(Session(), folder)
    }
    var past = session
    past.position = 5
    expectMixerError(["nothing to render"]) { () throws(MixerError) in _ = try render(past, folder) }
    var missing = session
    missing.stems.append(stem("gone", "gone.flac"))
    expectMixerError([folder.file("s.stemdeck"), "stems[1]", "gone", folder.file("gone.flac")]) { () throws(MixerError) in
      _ = try render(missing, folder)
    }
    expectMixerError(["cannot create", "no/such/dir/out.wav"]) { () throws(MixerError) in
      _ = try render(session, folder, output: "no/such/dir/out.wav")
    }
  }

  @Test("a render from a saved position starts there, after a 5 ms fade-in")
  func renderFromPosition() throws {
    let folder = try TemporaryFolder()
    try writeAudio(folder.file("r.wav"), format: .wavFloat, channels: [Signal.ramp(frames: 48000)])
    let ramp = try readAudio(folder.file("r.wav")).samples
    var session = Session()
    session.stems = [stem("r", "r.wav") { $0.pan = -1 }]
    session.position = 0.5
    let (summary, output) = try renderOffline(session, in: folder)
    #expect(summary.frames == 24000)
    #expect(firstMismatch(output.left[241...], ramp[24241...]) == nil)
    #expect(abs(output.left[0]) < 1e-6, "fades in from silence")
  }

  @Test("other sample rates: a 48 kHz stem rendered at 96 kHz lasts as long and keeps its pitch")
  func otherEngineRate() throws {
    let folder = try TemporaryFolder()
    try writeAudio(folder.file("s.wav"), format: .wavFloat,
                   channels: [Signal.sine(frequency: 1000, sampleRate: 48000, frames: 24000, amplitude: 0.5)])
    var session = Session()
    session.stems = [stem("s", "s.wav") { $0.pan = -1 }]
    let (summary, output) = try renderOffline(session, in: folder, sampleRate: 96000)
    #expect(summary.frames == 48000)
    #expect(summary.sampleRate == 96000)
    let frequency = estimatedFrequency(output.left, sampleRate: 96000, in: 4800..<43200)
    #expect(abs(frequency - 1000) < 0.5, "estimated \(frequency) Hz")
  }
}
