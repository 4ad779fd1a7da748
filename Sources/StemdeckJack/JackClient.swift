import CJack
import Foundation
import StemdeckText
import Synchronization

/// Why a JACK operation failed, as a case with its values. `description` words it neutrally;
/// a front end that has flags and commands to point at words it its own way (the console's
/// `JackError.consoleWords`, ErrorText.swift: `--name`, `--no-start-server`, `ports`).
public enum JackError: Error, CustomStringConvertible, Equatable, Sendable {
  /// No server of that name runs (or it refused the client).
  case serverUnavailable(server: String)
  /// A client of that name exists on the server.
  case clientNameTaken(server: String)
  /// The server speaks another protocol version than this libjack.
  case protocolMismatch(server: String)
  /// JACK could not use shared memory.
  case sharedMemory(server: String)
  /// The client could not be opened for another reason (`jack_status_t` bits).
  case openFailed(server: String, status: UInt32)
  /// The server did not answer `call` in time (`ServerCalls.bound`), or an earlier open still
  /// waits for it: a server of that name exists but is stopped or stuck, and starting another
  /// under its name cannot help.
  case notAnswering(server: String, call: String, earlierOpen: Bool)
  /// A server name JACK cannot use (`fromEnvironment`: it came from $JACK_DEFAULT_SERVER).
  case badServerName(name: String, problem: String, fromEnvironment: Bool)
  /// A client name JACK cannot use.
  case badClientName(name: String, problem: String)
  /// The driver was asked for the server while it is away.
  case notConnected(server: String)
  /// The driver was started without an engine to run.
  case noEngine
  /// jackd is not installed (`serverRunning`: none runs either, so nothing can be done).
  case jackdMissing(noServerRunning: Bool)
  /// jackd could not be run, exited at once, or was not ready in time (`log`: its log file).
  case launchFailed(LaunchFailure, log: String?)
  /// A port could not be registered (`exists`: a port of that name exists already).
  case portNotRegistered(port: String, exists: Bool)
  /// The client could not be activated.
  case notActivated(client: String)
  /// No port of that name (`suggestion`: the closest name there is).
  case unknownPort(name: String, suggestion: String?)
  /// Two outputs or two inputs (`outputs` says which).
  case sameDirection(String, String, outputs: Bool)
  /// JACK refused a connection (its error code).
  case connectRefused(source: String, destination: String, code: Int32)
  /// A disconnection of ports that are not connected.
  case notConnectedPair(source: String, destination: String)
  /// JACK refused a disconnection.
  case disconnectRefused(source: String, destination: String)

  /// How starting jackd failed.
  public enum LaunchFailure: Equatable, Sendable {
    case couldNotRun(command: String, reason: String)
    case exitedAtOnce(status: Int32)
    case notReady(seconds: Int)
    case noNetMaster(master: String, port: Int, seconds: Int)
  }

  /// The server did not answer: starting another server under its name cannot help.
  public var serverNotAnswering: Bool {
    if case .notAnswering = self { return true }
    return false
  }

  /// Neutral words (no flags or commands of a front end).
  public var description: String { words(clientNameFlag: "another client name", startHint: "let stemdeck start it", portsHint: nil) }

