import Dispatch
import Foundation
import Synchronization

/// Requests to a JACK server that can never freeze stemdeck (docs/architecture.md, *A server
/// that does not answer*).
///
/// libjack waits for the server's reply to every request (opening a client, registering a port,
/// connecting, activating, closing) without a deadline, on the calling thread. A jackd that stops
/// answering (stopped with SIGSTOP, or its request thread stuck: a benchmark run saw one waiting
/// on a futex after a heavy window, `jack_lsp` hung too) left every later stemdeck hanging in
/// `jack_client_open` with no word, deaf even to SIGTERM. So, as `PortMetadata` does for the
/// metadata database:
///
/// - each request of a client runs on that client's request thread and is waited for `bound`
///   seconds at most; one that does not answer marks the server as not answering for this client:
///   later requests are refused at once (nil: libjack's channel takes one request at a time, and
///   that one is still inside it) until the late one returns (the server was resumed, or died and
///   closed its socket): then it answers again;
/// - an open runs on a thread of its own, waited for `bound` seconds. libjack opens one client at
///   a time per process (a lock held for the whole open), so while an open that did not answer is
///   still inside libjack every later open is refused at once; when it returns at last, a client it
///   made is closed there.
final class ServerCalls: @unchecked Sendable {
  /// Seconds a request or an open may take before the server counts as not answering (a request
  /// takes milliseconds; activating waits for a cycle or two of the server's).
  static let bound: Double = 5

  private let queue = DispatchQueue(label: "stemdeck-jack-requests")
  /// Set while a request that did not answer within `bound` is still inside libjack (written by
  /// the caller that gave up and by the request thread when it returns; read by callers).
  private let waiting = Atomic<Bool>(false)

  /// False while a request that did not answer is still waiting for the server.
  var answers: Bool { !waiting.load(ordering: .acquiring) }

  /// Runs `body` (one request) on the request thread, then `finish` there, and waits for it
  /// `bound` seconds at most. nil when it did not answer in time (it goes on waiting alone) or
  /// an earlier one still waits.
  func call<T>(_ body: @escaping () -> T, then finish: @escaping @Sendable () -> Void) -> T? {
    guard answers else {
      finish()
      return nil
    }
    let call = PendingCall<T>()
    let work = Unchecked(body)
    queue.async { [self] in
      call.value = work.value()
      finish()
      if call.state.exchange(CallState.finished, ordering: .acquiringAndReleasing) == CallState.abandoned {
        waiting.store(false, ordering: .releasing)
      }
      call.done.signal()
    }
    if call.done.wait(timeout: .now() + Self.bound) == .success { return call.value }
    waiting.store(true, ordering: .releasing)
    if call.abandon() { return nil }
    // It returned meanwhile.
    waiting.store(false, ordering: .releasing)
    call.done.wait()
    return call.value
  }

  /// Set while an open that did not answer is still inside libjack (process-wide: libjack's
  /// open lock is).
  private static let openWaiting = Atomic<Bool>(false)

  /// Runs `body` (an open of a client on `server`) on a thread of its own and waits for it
  /// `bound` seconds at most. One that does not answer throws `JackError.notAnswering`, and
  /// `orphan` gets the client it makes if it ever returns one.
  static func open<T>(
    server: String, _ body: @escaping () throws(JackError) -> T, orphan: @escaping (T) -> Void
  ) throws(JackError) -> T {
    guard !openWaiting.load(ordering: .acquiring) else {
      throw JackError.notAnswering(server: server, call: "jack_client_open", earlierOpen: true)
    }
    let call = PendingCall<Result<T, JackError>>()
    let work = Unchecked(body)
    let drop = Unchecked(orphan)
    let thread = Thread {
      let result = Result { () throws(JackError) in try work.value() }
      call.value = result
      if call.state.exchange(CallState.finished, ordering: .acquiringAndReleasing) == CallState.abandoned {
        if case .success(let client) = result { drop.value(client) }
        openWaiting.store(false, ordering: .releasing)
      }
      call.done.signal()
    }
    thread.name = "stemdeck-open"
    thread.start()
    if call.done.wait(timeout: .now() + bound) != .success {
      openWaiting.store(true, ordering: .releasing)
      if call.abandon() { throw JackError.notAnswering(server: server, call: "jack_client_open", earlierOpen: false) }
      openWaiting.store(false, ordering: .releasing)
      call.done.wait()
    }
    guard let result = call.value else { throw JackError.notAnswering(server: server, call: "jack_client_open", earlierOpen: false) }
    return try result.get()
  }
}

/// One call handed to another thread: its result, and whether its caller still waits for it.
final class PendingCall<T>: @unchecked Sendable {
  let state = Atomic<Int>(CallState.running)
  let done = DispatchSemaphore(value: 0)
  /// Written by the thread that runs the call before `state` leaves `running`; read by the caller
  /// after `done`.
  var value: T?

  /// Gives the call up (its caller no longer waits); false if it finished (or, for a call that
  /// has to `enter`, began) meanwhile.
  func abandon() -> Bool {
    state.compareExchange(expected: CallState.running, desired: CallState.abandoned, ordering: .acquiringAndReleasing).exchanged
  }

  /// Marks the call as begun, for a call that waits for its turn first; false if its caller gave
  /// it up meanwhile (then it must not run: what it would use may be gone).
  func enter() -> Bool {
    state.compareExchange(expected: CallState.running, desired: CallState.entered, ordering: .acquiringAndReleasing).exchanged
  }
}

/// The states of a `PendingCall`.
enum CallState {
  static let running = 0
  static let entered = 1
  static let finished = 2
  static let abandoned = 3
}
