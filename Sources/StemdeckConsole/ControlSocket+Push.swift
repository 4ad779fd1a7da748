import Foundation
import StemdeckControl

// The control socket's subscriptions and pushes (docs/remote-control.md, *Subscriptions on the
// socket*): a client's topics and meter rate live on its `Client`; pushes are queued as lines
// between its replies.

extension ControlServer {
  /// `{"id", "subscribe": ["events", "meters", "transport"], "rate": 20}` (or "meters@20"), and
  /// `{"id", "unsubscribe": [...]}` (an empty list: everything).
  func subscription(_ request: [String: Any], id: Any, client: Client?) -> String {
    let usage = "{\"id\": 1, \"subscribe\": [\"events\", \"meters\", \"transport\"], \"rate\": 20}"
    guard let client else { return Self.encode(["id": id, "ok": false, "error": "subscriptions are for socket clients"]) }
    if let list = request["unsubscribe"] {
      guard let items = list as? [String], let parsed = parseTopics(items, rate: nil) else {
        return Self.encode([
          "id": id, "ok": false, "error": "malformed request: \"unsubscribe\" is a list of topics: events, meters, transport"
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
        "error": "malformed request: \"subscribe\" is a list of topics (events, meters, meters@RATE, transport), as in \(usage)"
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
  static func meterTick(after now: Date, rate: Double) -> Date {
    let t = now.timeIntervalSinceReferenceDate
    return Date(timeIntervalSinceReferenceDate: ((t * rate).rounded(.down) + 1) / rate)
  }

  /// Meter frames at each subscriber's rate (skipped and counted while its queue is backed up),
  /// and the transport on every change and once a second while playing.
  func pushDue(_ mixer: Mixer) {
    guard clients.contains(where: { !$0.topics.isEmpty }) else { return }
    let now = Date()
    var frame: [String: Any]?
    // Encoded once for every subscriber that dropped no frame (most of them): the encoding is
    // the cost of a push (docs/measurements.md, *The web mixer*).
    var unbroken: String?
    for c in clients where c.topics.contains(.meters) && !c.closing && c.nextMeter <= now {
      c.nextMeter = Self.meterTick(after: now, rate: c.meterRate)
      if c.output.count > Self.meterBacklogBytes { c.droppedFrames += 1; continue }
      if frame == nil { frame = RemotePush.meters(mixer) }
      if c.droppedFrames == 0, let unbroken {
        queue(unbroken, to: c)
        continue
      }
      var f = frame!
      f["push"] = "meters"
      f["dropped"] = c.droppedFrames
      let line = Self.encode(f)
      if c.droppedFrames == 0 { unbroken = line }
      queue(line, to: c)
    }
    let transport = RemotePush.transport(mixer)
    // A change of state or of solo is pushed at once.
    let state = (transport["state"] as? String ?? "") + (transport["solo"] as? Bool == true ? " solo" : "")
    if state != transportSeen || (state == "playing" && now >= nextTransport) {
      transportSeen = state
      nextTransport = now.addingTimeInterval(PushRate.transportInterval)
      var t = transport
      t["push"] = "transport"
      let line = Self.encode(t)
      for c in clients where c.topics.contains(.transport) && !c.closing { queue(line, to: c) }
    }
  }
}
