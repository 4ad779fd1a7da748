import CJack
import Foundation
import StemdeckEngine
import StemdeckSession
import StemdeckText

/// Runs a host's engine live as a JACK client: ports, the process callback, routing that heals
/// itself, and surviving the server going away (interruption) or the master losing its
/// connections (route change). It owns none of the application: the host (`JackHost`, the live
/// session) owns the mixer and tells the driver the render state and the ports it wants.
///
/// - Thread: the control thread; `poll()` is called every few tens of milliseconds by the host's
///   service loop and does all the bookkeeping (reconnects, routing, direct outs).
public final class JackDriver: @unchecked Sendable {
  public struct Options: Sendable {
    public var clientName = "stemdeck"
    /// nil: $JACK_DEFAULT_SERVER, else "default".
    public var serverName: String?
    public var startServer = true
    /// The server to start when none runs (`--start-server`).
    public var launch: ServerLauncher.Launch = .automatic
    /// Rate, period and periods of a server started with the dummy or ALSA driver.
    public var serverSettings = ServerLauncher.Settings()
    public init() {}
  }

  /// What the driver serves (`start(_:)`); held weakly: the host owns the driver.
  public private(set) weak var host: (any JackHost)?
  /// The host's ports as last asked (`refreshPlan`, at each `poll` and `update…`).
  var plan = PortPlan()
  /// The client opened by `init`, until `start(_:)` attaches it.
  var opened: JackClient?
  /// The attached render state's voice count (the direct outs' slot limit). Kept here: the
  /// control thread never reads the process context's fields the callback writes (ThreadSanitizer
  /// sees a read of `context.pointee` as an access of the whole context).
  var maxVoices = 0
  public let clientName: String
  public let serverName: String
  let lock = NSRecursiveLock()
  var client: JackClient?
  var context: UnsafeMutablePointer<ProcessContext>?
  var masterPorts: (OpaquePointer, OpaquePointer)?
  var inputPorts: (OpaquePointer, OpaquePointer)?
  /// Direct-out ports by stem name, and the renderer slots writing to them: usually one, two
  /// while a setlist crossfade fades out an old song's stem of the same name into the same ports.
  var directPorts: [String: (slots: Set<Int>, left: OpaquePointer, right: OpaquePointer)] = [:]
  /// `sfx_L`/`sfx_R` while the session sends sound effects to their own ports.
  var effectPorts: (left: OpaquePointer, right: OpaquePointer)?
  /// `click_L`/`click_R` while the click wants its own ports (JackDriver+Monitors.swift).
  var clickPorts: (left: OpaquePointer, right: OpaquePointer)?
  /// `cue_L`/`cue_R` while a stem is cued (JackDriver+Monitors.swift).
  var cuePorts: (left: OpaquePointer, right: OpaquePointer)?
  /// `midi_in`, while the mixer wants MIDI control (Mixer+Midi.swift).
  var midiPort: OpaquePointer?
  /// `midi_out`, while the mixer sends MIDI feedback.
  var midiOutPort: OpaquePointer?
  /// The live inputs' ports by strip index (JackDriver+Inputs.swift).
  var liveInputRegistered: [Int: RegisteredPorts] = [:]
  /// The aux sends' registered ports by send index (JackDriver+Sends.swift).
  var sendRegistered: [Int: RegisteredPorts] = [:]
  public private(set) var launcher: ServerLauncher?
  let launch: ServerLauncher.Launch
  let serverSettings: ServerLauncher.Settings
  /// Connections we want, by our port's short name → full peer names. Survives server restarts.
  var intended: [String: Set<String>] = [:]
  /// Connections last seen, to tell a user's disconnect from a peer that went away.
  var lastSeen: [String: Set<String>] = [:]
  /// Connections seen vanishing (our port and peer, NUL-separated), since when, and how many
  /// ports had been unregistered then (`ProcessContext.portsUnregistered`).
  var vanishedSince: [String: (time: Date, periods: Int, unregistered: Int)] = [:]
  /// `ProcessContext.portsUnregistered` at the last `refreshSeen`: when `lastSeen` was taken.
  var unregisteredAtLastSeen = 0
  var lastGraphChange = -1
  /// The period until which `poll` looks at the routing again after a graph change: jack2 tells
  /// of a connection change before it is in the graph clients read (`jack_port_get_all_connections`
  /// reads the current state; the server switches to the new one at the start of its next cycle),
  /// so the look made on the notification can still see the old connections, and a user's
  /// disconnection went unnoticed (autopause never came: CI, 1 run in 30). jack2's graph-order
  /// callback comes after the switch, but registering it made `jack_client_close` after a server
  /// restart deadlock in libjack (jack2 issue 395) several times as often: 1 in 6 restarts here.
  var graphSettlesAt = 0
  var masterWasConnected = false
  var reconnectAt = Date.distantPast
  /// How often a lost server is looked for. An attempt without a server fails at once (the
  /// socket is missing), so a short interval costs nothing and cuts the silence after a server
  /// restart (it was 1 s: 1.2 s from kill to sound, most of it waiting).
  public static let reconnectInterval = 0.25
  var wasPlayingAtLoss = false
  /// A client opened on a server that came back at another rate than the mixer's: it waits for
  /// the session's owner (`LiveSession`, whose policy that is) to rebuild the engine at that rate
  /// and `resume(with:)`, or to `retryLater(after:)`.
  var pendingClient: JackClient?
  /// A server that went away and whose socket may still be there (JackDriver+Departure.swift).
  var departure: ServerDeparture?
  public private(set) var connected = false
  var xrunsReported = 0
  var syncMode: TransportSync = .off
  var lastJackSeconds = 0.0
  /// UUIDs of ports of a client whose server died: their properties are removed on reconnect.
  var staleSubjects: [(uuid: jack_uuid_t, prettyName: String?)] = []
  /// Whether the server answered at the last `poll` (a request that waited `ServerCalls.bound`
  /// in vain makes it false until the server answers again): told once each way.
  var serverAnswered = true
  /// False while the server does not answer (a request waited `ServerCalls.bound` seconds in
  /// vain): `status` says so instead of "connected".
  public var serverAnswering: Bool { serverAnswered }
  /// Port sets JACK refused to register (their short names) by kind, with why: not tried again
  /// while they stay wanted, told once (JackDriver+PortSets.swift).
  var refusedPorts: [String: [[String]: String]] = [:]
  /// The refused sets already told, by kind (until they are no longer wanted).
  var toldRefusals: [String: Set<[String]>] = [:]
  /// Events noted outside `poll` (a refusal while syncing ports), reported by the next `poll`.
  var pendingEvents: [DriverEvent] = []

