import Foundation
import StemdeckTestSupport
import Testing

@testable import StemdeckJack

#if canImport(Glibc)
import Glibc
#endif

/// After a server went away, no client is opened on it while its socket file is still the
/// departing server's (JackDriver+Departure.swift): jack2 hangs an open that reaches a server
/// shutting down. Checked on a real socket file where jack2 makes one, for a server name no
/// jackd uses.
@Suite struct ServerDepartureTests {
  /// A listening Unix socket at `path`, as a server's; its descriptor.
  static func listen(at path: String) throws -> Int32 {
    let fd = bindUnixSocket(at: path, listening: true)
    try #require(fd >= 0, "bind \(path): errno \(errno)")
    return fd
  }

  @Test("the departing server's socket holds opens back until it goes, is replaced, or the bound passes")
  func gate() throws {
    let name = "stemdeck-departure-\(getpid())"
    let path = ServerSocket.path(server: name)
    #expect(path == "/dev/shm/jack_\(name)_\(getuid())_0")
    #expect(ServerSocket.current(server: name) == nil)
    let old = try Self.listen(at: path)
    defer { close(old) }
    let socket = try #require(ServerSocket.current(server: name))
    let now = Date()
    let departure = ServerDeparture(socket: socket, until: now.addingTimeInterval(3))
    // The same file: held back until the bound.
    #expect(!departure.allowsOpen(current: ServerSocket.current(server: name), now: now))
    #expect(!departure.allowsOpen(current: ServerSocket.current(server: name), now: now.addingTimeInterval(2.9)))
    #expect(departure.allowsOpen(current: ServerSocket.current(server: name), now: now.addingTimeInterval(3)))
    // Gone: allowed (an open then fails at once).
    unlink(path)
    #expect(ServerSocket.current(server: name) == nil)
    #expect(departure.allowsOpen(current: ServerSocket.current(server: name), now: now))
    // A new server's socket at the same path is another file: allowed.
    let new = try Self.listen(at: path)
    defer {
      close(new)
      unlink(path)
    }
    let replaced = try #require(ServerSocket.current(server: name))
    #expect(replaced != socket)
    #expect(departure.allowsOpen(current: replaced, now: now))
  }

  @Test("a regular file where the socket would be is not a server's socket")
  func notASocket() throws {
    let name = "stemdeck-departure-file-\(getpid())"
    let path = ServerSocket.path(server: name)
    try Data().write(to: URL(fileURLWithPath: path))
    defer { unlink(path) }
    #expect(ServerSocket.current(server: name) == nil)
  }
}
