import CJack
import Foundation

// libjack's table of the other clients' wake-up futexes, and the one way it goes stale
// (docs/architecture.md, *JACK: a client opened while another closes*).
//
// Every client process keeps, per client refnum on the server, a mapping of that client's
// futex (`/dev/shm/jack_sem.UID_SERVER_CLIENT`): after its own process callback a client wakes
// the clients it feeds through it. jack2 (1.9.21 and upstream: jackaudio/jack2 issue 721) maps
// one on `kAddClient` and unmaps it on `kRemoveClient`, but ignores a `kRemoveClient` that
// arrives while `jack_client_open` is still running (the client's control block is not mapped
// yet). A client that closes during stemdeck's open (a script's `jack_wait`, a patchbay's
// `jack_lsp`, typical right after a server restart) leaves its entry behind; the next client
// given that refnum is "already connected" to the dead futex, and when stemdeck feeds it,
// stemdeck's wake-ups go to the dead one: that client is never run again. Seen as a recorder
// behind stemdeck that stopped forever after a server restart (ServerFaultTests, 3 % of
// restarts with a harness polling `jack_wait -c`).
//
// The entry is private to libjack but its mapping is not: after a request to the server (which
// handles requests one at a time, so the closing client's futex file is unlinked by then) a
// stale entry shows in /proc/self/maps as that file `(deleted)`, and stays so. A fresh open
// clears the table when the process has no other client (libjack frees it with the last one).
//
// The close before it has a hazard of its own: `jack_client_close` cancels the client's
// notification thread, and one cancelled while it handles another client's arrival or leaving
// keeps libjack's lock of this table for good: that close, and every later open in the process,
// hangs (seen in JackSynchroTests about once in 130 reopens beside five closing clients). So the
// reopen waits for a quiet moment first, and only for a futex that stays stale.

enum JackSynchroCheck {
  /// The futex files of `server` this process still maps although the server removed them.
  static func staleFutexes(server: String) -> [String] {
    futexMappings(server: server).filter { $0.hasSuffix(" (deleted)") }
  }

  /// The futex files of `server` this process maps (a removed one ends in ` (deleted)`).
  static func futexMappings(server: String) -> [String] {
    guard let maps = fopen("/proc/self/maps", "r") else { return [] }
    defer { fclose(maps) }
    var found: [String] = []
    var line: UnsafeMutablePointer<CChar>?
    var capacity = 0
    defer { free(line) }
    while getline(&line, &capacity, maps) > 0, let line {
      let text = String(cString: line)
      guard text.contains("/dev/shm/jack_sem."), text.contains("_\(server)_"),
        let start = text.range(of: "/dev/shm/")
      else { continue }
      found.append(String(text[start.lowerBound...].dropLast()))
    }
    return found
  }

  /// Whether a removed futex stays mapped: a closed client's futex is mapped for the moment
  /// between the server's unlinking it and this process handling the notice, so one seen is
  /// looked at again for up to 20 ms before it counts.
  static func staysStale(server: String) -> Bool {
    for _ in 0..<20 {
      if staleFutexes(server: server).isEmpty { return false }
      usleep(1000)
    }
    return true
  }

  /// Waits (at most 250 ms) until no client has come or gone for 10 ms, as far as this process's
  /// futex mappings show: `jack_client_close` is least likely then to cancel the notification
  /// thread while it handles one (the hang described above).
  static func waitForQuiet(server: String) {
    var last = futexMappings(server: server)
    var quiet = 0
    for _ in 0..<125 where quiet < 5 {
      usleep(2000)
      let now = futexMappings(server: server)
      quiet = now == last ? quiet + 1 : 0
      last = now
    }
  }

  /// One request to the server and back: every client close it handled before is complete.
  static func roundTrip(_ client: OpaquePointer) {
    if let uuid = jack_get_uuid_for_client_name(client, jack_get_client_name(client)) { jack_free(uuid) }
  }
}
