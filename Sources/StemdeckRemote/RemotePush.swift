import Foundation
import StemdeckControl
import StemdeckEngine
import StemdeckJack
import StemdeckLive
import StemdeckSession

/// What the control socket and OSC push to subscribers (docs/architecture.md, *Remote control*):
/// events with their values as fields, meter frames, transport changes. Built on the control
/// thread from the `LiveEvent`s a service step reports and from the mixer's meters.
public enum RemoteTopic: String, CaseIterable, Sendable {
  case events, meters, transport
  /// The mix's settable values at their OSC addresses, pushed when they change (MixValues.swift).
  case values

  /// What a subscription naming no topic gets.
  public static let defaults: [RemoteTopic] = [.events, .meters, .transport]
}

/// A subscription's rates: meter frames per second.
public enum PushRate {
  public static let range = 1.0...60.0
  public static let meterDefault = 10.0
  /// While playing, a transport subscriber gets the position this often (and on every change).
  public static let transportInterval = 1.0
}

/// Parses a subscription list: topics, each optionally "meters@20"; `rate` applies to meters
/// without their own. Returns the topics and the meter rate, or the refusal.
package func parseTopics(_ items: [String], rate: Double?) -> (topics: Set<RemoteTopic>, meterRate: Double)? {
  var topics: Set<RemoteTopic> = []
  var meterRate = rate ?? PushRate.meterDefault
  for item in items {
    let parts = item.lowercased().split(separator: "@", maxSplits: 1).map(String.init)
    guard let first = parts.first, let topic = RemoteTopic(rawValue: first) else { return nil }
    if parts.count == 2 {
      guard topic == .meters, let r = Double(parts[1]), r.isFinite else { return nil }
      meterRate = r
    }
    topics.insert(topic)
  }
  return (topics, meterRate)
}

