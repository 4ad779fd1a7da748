import Foundation
import StemdeckAudioFile
import StemdeckControl
import StemdeckEngine
import StemdeckSession
import StemdeckTestSupport
import Testing

// One topic of MusicalTests (the suite and its helpers: MusicalSupport.swift).
extension MusicalTests {
  // MARK: - 5b. Stretch, the `fast` quality (WSOLA, issue 25)

  /// A stereo file of `seconds` with no short period: three incommensurate tones on the left,
  /// decaying noise bursts every 0.25 s on the right.
  static func music(_ folder: TemporaryFolder, _ name: String, seconds: Double, sampleRate: Int = 48000) throws -> String {
    let frames = Int(seconds * Double(sampleRate))
    let left = tones(sampleRate, frames)
    var seed: UInt32 = 12345
    let right = (0..<frames).map { i -> Float in
      seed = seed &* 1_664_525 &+ 1_013_904_223
      let noise = Float(Int32(bitPattern: seed)) / Float(Int32.max)
      let t = Double(i % (sampleRate / 4)) / Double(sampleRate)
      return noise * Float(0.4 * exp(-t * 30))
    }
    let path = folder.file(name)
    try writeAudio(path, format: .wavFloat, sampleRate: sampleRate, channels: [left, right])
    return path
  }

  /// A rig with one `fast` stretch stem "m" playing `path` at `rate` (started unless `playing` is false).
  static func fastStemRig(_ path: String, rate: Double = 1, playing: Bool = true) throws -> MixerRig {
    let rig = MixerRig()
    try rig.mixer.stems.add(
      path: path,
      settings: stem("m", path) {
        $0.mode = .stretch; $0.stretch = .fast; $0.rate = rate
      })
    if playing { try rig.mixer.transport.play() }
    return rig
  }

  @Test(
    "stretch fast keeps a 440 Hz sine within 1 cent at tempi 0.5, 0.8, 1.15 and 1.5, at full level",
    arguments: [0.5, 0.8, 1.15, 1.5])
  func fastStretchPitch(rate: Double) throws {
    let folder = try TemporaryFolder()
    let (rig, out) = try Self.renderSine(folder, seconds: 4 / rate) {
      $0.mode = .stretch; $0.stretch = .fast; $0.rate = rate
    }
    #expect(try rig.mixer.stems.status("s").underruns == 0)
    // Zero crossings over all but the first and last half second: 1.5 to 7 s of tone.
    let range = 24000..<(Int(4 / rate * 48000) - 24000)
    let f = estimatedFrequency(out, sampleRate: 48000, in: range)
    let cents = 1200 * log2(f / 440)
    #expect(abs(cents) <= 1, "rate \(rate): \(f) Hz (\(cents) cents)")
    // The splices add the segments in phase: the level holds (a sine of amplitude 0.5 has rms 0.354).
    #expect(rms(out[range]) > 0.33, "rate \(rate): level sags to rms \(rms(out[range]))")
    #expect(maxStep(out, in: range) < 0.03, "rate \(rate): a step of \(maxStep(out, in: range)) (the sine's own 0.029)")
  }

  @Test("stretch fast: a 10 s file at tempo 0.8 lasts 12.5 s within a hop, and starts on frame 0")
  func fastStretchDuration() throws {
    let folder = try TemporaryFolder()
    let sine = Signal.sine(frequency: 440, sampleRate: 48000, frames: 480_000, amplitude: 0.5)
    let path = try Musical.mono(folder, "ten.wav", sine)
    let rig = MixerRig()
    try rig.mixer.stems.add(
      path: path,
      settings: stem("s", path) {
        $0.pan = -1; $0.mode = .stretch; $0.stretch = .fast; $0.rate = 0.8
      })
    try rig.mixer.transport.play()
    let out = rig.render(13 * 48000, block: 512).left
    let end = Self.lastAudible(out)
    #expect(abs(end - 600_000) <= 512, "sound ends at frame \(end), want 600000 (12.5 s)")
    #expect(out[(600_000 + 512)...].allSatisfy { $0 == 0 }, "still sounding a hop after 12.5 s")
    #expect(rms(out[0..<480]) > 0.1, "the tone does not start on frame 0: rms of the first 10 ms \(rms(out[0..<480]))")
    #expect(rig.mixer.pump().contains(.stemFinished("s")))
  }

