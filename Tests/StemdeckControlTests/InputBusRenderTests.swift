import Foundation
import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import Testing

/// A live input routed to a bus in an offline render (`render --input mic=FILE`): against the
/// same numpy/scipy reference as `BusRenderTests` (an input is summed into its bus as a mono
/// stem with its EQ, fader and pan law would be).
@Suite struct InputBusRenderTests {
  @Test("render --input with the input routed to a bus with EQ (in a nested graph) equals scipy's mix within -100 dBFS")
  func offlineEqualsScipy() throws {
    let folder = try TemporaryFolder()
    var (session, sources) = try BusRenderTests.graphSession(in: folder)
    // Shorter than the render: silence after its end.
    let voice = Signal.noise(frames: 30000, amplitude: 0.5, seed: 41)
    try writeAudio(folder.file("voice.wav"), format: .wavFloat, channels: [voice])
    var mic = InputSettings(name: "mic", channels: .mono)
    mic.volume = 0.8
    mic.pan = -0.4
    mic.eq.low = EQBand(frequency: 200, gain: -5)
    mic.bus = "drums_bus"
    session.inputs = [mic]
    let output = folder.file("render.wav")
    let summary = try OfflineRenderer.render(
      session: session, sessionPath: folder.file("session.json"), outputPath: output, duration: nil,
      inputs: [RenderInput(name: "mic", path: folder.file("voice.wav"))])
    #expect(summary.frames == 48000)
    let rendered = Stereo(try readAudio(output))

    var stems: [[String: Any]] = []
    func add(_ name: String, _ samples: [Float], channels: Int, volume: Double, pan: Double, eq: EQSettings, bus: String?) throws {
      let path = folder.file(name + ".f32")
      try samples.withUnsafeBufferPointer { try Data(buffer: $0).write(to: URL(fileURLWithPath: path)) }
      let g = referenceGains(pan: pan, channels: channels)
      var entry: [String: Any] = [
        "samples": path, "channels": channels, "gainLeft": g.left * volume, "gainRight": g.right * volume,
        "eq": EQRenderTests.json(eq)
      ]
      if let bus { entry["bus"] = bus }
      stems.append(entry)
    }
    for (settings, samples, channels) in [
      (session.stems[0], sources.noise, 1), (session.stems[1], Signal.interleave([sources.padL, sources.padR]), 2),
      (session.stems[2], sources.bass, 1)
    ] {
      try add(settings.name, samples, channels: channels, volume: settings.volume, pan: settings.pan, eq: settings.eq, bus: settings.bus)
    }
    // The input's port is silent after the file, and its EQ rings on (a stem's EQ stops with
    // the stem): the reference gets the file padded with silence to the render's length.
    let padded = voice + [Float](repeating: 0, count: summary.frames - voice.count)
    try add("mic", padded, channels: 1, volume: mic.volume, pan: mic.pan, eq: mic.eq, bus: mic.bus)
    let buses: [[String: Any]] = session.buses.map { b in
      let g = referenceGains(pan: b.pan, channels: 2)
      var entry: [String: Any] = [
        "name": b.name, "gainLeft": g.left * b.volume, "gainRight": g.right * b.volume, "eq": EQRenderTests.json(b.eq),
        "depth": b.bus == nil ? 0 : 1
      ]
      if let target = b.bus { entry["bus"] = target }
      return entry
    }
    let spec: [String: Any] = [
      "rate": 48000, "frames": summary.frames, "master": session.masterVolume, "masterEQ": EQRenderTests.json(session.masterEQ),
      "stems": stems, "buses": buses
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
    try #require(values.count == 2 * summary.frames)
    let refLeft = Array(values[0..<summary.frames]), refRight = Array(values[summary.frames...])
    let errorLeft = maxAbsError(rendered.left, refLeft), errorRight = maxAbsError(rendered.right, refRight)
    #expect(errorLeft < EQRenderTests.tolerance, "left: max error \(errorLeft) (\(decibels(errorLeft)) dBFS)")
    #expect(errorRight < EQRenderTests.tolerance, "right: max error \(errorRight) (\(decibels(errorRight)) dBFS)")
    print("input on a bus offline vs scipy sosfilt: max error L \(decibels(errorLeft)) dBFS, R \(decibels(errorRight)) dBFS")
    // The route matters: the same input on the master is far from the reference.
    session.inputs[0].bus = nil
    let master = folder.file("master.wav")
    _ = try OfflineRenderer.render(
      session: session, sessionPath: folder.file("session.json"), outputPath: master, duration: nil,
      inputs: [RenderInput(name: "mic", path: folder.file("voice.wav"))])
    #expect(maxAbsError(Stereo(try readAudio(master)).left, refLeft) > 0.05)
  }

  @Test(
    "solo-safe inputs rendered: a soloed stem keeps the mic, on the master or through two buses whose stems stay silent; made unsafe, the mic follows solo"
  )
  func soloSafeInput() throws {
    let folder = try TemporaryFolder()
    var (session, _) = try BusRenderTests.graphSession(in: folder)
    try writeAudio(folder.file("voice.wav"), format: .wavFloat, channels: [Signal.noise(frames: 30000, amplitude: 0.5, seed: 41)])
    session.inputs = [InputSettings(name: "mic", channels: .mono)]
    var n = 0
    func render(_ s: Session) throws -> Stereo {
      n += 1
      let output = folder.file("safe-\(n).wav")
      _ = try OfflineRenderer.render(
        session: s, sessionPath: folder.file("session.json"), outputPath: output, duration: nil,
        inputs: [RenderInput(name: "mic", path: folder.file("voice.wav"))])
      return Stereo(try readAudio(output))
    }
    /// The session with these stems muted and no solo: what a solo should sound like.
    func muting(_ names: Set<String>, _ s: Session) -> Session {
      var s = s
      for i in s.stems.indices where names.contains(s.stems[i].name) { s.stems[i].mute = true }
      return s
    }
    func same(_ a: Stereo, _ b: Stereo) -> Bool { maxAbsError(a.left, b.left) < 1e-6 && maxAbsError(a.right, b.right) < 1e-6 }
    // The bass soloed: the bass and the mic (safe from the start).
    var solo = session
    solo.stems[2].solo = true
    let bassAndMic = try render(muting(["kick", "snare"], session))
    #expect(same(try render(solo), bassAndMic))
    // Unsafe, the mic follows solo: the bass alone, which differs from the bass and the mic.
    var unsafe = solo
    unsafe.inputs[0].soloSafe = false
    var bassOnly = muting(["kick", "snare"], session)
    bassOnly.inputs[0].mute = true
    let alone = try render(bassOnly)
    #expect(maxAbsError(alone.left, bassAndMic.left) > 0.05, "the mic is heard in the reference")
    #expect(same(try render(unsafe), alone))
    // The mic on the drums bus (which feeds the band bus): both stay open for it, through their
    // EQ and faders; the kick and snare on them stay silent.
    var onBus = solo
    onBus.inputs[0].bus = "drums_bus"
    var reference = muting(["kick", "snare"], session)
    reference.inputs[0].bus = "drums_bus"
    let expected = try render(reference)
    #expect(maxAbsError(expected.left, alone.left) > 0.05, "the mic through the buses is heard in the reference")
    #expect(same(try render(onBus), expected))
  }
}
