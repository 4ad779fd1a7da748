import Foundation
import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import Testing

/// Stereo width (`width NAME VALUE`, StripParameter.width): the mid/side law written out here
/// (not calling `StereoWidth`), on each kind of strip, rendered offline; a glide; a mono strip
/// untouched.
@Suite struct WidthTests {
  /// The documented law: m = √(2 / (1 + w²)), s = w·m; L' = m·M + s·S, R' = m·M − s·S.
  static func expected(left l: Double, right r: Double, width w: Double) -> (Double, Double) {
    let m = (2 / (1 + w * w)).squareRoot(), s = w * m
    let mid = (l + r) / 2, side = (l - r) / 2
    return (m * mid + s * side, m * mid - s * side)
  }

  /// A stereo file of two constants.
  static func stereo(_ folder: TemporaryFolder, _ name: String, _ l: Float, _ r: Float, frames: Int = 4800) throws -> String {
    let path = folder.file(name)
    try writeAudio(path, format: .wavFloat, channels: [[Float](repeating: l, count: frames), [Float](repeating: r, count: frames)])
    return path
  }

  static func render(_ session: Session, _ folder: TemporaryFolder, inputs: [RenderInput] = []) throws -> Stereo {
    let output = folder.file("render-\(UUID().uuidString).wav")
    _ = try OfflineRenderer.render(
      session: session, sessionPath: folder.file("session.json"), outputPath: output, duration: 0.1, inputs: inputs)
    return Stereo(try readAudio(output))
  }

  @Test("width on a stem (0), a bus (2) and a stereo input (0.5) follows the law exactly; 1 is the identity")
  func everyKind() throws {
    let folder = try TemporaryFolder()
    _ = try Self.stereo(folder, "pad.wav", 0.6, 0.2)
    func check(_ out: Stereo, _ expected: (Double, Double), _ what: String) {
      let l = out.left[100..<4000], r = out.right[100..<4000]
      #expect(l.allSatisfy { abs(Double($0) - expected.0) < 1e-6 }, "\(what): left \(out.left[200]) ≠ \(expected.0)")
      #expect(r.allSatisfy { abs(Double($0) - expected.1) < 1e-6 }, "\(what): right \(out.right[200]) ≠ \(expected.1)")
    }
    var session = Session()
    session.stems = [stem("pad", "pad.wav") { $0.width = 0 }]
    check(try Self.render(session, folder), Self.expected(left: 0.6, right: 0.2, width: 0), "stem at 0 (mono)")
    session.stems = [stem("pad", "pad.wav")]
    check(try Self.render(session, folder), (0.6, 0.2), "stem at 1 (as is)")
    session.stems = [stem("pad", "pad.wav") { $0.bus = "wide" }]
    var wide = BusSettings(name: "wide")
    wide.width = 2
    session.buses = [wide]
    check(try Self.render(session, folder), Self.expected(left: 0.6, right: 0.2, width: 2), "bus at 2")
    session.stems = []
    session.buses = []
    var keys = InputSettings(name: "keys", channels: .stereo)
    keys.width = 0.5
    session.inputs = [keys]
    check(
      try Self.render(session, folder, inputs: [RenderInput(name: "keys", path: folder.file("pad.wav"))]),
      Self.expected(left: 0.6, right: 0.2, width: 0.5), "input at 0.5")
  }

  @Test("a width glide 1 → 0 over 0.25 s moves smoothly and lands exactly; a mono stem has no width")
  func glideAndMono() throws {
    let folder = try TemporaryFolder()
    let path = try Self.stereo(folder, "pad.wav", 0.6, 0.2, frames: 48000)
    let rig = MixerRig()
    try rig.mixer.stems.add(path: path, settings: stem("pad", path))
    try rig.mixer.transport.play()
    try rig.mixer.strips.glide("pad", to: try #require(GlideTarget(.width, to: 0)), seconds: 0.25)
    let out = rig.render(24000, block: 1000)
    let end = Self.expected(left: 0.6, right: 0.2, width: 0)
    #expect(abs(Double(out.left[0]) - 0.6) < 1e-3, "starts as is: \(out.left[0])")
    #expect(out.left[13000...].allSatisfy { abs(Double($0) - end.0) < 1e-6 }, "left lands on \(end.0): \(out.left[13000])")
    #expect(out.right[13000...].allSatisfy { abs(Double($0) - end.1) < 1e-6 }, "right lands on \(end.1)")
    #expect(maxStep(out.left) < 0.001 && maxStep(out.right) < 0.001, "steps \(maxStep(out.left)), \(maxStep(out.right))")
    #expect(try rig.mixer.strips.value(of: .width, of: "pad") == 0, "the setting takes the target at once")

    let mono = try Musical.mono(folder, "dc.wav", Signal.constant(0.5, frames: 48000))
    let plain = MixerRig(), narrowed = MixerRig()
    try plain.mixer.stems.add(path: mono, settings: stem("dc", mono) { $0.pan = 0.3 })
    try narrowed.mixer.stems.add(
      path: mono,
      settings: stem("dc", mono) {
        $0.pan = 0.3; $0.width = 0
      })
    for r in [plain, narrowed] { try r.mixer.transport.play() }
    let a = plain.render(4800, block: 512), b = narrowed.render(4800, block: 512)
    #expect(a.left == b.left && a.right == b.right, "a mono stem's width changes nothing")
  }

  @Test("width refuses values outside 0…2 with the rule; the session keeps it only when not 1")
  func rulesAndSession() throws {
    let folder = try TemporaryFolder()
    let path = try Self.stereo(folder, "pad.wav", 0.6, 0.2)
    let rig = MixerRig()
    try rig.mixer.stems.add(path: path, settings: stem("pad", path))
    let refused = Musical.error { () throws(MixerError) in try rig.mixer.strips.set(.width, of: "pad", to: 2.5) }
    #expect(refused?.message == "width must be a number between 0 and 2 (got 2.5)", "\(refused?.message ?? "accepted")")
    #expect(try rig.mixer.strips.value(of: .width, of: "pad") == 1, "nothing changed")
    try rig.mixer.strips.set(.width, of: "pad", to: 1.4)
    let text = SessionFile.encode(rig.mixer.session(savingTo: folder.file("s.json")))
    #expect(text.contains("\"width\" : 1.4"), "\(text)")
    let back = try SessionFile.decode(Data(text.utf8), source: "s.json")
    #expect(back.stems.first?.width == 1.4)
    try rig.mixer.strips.set(.width, of: "pad", to: 1)
    #expect(!SessionFile.encode(rig.mixer.session(savingTo: folder.file("s.json"))).contains("width"), "1 is not written")
    let bad = #"{ "format" : "stemdeck-session", "version" : 3, "stems" : [ { "name" : "pad", "file" : "pad.wav", "width" : 3 } ] }"#
    do {
      _ = try SessionFile.decode(Data(bad.utf8), source: "bad.json")
      Issue.record("a width of 3 was accepted")
    } catch {
      #expect("\(error)".contains("stems[0].width") && "\(error)".contains("between 0 and 2 (got 3)"), "\(error)")
    }
  }
}
