import Foundation
import StemdeckAudioFile
import StemdeckText
import Synchronization
import Testing

/// The disk workers carry the names docs/architecture.md's *Threads* table gives them where the
/// system shows them (top -H, perf, /proc): Foundation's `Thread.name` alone did not reach it.
@Suite struct ThreadNameTests {
  /// The system names of this process's threads.
  static func names() -> [String] {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.compactMap { try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8) }
      .map { $0.trimmingCharacters(in: .newlines) }
  }

  @Test("disk workers are named stemdeck-disk-N for the system while they run, and gone after stop")
  func diskWorkers() throws {
    let disk = DiskStreamer(workers: 2)
    disk.start()
    let expected = ["stemdeck-disk-0", "stemdeck-disk-1"]
    // A worker names itself first thing; wait for both (bounded: a started thread runs soon).
    let deadline = Date().addingTimeInterval(10)
    while !expected.allSatisfy(Self.names().contains), Date() < deadline { usleep(1000) }
    #expect(expected.allSatisfy(Self.names().contains), "threads: \(Self.names())")
    disk.stop()
    // stop returns once each worker has left its loop; the thread itself ends right after.
    let gone = Date().addingTimeInterval(10)
    while Self.names().contains(where: { $0.hasPrefix("stemdeck-disk") }), Date() < gone { usleep(1000) }
    #expect(!Self.names().contains { $0.hasPrefix("stemdeck-disk") }, "after stop: \(Self.names())")
  }

  @Test("a name is cut to the 15 bytes Linux keeps")
  func longName() throws {
    let seen = Mutex("")
    let done = DispatchSemaphore(value: 0)
    let t = Thread {
      nameCurrentThread("stemdeck-a-name-longer-than-fifteen")
      let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
      seen.withLock { $0 = comm }
      done.signal()
    }
    t.start()
    done.wait()
    #expect(seen.withLock { $0 } == "stemdeck-a-name\n")
  }
}
