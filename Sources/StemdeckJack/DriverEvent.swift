/// What `JackDriver.poll()` reports, with its values as fields. Only a front end turns them into words (the console's `EventText.swift`).
public enum DriverEvent: Sendable, Equatable {
  /// The server died; the session is kept and a reconnect is tried every `retryMilliseconds`.
  case serverWentAway(server: String, retryMilliseconds: Int)
  /// JACK reported `new` more xruns since the last report, `total` in all.
  case xruns(new: Int, total: Int)
  /// Following JACK transport: it started (`playing`) or stopped, and stemdeck followed.
  case transportFollowed(playing: Bool)
  /// The master outputs lost their last connection (a fact, not yet a decision: the
  /// `LiveSession`'s auto-pause policy acts on it and reports `autoPaused`, or nothing).
  case masterDisconnected
  /// The master outputs lost their last connection while playing, and playback paused
  /// (`autoPauseOnDisconnect`; reported by the `LiveSession`, not the driver).
  case autoPaused
  /// The server came back at another sample rate and the engine was rebuilt at it.
  case sampleRateFollowed(newRate: Int, oldRate: Int)
  /// A warning of the engine rebuild (`Mixer.copy(atSampleRate:warnings:)`).
  case rebuildWarning(String)
  /// The engine could not be rebuilt at the server's new rate; it is tried again later.
  case rebuildFailed(newRate: Int, reason: String)
  /// A server was found again but the client could not be set up on it.
  case reconnectFailed(reason: String)
  /// Reconnected; `restoredConnections` intended connections are being made again.
  case reconnected(server: String, sampleRate: Int, bufferSize: Int, restoredConnections: Int)
  /// Playback was running when the server went away, and runs again.
  case resumingPlayback
  /// A request to the server got no reply within `seconds` (ServerCalls.swift): the server is
  /// stopped or stuck. The session is kept; requests are refused until it answers.
  case serverNotAnswering(server: String, seconds: Int)
  /// The server answers again after `serverNotAnswering`.
  case serverAnswersAgain(server: String)
  /// JACK refused to register `ports` (`reason`); not tried again while they stay wanted.
  case portsRefused(ports: [String], reason: String)
}
