import Foundation
import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import Testing

/// Live inputs in an offline render (`render --input NAME=FILE`, OfflineRenderer+Inputs.swift)
/// against an independent mix in numpy (its own pan law: constant power for mono, balance for
/// stereo, as README documents), and the render's refusals.
@Suite struct InputRenderTests {
  /// -100 dBFS.
  static let tolerance = 1e-5

  /// The reference: each source's samples (raw float32, one plane per channel) with its volume,
  /// pan and channel count, summed from frame 0, times the master volume; raw float64 L then R.
  static let referenceScript = #"""
    import json, math, sys
    import numpy as np

    def gains(pan, channels):
        if channels == 1:
            t = (pan + 1) * math.pi / 4
            return math.cos(t), math.sin(t)
        return min(1.0, 1 - pan), min(1.0, 1 + pan)

    spec = json.load(open(sys.argv[1]))
    n = spec["frames"]
    left, right = np.zeros(n), np.zeros(n)
    for s in spec["sources"]:
        planes = [np.fromfile(p, dtype=np.float32).astype(np.float64) for p in s["planes"]]
        gl, gr = gains(s["pan"], s["channels"])
        l = planes[0]
        r = planes[1] if len(planes) > 1 else planes[0]
        m = min(len(l), n)
        left[:m] += s["volume"] * gl * l[:m]
        right[:m] += s["volume"] * gr * r[:m]
    np.concatenate([left * spec["master"], right * spec["master"]]).tofile(sys.argv[2])
    """#

  @Test("render --input: a mono and a stereo input (fed a mono file) beside a stem equal numpy's mix within -100 dBFS")
  func offlineEqualsNumpy() throws {
    let folder = try TemporaryFolder()
    let padL = Signal.noise(frames: 48000, amplitude: 0.4, seed: 21)
    let padR = Signal.sine(frequency: 440, sampleRate: 48000, frames: 48000, amplitude: 0.3)
    // Shorter than the render: silence after its end.
    let voice = Signal.noise(frames: 30000, amplitude: 0.5, seed: 22)
    let synth = Signal.sine(frequency: 97, sampleRate: 48000, frames: 60000, amplitude: 0.6)
    try writeAudio(folder.file("pad.wav"), format: .wavFloat, channels: [padL, padR])
    try writeAudio(folder.file("voice.wav"), format: .wavFloat, channels: [voice])
    try writeAudio(folder.file("synth.wav"), format: .wavFloat, channels: [synth])

    var session = Session()
    session.masterVolume = 0.9
    session.stems = [
      stem("pad", "pad.wav") {
        $0.volume = 0.7; $0.pan = 0.3
      }
    ]
    var mic = InputSettings(name: "mic", channels: .mono)
    mic.volume = 0.8
    mic.pan = -0.4
    var keys = InputSettings(name: "keys", channels: .stereo)
    keys.volume = 1.2
    keys.pan = 0.5
    // No file: silent.
    let idle = InputSettings(name: "idle", channels: .mono)
    session.inputs = [mic, keys, idle]
    let output = folder.file("render.wav")
    let summary = try OfflineRenderer.render(
      session: session, sessionPath: folder.file("session.json"), outputPath: output, duration: nil,
      inputs: [RenderInput(name: "mic", path: folder.file("voice.wav")), RenderInput(name: "keys", path: folder.file("synth.wav"))])
    #expect(summary.frames == 48000, "the inputs do not lengthen the render")
    let rendered = Stereo(try readAudio(output))

    func plane(_ name: String, _ samples: [Float]) throws -> String {
      let path = folder.file(name + ".f32")
      try samples.withUnsafeBufferPointer { try Data(buffer: $0).write(to: URL(fileURLWithPath: path)) }
      return path
    }
    let spec: [String: Any] = [
      "frames": summary.frames, "master": session.masterVolume,
      "sources": [
        ["planes": [try plane("padL", padL), try plane("padR", padR)], "channels": 2, "volume": 0.7, "pan": 0.3],
        ["planes": [try plane("voice", voice)], "channels": 1, "volume": mic.volume, "pan": mic.pan],
        ["planes": [try plane("synth", synth)], "channels": 2, "volume": keys.volume, "pan": keys.pan]
      ]
    ]
    try JSONSerialization.data(withJSONObject: spec).write(to: URL(fileURLWithPath: folder.file("spec.json")))
    try Data(Self.referenceScript.utf8).write(to: URL(fileURLWithPath: folder.file("reference.py")))
    let outcome = try runProcess(
      "/usr/bin/python3", [folder.file("reference.py"), folder.file("spec.json"), folder.file("reference.f64")],
      stderr: folder.file("python.err"), timeout: 120)
    let err = (try? String(contentsOfFile: folder.file("python.err"), encoding: .utf8)) ?? ""
    try #require(outcome.status == 0, "python3 with numpy (scripts/install-deps): \(err)")
    let data = try Data(contentsOf: URL(fileURLWithPath: folder.file("reference.f64")))
    let values = data.withUnsafeBytes { Array($0.bindMemory(to: Double.self)) }
    try #require(values.count == 2 * summary.frames)
    let refLeft = Array(values[0..<summary.frames]), refRight = Array(values[summary.frames...])
    let errorLeft = maxAbsError(rendered.left, refLeft), errorRight = maxAbsError(rendered.right, refRight)
    #expect(errorLeft < Self.tolerance, "left: max error \(errorLeft) (\(decibels(errorLeft)) dBFS)")
    #expect(errorRight < Self.tolerance, "right: max error \(errorRight) (\(decibels(errorRight)) dBFS)")
    print("inputs offline vs numpy: max error L \(decibels(errorLeft)) dBFS, R \(decibels(errorRight)) dBFS")
    // The inputs are in it: without them the render is far from the reference.
    let plain = folder.file("plain.wav")
    _ = try OfflineRenderer.render(session: session, sessionPath: folder.file("session.json"), outputPath: plain, duration: nil)
    #expect(maxAbsError(Stereo(try readAudio(plain)).left, refLeft) > 0.1)
  }

  @Test(
    "render --input refusals name the input, the file and what is allowed; nothing is written",
    arguments: [
      ("nope", "voice.wav", "--input nope=", "the session has no live input named 'nope' (its inputs: mic, keys)"),
      ("mic", "missing.wav", "--input mic=", "missing.wav"),
      ("mic", "pad.wav", "--input mic=", "'mic' is a mono input and the file is stereo; give a mono file"),
      ("mic", "notes.txt", "--input mic=", "notes.txt")
    ])
  func refusals(name: String, file: String, flag: String, message: String) throws {
    let folder = try TemporaryFolder()
    try writeAudio(folder.file("pad.wav"), format: .wavFloat, channels: [[0.1, 0.2], [0.1, 0.2]])
    try writeAudio(folder.file("voice.wav"), format: .wavFloat, channels: [Signal.noise(frames: 4800, amplitude: 0.5, seed: 3)])
    try Data("not audio".utf8).write(to: URL(fileURLWithPath: folder.file("notes.txt")))
    var session = Session()
    session.stems = [stem("pad", "pad.wav")]
    session.inputs = [InputSettings(name: "mic", channels: .mono), InputSettings(name: "keys", channels: .stereo)]
    let output = folder.file("out.wav")
    do {
      _ = try OfflineRenderer.render(
        session: session, sessionPath: folder.file("session.json"), outputPath: output, duration: 0.1,
        inputs: [RenderInput(name: name, path: folder.file(file))])
      Issue.record("rendered with --input \(name)=\(file)")
    } catch {
      let words = error.words(option: { "--" + $0.rawValue }, action: \.plain)
      #expect(words.contains(flag) && words.contains(message), "\(words)")
    }
    #expect(!FileManager.default.fileExists(atPath: output))
    // Twice the same input.
    do {
      _ = try OfflineRenderer.render(
        session: session, sessionPath: folder.file("session.json"), outputPath: output, duration: 0.1,
        inputs: [RenderInput(name: "mic", path: folder.file("voice.wav")), RenderInput(name: "mic", path: folder.file("voice.wav"))])
      Issue.record("rendered with mic given twice")
    } catch {
      #expect(error.message.contains("input 'mic' is given twice; give one file per input"), "\(error)")
    }
  }
}
