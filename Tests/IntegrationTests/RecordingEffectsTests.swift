import Foundation
import StemdeckAudioFile
import StemdeckTestSupport
import Testing

/// Recording takes and firing sound effects against a real private jackd.
@Suite("recording and sound effects", .serialized, .timeLimit(.minutes(2)))
struct RecordingEffectsTests {
  /// Zero crossings per second / 2: a rough frequency estimate of one channel.
  func frequency(_ audio: AudioData, channel: Int, from: Int, to: Int) -> Double {
    var crossings = 0
    for f in (from + 1)..<to where (audio.sample(f - 1, channel) < 0) != (audio.sample(f, channel) < 0) { crossings += 1 }
    return Double(crossings) / 2 / (Double(to - from) / Double(audio.sampleRate))
  }

  @Test("a command reaches the audio thread within one period (latency)")
  func commandLatency() async throws {
    let server = try await PrivateJackServer(period: 128)
    defer { server.stop() }
    let deck = try StemdeckProcess(server: server)
    defer { deck.kill() }
    let out = try await deck.run("latency")
    let line = try #require(out.first { $0.hasPrefix("latency:") }, "\(out)")
    print(line)
    // The renderer drains commands at the start of every period: the worst of 10 is one period,
    // or two when a send falls right at a period boundary on this loaded machine.
    #expect(line.contains("within 1 period") || line.contains("within 2 periods"), "\(line)")
    #expect(try await deck.finish() == 0)
  }

  /// Waits until the take `name` holds `seconds` by its own clock (JACK frames, `record status`),
  /// not the wall clock: a dummy server on a loaded machine runs behind it (a take of 1.08 s after
  /// a 'wait 1.2', CI 2026-12-02; one under 1.2 s after a 'wait 1.5', CI 2026-12-03). Returns the
  /// length last reported.
  @discardableResult
  static func waitForTake(_ recorder: StemdeckProcess, _ name: String, seconds: Double) async throws -> Double {
    var length = 0.0
    let reached = try await eventually(timeout: 10, interval: 0.05) {
      let line = try await recorder.run("record status").first { $0.hasPrefix("recording '\(name)': ") } ?? ""
      let clock = line.dropFirst("recording '\(name)': ".count).prefix { $0 != " " }.split(separator: ":")
      length = clock.count == 2 ? (Double(clock[0]) ?? 0) * 60 + (Double(clock[1]) ?? 0) : 0
      return length >= seconds
    }
    try #require(reached, "the take '\(name)' never reached \(seconds) s: \(recorder.transcript.suffix(2000))")
    return length
  }

  @Test("another stemdeck's master recorded into a take: the right signal, kept as a stem")
  func recordFromAnotherClient() async throws {
    let dir = try IntegrationTempDir()
    let server = try await PrivateJackServer()
    defer { server.stop() }
    try writeSine(dir.file("tone.wav"), sampleRate: 48000, seconds: 1, frequencies: [440, 440], amplitude: 0.5)
    try writeSession(dir.file("source.json"), stems: [SessionStem(name: "tone", file: "tone.wav", pan: 0, loops: -1)])
    try writeSession(dir.file("take.json"), stems: [])
    let source = try StemdeckProcess(server: server, session: dir.file("source.json"), extra: ["--name", "source"])
    defer { source.kill() }
    let recorder = try StemdeckProcess(server: server, session: dir.file("take.json"), extra: ["--name", "recorder"])
    defer { recorder.kill() }
    try await source.run("play")
    try await recorder.run("record t1 from source:master_L source:master_R")
    try await Self.waitForTake(recorder, "t1", seconds: 1.5)
    try await recorder.run("record stop")
    let recorded = await recorder.waitForLine(containing: "take 't1' recorded", timeout: 5)
    #expect(recorded != nil, "\(recorder.transcript)")
    let stems = try await recorder.run("stems")
    #expect(stems.contains { $0.hasPrefix("t1 ") }, "\(stems)")
    let take = try readAudio(dir.file("t1.wav"))
    #expect(take.channels == 2)
    #expect(Double(take.frames) / 48000 > 1.2 && Double(take.frames) / 48000 < 2.5, "take length \(take.frames)")
    let f = frequency(take, channel: 0, from: take.frames / 4, to: take.frames * 3 / 4)
    #expect(abs(f - 440) < 3, "recorded frequency \(f)")
    var peak: Float = 0
    for i in (take.frames / 4)..<(take.frames * 3 / 4) { peak = max(peak, abs(take.sample(i, 0))) }
    // The source's balance law leaves a centred stereo stem at full level: 0.5.
    #expect(abs(peak - 0.5) < 0.01, "recorded peak \(peak)")
    #expect(try await recorder.finish() == 0, "\(recorder.transcript)")
  }

