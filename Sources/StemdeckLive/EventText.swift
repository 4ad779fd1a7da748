import StemdeckControl
import StemdeckJack
import StemdeckSession
import StemdeckText

// The console's words for the live session's events (`DriverEvent`, `LiveEvent`): the driver
// and the mixer report values; what the user reads is written here, and only here.

extension DriverEvent {
  /// The line shown for the event (after "event: " in script mode, "* " at the prompt); nil for
  /// a fact the live session acts on (`masterDisconnected`: its auto-pause policy).
  public var text: String? {
    switch self {
    case .masterDisconnected: return nil
    case .serverWentAway(let server, let retry):
      return "JACK server '\(server)' went away; keeping the session and retrying every \(retry) ms"
    case .xruns(let new, let total): return "xrun: JACK reported \(new) more (\(total) in total)"
    case .transportFollowed(let playing):
      return playing ? "JACK transport started: playing (following JACK)" : "JACK transport stopped: paused (following JACK)"
    case .autoPaused: return "paused: the master outputs lost their last connection (autoPauseOnDisconnect is on)"
    case .sampleRateFollowed(let newRate, let oldRate):
      return "the JACK server now runs at \(newRate) Hz (was \(oldRate) Hz); the engine follows"
    case .rebuildWarning(let warning): return warning
    case .rebuildFailed(let newRate, let reason):
      return "cannot follow the server's new sample rate \(newRate) Hz: \(reason); retrying"
    case .reconnectFailed(let reason): return "reconnect failed: \(reason)"
    case .reconnected(let server, let rate, let frames, let restored):
      return
        "reconnected to JACK server '\(server)' (\(rate) Hz, \(frames) frames); restored \(restored) connection\(restored == 1 ? "" : "s")"
    case .resumingPlayback: return "resuming playback"
    case .serverNotAnswering(let server, let seconds):
      return "JACK server '\(server)' does not answer (a request got no reply within \(seconds) s: the server is "
        + "stopped or stuck); keeping the session, JACK commands are refused until it answers or is restarted"
    case .serverAnswersAgain(let server): return "JACK server '\(server)' answers again"
    case .portsRefused(let ports, let reason):
      return "JACK refused the ports \(ports.map { printableText($0) }.joined(separator: ", ")): \(printableText(reason)); not tried again"
    }
  }
}

extension LiveEvent {
  /// The line shown for the event; nil for one the console acts on without a line of its own
  /// (`songEnded`: the setlist's advance writes its own lines).
  public var text: String? {
    switch self {
    case .mixer(let event): return event.text
    case .driver(let event): return event.text
    case .songEnded: return nil
    }
  }
}

extension SessionError {
  /// The error as the user should read it: the file named as they gave it (`shown`, e.g. a
  /// relative path) rather than as it was opened (`opened`, absolute). The path is a field of
  /// the error, so nothing is patched into its text.
  package func naming(_ shown: String, for opened: String) -> SessionError {
    var error = self
    if error.file == opened { error.file = shown }
    return error
  }
}
