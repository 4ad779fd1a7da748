import Foundation
import StemdeckControl
import StemdeckLive
import StemdeckText

// The control socket's subscriptions and pushes (docs/remote-control.md, *Subscriptions on the
// socket*): a client's topics and meter rate live on its `Client`; pushes are queued as lines
// between its replies.

extension ControlServer {
  /// `{"id", "subscribe": ["events", "meters", "transport"], "rate": 20}` (or "meters@20"), and
  /// `{"id", "unsubscribe": [...]}` (an empty list: everything).
  package func subscription(_ request: [String: Any], id: Any, client: Client?, console: Console? = nil) -> String {
    let usage = "{\"id\": 1, \"subscribe\": [\"events\", \"meters\", \"transport\"], \"rate\": 20}"
    guard let client else { return Self.encode(["id": id, "ok": false, "error": "subscriptions are for socket clients"]) }
    if let list = request["unsubscribe"] {
      guard let items = list as? [String], let parsed = parseTopics(items, rate: nil) else {
        return Self.encode([
          "id": id, "ok": false, "error": "malformed request: \"unsubscribe\" is a list of topics: events, meters, transport, values"
        ])
      }
      client.topics = items.isEmpty ? [] : client.topics.subtracting(parsed.topics)
      return Self.encode(["id": id, "ok": true, "subscribed": client.topics.map(\.rawValue).sorted()])
    }
    var rate: Double?
    if let r = request["rate"] {
      guard let number = r as? NSNumber, !(r is Bool), number.doubleValue.isFinite else {
        return Self.encode([
          "id": id, "ok": false, "error": "malformed request: \"rate\" is a number of meter frames a second, 1…60, as in \(usage)"
        ])
      }
      rate = number.doubleValue
    }
    guard let items = request["subscribe"] as? [String], !items.isEmpty, let parsed = parseTopics(items, rate: rate) else {
      return Self.encode([
        "id": id, "ok": false,
        "error": "malformed request: \"subscribe\" is a list of topics (events, meters, meters@RATE, transport, values), as in \(usage)"
      ])
    }
    guard PushRate.range.contains(parsed.meterRate) else {
      return Self.encode([
        "id": id, "ok": false, "error": "the meter rate must be 1…60 frames a second (got \(NumberFormat.plain(parsed.meterRate)))"
      ])
    }
    client.topics.formUnion(parsed.topics)
    client.meterRate = parsed.meterRate
    client.nextMeter = .distantPast
    transportSeen = ""  // a new transport subscriber hears the state at once
    if parsed.topics.contains(.values), let console {
      // Every value at once, then what changes (queued before the reply, which `answer` writes next).
      queue(Self.valuesLine(values.all(console.mixer)), to: client)
    }
    return Self.encode(["id": id, "ok": true, "subscribed": client.topics.map(\.rawValue).sorted(), "rate": parsed.meterRate])
  }

  /// Queues an event for the clients subscribed to events: `{"push": "event", "event": KIND, …fields, "text"}`.
  public func push(_ event: LiveEvent) {
    guard clients.contains(where: { $0.topics.contains(.events) }), var o = RemotePush.event(event) else { return }
    o["push"] = "event"
    let line = Self.encode(o)
    for c in clients where c.topics.contains(.events) && !c.closing { queue(line, to: c) }
  }

  /// The next instant of a clock that ticks `rate` times a second for everyone: subscribers at
  /// one rate are due in the same step and share one frame and its encoding, rather than each
  /// having a phase of its own.
  package static func meterTick(after now: Date, rate: Double) -> Date {
    let t = now.timeIntervalSinceReferenceDate
    return Date(timeIntervalSinceReferenceDate: ((t * rate).rounded(.down) + 1) / rate)
  }

