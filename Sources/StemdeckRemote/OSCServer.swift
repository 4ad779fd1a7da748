import Foundation
import StemdeckControl
import StemdeckLive
import StemdeckSession
import StemdeckText

/// The OSC server (`--osc PORT`; docs/architecture.md, *Remote control*; the address table is in
/// the README, *Remote control*). Messages are read from a non-blocking UDP socket on the control
/// thread, from `Console.idle` as the control socket is, and turned into the REPL's commands
/// (`Console.run`), so OSC refuses exactly what the REPL refuses. Replies go to the sender:
/// `/stemdeck/reply ,iss` (1 or 0, the address answered, the output or the error). Setting a
/// value answers only when it fails; `/stemdeck/cmd` and `/stemdeck/ping` always answer.
public final class OSCServer {
  package let socket: OSCSocket
  /// The host the socket is bound to, as given.
  public let host: String
  public var port: Int { socket.port }
  /// Only this machine reaches it (OSCSocket.isLoopback).
  public var isLoopback: Bool { socket.isLoopback }
  private var running = false
  /// OSC's open `begin … commit` group (`/stemdeck/cmd "begin"`…), apart from the REPL's and the
  /// socket clients' (Groups.swift); every address runs with it (`handle`).
  private var group: [[String]]?

  package struct Subscriber {
    package var address: sockaddr_storage
    package var length: socklen_t
    package var key: String
    package var topics: Set<RemoteTopic>
    package var meterRate: Double
    package var nextMeter = Date.distantPast
    /// When its lease ends: renewed by any message from it; a surface that goes away stops costing.
    package var expires: Date
    /// Sends that failed in a row (a full buffer, an unreachable peer).
    package var sendFailures = 0
  }
  private var subscribers: [Subscriber] = []
  package static let maxSubscribers = 16
  /// A subscription lasts this long after the subscriber's last message (`/stemdeck/ping` or a
  /// new `/stemdeck/subscribe` renews it).
  package var leaseSeconds = 60.0
  /// Subscribers now (`status`, tests).
  public var subscriberCount: Int { subscribers.count }
  /// Senders whose `/stemdeck/cmd` waits.
  public var waitingCount: Int { parked.count }
  /// Failed sends in a row after which a subscriber is dropped.
  package static let maxSendFailures = 8

  /// A `/stemdeck/cmd` that waits (`play; wait 5; stop`), per sender: parked and polled each
  /// step (RemoteRun.swift), answered when it is over; the sender's next messages wait behind
  /// it (at most `maxQueued`), nobody else's do.
  package struct Parked {
    package var path: String
    package var address: sockaddr_storage
    package var length: socklen_t
    package var run: RemoteRun
    package var queued: [OSCMessage] = []
  }
  private var parked: [String: Parked] = [:]
  package static let maxQueued = 16
  /// The longest reply text: one UDP datagram holds the message (a longer one could never be sent).
  package static let maxReplyBytes = 60_000
  private var transportSeen = ""
  /// The solo state last pushed (-1: none yet, so a new subscriber gets it).
  private var soloSeen: Int32 = -1
  /// The `values` topic's last look (MixValues.swift).
  private var values = ValuesTracker()
  private var nextTransport = Date.distantPast

  public static let prefix = "/stemdeck"

  public init(host: String, port: Int) throws(ControlError) {
    socket = try OSCSocket(host: host, port: port)
    self.host = host
  }

  public func close() { socket.close() }

  /// Reads the messages waiting, runs them, and sends what subscribers are due. Control thread only.
  public func service(_ console: Console) {
    // A message is running (`/stemdeck/cmd "wait 5"`): no other starts, but pushes go on.
    guard !running else { pushDue(console.mixer); return }
    running = true
    defer { running = false }
    let received = socket.receive()
    for r in received.refused {
      socket.send(Self.prefix + "/reply", [.int(0), .string(""), .string(r.reason)], to: r.source, length: r.length)
    }
    resumeParked(console)
    for var m in received.messages {
      // A return URL (OSCReturnURL.swift): the reply, and a subscription's pushes, go there.
      if let url = OSCReturnURL.take(from: &m) {
        switch OSCReturnURL.address(url, from: m.source, length: m.sourceLength) {
        case .failure(let refusal):
          reply(m.path, ok: false, refusal.text, to: m.source, m.sourceLength)
          continue
        case .success(let to): (m.source, m.sourceLength) = to
        }
      }
      let key = OSCSocket.describe(m.source, m.sourceLength)
      renewLease(key)
      if parked[key] != nil {
        if parked[key]!.queued.count >= Self.maxQueued {
          reply(
            m.path, ok: false, "refused: \(Self.maxQueued) messages already wait behind your request that waits", to: m.source,
            m.sourceLength)
        } else {
          parked[key]!.queued.append(m)
        }
        continue
      }
      if let answer = handle(m, console) { reply(m.path, ok: answer.ok, answer.text, to: m.source, m.sourceLength) }
    }
    pushDue(console.mixer)
  }

