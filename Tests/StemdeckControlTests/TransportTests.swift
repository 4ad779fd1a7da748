import Foundation
import StemdeckAudioFile
import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import Testing

@Suite struct TransportTests {
  /// Frames of fade-in after a start away from 0 or a seek while playing (5 ms at 48 kHz).
  static let fade = 240

  /// A mixer with a 3 s ramp hard left and a 1 s ramp looped once (loops 1) hard right.
  static func rig(in folder: TemporaryFolder) throws -> (rig: MixerRig, long: [Float], short: [Float]) {
    let long = Signal.ramp(frames: 144_000)
    let short = Signal.ramp(frames: 48000, from: 1, to: -1)
    try writeAudio(folder.file("long.wav"), format: .wavFloat, channels: [long])
    try writeAudio(folder.file("short.wav"), format: .wavFloat, channels: [short])
    let rig = MixerRig()
    try rig.mixer.stems.add(path: folder.file("long.wav"), settings: stem("long", "long.wav") { $0.pan = -1 })
    try rig.mixer.stems.add(
      path: folder.file("short.wav"),
      settings: stem("short", "short.wav") {
        $0.pan = 1; $0.loops = 1
      })
    return (rig, long, short)
  }

  @Test("seek to 1.5 s gives the file's samples from 1.5 s, exactly, after the fade-in")
  func seekWhilePaused() throws {
    let folder = try TemporaryFolder()
    let (rig, long, short) = try Self.rig(in: folder)
    try rig.mixer.transport.seek(toSeconds: 1.5)
    #expect(rig.mixer.transport.position == 1.5, "a requested seek shows at once")
    try rig.mixer.transport.play()
    let out = rig.render(4096)
    // Exact from the frame after the fade-in's last ramp frame (see `fadeEndsExactly` for frame 240).
    let f = Self.fade + 1
    #expect(firstMismatch(out.left[f...], long[(72000 + f)..<(72000 + 4096)]) == nil)
    // The short stem (1 s, loops 1) is 0.5 s into its second pass: its loop phase is kept.
    #expect(firstMismatch(out.right[f...], short[(24000 + f)..<(24000 + 4096)]) == nil)
    // During the fade-in the output only grows toward the signal.
    for i in 0..<f {
      #expect(abs(out.left[i]) <= abs(long[72000 + i]) + 1e-7)
    }
    #expect(abs(rig.mixer.transport.position - (1.5 + 4096.0 / 48000)) < 1e-12)
    let status = try rig.mixer.stems.status("short")
    #expect(status.loopIndex == 1)
    #expect(abs(status.positionInFile - (0.5 + 4096.0 / 48000)) < 0.01, "position in file \(status.positionInFile)")
  }

  @Test("seeking while playing fades out, then plays from the new position in step with the position")
  func seekWhilePlaying() throws {
    let folder = try TemporaryFolder()
    let (rig, long, short) = try Self.rig(in: folder)
    try rig.mixer.transport.play()
    let first = rig.render(4096)
    #expect(firstMismatch(first.left[...], long[0..<4096]) == nil, "playing from 0 starts with no fade")
    #expect(firstMismatch(first.right[...], short[0..<4096]) == nil)

    try rig.mixer.transport.seek(toSeconds: 1.25)
    let out = rig.render(8192)
    // The fade-out before the jump is smooth (the fade-in after it: `seekWhilePlayingFadesIn`).
    #expect(maxStep(first.left + out.left[..<256]) <= 1.0 / 200, "click at the seek")
    #expect(out.left[240..<256].allSatisfy { abs($0) < 1e-6 }, "faded out within 5 ms")
    let end = Int((rig.mixer.transport.position * 48000).rounded())
    #expect(end > 60000 && end <= 60000 + 8192, "position \(end)")
    // The last 4096 frames are the files at the frames the position says.
    #expect(firstMismatch(out.left[4096...], long[(end - 4096)..<end]) == nil)
    // Short stem: 1.25 s is 0.25 s into its second pass.
    #expect(firstMismatch(out.right[4096...], short[(end - 4096 - 48000)..<(end - 48000)]) == nil)
  }