  @Test("killing stemdeck while recording leaves a valid take holding what was captured")
  func killWhileRecording() async throws {
    let dir = try IntegrationTempDir()
    let server = try await PrivateJackServer()
    defer { server.stop() }
    try writeSine(dir.file("tone.wav"), sampleRate: 48000, seconds: 1, frequencies: [220], amplitude: 0.4)
    try writeSession(dir.file("source.json"), stems: [SessionStem(name: "tone", file: "tone.wav", loops: -1)])
    try writeSession(dir.file("take.json"), stems: [])
    let source = try StemdeckProcess(server: server, session: dir.file("source.json"), extra: ["--name", "source"])
    defer { source.kill() }
    let recorder = try StemdeckProcess(server: server, session: dir.file("take.json"), extra: ["--name", "recorder"])
    try await source.run("play")
    try await recorder.run("record crash from source:master_L source:master_R")
    try await recorder.run("wait 1.6")
    Foundation.kill(recorder.pid, SIGKILL)
    _ = await eventually(timeout: 3) { !recorder.child.isRunning }
    let file = try SoundFile(readingFrom: dir.file("crash.wav"))
    let seconds = Double(file.info.frameCount) / Double(file.info.sampleRate)
    print("take after kill -9: \(seconds) s valid of ~1.6 s recorded")
    // The header is rewritten every half second: at most that much is lost.
    #expect(seconds >= 0.9, "only \(seconds) s in the take")
    let audio = try readAudio(dir.file("crash.wav"))
    let f = frequency(audio, channel: 0, from: audio.frames / 4, to: audio.frames * 3 / 4)
    #expect(abs(f - 220) < 3, "recorded frequency \(f)")
  }

  @Test("SIGTERM while recording: a clean exit, and the take on disk holds everything up to the signal")
  func terminateWhileRecording() async throws {
    let dir = try IntegrationTempDir()
    let server = try await PrivateJackServer()
    defer { server.stop() }
    try writeSine(dir.file("tone.wav"), sampleRate: 48000, seconds: 1, frequencies: [550], amplitude: 0.4)
    try writeSession(dir.file("source.json"), stems: [SessionStem(name: "tone", file: "tone.wav", loops: -1)])
    try writeSession(dir.file("take.json"), stems: [])
    let source = try StemdeckProcess(server: server, session: dir.file("source.json"), extra: ["--name", "source"])
    defer { source.kill() }
    let recorder = try StemdeckProcess(server: server, session: dir.file("take.json"), extra: ["--name", "recorder"])
    defer { recorder.kill() }
    try await source.run("play")
    try await recorder.run("record term from source:master_L source:master_R")
    let before = try await Self.waitForTake(recorder, "term", seconds: 1.2)
    let signalled = monotonicSeconds()
    recorder.child.send(signal: SIGTERM)
    let status = await recorder.child.waitForExit(timeout: 5)
    #expect(status != nil, "stemdeck did not exit on SIGTERM while recording\n\(recorder.transcript)")
    print(
      "SIGTERM while recording: exit \(status.map(String.init) ?? "-") after \(String(format: "%.2f", monotonicSeconds() - signalled)) s")
    let take = try readAudio(dir.file("term.wav"))
    let seconds = Double(take.frames) / 48000
    // Not just the last half-second flush (1.0 s here): a clean exit drains the ring and closes
    // the file, so the take holds at least what `record status` counted before the signal.
    #expect(seconds >= before - 0.001, "the take holds \(seconds) s; \(before) s were recorded before SIGTERM")
    let f = frequency(take, channel: 0, from: take.frames / 4, to: take.frames * 3 / 4)
    #expect(abs(f - 550) < 3, "recorded frequency \(f)")
  }