  /// Opens the client (starting a server first when allowed and none runs); `start(_:)`
  /// activates it with the host's engine, made at `sampleRate`.
  public init(options: Options) throws(JackError) {
    let fromEnvironment = options.serverName == nil ? ProcessInfo.processInfo.environment["JACK_DEFAULT_SERVER"] : nil
    let server = options.serverName ?? fromEnvironment ?? "default"
    if let problem = JackNames.serverProblem(server) {
      throw JackError.badServerName(name: server, problem: problem, fromEnvironment: fromEnvironment != nil)
    }
    if let problem = JackNames.clientProblem(options.clientName) {
      throw JackError.badClientName(name: options.clientName, problem: problem)
    }
    serverName = server
    launch = options.launch
    serverSettings = options.serverSettings
    var opened: JackClient?
    do { opened = try JackClient(name: options.clientName, server: server) } catch {
      // A server that does not answer exists: starting another under its name cannot help.
      guard options.startServer, !error.serverNotAnswering else { throw error }
      let launch = options.launch
      launcher = try ServerLauncher(serverName: server, launch: launch, settings: options.serverSettings) {
        Self.serverReady(server, launch)
      }
      opened = try JackClient(name: options.clientName, server: server)
    }
    clientName = opened!.clientName
    self.opened = opened
  }

  /// Registers the ports, installs the callbacks and activates the client opened by `init`,
  /// running `host`'s engine.
  public func start(_ host: any JackHost) throws(JackError) {
    try lock.locked { () throws(JackError) in
      self.host = host
      guard let client = opened else { return }
      opened = nil
      try attach(client)
    }
  }

  /// Asks the host for the ports it wants now.
  func refreshPlan() {
    if let host { plan = host.portPlan }
  }

  /// Whether a server the launcher started takes clients: a net slave only once it has linked to
  /// its master (its system ports appear then; before, a client would see no outputs to connect).
  static func serverReady(_ server: String, _ launch: ServerLauncher.Launch) -> Bool {
    guard let probe = try? JackClient(name: "stemdeck-probe", server: server) else { return false }
    if case .net = launch { return !probe.portNames().isEmpty }
    return true
  }

