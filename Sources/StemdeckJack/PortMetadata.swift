import CJack
import Dispatch
import Glibc
import Synchronization

/// Port metadata calls that can never hang stemdeck (docs/architecture.md, "Port metadata").
///
/// jack2 keeps properties in one Berkeley DB per user (`/dev/shm/jack_db-UID`), shared by every
/// JACK program and server of the user, opened without deadlock detection or recovery: a program
/// killed while inside a metadata call keeps its lock for good, and every later call that needs
/// that lock waits forever (a CI run, 2026-12-03: stemdeck stuck at start in `jack_set_property`,
/// Berkeley DB's `__ham_lock_bucket`; every later server hung too, in its own cleanup). So:
///
/// - each call runs on a thread of its own and is waited for `bound` seconds at most; the first
///   one that does not answer is said once on stderr and the rest are skipped: stemdeck plays on
///   without pretty names;
/// - only keyed operations and read-only listings, one lock at a time, never libjack's
///   `jack_remove_properties` (a scan that deletes under its cursor: two of those in two
///   processes wait for each other forever, and a process killed during one leaves locks held);
/// - a metadata call ends with a request to the server (libjack's property-change notice) on the
///   client's channel, which is not safe for two threads at once: every other request of the
///   client passes `gate` too (`JackClient.request`), waiting only while metadata answers.
final class PortMetadata: @unchecked Sendable {
  /// Seconds a metadata call may take before the database counts as stuck (a put or a delete
  /// takes microseconds; a listing of a few thousand properties a few milliseconds).
  static let bound: Double = 3

  private let queue = DispatchQueue(label: "stemdeck-metadata")
  private let gate = DispatchSemaphore(value: 1)
  /// Process-wide: a lock nobody gives back stays held, and a client opened again after the
  /// server came back would wait on it once more.
  private static let stuck = Atomic<Bool>(false)

  /// False once a call did not answer within `bound`: every later one is skipped, for every
  /// client of the process.
  var isAnswering: Bool { !Self.stuck.load(ordering: .acquiring) }

  /// Runs `body` (metadata calls) on the metadata thread and waits for it, `bound` seconds at
  /// most. Returns whether it ran to its end; false when the database does not answer (now or
  /// before).
  @discardableResult
  func run(_ body: @escaping @Sendable () -> Void) -> Bool {
    // A metadata call ends with a request: with a server that does not answer it would hang
    // there, and the database would be blamed.
    guard isAnswering, server.answers else { return false }
    let call = PendingCall<Void>()
    queue.async { [gate] in
      gate.wait()
      if call.enter() { body() }
      gate.signal()
      call.done.signal()
    }
    if call.done.wait(timeout: .now() + Self.bound) == .success { return true }
    // Given up still at the gate: a request holds it (the server does not answer), not the
    // database; it will not run.
    guard !call.abandon(), server.answers else { return false }
    if !Self.stuck.exchange(true, ordering: .acquiringAndReleasing) { Self.sayStuck() }
    return false
  }

  /// Runs `body` (a request to the server) never beside a metadata call, on the request thread,
  /// and waits for it `ServerCalls.bound` seconds at most (ServerCalls.swift): nil when the server
  /// does not answer (now, or a request before this one is still waiting for it). It waits for
  /// the metadata thread while the database answers; once stuck it goes on without waiting (that
  /// thread waits on a lock nobody will give back).
  func request<T>(_ body: @escaping () -> T) -> T? {
    guard server.answers else { return nil }
    let passed = isAnswering ? gate.wait(timeout: .now() + Self.bound) == .success : gate.wait(timeout: .now()) == .success
    return server.call(body) { [gate] in if passed { gate.signal() } }
  }

  /// Requests to the server, bounded (ServerCalls.swift).
  let server = ServerCalls()

  /// Runs `body` only when no metadata call is inside libjack (waiting for one `bound` seconds
  /// at most while the database answers): for `jack_client_close`, which must not free the
  /// client under a call that may still wake up. Returns whether it ran.
  func whenQuiet(_ body: () -> Void) -> Bool {
    let passed = gate.wait(timeout: .now() + (isAnswering ? Self.bound : 0)) == .success
    guard passed else { return false }
    body()
    gate.signal()
    return true
  }

  private static func sayStuck() {
    let text =
      "stemdeck: JACK's metadata database (/dev/shm/jack_db-\(getuid())) did not answer within "
      + "\(Int(bound)) s: a JACK program killed during a metadata call left it locked. Going on "
      + "without port pretty names; to have them back, stop every JACK server and program and "
      + "remove that directory\n"
    _ = text.withCString { write(STDERR_FILENO, $0, strlen($0)) }
  }

  // MARK: - The calls (on the metadata thread)

  /// Makes `uuid`'s properties a new port's own: removes whatever a port of a dead server or
  /// killed client left under that UUID (a new server hands the same UUIDs out again), then
  /// sets the pretty name, if any. The corresponding C functions are `jack_get_properties`,
  /// `jack_remove_property` and `jack_set_property`.
  static func claim(_ handle: OpaquePointer, _ uuid: jack_uuid_t, prettyName: String?) {
    let key = String(cString: stemdeck_pretty_name_key())
    for stale in keys(of: uuid) where !(prettyName != nil && stale == key) {
      jack_remove_property(handle, uuid, stale)
    }
    if let prettyName { jack_set_property(handle, uuid, key, prettyName, "text/plain") }
  }

  /// Removes the pretty name of `uuid` if it has one, and only that (a keyed delete).
  static func removePrettyName(_ handle: OpaquePointer, _ uuid: jack_uuid_t) {
    guard prettyName(of: uuid) != nil else { return }
    jack_remove_property(handle, uuid, stemdeck_pretty_name_key())
  }

  /// The pretty name stored for `uuid`, if any. The corresponding C function is
  /// `jack_get_property`.
  static func prettyName(of uuid: jack_uuid_t) -> String? {
    var value: UnsafeMutablePointer<CChar>?
    var type: UnsafeMutablePointer<CChar>?
    guard jack_get_property(uuid, stemdeck_pretty_name_key(), &value, &type) == 0 else { return nil }
    defer {
      if let value { jack_free(value) }
      if let type { jack_free(type) }
    }
    return value.map { String(cString: $0) }
  }

  /// The keys stored for `uuid` (a read-only listing). The corresponding C functions are
  /// `jack_get_properties` and `jack_free_description`.
  static func keys(of uuid: jack_uuid_t) -> [String] {
    var description = jack_description_t()
    guard jack_get_properties(uuid, &description) > 0, let properties = description.properties else { return [] }
    defer { jack_free_description(&description, 0) }
    return (0..<Int(description.property_cnt)).compactMap { i in properties[i].key.map { String(cString: $0) } }
  }
}

/// A value handed to the metadata thread that Swift cannot prove sendable (a client handle:
/// libjack's metadata calls may run on any thread; `PortMetadata` keeps them one at a time).
struct Unchecked<Value>: @unchecked Sendable {
  let value: Value
  init(_ value: Value) { self.value = value }
}