  /// The words, with a front end's way to change the client name, to have a server started, and
  /// to list ports (nil: no hint).
  public func words(clientNameFlag: String, startHint: String, portsHint: String?) -> String {
    switch self {
    case .serverUnavailable(let server):
      return "cannot connect to JACK server '\(server)' (is it running? start one with 'jackd -n \(server) -d dummy', or \(startHint))"
    case .clientNameTaken(let server):
      return "a JACK client with this name already exists on server '\(server)'; choose \(clientNameFlag)"
    case .protocolMismatch(let server): return "the JACK server '\(server)' speaks another protocol version than this libjack"
    case .sharedMemory(let server): return "JACK could not use shared memory (server '\(server)')"
    case .openFailed(let server, let status):
      return "JACK client could not be opened on server '\(server)' (status 0x\(String(status, radix: 16)))"
    case .notAnswering(let server, let call, let earlierOpen):
      let what =
        earlierOpen ? "an earlier jack_client_open is still waiting for it" : "\(call) got no reply within \(Int(ServerCalls.bound)) s"
      return "JACK server '\(server)' does not answer: \(what) (the server is stopped or stuck; 'jack_lsp -s \(server)' "
        + "hangs too). Stop that jackd (kill -9 if it does not end) and start it again"
    case .badServerName(let name, let problem, let fromEnvironment):
      return "JACK server name '\(printableText(name))'\(fromEnvironment ? " (from JACK_DEFAULT_SERVER)" : "") \(problem)"
    case .badClientName(let name, let problem): return "JACK client name '\(printableText(name))' \(problem)"
    case .notConnected(let server): return "not connected to JACK server '\(server)' (waiting for it to come back)"
    case .noEngine: return "the JACK client has no engine to run"
    case .jackdMissing(let none):
      return (none ? "no JACK server is running and jackd is not installed" : "jackd is not installed")
        + " (apt-get install -y --no-install-recommends jackd2)"
    case .launchFailed(let failure, let log): return failure.words + (log.map { "; see \($0)" } ?? "")
    case .portNotRegistered(let port, let exists):
      return "cannot register JACK port '\(port)'\(exists ? ": a port of that name exists already" : "")"
    case .notActivated(let client): return "cannot activate the JACK client '\(client)'"
    case .unknownPort(let name, let suggestion):
      if let guess = suggestion { return "unknown port '\(name)' — did you mean '\(guess)'?" }
      return portsHint.map { "unknown port '\(name)' (\($0))" } ?? "unknown port '\(name)'"
    case .sameDirection(let a, let b, let outputs):
      return "cannot connect '\(a)' and '\(b)': both are \(outputs ? "outputs" : "inputs"); a connection goes from an output to an input"
    case .connectRefused(let source, let destination, let code):
      return "JACK refused to connect '\(source)' to '\(destination)' (error \(code))"
    case .notConnectedPair(let source, let destination): return "'\(source)' is not connected to '\(destination)'"
    case .disconnectRefused(let source, let destination): return "JACK refused to disconnect '\(source)' from '\(destination)'"
    }
  }

  /// Decodes `jack_status_t` bits (as jack-example-tools' simple_client does).
  static func open(status: jack_status_t, server: String) -> JackError {
    let bits = status.rawValue
    func has(_ flag: JackStatus) -> Bool { bits & flag.rawValue != 0 }
    if has(JackServerFailed) || has(JackServerError) { return .serverUnavailable(server: server) }
    if has(JackNameNotUnique) { return .clientNameTaken(server: server) }
    if has(JackVersionError) { return .protocolMismatch(server: server) }
    if has(JackShmFailure) { return .sharedMemory(server: server) }
    return .openFailed(server: server, status: bits)
  }
}

extension JackError.LaunchFailure {
  var words: String {
    switch self {
    case .couldNotRun(let command, let reason): return "could not start \(command): \(reason)"
    case .exitedAtOnce(let status): return "jackd exited at once (status \(status))"
    case .notReady(let seconds): return "jackd did not become ready within \(seconds) s"
    case .noNetMaster(let master, let port, let seconds):
      let load = port == ServerDriverInfo.netDefaultPort ? "" : " -i \"-p \(port)\""
      return "the NetJack2 slave found no master at \(master) (UDP port \(port)) within \(seconds) s: is the master's JACK "
        + "server running with 'jack_load netmanager\(load)' and reachable?"
    }
  }
}

/// A port as listed by `ports`.
public struct PortInfo: Sendable, Equatable {
  public var name: String
  public var isInput: Bool
  public var isOutput: Bool
  public var isAudio: Bool
  public var isPhysical: Bool
  public var connections: [String]
}

/// Owns one `jack_client_t`. Closed on deinit (on the control thread, never in a callback).
///
/// - Thread: the control thread. Callbacks registered through it run on JACK's threads and
///   reach stemdeck only through a `ProcessContext`.
public final class JackClient: @unchecked Sendable {
  let handle: OpaquePointer
  public let serverName: String
  public let clientName: String

  /// How many times the open was done again because libjack kept a closed client's futex
  /// (JackSynchroCheck.swift): 0 almost always.
  public let reopenedForStaleFutex: Int

