import Foundation
import StemdeckControl
import StemdeckEngine
import StemdeckSession
import StemdeckTestSupport
import Testing

/// Marks and quantised jumps (issue 42, item 2), offline: a synchronous mixer rendering through
/// `renderBlock` (what the JACK driver runs), a stem whose every frame says where it is.
@Suite struct MarkJumpTests {
  /// Frame i of the ramp is (i + 1) / 2^19: exact in a float, never 0, under 1 for 10 s.
  static func ramp(frames: Int) -> [Float] { (0..<frames).map { Float($0 + 1) / 524288 } }

  /// A rig playing a 10 s stereo ramp at 120 bpm in 4/4 (a bar is 96,000 frames), with a mark.
  static func rampRig(in folder: TemporaryFolder, markAt seconds: Double) throws -> MixerRig {
    let ramp = Self.ramp(frames: 480_000)
    let path = folder.file("ramp.wav")
    try writeAudio(path, format: .wavFloat, channels: [ramp, ramp])
    let rig = MixerRig()
    try rig.mixer.stems.add(path: path, settings: stem("ramp", path))
    rig.mixer.tempo = Tempo(bpm: 120, beatsPerBar: 4)
    try rig.mixer.marks.add("chorus", at: seconds)
    try rig.mixer.transport.play()
    return rig
  }

  @Test(
    "goto chorus bar: the transport goes on from the mark on the next bar line at least 0.25 s ahead, to the frame, with no gap; end lands on the song's end"
  )
  func jumpLandsOnTheBarLine() throws {
    let folder = try TemporaryFolder()
    let rig = try Self.rampRig(in: folder, markAt: 6)
    var out = rig.render(52_800)  // 1.1 s
    let start = try #require(out.left.firstIndex { $0 != 0 }, "the stem never started")
    let gain = out.left[start] / Self.ramp(frames: 1)[0]
    // Transport frame t sounds at output index start + t with the ramp's value at t.
    func heard(_ t: Int) -> Float { gain * Float(t + 1) / 524288 }
    let now = out.left.count - start
    let jump = try #require(try rig.mixer.marks.goto(mark: "chorus", landing: .bar))
    // 0.25 s after `now` (< 2 s) the next bar line is bar 2's, at transport frame 96,000.
    #expect(now + 12_000 < 96_000 && jump.atSeconds == 2 && jump.toSeconds == 6 && jump.mark == "chorus")
    #expect(rig.mixer.marks.waitingJump == jump && rig.mixer.transport.position < 2)
    out.append(rig.render(start + 96_000 + 4_800 - out.left.count))
    let f = start + 96_000
    #expect(out.left[f - 1] == heard(95_999), "the old stream plays to the frame before the bar line")
    #expect(out.left[f] == heard(288_000), "the bar line's frame is the mark's (6 s = frame 288,000)")
    #expect((0..<4_800).allSatisfy { out.left[f + $0] == heard(288_000 + $0) && out.right[f + $0] == out.left[f + $0] })
    #expect((start..<f).allSatisfy { out.left[$0] == heard($0 - start) }, "no gap and no skip before the jump")
    #expect(rig.mixer.marks.waitingJump == nil && abs(rig.mixer.transport.position - (6 + 0.1)) < 0.01)
    #expect(try rig.mixer.stems.status("ramp").underruns == 0)

    // end, with no stem looping: the song's end (10 s), where the stem's last frame is followed by the mark's.
    let last = try #require(try rig.mixer.marks.goto(mark: "chorus", landing: .end))
    #expect(last.atSeconds == 10)
    let before = out.left.count
    out.append(rig.render(start + 96_000 + (480_000 - 288_000) + 2_400 - (before - 0)))
    let e = f + (480_000 - 288_000)  // output index of transport frame 480,000 (10 s)
    #expect(out.left[e - 1] == heard(479_999) && out.left[e] == heard(288_000) && out.left[e + 1] == heard(288_001))
  }