  /// The output depends only on the input and the tempo at each hop, never on the block size:
  /// what makes live (any period) equal the offline render bit for bit.
  @Test(
    "stretch fast is bit-identical in 64-, 1000- and 4096-frame blocks: stereo music at 0.8 and 1.3, a 44.1 kHz file at 0.9",
    arguments: [(48000, 0.8), (48000, 1.3), (44100, 0.9)])
  func fastStretchBlockSizes(fileRate: Int, rate: Double) throws {
    let folder = try TemporaryFolder()
    let path = try Self.music(folder, "m.wav", seconds: 3, sampleRate: fileRate)
    func render(block: Int) throws -> Stereo {
      let rig = try Self.fastStemRig(path, rate: rate)
      let out = rig.render(Int(3 / rate * 48000) + 4096, block: block)
      #expect(try rig.mixer.stems.status("m").underruns == 0)
      return out
    }
    let a = try render(block: 64)
    let b = try render(block: 1000)
    let c = try render(block: 4096)
    #expect(rms(a.left[48000..<96000]) > 0.1 && rms(a.right[48000..<96000]) > 0.02, "silent output")
    func firstDifference(_ x: Stereo, _ y: Stereo) -> Int? {
      (0..<x.count).first { x.left[$0] != y.left[$0] || x.right[$0] != y.right[$0] }
    }
    let firstAB = firstDifference(a, b)
    let firstAC = firstDifference(a, c)
    #expect(firstAB == nil, "64 vs 1000 frames differ from sample \(firstAB ?? -1)")
    #expect(firstAC == nil, "64 vs 4096 frames differ from sample \(firstAC ?? -1)")
  }

  @Test("stretch fast: a rate glide 1 → 0.6 over 2 s has no step beyond the sine's slope and keeps 440 Hz")
  func fastStretchGlide() throws {
    let folder = try TemporaryFolder()
    let (rig, first) = try Self.renderSine(folder, seconds: 0.5) {
      $0.mode = .stretch; $0.stretch = .fast
    }
    try rig.mixer.strips.glide("s", to: .rate(0.6), seconds: 2, exponential: false)
    let out = first + rig.render(3 * 48000, block: 128).left
    let slope = 2 * Double.pi * 440 / 48000 * 0.5
    let worst = maxStep(out, in: 1000..<(out.count - 1))
    #expect(worst < slope * 1.05, "largest step \(worst), the sine's own \(slope)")
    for start in stride(from: 24000, to: 3 * 48000, by: 24000) {
      let f = estimatedFrequency(out, sampleRate: 48000, in: start..<(start + 24000))
      #expect(abs(1200 * log2(f / 440)) <= 2, "at frame \(start): \(f) Hz")
    }
    #expect(try rig.mixer.stems.status("s").settings.rate == 0.6)
    // The tempo took effect: 0.5 s at 1, 2 s gliding (mean 0.8), then 0.6 of a second per second.
    let heard = try rig.mixer.stems.status("s").positionInFile
    #expect(abs(heard - (0.5 + 1.6 + 0.6)) < 0.05, "position in the file \(heard)")
  }

  /// A tempo change reaches a `fast` stem in the next period, not at its next 512-frame hop: the
  /// block right after `rate` differs from the same render without it, the blocks before do not.
  /// (The mapping itself: WsolaTests' `tempoChangeFollowedNextPull`.)
  @Test("stretch fast: 'rate' between two 128-frame periods in mid-hop changes the very next period", arguments: [(0.5, 1.5), (1.2, 0.7)])
  func fastStretchRateChangeNextPeriod(from: Double, to: Double) throws {
    let folder = try TemporaryFolder()
    let path = try Self.music(folder, "m.wav", seconds: 3)
    func rig() throws -> MixerRig { try Self.fastStemRig(path, rate: from) }
    // 47872 frames: half way through a hop.
    let held = try rig()
    let heldOut = held.render(47872 + 1024, block: 128)
    let changed = try rig()
    let before = changed.render(47872, block: 128)
    try changed.mixer.stems.setRate("m", to)
    let after = changed.render(1024, block: 128)
    #expect(before.left == Array(heldOut.left[0..<47872]) && before.right == Array(heldOut.right[0..<47872]))
    let first = (0..<1024).first { after.left[$0] != heldOut.left[47872 + $0] || after.right[$0] != heldOut.right[47872 + $0] }
    #expect(first != nil && first! < 128, "the change first shows at frame \(first ?? -1) after it")
  }