  /// Opens a client on `server`. The corresponding C function is `jack_client_open`
  /// (through the non-variadic shim `stemdeck_client_open`), run on a thread of its own and
  /// waited for `ServerCalls.bound` seconds at most: a server that does not answer throws
  /// `JackError.notAnswering` (ServerCalls.swift). An open during which another client closed
  /// can leave libjack unable to wake the next client given that one's place (jack2 issue 721):
  /// then it is closed and opened again, up to `staleFutexRetries` times.
  public init(name: String, server: String, staleFutexRetries: Int = JackClient.staleFutexRetries) throws(JackError) {
    setenv("JACK_DEFAULT_SERVER", server, 1)
    setenv("JACK_NO_START_SERVER", "1", 1)
    let opened = try ServerCalls.open(server: server) { () throws(JackError) in
      try Self.open(name: name, server: server, staleFutexRetries: staleFutexRetries)
    } orphan: { late in
      jack_client_close(late.handle.value)
    }
    handle = opened.handle.value
    reopenedForStaleFutex = opened.reopened
    serverName = server
    clientName = String(cString: jack_get_client_name(handle))
  }

  /// The open itself (on the open thread): the client's handle and how many times it was opened
  /// again for a stale futex.
  private static func open(
    name: String, server: String, staleFutexRetries: Int
  ) throws(JackError) -> (handle: Unchecked<OpaquePointer>, reopened: Int) {
    var reopened = 0
    while true {
      var status = jack_status_t(0)
      guard let h = stemdeck_client_open(name, 1, &status) else {
        throw JackError.open(status: status, server: server)
      }
      JackSynchroCheck.roundTrip(h)
      if reopened < staleFutexRetries && JackSynchroCheck.staysStale(server: server) {
        JackSynchroCheck.waitForQuiet(server: server)
        jack_client_close(h)
        reopened += 1
        continue
      }
      return (Unchecked(h), reopened)
    }
  }

  /// Opens after the first that found a stale futex. One is enough when this is the process's
  /// only client (libjack then starts a fresh table); with others open it cannot help.
  public static let staleFutexRetries = 3

  /// Set once `close()` has run: deinit does not close again. Atomic: the close runs on a
  /// thread of its own at quit (`JackDriver.close(_:within:)`), deinit on the control thread.
  private let closed = Atomic<Bool>(false)

  /// Closes the client now (deinit then does nothing). The corresponding C function is
  /// `jack_client_close`.
  /// Not while a metadata call that did not answer may still wake up and use the client: then
  /// the client is left open (the process is quitting or the server went away).
  /// A request too: bounded like the others, and not tried while the server does not answer.
  func close() {
    guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
    let h = Unchecked(handle)
    _ = metadata.whenQuiet { _ = metadata.server.call({ jack_client_close(h.value) }, then: {}) }
  }

  /// False while a request to the server did not answer and still waits for it
  /// (ServerCalls.swift).
  public var serverAnswers: Bool { metadata.server.answers }

  deinit { close() }

  public var sampleRate: Int { Int(jack_get_sample_rate(handle)) }
  public var bufferSize: Int { Int(jack_get_buffer_size(handle)) }
  /// DSP load in percent, as JACK measures it. The corresponding C function is `jack_cpu_load`.
  public var cpuLoad: Double { Double(jack_cpu_load(handle)) }

  /// Registers an audio port and gives it its pretty name (a property of its own: whatever a
  /// port of a dead server or killed client left under its UUID is removed first). The
  /// corresponding C function is `jack_port_register`; metadata through `PortMetadata`.
  public func registerAudioPort(
    _ shortName: String, isOutput: Bool, prettyName: String? = nil,
    midi: Bool = false
  ) throws(JackError) -> OpaquePointer {
    let flags = UInt(isOutput ? JackPortIsOutput.rawValue : JackPortIsInput.rawValue)
    let h0 = Unchecked(handle)
    let answer = metadata.request {
      Unchecked(jack_port_register(h0.value, shortName, midi ? JACK_DEFAULT_MIDI_TYPE : JACK_DEFAULT_AUDIO_TYPE, flags, 0))
    }
    guard let answer else { throw JackError.notAnswering(server: serverName, call: "jack_port_register", earlierOpen: false) }
    guard let port = answer.value else {
      let taken = jack_port_by_name(handle, "\(clientName):\(shortName)") != nil
      throw JackError.portNotRegistered(port: "\(clientName):\(shortName)", exists: taken)
    }
    let h = Unchecked(self.handle)
    let uuid = jack_port_uuid(port)
    metadata.run { PortMetadata.claim(h.value, uuid, prettyName: prettyName) }
    registered.append((port, prettyName))
    return port
  }

