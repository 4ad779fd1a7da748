import Foundation
@testable import StemdeckConsole
import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import Testing

@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

#if canImport(Glibc)
import Glibc
#endif

// Sound effects bounded by memory, not only by length (issue 16, item 18).

/// Runs the stemdeck binary with `arguments` (absolute paths) and returns its exit status and the
/// peak resident memory of its own image: VmHWM from /proc/PID/status, read every 5 ms while it
/// runs (the peak only grows, so the last reading holds it but for the last few ms). Not wait4's
/// ru_maxrss: posix_spawn's child shares this process's memory until it execs, and Linux carries
/// that high-water mark across the exec, so it reports the test process's own peak (460 MB with
/// the suites running in parallel) whatever the child does.
func runMeasuringPeakMemory(_ arguments: [String], in folder: TemporaryFolder) throws -> (status: Int32, peakBytes: Int) {
  try #require(FileManager.default.isExecutableFile(atPath: stemdeckBinary), "no stemdeck binary at \(stemdeckBinary)")
  let process = Process()
  process.executableURL = URL(fileURLWithPath: stemdeckBinary)
  process.arguments = arguments
  process.standardInput = FileHandle.nullDevice
  process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: try folder.write("", to: ".peak-stdout")))
  process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: try folder.write("", to: ".peak-stderr")))
  try process.run()
  var peak = 0
  let deadline = ContinuousClock.now + .seconds(120)
  while process.isRunning && ContinuousClock.now < deadline {
    if let text = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
      let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
      let kB = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
    {
      peak = max(peak, kB * 1024)
    }
    usleep(5000)
  }
  if process.isRunning { process.terminate(); Issue.record("stemdeck \(arguments) did not finish within 120 s") }
  process.waitUntilExit()
  return (process.terminationStatus, peak)
}

@Suite struct EffectMemoryTests {
  @Test(
    "a 64-channel 768 kHz effect is read and downmixed a block at a time: the render that loads it peaks far below its 786 MB of floats")
  func aManyChannelHighRateEffectIsReadAndFoldedABlockAtATime() throws {
    // 64 channels at 768 kHz: read whole before folding, 10 s were 2 GB of floats; these 4 s 786 MB.
    let folder = try TemporaryFolder()
    try WAV.writeSparse(folder.file("wide.wav"), channels: 64, sampleRate: 768_000, seconds: 4)
    try folder.wav("drums.wav", channels: 2, sampleRate: 48000, seconds: 1, amplitude: 0.5)
    try folder.write(
      HostileInputTests.session(stems: 1, file: "drums.wav", effects: #"{ "name" : "wide", "file" : "wide.wav" }"#), to: "song.json")
    let run = try runMeasuringPeakMemory(["render", folder.file("song.json"), "--output", folder.file("out.wav")], in: folder)
    let stderr = (try? String(contentsOfFile: folder.file(".peak-stderr"), encoding: .utf8)) ?? ""
    #expect(run.status == 0, "render failed: \(stderr)")
    // The downmixed stereo (25 MB), its conversion and the process itself, not 64 channels of floats.
    #expect(run.peakBytes > 0, "no memory figure was read while the render ran")
    #expect(run.peakBytes < 400 << 20, "the render peaked at \(run.peakBytes >> 20) MB")
  }

  @Test("an effect too large for memory (25 s of 768 kHz: 147 MB as stereo) is refused before it is read, and nothing changes")
  func anEffectTooLargeForMemoryIsRefusedBeforeItIsRead() throws {
    let folder = try TemporaryFolder()
    let path = folder.file("huge.wav")
    try WAV.writeSparse(path, channels: 64, sampleRate: 768_000, seconds: 25)
    let mixer = Mixer(sampleRate: 48000)
    defer { mixer.shutdown() }
    let error = #expect(throws: MixerError.self) {
      try mixer.effects.load(path: path, settings: EffectSettings(name: "huge", file: "huge.wav"))
    }
    #expect(
      error?.description.contains("too large to hold in memory") == true && error?.description.contains("huge.wav") == true,
      "\(String(describing: error))")
    #expect(mixer.effects.statuses().isEmpty)
  }
}