  /// The `fast` stretcher follows a rate glide output frame by output frame (not block by block as
  /// the renderer advances the stem's rate), so a glide and a later rate change give the same
  /// samples at any block size: live at 128 frames equals the offline render during a glide too.
  @Test("stretch fast: a rate glide 1 → 0.6 over 1.5 s, then 'rate 1.2': bit-identical in 64-, 128- and 1000-frame blocks")
  func fastStretchGlideBlockSizes() throws {
    let folder = try TemporaryFolder()
    let path = try Self.music(folder, "m.wav", seconds: 3)
    func render(block: Int) throws -> Stereo {
      let rig = try Self.fastStemRig(path)
      var out = rig.render(48000, block: block)
      func append(_ more: Stereo) {
        out.left += more.left
        out.right += more.right
      }
      try rig.mixer.strips.glide("m", to: .rate(0.6), seconds: 1.5, exponential: false)
      append(rig.render(96000, block: block))
      try rig.mixer.stems.setRate("m", 1.2)
      append(rig.render(48000, block: block))
      #expect(try rig.mixer.stems.status("m").underruns == 0)
      return out
    }
    let a = try render(block: 128)
    #expect(rms(a.left[96000..<144000]) > 0.1 && rms(a.right[96000..<144000]) > 0.02, "silent output")
    // The glide and the change took effect: the 3 s file's end maps to 1 s at 1, 1.5 s gliding
    // (1.2 s of it), 0.5 s at 0.6 (0.3 s), then its last 0.5 s at 1.2: output frame 164000.
    let end = Self.lastAudible(a.left)
    #expect(abs(end - 164_000) <= 1024, "the sound ends at frame \(end), want 164000")
    for block in [64, 1000] {
      let b = try render(block: block)
      let first = (0..<a.count).first { a.left[$0] != b.left[$0] || a.right[$0] != b.right[$0] }
      #expect(first == nil, "128 vs \(block) frames differ from frame \(first ?? -1)")
    }
  }

  @Test("stretch fast after a seek: a stereo stem plays on from the new place as a fresh one started there (nothing of before)")
  func fastStretchSeekForgets() throws {
    let folder = try TemporaryFolder()
    let path = try Self.music(folder, "m.wav", seconds: 3)
    func rig() throws -> MixerRig { try Self.fastStemRig(path, rate: 0.8, playing: false) }
    // Played for a second, paused, sent back to 0.5 s and played again…
    let played = try rig()
    try played.mixer.transport.play()
    _ = played.render(48000)
    try played.mixer.transport.pause()
    _ = played.render(4800)
    try played.mixer.transport.seek(toSeconds: 0.5)
    _ = played.render(256)
    try played.mixer.transport.play()
    let again = played.render(48000)
    // …equals a stem started at 0.5 s, on both sides (the right channel's history too).
    let fresh = try rig()
    try fresh.mixer.transport.seek(toSeconds: 0.5)
    _ = fresh.render(256)
    try fresh.mixer.transport.play()
    let first = fresh.render(48000)
    #expect(rms(first.right[0..<24000]) > 0.02 && rms(first.left[0..<24000]) > 0.1, "silent output")
    let l = (0..<48000).first { again.left[$0] != first.left[$0] }
    let r = (0..<48000).first { again.right[$0] != first.right[$0] }
    #expect(l == nil && r == nil, "after the seek, left differs from \(l ?? -1), right from \(r ?? -1)")
  }

