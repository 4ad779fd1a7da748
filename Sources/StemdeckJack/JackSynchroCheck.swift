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
// stale entry shows in /proc/self/maps as that file `(deleted)`. A fresh open clears the table
// when the process has no other client (libjack frees it with the last client).

enum JackSynchroCheck {
  /// The futex files of `server` this process still maps although the server removed them.
  static func staleFutexes(server: String) -> [String] {
    guard let maps = fopen("/proc/self/maps", "r") else { return [] }
    defer { fclose(maps) }
    var stale: [String] = []
    var line: UnsafeMutablePointer<CChar>?
    var capacity = 0
    defer { free(line) }
    while getline(&line, &capacity, maps) > 0, let line {
      let text = String(cString: line)
      guard text.contains("/dev/shm/jack_sem."), text.contains("_\(server)_"), text.hasSuffix(" (deleted)\n") else { continue }
      if let path = text.split(separator: " ", omittingEmptySubsequences: true).first(where: { $0.hasPrefix("/dev/shm/") }) {
        stale.append(String(path))
      }
    }
    return stale
  }

  /// One request to the server and back: every client close it handled before is complete.
  static func roundTrip(_ client: OpaquePointer) {
    if let uuid = jack_get_uuid_for_client_name(client, jack_get_client_name(client)) { jack_free(uuid) }
  }
}
