import Foundation
import StemdeckControl
import StemdeckSession
import Testing

#if canImport(Glibc)
import Glibc
#endif

// Sound effects bounded by memory, not only by length (issue 16, item 18).

/// A 16-bit PCM WAV of `channels` channels at `rate` whose samples are a hole: the header claims
/// `seconds` of audio and the file is extended with ftruncate (sparse, zeros).
func sparseWav(_ path: String, channels: Int, rate: Int, seconds: Int) throws {
  let dataBytes = rate * seconds * channels * 2
  var header: [UInt8] = []
  func text(_ s: String) { header += Array(s.utf8) }
  func u32(_ v: Int) { for i in 0..<4 { header.append(UInt8((v >> (8 * i)) & 0xFF)) } }
  func u16(_ v: Int) { for i in 0..<2 { header.append(UInt8((v >> (8 * i)) & 0xFF)) } }
  text("RIFF"); u32(36 + dataBytes); text("WAVE")
  text("fmt "); u32(16); u16(1); u16(channels); u32(rate); u32(rate * channels * 2); u16(channels * 2); u16(16)
  text("data"); u32(dataBytes)
  try Data(header).write(to: URL(fileURLWithPath: path))
  let fd = open(path, O_WRONLY)
  defer { close(fd) }
  try #require(fd >= 0 && ftruncate(fd, off_t(header.count + dataBytes)) == 0)
}

/// The process's peak resident memory so far (VmHWM), in bytes.
func peakResidentBytes() throws -> Int {
  let text = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
  let line = text.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
  return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
}

@Suite struct EffectMemoryTests {
  @Test func aManyChannelHighRateEffectIsReadAndFoldedABlockAtATime() throws {
    // 64 channels at 768 kHz: read whole before folding, 10 s were 2 GB of floats; these 4 s 786 MB.
    let folder = try TemporaryFolder()
    let path = folder.file("wide.wav")
    try sparseWav(path, channels: 64, rate: 768_000, seconds: 4)
    let rig = MixerRig()
    let before = try peakResidentBytes()
    try rig.mixer.loadEffect(path: path, settings: EffectSettings(name: "wide", file: "wide.wav"))
    let grown = try peakResidentBytes() - before
    #expect(rig.mixer.effectStatuses().first?.channels == 2)
    // The folded stereo (25 MB) and its conversion, not 64 channels of floats.
    #expect(grown < 400 << 20, "peak memory grew by \(grown >> 20) MB")
  }

  @Test func anEffectTooLargeForMemoryIsRefusedBeforeItIsRead() throws {
    // 25 s of 768 kHz: inside the 60 s limit, but 147 MB as stereo samples.
    let folder = try TemporaryFolder()
    let path = folder.file("huge.wav")
    try sparseWav(path, channels: 64, rate: 768_000, seconds: 25)
    let rig = MixerRig()
    let start = Date()
    let error = #expect(throws: MixerError.self) {
      try rig.mixer.loadEffect(path: path, settings: EffectSettings(name: "huge", file: "huge.wav"))
    }
    #expect(error?.description.contains("too large to hold in memory") == true && error?.description.contains("huge.wav") == true,
            "\(String(describing: error))")
    #expect(Date().timeIntervalSince(start) < 2)
    #expect(rig.mixer.effectStatuses().isEmpty)
  }
}