  @Test("stretch fast loops: a 1 s loop played three times at tempo 0.8 lasts 3.75 s with no gap at the seams")
  func fastStretchLoops() throws {
    let folder = try TemporaryFolder()
    let sine = Signal.sine(frequency: 440, sampleRate: 48000, frames: 48000, amplitude: 0.5)
    let path = try Musical.mono(folder, "loop.wav", sine)
    let rig = MixerRig()
    try rig.mixer.stems.add(
      path: path,
      settings: stem("s", path) {
        $0.pan = -1; $0.mode = .stretch; $0.stretch = .fast; $0.rate = 0.8; $0.loops = 2
      })
    try rig.mixer.transport.play()
    let out = rig.render(4 * 48000, block: 256).left
    let end = Self.lastAudible(out)
    #expect(abs(end - 180_000) <= 512, "sound ends at frame \(end), want 180000 (3.75 s)")
    var quietest = 1.0
    for start in stride(from: 0, to: 179_000 - 480, by: 240) { quietest = min(quietest, rms(out[start..<(start + 480)])) }
    #expect(quietest > 0.25, "a 10 ms stretch fell to rms \(quietest): a gap at a seam")
    let f = estimatedFrequency(out, sampleRate: 48000, in: 24000..<156000)
    #expect(abs(1200 * log2(f / 440)) <= 1, "\(f) Hz across the seams")
  }

  @Test("stretch fast with a pitch shift uses Rubber Band (+7 semitones exact); the quality switches live without a rebuild at pitch ≠ 0")
  func fastStretchPitchShiftUsesRubberBand() throws {
    #expect(StretchState.usesWsola(fast: true, pitchSemitones: 0))
    #expect(!StretchState.usesWsola(fast: true, pitchSemitones: 7))
    #expect(!StretchState.usesWsola(fast: false, pitchSemitones: 0))
    let folder = try TemporaryFolder()
    let (rig, out) = try Self.renderSine(folder, seconds: 2) {
      $0.mode = .stretch; $0.stretch = .fast; $0.pitch = 7; $0.rate = 0.8
    }
    let f = estimatedFrequency(out, sampleRate: 48000, in: 24000..<90000)
    let cents = 1200 * log2(f / 659.2551138)
    #expect(abs(cents) <= 0.5, "\(f) Hz (\(cents) cents)")
    try rig.mixer.stems.setMode("s", .stretch, stretch: .fine)
    #expect(try rig.mixer.stems.status("s").settings.stretch == .fine)
    try rig.mixer.stems.setMode("s", .stretch, stretch: .fast)
    #expect(try rig.mixer.stems.status("s").settings.stretch == .fast)
    // Back to pitch 0: WSOLA (a new stretcher), still 440 Hz.
    try rig.mixer.stems.setPitch("s", 0)
    let after = rig.render(48000, block: 512).left
    let g = estimatedFrequency(after, sampleRate: 48000, in: 12000..<48000)
    #expect(abs(1200 * log2(g / 440)) <= 1, "after pitch 0: \(g) Hz")
  }

  @Test("mode NAME stretch fast while playing: no click, the tone goes on at 440 Hz; plain 'stretch' means fine")
  func fastStretchSwitchWhilePlaying() throws {
    let folder = try TemporaryFolder()
    let (rig, first) = try Self.renderSine(folder, seconds: 1) {
      $0.mode = .stretch; $0.rate = 0.9
    }
    try rig.mixer.stems.setMode("s", .stretch, stretch: .fast)
    #expect(try rig.mixer.stems.status("s").settings.stretch == .fast)
    let second = rig.render(48000, block: 512).left
    let out = first + second
    let worst = maxStep(out, in: 43200..<72000)
    #expect(worst < 0.05, "largest step around the switch \(worst)")
    let f = estimatedFrequency(second, sampleRate: 48000, in: 24000..<48000)
    #expect(abs(1200 * log2(f / 440)) <= 1, "after the switch: \(f) Hz")
    try rig.mixer.stems.setMode("s", .stretch)
    #expect(try rig.mixer.stems.status("s").settings.stretch == .fine)
  }
}
