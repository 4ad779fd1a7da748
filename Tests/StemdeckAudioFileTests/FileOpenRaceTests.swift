import Foundation
import StemdeckAudioFile
import StemdeckTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

// An audio path swapped between a regular file and a FIFO while stemdeck opens it (issue 16,
// item 15): the path was checked with stat and then opened by name, so a FIFO swapped in between
// blocked open() until a writer came (the control thread froze; SIGTERM was ignored).

@Suite struct FileOpenRaceTests {
  static let attempts = 20000

  @Test func aFifoSwappedInForTheFileNeverBlocksTheOpen() throws {
    let folder = try TemporaryFolder()
    try folder.wav("a.wav", channels: 1, sampleRate: 48000, seconds: 0.01, amplitude: 0.1)
    let fifo = folder.file("fifo")
    try #require(mkfifo(fifo, 0o600) == 0)
    let path = folder.file("stem.wav")
    try #require(symlink(folder.file("a.wav"), path) == 0)

    // The path flips between the two every ~0.1 ms.
    let race = RaceState()
    let wav = folder.file("a.wav")
    let flipper = Thread {
      var n = 0
      while !race.stop.load(ordering: .relaxed) {
        let tmp = path + ".tmp"
        _ = symlink(n % 2 == 0 ? fifo : wav, tmp)
        _ = rename(tmp, path)
        n += 1
        usleep(50)  // often enough to land between a check and an open; leaves the core to others
      }
    }
    flipper.start()
    defer { race.stop.store(true, ordering: .relaxed) }

    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
      for _ in 0..<Self.attempts {
        do throws(SoundFileError) {
          let file = try SoundFile(readingFrom: path)
          _ = file.info
          race.outcome.withLock { $0.opened += 1 }
        } catch {
          race.outcome.withLock {
            if error.reason.contains("not a regular file") { $0.refused += 1 } else { $0.other.append(error.reason) }
          }
        }
      }
      done.signal()
    }
    let finished = done.wait(timeout: .now() + 30) == .success
    if !finished {
      // Unblock the opener stuck in open() (a writer arriving lets it go) before failing.
      let fd = open(fifo, O_WRONLY | O_NONBLOCK)
      if fd >= 0 { close(fd) }
    }
    #expect(finished, "an open of the swapped path blocked")
    let result = race.outcome.withLock { $0 }
    #expect(result.opened + result.refused == Self.attempts, "unexpected errors: \(Set(result.other))")
    #expect(result.opened > 0 && result.refused > 0, "the swap was not exercised: \(result)")
  }
}

final class RaceState: Sendable {
  let stop = Atomic<Bool>(false)
  let outcome = Mutex<(opened: Int, refused: Int, other: [String])>((0, 0, []))
}