  /// Messages about the server this driver started, for the user.
  public var startedServerMessage: String? {
    launcher.map { l in
      let source = l.fromJackdrc ? "from ~/.jackdrc" : "\(l.driver) driver"
      return "started JACK server '\(l.serverName)' (\(source), \(sampleRate) Hz: \(l.commandLine)); it stops when stemdeck exits"
    }
  }

  /// Registers ports, installs callbacks and activates; then restores intended connections.
  func attach(_ client: JackClient) throws(JackError) {
    guard let host else { throw JackError.noEngine }
    refreshPlan()
    let renderState = host.renderState
    maxVoices = renderState.pointee.maxVoices
    let left = try client.registerAudioPort("master_L", isOutput: true, prettyName: "stemdeck master left")
    let right = try client.registerAudioPort("master_R", isOutput: true, prettyName: "stemdeck master right")
    masterPorts = (left, right)
    let inL = try client.registerAudioPort("in_L", isOutput: false, prettyName: "stemdeck record input left")
    let inR = try client.registerAudioPort("in_R", isOutput: false, prettyName: "stemdeck record input right")
    inputPorts = (inL, inR)
    let ctx: UnsafeMutablePointer<ProcessContext>
    if let existing = context {
      ctx = existing
      ctx.pointee.masterLeft = left
      ctx.pointee.masterRight = right
      ctx.pointee.renderState = renderState
      ctx.pointee.serverGone.store(false, ordering: .releasing)
      for i in 0..<ctx.pointee.directPortCount { ctx.pointee.setDirectPort(i, nil) }
      ctx.pointee.updateDirectLimits(maxVoices: renderState.pointee.maxVoices)
    } else {
      ctx = .allocate(capacity: 1)
      ctx.initialize(
        to: ProcessContext(
          renderState: renderState, masterLeft: left, masterRight: right,
          maxVoices: renderState.pointee.maxVoices))
      context = ctx
    }
    forgetPorts()
    MonitorPair.click.publish(ctx, 0, 0)
    MonitorPair.cue.publish(ctx, 0, 0)
    ctx.pointee.midiPort.store(0, ordering: .releasing)
    ctx.pointee.midiOutPort.store(0, ordering: .releasing)
    ctx.pointee.effectPortLeft.store(0, ordering: .releasing)
    ctx.pointee.effectPortRight.store(0, ordering: .releasing)
    syncMode = .off  // a new client registers its timebase callback again
    refusedPorts = [:]  // a new client may register what the last one was refused
    lastSeen = [:]  // a new server has none of our connections yet: none were undone by a user
    graphSettlesAt = 0
    vanishedSince = [:]
    ctx.pointee.inputLeft = inL
    ctx.pointee.inputRight = inR
    ctx.pointee.client = client.handle
    ctx.pointee.leading.store(false, ordering: .relaxed)
    ctx.pointee.lead = TransportLeadState()
    client.setCallbacks(context: UnsafeMutableRawPointer(ctx))
    self.client = client
    try client.activate()
    connected = true
    syncDirectOuts()
    syncEffectPorts()
    syncMonitors()
    syncMidiPort()
    for kind in Self.portSetKinds { syncPortSets(kind) }
    _ = healRouting()
    masterWasConnected = masterConnectionCount() > 0
  }

  /// Stops processing and closes the client; stops a server stemdeck started. Then the host's
  /// engine can be shut down.
  public func shutdown() {
    lock.locked {
      if let client, !Self.close(client, within: 2) {
        // The client is left open (the process is ending); whatever hung keeps its reference.
        _ = Unmanaged.passRetained(client)
        let text =
          "stemdeck: the JACK client did not close within 2 s (the JACK server '\(serverName)' or its "
          + "metadata database did not answer, or libjack hung in jack_client_close); quitting "
          + "without waiting for it\n"
        _ = text.withCString { write(STDERR_FILENO, $0, strlen($0)) }
      }
      client = nil
      opened = nil
      pendingClient = nil
      connected = false
      launcher?.stop()
      launcher = nil
    }
  }

  /// Deactivates `client`, removes its ports' metadata and closes it, on a thread of its own,
  /// waiting at most `seconds`. Quitting must never hang (docs/architecture.md, *JACK metadata*
  /// and *a client opened while another closes*): jackd2's metadata database (Berkeley DB
  /// under /dev/shm, shared by every JACK process of the user) can be left locked by a process
  /// that was killed, and libjack's `jack_client_close` can hang for good when another client
  /// comes or goes at that instant (it cancels its notification thread, which may hold a lock
  /// then). Returns whether the close finished.
  static func close(_ client: JackClient, within seconds: Double) -> Bool {
    let done = DispatchSemaphore(value: 0)
    let worker = Thread {
      client.deactivate()
      client.removePortProperties()
      client.close()
      done.signal()
    }
    worker.name = "stemdeck-close"
    worker.start()
    return done.wait(timeout: .now() + seconds) == .success
  }

