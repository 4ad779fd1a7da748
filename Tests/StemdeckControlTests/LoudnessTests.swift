import Foundation
import StemdeckAudioFile
import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import Testing

// EBU R 128 measurement (`LoudnessMeter`, `OfflineRenderer.analyze`) and normalised renders
// (`render --normalize`), against the EBU Tech 3341 cases that can be generated here.

@Suite struct LoudnessTests {
  static let rate = 48000

  /// A 1 kHz sine of `dBFS` peak level in both channels, `seconds` long (EBU Tech 3341 cases 1–5).
  static func sine(_ dBFS: Double, seconds: Double, frequency: Double = 1000, phase: Double = 0) -> [Float] {
    let s = Signal.sine(
      frequency: frequency, sampleRate: Double(rate), frames: Int(seconds * Double(rate)),
      amplitude: linear(dBFS), phase: phase)
    return Signal.interleave([s, s])
  }

  static func linear(_ db: Double) -> Double { pow(10, db / 20) }

  static func measure(_ interleaved: [Float]) throws -> Loudness {
    let meter = try LoudnessMeter(sampleRate: rate)
    try meter.add(interleaved)
    return meter.loudness
  }

  /// Integrated loudness of a stereo file, measured from its samples by a fresh meter.
  static func measure(file: String) throws -> Loudness {
    let audio = try readAudio(file)
    #expect(audio.channels == 2)
    let meter = try LoudnessMeter(sampleRate: audio.info.sampleRate)
    try meter.add(audio.samples)
    return meter.loudness
  }

  @Test(
    "EBU Tech 3341 cases 1 and 2: a 1 kHz stereo sine at -23 and -20 dBFS reads -23.0 and -20.0 LUFS (±0.1)",
    arguments: [-23.0, -20.0])
  func steadySine(level: Double) throws {
    let l = try Self.measure(Self.sine(level, seconds: 20))
    #expect(abs(l.integrated - level) <= 0.1, "\(l.integrated) LUFS")
    #expect(abs(l.samplePeakDecibels - level) <= 0.01)
    #expect(l.range <= 0.1, "a steady tone has no loudness range: \(l.range) LU")
  }

  @Test("EBU Tech 3341 cases 3 and 4: quiet passages fall under the relative and absolute gates (-23.0 ±0.1 LUFS)")
  func gating() throws {
    // Case 3: -36 dBFS 10 s, -23 dBFS 60 s, -36 dBFS 10 s.
    let three = Self.sine(-36, seconds: 10) + Self.sine(-23, seconds: 60) + Self.sine(-36, seconds: 10)
    let l3 = try Self.measure(three)
    #expect(abs(l3.integrated + 23) <= 0.1, "case 3: \(l3.integrated) LUFS")
    // Case 4: -72, -36, -23, -36, -72 dBFS for 10, 10, 60, 10, 10 s.
    let four =
      Self.sine(-72, seconds: 10) + Self.sine(-36, seconds: 10) + Self.sine(-23, seconds: 60)
      + Self.sine(-36, seconds: 10) + Self.sine(-72, seconds: 10)
    let l4 = try Self.measure(four)
    #expect(abs(l4.integrated + 23) <= 0.1, "case 4: \(l4.integrated) LUFS")
    // Without the gates the quiet parts would pull it down by about 0.8 LU: the gates are at work.
    let ungated =
      10
      * log10(
        (60 * Self.linear(-23) * Self.linear(-23) + 20 * Self.linear(-36) * Self.linear(-36)) / 80 / (Self.linear(-23) * Self.linear(-23)))
      - 23
    #expect(ungated < -23.5)
  }

  @Test("EBU Tech 3341 case 15: a quarter-rate sine at 45° has samples at -3.01 dBFS and a true peak of 0 dBTP (+0.2/-0.4)")
  func truePeak() throws {
    let l = try Self.measure(Self.sine(0, seconds: 2, frequency: Double(Self.rate) / 4, phase: Double.pi / 4))
    #expect(abs(l.samplePeakDecibels + 3.01) <= 0.01, "sample peak \(l.samplePeakDecibels)")
    #expect(l.truePeakDecibels >= -0.4 && l.truePeakDecibels <= 0.2, "true peak \(l.truePeakDecibels) dBTP")
  }

