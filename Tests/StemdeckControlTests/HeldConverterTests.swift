import Foundation
import StemdeckAudioFile
import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import Testing

/// A `fast` stem that holds a rate converts with zita's VResampler set up for that ratio; the
/// sinc keeps glides and the bypass ratio 1 (StemdeckEngine, HeldConverter.swift). Real files,
/// the real mixer, rendered offline with the test as the audio thread.
@Suite struct HeldConverterTests {
  static let sr = 48000.0
  /// Two tones, 1 kHz and 7 kHz, at −8 and −10.5 dBFS: known at every fractional position.
  static let tones: [(frequency: Double, amplitude: Double)] = [(1000, 0.4), (7000, 0.3)]

  static func tone(at position: Double) -> Double {
    tones.reduce(0) { $0 + $1.amplitude * sin(2 * Double.pi * $1.frequency * position / sr) }
  }

  static func writeTones(_ folder: TemporaryFolder, seconds: Double = 3) throws -> String {
    let frames = Int(seconds * sr)
    let samples = (0..<frames).map { Float(tone(at: Double($0))) }
    let path = folder.file("tones.wav")
    try writeAudio(path, format: .wavFloat, sampleRate: Int(sr), channels: [samples])
    return path
  }

  /// A rig with the tones' stem (hard left: the left channel is the stem as converted) playing.
  static func rig(_ path: String, rate: Double = 1, zita: Bool = true) throws -> MixerRig {
    let rig = MixerRig()
    rig.mixer.heldConverters.enabled = zita
    try rig.mixer.stems.add(
      path: path,
      settings: stem("t", path) {
        $0.pan = -1; $0.rate = rate
      })
    try rig.mixer.transport.play()
    return rig
  }

  /// Largest difference from the tones at `positions(n)` over output frames `range`.
  static func errorFromTones(_ out: [Float], _ range: Range<Int>, position: (Int) -> Double) -> Double {
    var worst = 0.0
    for n in range { worst = max(worst, abs(Double(out[n]) - tone(at: position(n)))) }
    return worst
  }

  @Test("a rate held at 1.2 or 0.9 renders the tones at exactly rate × the output frame, cleaner than the sinc", arguments: [1.2, 0.9])
  func heldRateIsExact(rate: Double) throws {
    let folder = try TemporaryFolder()
    let path = try Self.writeTones(folder)
    let zita = try Self.rig(path, rate: rate)
    let sinc = try Self.rig(path, rate: rate, zita: false)
    #expect(zita.mixer.heldConverters.made == 1 && sinc.mixer.heldConverters.made == 0)
    let frames = 96000
    let a = zita.render(frames).left, b = sinc.render(frames).left
    let range = 2000..<Int(Double(frames) * min(1, 2.8 / 2 / rate))  // away from the start and the end
    let zitaError = Self.errorFromTones(a, range) { Double($0) * rate }
    let sincError = Self.errorFromTones(b, range) { Double($0) * rate }
    print("rate \(rate): zita \(decibels(zitaError)) dB, sinc \(decibels(sincError)) dB from the exact tones")
    #expect(decibels(zitaError) < -95, "zita differs from the exact tones by \(decibels(zitaError)) dB")
    #expect(zitaError < sincError, "zita \(decibels(zitaError)) dB, sinc \(decibels(sincError)) dB")
  }

  /// The tones' position at output frame n when the rate steps from `before` to `after` at `frame`.
  static func stepped(_ n: Int, at frame: Int, from before: Double, to after: Double) -> Double {
    n < frame ? Double(n) * before : Double(frame) * before + Double(n - frame) * after
  }