  /// `/stemdeck/reply ,iss`: 1 or 0, the address answered, the text; both cut to what one
  /// datagram holds (a 60 KB address still gets its answer).
  package func reply(_ path: String, ok: Bool, _ text: String, to address: sockaddr_storage, _ length: socklen_t) {
    func cut(_ t: String, _ most: Int) -> String {
      guard t.utf8.count > most else { return t }
      let kept = String(decoding: t.utf8.prefix(most), as: UTF8.self)
      return kept + "… (cut: \(t.utf8.count) bytes, more than one OSC datagram holds; ask for less, or use the control socket)"
    }
    socket.send(
      Self.prefix + "/reply", [.int(ok ? 1 : 0), .string(cut(path, 256)), .string(cut(text, Self.maxReplyBytes))], to: address,
      length: length)
  }

  /// Polls each sender's request that waits; one that is over is answered, and the messages
  /// that waited behind it run (until one waits again).
  private func resumeParked(_ console: Console) {
    for key in Array(parked.keys) {
      guard var p = parked[key] else { continue }
      let done = console.from(.osc) { console.withOwnGroup(&group) { console.advance(p.run) } }
      guard done else { continue }
      parked[key] = nil
      answer(p.path, p.run, to: p.address, p.length)
      while !p.queued.isEmpty && parked[key] == nil {
        let m = p.queued.removeFirst()
        if let answer = handle(m, console) { reply(m.path, ok: answer.ok, answer.text, to: m.source, m.sourceLength) }
      }
      if !p.queued.isEmpty, var again = parked[key] {  // one waits again: the rest stay behind it
        again.queued = p.queued + again.queued
        parked[key] = again
      }
    }
  }

  private func answer(_ path: String, _ run: RemoteRun, to address: sockaddr_storage, _ length: socklen_t) {
    if run.ok {
      reply(path, ok: true, run.output.joined(separator: "\n"), to: address, length)
    } else {
      reply(path, ok: false, run.errors.isEmpty ? "the command failed" : run.errors.joined(separator: "; "), to: address, length)
    }
  }

  private func renewLease(_ key: String) {
    for i in subscribers.indices where subscribers[i].key == key {
      subscribers[i].expires = Date().addingTimeInterval(leaseSeconds)
    }
  }

  /// What the control loop watches (ControlLoop.swift): the socket (not while a message runs:
  /// what waits is read after it), and the next meter push.
  public func interest(_ i: inout ControlLoop.Interest) {
    if !running { i.watch(socket.fd) }
    let now = Date()
    for p in parked.values { i.due(now.addingTimeInterval(p.run.waiting?.step ?? 0)) }
    for s in subscribers where s.topics.contains(.meters) { i.due(max(now, s.nextMeter)) }
    if subscribers.contains(where: { $0.topics.contains(.transport) }) { i.due(now.addingTimeInterval(PushRate.transportInterval)) }
  }

  // MARK: - Messages

  /// The reply to one message (nil: none, for a value set without error). The addresses that
  /// need nothing of the server's state answer in OSCRequest.swift. What it changes is an undo
  /// step from `osc` (History.swift).
  /// Every address runs in OSC's own group: a fader moved while the operator has a `begin`
  /// open is not captured into the operator's group.
  package func handle(_ m: OSCMessage, _ console: Console) -> (ok: Bool, text: String)? {
    if console.quitRequested { return (false, "stemdeck is quitting") }
    return console.from(.osc) { console.withOwnGroup(&group) { route(m, console) } }
  }

