import Foundation
import StemdeckAudioFile
import StemdeckControl
import StemdeckEngine
import StemdeckSession
import StemdeckTestSupport
import Testing

// One topic of MusicalTests (the suite and its helpers: MusicalSupport.swift).
extension MusicalTests {
  // MARK: - 4. Loop regions

  static func rampStem(_ folder: TemporaryFolder) throws -> (path: String, file: [Float]) {
    let ramp = (0..<48000).map { Float(Double($0) / 48000) }
    let path = try Musical.mono(folder, "ramp.wav", ramp)
    return (path, try readAudio(path).samples)
  }

  @Test("loop region 0.25–0.75 s, loops 2, no crossfade: frames [12000, 36000) three times, bit-exact, then silence")
  func loopRegionCut() throws {
    let folder = try TemporaryFolder()
    let (path, file) = try Self.rampStem(folder)
    let rig = MixerRig()
    try rig.mixer.stems.add(
      path: path,
      settings: stem("r", path) {
        $0.pan = -1; $0.loops = 2
      })
    try rig.mixer.stems.setLoopRegion("r", start: 0.25, end: 0.75, crossfade: 0)
    let status = try rig.mixer.stems.status("r").settings
    #expect(status.loopStart == 0.25 && status.loopEnd == 0.75 && status.crossfade == 0)
    try rig.mixer.transport.play()
    let out = rig.render(80000)
    let region = Array(file[12000..<36000])
    let expected = region + region + region
    let bad = firstMismatch(out.left[0..<72000], expected[...])
    #expect(bad == nil, "frame \(bad ?? -1): \(bad.map { out.left[$0] } ?? 0) vs \(bad.map { expected[$0] } ?? 0)")
    #expect(out.left[72000...].allSatisfy { $0 == 0 }, "not silent after three passes")
    #expect(out.right.allSatisfy { $0 == 0 })
    #expect(abs((rig.mixer.transport.duration ?? 0) - 1.5) < 1e-9, "duration \(rig.mixer.transport.duration ?? -1)")
  }

  @Test("loop region with a 5 ms crossfade: equal-power tail·cos + pre-roll·sin before each seam but the last")
  func loopRegionCrossfade() throws {
    let folder = try TemporaryFolder()
    let (path, file) = try Self.rampStem(folder)
    let rig = MixerRig()
    try rig.mixer.stems.add(
      path: path,
      settings: stem("r", path) {
        $0.pan = -1; $0.loops = 2
      })
    try rig.mixer.stems.setLoopRegion("r", start: 0.25, end: 0.75, crossfade: 0.005)
    try rig.mixer.transport.play()
    let out = rig.render(80000, block: 1000).left
    let x = 240
    var expected = [Double]()
    for pass in 0..<3 {
      for f in 12000..<36000 {
        let k = f - (36000 - x)
        if pass < 2 && k >= 0 {
          let theta = Double.pi / 2 * (Double(k) + 0.5) / Double(x)
          expected.append(Double(file[f]) * cos(theta) + Double(file[12000 - x + k]) * sin(theta))
        } else {
          expected.append(Double(file[f]))
        }
      }
    }
    #expect(
      maxAbsError(Array(out[0..<72000]), expected) <= 1e-6,
      "off the documented crossfade by \(maxAbsError(Array(out[0..<72000]), expected))")
    for seam in [0, 24000, 48000] {
      #expect(out[seam] == file[12000], "pass at \(seam) starts with \(out[seam]), not file frame 12000")
    }
    // The seam flows (a cut would jump 0.5 here): the step into the next pass is no larger than
    // the crossfade's own steps (the last fade frame still holds sin(π/4/240)·tail ≈ 0.0024).
    let fadeStep = maxStep(out, in: 23760..<23999)
    for seam in [24000, 48000] {
      let jump = Double(abs(out[seam] - out[seam - 1]))
      #expect(jump <= fadeStep && jump < 0.003, "jump at the seam \(seam): \(out[seam - 1]) → \(out[seam]) (fade steps \(fadeStep))")
    }
    #expect(firstMismatch(out[48000..<72000], file[12000..<36000]) == nil, "the last pass is not a plain copy")
    #expect(out[72000...].allSatisfy { $0 == 0 })
  }

  @Test("bad loop regions throw and change nothing (settings, sound, dirty flag)")
  func badLoopRegions() throws {
    let folder = try TemporaryFolder()
    let (path, file) = try Self.rampStem(folder)
    let rig = MixerRig()
    try rig.mixer.stems.add(path: path, settings: stem("r", path) { $0.pan = -1 })
    try rig.mixer.stems.setLoopRegion("r", start: 0.1, end: 0.9, crossfade: 0)
    try rig.mixer.transport.play()
    _ = rig.render(4800)
    rig.mixer.markSaved()
    let snap = snapshot(rig.mixer)
    let cases: [(String, Double, Double, Double)] = [
      ("end beyond the file", 0.25, 1.5, 0),
      ("start = end", 0.5, 0.5, 0),
      ("start > end", 0.6, 0.4, 0),
      ("negative start", -0.1, 0.4, 0),
      ("crossfade longer than the audio before start", 0.002, 0.5, 0.005),
      ("crossfade longer than the loop", 0.5, 0.502, 0.005),
      ("crossfade out of range", 0.5, 0.9, 1.5)
    ]
    for (label, start, end, xfade) in cases {
      let error = Musical.error { () throws(MixerError) in try rig.mixer.stems.setLoopRegion("r", start: start, end: end, crossfade: xfade)
      }
      #expect(error != nil, "\(label): accepted")
      #expect(snapshot(rig.mixer) == snap, "\(label): settings changed")
    }
    #expect(!rig.mixer.isDirty, "a refused change marked the session dirty")
    let after = rig.render(4800).left
    // No seek happened: the region keeps playing on, sample-exact.
    let expected = Array(file[4800 + 4800..<4800 + 9600])
    #expect(firstMismatch(after[...], expected[...]) == nil, "the sound changed after refused regions")
  }

  @Test(
    "a half-given loop region (start without end) is refused, not stored half-set",
  )
  func halfRegion() throws {
    let folder = try TemporaryFolder()
    let (path, _) = try Self.rampStem(folder)
    let rig = MixerRig()
    try rig.mixer.stems.add(path: path, settings: stem("r", path))
    let error = Musical.error { () throws(MixerError) in try rig.mixer.stems.setLoopRegion("r", start: 0.25, end: nil, crossfade: 0) }
    let s = try rig.mixer.stems.status("r").settings
    #expect(error != nil, "accepted; settings now loopStart \(String(describing: s.loopStart)) loopEnd \(String(describing: s.loopEnd))")
    #expect(s.loopStart == nil && s.loopEnd == nil)
  }
}