package enum RemotePush {
  /// An event as fields: `event` (its kind), `class` (mixer, driver, song), the values by name,
  /// and `text` (the words the console shows). nil for an event with no meaning outside.
  package static func event(_ event: LiveEvent) -> [String: Any]? {
    var o: [String: Any]
    switch event {
    case .songEnded: o = ["event": "songEnded", "class": "song"]
    case .mixer(let e): o = mixer(e)
    case .driver(let e):
      o = ["class": "driver"]
      switch e {
      case .masterDisconnected: return nil
      case .serverWentAway(let server, let retry): o["event"] = "serverWentAway"; o["server"] = server; o["retryMilliseconds"] = retry
      case .xruns(let new, let total): o["event"] = "xruns"; o["new"] = new; o["total"] = total
      case .transportFollowed(let playing): o["event"] = "transportFollowed"; o["playing"] = playing
      case .autoPaused: o["event"] = "autoPaused"
      case .sampleRateFollowed(let newRate, let oldRate): o["event"] = "sampleRateFollowed"; o["newRate"] = newRate; o["oldRate"] = oldRate
      case .rebuildWarning(let w): o["event"] = "rebuildWarning"; o["message"] = w
      case .rebuildFailed(let newRate, let reason): o["event"] = "rebuildFailed"; o["newRate"] = newRate; o["reason"] = reason
      case .reconnectFailed(let reason): o["event"] = "reconnectFailed"; o["reason"] = reason
      case .reconnected(let server, let rate, let frames, let restored):
        o["event"] = "reconnected"; o["server"] = server; o["sampleRate"] = rate; o["bufferSize"] = frames;
        o["restoredConnections"] = restored
      case .resumingPlayback: o["event"] = "resumingPlayback"
      case .serverNotAnswering(let server, let seconds): o["event"] = "serverNotAnswering"; o["server"] = server; o["seconds"] = seconds
      case .serverAnswersAgain(let server): o["event"] = "serverAnswersAgain"; o["server"] = server
      case .portsRefused(let ports, let reason): o["event"] = "portsRefused"; o["ports"] = ports; o["reason"] = reason
      }
    }
    if let text = event.text { o["text"] = text }
    return o
  }

  package static func mixer(_ e: MixerEvent) -> [String: Any] {
    var o: [String: Any] = ["class": "mixer"]
    switch e {
    case .stemFinished(let n): o["event"] = "stemFinished"; o["stem"] = n
    case .allFinished: o["event"] = "allFinished"
    case .underrun(let n): o["event"] = "underrun"; o["stem"] = n
    case .primeTimeout: o["event"] = "primeTimeout"
    case .badSamples(let n): o["event"] = "badSamples"; o["stem"] = n
    case .readFailed(let n, let m): o["event"] = "readFailed"; o["stem"] = n; o["message"] = m
    case .takeRecorded(let n, let path, let seconds, let dropped):
      o["event"] = "takeRecorded"; o["take"] = n; o["path"] = path; o["seconds"] = seconds; o["droppedFrames"] = dropped
    case .recordingFailed(let n, let m): o["event"] = "recordingFailed"; o["take"] = n; o["message"] = m
    case .effectLoaded(let n): o["event"] = "effectLoaded"; o["effect"] = n
    case .effectFailed(let n, let m): o["event"] = "effectFailed"; o["effect"] = n; o["message"] = m.consoleWords
    case .midiLearned(let m): o["event"] = "midiLearned"; o["mapping"] = m
    case .midiFailed(let m): o["event"] = "midiFailed"; o["message"] = m.consoleWords
    case .midiCommand(let c): o["event"] = "midiCommand"; o["command"] = c
    case .insertFaulted(let strip, let position, let plugin):
      o["event"] = "insertFaulted"; o["strip"] = strip; o["position"] = position; o["plugin"] = plugin
    }
    return o
  }

  /// A level in dB as JSON: a number, or null for silence (the meter floor, −160 dB, and below:
  /// `Decibels.isSilent`).
  package static func db(_ v: Double) -> Any { v.isFinite && !Decibels.isSilent(v, decimals: 2) ? (v * 100).rounded() / 100 : NSNull() }

  /// One meter frame: the master, every stem, bus, live input and send return, peak and RMS
  /// (average) per channel in dB.
  package static func meters(_ mixer: Mixer) -> [String: Any] {
    func reading(_ m: MeterReading) -> [String: Any] {
      ["peak": m.channels.map { db($0.peak) }, "rms": m.channels.map { db($0.average) }, "clips": m.channels.map(\.clips)]
    }
    var stems: [String: Any] = [:]
    for s in mixer.stems.statuses() { stems[s.settings.name] = reading(s.meter) }
    var inputs: [String: Any] = [:]
    for i in mixer.inputs.statuses() { inputs[i.settings.name] = reading(i.meter) }
    var buses: [String: Any] = [:]
    for b in mixer.buses.statuses() { buses[b.settings.name] = reading(b.meter) }
    var returns: [String: Any] = [:]
    for r in mixer.sends.returnMeters() { returns[r.name] = reading(r.meter) }
    var master = reading(mixer.master.meter())
    // EBU R 128 of the master (LUFS, LU, dBTP; null for silence), when it is measured live.
    if let l = mixer.loudness.published() {  // as MeterFrame: never waits for the meter thread
      master["loudness"] =
        [
          "momentary": db(l.momentary), "shortTerm": db(l.shortTerm), "integrated": db(l.integrated),
          "range": (l.range * 100).rounded() / 100, "truePeak": db(l.truePeakDecibels),
          "seconds": (l.seconds * 1000).rounded() / 1000, "droppedFrames": l.droppedFrames
        ] as [String: Any]
    }
    var frame: [String: Any] = ["master": master, "stems": stems]
    if !inputs.isEmpty { frame["inputs"] = inputs }  // live input strips (Commands+Inputs.swift)
    if !buses.isEmpty { frame["buses"] = buses }
    if !returns.isEmpty { frame["returns"] = returns }  // aux sends' returns, after their volume
    return frame
  }

  /// A transport state's name, as pushed: its case's name, without reflection.
  package static func word(_ state: TransportState) -> String {
    switch state {
    case .paused: "paused"
    case .playing: "playing"
    case .waitingForDisk: "waitingForDisk"
    }
  }

  /// The transport: state, position (seconds), and whether a solo is active (strips neither
  /// soloed nor solo-safe silent).
  package static func transport(_ mixer: Mixer) -> [String: Any] {
    ["state": word(mixer.transport.state), "position": (mixer.transport.position * 1000).rounded() / 1000, "solo": mixer.strips.soloActive]
  }
}

// The remote front ends plug into the control loop through StemdeckLive's one protocol.
extension ControlServer: FrontEnd {}
extension OSCServer: FrontEnd {}
extension NSMClient: FrontEnd {}