  @Test("rate set from 1 to 1.2 (bypass → zita), then to 0.9 (zita → zita): the tones at the exact positions across both steps")
  func setRateHandsOverExactly() throws {
    let folder = try TemporaryFolder()
    let path = try Self.writeTones(folder)
    let rig = try Self.rig(path)
    var out = rig.render(4800).left
    try rig.mixer.stems.setRate("t", 1.2)
    out += rig.render(19201).left  // the second step lands between two input frames (27,841.2)
    try rig.mixer.stems.setRate("t", 0.9)
    out += rig.render(24000).left
    #expect(rig.mixer.heldConverters.made == 2)
    let position = { (n: Int) -> Double in
      n < 24001 ? Self.stepped(n, at: 4800, from: 1, to: 1.2) : Double(n - 24001) * 0.9 + 4800 + 19201 * 1.2
    }
    let first = Self.errorFromTones(out, 2000..<8000, position: position)
    let second = Self.errorFromTones(out, 20000..<30000, position: position)
    #expect(decibels(first) < -95, "around bypass → zita: \(decibels(first)) dB from the exact tones")
    #expect(decibels(second) < -95, "around zita 1.2 → zita 0.9: \(decibels(second)) dB from the exact tones")
  }

  @Test("a glide 1.2 → 0.9 from a held rate and back to holding: within the filters' difference of the sinc alone, no step")
  func glideHandsOverWithoutAStep() throws {
    let folder = try TemporaryFolder()
    let path = try Self.writeTones(folder)
    var outputs: [[Float]] = []
    for zita in [true, false] {
      let rig = try Self.rig(path, rate: 1.2, zita: zita)
      var out = rig.render(9600).left
      try rig.mixer.strips.glide("t", to: .rate(0.9), seconds: 0.25)
      out += rig.render(38400).left
      #expect(rig.mixer.heldConverters.made == (zita ? 2 : 0))
      outputs.append(out)
    }
    // Zita holds 0 … 9,600, the sinc glides 9,600 … 21,600, zita holds again after.
    let difference = zip(outputs[0], outputs[1]).map { Double($0) - Double($1) }
    let around = { (r: Range<Int>) in r.reduce(0.0) { max($0, abs(difference[$1])) } }
    let start = around(9000..<10200), end = around(21000..<24000), all = around(2000..<48000)
    print("zita vs the sinc alone: around the glide's start \(decibels(start)) dB, end \(decibels(end)) dB, anywhere \(decibels(all)) dB")
    #expect(decibels(all) < -95, "zita and the sinc differ by \(decibels(all)) dB")
    #expect(around(10200..<21000) < 1e-6, "during the glide both are the sinc: \(decibels(around(10200..<21000))) dB")
  }