  @Test("seeking while playing resumes with a fade-in, not a click")
  func seekWhilePlayingFadesIn() throws {
    let folder = try TemporaryFolder()
    let (rig, _, _) = try Self.rig(in: folder)
    try rig.mixer.transport.play()
    let first = rig.render(4096)
    try rig.mixer.transport.seek(toSeconds: 1.25)
    let out = rig.render(4096)
    let all = first.left + out.left
    // The ramp moves 1/72000 per frame; a 5 ms fade of a signal near -0.17 moves < 0.001 per frame.
    #expect(maxStep(all) <= 1.0 / 200, "largest step \(maxStep(all)) (a click)")
  }

  @Test("stop rewinds to 0 and the next play starts from the first sample without a fade")
  func stopRewinds() throws {
    let folder = try TemporaryFolder()
    let (rig, long, _) = try Self.rig(in: folder)
    try rig.mixer.transport.play()
    _ = rig.render(10000)
    try rig.mixer.transport.stop()
    #expect(rig.mixer.transport.position == 0)
    let stopping = rig.render(2048)
    #expect(stopping.left[1024...].allSatisfy { $0 == 0 }, "silent once stopped")
    #expect(rig.mixer.transport.position == 0)
    #expect(rig.mixer.transport.state == .paused)
    try rig.mixer.transport.play()
    let again = rig.render(2048)
    #expect(firstMismatch(again.left[...], long[0..<2048]) == nil)
  }

  @Test("stems report their end; at the end of the song the transport stops and play starts again from the top")
  func finishAndReplay() throws {
    let folder = try TemporaryFolder()
    let (rig, long, short) = try Self.rig(in: folder)
    try rig.mixer.transport.seek(toSeconds: 1.9)
    try rig.mixer.transport.play()
    let out = rig.render(9600)  // to 2.1 s
    var events = rig.mixer.pump()
    // The short stem (2 s with its loop) ends at 2 s = frame 4800 of this render.
    #expect(firstMismatch(out.right[(Self.fade + 1)..<4800], short[(43200 + Self.fade + 1)..<48000]) == nil)
    #expect(out.right[4800...].allSatisfy { $0 == 0 })
    #expect(try rig.mixer.stems.status("short").finished)
    #expect(!(try rig.mixer.stems.status("long").finished))
    #expect(events == [.stemFinished("short")])
    #expect(!rig.mixer.transport.allFiniteStemsFinished)
    _ = rig.render(48000)  // past 3 s: the long one ends too
    events = rig.mixer.pump()
    #expect(events == [.stemFinished("long"), .allFinished])
    #expect(rig.mixer.transport.allFiniteStemsFinished)
    _ = rig.render(1024)
    #expect(rig.mixer.transport.state == .paused, "the transport stops at the end of the song")
    #expect(rig.mixer.pump().isEmpty, "the end is reported once")

    // Play after the end: from the top, at once, without a fade.
    try rig.mixer.transport.play()
    #expect(rig.mixer.transport.position == 0)
    let again = rig.render(4096)
    #expect(firstMismatch(again.left[...], long[0..<4096]) == nil)
    #expect(firstMismatch(again.right[...], short[0..<4096]) == nil)
    #expect(!(try rig.mixer.stems.status("short").finished))
    #expect(!rig.mixer.transport.allFiniteStemsFinished)

    // Seeking back after the end, then playing, resumes there instead.
    try rig.mixer.transport.seek(toSeconds: 2.9)
    _ = rig.render(9600)
    #expect(rig.mixer.pump().contains(.allFinished))
    _ = rig.render(1024)
    #expect(rig.mixer.transport.state == .paused)
    try rig.mixer.transport.seek(toSeconds: 0.5)
    _ = rig.render(256)
    try rig.mixer.transport.play()
    let fromSeek = rig.render(4096)
    #expect(firstMismatch(fromSeek.left[(Self.fade + 1)...], long[(24000 + Self.fade + 1)..<(24000 + 4096)]) == nil)
  }

  @Test("after the end of the song, seek then play at once (no block in between) plays from the seek position")
  func seekThenPlayAfterEnd() throws {
    let folder = try TemporaryFolder()
    let (rig, long, _) = try Self.rig(in: folder)
    try rig.mixer.transport.seek(toSeconds: 2.9)
    try rig.mixer.transport.play()
    _ = rig.render(9600)
    #expect(rig.mixer.pump().contains(.allFinished))
    _ = rig.render(1024)
    #expect(rig.mixer.transport.state == .paused)
    try rig.mixer.transport.seek(toSeconds: 0.5)
    try rig.mixer.transport.play()
    #expect(rig.mixer.transport.position == 0.5)
    let out = rig.render(4096)
    #expect(firstMismatch(out.left[(Self.fade + 1)...], long[(24000 + Self.fade + 1)..<(24000 + 4096)]) == nil)
  }

