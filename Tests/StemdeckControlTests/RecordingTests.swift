import Foundation
import StemdeckAudioFile
import StemdeckControl
import StemdeckEngine
import StemdeckSession
import StemdeckTestSupport
import Testing

/// Takes recorded through the renderer (the test plays the audio thread and feeds the inputs):
/// where they land on the transport, and what happens when they cannot be written.
@Suite("recording takes")
struct RecordingTests {
  /// Renders `frames` in blocks of 128 with the inputs carrying a click at each absolute input
  /// frame in `clicks` (`inputFrame` counts every frame fed so far).
  func render(_ rig: MixerRig, _ frames: Int, inputFrame: inout Int, clicks: Set<Int>) {
    var left = [Float](repeating: 0, count: 128)
    var right = [Float](repeating: 0, count: 128)
    var done = 0
    while done < frames {
      let n = min(128, frames - done)
      for i in 0..<n { left[i] = clicks.contains(inputFrame + i) ? 1 : 0; right[i] = 0 }
      left.withUnsafeMutableBufferPointer { l in
        right.withUnsafeMutableBufferPointer { r in
          rig.mixer.renderState.pointee.inputLeft = l.baseAddress
          rig.mixer.renderState.pointee.inputRight = r.baseAddress
          _ = rig.render(n, block: n)
          rig.mixer.renderState.pointee.inputLeft = nil
          rig.mixer.renderState.pointee.inputRight = nil
        }
      }
      inputFrame += n
      done += n
    }
  }

  /// Stops the take and waits for it to become a stem; returns its settings.
  func finish(_ rig: MixerRig, _ name: String, inputFrame: inout Int) throws -> StemSettings {
    try rig.mixer.recorder.stop()
    var events: [MixerEvent] = []
    for _ in 0..<200 where !events.contains(where: { if case .takeRecorded = $0 { true } else { false } }) {
      render(rig, 128, inputFrame: &inputFrame, clicks: [])
      events += rig.mixer.pump()
    }
    return try #require(rig.mixer.stems.statuses().first { $0.settings.name == name }?.settings, "events: \(events)")
  }

  @Test("a take started while playing starts at its capture frame minus the latency")
  func whilePlaying() throws {
    let folder = try TemporaryFolder()
    let rig = MixerRig()
    var input = 0
    try rig.mixer.transport.play()
    render(rig, 4096, inputFrame: &input, clicks: [])
    let transportAtStart = Int((rig.mixer.transport.position * 48000).rounded())
    try rig.mixer.recorder.start(path: folder.file("t.wav"), name: "t", format: .wavFloat, latencyFrames: 300, muted: false)
    render(rig, 4096, inputFrame: &input, clicks: [])
    let settings = try finish(rig, "t", inputFrame: &input)
    #expect(
      settings.startOffset == Double(transportAtStart - 300) / 48000,
      "startOffset \(settings.startOffset), transport at start \(transportAtStart)")
    #expect(settings.loopStart == nil)
  }

  @Test("a take armed before play is anchored where the transport starts; the lead-in becomes a skipped region")
  func armedBeforePlay() throws {
    let folder = try TemporaryFolder()
    let rig = MixerRig()
    var input = 0
    try rig.mixer.recorder.start(path: folder.file("t.wav"), name: "t", format: .wavFloat, latencyFrames: 100, muted: false)
    render(rig, 1024, inputFrame: &input, clicks: [])  // armed, paused: 1024 frames of lead-in
    try rig.mixer.transport.play()
    render(rig, 2048, inputFrame: &input, clicks: [1024 + 500])  // captured at transport frame 500
    let settings = try finish(rig, "t", inputFrame: &input)
    // The take's frame 1024 was captured on transport frame 0: its start is 1024 + 100 frames
    // before transport 0, so that much is skipped.
    let loopStart = try #require(settings.loopStart, "no lead-in region: \(settings)")
    #expect(loopStart == Double(1024 + 100) / 48000, "loopStart \(loopStart)")
    #expect(settings.startOffset == 0)
    // Played back, the click lands on transport frame 500 - 100 (captured minus latency).
    let take = try readAudio(folder.file("t.wav"))
    let clickInFile = try #require(take.channel(0).firstIndex { $0 > 0.5 })
    #expect(clickInFile - Int((loopStart * 48000).rounded()) == 400, "click at file frame \(clickInFile)")
  }

  @Test("a take whose folder cannot be written is refused with the path, and nothing starts")
  func unwritableFolder() throws {
    let folder = try TemporaryFolder()
    let file = folder.file("not-a-folder")
    try "x".write(toFile: file, atomically: true, encoding: .utf8)
    let rig = MixerRig()
    #expect {
      try rig.mixer.recorder.start(path: file + "/t.wav", name: "t", format: .wavFloat, latencyFrames: 0, muted: false)
    } throws: { error in
      "\(error)".contains(file + "/t.wav") && "\(error)".contains("cannot record")
    }
    #expect(rig.mixer.recorder.status == nil)
    #expect(rig.mixer.stems.statuses().isEmpty)
  }
}
