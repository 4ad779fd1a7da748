import Foundation
import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import Testing

/// Aux sends in a whole graph (issue 22's correctness clause): stems and a live input into nested
/// buses with EQ, a stem's, a bus's and an input's send, and the send's return fed from a file
/// (`render --input verb_return=FILE`), against `BusRenderTests.referenceScript` (numpy/scipy
/// `sosfilt` with the RBJ coefficients), extended with sends and returns.
@Suite struct SendGraphRenderTests {
  @Test(
    "offline render with a stem, a bus and an input send and the return fed from a file equals scipy's mix within -100 dBFS; so does the send"
  )
  func offlineEqualsScipy() throws {
    let folder = try TemporaryFolder()
    var (session, sources) = try BusRenderTests.graphSession(in: folder)
    let voice = Signal.noise(frames: 30000, amplitude: 0.5, seed: 61)
    try writeAudio(folder.file("voice.wav"), format: .wavFloat, channels: [voice])
    // What the external reverb sends back: stereo, shorter than the render.
    let wetL = Signal.noise(frames: 36000, amplitude: 0.3, seed: 62)
    let wetR = Signal.sine(frequency: 440, sampleRate: 48000, frames: 36000, amplitude: 0.25)
    try writeAudio(folder.file("wet.wav"), format: .wavFloat, channels: [wetL, wetR])
    var mic = InputSettings(name: "mic", channels: .mono)
    mic.volume = 0.8
    mic.pan = -0.4
    mic.eq.low = EQBand(frequency: 200, gain: -5)
    mic.bus = "drums_bus"
    mic.sends = [StemSend(to: "verb", level: 0.4, preFader: true)]
    session.inputs = [mic]
    session.sends = [SendSettings(name: "verb", returnVolume: 0.7)]
    session.stems[2].sends = [StemSend(to: "verb", level: 0.25)]  // bass, post-fader
    session.buses[0].sends = [StemSend(to: "verb", level: 0.5, preFader: true)]  // drums_bus
    session.buses[1].sends = [StemSend(to: "verb", level: 0.3)]  // band, post-fader
    try session.validate()
    let output = folder.file("render.wav")
    let feeds = [
      RenderInput(name: "mic", path: folder.file("voice.wav")), RenderInput(name: "verb_return", path: folder.file("wet.wav"))
    ]
    let summary = try OfflineRenderer.render(
      session: session, sessionPath: folder.file("session.json"), outputPath: output, duration: nil, inputs: feeds)
    #expect(summary.frames == 48000)
    let rendered = Stereo(try readAudio(output))

    // The send's own output (offline it goes nowhere): the same session in a mixer driven by the
    // test, the input fed the same file, send 0 captured.
    let rig = MixerRig()
    _ = try rig.mixer.load(session, sessionPath: folder.file("session.json"))
    try rig.mixer.transport.play()
    let padded = voice + [Float](repeating: 0, count: summary.frames - voice.count)
    let send = SendRenderTests().render(rig, frames: summary.frames, inputFeed: padded).send

    func sends(_ levels: [StemSend], fader: (left: Double, right: Double)) -> [[String: Any]] {
      levels.map { s in
        ["to": s.to, "left": s.level * (s.preFader ? 1 : fader.left), "right": s.level * (s.preFader ? 1 : fader.right)]
      }
    }
    var stems: [[String: Any]] = []
    func add(
      _ name: String, _ samples: [Float], channels: Int, volume: Double, pan: Double, eq: EQSettings, bus: String?, levels: [StemSend]
    )
      throws
    {
      let path = folder.file(name + ".f32")
      try samples.withUnsafeBufferPointer { try Data(buffer: $0).write(to: URL(fileURLWithPath: path)) }
      let g = referenceGains(pan: pan, channels: channels)
      let fader = (left: g.left * volume, right: g.right * volume)
      var entry: [String: Any] = [
        "samples": path, "channels": channels, "gainLeft": fader.left, "gainRight": fader.right, "eq": EQRenderTests.json(eq),
        "sends": sends(levels, fader: fader)
      ]
      if let bus { entry["bus"] = bus }
      stems.append(entry)
    }
    for (s, samples, channels) in [
      (session.stems[0], sources.noise, 1), (session.stems[1], Signal.interleave([sources.padL, sources.padR]), 2),
      (session.stems[2], sources.bass, 1)
    ] {
      try add(s.name, samples, channels: channels, volume: s.volume, pan: s.pan, eq: s.eq, bus: s.bus, levels: s.sends)
    }
    // The input's port is silent after the file and its EQ rings on: padded to the render's length.
    try add("mic", padded, channels: 1, volume: mic.volume, pan: mic.pan, eq: mic.eq, bus: mic.bus, levels: mic.sends)
    let buses: [[String: Any]] = session.buses.map { b in
      let g = referenceGains(pan: b.pan, channels: 2)
      let fader = (left: g.left * b.volume, right: g.right * b.volume)
      var entry: [String: Any] = [
        "name": b.name, "gainLeft": fader.left, "gainRight": fader.right, "eq": EQRenderTests.json(b.eq),
        "depth": b.bus == nil ? 0 : 1, "sends": sends(b.sends, fader: fader)
      ]
      if let target = b.bus { entry["bus"] = target }
      return entry
    }
    let wetPath = folder.file("wet.f32")
    try Signal.interleave([wetL, wetR]).withUnsafeBufferPointer { try Data(buffer: $0).write(to: URL(fileURLWithPath: wetPath)) }
    let spec: [String: Any] = [
      "rate": 48000, "frames": summary.frames, "master": session.masterVolume, "masterEQ": EQRenderTests.json(session.masterEQ),
      "stems": stems, "buses": buses, "sendNames": ["verb"],
      "returns": [["samples": wetPath, "channels": 2, "gain": session.sends[0].returnVolume]]
    ]
    try JSONSerialization.data(withJSONObject: spec).write(to: URL(fileURLWithPath: folder.file("spec.json")))
    try Data(BusRenderTests.referenceScript.utf8).write(to: URL(fileURLWithPath: folder.file("reference.py")))
    let outcome = try runProcess(
      "/usr/bin/python3", [folder.file("reference.py"), folder.file("spec.json"), folder.file("reference.f64")],
      stderr: folder.file("python.err"), timeout: 120)
    let err = (try? String(contentsOfFile: folder.file("python.err"), encoding: .utf8)) ?? ""
    try #require(outcome.status == 0, "python3 with numpy and scipy (scripts/install-deps): \(err)")
    let data = try Data(contentsOf: URL(fileURLWithPath: folder.file("reference.f64")))
    let values = data.withUnsafeBytes { Array($0.bindMemory(to: Double.self)) }
    let n = summary.frames
    try #require(values.count == 4 * n)
    let reference = (0..<4).map { Array(values[($0 * n)..<(($0 + 1) * n)]) }
    let errors = [
      maxAbsError(rendered.left, reference[0]), maxAbsError(rendered.right, reference[1]),
      maxAbsError(send.left, reference[2]), maxAbsError(send.right, reference[3])
    ]
    for (what, error) in zip(["master L", "master R", "send L", "send R"], errors) {
      #expect(error < EQRenderTests.tolerance, "\(what): max error \(error) (\(decibels(error)) dBFS)")
    }
    print(
      "sends in the graph vs scipy sosfilt: max error master \(decibels(max(errors[0], errors[1]))) dBFS, send \(decibels(max(errors[2], errors[3]))) dBFS"
    )
    // Each part matters: the send carries something, and without the return file the master is far off.
    #expect(peak(send.left[...]) > 0.05 && peak(send.right[...]) > 0.05)
    let dry = folder.file("dry.wav")
    _ = try OfflineRenderer.render(
      session: session, sessionPath: folder.file("session.json"), outputPath: dry, duration: nil, inputs: [feeds[0]])
    #expect(maxAbsError(Stereo(try readAudio(dry)).left, reference[0]) > 0.05)
  }

  @Test("--input NAME=FILE for a name that is neither a live input nor a send's return is refused, naming both lists")
  func unknownReturn() throws {
    let folder = try TemporaryFolder()
    try writeAudio(folder.file("wet.wav"), format: .wavFloat, channels: [Signal.noise(frames: 4800, amplitude: 0.3, seed: 63)])
    var session = Session()
    session.inputs = [InputSettings(name: "mic", channels: .mono)]
    session.sends = [SendSettings(name: "verb")]
    let output = folder.file("out.wav")
    do {
      _ = try OfflineRenderer.render(
        session: session, sessionPath: folder.file("session.json"), outputPath: output, duration: 0.1,
        inputs: [RenderInput(name: "verb_ret", path: folder.file("wet.wav"))])
      Issue.record("rendered with --input verb_ret")
    } catch {
      let words = error.words(option: { "--" + $0.rawValue }, action: \.plain)
      #expect(
        words.contains(
          "--input verb_ret=\(folder.file("wet.wav")): the session has no live input or send return named 'verb_ret' (its inputs: mic; its send returns: verb_return)"
        ), "\(words)")
    }
    #expect(!FileManager.default.fileExists(atPath: output))
  }
}