  /// Port metadata calls, bounded (PortMetadata.swift).
  let metadata = PortMetadata()

  /// Runs a request to the server on this client's channel, never beside a metadata call
  /// (`PortMetadata.request`).
  /// nil when the server does not answer.
  func request<T>(_ body: @escaping (OpaquePointer) -> T) -> T? {
    let h = Unchecked(handle)
    return metadata.request { body(h.value) }
  }

  /// Ports registered through this client and not unregistered yet (their properties are
  /// removed with them).
  private(set) var registered: [(port: OpaquePointer, prettyName: String?)] = []

  /// The UUIDs of this client's ports and the pretty names set on them, for cleaning up after a
  /// server that died.
  var registeredSubjects: [(uuid: jack_uuid_t, prettyName: String?)] {
    registered.map { (jack_port_uuid($0.port), $0.prettyName) }
  }

  /// Removes the pretty names of every port still registered (before closing: jack2 does not
  /// remove a closed client's metadata).
  public func removePortProperties() {
    let h = Unchecked(self.handle)
    let uuids = registered.filter { $0.prettyName != nil }.map { jack_port_uuid($0.port) }
    metadata.run { for uuid in uuids { PortMetadata.removePrettyName(h.value, uuid) } }
  }

  /// Removes the pretty names of `subjects` that no port of this server has now and that are
  /// still the ones stemdeck set: the ports of a previous client on a server that died (they
  /// could not be removed then). The database is shared by every server of the user, so a UUID
  /// whose name is another's is left alone.
  func removeProperties(ofVanished subjects: [(uuid: jack_uuid_t, prettyName: String?)]) {
    guard !subjects.isEmpty else { return }
    var live = Set<jack_uuid_t>()
    for name in portNames() { if let p = jack_port_by_name(handle, name) { live.insert(jack_port_uuid(p)) } }
    let gone = subjects.filter { !live.contains($0.uuid) && $0.prettyName != nil }.map { ($0.uuid, $0.prettyName) }
    let h = Unchecked(self.handle)
    metadata.run {
      for (uuid, name) in gone where PortMetadata.prettyName(of: uuid) == name {
        PortMetadata.removePrettyName(h.value, uuid)
      }
    }
  }

  /// The port's latency range maximum in frames, for the capture or playback direction.
  /// The corresponding C function is `jack_port_get_latency_range`.
  public func latency(of port: OpaquePointer, capture: Bool) -> Int {
    var range = jack_latency_range_t()
    jack_port_get_latency_range(port, capture ? JackCaptureLatency : JackPlaybackLatency, &range)
    return Int(range.max)
  }

  /// Removes the port's pretty name, then the port. The corresponding C function is
  /// `jack_port_unregister`.
  public func unregister(_ port: OpaquePointer) {
    if registered.contains(where: { $0.port == port && $0.prettyName != nil }) {
      let h = Unchecked(self.handle)
      let uuid = jack_port_uuid(port)
      metadata.run { PortMetadata.removePrettyName(h.value, uuid) }
    }
    registered.removeAll { $0.port == port }
    _ = request { jack_port_unregister($0, port) }
  }

  func setCallbacks(context: UnsafeMutableRawPointer) {
    jack_set_process_callback(handle, stemdeckProcess, context)
    jack_set_xrun_callback(handle, stemdeckXrun, context)
    jack_on_info_shutdown(handle, stemdeckShutdown, context)
    jack_set_port_registration_callback(handle, stemdeckPortRegistration, context)
    jack_set_port_connect_callback(handle, stemdeckPortConnect, context)
    jack_set_sample_rate_callback(handle, stemdeckSampleRate, context)
    jack_set_latency_callback(handle, stemdeckLatency, context)
  }

  public func activate() throws(JackError) {
    guard let result = request({ jack_activate($0) }) else {
      throw JackError.notAnswering(server: serverName, call: "jack_activate", earlierOpen: false)
    }
    if result != 0 { throw JackError.notActivated(client: clientName) }
  }

  public func deactivate() { _ = request { jack_deactivate($0) } }

  // MARK: - Patchbay

