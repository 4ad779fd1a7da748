import StemdeckEngine
import StemdeckSession

// The JACK driver owns none of the application (as rust-jack's client owns none of its
// handlers' state): what it serves is a `JackHost`, the live session, which owns the mixer. The
// driver asks the host for the render state to attach, the ports wanted (`PortPlan`) and the
// transport, and hands back what JACK's transport asks of it (`TransportRequest`).
// docs/architecture.md, *JACK*.

/// What the JACK client serves: an engine to run and the ports and transport it wants.
///
/// - Thread: the control thread; the driver calls it under its own lock from `poll()`,
///   `update…()`, `resume()` and at attach, never from a JACK callback.
public protocol JackHost: AnyObject {
  /// The renderer the process callback runs, attached at every (re)connect.
  var renderState: UnsafeMutablePointer<RenderState> { get }
  /// The engine's sample rate: a server back at another rate waits for a rebuild
  /// (`JackDriver.rateAwaitingEngine`).
  var engineSampleRate: Double { get }
  /// The ports the host wants now.
  var portPlan: PortPlan { get }
  /// The transport as JACK transport sync needs it.
  var transport: HostTransport { get }
  /// JACK's transport moved while following it, or playback resumes after a reconnect.
  func follow(_ request: TransportRequest)
}

/// The ports the host wants registered, beyond `master_L/R` and `in_L/R`.
public struct PortPlan: Equatable, Sendable {
  /// Direct outs: the renderer slots writing to `NAME_L`/`NAME_R`, by strip name.
  public var directOuts: [String: Set<Int>] = [:]
  /// `sfx_L`/`sfx_R`: sound effects on their own ports.
  public var effectPorts = false
  /// `click_L`/`click_R`: the click on its own ports.
  public var clickPorts = false
  /// `cue_L`/`cue_R`: a strip is cued.
  public var cuePorts = false
  /// `midi_in`: MIDI control wanted (mappings, a learn, or `midi on`).
  public var midiIn = false
  /// `midi_out`: MIDI feedback wanted.
  public var midiOut = false
  /// The live inputs' port short names by strip index.
  public var liveInputs: [Int: [String]] = [:]
  /// The aux sends' port short names (sends, then returns) by send index.
  public var sends: [Int: [String]] = [:]
  /// The aux sends' names by index (`returnLatencies` reports by name).
  public var sendNames: [Int: String] = [:]
  /// The latency the engine adds between inputs and outputs, in frames (plugin inserts).
  public var processingLatency = 0
  /// The current song's stems (direct outs of others only carry an old song fading out).
  public var currentStems: Set<String> = []
  public init() {}
}

/// The host's transport, for JACK transport follow and lead.
public struct HostTransport: Equatable, Sendable {
  public var sync: TransportSync = .off
  public var tempo: Tempo?
  public var playing = false
  public var seconds = 0.0
  public init() {}
  public init(sync: TransportSync, tempo: Tempo?, playing: Bool, seconds: Double) {
    self.sync = sync
    self.tempo = tempo
    self.playing = playing
    self.seconds = seconds
  }
}

/// What the driver asks of the host's transport.
public enum TransportRequest: Equatable, Sendable {
  /// JACK's transport is at `seconds` (follow).
  case seek(seconds: Double)
  /// JACK's transport started (follow).
  case play
  /// JACK's transport stopped (follow).
  case pause
  /// The server is back and playback was running when it went away: play again if paused.
  case resume
}