  /// (A change to ratio 1, a MIDI bend or a glide goes through the sinc, whose ratio ramps across
  /// each call as before: those stay as block-bound as they were.)
  @Test("a held rate and rate changes on frames mid-block: bit-identical in 64-, 1000- and 4096-frame blocks")
  func blockSizesDoNotMatter() throws {
    let folder = try TemporaryFolder()
    let path = try Self.writeTones(folder)
    var outputs: [[Float]] = []
    for block in [64, 1000, 4096] {
      let rig = try Self.rig(path, rate: 1.2)
      try rig.mixer.beginGroup(atSeconds: 0.3501)
      try rig.mixer.stems.setRate("t", 0.9)
      try rig.mixer.endGroup()
      try rig.mixer.beginGroup(atSeconds: 0.9007)
      try rig.mixer.stems.setRate("t", 1.3)
      try rig.mixer.endGroup()
      outputs.append(rig.render(60000, block: block).left)
    }
    #expect(
      firstMismatch(outputs[0][...], outputs[1][...]) == nil,
      "64 vs 1000 differ from frame \(firstMismatch(outputs[0][...], outputs[1][...]) ?? -1)")
    #expect(
      firstMismatch(outputs[0][...], outputs[2][...]) == nil,
      "64 vs 4096 differ from frame \(firstMismatch(outputs[0][...], outputs[2][...]) ?? -1)")
  }

  /// With a mid boost on the stem, so that its bypass goes through the voice's pull (a plain
  /// stem mixes straight from its ring, whatever the converter): the same samples as a stem that
  /// never left rate 1.
  @Test("rate 1.2 on zita, then 1 (while playing, and while paused), then a seek: the bypass again, bit for bit")
  func backToOneReturnsToBypass() throws {
    let folder = try TemporaryFolder()
    let path = try Self.writeTones(folder)
    let boosted = { (s: inout StemSettings) in
      s.pan = -1; s.eq.mid.gain = 3
    }
    let never = MixerRig()
    try never.mixer.stems.add(path: path, settings: stem("t", path, boosted))
    try never.mixer.transport.seek(toSeconds: 1)
    try never.mixer.transport.play()
    let reference = never.render(24000).left
    let rig = MixerRig()
    try rig.mixer.stems.add(
      path: path,
      settings: stem("t", path) {
        boosted(&$0); $0.rate = 1.2
      })
    try rig.mixer.transport.play()
    _ = rig.render(9600)
    try rig.mixer.stems.setRate("t", 1)
    _ = rig.render(9600)  // the sinc at ratio 1
    try rig.mixer.stems.setRate("t", 1.2)
    _ = rig.render(4800)  // zita again
    try rig.mixer.transport.pause()
    _ = rig.render(4800)
    try rig.mixer.stems.setRate("t", 1)  // while paused: zita is still the converter in use
    try rig.mixer.transport.seek(toSeconds: 1)
    try rig.mixer.transport.play()
    let after = rig.render(24000).left
    #expect(peak(reference) > 0.3, "the reference is silent")
    // The transport resumes from a pause a block later than from a stop: align on the first sound.
    let a = try #require(after.firstIndex { $0 != 0 }), r = try #require(reference.firstIndex { $0 != 0 })
    #expect(a - r == 0 || a - r == 256, "sounds \(a - r) frames after the reference")
    let n = 24000 - max(a, r)
    let mismatch = firstMismatch(after[a..<(a + n)], reference[r..<(r + n)])
    #expect(mismatch == nil, "differs from a stem that stayed at rate 1 from frame \(mismatch ?? -1)")
  }

  @Test("every zita converter made is freed: replaced, offered for a group that was dropped, left on a removed stem")
  func noConverterIsLost() throws {
    let folder = try TemporaryFolder()
    let path = try Self.writeTones(folder, seconds: 6)
    let rig = try Self.rig(path, rate: 1.2)
    _ = rig.render(4800)
    try rig.mixer.stems.setRate("t", 0.9)  // the 1.2 converter goes back
    _ = rig.render(4800)
    try rig.mixer.strips.glide("t", to: .rate(1.1), seconds: 0.1)
    _ = rig.render(9600)  // the glide ends: its target's converter replaces 0.9's
    try rig.mixer.beginGroup(atSeconds: 5)
    try rig.mixer.stems.setRate("t", 0.7)  // offered, and the group dropped
    try rig.mixer.abortGroup()
    _ = rig.render(4800)
    try rig.mixer.stems.setRate("t", 1.4)  // replaces the offered 0.7
    _ = rig.render(4800)
    _ = rig.mixer.pump()
    #expect(rig.mixer.heldConverters.made == 5)
    // 1.2's, 0.9's and 1.1's went back; the stem holds 1.4's and still has the dropped 0.7's.
    #expect(rig.mixer.heldConverters.freed == 3, "freed \(rig.mixer.heldConverters.freed)")
    try rig.mixer.stems.remove("t")
    _ = rig.render(4800)
    _ = rig.mixer.pump()
    #expect(
      rig.mixer.heldConverters.made == rig.mixer.heldConverters.freed,
      "made \(rig.mixer.heldConverters.made), freed \(rig.mixer.heldConverters.freed)")
  }

  @Test(
    "at the stream's end zita flushes its filter as the sinc does: the same last frame, then silence, then finished", arguments: [1.2, 0.9])
  func streamEndsLikeTheSinc(rate: Double) throws {
    let folder = try TemporaryFolder()
    let path = try Self.writeTones(folder, seconds: 1)
    var lastSound: [Int] = []
    for zita in [true, false] {
      let rig = try Self.rig(path, rate: rate, zita: zita)
      let out = rig.render(Int(48000 / rate) + 4800).left
      lastSound.append(try #require(out.lastIndex { abs($0) > 1e-4 }))
      #expect(rig.mixer.pump().contains(.stemFinished("t")), "zita \(zita): the stem did not finish")
      let end = Int((48000 / rate).rounded())
      #expect(out[(end + 64)...].allSatisfy { $0 == 0 }, "zita \(zita): sound after the end")
    }
    #expect(abs(lastSound[0] - lastSound[1]) <= 2, "last frame with sound: zita \(lastSound[0]), the sinc \(lastSound[1])")
  }
}