  package func route(_ m: OSCMessage, _ console: Console) -> (ok: Bool, text: String)? {
    guard m.path == Self.prefix || m.path.hasPrefix(Self.prefix + "/") else {
      return (false, "unknown address \(m.path): stemdeck's addresses start with \(Self.prefix)/ (see docs/remote-control.md)")
    }
    let request = OSCRequest(m, console)
    let parts = request.parts
    switch parts.first ?? "" {
    case "ping": return (true, "pong")
    case "cmd": return command(request)
    case "transport" where parts.count == 2: return request.transport()
    case "next" where parts.count == 1, "prev" where parts.count == 1, "goto" where parts.count == 1:
      return request.song(parts[0])
    case "undo" where parts.count == 1, "redo" where parts.count == 1:
      return request.song(parts[0])  // a button, as `next` is: the command of that name
    case "song" where parts.count == 2 && ["next", "prev", "goto"].contains(parts[1]):
      return request.song(parts[1])
    case "scene" where parts.count == 2 && parts[1] == "recall":
      return request.sceneRecall()
    case "master" where parts.count == 2 && (parts[1] == "vol" || parts[1] == "volume"):
      return request.masterVolume()
    case "send" where parts.count == 3, "return" where parts.count == 2:
      return request.sendLevel()
    case "stem" where parts.count == 3, "bus" where parts.count == 3, "input" where parts.count == 3:
      return request.stripControl()
    case "strip" where parts.count == 5 && parts[2] == "insert":
      return request.insertValue()  // OSCRequest+Inserts.swift
    case "subscribe": return subscribe(request)
    case "unsubscribe":
      let key = OSCSocket.describe(m.source, m.sourceLength)
      subscribers.removeAll { $0.key == key }
      return (true, "unsubscribed \(key)")
    default: return request.unknown
    }
  }

  /// `/stemdeck/cmd LINE`: any command line the REPL takes that OSC may run (Access.swift), in OSC's
  /// own `begin … commit` group; answered with its output or its errors.
  package func command(_ request: OSCRequest) -> (ok: Bool, text: String)? {
    let console = request.console
    if let e = request.expect("s", "one string, a command line such as 'vol drums -6dB'") { return (false, e) }
    guard case .string(let line) = request.message.arguments[0] else { return (false, "\(request.path) takes a string") }
    // Refused whole before any of it runs when one command is beyond what OSC may do (startRemote).
    let run = console.startRemote(line, from: .osc)
    guard run.finished else {
      // It waits: answered when the wait is over (`resumeParked`).
      let m = request.message
      parked[OSCSocket.describe(m.source, m.sourceLength)] = Parked(path: m.path, address: m.source, length: m.sourceLength, run: run)
      return nil
    }
    if run.ok { return (true, run.output.joined(separator: "\n")) }
    return (false, run.errors.isEmpty ? "the command failed" : run.errors.joined(separator: "; "))
  }

  /// `/stemdeck/subscribe [TOPIC…] [RATE]`: the sender (or its return URL) gets the topics'
  /// pushes (all three when none is named) until it unsubscribes; the oldest of 16 makes room.
  package func subscribe(_ request: OSCRequest) -> (ok: Bool, text: String)? {
    let m = request.message
    var items: [String] = []
    var rate: Double?
    for a in m.arguments {
      switch a {
      case .string(let s): items.append(s)
      default:
        guard let v = a.number, v.isFinite else {
          return (false, "\(m.path) takes topic names (s: events, meters, transport, values) and a meter rate (f or i); got \(m.typeTags)")
        }
        rate = v
      }
    }
    if items.isEmpty { items = RemoteTopic.defaults.map(\.rawValue) }
    guard let parsed = parseTopics(items, rate: rate) else {
      return (
        false, "\(m.path): topics are events, meters, transport, values (meters@RATE for a rate); got \(items.joined(separator: " "))"
      )
    }
    guard PushRate.range.contains(parsed.meterRate) else {
      return (false, "\(m.path): the meter rate must be 1…60 frames a second (got \(NumberFormat.plain(parsed.meterRate)))")
    }
    let key = OSCSocket.describe(m.source, m.sourceLength)
    subscribers.removeAll { $0.key == key || $0.expires < Date() }
    // A full list refuses the newcomer: a live surface's subscription is never pushed out.
    if subscribers.count >= Self.maxSubscribers {
      return (
        false,
        "\(m.path): \(Self.maxSubscribers) subscribers already; a subscription lasts \(Int(leaseSeconds)) s after its subscriber's last message (renew with /stemdeck/ping)"
      )
    }
    subscribers.append(
      Subscriber(
        address: m.source, length: m.sourceLength, key: key, topics: parsed.topics, meterRate: parsed.meterRate,
        expires: Date().addingTimeInterval(leaseSeconds)))
    transportSeen = ""
    soloSeen = -1
    if parsed.topics.contains(.values), let i = subscribers.indices.last {
      // A new surface is told every value at once, then what changes.
      for (address, value) in values.all(request.console.mixer) { pushTo(i, address, [.float(Float(value))]) }
    }
    return (
      true,
      "subscribed " + parsed.topics.map(\.rawValue).sorted().joined(separator: " ")
        + " for \(key), for \(Int(leaseSeconds)) s after your last message (/stemdeck/ping renews it)"
    )
  }