  deinit {
    if let context { context.deinitialize(count: 1); context.deallocate() }
  }

  // MARK: - Status

  public var sampleRate: Int {
    lock.locked { client?.sampleRate ?? opened?.sampleRate ?? Int(host?.engineSampleRate ?? 0) }
  }
  public var bufferSize: Int { lock.locked { client?.bufferSize ?? 0 } }
  public var cpuLoad: Double { lock.locked { client?.cpuLoad ?? 0 } }
  public var xruns: Int { context?.pointee.xruns.load(ordering: .relaxed) ?? 0 }
  public var periods: Int { context?.pointee.periods.load(ordering: .relaxed) ?? 0 }
  /// While leading JACK transport: whether JACK's frame equals stemdeck's in the last period,
  /// and how many locates the process callback sent to keep it so.
  public var transportLock: (locked: Bool, corrections: Int)? {
    guard let context, context.pointee.leading.load(ordering: .relaxed) else { return nil }
    return (
      context.pointee.transportLocked.load(ordering: .relaxed),
      context.pointee.transportCorrections.load(ordering: .relaxed)
    )
  }

  // MARK: - Direct outs

  /// Registers `sfx_L`/`sfx_R` while the session wants sound effects on their own ports, and
  /// unregisters them (after the process callback has let go) when it no longer does.
  func syncEffectPorts() {
    guard let client, let context else { return }
    let wanted = plan.effectPorts
    if wanted, effectPorts == nil {
      guard let l = try? client.registerAudioPort("sfx_L", isOutput: true, prettyName: "stemdeck sound effects left"),
        let r = try? client.registerAudioPort("sfx_R", isOutput: true, prettyName: "stemdeck sound effects right")
      else { return }
      effectPorts = (l, r)
      context.pointee.effectPortRight.store(Int(bitPattern: UnsafeRawPointer(r)), ordering: .releasing)
      context.pointee.effectPortLeft.store(Int(bitPattern: UnsafeRawPointer(l)), ordering: .releasing)
    } else if !wanted, let ports = effectPorts {
      context.pointee.effectPortLeft.store(0, ordering: .releasing)
      context.pointee.effectPortRight.store(0, ordering: .releasing)
      waitForTheProcessCallbackToLetGo()
      client.unregister(ports.left)
      client.unregister(ports.right)
      effectPorts = nil
    }
  }

  /// Registers `midi_in` while the mixer wants MIDI control (mappings, a learn, or `midi on`)
  /// and removes it otherwise, as the sfx ports are (the process callback stops reading it two
  /// periods before it goes).
  func syncMidiPort() {
    syncMidi("midi_out", isOutput: true, prettyName: "stemdeck MIDI feedback", wanted: plan.midiOut, port: \.midiOutPort) {
      $0.pointee.midiOutPort.store($1, ordering: .releasing)
    }
    syncMidi("midi_in", isOutput: false, prettyName: "stemdeck MIDI control", wanted: plan.midiIn, port: \.midiPort) {
      $0.pointee.midiPort.store($1, ordering: .releasing)
    }
  }

  /// Registers the MIDI port `name` while `wanted` and publishes it (`publish` stores its bit
  /// pattern, 0 for none, in the process context); removes it once not wanted, after the process
  /// callback let go of it. A port JACK refuses is tried again at the next sync.
  private func syncMidi(
    _ name: String, isOutput: Bool, prettyName: String, wanted: Bool, port: ReferenceWritableKeyPath<JackDriver, OpaquePointer?>,
    publish: (UnsafeMutablePointer<ProcessContext>, Int) -> Void
  ) {
    guard let client, let context else { return }
    if wanted, self[keyPath: port] == nil {
      guard let registered = try? client.registerAudioPort(name, isOutput: isOutput, prettyName: prettyName, midi: true) else {
        return
      }
      self[keyPath: port] = registered
      publish(context, Int(bitPattern: UnsafeRawPointer(registered)))
    } else if !wanted, let registered = self[keyPath: port] {
      publish(context, 0)
      waitForTheProcessCallbackToLetGo()
      client.unregister(registered)
      self[keyPath: port] = nil
    }
  }