  /// All port names matching `pattern` (a JACK regular expression; nil for all).
  /// The corresponding C function is `jack_get_ports`.
  public func portNames(matching pattern: String? = nil, flags: UInt = 0) -> [String] {
    guard let list = jack_get_ports(handle, pattern, nil, flags) else { return [] }
    defer { jack_free(UnsafeMutableRawPointer(mutating: list)) }
    var out: [String] = []
    var i = 0
    while let p = list[i] { out.append(String(cString: p)); i += 1 }
    return out
  }

  /// Ports with their directions and connections.
  public func ports(matching pattern: String? = nil) -> [PortInfo] {
    portNames(matching: pattern).compactMap { name in
      guard let port = jack_port_by_name(handle, name) else { return nil }
      let flags = UInt32(jack_port_flags(port))
      let type = jack_port_type(port).map { String(cString: $0) } ?? ""
      return PortInfo(
        name: name, isInput: flags & JackPortIsInput.rawValue != 0, isOutput: flags & JackPortIsOutput.rawValue != 0,
        isAudio: type.contains("audio"), isPhysical: flags & JackPortIsPhysical.rawValue != 0,
        connections: connections(of: name))
    }
  }

  /// Full names of the ports connected to `portName`. The corresponding C function is
  /// `jack_port_get_all_connections`.
  public func connections(of portName: String) -> [String] {
    guard let port = jack_port_by_name(handle, portName),
      let list = jack_port_get_all_connections(handle, port)
    else { return [] }
    defer { jack_free(UnsafeMutableRawPointer(mutating: list)) }
    var out: [String] = []
    var i = 0
    while let p = list[i] { out.append(String(cString: p)); i += 1 }
    return out
  }

  public func portExists(_ name: String) -> Bool { jack_port_by_name(handle, name) != nil }

  /// Whether the port `name` is an input (nil: no such port). The corresponding C function is
  /// `jack_port_flags`.
  public func isInput(_ name: String) -> Bool? {
    guard let port = jack_port_by_name(handle, name) else { return nil }
    return UInt32(jack_port_flags(port)) & JackPortIsInput.rawValue != 0
  }

  /// Checks both ports exist and run output → input; returns them in that order.
  func orderedPair(_ a: String, _ b: String) throws(JackError) -> (source: String, destination: String) {
    let all = portNames()
    for name in [a, b] where jack_port_by_name(handle, name) == nil {
      throw JackError.unknownPort(name: name, suggestion: closestPort(to: name, in: all))
    }
    let fa = UInt32(jack_port_flags(jack_port_by_name(handle, a)))
    let fb = UInt32(jack_port_flags(jack_port_by_name(handle, b)))
    let aOut = fa & JackPortIsOutput.rawValue != 0, bOut = fb & JackPortIsOutput.rawValue != 0
    if aOut && !bOut { return (a, b) }
    if bOut && !aOut { return (b, a) }
    throw JackError.sameDirection(a, b, outputs: aOut)
  }

  /// Connects two ports (either order). The corresponding C function is `jack_connect`.
  public func connect(_ a: String, _ b: String) throws(JackError) {
    let pair = try orderedPair(a, b)
    guard let result = request({ jack_connect($0, pair.source, pair.destination) }) else {
      throw JackError.notAnswering(server: serverName, call: "jack_connect", earlierOpen: false)
    }
    if result != 0 && result != EEXIST {
      throw JackError.connectRefused(source: pair.source, destination: pair.destination, code: result)
    }
  }

  /// Disconnects two ports (either order). The corresponding C function is `jack_disconnect`.
  public func disconnect(_ a: String, _ b: String) throws(JackError) {
    let pair = try orderedPair(a, b)
    guard connections(of: pair.source).contains(pair.destination) else {
      throw JackError.notConnectedPair(source: pair.source, destination: pair.destination)
    }
    guard let result = request({ jack_disconnect($0, pair.source, pair.destination) }) else {
      throw JackError.notAnswering(server: serverName, call: "jack_disconnect", earlierOpen: false)
    }
    if result != 0 {
      throw JackError.disconnectRefused(source: pair.source, destination: pair.destination)
    }
  }

  func closestPort(to name: String, in all: [String]) -> String? {
    Suggestion.closest(to: name, in: all)
  }
}