  @Test("a full disk while recording: the take stops growing, stays valid with what it holds, and the show goes on")
  func diskFullWhileRecording() async throws {
    let dir = try IntegrationTempDir()
    let server = try await PrivateJackServer()
    defer { server.stop() }
    try writeSine(dir.file("tone.wav"), sampleRate: 48000, seconds: 1, frequencies: [330], amplitude: 0.4)
    try writeSession(dir.file("source.json"), stems: [SessionStem(name: "tone", file: "tone.wav", loops: -1)])
    try writeSession(dir.file("take.json"), stems: [])
    let source = try StemdeckProcess(server: server, session: dir.file("source.json"), extra: ["--name", "source"])
    defer { source.kill() }
    // The file-size limit stands in for a full disk: writes past 400,000 bytes fail (EFBIG, as
    // ENOSPC would), about 1 s of 32-bit float stereo at 48 kHz.
    let limit = 400_000
    let recorder = try StemdeckProcess(
      server: server, session: dir.file("take.json"), extra: ["--name", "recorder"],
      launcher: ["prlimit", "--fsize=\(limit)"])
    defer { recorder.kill() }
    try await source.run("play")
    try await recorder.run("record full from source:master_L source:master_R")
    let failed = await recorder.waitForLine(containing: "recording 'full':", timeout: 6)
    #expect(failed != nil, "no failure reported while recording\n\(recorder.transcript)")
    print("disk full while recording: \(failed ?? "-")")
    // Still alive and answering while the take cannot grow.
    let status = try await recorder.run("status")
    #expect(status.contains { $0.hasPrefix("server:") }, "\(status)")
    try await recorder.run("record stop")
    #expect(await recorder.waitForLine(containing: "take 'full' recorded", timeout: 5) != nil, "\(recorder.transcript)")
    #expect(try await recorder.finish() == 0, "\(recorder.transcript)")
    let size = (try FileManager.default.attributesOfItem(atPath: dir.file("full.wav"))[.size] as? Int) ?? 0
    #expect(size <= limit, "the take grew past the limit: \(size)")
    let take = try readAudio(dir.file("full.wav"))
    let seconds = Double(take.frames) / 48000
    print("take kept: \(seconds) s, \(size) bytes")
    // Everything up to the failed write is there: all but the last partial chunk.
    #expect(seconds > 0.9 && seconds <= Double(limit) / (48000 * 8), "take length \(seconds) s")
    let f = frequency(take, channel: 0, from: take.frames / 4, to: take.frames * 3 / 4)
    #expect(abs(f - 330) < 3, "recorded frequency \(f)")
  }

