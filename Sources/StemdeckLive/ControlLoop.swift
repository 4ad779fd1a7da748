import Foundation
import StemdeckJack

/// Where the control loop waits (docs/architecture.md, *The control loop*): one poll(2) on every
/// descriptor that can bring work — standard input (script mode, the prompt), the control
/// socket's listening socket and clients, the OSC socket, the session manager's socket — and a
/// wake-up pipe that other threads and the signal handlers write to (`wakeControlLoop`: JACK's
/// notifications). A request on a socket is served the moment it arrives, not on the loop's next
/// tick. The tick (`timeout`) remains for what no descriptor announces: the renderer's events
/// (the realtime thread makes no syscalls), autosave, meter pushes.
///
/// Control thread only; one loop per process (it publishes its pipe in `ControlWakeup`).
public final class ControlLoop {
  /// What a front end asks the loop to watch: descriptors with their poll events, whether it has
  /// work waiting already (a request line read but not yet run: the wait then returns at once),
  /// and when it next has something due (a meter push).
  public struct Interest {
    package var descriptors: [pollfd] = []
    public var workPending = false
    public var due: Date?

    public mutating func watch(_ fd: Int32, read: Bool = true, write: Bool = false) {
      guard fd >= 0, read || write else { return }
      descriptors.append(pollfd(fd: fd, events: Int16(read ? POLLIN : 0) | Int16(write ? POLLOUT : 0), revents: 0))
    }

    public mutating func due(_ date: Date) { due = min(due ?? date, date) }
  }

  /// The wake-up pipe (non-blocking, close-on-exec): the loop waits on its read end; its write end
  /// is `ControlWakeup.descriptor`.
  package let wakeFD: Int32
  private let wakeWriteFD: Int32
  /// The front ends' interests, asked before every wait (ControlServer, OSCServer, NSMClient).
  public var sources: [(inout Interest) -> Void] = []
  /// Waits that returned because a descriptor (not the tick) woke them (tests, latency notes).
  public private(set) var wakes = 0

  public init() {
    var ends: [Int32] = [-1, -1]
    if pipe(&ends) == 0 {
      for fd in ends {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
      }
    }
    wakeFD = ends[0]
    wakeWriteFD = ends[1]
    if wakeWriteFD >= 0 { ControlWakeup.descriptor.store(wakeWriteFD, ordering: .relaxed) }
  }

  deinit {
    if wakeFD >= 0 {
      _ = ControlWakeup.descriptor.compareExchange(expected: wakeWriteFD, desired: -1, ordering: .relaxed)
      close(wakeWriteFD)
      close(wakeFD)
    }
  }

  /// Blocks until a watched descriptor is ready, the loop is woken, a source's due time comes, or
  /// `timeout` seconds pass (interrupted by a signal: returns at once). `input`: a descriptor of
  /// the caller's own (standard input) to watch too; the result is its `revents` (0: not ready).
  @discardableResult
  public func wait(timeout: Double, input: Int32? = nil) -> Int16 {
    var interest = Interest()
    for source in sources { source(&interest) }
    var fds: [pollfd] = []
    if let input { fds.append(pollfd(fd: input, events: Int16(POLLIN), revents: 0)) }
    if wakeFD >= 0 { fds.append(pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)) }
    fds += interest.descriptors
    var seconds = interest.workPending ? 0 : max(0, timeout)
    if let due = interest.due { seconds = min(seconds, max(0, due.timeIntervalSinceNow)) }
    let milliseconds = Int32((seconds * 1000).rounded(.up))
    let ready = fds.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), milliseconds) }
    guard ready > 0 else { return 0 }
    wakes += 1
    if wakeFD >= 0, let i = fds.firstIndex(where: { $0.fd == wakeFD }), fds[i].revents != 0 {
      var drain = [UInt8](repeating: 0, count: 256)
      while drain.withUnsafeMutableBytes({ read(wakeFD, $0.baseAddress, $0.count) }) == 256 {}  // non-blocking
    }
    return input == nil ? 0 : fds[0].revents
  }
}

extension Console {
  /// Waits up to `seconds` for work (the control loop's poll when there is one; else a sleep).
  package func pauseForWork(_ seconds: Double) {
    if let loop { loop.wait(timeout: seconds) } else { usleep(useconds_t(max(0, seconds) * 1_000_000)) }
  }
}

/// Standard input read line by line from the control loop (script mode): the loop polls it with
/// the sockets, so a line and a socket request are each served the moment they arrive. One
/// read(2) per readiness, never blocking (the descriptor's mode is left as it is: it may be
/// shared with the parent).
package final class InputLines {
  private var buffer: [UInt8] = []
  private var ended = false
  package let fd: Int32

  package init(fd: Int32 = 0) { self.fd = fd }

  package enum Item { case line(String), end, none }

  /// The next complete line if one is buffered, `.end` at end of input, else waits (up to
  /// `seconds`, woken by the loop's other descriptors too) and reads once: `.none` if no line yet.
  package func next(_ loop: ControlLoop, waitingUpTo seconds: Double) -> Item {
    if let line = takeLine() { return .line(line) }
    if ended { return .end }
    let revents = loop.wait(timeout: seconds, input: fd)
    if revents != 0 {
      var chunk = [UInt8](repeating: 0, count: 64 * 1024)
      let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      if n > 0 { buffer += chunk[..<n] } else if n == 0 || (errno != EINTR && errno != EAGAIN) { ended = true }
    }
    if let line = takeLine() { return .line(line) }
    if ended {
      // The last line without its newline.
      guard !buffer.isEmpty else { return .end }
      let rest = buffer
      buffer = []
      return .line(Self.text(rest[...]))
    }
    return .none
  }

  private func takeLine() -> String? {
    guard let newline = buffer.firstIndex(of: 10) else { return nil }
    let line = Self.text(buffer[..<newline])
    buffer.removeSubrange(...newline)
    return line
  }

  /// A line's text as `readLine` gives it: without "\r\n" or "\n", invalid UTF-8 repaired.
  package static func text(_ bytes: ArraySlice<UInt8>) -> String {
    var bytes = bytes
    if bytes.last == 13 { bytes = bytes.dropLast() }
    return String(decoding: bytes, as: UTF8.self)
  }
}
