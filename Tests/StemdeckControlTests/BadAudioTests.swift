import Foundation
import StemdeckAudioFile
// @testable: the slow-disk tests find a stem's shared state (which `SlowDisk` slows) through the
// mixer's internal stem list (there is no public way to it).
@testable import StemdeckControl
import StemdeckEngine
import StemdeckSession
import StemdeckTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

// Bad audio files, bad samples and disk faults, driven through the same `Mixer` API the REPL
// uses, with synchronous streaming (the test is the disk thread and the audio thread) except
// where the disk thread itself is under test. Every wait is bounded: a call that could block
// (a FIFO, a huge file) runs on its own thread under a watchdog.

// MARK: - Helpers

/// Wraps a non-Sendable value to hand it to a watchdog thread (the test waits for that thread,
/// or abandons the value on purpose).
private struct Unchecked<T>: @unchecked Sendable {
  let value: T
}

/// A watchdog thread's work and result. The thread drops `body` as soon as it has run it:
/// Foundation's `Thread` keeps its closure alive after it finishes, and whatever `body` captured
/// (a mixer) must not live on with it.
private final class WatchdogJob<T>: @unchecked Sendable {
  let lock = NSLock()
  var body: (@Sendable () -> T)?
  var value: T?
  init(_ body: @escaping @Sendable () -> T) { self.body = body }
}

/// Runs `body` on its own thread and waits up to `timeout` seconds. Returns the result and the
/// seconds it took, or nil when it did not finish in time; then `unblock` is called (to release
/// whatever it is stuck on) and the thread gets `grace` more seconds.
private func withWatchdog<T: Sendable>(
  timeout: Double, grace: Double = 10, unblock: () -> Void = {}, _ body: @escaping @Sendable () -> T
) -> (value: T, seconds: Double)? {
  let job = WatchdogJob(body)
  let done = DispatchSemaphore(value: 0)
  let start = ContinuousClock.now
  let thread = Thread {
    let work = job.lock.withLock { () -> (@Sendable () -> T)? in
      defer { job.body = nil }; return job.body
    }
    if let work {
      let v = work()
      job.lock.withLock { job.value = v }
    }
    done.signal()
  }
  thread.stackSize = 1 << 22
  thread.start()
  if done.wait(timeout: .now() + timeout) == .timedOut {
    unblock()
    _ = done.wait(timeout: .now() + grace)
    return nil
  }
  let seconds = (ContinuousClock.now - start) / .seconds(1)
  return job.lock.withLock { job.value.map { ($0, seconds) } }
}

private func writeBytes(_ bytes: [UInt8], to path: String) throws {
  try Data(bytes).write(to: URL(fileURLWithPath: path))
}

/// Byte offset of the first sample in a RIFF/WAVE file (after the "data" chunk header).
private func wavDataOffset(_ path: String) throws -> Int {
  let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)).prefix(4096))
  var at = 12
  while at + 8 <= bytes.count {
    let id = String(decoding: bytes[at..<(at + 4)], as: UTF8.self)
    let size = Int(bytes[at + 4]) | Int(bytes[at + 5]) << 8 | Int(bytes[at + 6]) << 16 | Int(bytes[at + 7]) << 24
    if id == "data" { return at + 8 }
    at += 8 + size + (size & 1)
  }
  throw SoundFileError(path: path, reason: "no data chunk in the first 4 KB")
}

/// Sets the calling thread's file-system uid (Linux `setfsuid`, looked up at run time: Swift's
/// Glibc module does not export <sys/fsuid.h>) and returns the previous one.
private func setFileSystemUID(_ uid: uid_t) -> uid_t? {
  guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "setfsuid") else { return nil }
  let setfsuid = unsafeBitCast(symbol, to: (@convention(c) (uid_t) -> Int32).self)
  return uid_t(truncatingIfNeeded: setfsuid(uid))
}

/// Sleeps until `deadline` on the monotonic clock, for real-time paced rendering.
private func sleepUntil(_ deadline: ContinuousClock.Instant) {
  let wait = (deadline - ContinuousClock.now) / .microseconds(1)
  if wait > 0 { usleep(useconds_t(wait)) }
}

/// Renders `frames` frames paced to the wall clock (as JACK would call the renderer), with the
/// mixer's own disk thread filling the rings. Events are pumped along the way and returned.
private func renderPaced(
  _ mixer: Mixer, frames: Int, block: Int = 256, sampleRate: Double = 48000
)
  -> (audio: Stereo, events: [MixerEvent], states: [TransportState])
{
  var out = Stereo(frames: frames)
  var events: [MixerEvent] = []
  var states: [TransportState] = []
  let start = ContinuousClock.now
  var done = 0
  while done < frames {
    let n = min(block, frames - done)
    out.left.withUnsafeMutableBufferPointer { l in
      out.right.withUnsafeMutableBufferPointer { r in
        renderBlock(mixer.renderState, left: l.baseAddress! + done, right: r.baseAddress! + done, frameCount: n)
      }
    }
    done += n
    states.append(mixer.transport.state)
    if done % (block * 8) == 0 { events += mixer.pump() }
    sleepUntil(start + .microseconds(Int(Double(done) / sampleRate * 1e6)))
  }
  events += mixer.pump()
  return (out, events, states)
}

