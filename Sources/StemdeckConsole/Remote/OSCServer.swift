import Foundation
import StemdeckControl
import StemdeckSession

/// The OSC server (`--osc PORT`; docs/architecture.md, *Remote control*; the address table is in
/// the README, *Remote control*). Messages are read from a non-blocking UDP socket on the control
/// thread, from `Console.idle` as the control socket is, and turned into the REPL's commands
/// (`Console.run`), so OSC refuses exactly what the REPL refuses. Replies go to the sender:
/// `/stemdeck/reply ,iss` (1 or 0, the address answered, the output or the error). Setting a
/// value answers only when it fails; `/stemdeck/cmd` and `/stemdeck/ping` always answer.
public final class OSCServer {
  let socket: OSCSocket
  /// The host the socket is bound to, as given.
  public let host: String
  public var port: Int { socket.port }
  private var running = false
  /// OSC's open `begin … commit` group (`/stemdeck/cmd "begin"`…), apart from the REPL's and the
  /// socket clients' (Groups.swift).
  private var group: [[String]]?

  struct Subscriber {
    var address: sockaddr_storage
    var length: socklen_t
    var key: String
    var topics: Set<RemoteTopic>
    var meterRate: Double
    var nextMeter = Date.distantPast
  }
  private var subscribers: [Subscriber] = []
  static let maxSubscribers = 16
  private var transportSeen = ""
  /// The solo state last pushed (-1: none yet, so a new subscriber gets it).
  private var soloSeen: Int32 = -1
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
    for var m in received.messages {
      // A return URL (OSCReturnURL.swift): the reply, and a subscription's pushes, go there.
      if let url = OSCReturnURL.take(from: &m) {
        switch OSCReturnURL.address(url, from: m.source, length: m.sourceLength) {
        case .failure(let refusal):
          socket.send(Self.prefix + "/reply", [.int(0), .string(m.path), .string(refusal.text)], to: m.source, length: m.sourceLength)
          continue
        case .success(let to): (m.source, m.sourceLength) = to
        }
      }
      if let reply = handle(m, console) {
        socket.send(
          Self.prefix + "/reply", [.int(reply.ok ? 1 : 0), .string(m.path), .string(reply.text)], to: m.source, length: m.sourceLength)
      }
    }
    pushDue(console.mixer)
  }

  /// What the control loop watches (ControlLoop.swift): the socket (not while a message runs:
  /// what waits is read after it), and the next meter push.
  public func interest(_ i: inout ControlLoop.Interest) {
    if !running { i.watch(socket.fd) }
    let now = Date()
    for s in subscribers where s.topics.contains(.meters) { i.due(max(now, s.nextMeter)) }
    if subscribers.contains(where: { $0.topics.contains(.transport) }) { i.due(now.addingTimeInterval(PushRate.transportInterval)) }
  }

  // MARK: - Messages

  /// The reply to one message (nil: none, for a value set without error). The addresses that
  /// need nothing of the server's state answer in OSCRequest.swift. What it changes is an undo
  /// step from `osc` (History.swift).
  func handle(_ m: OSCMessage, _ console: Console) -> (ok: Bool, text: String)? {
    console.from("osc") { route(m, console) }
  }

  func route(_ m: OSCMessage, _ console: Console) -> (ok: Bool, text: String)? {
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
    case "subscribe": return subscribe(request)
    case "unsubscribe":
      let key = OSCSocket.describe(m.source, m.sourceLength)
      subscribers.removeAll { $0.key == key }
      return (true, "unsubscribed \(key)")
    default: return request.unknown
    }
  }

  /// `/stemdeck/cmd LINE`: any command line the REPL takes, but those that touch files, in OSC's
  /// own `begin … commit` group; answered with its output or its errors.
  func command(_ request: OSCRequest) -> (ok: Bool, text: String)? {
    let console = request.console
    if let e = request.expect("s", "one string, a command line such as 'vol drums -6dB'") { return (false, e) }
    guard case .string(let line) = request.message.arguments[0] else { return (false, "\(request.path) takes a string") }
    if let refusal = Self.refusedOverOSC(line) { return (false, refusal) }
    // Run during a socket request's `wait`, its commands are not that request's (no data added to its reply).
    let outer = console.afterCommand
    console.afterCommand = nil
    defer { console.afterCommand = outer }
    let r = console.withOwnGroup(&group) { console.captured { console.execute(line: line, stopOnError: true) } }
    if r.ok { return (true, r.output.joined(separator: "\n")) }
    return (false, r.errors.isEmpty ? "the command failed" : r.errors.joined(separator: "; "))
  }

  /// `/stemdeck/subscribe [TOPIC…] [RATE]`: the sender (or its return URL) gets the topics'
  /// pushes (all three when none is named) until it unsubscribes; the oldest of 16 makes room.
  func subscribe(_ request: OSCRequest) -> (ok: Bool, text: String)? {
    let m = request.message
    var items: [String] = []
    var rate: Double?
    for a in m.arguments {
      switch a {
      case .string(let s): items.append(s)
      default:
        guard let v = a.number, v.isFinite else {
          return (false, "\(m.path) takes topic names (s: events, meters, transport) and a meter rate (f or i); got \(m.typeTags)")
        }
        rate = v
      }
    }
    if items.isEmpty { items = RemoteTopic.allCases.map(\.rawValue) }
    guard let parsed = parseTopics(items, rate: rate) else {
      return (false, "\(m.path): topics are events, meters, transport (meters@RATE for a rate); got \(items.joined(separator: " "))")
    }
    guard PushRate.range.contains(parsed.meterRate) else {
      return (false, "\(m.path): the meter rate must be 1…60 frames a second (got \(NumberFormat.plain(parsed.meterRate)))")
    }
    let key = OSCSocket.describe(m.source, m.sourceLength)
    subscribers.removeAll { $0.key == key }
    if subscribers.count >= Self.maxSubscribers { subscribers.removeFirst() }
    subscribers.append(
      Subscriber(address: m.source, length: m.sourceLength, key: key, topics: parsed.topics, meterRate: parsed.meterRate))
    transportSeen = ""
    soloSeen = -1
    return (true, "subscribed " + parsed.topics.map(\.rawValue).sorted().joined(separator: " ") + " for \(key)")
  }

  /// Commands that read or write files, refused over OSC: any local user can send UDP to the port
  /// (the control socket is its owner's only, 0600), so OSC never names a file to save over or read.
  static let fileCommands: Set<String> = ["save", "open", "add", "recover", "setlist", "record"]

  /// Why `line` is refused over OSC, or nil. Groups (`at … { … }`) hold only value changes.
  static func refusedOverOSC(_ line: String) -> String? {
    fileCommand(in: line).map {
      "'\($0)' reads or writes files and is refused over OSC (any local user can reach a UDP port); use the control socket (stemdeck ctl), which only you can"
    }
  }

  /// The first command of `line` that reads or writes files (`save`, `sfx load`, …), or nil:
  /// what OSC and a MIDI mapping's `do` line refuse.
  static func fileCommand(in line: String) -> String? {
    guard let commands = try? Tokenizer.commands(in: line) else { return nil }  // the run says what is wrong
    for words in commands {
      guard let first = words.first, let spec = CommandTable.lookup(first.lowercased()) else { continue }
      let sfxLoad = spec.name == "sfx" && words.count > 1 && words[1].lowercased() == "load"
      if fileCommands.contains(spec.name) || sfxLoad { return spec.name + (sfxLoad ? " load" : "") }
    }
    return nil
  }

  struct Refusal: Error { let text: String; init(_ t: String) { text = t } }

  // MARK: - Pushes

  /// The next frame's time: one period after the last (steady at the rate, whatever the service
  /// step's granularity), or one period from now after a pause or a late step.
  static func nextDue(_ last: Date, now: Date, rate: Double) -> Date {
    let next = last.addingTimeInterval(1 / rate)
    return next > now ? next : now.addingTimeInterval(1 / rate)
  }

  /// Sends an event to the subscribers of events: `/stemdeck/event ,ss` (kind, text).
  public func push(_ event: LiveEvent) {
    guard subscribers.contains(where: { $0.topics.contains(.events) }), let o = RemotePush.event(event) else { return }
    let kind = o["event"] as? String ?? "event"
    let text = o["text"] as? String ?? kind
    for s in subscribers where s.topics.contains(.events) {
      socket.send(Self.prefix + "/event", [.string(kind), .string(text)], to: s.address, length: s.length)
    }
  }

  func pushDue(_ mixer: Mixer) {
    guard !subscribers.isEmpty else { return }
    let now = Date()
    let meterDue = subscribers.indices.filter { subscribers[$0].topics.contains(.meters) && subscribers[$0].nextMeter <= now }
    if !meterDue.isEmpty {
      let master = mixer.masterMeter()
      let stems = mixer.stemStatuses()
      let inputs = mixer.inputStatuses()
      let buses = mixer.busStatuses()
      let returns = mixer.returnMeters()
      func peaks(_ m: MeterReading) -> [OSCArgument] { m.channels.map { .float(Float(max(-160, $0.peak))) } }
      for i in meterDue {
        let s = subscribers[i]
        subscribers[i].nextMeter = Self.nextDue(s.nextMeter, now: now, rate: s.meterRate)
        socket.send(Self.prefix + "/meter/master", peaks(master), to: s.address, length: s.length)
        for stem in stems {
          socket.send(Self.prefix + "/meter/stem/" + stem.settings.name, peaks(stem.meter), to: s.address, length: s.length)
        }
        for input in inputs {
          socket.send(Self.prefix + "/meter/input/" + input.settings.name, peaks(input.meter), to: s.address, length: s.length)
        }
        for bus in buses {
          socket.send(Self.prefix + "/meter/bus/" + bus.settings.name, peaks(bus.meter), to: s.address, length: s.length)
        }
        for r in returns { socket.send(Self.prefix + "/meter/return/" + r.name, peaks(r.meter), to: s.address, length: s.length) }
      }
    }
    let state = "\(mixer.transportState)"
    if state != transportSeen || (state == "playing" && now >= nextTransport) {
      transportSeen = state
      nextTransport = now.addingTimeInterval(PushRate.transportInterval)
      for s in subscribers where s.topics.contains(.transport) {
        socket.send(Self.prefix + "/transport", [.string(state), .float(Float(mixer.position))], to: s.address, length: s.length)
      }
    }
    // `/stemdeck/solo ,i`: 1 while a solo is active, on every change (and on subscribing).
    let solo: Int32 = mixer.soloActive ? 1 : 0
    if solo != soloSeen {
      soloSeen = solo
      for s in subscribers where s.topics.contains(.transport) {
        socket.send(Self.prefix + "/solo", [.int(solo)], to: s.address, length: s.length)
      }
    }
  }
}