  /// Tells the subscribers of events that the mix changed (`mixChanged`), once per service step
  /// in which anything a page shows may have: a strip control, a send, an insert, a scene (the
  /// mixer's change count, which undo's history keeps too), a session opened or a song changed
  /// (the history's epoch), the cue. The web mixer's pages fetch the mix again on it instead of
  /// polling (docs/web.md); moves coalesce, as one step's changes make one push.
  package func pushMixChanged(_ console: Console) {
    guard clients.contains(where: { $0.topics.contains(.events) && !$0.closing }) else { return }
    let mark = MixMark(
      changes: console.mixer.history.changeCount, epoch: console.history.epoch, song: console.setlist == nil ? -1 : console.setlistIndex,
      cues: console.mixer.cues.all.map { "\($0.name) \($0.tap)" })
    guard let seen = mixSeen else {
      mixSeen = mark  // the first look: nothing to tell
      return
    }
    guard mark != seen else { return }
    mixSeen = mark
    let line = Self.encode([
      "push": "event", "event": "mixChanged", "class": "mixer", "changes": mark.changes, "song": mark.song >= 0 ? mark.song + 1 : NSNull()
    ])
    for c in clients where c.topics.contains(.events) && !c.closing { queue(line, to: c) }
  }

  /// Meter frames at each subscriber's rate (skipped and counted while its queue is backed up),
  /// the transport on every change and once a second while playing, and `mixChanged`.
  package func pushDue(_ console: Console) {
    guard clients.contains(where: { !$0.topics.isEmpty }) else { return }
    let mixer = console.mixer
    pushMixChanged(console)
    if clients.contains(where: { $0.topics.contains(.values) && !$0.closing }) {
      let changed = values.due(mixer)
      if !changed.isEmpty {
        let line = Self.valuesLine(changed)
        for c in clients where c.topics.contains(.values) && !c.closing { queue(line, to: c) }
      }
    }
    let now = Date()
    var frame: MeterFrame?
    // Written once for every subscriber that dropped no frame (most of them): the writing is
    // the cost of a push (docs/measurements.md, *The web mixer*).
    var unbroken: [UInt8]?
    for c in clients where c.topics.contains(.meters) && !c.closing && c.nextMeter <= now {
      c.nextMeter = Self.meterTick(after: now, rate: c.meterRate)
      if c.output.count > Self.meterBacklogBytes { c.droppedFrames += 1; continue }
      if frame == nil { frame = MeterFrame(mixer) }
      guard let frame else { continue }
      if c.droppedFrames == 0 {
        if unbroken == nil { unbroken = frame.line(dropped: 0) }
        queue(line: unbroken ?? [], to: c)
      } else {
        queue(line: frame.line(dropped: c.droppedFrames), to: c)
      }
    }
    // A change of state or of solo is pushed at once. Looked at every step: the frame is built
    // only when it goes out (a state's name by interpolation cost a reflection each step).
    let state = RemotePush.word(mixer.transport.state) + (mixer.strips.soloActive ? " solo" : "")
    if state != transportSeen || (state == "playing" && now >= nextTransport) {
      transportSeen = state
      nextTransport = now.addingTimeInterval(PushRate.transportInterval)
      var t = RemotePush.transport(mixer)
      t["push"] = "transport"
      let line = Self.encode(t)
      for c in clients where c.topics.contains(.transport) && !c.closing { queue(line, to: c) }
    }
  }
}

extension ControlServer {
  /// `{"push": "values", "values": {ADDRESS: VALUE, …}}`: the `values` topic's line.
  static func valuesLine(_ values: [(String, Double)]) -> String {
    encode(["push": "values", "values": Dictionary(values, uniquingKeysWith: { a, _ in a })])
  }
}

/// What the web mixer's pages show of the mix, as cheaply as it can be compared: when it
/// differs from the last one told, subscribers of events hear `mixChanged`.
package struct MixMark: Equatable {
  /// `mixer.history.changeCount`: every change that marks the session unsaved.
  package var changes: Int
  /// `UndoHistory.epoch`: a session opened, a song changed.
  package var epoch: Int
  /// The setlist's current song (0-based), -1 without a setlist.
  package var song: Int
  /// The cued strips and their taps (a listening state: not a change of the session).
  package var cues: [String]
}