  @Test("sfx out ports: effects play on sfx_L/sfx_R and not in the master; the setting is saved and the ports go with 'sfx out master'")
  func effectsOnOwnPorts() async throws {
    let dir = try IntegrationTempDir()
    let server = try await PrivateJackServer()
    defer { server.stop() }
    try writeSine(dir.file("blip.wav"), sampleRate: 48000, seconds: 0.3, frequencies: [1000], amplitude: 0.25)
    try writeSine(dir.file("bed.wav"), sampleRate: 48000, seconds: 1, frequencies: [100], amplitude: 0.1)
    try writeSession(dir.file("s.json"), stems: [SessionStem(name: "bed", file: "bed.wav", loops: -1)])
    let deck = try StemdeckProcess(server: server, session: dir.file("s.json"))
    defer { deck.kill() }
    try await deck.run("sfx load blip \(dir.file("blip.wav")); sfx wait; sfx out ports; play")
    #expect(await eventually(timeout: 3) { ((try? await server.ports()) ?? []).contains("stemdeck:sfx_L") }, "no sfx ports")
    let capture = try server.startCapture(
      ports: ["stemdeck:master_L", "stemdeck:sfx_L", "stemdeck:sfx_R"], seconds: 2,
      to: dir.file("fx.wav"), hookDir: dir)
    try await deck.run("wait 0.5")
    try await deck.run("sfx fire blip 1 -1")
    try await deck.run("wait 0.6")
    _ = try await capture.finish(timeout: 10)
    let audio = try readAudio(dir.file("fx.wav"))
    func peak(_ channel: Int) -> Float { (0..<audio.frames).reduce(0) { max($0, abs(audio.sample($1, channel))) } }
    // The 1 kHz blip's amplitude in a channel, averaged over the capture (one DFT bin): a blip that
    // leaked (0.25 for 0.3 s of 2 s) reads about 0.04; the 100 Hz bed and any click of a late
    // period (the sanitizer builds are slow) read under 0.001. Steep sample steps, counted here
    // before, took such a click for the blip.
    func tone1k(_ channel: Int) -> Double {
      var re = 0.0, im = 0.0
      for i in 0..<audio.frames {
        let phase = 2 * Double.pi * 1000 * Double(i) / 48000
        re += Double(audio.sample(i, channel)) * cos(phase)
        im -= Double(audio.sample(i, channel)) * sin(phase)
      }
      return 2 * (re * re + im * im).squareRoot() / Double(max(1, audio.frames))
    }
    // Mono at pan -1: all of it on sfx_L (0.25), none on sfx_R; the master carries only the bed.
    #expect(abs(peak(1) - 0.25) < 0.01, "sfx_L peak \(peak(1))")
    #expect(peak(2) < 1e-6, "sfx_R peak \(peak(2))")
    #expect(tone1k(1) > 0.01, "the blip on sfx_L (1 kHz amplitude \(tone1k(1)))")
    #expect(tone1k(0) < 0.005 && peak(0) < 0.15, "the blip leaked into the master (peak \(peak(0)), 1 kHz amplitude \(tone1k(0)))")
    #expect(peak(0) > 0.05, "the bed should still play on the master (peak \(peak(0)))")
    try await deck.run("save")
    let saved = try String(contentsOfFile: dir.file("s.json"), encoding: .utf8)
    #expect(saved.contains("\"effectsOutput\" : \"ports\""), "\(saved)")
    try await deck.run("sfx out master")
    #expect(
      await eventually(timeout: 3) { !((try? await server.ports()) ?? ["stemdeck:sfx_L"]).contains("stemdeck:sfx_L") },
      "sfx ports still there")
    #expect(try await deck.finish() == 0, "\(deck.transcript)")
  }

  /// The effect fired twice: 0.25 s of 1 kHz (its frequency is checked), then 0.3 s sweeping up
  /// to 4 kHz, at 0.25, 44.1 kHz (converted). Two instances of a steady tone that start a period
  /// apart add to anything from nothing to twice the level, by their phase (a 1 kHz tone fired
  /// twice peaked at one instance's level under ThreadSanitizer, 2026-12-03: the fires had landed
  /// 256 frames apart, a third of a cycle); under the sweep their phases drift through each
  /// other every few milliseconds, so the two together reach twice the level whatever the
  /// offset, and one instance alone stays at its own.
  static func writeBlip(_ path: String) throws {
    let rate = 44100.0
    let steady = Int(0.25 * rate), sweep = Int(0.3 * rate)
    let slope = (4000.0 - 1000.0) / 0.3  // Hz per second
    var samples = [Float](repeating: 0, count: steady + sweep)
    for i in 0..<samples.count {
      let t = Double(i) / rate
      let swept = max(0, t - 0.25)
      let phase = 2 * Double.pi * (1000 * t + slope * swept * swept / 2)
      samples[i] = Float(0.25 * sin(phase))
    }
    let writer = try SoundFileWriter(path: path, format: .wavFloat, sampleRate: Int(rate), channelCount: 1)
    try samples.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frameCount: samples.count) }
    writer.flush()
  }

  @Test("a fired sound effect is heard on the master, polyphonically, while the transport is stopped")
  func fireEffect() async throws {
    let dir = try IntegrationTempDir()
    let server = try await PrivateJackServer()
    defer { server.stop() }
    try Self.writeBlip(dir.file("blip.wav"))
    let deck = try StemdeckProcess(server: server)
    defer { deck.kill() }
    try await deck.run("sfx load blip \(dir.file("blip.wav")); sfx wait blip")
    let capture = try server.startCapture(
      ports: ["stemdeck:master_L", "stemdeck:master_R"], seconds: 2,
      to: dir.file("fx.wav"), hookDir: dir)
    try await deck.run("wait 0.5")
    try await deck.run("sfx fire blip; sfx fire blip")
    try await deck.run("wait 0.6")
    _ = try await capture.finish(timeout: 10)
    let audio = try readAudio(dir.file("fx.wav"))
    var peak: Float = 0
    for i in 0..<audio.frames { peak = max(peak, abs(audio.sample(i, 0))) }
    // Two instances at 0.25, centred mono (−3 dB each side): 2 × 0.25 × 0.7071 ≈ 0.354 where
    // they add in phase, which the chirp makes happen whatever period each fire landed in.
    #expect(abs(peak - 0.354) < 0.02, "effect peak \(peak) (one instance alone: 0.177)")
    let start = try #require(firstFrame(above: 0.01, in: audio))
    let f = frequency(audio, channel: 0, from: start + 1000, to: start + 10000)
    #expect(abs(f - 1000) < 10, "effect frequency \(f) (converted from 44.1 kHz)")
    #expect(try await deck.finish() == 0)
  }

  @Test("sfx load decodes in the background: status answers while a 64-channel 768 kHz effect loads, and an event says when it is ready")
  func effectLoadsInTheBackground() async throws {
    let dir = try IntegrationTempDir()
    let server = try await PrivateJackServer()
    defer { server.stop() }
    // 2 s of 64 channels at 768 kHz (sparse: silence): read, downmixed and converted to 48 kHz
    // at best quality, seconds of work that used to freeze the console.
    try WAV.writeSparse(dir.file("wide.wav"), channels: 64, sampleRate: 768_000, seconds: 2)
    let deck = try StemdeckProcess(server: server)
    defer { deck.kill() }
    let start = deck.lineCount
    let answer = try await deck.run("sfx load wide \(dir.file("wide.wav"))")
    #expect(answer.contains("loading effect wide…"), "\(answer)")
    let status = try await deck.status()
    #expect(status["state"] != nil, "no status: \(status)")
    // The status came back before the effect was loaded: the control thread was not busy decoding.
    #expect(
      !deck.lines.dropFirst(start).contains { $0.contains("effect 'wide' loaded") },
      "the load finished before status answered\n\(deck.transcript)")
    #expect(await deck.waitForLine(containing: "effect 'wide' loaded", from: start, timeout: 120) != nil, "\(deck.transcript)")
    let listed = try await deck.run("sfx")
    #expect(listed.contains { $0.hasPrefix("wide") && $0.contains("0:02.000") }, "\(listed)")
    try await deck.run("sfx fire wide")
    #expect(try await deck.finish() == 0, "\(deck.transcript)")
  }
}
