import CJack
import Glibc
import Synchronization

/// libjack's own messages ("Cannot connect to server socket…", printed for every failed
/// `jack_client_open`, e.g. ten times while a server stemdeck started comes up) go through
/// `jack_set_error_function` / `jack_set_info_function`: dropped by default, written to stderr
/// with `--verbose`. stemdeck reports what matters itself, in its own words.
public enum JackMessages {
  static let verbose = Atomic<Bool>(false)

  /// Installs the handlers. Call before the first `jack_client_open`.
  /// The corresponding C functions are `jack_set_error_function` and `jack_set_info_function`.
  public static func install(verbose: Bool) {
    Self.verbose.store(verbose, ordering: .relaxed)
    jack_set_error_function(jackMessageHandler)
    jack_set_info_function(jackMessageHandler)
  }
}

/// Called by libjack (on any of its threads) with one message.
private func jackMessageHandler(_ message: UnsafePointer<CChar>?) {
  guard JackMessages.verbose.load(ordering: .relaxed), let message else { return }
  let length = strlen(message)
  var line = [UInt8](repeating: 0, count: length + 7)
  line.replaceSubrange(0..<6, with: Array("jack: ".utf8))
  memcpy(&line[6], message, length)
  line[length + 6] = 10
  var offset = 0
  while offset < line.count {
    let n = line.withUnsafeBytes { write(2, $0.baseAddress! + offset, $0.count - offset) }
    if n < 0 && errno == EINTR { continue }
    if n <= 0 { return }
    offset += n
  }
}
