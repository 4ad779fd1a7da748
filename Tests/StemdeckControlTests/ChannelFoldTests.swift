import Foundation
import StemdeckAudioFile
import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import Testing

@Suite struct ChannelFoldTests {
  @Test(
    "files with more than two channels and no known layout fold to stereo: even channels averaged left, odd right",
    arguments: [(3, OutputFormat.wav24), (4, .wavFloat), (6, .wav24), (8, .wavFloat)])
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
      session.stems = [
        stem("multi", name) {
          $0.pan = pan; $0.volume = 0.9
        }
      ]
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
    try rig.mixer.stems.add(path: folder.file("quad.wav"), settings: stem("quad", "quad.wav"))
    try rig.mixer.transport.play()
    let out = rig.render(4800)
    #expect(abs(out.left.last! - 0.3) < 1e-6, "left = (0.1 + 0.5) / 2, got \(out.left.last!)")
    #expect(abs(out.right.last! - 0.5) < 1e-6, "right = (0.3 + 0.7) / 2, got \(out.right.last!)")
    let status = try rig.mixer.stems.status("quad")
    #expect(status.info.channelCount == 4)
    #expect(status.meter.channels.count == 2)
    #expect(abs(status.meter.channels[0].peak - decibels(0.3)) < 0.01)
    #expect(abs(status.meter.channels[1].peak - decibels(0.5)) < 0.01)
  }

  // MARK: - Downmix by the file's layout (issue 17)

  /// A tone per channel (its own frequency), the file rendered at volume 1 and pan 0, and each
  /// tone's level measured in the left and the right output (its DFT bin over one second):
  /// ITU-R BS.775, L/R at 0 dB on their side, C at −3.01 dB on both, each surround at −3.01 dB on
  /// its side, the LFE left out. 5.1 and 7.1 from WAVE_FORMAT_EXTENSIBLE masks (written by hand
  /// here: back and side surrounds), FLAC (its fixed order) and Ogg Vorbis (Vorbis order, made by
  /// sox from a WAV in that order).
  @Test(
    "5.1 and 7.1 files are downmixed by their layout (BS.775: C and surrounds −3 dB, LFE out)",
    arguments: ["wav 5.1", "wav 5.1 side", "wav 7.1", "flac 5.1", "flac 7.1", "ogg 5.1", "ogg 7.1"])
  func downmixByLayout(_ kind: String) throws {
    let folder = try TemporaryFolder()
    let parts = kind.split(separator: " ").map(String.init)
    let format = parts[0], surround = parts[1], side = parts.count > 2
    // Channel order of each file, and the expected (left, right) gain of each position.
    let order: [String]
    switch (format, surround) {
    case ("wav", "5.1"): order = side ? ["L", "R", "C", "LFE", "Ls", "Rs"] : ["L", "R", "C", "LFE", "Lb", "Rb"]
    case ("wav", _), ("flac", "7.1"): order = ["L", "R", "C", "LFE", "Lb", "Rb", "Ls", "Rs"]
    case ("flac", _): order = ["L", "R", "C", "LFE", "Lb", "Rb"]
    case ("ogg", "5.1"): order = ["L", "C", "R", "Lb", "Rb", "LFE"]
    default: order = ["L", "C", "R", "Ls", "Rs", "Lb", "Rb", "LFE"]
    }
    let h = 0.5.squareRoot()
    let expected: [String: (Double, Double)] = [
      "L": (1, 0), "R": (0, 1), "C": (h, h), "LFE": (0, 0), "Lb": (h, 0), "Rb": (0, h), "Ls": (h, 0), "Rs": (0, h)
    ]
    let frames = 72000, amplitude = 0.25
    let frequencies = order.indices.map { 300.0 + 200.0 * Double($0) }
    let tones = frequencies.map { Signal.sine(frequency: $0, sampleRate: 48000, frames: frames, amplitude: amplitude) }
    let name: String
    switch format {
    case "wav":
      name = "surround.wav"
      // WAVE_FORMAT_EXTENSIBLE masks: FL FR FC LFE BL BR = 0x3F, FL FR FC LFE SL SR = 0x60F, both = 0x63F.
      let mask: UInt32 = order.count == 8 ? 0x63F : (side ? 0x60F : 0x3F)
      try WAV.writeExtensible(folder.file(name), mask: mask, channels: tones)
    case "flac":
      name = "surround.flac"
      try writeAudio(folder.file(name), format: .flac, channels: tones)
    default:
      name = "surround.ogg"
      try writeAudio(folder.file("plain.wav"), format: .wavFloat, channels: tones)
      let sox = Process()
      sox.executableURL = URL(fileURLWithPath: "/usr/bin/env")
      sox.arguments = ["sox", folder.file("plain.wav"), "-C", "8", folder.file(name)]
      try sox.run()
      sox.waitUntilExit()
      try #require(sox.terminationStatus == 0, "sox could not write Ogg Vorbis")
    }
    let file = try readAudio(folder.file(name))
    #expect(file.channels == order.count)
    #expect(file.info.layout?.name == surround, "layout \(String(describing: file.info.layout))")
    #expect(file.info.layout?.positions.map(\.rawValue) == order)

    var session = Session()
    session.stems = [stem("surround", name)]
    let (_, output) = try renderOffline(session, in: folder)
    // One second from 0.25 s in: whole cycles of every tone, so the bins are independent.
    let window = 12000..<60000
    func level(_ x: [Float], _ f: Double) -> Double {
      var re = 0.0, im = 0.0
      for n in window {
        let phase = 2 * Double.pi * f * Double(n) / 48000
        re += Double(x[n]) * cos(phase)
        im += Double(x[n]) * sin(phase)
      }
      return 2 * (re * re + im * im).squareRoot() / Double(window.count) / amplitude
    }
    let lossy = format == "ogg"
    var report: [String] = []
    for (c, position) in order.enumerated() {
      let want = expected[position]!
      let got = (level(output.left, frequencies[c]), level(output.right, frequencies[c]))
      for (g, w, side) in [(got.0, want.0, "left"), (got.1, want.1, "right")] {
        if w == 0 {  // 16-bit WAV: quantisation noise of the other tones is near −98 dB in a bin
          #expect(decibels(g) < (lossy ? -40 : -90), "\(kind): \(position) in the \(side): \(decibels(g)) dB, wanted nothing")
        } else {
          #expect(
            abs(decibels(g) - decibels(w)) < (lossy ? 0.2 : 0.001),
            "\(kind): \(position) in the \(side): \(decibels(g)) dB, wanted \(decibels(w)) dB")
        }
      }
      func db(_ v: Double) -> String { v < 1e-5 ? "-inf" : String(format: "%.2f", decibels(v)) }
      report.append("\(position) \(db(got.0))/\(db(got.1))")
    }
    print("downmix \(kind) (dB left/right): " + report.joined(separator: ", "))
  }

  @Test("a plain WAV of 6 channels has no known layout: folded, and the stem says so")
  func plainWAVFolds() throws {
    let folder = try TemporaryFolder()
    try writeAudio(folder.file("six.wav"), format: .wavFloat, channels: (0..<6).map { Signal.constant(0.1 * Float($0 + 1), frames: 9600) })
    let rig = MixerRig()
    try rig.mixer.stems.add(path: folder.file("six.wav"), settings: stem("six", "six.wav"))
    #expect(try rig.mixer.stems.status("six").info.layout == nil)
    try rig.mixer.transport.play()
    let out = rig.render(4800)
    #expect(abs(out.left.last! - 0.3) < 1e-6, "left = (0.1 + 0.3 + 0.5) / 3, got \(out.left.last!)")
    #expect(abs(out.right.last! - 0.4) < 1e-6, "right = (0.2 + 0.4 + 0.6) / 3, got \(out.right.last!)")
  }
}
