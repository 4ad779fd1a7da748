import Foundation
import StemdeckAudioFile
import StemdeckControl
import StemdeckTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

// Takes (recordings) never follow, truncate or replace anything planted at their path, and are
// created with the user's umask.

@Suite("Take files: no symbolic link followed, the user's umask")
struct TakeFileSecurityTests {
  @Test("record onto a path where a symbolic link to a victim was planted: a clear error, the victim and the link untouched")
  func plantedLinkToVictim() throws {
    let folder = try TemporaryFolder()
    let victim = folder.file("victim.wav"), take = folder.file("take-1.wav")
    try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
    try #require(symlink(victim, take) == 0)
    let mixer = Mixer(sampleRate: 48000, streaming: .synchronous, maxVoices: 8)
    defer { mixer.shutdown() }
    do {
      try mixer.recorder.start(path: take, name: "take-1", format: .wavFloat, latencyFrames: 0, muted: false)
      Issue.record("recording over a planted link was accepted")
    } catch {
      #expect(error.description.contains(take) && error.description.contains("symbolic link"), "\(error)")
    }
    #expect(FileFacts.bytes(victim) == Array("precious".utf8))
    #expect(FileFacts.kind(take) == S_IFLNK)
    #expect(mixer.recorder.status == nil)
  }

  @Test("the take writer itself (the last line of defence, after the check) refuses a link, even a dangling one, and a file")
  func writerRefusesWhatExists() throws {
    let folder = try TemporaryFolder()
    let nowhere = folder.file("would-be-created.wav")
    let dangling = folder.file("dangling.wav"), victim = folder.file("victim.wav"), linked = folder.file("linked.wav")
    try #require(symlink(nowhere, dangling) == 0)
    try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
    try #require(symlink(victim, linked) == 0)
    for path in [dangling, linked, victim] {
      do {
        _ = try SoundFileWriter(path: path, format: .wavFloat, sampleRate: 48000, channelCount: 2, exclusive: true)
        Issue.record("\(path) was opened for writing")
      } catch {
        #expect(error.description.contains(path) && error.description.contains("already exists"), "\(error)")
      }
    }
    #expect(FileFacts.kind(nowhere) == nil, "the dangling link's target was created")
    #expect(FileFacts.bytes(victim) == Array("precious".utf8))
  }

  @Test("a new take is a valid file with mode 0666 minus the umask")
  func newTakeFollowsUmask() throws {
    let folder = try TemporaryFolder()
    let path = folder.file("take.wav")
    do {
      let writer = try SoundFileWriter(path: path, format: .wavFloat, sampleRate: 48000, channelCount: 2, exclusive: true)
      let frames: [Float] = [0.25, -0.25, 0.5, -0.5]
      try frames.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frameCount: 2) }
    }
    let text = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
    let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("Umask:") })
    let mask = try #require(mode_t(line.split(separator: "\t").last.map(String.init) ?? "", radix: 8))
    var info = stat()
    #expect(lstat(path, &info) == 0 && info.st_mode & 0o777 == 0o666 & ~mask, "mode \(String(info.st_mode & 0o777, radix: 8))")
    let file = try SoundFile(readingFrom: path)
    #expect(file.info.frameCount == 2 && file.info.channelCount == 2)
  }
}
