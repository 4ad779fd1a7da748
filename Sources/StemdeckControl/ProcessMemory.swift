import CMalloc
import Foundation

/// The process's own memory, measured from inside (the `debug heap` diagnostic, and the soak
/// test's leak check). A debugger attached from outside is not safe on every kernel, so nothing
/// measures this process from outside.
///
/// - Thread: the control thread. `measure()` calls glibc's `malloc_trim(0)`, which takes the
///   allocator's locks and can take milliseconds: never on the realtime path.
public struct ProcessMemory: Sendable, Equatable {
  /// Bytes held from the allocator after free heap pages went back to the system
  /// (glibc `mallinfo2()`: `uordblks + hblkhd`).
  public var heapInUse: Int
  /// Resident memory that is this process's own: VmRSS minus RssShmem (JACK's shared graph and
  /// port buffers are shared memory). Nil when /proc/self/status cannot be read.
  public var ownResident: Int?
  /// The anonymous part of resident memory (RssAnon): heap, thread stacks, anonymous mappings;
  /// not the binary's and libraries' pages, which grow as new code paths run for the first time.
  public var anonymousResident: Int?

  /// Trims the heap, then reads the figures.
  public static func measure() -> ProcessMemory {
    let heap = Int(stemdeck_heap_in_use_after_trim())
    let kB = statusFigures()
    let own = kB["VmRSS"].map { ($0 - (kB["RssShmem"] ?? 0)) * 1024 }
    return ProcessMemory(heapInUse: heap, ownResident: own, anonymousResident: kB["RssAnon"].map { $0 * 1024 })
  }

  /// The "NAME: N kB" lines of /proc/self/status (empty when it cannot be read).
  static func statusFigures() -> [String: Int] {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return [:] }
    var kB: [String: Int] = [:]
    for line in text.split(separator: "\n") {
      let parts = line.split(whereSeparator: { $0 == ":" || $0 == " " || $0 == "\t" })
      if parts.count == 3, parts[2] == "kB", let value = Int(parts[1]) { kB[String(parts[0])] = value }
    }
    return kB
  }
}