  /// MIDI events read so far, and whether `midi_in` exists.
  public var midiStatus: (port: Bool, events: Int) {
    lock.locked { (midiPort != nil, context?.pointee.midiEvents.load(ordering: .relaxed) ?? 0) }
  }

  /// Registers or removes `midi_in` now (after `midi on`/`off` or a mapping change), rather than
  /// at the next `poll`.
  public func updateMidiPort() {
    lock.locked {
      refreshPlan()
      if midiOutOfStep { syncMidiPort() }
    }
  }

  var midiOutOfStep: Bool { plan.midiIn != (midiPort != nil) || plan.midiOut != (midiOutPort != nil) }

  /// Whether `midi_out` exists.
  public var midiOutputPort: Bool { lock.locked { midiOutPort != nil } }

  /// The slots that want direct outs, by stem name (the mixer's stems and, during a setlist
  /// crossfade, the old song's stems still fading out).
  /// Those whose ports JACK refused are left out (JackDriver+PortSets.swift, `unrefused`).
  func wantedDirectOuts() -> [String: Set<Int>] {
    let wanted = plan.directOuts
    let kept = unrefused(Dictionary(uniqueKeysWithValues: wanted.keys.map { ($0, Self.directOutNames($0)) }), kind: "direct out")
    return wanted.filter { kept[$0.key] != nil }
  }

  /// A strip's direct-out ports.
  static func directOutNames(_ name: String) -> [String] { ["\(name)_L", "\(name)_R"] }

  /// Registers or removes per-stem direct-out ports, and points slots at them, to match the
  /// stems' settings. A port stays registered (and connected) while any slot uses its name, so
  /// a song change between stems of the same name keeps the port; only the slots move.
  func syncDirectOuts() {
    guard let client, let context else { return }
    let wanted = wantedDirectOuts()
    // First every slot that no longer writes to a port lets go, then the new ones are set (a
    // slot may move from one name to another).
    for (name, entry) in directPorts {
      for slot in entry.slots where wanted[name]?.contains(slot) != true {
        context.pointee.setDirectPort(2 * slot, nil)
        context.pointee.setDirectPort(2 * slot + 1, nil)
      }
    }
    // The process callback fetches the buses' and inputs' slots up to the highest with ports.
    defer { context.pointee.updateDirectLimits(maxVoices: maxVoices) }
    for (name, entry) in directPorts where wanted[name] == nil {
      // Let the process callback finish any period that still uses the ports before freeing them.
      waitForTheProcessCallbackToLetGo()
      client.unregister(entry.left)
      client.unregister(entry.right)
      directPorts[name] = nil
      lastSeen["\(name)_L"] = nil
      lastSeen["\(name)_R"] = nil
      portsReleased()
    }
    for (name, slots) in wanted {
      if directPorts[name] == nil {
        let names = Self.directOutNames(name)
        let l: OpaquePointer, r: OpaquePointer
        do { l = try client.registerAudioPort(names[0], isOutput: true, prettyName: "\(name) left") } catch {
          refuse(names, kind: "direct out", error)
          continue
        }
        do { r = try client.registerAudioPort(names[1], isOutput: true, prettyName: "\(name) right") } catch {
          client.unregister(l)
          refuse(names, kind: "direct out", error)
          continue
        }
        directPorts[name] = (slots, l, r)
      }
      guard let entry = directPorts[name] else { continue }
      directPorts[name] = (slots, entry.left, entry.right)
      for slot in slots {
        context.pointee.setDirectPort(2 * slot, entry.left)
        context.pointee.setDirectPort(2 * slot + 1, entry.right)
      }
    }
  }

  // MARK: - The service loop

