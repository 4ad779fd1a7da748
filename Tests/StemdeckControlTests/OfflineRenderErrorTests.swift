import Foundation
import StemdeckAudioFile
import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import Testing

@Suite struct OfflineRenderErrorTests {
  static func session(in folder: TemporaryFolder, loops: Int = 0) throws -> Session {
    try writeAudio(folder.file("a.wav"), format: .wavFloat, channels: [Signal.ramp(frames: 4800)])
    var s = Session()
    s.stems = [stem("a", "a.wav") { $0.loops = loops }]
    return s
  }

  func render(
    _ session: Session, _ folder: TemporaryFolder, output: String = "out.wav",
    duration: Double? = nil, sampleRate: Int = 48000
  ) throws(MixerError) -> OfflineRenderer.Summary {
    try OfflineRenderer.render(
      session: session, sessionPath: folder.file("s.stemdeck"), outputPath: folder.file(output),
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

  @Test("unknown output extensions are rejected before anything is written", arguments: ["out.mp3", "out", "out.wav.txt", "out.m4a"])
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
    expectMixerError(["nothing to render", "saved position (0:05.000)", "past its end (0:00.100)", "--from 0"]) { () throws(MixerError) in
      _ = try render(past, folder)
    }
    expectMixerError(["nothing to render: --from 0:01.000 is at or past the session's end (0:00.100)"]) { () throws(MixerError) in
      _ = try OfflineRenderer.render(
        session: session, sessionPath: folder.file("s.stemdeck"), outputPath: folder.file("out.wav"),
        duration: nil, from: 1)
    }
    for bad in [-1, Double.nan, 2_000_000] {
      expectMixerError(["--from must be a number of seconds from 0 to 1000000"]) { () throws(MixerError) in
        _ = try OfflineRenderer.render(
          session: session, sessionPath: folder.file("s.stemdeck"), outputPath: folder.file("out.wav"),
          duration: nil, from: bad)
      }
    }
    var missing = session
    missing.stems.append(stem("gone", "gone.flac"))
    expectMixerError([folder.file("s.stemdeck"), "stems[1]", "gone", folder.file("gone.flac")]) { () throws(MixerError) in
      _ = try render(missing, folder)
    }
    expectMixerError(["no/such/dir/out.wav: the folder ", "no/such/dir does not exist; make it first"]) { () throws(MixerError) in
      _ = try render(session, folder, output: "no/such/dir/out.wav")
    }
  }

  /// A one-second ramp panned hard left (so the left channel is the ramp), saved at 0.5 s.
  static func rampSavedHalfWay(in folder: TemporaryFolder) throws -> (session: Session, ramp: [Float]) {
    try writeAudio(folder.file("r.wav"), format: .wavFloat, channels: [Signal.ramp(frames: 48000)])
    var session = Session()
    session.stems = [stem("r", "r.wav") { $0.pan = -1 }]
    session.position = 0.5
    return (session, try readAudio(folder.file("r.wav")).samples)
  }

  @Test("a render from a saved position starts there, after a 5 ms fade-in")
  func renderFromPosition() throws {
    let folder = try TemporaryFolder()
    let (session, ramp) = try Self.rampSavedHalfWay(in: folder)
    let (summary, output) = try renderOffline(session, in: folder)
    #expect(summary.frames == 24000)
    #expect(firstMismatch(output.left[241...], ramp[24241...]) == nil)
    #expect(abs(output.left[0]) < 1e-6, "fades in from silence")
  }

  @Test("--from overrides the saved position: from 0 renders the whole song, from 0.25 its last 0.75 s")
  func renderFromOverridesSavedPosition() throws {
    let folder = try TemporaryFolder()
    let (session, ramp) = try Self.rampSavedHalfWay(in: folder)
    let path = folder.file("s.stemdeck")
    let whole = try OfflineRenderer.render(
      session: session, sessionPath: path, outputPath: folder.file("whole.wav"),
      duration: nil, from: 0)
    #expect(whole.frames == 48000 && whole.start == 0)
    let left = try readAudio(folder.file("whole.wav")).channel(0)
    #expect(firstMismatch(left[...], ramp[...]) == nil, "from 0 plays the ramp from its first sample, without a fade")
    let tail = try OfflineRenderer.render(
      session: session, sessionPath: path, outputPath: folder.file("tail.wav"),
      duration: nil, from: 0.25)
    #expect(tail.frames == 36000 && tail.start == 0.25)
    let tailLeft = try readAudio(folder.file("tail.wav")).channel(0)
    #expect(firstMismatch(tailLeft[241...], ramp[12241...]) == nil)
  }

  @Test("other sample rates: a 48 kHz stem rendered at 96 kHz lasts as long and keeps its pitch")
  func otherEngineRate() throws {
    let folder = try TemporaryFolder()
    try writeAudio(
      folder.file("s.wav"), format: .wavFloat,
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