  @Test(
    "marks: a duplicate, a bad name, a time past the end, an unknown mark (with a suggestion), no tempo for 'bar'; the session round trip")
  func marksRulesAndSession() throws {
    let folder = try TemporaryFolder()
    let rig = try Self.rampRig(in: folder, markAt: 6)
    func refusal(_ body: () throws(MixerError) -> Void) -> String {
      do { try body() } catch { return error.message }
      return "(accepted)"
    }
    #expect(refusal { () throws(MixerError) in try rig.mixer.marks.add("chorus", at: 2) }.contains("already a mark 'chorus' (at 0:06.000)"))
    #expect(refusal { () throws(MixerError) in try rig.mixer.marks.add("a b", at: 2) }.contains("invalid mark name"))
    #expect(refusal { () throws(MixerError) in try rig.mixer.marks.add("outro", at: 10.5) }.contains("past the end of the song (0:10.000)"))
    #expect(refusal { () throws(MixerError) in try rig.mixer.marks.goto(mark: "chorsu", landing: .bar) }.contains("did you mean 'chorus'?"))
    #expect(refusal { () throws(MixerError) in try rig.mixer.marks.remove("verse") }.contains("unknown mark 'verse'"))
    _ = rig.render(24_000)
    rig.mixer.tempo = nil
    #expect(refusal { () throws(MixerError) in try rig.mixer.marks.goto(mark: "chorus", landing: .bar) }.contains("there is none"))
    try rig.mixer.marks.add("intro", at: 0)
    #expect(rig.mixer.marks.all == [Mark(name: "chorus", at: 6), Mark(name: "intro", at: 0)])

    var session = rig.mixer.session(savingTo: folder.file("s.json"))
    let text = SessionFile.encode(session)
    #expect(text.contains("\"marks\" : [\n    { \"name\" : \"chorus\", \"at\" : 6 },\n    { \"name\" : \"intro\", \"at\" : 0 }\n  ]"))
    #expect(try SessionFile.decode(Data(text.utf8), source: "s").marks == session.marks)
    #expect(session.songLayer.marks == session.marks, "a song of a setlist brings its own marks")
    session.marks = []
    #expect(!SessionFile.encode(session).contains("marks"), "none: nothing written (older files unchanged)")
    for (bad, fragment) in [
      ("{ \"name\" : \"intro\", \"at\" : 2 }", "marks[1].name"), ("{ \"name\" : \"x\", \"at\" : -1 }", "marks[0].at"),
      ("{ \"name\" : \"x\" }", "marks[0].at"), ("{ \"name\" : \"x\", \"at\" : 1, \"bar\" : 2 }", "marks[0]")
    ] {
      let doc = text.replacingOccurrences(of: "{ \"name\" : \"chorus\", \"at\" : 6 }", with: bad)
      #expect(throws: SessionError.self) { try SessionFile.decode(Data(doc.utf8), source: "s") }
      do { _ = try SessionFile.decode(Data(doc.utf8), source: "s") } catch { #expect("\(error)".contains(fragment), "\(error)") }
    }
  }

  @Test("goto … end with a stem looping forever: the jump lands on its loop seam, in its second pass, to the frame")
  func endLandsOnTheLoopSeam() throws {
    let folder = try TemporaryFolder()
    let ramp = Self.ramp(frames: 48_000)  // a 1 s loop
    let path = folder.file("loop.wav")
    try writeAudio(path, format: .wavFloat, channels: [ramp, ramp])
    let rig = MixerRig()
    try rig.mixer.stems.add(path: path, settings: stem("loop", path) { $0.loops = -1 })
    try rig.mixer.marks.add("half", at: 0.5)
    try rig.mixer.transport.play()
    var out = rig.render(62_400)  // 1.3 s: in the second pass
    let start = try #require(out.left.firstIndex { $0 != 0 })
    let gain = out.left[start] / ramp[0]
    let jump = try #require(try rig.mixer.marks.goto(mark: "half", landing: .end))
    #expect(jump.atSeconds == 2, "the seam after 1.3 s + 0.25 s is the second pass's end (2 s)")
    out.append(rig.render(start + 96_000 + 2_400 - out.left.count))
    let f = start + 96_000
    #expect(out.left[f - 1] == gain * ramp[47_999] && out.left[f] == gain * ramp[24_000] && out.left[f + 2_399] == gain * ramp[26_399])
  }
}