  @Test("a stem with a start offset joins at its offset, sample-aligned, also after seeks")
  func startOffset() throws {
    let folder = try TemporaryFolder()
    let ramp = Signal.ramp(frames: 48000)
    try writeAudio(folder.file("r.wav"), format: .wavFloat, channels: [ramp])
    let rig = MixerRig()
    try rig.mixer.stems.add(
      path: folder.file("r.wav"),
      settings: stem("late", "r.wav") {
        $0.pan = -1; $0.startOffset = 0.25
      })
    #expect(rig.mixer.transport.duration == 1.25)
    try rig.mixer.transport.play()
    let out = rig.render(24000)
    #expect(out.left[0..<12000].allSatisfy { $0 == 0 })
    #expect(firstMismatch(out.left[12000...], ramp[0..<12000]) == nil)

    // Seek before the offset: the stem waits for it again.
    try rig.mixer.transport.seek(toSeconds: 0.1)
    let before = rig.render(24000)
    let end = Int((rig.mixer.transport.position * 48000).rounded())
    let joinIndex = 24000 - (end - 12000)  // index in `before` of transport frame 12000
    #expect(joinIndex > 256 && joinIndex < 24000)
    #expect(before.left[256..<joinIndex].allSatisfy { $0 == 0 }, "silent between the fade-out and the offset")
    #expect(firstMismatch(before.left[joinIndex...], ramp[0..<(24000 - joinIndex)]) == nil)

    // Seek past the offset: 0.75 s is 0.5 s into the file.
    try rig.mixer.transport.seek(toSeconds: 0.75)
    let after = rig.render(8192)
    let endAfter = Int((rig.mixer.transport.position * 48000).rounded())
    #expect(firstMismatch(after.left[4096...], ramp[(endAfter - 12000 - 4096)..<(endAfter - 12000)]) == nil)
  }

  @Test("duration is the longest finite stem including loops, rate and start offset")
  func duration() throws {
    let folder = try TemporaryFolder()
    try writeAudio(folder.file("three.wav"), format: .wavFloat, channels: [Signal.ramp(frames: 144_000)])
    try writeAudio(folder.file("one.wav"), format: .wavFloat, channels: [Signal.ramp(frames: 48000)])
    try writeAudio(folder.file("cd.wav"), format: .wav16, sampleRate: 44100, channels: [Signal.ramp(frames: 44100)])
    let rig = MixerRig()
    #expect(rig.mixer.transport.duration == nil)
    try rig.mixer.stems.add(path: folder.file("three.wav"), settings: stem("three", "three.wav") { $0.startOffset = 0.5 })
    #expect(rig.mixer.transport.duration == 3.5)
    // 1 s × 2 passes at half speed = 4 s.
    try rig.mixer.stems.add(
      path: folder.file("one.wav"),
      settings: stem("one", "one.wav") {
        $0.loops = 1; $0.rate = 0.5
      })
    #expect(abs(rig.mixer.transport.duration! - 4) < 1e-9)
    // A stem looping forever is left out.
    try rig.mixer.stems.add(path: folder.file("cd.wav"), settings: stem("forever", "cd.wav") { $0.loops = -1 })
    #expect(abs(rig.mixer.transport.duration! - 4) < 1e-9)
    #expect(rig.mixer.transport.hasEndlessStems)
    // 44.1 kHz file, 3 passes at rate 0.6: 3 × 1 s / 0.6 = 5 s.
    try rig.mixer.stems.setLoops("forever", 2)
    try rig.mixer.stems.setRate("forever", 0.6)
    #expect(abs(rig.mixer.transport.duration! - 5) < 1e-9)
    #expect(!rig.mixer.transport.hasEndlessStems)
    try rig.mixer.stems.setLoops("one", 4)  // 5 passes of 1 s at half speed → 10 s
    #expect(abs(rig.mixer.transport.duration! - 10) < 1e-9)
    try rig.mixer.stems.remove("one")
    #expect(abs(rig.mixer.transport.duration! - 5) < 1e-9)
  }
}