/// Waits (at most 30 s; a test issue after that) until every stem's ring is full, to within the
/// 1/64 a worker tops up by, or holds its whole file. It watches what the disk workers wrote,
/// not how many passes they made: on a loaded machine one worker can still be in a stem's first
/// read while the others make their passes, and a test started then finds that stem unprimed
/// (CI failed so: `slowStemDoesNotStarveOthers` held for priming and B started late).
private func waitForFullRings(_ mixer: Mixer) {
  let deadline = ContinuousClock.now + .seconds(30)
  func full() -> Bool {
    mixer.table.stems.allSatisfy { stem in
      guard let stream = stem.stream else { return true }
      let wanted = min(stream.ringCapacity, stream.length * stream.outputChannels)
      let read = stem.shared.pointer.pointee.readCounter.load(ordering: .relaxed)
      return stream.samplesWritten.load(ordering: .acquiring) - read >= wanted - stream.ringCapacity / 64
    }
  }
  while !full() && ContinuousClock.now < deadline { usleep(2000) }
  if !full() { Issue.record("the disk workers did not fill every ring in 30 s") }
}

/// A stereo float file of seeded noise (every sample distinct, so any shift or loss shows).
private func writeNoise(_ path: String, seconds: Double, seed: UInt64, amplitude: Double = 0.5) throws -> Stereo {
  let frames = Int(seconds * 48000)
  let s = Stereo(
    left: Signal.noise(frames: frames, amplitude: amplitude, seed: seed),
    right: Signal.noise(frames: frames, amplitude: amplitude, seed: seed &+ 1))
  try writeAudio(path, format: .wavFloat, channels: [s.left, s.right])
  return s
}

@Suite("bad audio: files that cannot be played, bad samples, disk faults")
struct BadAudioTests {

  // MARK: - Files that are rejected

  @Test(
    "unplayable files are rejected (never stuck on one: a FIFO is not waited on), naming the file and the reason; the stems are unchanged")
  func rejectedFiles() throws {
    let folder = try TemporaryFolder()
    let rig = try BadInputTests.rig(in: folder)
    let before = snapshot(rig.mixer)
    #expect(before.count == 2)

    let empty = folder.file("empty.wav")
    #expect(FileManager.default.createFile(atPath: empty, contents: Data()))

    // The first 20 bytes of a real WAV: "RIFF", size, "WAVE", "fmt ", and the fmt size.
    let real = folder.file("real.wav")
    try writeAudio(real, format: .wav16, channels: [Signal.sine(frequency: 440, sampleRate: 48000, frames: 4800, amplitude: 0.5)])
    let truncated = folder.file("truncated.wav")
    try writeBytes(Array(try Data(contentsOf: URL(fileURLWithPath: real)).prefix(20)), to: truncated)

    let text = folder.file("readme.wav")
    try Data("This is not audio. It is a text file someone named .wav\n".utf8).write(to: URL(fileURLWithPath: text))

    // A header claiming 0 channels, then 1000 bytes of data.
    let zeroChannels = folder.file("zero-channels.wav")
    try writeBytes(WAV.header(channels: 0, sampleRate: 48000, dataBytes: 1000) + [UInt8](repeating: 0, count: 1000), to: zeroChannels)

    // 1 Hz: 100 mono frames.
    let oneHertz = folder.file("one-hertz.wav")
    try writeBytes(WAV.header(channels: 1, sampleRate: 1, dataBytes: 200) + [UInt8](repeating: 0, count: 200), to: oneHertz)

    let directory = folder.file("folder.wav")
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)

    let fifo = folder.file("pipe.wav")
    try #require(mkfifo(fifo, 0o644) == 0, "mkfifo: \(String(cString: strerror(errno)))")

