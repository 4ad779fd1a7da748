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