  @Test("a silent signal reads -inf LUFS and no peak")
  func silence() throws {
    let l = try Self.measure([Float](repeating: 0, count: 2 * Self.rate))
    #expect(l.integrated == -.infinity)
    #expect(l.truePeak == 0 && l.samplePeak == 0)
    #expect(l.lines == ["integrated loudness -inf LUFS", "loudness range 0.0 LU", "true peak -inf dBTP", "sample peak -inf dBFS"])
  }

  // MARK: - Through the renderer

  /// A session with one stereo stem holding `samples` (interleaved).
  static func session(_ samples: [Float], in folder: TemporaryFolder, name: String = "tone.wav") throws -> Session {
    let frames = samples.count / 2
    try writeAudio(
      folder.file(name), format: .wavFloat,
      channels: [(0..<frames).map { samples[2 * $0] }, (0..<frames).map { samples[2 * $0 + 1] }])
    var s = Session()
    s.stems = [stem("tone", name)]
    return s
  }

  /// Music-like material: a sine with a slow swell plus noise, so loudness range and peaks are not trivial.
  static func programme(seconds: Double) -> [Float] {
    let frames = Int(seconds * Double(rate))
    let noise = Signal.noise(frames: frames, amplitude: 0.05, seed: 23)
    var out = [Float](repeating: 0, count: 2 * frames)
    for i in 0..<frames {
      let t = Double(i) / Double(rate)
      let swell = 0.05 + 0.25 * (0.5 + 0.5 * sin(2 * Double.pi * t / 4))
      let x = Float(swell * sin(2 * Double.pi * 220 * t)) + noise[i]
      out[2 * i] = x
      out[2 * i + 1] = 0.7 * x
    }
    return out
  }

