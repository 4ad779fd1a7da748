import Foundation
import StemdeckAudioFile
import StemdeckControl
import StemdeckSession
import Testing

@Suite struct ChannelFoldTests {
  @Test("files with more than two channels fold to stereo: even channels averaged left, odd right",
        arguments: [(3, OutputFormat.wav24), (4, .wavFloat), (6, .flac), (8, .wavFloat)])
  func fold(channelCount: Int, format: OutputFormat) throws {
    let folder = try TemporaryFolder()
    let frames = 20000
    let channels = (0..<channelCount).map { c in
      Signal.noise(frames: frames, amplitude: 0.9, seed: UInt64(100 + c))
    }
    let name = format == .flac ? "multi.flac" : "multi.wav"
    try writeAudio(folder.file(name), format: format, channels: channels)
    let file = try readAudio(folder.file(name))
    #expect(file.channels == channelCount)

    for pan in [0.0, 0.5] {
      var session = Session()
      session.stems = [stem("multi", name) { $0.pan = pan; $0.volume = 0.9 }]
      let (summary, output) = try renderOffline(session, in: folder, name: "out\(pan).wav")
      #expect(summary.frames == frames)
      // Folded stems follow the stereo balance law.
      let g = referenceGains(pan: pan, channels: 2)
      let even = stride(from: 0, to: channelCount, by: 2).map { $0 }
      let odd = stride(from: 1, to: channelCount, by: 2).map { $0 }
      var left = [Double](repeating: 0, count: frames), right = left
      for f in 0..<frames {
        let l = even.reduce(0.0) { $0 + Double(file.samples[f * channelCount + $1]) } / Double(even.count)
        let r = odd.reduce(0.0) { $0 + Double(file.samples[f * channelCount + $1]) } / Double(odd.count)
        left[f] = l * g.left * 0.9
        right[f] = r * g.right * 0.9
      }
      let errorLeft = maxAbsError(output.left, left)
      let errorRight = maxAbsError(output.right, right)
      #expect(errorLeft < 1e-6, "\(channelCount) channels, pan \(pan): left error \(errorLeft)")
      #expect(errorRight < 1e-6, "\(channelCount) channels, pan \(pan): right error \(errorRight)")
    }
  }

  @Test("a 4-channel stem through the mixer reports 4 channels and a stereo meter")
  func statusOfMultichannelStem() throws {
    let folder = try TemporaryFolder()
    let dc: [[Float]] = [0.1, 0.3, 0.5, 0.7].map { Signal.constant($0, frames: 48000) }
    try writeAudio(folder.file("quad.wav"), format: .wavFloat, channels: dc)
    let rig = MixerRig()
    try rig.mixer.addStem(path: folder.file("quad.wav"), settings: stem("quad", "quad.wav"))
    try rig.mixer.play()
    let out = rig.render(4800)
    #expect(abs(out.left.last! - 0.3) < 1e-6, "left = (0.1 + 0.5) / 2, got \(out.left.last!)")
    #expect(abs(out.right.last! - 0.5) < 1e-6, "right = (0.3 + 0.7) / 2, got \(out.right.last!)")
    let status = try rig.mixer.stemStatus("quad")
    #expect(status.info.channelCount == 4)
    #expect(status.meter.channels.count == 2)
    #expect(abs(status.meter.channels[0].peak - decibels(0.3)) < 0.01)
    #expect(abs(status.meter.channels[1].peak - decibels(0.5)) < 0.01)
  }
}