  /// Does the periodic work; returns what happened (`DriverEvent`), for a front end to show.
  /// Call every 20–50 ms.
  public func poll() -> [DriverEvent] {
    lock.locked {
      var lines: [DriverEvent] = []
      guard let context else { return lines }
      refreshPlan()
      if connected && context.pointee.serverGone.load(ordering: .acquiring) {
        lines.append(.serverWentAway(server: serverName, retryMilliseconds: Int(Self.reconnectInterval * 1000)))
        vanishedSince = [:]
        wasPlayingAtLoss = host?.transport.playing ?? false
        // Its ports' properties cannot be removed now (no server); the next client removes them.
        staleSubjects += client?.registeredSubjects ?? []
        serverAnswered = true  // a late request ends with the server; "went away" says the rest
        client = nil  // closes the dead client
        connected = false
        noteDeparture()
        masterPorts = nil
        forgetPorts()
        reconnectAt = Date().addingTimeInterval(Self.reconnectInterval)
      }
      if !connected {
        if pendingClient == nil && Date() >= reconnectAt {
          reconnectAt = Date().addingTimeInterval(Self.reconnectInterval)
          lines += tryReconnect()
        }
        return lines
      }
      if let client, client.serverAnswers != serverAnswered {
        serverAnswered.toggle()
        lines.append(
          serverAnswered
            ? .serverAnswersAgain(server: serverName) : .serverNotAnswering(server: serverName, seconds: Int(ServerCalls.bound)))
      }
      // Nothing to do until it answers: every request would be refused at once.
      guard serverAnswered else { return lines }
      let x = xruns
      if x > xrunsReported {
        lines.append(.xruns(new: x - xrunsReported, total: x))
        xrunsReported = x
      }
      if wantedDirectOuts() != directPorts.mapValues(\.slots) { syncDirectOuts() }
      if plan.effectPorts != (effectPorts != nil) { syncEffectPorts() }
      if monitorsOutOfStep { syncMonitors() }
      if midiOutOfStep { syncMidiPort() }
      for kind in Self.portSetKinds where portSetsOutOfStep(kind) { syncPortSets(kind) }
      syncProcessingLatency()
      lines += pendingEvents
      pendingEvents = []
      lines += syncTransport()
      let change = context.pointee.graphChanged.load(ordering: .acquiring)
      if change != lastGraphChange {
        lastGraphChange = change
        graphSettlesAt = periods + 3
      }
      if periods <= graphSettlesAt || !vanishedSince.isEmpty {
        _ = healRouting()
        let count = masterConnectionCount()
        if count == 0 && masterWasConnected { lines.append(.masterDisconnected) }
        masterWasConnected = count > 0
      }
      return lines
    }
  }

  func tryReconnect() -> [DriverEvent] {
    if let launcher, !launcher.isRunning {
      let (server, launch) = (serverName, launch)
      self.launcher = try? ServerLauncher(serverName: server, launch: launch, settings: serverSettings) {
        Self.serverReady(server, launch)
      }
    }
    guard departureAllowsOpen() else { return [] }
    let newClient: JackClient
    do { newClient = try JackClient(name: clientName, server: serverName) } catch {
      // A server back but stuck is said once; looked for again every `reconnectInterval`.
      guard error.serverNotAnswering, serverAnswered else { return [] }
      serverAnswered = false
      return [.serverNotAnswering(server: serverName, seconds: Int(ServerCalls.bound))]
    }
    if Double(newClient.sampleRate) != host?.engineSampleRate {
      pendingClient = newClient
      return []
    }
    return finishReconnect(newClient)
  }

  // MARK: - A server back at another rate

  /// The rate of a server that came back at another rate than the engine's, while its client
  /// waits for an engine at that rate (the host, `LiveSession`, rebuilds it); nil otherwise.
  public var rateAwaitingEngine: Int? { lock.locked { pendingClient?.sampleRate } }

  /// Attaches the waiting client to the host's engine, rebuilt at `rateAwaitingEngine`: what
  /// `poll()` reports of a reconnect.
  public func resume() -> [DriverEvent] {
    lock.locked {
      guard let newClient = pendingClient else { return [] }
      pendingClient = nil
      return finishReconnect(newClient)
    }
  }

  /// Closes the waiting client; the server is looked for again after `seconds`.
  public func retryLater(after seconds: Double) {
    lock.locked {
      pendingClient = nil
      reconnectAt = Date().addingTimeInterval(seconds)
    }
  }

  /// Attaches a client whose server runs at the mixer's rate: ports, callbacks, connections,
  /// and the transport as it was at the loss.
  func finishReconnect(_ newClient: JackClient) -> [DriverEvent] {
    var lines: [DriverEvent] = []
    if !serverAnswered {
      serverAnswered = true
      lines.append(.serverAnswersAgain(server: serverName))
    }
    newClient.removeProperties(ofVanished: staleSubjects)
    staleSubjects = []
    do { try attach(newClient) } catch {
      client = nil
      connected = false
      return [.reconnectFailed(reason: "\(error)")]
    }
    let restored = intended.values.reduce(0) { $0 + $1.count }
    lines.append(
      .reconnected(
        server: serverName, sampleRate: newClient.sampleRate, bufferSize: newClient.bufferSize,
        restoredConnections: restored))
    if wasPlayingAtLoss {
      host?.follow(.resume)
      lines.append(.resumingPlayback)
    }
    return lines
  }
}
