import Foundation

#if canImport(Glibc)
import Glibc
#endif

// A server that went away may not be gone yet. jack2 tells its clients it is shutting down
// (stemdeck's "went away") before it closes its socket, and a `jack_client_open` that reaches it
// in that window never returns: the server accepts the connection and dies without answering,
// and libjack waits on it for good (measured with a C harness opening clients every 5 ms beside
// a jackd sent SIGTERM: 2 hangs in about 85 shutdowns; none while a server starts). libjack opens
// one client at a time per process, so after such a hang stemdeck could never reconnect (a CI
// run: "no reconnect" after jackd was restarted at another rate). So after a loss stemdeck
// notes the server's socket file (jack2: `/dev/shm/jack_NAME_UID_0`) and opens no client on it
// while that same file is still there, for at most `departureBound` seconds (a client the server
// dropped, the server itself still running, then reconnects after it). A new server's socket is
// a new file; a killed server's stays but refuses connections, and an open then fails at once.
// docs/architecture.md, *A server that does not answer*.

/// The identity of a server's socket file.
struct ServerSocket: Equatable {
  let device: UInt64
  let inode: UInt64

  /// Where jack2 on Linux makes server `name`'s socket for this user.
  static func path(server name: String) -> String { "/dev/shm/jack_\(name)_\(getuid())_0" }

  /// The socket file of server `name` now; nil when there is none.
  static func current(server name: String) -> ServerSocket? {
    var info = stat()
    guard stat(path(server: name), &info) == 0, (info.st_mode & S_IFMT) == S_IFSOCK else { return nil }
    return ServerSocket(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
  }
}

/// A server that went away, while its socket may still be there.
struct ServerDeparture {
  let socket: ServerSocket
  let until: Date

  /// Whether a client may be opened now that the socket file is `current`: not while it is the
  /// departing server's, until `until`.
  func allowsOpen(current: ServerSocket?, now: Date) -> Bool { now >= until || current != socket }
}

extension JackDriver {
  /// How long after a loss stemdeck waits at most for the old server's socket to go.
  static let departureBound = 3.0

  /// Notes the departing server's socket (at a loss), if there is one.
  func noteDeparture() {
    departure = ServerSocket.current(server: serverName).map {
      ServerDeparture(socket: $0, until: Date().addingTimeInterval(Self.departureBound))
    }
  }

  /// Whether a reconnect may open a client now; forgets the departure once it allows it.
  func departureAllowsOpen() -> Bool {
    guard let d = departure else { return true }
    guard d.allowsOpen(current: ServerSocket.current(server: serverName), now: Date()) else { return false }
    departure = nil
    return true
  }
}
