import StemdeckAudioFile
import StemdeckTestSupport
@testable import StemdeckRemote
@testable import StemdeckLive

/// Writes NAME.wav (48 kHz, 32-bit float, `mono` in both channels) and NAME.json, a session
/// playing it as its one stem, into `folder`: the fixture of the binary's render and analyze
/// tests.
func writeOneStemSession(_ folder: TemporaryFolder, name: String, mono: [Float]) throws {
  let writer = try SoundFileWriter(path: folder.file("\(name).wav"), format: .wavFloat, sampleRate: 48000, channelCount: 2)
  let interleaved = mono.flatMap { [$0, $0] }
  try interleaved.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frameCount: mono.count) }
  try writer.finish()
  try folder.write(
    """
    { "format" : "stemdeck-session", "version" : 1, "stems" : [ { "name" : "\(name)", "file" : "\(name).wav" } ] }
    """, to: "\(name).json")
}
