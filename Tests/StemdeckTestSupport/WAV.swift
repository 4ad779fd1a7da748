import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// RIFF/WAVE files written byte by byte, so a test does not depend on the library that reads
/// them back. (Round trips through libsndfile itself are in the control and integration tests' support.)
public enum WAV {
  /// The canonical 44-byte PCM WAV header. The fields are written as given, so a header can claim
  /// things no encoder would write (0 channels, 1 Hz, a data chunk of 4 GB).
  public static func header(
    channels: UInt16, sampleRate: UInt32, bitsPerSample: UInt16 = 16,
    dataBytes: UInt32, formatTag: UInt16 = 1
  ) -> [UInt8] {
    var b: [UInt8] = []
    func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { b += $0 } }
    func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { b += $0 } }
    let blockAlign = UInt16(truncatingIfNeeded: Int(channels) * Int(bitsPerSample) / 8)
    b += Array("RIFF".utf8); u32(36 &+ dataBytes); b += Array("WAVE".utf8)
    b += Array("fmt ".utf8); u32(16); u16(formatTag); u16(channels); u32(sampleRate)
    u32(sampleRate &* UInt32(blockAlign)); u16(blockAlign); u16(bitsPerSample)
    b += Array("data".utf8); u32(dataBytes)
    return b
  }

  /// Writes a 16-bit PCM WAV holding the same sine in every channel.
  public static func writeSine(
    _ path: String, channels: Int, sampleRate: Int, seconds: Double,
    frequency: Double = 440, amplitude: Double = 1
  ) throws {
    let frames = Int((seconds * Double(sampleRate)).rounded())
    let dataSize = frames * channels * 2
    var bytes = header(channels: UInt16(channels), sampleRate: UInt32(sampleRate), dataBytes: UInt32(dataSize))
    bytes.reserveCapacity(bytes.count + dataSize)
    for i in 0..<frames {
      let x = amplitude * sin(2 * Double.pi * frequency * Double(i) / Double(sampleRate))
      let s = UInt16(bitPattern: Int16((max(-1, min(1, x)) * 32767).rounded()))
      for _ in 0..<channels { bytes.append(UInt8(s & 0xFF)); bytes.append(UInt8(s >> 8)) }
    }
    try Data(bytes).write(to: URL(fileURLWithPath: path))
  }

  /// A 16-bit PCM WAV whose samples are a hole: the header claims `seconds` of audio and the file
  /// is extended with ftruncate (sparse, zeros), so a huge file costs no disk.
  public static func writeSparse(_ path: String, channels: Int, sampleRate: Int, seconds: Int) throws {
    let dataBytes = sampleRate * seconds * channels * 2
    let bytes = header(channels: UInt16(channels), sampleRate: UInt32(sampleRate), dataBytes: UInt32(truncatingIfNeeded: dataBytes))
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    let fd = open(path, O_WRONLY)
    guard fd >= 0 else { throw TestSupportError("open \(path): \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    guard ftruncate(fd, off_t(bytes.count + dataBytes)) == 0 else {
      throw TestSupportError("ftruncate \(path): \(String(cString: strerror(errno)))")
    }
  }

  /// Writes 16-bit PCM as WAVE_FORMAT_EXTENSIBLE with the channel mask `mask`, byte by byte (the
  /// layout of Microsoft's WAVEFORMATEXTENSIBLE), so the test does not depend on the library that
  /// reads it back.
  public static func writeExtensible(_ path: String, mask: UInt32, sampleRate: UInt32 = 48000, channels: [[Float]]) throws {
    var bytes: [UInt8] = []
    func u16(_ v: UInt16) { bytes += [UInt8(v & 0xFF), UInt8(v >> 8)] }
    func u32(_ v: UInt32) { for i in 0..<4 { bytes.append(UInt8((v >> (8 * UInt32(i))) & 0xFF)) } }
    let count = UInt16(channels.count), frames = channels[0].count
    let dataBytes = UInt32(frames * channels.count * 2)
    bytes += Array("RIFF".utf8); u32(4 + 8 + 40 + 8 + dataBytes); bytes += Array("WAVE".utf8)
    bytes += Array("fmt ".utf8); u32(40)
    u16(0xFFFE); u16(count); u32(sampleRate); u32(sampleRate * UInt32(count) * 2); u16(count * 2); u16(16)
    u16(22); u16(16); u32(mask)
    // KSDATAFORMAT_SUBTYPE_PCM: 00000001-0000-0010-8000-00AA00389B71.
    bytes += [0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71]
    bytes += Array("data".utf8); u32(dataBytes)
    for f in 0..<frames {
      for c in channels.indices {
        let v = Int16(max(-32768, min(32767, (Double(channels[c][f]) * 32768).rounded())))
        u16(UInt16(bitPattern: v))
      }
    }
    try Data(bytes).write(to: URL(fileURLWithPath: path))
  }
}
