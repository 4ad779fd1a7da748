import Foundation
@testable import StemdeckConsole
import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

// Sound effects bounded by memory, not only by length (issue 16, item 18).

/// Runs the stemdeck binary with `arguments` (absolute paths: the child shares this process's
/// working directory) as a child of its own and returns its
/// exit status and its peak resident memory (wait4's ru_maxrss), which nothing else in this test
/// process adds to: other tests run in parallel here, so this process's own peak would say little.
func runMeasuringPeakMemory(_ arguments: [String], in folder: TemporaryFolder) throws -> (status: Int32, peakBytes: Int) {
  try #require(FileManager.default.isExecutableFile(atPath: stemdeckBinary), "no stemdeck binary at \(stemdeckBinary)")
  var actions = posix_spawn_file_actions_t()
  posix_spawn_file_actions_init(&actions)
  defer { posix_spawn_file_actions_destroy(&actions) }
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
  posix_spawn_file_actions_addopen(&actions, 1, folder.file(".peak-stdout"), O_WRONLY | O_CREAT | O_TRUNC, 0o644)
  posix_spawn_file_actions_addopen(&actions, 2, folder.file(".peak-stderr"), O_WRONLY | O_CREAT | O_TRUNC, 0o644)
  let argv = ([stemdeckBinary] + arguments).map { strdup($0) } + [nil]
  defer { argv.forEach { free($0) } }
  var pid: pid_t = 0
  let spawned = posix_spawn(&pid, stemdeckBinary, &actions, nil, argv, environ)
  try #require(spawned == 0, "posix_spawn failed: \(spawned)")
  var status: Int32 = 0
  var usage = rusage()
  while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
  let exit = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
  return (exit, usage.ru_maxrss * 1024)
}

@Suite struct EffectMemoryTests {
  @Test("a 64-channel 768 kHz effect is read and downmixed a block at a time: the render that loads it peaks far below its 786 MB of floats")
  func aManyChannelHighRateEffectIsReadAndFoldedABlockAtATime() throws {
    // 64 channels at 768 kHz: read whole before folding, 10 s were 2 GB of floats; these 4 s 786 MB.
    let folder = try TemporaryFolder()
    try WAV.writeSparse(folder.file("wide.wav"), channels: 64, sampleRate: 768_000, seconds: 4)
    try folder.wav("drums.wav", channels: 2, sampleRate: 48000, seconds: 1, amplitude: 0.5)
    try folder.write(HostileInputTests.session(stems: 1, file: "drums.wav", effects: #"{ "name" : "wide", "file" : "wide.wav" }"#), to: "song.json")
    let run = try runMeasuringPeakMemory(["render", folder.file("song.json"), "--output", folder.file("out.wav")], in: folder)
    let stderr = (try? String(contentsOfFile: folder.file(".peak-stderr"), encoding: .utf8)) ?? ""
    #expect(run.status == 0, "render failed: \(stderr)")
    // The downmixed stereo (25 MB), its conversion and the process itself, not 64 channels of floats.
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
      try mixer.loadEffect(path: path, settings: EffectSettings(name: "huge", file: "huge.wav"))
    }
    #expect(error?.description.contains("too large to hold in memory") == true && error?.description.contains("huge.wav") == true,
            "\(String(describing: error))")
    #expect(mixer.effectStatuses().isEmpty)
  }
}