  package struct Refusal: Error { let text: String; init(_ t: String) { text = t } }

  // MARK: - Pushes

  /// The next frame's time: one period after the last (steady at the rate, whatever the service
  /// step's granularity), or one period from now after a pause or a late step.
  package static func nextDue(_ last: Date, now: Date, rate: Double) -> Date {
    let next = last.addingTimeInterval(1 / rate)
    return next > now ? next : now.addingTimeInterval(1 / rate)
  }

  /// Sends an event to the subscribers of events: `/stemdeck/event ,ss` (kind, text).
  public func push(_ event: LiveEvent) {
    guard subscribers.contains(where: { $0.topics.contains(.events) }), let o = RemotePush.event(event) else { return }
    let kind = o["event"] as? String ?? "event"
    let text = o["text"] as? String ?? kind
    for i in subscribers.indices where subscribers[i].topics.contains(.events) {
      pushTo(i, Self.prefix + "/event", [.string(kind), .string(text)])
    }
  }

  /// Sends to subscriber `i`, counting failures in a row (`pushDue` drops it at `maxSendFailures`).
  private func pushTo(_ i: Int, _ path: String, _ arguments: [OSCArgument]) {
    if socket.send(path, arguments, to: subscribers[i].address, length: subscribers[i].length) {
      subscribers[i].sendFailures = 0
    } else {
      subscribers[i].sendFailures += 1
    }
  }

  package func pushDue(_ mixer: Mixer) {
    let now = Date()
    subscribers.removeAll { $0.expires < now || $0.sendFailures >= Self.maxSendFailures }
    guard !subscribers.isEmpty else { return }
    let meterDue = subscribers.indices.filter { subscribers[$0].topics.contains(.meters) && subscribers[$0].nextMeter <= now }
    if !meterDue.isEmpty {
      let master = mixer.master.meter()
      let stems = mixer.stems.statuses()
      let inputs = mixer.inputs.statuses()
      let buses = mixer.buses.statuses()
      let returns = mixer.sends.returnMeters()
      func peaks(_ m: MeterReading) -> [OSCArgument] { m.channels.map { .float(Float(max(-160, $0.peak))) } }
      for i in meterDue {
        let s = subscribers[i]
        subscribers[i].nextMeter = Self.nextDue(s.nextMeter, now: now, rate: s.meterRate)
        pushTo(i, Self.prefix + "/meter/master", peaks(master))
        for stem in stems {
          pushTo(i, Self.prefix + "/meter/stem/" + stem.settings.name, peaks(stem.meter))
        }
        for input in inputs {
          pushTo(i, Self.prefix + "/meter/input/" + input.settings.name, peaks(input.meter))
        }
        for bus in buses {
          pushTo(i, Self.prefix + "/meter/bus/" + bus.settings.name, peaks(bus.meter))
        }
        for r in returns { pushTo(i, Self.prefix + "/meter/return/" + r.name, peaks(r.meter)) }
      }
    }
    let state = "\(mixer.transport.state)"
    if state != transportSeen || (state == "playing" && now >= nextTransport) {
      transportSeen = state
      nextTransport = now.addingTimeInterval(PushRate.transportInterval)
      for i in subscribers.indices where subscribers[i].topics.contains(.transport) {
        pushTo(i, Self.prefix + "/transport", [.string(state), .float(Float(mixer.transport.position))])
      }
    }
    if subscribers.contains(where: { $0.topics.contains(.values) }) {
      let changed = values.due(mixer, now: now)
      for i in subscribers.indices where subscribers[i].topics.contains(.values) {
        for (address, value) in changed { pushTo(i, address, [.float(Float(value))]) }
      }
    }
    // `/stemdeck/solo ,i`: 1 while a solo is active, on every change (and on subscribing).
    let solo: Int32 = mixer.strips.soloActive ? 1 : 0
    if solo != soloSeen {
      soloSeen = solo
      for i in subscribers.indices where subscribers[i].topics.contains(.transport) {
        pushTo(i, Self.prefix + "/solo", [.int(solo)])
      }
    }
  }
}
