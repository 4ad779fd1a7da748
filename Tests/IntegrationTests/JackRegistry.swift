import Foundation

/// jackd2 keeps a machine-wide table of 8 running servers in /dev/shm/jack-shm-registry. A server
/// that dies without unregistering (kill -9, or a SIGKILL after a hung SIGTERM) keeps its entry,
/// and jackd only reuses an entry of the same name: after eight such servers with distinct names
/// (these tests name every server uniquely), every new jackd fails with "Too many servers
/// already active". Before starting a server, the harness frees the entries whose process is gone.
///
/// The layout is jackd2's `jack_shm_header_t` (shm.h, 1.9.x): magic "JACK" (bytes "KCAJ" read
/// little-endian), then five 32-bit fields, then `server[8]` of { pid_t pid; char name[257]; }
/// padded to 264 bytes. A free entry has pid 0. Anything unexpected leaves the file alone.
enum JackRegistry {
  static let path = "/dev/shm/jack-shm-registry"
  static let firstEntry = 24
  static let entrySize = 264
  static let servers = 8

  /// Frees entries of servers that no longer run; returns the names freed.
  @discardableResult
  static func reclaimDeadEntries() -> [String] {
    let fd = open(path, O_RDWR | O_NOFOLLOW)
    guard fd >= 0 else { return [] }
    defer { close(fd) }
    let length = firstEntry + entrySize * servers
    guard let map = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), map != MAP_FAILED else { return [] }
    defer { munmap(map, length) }
    let bytes = map.assumingMemoryBound(to: UInt8.self)
    guard bytes[0] == 0x4B, bytes[1] == 0x43, bytes[2] == 0x41, bytes[3] == 0x4A else { return [] }  // "KCAJ"
    var freed: [String] = []
    for i in 0..<servers {
      let entry = map + firstEntry + entrySize * i
      let pid = entry.loadUnaligned(as: Int32.self)
      let nameBytes = UnsafeBufferPointer(start: bytes + firstEntry + entrySize * i + 4, count: entrySize - 4)
      let named = nameBytes[0] != 0
      // A dead server's entry, or a pid-0 entry that still has a name. The whole entry is
      // cleared, as jackd clears one it reclaims: with only the pid zeroed, a server starting
      // under that name finds its name, checks `kill(0, 0)` (the caller's own process group,
      // which always succeeds) and refuses with "server already active".
      let dead = pid > 0 && kill(pid_t(pid), 0) != 0 && errno == ESRCH
      guard dead || (pid == 0 && named) else { continue }
      freed.append(String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self))
      entry.initializeMemory(as: UInt8.self, repeating: 0, count: entrySize)
    }
    return freed
  }
}

/// jackd2's metadata database (/dev/shm/jack_db-UID): one Berkeley DB environment for every JACK
/// server and program of the user, without deadlock detection or recovery. A process killed while
/// it held one of its locks (these tests kill stemdeck and jackd on purpose) leaves that lock held
/// for good, and every later metadata call that needs it waits forever: jackd in its cleanup when
/// a client leaves, `jack_property`, `jack_wait`'s server (a CI run, 2026-12-03, hung that way).
/// A jackd that exits cleanly removes the environment's files itself; the harness does the same
/// before a server starts while no JACK server of the user runs (nobody has them open then), so
/// a lock left behind cannot outlive the test that left it.
enum JackMetadataStore {
  static var directory: String { "/dev/shm/jack_db-\(getuid())" }
  static let files = ["metadata.db", "__db.001", "__db.002", "__db.003"]

  /// Removes the environment's files when no jackd of this user runs; returns whether it did.
  @discardableResult
  static func resetIfUnused() -> Bool {
    guard !anyJackdRunning() else { return false }
    for file in files { unlink("\(directory)/\(file)") }
    return true
  }

  /// Whether a process of this user named jackd runs (`/proc/PID/comm` and its owner).
  static func anyJackdRunning() -> Bool {
    let uid = getuid()
    for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] where Int32(entry) != nil {
      var info = stat()
      guard stat("/proc/\(entry)", &info) == 0, info.st_uid == uid,
        let comm = try? String(contentsOfFile: "/proc/\(entry)/comm", encoding: .utf8),
        comm.trimmingCharacters(in: .whitespacesAndNewlines) == "jackd",
        let status = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
        !status.contains(") Z ")
      else { continue }
      return true
    }
    return false
  }
}