  @Test("analyze measures the master through the render path without writing a file")
  func analyzeSession() throws {
    let folder = try TemporaryFolder()
    let session = try Self.session(Self.sine(-23, seconds: 10), in: folder)
    let summary = try OfflineRenderer.analyze(session: session, sessionPath: folder.file("s.stemdeck"), duration: nil)
    let l = try #require(summary.loudness)
    #expect(abs(l.integrated + 23) <= 0.1, "\(l.integrated)")
    #expect(summary.frames == 10 * Self.rate)
    #expect(summary.normalization == nil)
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["tone.wav"], "nothing written")
    // --from and --duration choose the part measured: the last 2 s of a -36/-23 session.
    let two = try Self.session(Self.sine(-23, seconds: 4) + Self.sine(-36, seconds: 2), in: folder, name: "two.wav")
    let tail = try OfflineRenderer.analyze(session: two, sessionPath: folder.file("s.stemdeck"), duration: 2, from: 4)
    #expect(abs(try #require(tail.loudness).integrated + 36) <= 0.1)
  }

  @Test(
    "render --normalize: the output's integrated loudness, measured from the file, is within 0.1 LU of the target",
    arguments: [(-14.0, "out.wav"), (-23.0, "out.flac"), (-16.0, "out.aiff")])
  func normalize(target: Double, output: String) throws {
    let folder = try TemporaryFolder()
    let session = try Self.session(Self.programme(seconds: 12), in: folder)
    let summary = try OfflineRenderer.render(
      session: session, sessionPath: folder.file("s.stemdeck"), outputPath: folder.file(output), duration: nil,
      normalize: .init(target: target))
    let n = try #require(summary.normalization)
    #expect(n.limiter == nil)
    #expect(abs(n.gain - (target - n.measured.integrated)) < 1e-9)
    let written = try Self.measure(file: folder.file(output))
    #expect(abs(written.integrated - target) <= 0.1, "\(output): \(written.integrated) LUFS for \(target)")
    let reported = try #require(summary.loudness)
    #expect(abs(reported.integrated - written.integrated) <= 0.01)
    #expect(abs(reported.range - n.measured.range) <= 0.1, "a gain does not change the loudness range")
  }

  @Test(
    "render --normalize to Ogg Opus and Vorbis: the summary's figures are the encoded file's, decoded back, not the mix handed to the encoder",
    arguments: ["out.opus", "out.ogg"])
  func lossyFiguresAreTheFile(output: String) throws {
    let folder = try TemporaryFolder()
    let session = try Self.session(Self.drums(seconds: 6), in: folder)
    let summary = try OfflineRenderer.render(
      session: session, sessionPath: folder.file("s.stemdeck"), outputPath: folder.file(output), duration: nil,
      normalize: .init(target: -14))
    let n = try #require(summary.normalization)
    let reported = try #require(summary.loudness)
    let file = try Self.measure(file: folder.file(output))
    #expect(
      abs(reported.truePeakDecibels - file.truePeakDecibels) <= 0.01,
      "\(output): summary \(reported.truePeakDecibels) dBTP, file \(file.truePeakDecibels)")
    #expect(abs(reported.integrated - file.integrated) <= 0.01)
    #expect(abs(reported.samplePeak - file.samplePeak) <= 1e-6)
    // Opus moved the true peak of these drums by half a dB from the mix it was given (its true
    // peak times the gain), so a figure measured before encoding would not be the file's
    // (Vorbis, by less than a tenth of a dB here: not asserted).
    let before = n.measured.truePeakDecibels + n.gain
    #expect(
      output != "out.opus" || abs(before - file.truePeakDecibels) > 0.25,
      "\(output): the mix before encoding \(before) dBTP, the file \(file.truePeakDecibels)")
    print("\(output): true peak before encoding \(before) dBTP, of the file \(file.truePeakDecibels) dBTP")
  }

  /// Drums, loud and spiky: every 0.25 s a kick (a thump falling from 110 to 55 Hz, with a
  /// click) or a snare (a noise burst), over a quiet pad; the last 2 s are the pad alone. Peaks
  /// over 0 dBFS, a crest factor of some 17 dB: −14 LUFS puts the transients dB over a −1 dBTP
  /// ceiling.
  static func drums(seconds: Double) -> [Float] {
    let frames = Int(seconds * Double(rate)), beat = rate / 4
    let noise = Signal.noise(frames: frames, amplitude: 1, seed: 42)
    var out = [Float](repeating: 0, count: 2 * frames)
    for i in 0..<frames {
      let t = Double(i) / Double(rate)
      let k = i % beat, bar = (i / beat) % 2
      let age = Double(k) / Double(rate)
      var x = 0.03 * sin(2 * Double.pi * 330 * t)
      if t >= seconds - 2 {
      } else if bar == 0 {
        let f = 55 * (1 + exp(-age / 0.03))
        x +=
          0.2 * sin(2 * Double.pi * 55 * t) + 0.6 * exp(-age / 0.1) * sin(2 * Double.pi * f * age)
          + (k < 24 ? 1.2 * (1 - Double(k) / 24) : 0)
      } else {
        x += 0.2 * sin(2 * Double.pi * 55 * t) + (k < 48 ? 0.9 : 0.4 * exp(-age / 0.05)) * Double(noise[i])
      }
      out[2 * i] = Float(x)
      out[2 * i + 1] = Float(0.9 * x)
    }
    return out
  }

  @Test(
    "render --normalize -14LUFS --true-peak -1dBTP of loud drums: the limiter keeps the true peak of the file at or under -1.0 dBTP and its loudness within 0.1 LU of -14"
  )
  func limiterOnTransients() throws {
    let folder = try TemporaryFolder()
    let source = Self.drums(seconds: 12)
    let session = try Self.session(source, in: folder)
    let summary = try OfflineRenderer.render(
      session: session, sessionPath: folder.file("s.stemdeck"), outputPath: folder.file("out.wav"), duration: nil,
      normalize: .init(target: -14, truePeakCeiling: -1))
    let n = try #require(summary.normalization)
    #expect(n.measured.truePeakDecibels + (-14 - n.measured.integrated) > 0, "the gain alone would put the peaks over the ceiling")
    let limiter = try #require(n.limiter, "the limiter was used")
    #expect(limiter.maxReduction > 1 && limiter.maxReduction < 12, "\(limiter.maxReduction) dB")
    #expect(limiter.seconds > 0.1 && limiter.seconds < 10.5, "\(limiter.seconds) s")
    #expect((1...5).contains(limiter.passes))
    #expect(limiter.threshold <= -1 && limiter.threshold > -1.5)
    // Measured again by libebur128 from the written file.
    let written = try Self.measure(file: folder.file("out.wav"))
    #expect(abs(written.integrated + 14) <= 0.1, "\(written.integrated) LUFS")
    #expect(written.truePeakDecibels <= -1.0, "true peak \(written.truePeakDecibels) dBTP")
    #expect(abs(try #require(summary.loudness).integrated - written.integrated) <= 0.01)
    // Sample-aligned (the look-ahead's delay is made up) and as long: in the last second, the pad
    // alone with the limiter let go, the output is the source times the gain.
    let out = Stereo(try readAudio(folder.file("out.wav")))
    #expect(out.count == source.count / 2)
    let g = Float(Self.linear(n.gain))
    var worst: Float = 0
    for i in (11 * Self.rate)..<(12 * Self.rate) {
      worst = max(worst, abs(out.left[i] - source[2 * i] * g), abs(out.right[i] - source[2 * i + 1] * g))
    }
    #expect(worst < 1e-4, "output − gain × source: \(worst)")
    // The first kick starts at frame 0 in the file too.
    #expect(abs(out.left[0]) > 0.05 && abs(out.left[1]) > 0.05)
  }

  @Test("render --normalize --true-peak: the detector sees inter-sample peaks, 3 dB over the samples")
  func limiterSeesInterSamplePeaks() throws {
    let folder = try TemporaryFolder()
    // A -30 dBFS 1 kHz tone with a 2 ms burst every second of a quarter-rate tone at 45° (amplitude
    // 0.5): the bursts barely add loudness but set the true peak, 3 dB above their samples, so a
    // sample-peak limiter would let them through 3 dB over.
    var mix = Self.sine(-30, seconds: 6)
    for second in 0..<6 {
      for n in (second * Self.rate)..<(second * Self.rate + 96) {
        let x = Float(0.5 * sin(Double.pi / 2 * Double(n) + Double.pi / 4))
        mix[2 * n] += x
        mix[2 * n + 1] += x
      }
    }
    let session = try Self.session(mix, in: folder)
    let summary = try OfflineRenderer.render(
      session: session, sessionPath: folder.file("s.stemdeck"), outputPath: folder.file("out.wav"), duration: nil,
      normalize: .init(target: -5, truePeakCeiling: -1))
    let n = try #require(summary.normalization)
    #expect(try #require(n.limiter).maxReduction > 15)
    let written = try Self.measure(file: folder.file("out.wav"))
    #expect(written.truePeakDecibels <= -1.0, "true peak \(written.truePeakDecibels) dBTP")
    #expect(abs(written.integrated + 5) <= 0.1, "\(written.integrated) LUFS")
    #expect(written.samplePeakDecibels < -3, "the samples lie about 3 dB under the true peak: \(written.samplePeakDecibels)")
  }

  @Test("render --normalize --true-peak: a mix the gain alone keeps under the ceiling is written bit for bit as without --true-peak")
  func noLimitingNeeded() throws {
    let folder = try TemporaryFolder()
    let session = try Self.session(Self.programme(seconds: 8), in: folder)
    let path = folder.file("s.stemdeck")
    let plain = try OfflineRenderer.render(
      session: session, sessionPath: path, outputPath: folder.file("plain.wav"), duration: nil,
      normalize: .init(target: -20))
    let ceiled = try OfflineRenderer.render(
      session: session, sessionPath: path, outputPath: folder.file("ceiled.wav"), duration: nil,
      normalize: .init(target: -20, truePeakCeiling: -1))
    #expect(ceiled.normalization?.limiter == nil)
    #expect(try #require(ceiled.loudness).truePeakDecibels < -3, "far under the ceiling")
    let a = try readAudio(folder.file("plain.wav")), b = try readAudio(folder.file("ceiled.wav"))
    #expect(a.samples.count == b.samples.count && a.samples.count > 0)
    #expect(a.samples == b.samples, "bit-identical samples")
    #expect(plain.normalization?.gain == ceiled.normalization?.gain)
  }

  @Test(
    "render --normalize --true-peak: where the ceiling holds a steady tone's loudness down, the limiter stops after a pass that gains nothing, at the smaller gain"
  )
  func ceilingHoldsLoudnessDown() throws {
    let folder = try TemporaryFolder()
    // A -30 dBFS 1 kHz tone (−30 LUFS) asked for -5 LUFS under a -8 dBTP ceiling: a sine's
    // loudness is its peak's, so it reaches -8 LUFS at most.
    let session = try Self.session(Self.sine(-30, seconds: 6), in: folder)
    let summary = try OfflineRenderer.render(
      session: session, sessionPath: folder.file("s.stemdeck"), outputPath: folder.file("out.wav"), duration: nil,
      normalize: .init(target: -5, truePeakCeiling: -8))
    let n = try #require(summary.normalization)
    let limiter = try #require(n.limiter)
    #expect(limiter.passes == 2, "the second pass gained no loudness: \(limiter.passes)")
    #expect(abs(n.gain - 25) <= 0.05, "the first (smaller) gain is kept: \(n.gain)")
    let written = try Self.measure(file: folder.file("out.wav"))
    #expect(written.truePeakDecibels <= -8 && written.truePeakDecibels > -8.2, "\(written.truePeakDecibels) dBTP")
    #expect(abs(written.integrated + 8) <= 0.2, "\(written.integrated) LUFS")
    // With room under the ceiling the target is met and the ceiling changes nothing.
    let roomy = try OfflineRenderer.render(
      session: session, sessionPath: folder.file("s.stemdeck"), outputPath: folder.file("roomy.wav"), duration: nil,
      normalize: .init(target: -28, truePeakCeiling: -1))
    #expect(roomy.normalization?.limiter == nil)
    #expect(abs(try Self.measure(file: folder.file("roomy.wav")).integrated + 28) <= 0.1)
  }

  @Test("bad normalize values and a silent mix are refused, and the previous output stays as it was")
  func refusals() throws {
    let folder = try TemporaryFolder()
    let tone = try Self.session(Self.sine(-23, seconds: 2), in: folder)
    let previous = Data("previous render".utf8)
    try previous.write(to: URL(fileURLWithPath: folder.file("out.wav")))
    func render(_ session: Session, _ normalize: OfflineRenderer.Normalize) throws(MixerError) {
      _ = try OfflineRenderer.render(
        session: session, sessionPath: folder.file("s.stemdeck"), outputPath: folder.file("out.wav"),
        duration: nil, normalize: normalize)
    }
    for bad: Double in [-61, 1, .nan, -.infinity] {
      expectMixerError(["--normalize must be an integrated loudness from -60 to 0 LUFS"]) { () throws(MixerError) in
        try render(tone, .init(target: bad))
      }
    }
    for bad: Double in [-31, 0.5, .nan] {
      expectMixerError(["--true-peak must be a ceiling from -30 to 0 dBTP"]) { () throws(MixerError) in
        try render(tone, .init(target: -14, truePeakCeiling: bad))
      }
    }
    let silent = try Self.session([Float](repeating: 0, count: 2 * Self.rate), in: folder, name: "silent.wav")
    expectMixerError(["--normalize: the mix is silent", "-70 LUFS gate", "-14.0 LUFS", "without --normalize"]) { () throws(MixerError) in
      try render(silent, .init(target: -14))
    }
    #expect(try Data(contentsOf: URL(fileURLWithPath: folder.file("out.wav"))) == previous)
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["out.wav", "silent.wav", "tone.wav"],
      "no temporary file left")
  }

  @Test("a render cancelled during the measuring pass writes nothing")
  func cancelledWhileMeasuring() throws {
    let folder = try TemporaryFolder()
    let session = try Self.session(Self.sine(-23, seconds: 4), in: folder)
    var asked = 0
    expectMixerError(["interrupted", "while measuring", "nothing was written"]) { () throws(MixerError) in
      _ = try OfflineRenderer.render(
        session: session, sessionPath: folder.file("s.stemdeck"), outputPath: folder.file("out.wav"),
        duration: nil, normalize: .init(target: -14),
        cancelled: {
          asked += 1; return asked > 10
        })
    }
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["tone.wav"])
  }
}
