import Foundation
import Synchronization

/// Output through write(2), never `FileHandle.write(Data)` (which traps on EIO and EPIPE: a
/// closed terminal or a reader that went away would crash stemdeck).
///
/// A write that fails for good (EIO: the terminal is gone; EPIPE: the reader closed the pipe;
/// ENXIO, EBADF) is remembered in `lost`; the interactive loop then ends cleanly (autosave,
/// stop a take, stop the JACK server stemdeck started) and script mode stops the script.
///
/// - Thread: any. `lost` is an atomic; each call is one or more write(2) calls.
package enum Output {
  /// The first file descriptor whose write failed for good (-1: none).
  package static let lostDescriptor = Atomic<Int32>(-1)

  package static var stdoutLost: Bool { lostDescriptor.load(ordering: .relaxed) == 1 }

  /// Writes all of `text` to `fd`, retrying after EINTR and short writes, and waiting (up to a
  /// second in all) while a non-blocking descriptor is full. Returns false if it could not.
  @discardableResult
  package static func write(_ text: String, to fd: Int32 = 1) -> Bool {
    var bytes = Array(text.utf8)
    if bytes.isEmpty { return true }
    var offset = 0
    var waits = 0
    while offset < bytes.count {
      let n = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
      if n > 0 { offset += n; continue }
      let e = n < 0 ? errno : EIO
      if e == EINTR { continue }
      if (e == EAGAIN || e == EWOULDBLOCK) && waits < 100 {
        waits += 1
        var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        _ = poll(&p, 1, 10)
        continue
      }
      if lostDescriptor.compareExchange(expected: -1, desired: fd, ordering: .relaxed).exchanged && fd == 1 {
        // Like a signal: a `wait` ends, and the loops see `stdoutLost`.
        interruptRequests.add(1, ordering: .relaxed)
      }
      return false
    }
    return true
  }
}

/// The terminal: locale, size and the display width of text.
package enum TerminalInfo {
  /// Sets the character type locale from the environment (LANG, LC_ALL, LC_CTYPE), falling back
  /// to C.UTF-8 when that is not a UTF-8 locale, so that libedit reads and shows UTF-8 input
  /// (with the "C" locale it drops every non-ASCII character). Only LC_CTYPE: number formats
  /// stay those of the C locale. Call before libedit starts.
  package static func setUTF8Locale() {
    if setlocale(LC_CTYPE, "") == nil || !isUTF8() {
      if setlocale(LC_CTYPE, "C.UTF-8") == nil { _ = setlocale(LC_CTYPE, "C.utf8") }
    }
  }

  package static func isUTF8() -> Bool {
    guard let codeset = nl_langinfo(nl_item(CODESET)) else { return false }
    let name = String(cString: codeset).uppercased()
    return name == "UTF-8" || name == "UTF8"
  }

  /// The terminal's size (columns, rows) on `fd`, or nil when it is not a terminal.
  package static func size(_ fd: Int32 = 1) -> (columns: Int, rows: Int)? {
    var w = winsize()
    guard ioctl(fd, UInt(TIOCGWINSZ), &w) == 0, w.ws_col > 0 else { return nil }
    return (Int(w.ws_col), Int(w.ws_row))
  }

  /// Columns of the terminal on stdout, else $COLUMNS, else 80.
  package static func columns() -> Int {
    if let s = size(1) ?? size(0) { return s.columns }
    if let c = ProcessInfo.processInfo.environment["COLUMNS"].flatMap({ Int($0) }), c > 0 { return c }
    return 80
  }

  /// Turns the terminal's echo and line editing off (signals stay on) so that keys typed while
  /// a command runs wait, unechoed and unchanged, for the line editor. Returns the settings to
  /// put back (nil: not a terminal). TCSANOW: nothing typed is thrown away.
  package static func holdTypeahead(_ fd: Int32) -> termios? {
    var saved = termios()
    guard tcgetattr(fd, &saved) == 0 else { return nil }
    var quiet = saved
    quiet.c_lflag &= ~tcflag_t(ICANON | ECHO)
    withUnsafeMutableBytes(of: &quiet.c_cc) { cc in
      cc[Int(VMIN)] = 1
      cc[Int(VTIME)] = 0
    }
    tcsetattr(fd, TCSANOW, &quiet)
    return saved
  }

  /// Whether the terminal on `fd` has hung up (its other end closed), without reading from it.
  package static func hungUp(_ fd: Int32) -> Bool {
    var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    guard poll(&p, 1, 0) > 0 else { return false }
    if p.revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 { return true }
    var waiting: Int32 = 0
    return ioctl(fd, UInt(FIONREAD), &waiting) != 0
  }

  /// The number of terminal columns `text` takes (wide characters 2, combining marks 0).
  /// Escape sequences are not expected here.
  package static func displayWidth(_ text: some StringProtocol) -> Int {
    var width = 0
    for scalar in text.unicodeScalars {
      let w = cWcwidth(wchar_t(bitPattern: scalar.value))
      width += w < 0 ? (scalar.value < 0x20 ? 2 : 1) : Int(w)
    }
    return width
  }
}

/// Stops reading a terminal that went away: SIGTERM, SIGHUP and a hang-up end an interactive
/// session cleanly; this is the signal that asked for it (0: none yet).
package let terminationSignal = Atomic<Int32>(0)
/// Set by SIGWINCH: the terminal was resized.
package let terminalResized = Atomic<Bool>(false)

/// glibc's wcwidth(3) (wchar.h), which Swift's Glibc module leaves out; bound by its C symbol so
/// this module needs no C target of its own (the REPL's CEditLine shim wraps the same function).
@_silgen_name("wcwidth")
private func cWcwidth(_ c: wchar_t) -> Int32
