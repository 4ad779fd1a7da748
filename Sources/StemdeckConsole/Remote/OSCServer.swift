import CLiblo
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

  /// The reply to one message (nil: none, for a value set without error).
  func handle(_ m: OSCMessage, _ console: Console) -> (ok: Bool, text: String)? {
    guard m.path == Self.prefix || m.path.hasPrefix(Self.prefix + "/") else {
      return (false, "unknown address \(m.path): stemdeck's addresses start with \(Self.prefix)/ (see docs/remote-control.md)")
    }
    let parts = m.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst(2).map(String.init)
    func expect(_ tags: String, _ what: String) -> String? {
      m.typeTags == "," + tags ? nil : "\(m.path) takes \(what) (type tags ,\(tags)); got \(m.typeTags)"
    }
    func number(_ what: String) -> Result<Double, Refusal> {
      guard m.arguments.count == 1, let v = m.arguments[0].number, m.arguments[0].tag != "T", m.arguments[0].tag != "F" else {
        return .failure(Refusal("\(m.path) takes one number, \(what) (type tag ,f, ,i or ,d); got \(m.typeTags)"))
      }
      guard !v.isNaN else { return .failure(Refusal("\(m.path): \(what) must be a number, not NaN")) }
      return .success(v)
    }
    func flag() -> Result<Bool, Refusal> {
      if m.arguments.isEmpty { return .success(true) }
      guard m.arguments.count == 1, let v = m.arguments[0].number, !v.isNaN, v == 0 || v == 1 else {
        return .failure(
          Refusal(
            "\(m.path) takes 1 (on) or 0 (off) (type tag ,i, ,f, ,T or ,F); got \(m.typeTags)"
              + (m.arguments.count == 1 && m.arguments[0].number != nil ? " with \(NumberFormat.plain(m.arguments[0].number!))" : "")))
      }
      return .success(v == 1)
    }
    func run(_ words: [String], reply: Bool = false) -> (ok: Bool, text: String)? {
      let r = console.runCaptured(words)
      if !r.ok { return (false, r.errors.isEmpty ? "the command failed" : r.errors.joined(separator: "; ")) }
      return reply ? (true, r.output.joined(separator: "\n")) : nil
    }
    func plain(_ v: Double) -> String { String(format: "%.6f", v) }

    switch parts.first ?? "" {
    case "ping":
      return (true, "pong")
    case "cmd":
      if let e = expect("s", "one string, a command line such as 'vol drums -6dB'") { return (false, e) }
      guard case .string(let line) = m.arguments[0] else { return (false, "\(m.path) takes a string") }
      if let refusal = Self.refusedOverOSC(line) { return (false, refusal) }
      // Run during a socket request's `wait`, its commands are not that request's (no data added to its reply).
      let outer = console.afterCommand
      console.afterCommand = nil
      defer { console.afterCommand = outer }
      let r = console.withOwnGroup(&group) { console.captured { console.execute(line: line, stopOnError: true) } }
      if r.ok { return (true, r.output.joined(separator: "\n")) }
      return (false, r.errors.isEmpty ? "the command failed" : r.errors.joined(separator: "; "))
    case "transport" where parts.count == 2:
      switch parts[1] {
      case "play", "pause", "stop":
        if !m.arguments.isEmpty && !(m.arguments.count == 1 && m.arguments[0].number == 1) {
          return (false, "\(m.path) takes no arguments (or 1, as a button sends); got \(m.typeTags)")
        }
        return run([parts[1]])
      case "locate":
        switch number("the position in seconds") {
        case .failure(let r): return (false, r.text)
        case .success(let v):
          guard v >= 0, v.isFinite else {
            return (false, "\(m.path): the position must be 0 or more seconds (got \(NumberFormat.plain(v)))")
          }
          return run(["seek", plain(v)])
        }
      default: break
      }
    case "next" where parts.count == 1, "prev" where parts.count == 1, "goto" where parts.count == 1:
      return song(parts[0], m, run)
    case "song" where parts.count == 2 && ["next", "prev", "goto"].contains(parts[1]):
      return song(parts[1], m, run)
    case "master" where parts.count == 2 && (parts[1] == "vol" || parts[1] == "volume"):
      switch number("the master level in dB") {
      case .failure(let r): return (false, r.text)
      case .success(let v): return run(["master", v == -.infinity ? "0" : plain(v) + "dB"])
      }
    case "send" where parts.count == 3, "return" where parts.count == 2:
      // /stemdeck/send/STRIP/SEND dB (-inf: off), /stemdeck/return/SEND dB: the `send` command's.
      switch number("the level in dB") {
      case .failure(let r): return (false, r.text)
      case .success(let v):
        guard v != .infinity else { return (false, "\(m.path): the level must be at most +6 dB (got inf)") }
        if parts[0] == "return" { return run(["send", "return", parts[1], v == -.infinity ? "0" : plain(v) + "dB"]) }
        guard v != -.infinity else { return run(["send", parts[1], parts[2], "off"]) }
        // A fader moves the level; the tap point stays what it is (post for a new level).
        let aux = console.mixer.auxSends.first { $0.name == parts[2] }
        let pre = aux?.levels[parts[1]]?.preFader ?? false
        return run(["send", parts[1], parts[2], plain(v) + "dB", pre ? "pre" : "post"])
      }
    case "stem" where parts.count == 3, "bus" where parts.count == 3, "input" where parts.count == 3:
      let names: [String]
      switch strips(matching: parts[1], kind: parts[0], console.mixer) {
      case .failure(let r): return (false, r.text)
      case .success(let n): names = n
      }
      // The control, from the strip controls' table (StripParameter.swift).
      let kind = StripKind(rawValue: parts[0]) ?? .stem
      guard let control = StripParameter.osc(parts[2]) else {
        return (false, "unknown address \(m.path): a \(parts[0])'s addresses are \(StripParameter.oscAddresses(on: kind))")
      }
      let words: (String) -> [String]
      switch control.value {
      case .gain:
        switch number("the level in dB") {
        case .failure(let r): return (false, r.text)
        case .success(let v):
          guard v != .infinity else { return (false, "\(m.path): the level must be at most +6 dB (got inf)") }
          words = { [control.word, $0, v == -.infinity ? "0" : plain(v) + "dB"] }
        }
      case .number(let what):
        switch number(what) {
        case .failure(let r): return (false, r.text)
        case .success(let v): words = { [control.word, $0, plain(v)] }
        }
      case .toggle:
        switch flag() {
        case .failure(let r): return (false, r.text)
        case .success(let on): words = { [(on ? "" : "un") + control.word, $0] }
        }
      }
      // The value is the same for every stem a pattern names: a refused one stops at the first.
      for n in names {
        if let refusal = run(words(n)) { return refusal }
      }
      return nil
    case "subscribe":
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
      return (true, "subscribed " + parsed.topics.map(\.rawValue).sorted().joined(separator: " ") + " for \(key)")
    case "unsubscribe":
      let key = OSCSocket.describe(m.source, m.sourceLength)
      subscribers.removeAll { $0.key == key }
      return (true, "unsubscribed \(key)")
    default: break
    }
    return (
      false, "unknown address \(m.path) (see docs/remote-control.md for stemdeck's OSC addresses; /stemdeck/cmd s runs any command)"
    )
  }

  /// `/stemdeck/next`, `/stemdeck/prev` (no argument, or a button's 1; its release, 0, does
  /// nothing) and `/stemdeck/goto` (a song number from 1, ,i or ,f, or its name, ,s): the setlist's
  /// commands of those names (also as `/stemdeck/song/next` …). Answered only when refused.
  func song(
    _ verb: String, _ m: OSCMessage, _ run: ([String], Bool) -> (ok: Bool, text: String)?
  ) -> (ok: Bool, text: String)? {
    if verb == "goto" {
      guard m.arguments.count == 1 else {
        return (false, "\(m.path) takes the song: its number from 1 (,i) or its name (,s); got \(m.typeTags)")
      }
      if case .string(let name) = m.arguments[0] { return run(["goto", name], false) }
      guard let n = m.arguments[0].number, n.isFinite, n == n.rounded(), n >= 1, n <= 1_000_000 else {
        return (false, "\(m.path): the song number must be a whole number from 1; got \(m.typeTags)")
      }
      return run(["goto", String(Int(n))], false)
    }
    if m.arguments.count == 1, m.arguments[0].number == 0 { return nil }  // a button's release
    guard m.arguments.isEmpty || (m.arguments.count == 1 && m.arguments[0].number == 1) else {
      return (false, "\(m.path) takes no arguments (or 1, as a button sends); got \(m.typeTags)")
    }
    return run([verb], false)
  }

  /// Commands that read or write files, refused over OSC: any local user can send UDP to the port
  /// (the control socket is its owner's only, 0600), so OSC never names a file to save over or read.
  static let fileCommands: Set<String> = ["save", "open", "add", "recover", "setlist", "record"]

  /// Why `line` is refused over OSC, or nil. Groups (`at … { … }`) hold only value changes.
  static func refusedOverOSC(_ line: String) -> String? {
    guard let commands = try? Tokenizer.commands(in: line) else { return nil }  // the run says what is wrong
    for words in commands {
      guard let first = words.first, let spec = CommandTable.lookup(first.lowercased()) else { continue }
      let sfxLoad = spec.name == "sfx" && words.count > 1 && words[1].lowercased() == "load"
      if fileCommands.contains(spec.name) || sfxLoad {
        return
          "'\(spec.name)\(sfxLoad ? " load" : "")' reads or writes files and is refused over OSC (any local user can reach a UDP port); use the control socket (stemdeck ctl), which only you can"
      }
    }
    return nil
  }

  struct Refusal: Error { let text: String; init(_ t: String) { text = t } }

  /// The stems an address names: one by name ("all" for all), or an OSC pattern (`*`, `?`,
  /// `[…]`, `{…}`) matched by liblo.
  func strips(matching name: String, kind: String, _ mixer: Mixer) -> Result<[String], Refusal> {
    let names = kind == "bus" ? mixer.busNames : kind == "input" ? mixer.inputNames : mixer.stemNames
    let plural = kind == "bus" ? "buses" : kind + "s"
    if name == "all" {
      // The commands' `all` means every stem; buses and inputs are named one by one.
      return names.isEmpty ? .failure(Refusal("no \(plural) to change")) : .success(kind == "stem" ? ["all"] : names)
    }
    if name.contains(where: { "*?[]{}".contains($0) }) {
      let matched = names.filter { lo_pattern_match($0, name) != 0 }
      return matched.isEmpty ? .failure(Refusal("no \(kind) matches the pattern '\(name)'")) : .success(matched)
    }
    return .success([name])  // an unknown name is refused by the command, with a suggestion
  }

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
  }
}