    let cases: [(what: String, path: String, reasons: [String])] = [
      ("an empty file", empty, ["the file is empty"]),
      ("a WAV cut after 20 bytes", truncated, ["not a readable audio file"]),
      ("a text file named .wav", text, ["not a readable audio file"]),
      ("a WAV header claiming 0 channels", zeroChannels, ["channel"]),
      ("a WAV at 1 Hz", oneHertz, ["unsupported sample rate 1 Hz", "allowed: 1000 to 768000 Hz"]),
      ("a directory", directory, ["is a directory"]),
      ("a FIFO", fifo, ["not a regular file"])
    ]
    for (what, path, reasons) in cases {
      let box = Unchecked(value: rig)
      // Stuck (e.g. opening the FIFO and waiting for a writer) rather than slow: a 30 s watchdog.
      let outcome = withWatchdog(
        timeout: 30,
        unblock: {
          // A reader stuck opening the FIFO is released by a writer that opens and closes it.
          let fd = open(fifo, O_WRONLY | O_NONBLOCK)
          if fd >= 0 { close(fd) }
        }
      ) { () -> MixerError? in
        do throws(MixerError) {
          try box.value.mixer.stems.add(path: path, settings: stem("vocals", path))
          return nil
        } catch { return error }
      }
      guard let outcome else {
        Issue.record("adding \(what) did not return within 30 s: stuck (\(path))")
        continue
      }
      guard let error = outcome.value else {
        Issue.record("\(what) was accepted as a stem (\(path))")
        try? rig.mixer.stems.remove("vocals")
        continue
      }
      print("rejected \(what) in \(String(format: "%.4f", outcome.seconds)) s: \(error.message)")
      for fragment in ["cannot add stem 'vocals'", path] + reasons {
        #expect(error.message.contains(fragment), "\(what): message \"\(error.message)\" lacks \"\(fragment)\"")
      }
      #expect(snapshot(rig.mixer) == before, "the stems changed after rejecting \(what)")
    }
    // The mixer still takes a good file afterwards (no slot leaked by the rejections).
    try rig.mixer.stems.add(path: real, settings: stem("vocals", real))
    #expect(rig.mixer.stems.names == ["drums", "bass", "vocals"])
  }

  @Test("files that cannot be read (a mode-000 file, read as another user when root; /proc/self/mem) are rejected with the reason")
  func unreadableFiles() throws {
    let folder = try TemporaryFolder()
    let rig = try BadInputTests.rig(in: folder)
    let before = snapshot(rig.mixer)
    // A mode-000 file. Root reads anything (CAP_DAC_OVERRIDE), so as root the file is opened with
    // the thread's file-system uid set to nobody's (setfsuid drops those capabilities with it):
    // the same "permission denied" a user gets, on every Linux machine, no kernel-specific file.
    let locked = folder.file("locked.wav")
    try writeAudio(locked, format: .wav16, channels: [Signal.constant(0.25, frames: 4800)])
    chmod(locked, 0)
    chmod(folder.path, 0o755)
    let asNobody = geteuid() == 0
    // /proc/self/mem is unreadable at offset 0 and reports size 0.
    let cases: [(path: String, reasons: [String], asNobody: Bool)] = [
      (locked, ["ermission denied"], asNobody), ("/proc/self/mem", [], false)
    ]
    for (path, reasons, nobody) in cases {
      let box = Unchecked(value: rig)
      guard
        let outcome = withWatchdog(
          timeout: 2,
          { () -> MixerError? in
            // setfsuid is per thread on Linux: only this watchdog thread reads as nobody.
            let restore = nobody ? setFileSystemUID(65534) : nil
            defer { if let restore { _ = setFileSystemUID(restore) } }
            do throws(MixerError) {
              try box.value.mixer.stems.add(path: path, settings: stem("vocals", path))
              return nil
            } catch { return error }
          })
      else {
        Issue.record("adding \(path) did not return within 2 s")
        continue
      }
      guard let error = outcome.value else {
        Issue.record("\(path) was accepted as a stem")
        try? rig.mixer.stems.remove("vocals")
        continue
      }
      for fragment in ["cannot add stem 'vocals'", path] + reasons {
        #expect(error.message.contains(fragment), "message \"\(error.message)\" lacks \"\(fragment)\"")
      }
      #expect(snapshot(rig.mixer) == before, "the stems changed after rejecting \(path)")
    }
  }

  // MARK: - Files that play

  @Test("a WAV named .mp3 plays (libsndfile reads by content), bit for bit")
  func wavWithMP3Extension() throws {
    let folder = try TemporaryFolder()
    let frames = 9600
    let left = Signal.noise(frames: frames, amplitude: 0.5, seed: 11)
    let right = Signal.noise(frames: frames, amplitude: 0.5, seed: 12)
    let path = folder.file("actually-a-wav.mp3")
    try writeAudio(path, format: .wavFloat, channels: [left, right])
    let rig = MixerRig()
    try rig.mixer.stems.add(path: path, settings: stem("song", path))
    #expect(try rig.mixer.stems.status("song").info.frameCount == frames)
    try rig.mixer.transport.play()
    let out = rig.render(frames + 1024)
    #expect(Array(out.left[0..<frames]) == left, "left differs from the file")
    #expect(Array(out.right[0..<frames]) == right, "right differs from the file")
    #expect(peak(out.left[frames...]) == 0 && peak(out.right[frames...]) == 0, "not silent after the end")
    #expect(rig.mixer.pump().contains(.stemFinished("song")))
  }

  @Test("an 8-channel file plays folded to stereo: odd channels left, even channels right")
  func eightChannels() throws {
    let folder = try TemporaryFolder()
    let frames = 4800
    let values: [Float] = [0.1, -0.2, 0.3, -0.05, 0.25, 0.15, -0.3, 0.4]
    let path = folder.file("octo.wav")
    try writeAudio(path, format: .wavFloat, channels: values.map { Signal.constant($0, frames: frames) })
    let rig = MixerRig()
    try rig.mixer.stems.add(path: path, settings: stem("octo", path))
    #expect(try rig.mixer.stems.status("octo").info.channelCount == 8)
    try rig.mixer.transport.play()
    let out = rig.render(frames)
    // Channels 1, 3, 5, 7 (1-based) average into the left; 2, 4, 6, 8 into the right.
    let expectedLeft = Double(values[0] + values[2] + values[4] + values[6]) / 4
    let expectedRight = Double(values[1] + values[3] + values[5] + values[7]) / 4
    #expect(
      maxAbsError(out.left, [Double](repeating: expectedLeft, count: frames)) < 1e-6,
      "left \(out.left[100]) expected \(expectedLeft)")
    #expect(
      maxAbsError(out.right, [Double](repeating: expectedRight, count: frames)) < 1e-6,
      "right \(out.right[100]) expected \(expectedRight)")
  }

  @Test("a 768 kHz file is accepted and plays at the engine rate (same duration and pitch)")
  func sampleRate768k() throws {
    let folder = try TemporaryFolder()
    let fileRate = 768_000
    let path = folder.file("hires.wav")
    try writeAudio(
      path, format: .wavFloat, sampleRate: fileRate,
      channels: [Signal.sine(frequency: 1000, sampleRate: Double(fileRate), frames: fileRate / 2, amplitude: 0.5)])
    let rig = MixerRig()
    try rig.mixer.stems.add(path: path, settings: stem("hires", path))
    let status = try rig.mixer.stems.status("hires")
    #expect(status.info.sampleRate == fileRate)
    #expect(abs(status.length - 0.5) < 1e-9)
    #expect(abs((rig.mixer.transport.duration ?? 0) - 0.5) < 1e-9)
    try rig.mixer.transport.play()
    let out = rig.render(36000)  // 0.75 s at 48 kHz
    // Mono at pan 0: each side is the signal at -3 dB.
    let frequency = estimatedFrequency(out.left, sampleRate: 48000, in: 2400..<21600)
    #expect(abs(frequency - 1000) < 1, "plays at \(frequency) Hz, not 1000 Hz")
    let level = rms(out.left[2400..<21600])
    #expect(abs(level - 0.5 * 0.7071 / 2.0.squareRoot()) < 0.01, "rms \(level)")
    let lastLoud = (0..<out.left.count).last { abs(out.left[$0]) > 0.01 } ?? 0
    #expect(abs(lastLoud - 24000) < 100, "sound ends at frame \(lastLoud), expected about 24000 (0.5 s)")
    #expect(rig.mixer.pump().contains(.stemFinished("hires")))
  }

  @Test("a 4 GB sparse WAV (a header, then a hole) is opened without reading it and plays silence")
  func hugeSparseFile() throws {
    let folder = try TemporaryFolder()
    let path = folder.file("huge.wav")
    let size: Int64 = 4 << 30
    let dataBytes = UInt32(size - 44)  // 16-bit stereo: 1,073,741,813 frames (6 h 12 min)
    try writeBytes(WAV.header(channels: 2, sampleRate: 48000, dataBytes: dataBytes), to: path)
    let fd = open(path, O_WRONLY)
    try #require(fd >= 0)
    let truncated = ftruncate(fd, off_t(size))
    close(fd)
    try #require(truncated == 0, "ftruncate to 4 GB failed: \(String(cString: strerror(errno)))")

    let rig = MixerRig()
    let box = Unchecked(value: rig)
    guard
      let outcome = withWatchdog(
        timeout: 2, grace: 60,
        { () -> MixerError? in
          do throws(MixerError) {
            try box.value.mixer.stems.add(path: path, settings: stem("huge", path))
            return nil
          } catch { return error }
        })
    else {
      Issue.record("adding a 4 GB sparse file did not return within 2 s (it reads the file?)")
      return
    }
    if let error = outcome.value {
      // Rejecting it is acceptable if the message is clear.
      #expect(error.message.contains(path), "\(error.message)")
      print("hugeSparseFile: rejected in \(outcome.seconds) s: \(error.message)")
      return
    }
    print("hugeSparseFile: accepted in \(String(format: "%.3f", outcome.seconds)) s")
    let status = try rig.mixer.stems.status("huge")
    #expect(status.info.frameCount == Int(dataBytes) / 4)
    try rig.mixer.transport.play()
    guard let rendered = withWatchdog(timeout: 2, grace: 60, { () -> Stereo in box.value.render(48000) }) else {
      Issue.record("rendering 1 s of the sparse file took more than 2 s")
      return
    }
    #expect(peak(rendered.value.left) == 0 && peak(rendered.value.right) == 0, "a hole should play silence")
    let events = rig.mixer.pump()
    #expect(!events.contains { if case .readFailed = $0 { return true } else { return false } }, "\(events)")
    #expect(abs(rig.mixer.transport.position - 1) < 0.01)
  }

  // MARK: - Bad samples

  /// A stereo float file whose samples are finite except for NaN at frame 1000, +inf at 3000
  /// and -inf at 5000 (on the left) and a NaN burst on the right from 7000.
  static func writePoisoned(_ path: String, frames: Int) throws {
    var left = Signal.sine(frequency: 300, sampleRate: 48000, frames: frames, amplitude: 0.4)
    var right = Signal.sine(frequency: 500, sampleRate: 48000, frames: frames, amplitude: 0.4)
    left[1000] = .nan
    left[3000] = .infinity
    left[5000] = -.infinity
    for i in 7000..<7100 { right[i] = .nan }
    try writeAudio(path, format: .wavFloat, channels: [left, right])
    // libsndfile stores floats as they are: check the file really holds them.
    let back = try readAudio(path)
    #expect(back.samples[2 * 1000].isNaN && back.samples[2 * 3000] == .infinity)
  }

  @Test("NaN and infinity in a float stem: the master stays finite, the stem is reported and muted")
  func nanAndInfinity() throws {
    let folder = try TemporaryFolder()
    let bad = folder.file("poisoned.wav")
    try Self.writePoisoned(bad, frames: 48000)
    let good = folder.file("clean.wav")
    let clean = Signal.sine(frequency: 200, sampleRate: 48000, frames: 48000, amplitude: 0.3)
    try writeAudio(good, format: .wavFloat, channels: [clean])

    let rig = MixerRig()
    try rig.mixer.stems.add(path: bad, settings: stem("bad", bad))
    try rig.mixer.stems.add(path: good, settings: stem("good", good))
    try rig.mixer.transport.play()
    var events: [MixerEvent] = []
    var out = Stereo(frames: 0)
    for _ in 0..<24 {  // 1 s in 2048-frame slices, pumping between them (as the REPL does)
      out.append(rig.render(2048))
      events += rig.mixer.pump()
    }
    let nonFinite = (out.left + out.right).filter { !$0.isFinite }.count
    #expect(nonFinite == 0, "the master holds \(nonFinite) NaN/infinite samples")
    #expect(events.contains(.badSamples("bad")), "events: \(events)")
    #expect(events.filter { $0 == .badSamples("bad") }.count == 1, "reported more than once: \(events)")
    #expect(!events.contains(.badSamples("good")))
    #expect(try rig.mixer.stems.status("bad").settings.mute == true)
    #expect(try rig.mixer.stems.status("good").settings.mute == false)
    #expect(rig.mixer.isDirty, "muting the stem is a change to save")
    // Once muted (10 ms ramp), only the clean stem is heard: mono at pan 0 → each side × cos(π/4).
    let g = Float(cos(Double.pi / 4))
    let tail = 12000..<40000
    let expected = clean[tail].map { Double($0 * g) }
    #expect(maxAbsError(Array(out.left[tail]), expected) < 1e-6, "left still has the muted stem")
    #expect(maxAbsError(Array(out.right[tail]), expected) < 1e-6, "right still has the muted stem")
  }

  @Test("NaN and infinity: the offline render of a session writes only finite samples")
  func nanAndInfinityOffline() throws {
    let folder = try TemporaryFolder()
    let bad = folder.file("poisoned.wav")
    try Self.writePoisoned(bad, frames: 48000)
    var session = Session()
    session.stems = [StemSettings(name: "bad", file: "poisoned.wav")]
    let (summary, output) = try renderOffline(session, in: folder)
    #expect(summary.frames == 48000)
    let nonFinite = (output.left + output.right).filter { !$0.isFinite }.count
    #expect(nonFinite == 0, "the rendered file holds \(nonFinite) NaN/infinite samples")
    #expect(summary.peak.left.isFinite && summary.peak.right.isFinite && summary.peak.left <= 0.41)
    #expect(summary.rms.left.isFinite && summary.rms.right.isFinite)
    #expect(summary.mutedStems == [OfflineRenderer.MutedStem(name: "bad", file: "poisoned.wav", at: 0)])
  }

  /// Issue 17: the render muted a poisoned stem only at its first event pump, about 1.375 s in
  /// wherever the NaN sat, and said nothing. Now it behaves as live: muted as soon as the disk
  /// reader finds the bad samples (before any sound when they lie in the first ring's worth),
  /// and reported.
  @Test("NaN in a float stem, offline: muted as soon as the disk reader finds it (before any sound when early), and reported")
  func nanOfflineMutedLikeLive() throws {
    let folder = try TemporaryFolder()
    let frames = 6 * 48000
    let clean = Signal.sine(frequency: 200, sampleRate: 48000, frames: frames, amplitude: 0.3)
    try writeAudio(folder.file("clean.wav"), format: .wavFloat, channels: [clean])
    let g = Float(cos(Double.pi / 4))  // a mono stem at pan 0
    for nanFrame in [1000, 4 * 48000 + 24000] {
      var bad = Signal.sine(frequency: 700, sampleRate: 48000, frames: frames, amplitude: 0.4)
      bad[nanFrame] = .nan
      try writeAudio(folder.file("bad.wav"), format: .wavFloat, channels: [bad])
      var session = Session()
      session.stems = [StemSettings(name: "clean", file: "clean.wav"), StemSettings(name: "bad", file: "bad.wav")]
      var warned: [OfflineRenderer.MutedStem] = []
      let output = folder.file("render.wav")
      let summary = try OfflineRenderer.render(
        session: session, sessionPath: folder.file("session.stemdeck"), outputPath: output, duration: nil,
        warning: { warned.append($0) })
      let out = Stereo(try readAudio(output))
      #expect(summary.mutedStems.count == 1 && summary.mutedStems.first?.name == "bad", "\(summary.mutedStems)")
      #expect(warned == summary.mutedStems, "reported through the warning callback as it happened")
      let at = try #require(summary.mutedStems.first).at
      #expect(summary.mutedStems.first?.message.contains("'bad' (bad.wav) holds NaN or infinite samples") == true)
      // Found ahead of playback, never after the NaN is due.
      #expect(at * 48000 < Double(nanFrame), "muted at \(at) s, the NaN is at \(Double(nanFrame) / 48000) s")
      if nanFrame < 48000 { #expect(at == 0, "an early NaN mutes the stem before any sound") }
      // From the mute on (plus its 10 ms ramp; none before any sound) only the clean stem is heard.
      let from = at == 0 ? 0 : Int(at * 48000) + 1024 + 480
      let tail = from..<frames
      let expected = clean[tail].map { Double($0 * g) }
      #expect(maxAbsError(Array(out.left[tail]), expected) < 1e-6, "NaN at \(nanFrame): the muted stem is still heard")
      #expect(maxAbsError(Array(out.right[tail]), expected) < 1e-6, "NaN at \(nanFrame): the muted stem is still heard")
      print("NaN at frame \(nanFrame): stem muted from \(at) s of the render")
    }
  }

  // MARK: - Disk faults

  @Test("a stem file truncated while streaming: that stem reports readFailed and goes silent; the other plays on bit-exact")
  func truncatedWhileStreaming() throws {
    let folder = try TemporaryFolder()
    let pathA = folder.file("a.wav"), pathB = folder.file("b.wav")
    let a = try writeNoise(pathA, seconds: 4, seed: 100)
    let b = try writeNoise(pathB, seconds: 4, seed: 200)
    func makeRig() throws -> MixerRig {
      let rig = MixerRig()
      // Stereo balance: pan -1 keeps A's left only, pan 1 keeps B's right only (gains 1 and 0).
      try rig.mixer.stems.add(path: pathA, settings: stem("a", pathA) { $0.pan = -1 })
      try rig.mixer.stems.add(path: pathB, settings: stem("b", pathB) { $0.pan = 1 })
      try rig.mixer.transport.play()
      return rig
    }
    let total = 4 * 48000
    let before = 24000  // 0.5 s before the truncation

    let rig = try makeRig()
    var out = rig.render(before)
    #expect(rig.mixer.pump().isEmpty)
    // Cut A to half its size while it is open and streaming (about 1.4 s are buffered ahead).
    let offset = try wavDataOffset(pathA)
    let half = FileFacts.size(pathA) / 2
    let cutFrame = (half - offset) / 8  // frames still complete in the file
    #expect(truncate(pathA, off_t(half)) == 0)
    var events: [MixerEvent] = []
    while out.count < total {
      out.append(rig.render(min(4096, total - out.count)))
      events += rig.mixer.pump()
    }
    let failure = events.compactMap { e -> String? in if case .readFailed("a", let m) = e { return m } else { return nil } }
    #expect(failure.count == 1, "events: \(events)")
    #expect(failure.first?.contains(pathA) == true, "the message should name the file: \(failure)")
    #expect(!events.contains { if case .readFailed("b", _) = $0 { return true } else { return false } })
    #expect(try rig.mixer.stems.status("a").failed)
    #expect(try !rig.mixer.stems.status("b").failed)

    // A: exact up to the cut, silent after it.
    #expect(firstMismatch(out.left[0..<cutFrame], a.left[0..<cutFrame]) == nil, "A differs before the cut (at frame \(cutFrame))")
    #expect(peak(out.left[cutFrame...]) == 0, "A is not silent after the cut at frame \(cutFrame): peak \(peak(out.left[cutFrame...]))")
    // B: bit-exact the whole way, never disturbed.
    #expect(firstMismatch(out.right[...], b.right[...]) == nil, "B is not bit-exact")
    #expect(try rig.mixer.stems.status("b").underruns == 0)
  }

  @Test("slow disk after a seek (a slow disk: 250 ms a read): the transport waits for the stem, then all start together bit-exact")
  func slowDiskAfterSeekWaits() throws {
    let folder = try TemporaryFolder()
    let pathA = folder.file("a.wav"), pathB = folder.file("b.wav")
    let a = try writeNoise(pathA, seconds: 5, seed: 300)
    let b = try writeNoise(pathB, seconds: 5, seed: 400)
    let slowDisk = SlowDisk()
    let mixer = Mixer(sampleRate: 48000, streaming: .thread, maxVoices: 16, diskPacing: slowDisk)
    defer { mixer.shutdown() }
    try mixer.stems.add(path: pathB, settings: stem("b", pathB) { $0.pan = 1 })
    try mixer.stems.add(path: pathA, settings: stem("a", pathA) { $0.pan = -1 })
    waitForFullRings(mixer)
    let sharedA = try #require(mixer.table.stems.first { $0.settings.name == "a" }).shared.pointer
    slowDisk.set(sharedA, milliseconds: 250)
    try mixer.transport.seek(toSeconds: 1)
    try mixer.transport.play()
    let run = renderPaced(mixer, frames: 48000 * 2)
    #expect(run.states.prefix(10).allSatisfy { $0 == .waitingForDisk }, "states: \(run.states.prefix(10))")
    #expect(!run.events.contains(.primeTimeout), "\(run.events)")
    #expect(!run.events.contains { if case .underrun = $0 { return true } else { return false } }, "\(run.events)")
    // The transport starts on a block boundary (the first block rendered playing), both stems
    // from 1 s into their files, with the 5 ms fade-in of a start away from 0.
    let playingBlock = try #require(run.states.firstIndex(of: .playing), "never started: \(run.states.suffix(5))")
    let start = playingBlock * 256
    #expect(
      run.audio.left[..<start].allSatisfy { $0 == 0 } && run.audio.right[..<start].allSatisfy { $0 == 0 },
      "sound before the transport started")
    let waited = Double(start) / 48000
    #expect(waited >= 0.2 && waited < 1, "waited \(waited) s for the slow stem")
    let fade = 256  // past the 5 ms (240-frame) fade-in
    let n = run.audio.count - start - fade
    #expect(
      firstMismatch(run.audio.left[(start + fade)...], a.left[(48000 + fade)..<(48000 + fade + n)]) == nil,
      "A not bit-exact after the wait")
    #expect(
      firstMismatch(run.audio.right[(start + fade)...], b.right[(48000 + fade)..<(48000 + fade + n)]) == nil,
      "B not bit-exact after the wait")
    print("slow disk (250 ms a read) after a seek: the transport waited \(String(format: "%.3f", waited)) s")
  }

  @Test(
    "slow disk past the hold (a slow disk: 1.5 s a read): prime timeout, that stem underruns (counted, reported, silent); the other plays bit-exact"
  )
  func slowDiskUnderrun() throws {
    let folder = try TemporaryFolder()
    let pathA = folder.file("a.wav"), pathB = folder.file("b.wav")
    _ = try writeNoise(pathA, seconds: 5, seed: 500)
    let b = try writeNoise(pathB, seconds: 5, seed: 600)
    let slowDisk = SlowDisk()
    let mixer = Mixer(sampleRate: 48000, streaming: .thread, maxVoices: 16, diskPacing: slowDisk)
    defer { mixer.shutdown() }
    try mixer.stems.add(path: pathB, settings: stem("b", pathB) { $0.pan = 1 })
    try mixer.stems.add(path: pathA, settings: stem("a", pathA) { $0.pan = -1 })
    waitForFullRings(mixer)
    let sharedA = try #require(mixer.table.stems.first { $0.settings.name == "a" }).shared.pointer
    slowDisk.set(sharedA, milliseconds: 1500)
    try mixer.transport.seek(toSeconds: 1)
    try mixer.transport.play()
    // 1.25 s: the 1 s hold, then 0.25 s of playing (B's ring holds ~1.4 s, refilled after A's read).
    let run = renderPaced(mixer, frames: 60000)
    #expect(run.events.contains(.primeTimeout), "\(run.events)")
    #expect(run.events.contains(.underrun("a")), "\(run.events)")
    #expect(!run.events.contains(.underrun("b")), "\(run.events)")
    let status = try mixer.stems.status("a")
    #expect(status.underruns > 0)
    #expect(try mixer.stems.status("b").underruns == 0)
    // The hold lasts 1 s of rendered frames; then B plays from 1 s into its file (after the fade-in).
    let playingBlock = try #require(run.states.firstIndex(of: .playing), "never started")
    let start = playingBlock * 256
    #expect(abs(start - 48000) <= 256, "the transport started at frame \(start), expected after the 1 s hold")
    let fade = 256
    let n = run.audio.count - start - fade
    #expect(
      firstMismatch(run.audio.right[(start + fade)...], b.right[(48000 + fade)..<(48000 + fade + n)]) == nil,
      "B not bit-exact")
    // A is still waiting for its first read: silent.
    #expect(peak(run.audio.left) == 0, "A should be silent while its read is pending")
    print("slow disk (1.5 s a read): \(status.underruns) underrun blocks on the slow stem; events \(run.events)")
  }

  @Test("a slow stem (a slow disk: 1.5 s a read) does not starve the other stems: only it underruns")
  func slowStemDoesNotStarveOthers() throws {
    let folder = try TemporaryFolder()
    let pathA = folder.file("a.wav"), pathB = folder.file("b.wav")
    _ = try writeNoise(pathA, seconds: 6, seed: 700)
    let b = try writeNoise(pathB, seconds: 6, seed: 800)
    let slowDisk = SlowDisk()
    let mixer = Mixer(sampleRate: 48000, streaming: .thread, maxVoices: 16, diskPacing: slowDisk)
    defer { mixer.shutdown() }
    try mixer.stems.add(path: pathB, settings: stem("b", pathB) { $0.pan = 1 })
    try mixer.stems.add(path: pathA, settings: stem("a", pathA) { $0.pan = -1 })
    waitForFullRings(mixer)
    let sharedA = try #require(mixer.table.stems.first { $0.settings.name == "a" }).shared.pointer
    slowDisk.set(sharedA, milliseconds: 1500)
    try mixer.transport.play()
    // Both rings are full at the start (~1.4 s); after that B needs the disk thread, which
    // sleeps 1.5 s before every read of A.
    let run = renderPaced(mixer, frames: 48000 * 4)
    // The hook is in effect: A's 1.4 s ring runs dry before its next read lands.
    #expect(run.events.contains(.underrun("a")), "the slow stem never underran: \(run.events)")
    #expect(!run.events.contains(.underrun("b")), "the healthy stem underran: \(run.events)")
    #expect(try mixer.stems.status("b").underruns == 0)
    #expect(firstMismatch(run.audio.right[...], b.right[0..<run.audio.count]) == nil, "B is not bit-exact")
    print(
      "slow stem (1.5 s a read) for 4 s: underrun blocks a \(try mixer.stems.status("a").underruns), b \(try mixer.stems.status("b").underruns); events \(run.events)"
    )
  }

  @Test("three slow stems at once (one fewer than the disk workers) still leave the healthy stem untouched")
  func threeSlowStemsDoNotStarveOthers() throws {
    let folder = try TemporaryFolder()
    let pathB = folder.file("b.wav")
    let b = try writeNoise(pathB, seconds: 6, seed: 810)
    let slowDisk = SlowDisk()
    let mixer = Mixer(sampleRate: 48000, streaming: .thread, maxVoices: 16, diskPacing: slowDisk)
    defer { mixer.shutdown() }
    try #require(mixer.disk.workerCount == 4)
    try mixer.stems.add(path: pathB, settings: stem("b", pathB) { $0.pan = 1 })
    for (i, name) in ["a1", "a2", "a3"].enumerated() {
      let path = folder.file("\(name).wav")
      _ = try writeNoise(path, seconds: 6, seed: 710 + UInt64(i))
      try mixer.stems.add(path: path, settings: stem(name, path) { $0.pan = -1 })
    }
    waitForFullRings(mixer)
    for name in ["a1", "a2", "a3"] {
      slowDisk.set(try #require(mixer.table.stems.first { $0.settings.name == name }).shared.pointer, milliseconds: 1500)
    }
    try mixer.transport.play()
    let run = renderPaced(mixer, frames: 48000 * 4)
    for name in ["a1", "a2", "a3"] {
      #expect(run.events.contains(.underrun(name)), "\(name) never underran: \(run.events)")
    }
    #expect(!run.events.contains(.underrun("b")), "the healthy stem underran: \(run.events)")
    #expect(firstMismatch(run.audio.right[...], b.right[0..<run.audio.count]) == nil, "B is not bit-exact")
  }

  @Test(
    "SoundFileInfo.formatName names the container (WAV, FLAC), whatever the file is called")
  func formatName() throws {
    let folder = try TemporaryFolder()
    let wav = folder.file("actually-a-wav.mp3"), flac = folder.file("song.flac")
    try writeAudio(wav, format: .wavFloat, channels: [Signal.constant(0.1, frames: 100)])
    try writeAudio(flac, format: .flac, channels: [Signal.constant(0.1, frames: 100)])
    #expect(try SoundFile(readingFrom: wav).info.formatName == "WAV")
    #expect(try SoundFile(readingFrom: flac).info.formatName == "FLAC")
  }

  @Test("after an underrun a stem catches up: where it sounds it is in step with the transport, never late by the gap")
  func underrunResumesInSync() throws {
    let folder = try TemporaryFolder()
    let pathA = folder.file("a.wav")
    let a = try writeNoise(pathA, seconds: 8, seed: 900)
    let slowDisk = SlowDisk()
    let mixer = Mixer(sampleRate: 48000, streaming: .thread, maxVoices: 16, diskPacing: slowDisk)
    defer { mixer.shutdown() }
    try mixer.stems.add(path: pathA, settings: stem("a", pathA) { $0.pan = -1 })
    waitForFullRings(mixer)
    let sharedA = try #require(mixer.table.stems.first { $0.settings.name == "a" }).shared.pointer
    slowDisk.set(sharedA, milliseconds: 1500)
    try mixer.transport.seek(toSeconds: 1)
    try mixer.transport.play()
    // Slow: the hold gives up after 1 s, the first read lands ~1.5 s after the seek, and while
    // reads stay slow the stem keeps running dry (skipping what it missed eats most of each
    // read). Then the disk is fast again for 2.5 s: it must catch up and stay in step.
    let slow = renderPaced(mixer, frames: 48000 * 2)
    slowDisk.set(sharedA, milliseconds: 0)
    var out = slow.audio
    var events = slow.events
    // Fast again: it renders on in half seconds until one whole second plays without a gap (the
    // disk workers run at nice 10, so on a busy machine catching up can take longer), for up to
    // 20 s of transport time.
    var fastSeconds = 0.0
    while fastSeconds < 20 {
      let more = renderPaced(mixer, frames: 24000)
      out.append(more.audio)
      events += more.events
      fastSeconds += 0.5
      if fastSeconds >= 1.5 && out.left[(out.count - 48000)...].allSatisfy({ $0 != 0 }) { break }
    }
    #expect(events.contains(.underrun("a")), "\(events)")
    let start = try #require(slow.states.firstIndex(of: .playing), "never started") * 256
    let heard = try #require((start..<out.count).first { out.left[$0] != 0 }, "the stem never came back")
    // Every frame it plays is the file's frame for that transport position; silence elsewhere.
    let wrong = (heard..<out.count).first { out.left[$0] != 0 && out.left[$0] != a.left[48000 + $0 - start] }
    let lateBy = wrong.flatMap { w in (0..<(a.count - 48000)).first { a.left[48000 + $0] == out.left[w] }.map { w - start - $0 } }
    #expect(wrong == nil, "out of step at frame \(wrong ?? 0) (late by \(lateBy.map(String.init) ?? "?") frames)")
    // Once the disk is fast again it plays without gaps: a whole second is all there.
    let tail = (out.count - 48000)..<out.count
    #expect(out.left[tail].allSatisfy { $0 != 0 }, "still gaps \(fastSeconds) s after the disk recovered")
    let gaps = (heard..<out.count).filter { out.left[$0] == 0 }.count
    print(
      "underrun catch-up: came back \(heard - start) frames after the start, in step; \(gaps) silent frames after that while the disk stayed slow; \(events.filter { $0 == .underrun("a") }.count) underrun episodes"
    )
  }
}

/// A slow disk for the tests above, injected into the mixer's disk workers (`DiskReadPacing`):
/// each read of a chosen stem stalls for the milliseconds set for it.
final class SlowDisk: DiskReadPacing, @unchecked Sendable {
  private let lock = NSLock()
  private var delays: [UnsafeMutablePointer<StemShared>: Int] = [:]

  func set(_ stem: UnsafeMutablePointer<StemShared>, milliseconds: Int) {
    lock.lock()
    delays[stem] = milliseconds
    lock.unlock()
  }

  func stallMilliseconds(beforeReading stem: StemSharedRef) -> Int {
    lock.lock()
    defer { lock.unlock() }
    return delays[stem.pointer] ?? 0
  }
}
