import Foundation
import StemdeckControl
import StemdeckJack
import StemdeckLive
import StemdeckSession

/// The control socket (docs/architecture.md, *Control socket*): a Unix stream socket on which
/// other programs send JSON lines `{"id": 7, "cmd": "vol drums -6dB"}` and get exactly one reply
/// line each, `{"id": 7, "ok": true, "output": [...]}` (with a query's data, a transport command's
/// frame: QueryJSON.swift) or `{"id": 7, "ok": false, "error": "...", "hint": "..."}`.
///
/// Everything is non-blocking and runs on the control thread: `service(_:)` is called from the
/// console's idle step (between lines and during waits, woken by the control loop the moment a
/// descriptor is ready: `interest`), accepts, reads, runs each request through
/// `Console.remoteReply` (the REPL's path) with its output lines captured, and writes what it can.
/// A client that does not read has its replies queued up to `maxQueuedBytes`, then it is dropped.
public final class ControlServer {
  /// The socket's path (absolute); empty for a server without a socket of its own (`adopting`).
  public let path: String
  /// Whose requests these are: `.socket`, or `.web` for the web mixer's connections.
  package let surface: Surface
  private var listenFD: Int32
  /// Until `close()`.
  private var isOpen = true
  /// Bytes written to clients so far: the web mixer wakes its thread when this grows.
  package private(set) var sentBytes = 0
  package var clients: [Client] = []
  /// Set while a request runs: a `wait` in it serves the engine through `idle`, which must not
  /// start another request.
  private var running = false
  /// The open group of requests answered without a client (in-process callers).
  private var unattachedGroup: [[String]]?
  /// Identity of the socket file made by this server, so `close()` removes only its own.
  private var identity: (dev: UInt, ino: UInt)

  /// Replies queued for a client that does not read, at most (then it is dropped).
  public static let maxQueuedBytes = 1 << 20
  /// The longest request line; a longer one gets an error reply and the client is dropped.
  public static let maxLineBytes = 64 * 1024
  /// Requests run per client per service step (the engine is served between steps).
  package static let requestsPerStep = 16
  /// Clients at once.
  package static let maxClients = 64

  package final class Client {
    package let fd: Int32
    package var input: [UInt8] = []
    package var output: [UInt8] = []
    package var closing = false
    /// The peer closed its side: its last requests are answered, then the connection closed.
    package var ended = false
    /// What it subscribed to (`{"subscribe": [...]}`), its meter rate, when its next meter frame is due.
    package var topics: Set<RemoteTopic> = []
    package var meterRate = PushRate.meterDefault
    package var nextMeter = Date.distantPast
    /// Meter frames not queued because its replies were piling up (a slow reader).
    package var droppedFrames = 0
    /// Bytes it left unread while more was queued after them (`queue`): past `maxQueuedBytes` it is dropped.
    package var unread = 0
    /// Its own open `begin … commit` group (Groups.swift), not the REPL's or another client's.
    package var group: [[String]]?
    /// Its request that waits (`wait 5`): parked here, polled each step, answered when it is
    /// over; the client's next lines wait behind it, nobody else does (RemoteRun.swift).
    package var parked: (id: Any, run: RemoteRun)?
    /// When it last sent a request or connected: the idlest client makes room when all 64 are taken.
    package var lastActive = Date()
    package init(fd: Int32) { self.fd = fd }
  }

  /// Pushed meter frames are skipped (and counted) while a client has more than this queued.
  package static let meterBacklogBytes = 64 * 1024
  package var transportSeen = ""
  package var nextTransport = Date.distantPast
  /// The mix as last told to event subscribers (`MixMark`, ControlSocket+Push.swift).
  package var mixSeen: MixMark?
  /// The `values` topic's last look (MixValues.swift).
  package var values = ValuesTracker()

  /// The default path for JACK client `client` of server `server`:
  /// `$XDG_RUNTIME_DIR/stemdeck/CLIENT.sock` on the default server, `CLIENT@SERVER.sock` on
  /// another (the same client name on two servers is two stemdecks), in `control/` of
  /// stemdeck's state folder without a runtime folder.
  public static func defaultPath(client: String, server: String) -> String {
    func safe(_ name: String) -> String { String(name.map { $0 == "/" ? "_" : $0 }) }
    let name = server == "default" ? safe(client) : safe(client) + "@" + safe(server)
    return defaultFolder() + "/" + name + ".sock"
  }

  /// The folder of the default paths: `$XDG_RUNTIME_DIR/stemdeck`, else `control/` in
  /// stemdeck's state folder.
  package static func defaultFolder() -> String {
    if let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
      return runtime + "/stemdeck"
    }
    return StatePaths.stateDirectory() + "/control"
  }

  /// A stemdeck found by its socket in the default folder (`ctl --list`).
  package struct Running: CustomStringConvertible {
    package var path: String
    package var client: String
    package var server: String
    package var description: String { server == "default" ? client : "\(client) on \(server)" }
  }

  /// The stemdecks whose sockets in the default folder answer (a stale socket, left by a killed
  /// stemdeck, does not), by name.
  package static func running() -> [Running] {
    let folder = defaultFolder()
    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
    return names.filter { $0.hasSuffix(".sock") }.sorted().compactMap { name in
      let path = folder + "/" + name
      guard answers(path) else { return nil }
      let stem = String(name.dropLast(".sock".count))
      let parts = stem.split(separator: "@", maxSplits: 1).map(String.init)
      guard let client = parts.first else { return nil }
      return Running(path: path, client: client, server: parts.count > 1 ? parts[1] : "default")
    }
  }

  /// Listens on `path`. `makeFolder`: create its folder (0700) when missing, as for the default
  /// path. Refuses a path that is a symbolic link, is not a socket, is owned by another user, or
  /// on which another program answers; a stale socket (nobody answers) is replaced.
  public init(path: String, makeFolder: Bool) throws(ControlError) {
    let absolute = Console.absolutePath(path)
    self.path = absolute
    let folder = (absolute as NSString).deletingLastPathComponent
    if makeFolder {
      if mkdir(folder, 0o700) != 0 && errno != EEXIST {
        throw ControlError("control socket: cannot create the folder \(folder): \(String(cString: strerror(errno)))")
      }
      var st = stat()
      guard lstat(folder, &st) == 0 else {
        throw ControlError("control socket: cannot use the folder \(folder): \(String(cString: strerror(errno)))")
      }
      guard st.st_mode & S_IFMT == S_IFDIR else {
        throw ControlError("control socket: \(folder) is not a folder (a symbolic link or a file is never used)")
      }
      guard st.st_uid == getuid() else {
        throw ControlError("control socket: the folder \(folder) belongs to another user (uid \(st.st_uid)); refusing it")
      }
      if st.st_mode & 0o077 != 0 { chmod(folder, 0o700) }
    }
    guard absolute.utf8.count < MemoryLayout.size(ofValue: sockaddr_un().sun_path) else {
      throw ControlError("control socket: the path \(absolute) is \(absolute.utf8.count) bytes long; a Unix socket path has at most 107")
    }
    var st = stat()
    if lstat(absolute, &st) == 0 {
      let kind = st.st_mode & S_IFMT
      if kind == S_IFLNK {
        throw ControlError("control socket: \(absolute) is a symbolic link; refusing it (remove it, or choose another path with --control)")
      }
      if kind != S_IFSOCK { throw ControlError("control socket: \(absolute) exists and is not a socket; refusing to replace it") }
      if st.st_uid != getuid() { throw ControlError("control socket: \(absolute) belongs to another user (uid \(st.st_uid)); refusing it") }
      if Self.answers(absolute) {
        throw ControlError(
          "control socket: another program already listens on \(absolute) (another stemdeck? choose another path with --control, or --no-control)"
        )
      }
      unlink(absolute)  // stale: nobody answers
    }
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw ControlError("control socket: socket(): \(String(cString: strerror(errno)))") }
    // The socket appears at its path only once it listens: bound under a temporary name beside
    // it, then renamed. A client that waits for the file (a manager told "open" before the socket
    // exists, a script polling for it) would otherwise be refused between bind and listen.
    let temporary = absolute + ".\(getpid()).new"
    let staged = temporary.utf8.count < MemoryLayout.size(ofValue: sockaddr_un().sun_path)
    let bindPath = staged ? temporary : absolute
    if staged { unlink(temporary) }  // a leftover of a killed stemdeck with this pid
    var address = Self.address(bindPath)
    // The socket file is made 0600 from the start (bind obeys the umask), then checked.
    let oldMask = umask(0o177)
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    let bindErrno = errno
    umask(oldMask)
    guard bound == 0 else {
      Glibc.close(fd)
      throw ControlError("control socket: cannot listen on \(absolute): \(String(cString: strerror(bindErrno)))")
    }
    chmod(bindPath, 0o600)
    guard listen(fd, 16) == 0, !staged || rename(temporary, absolute) == 0, lstat(absolute, &st) == 0 else {
      let e = errno
      Glibc.close(fd); unlink(bindPath)
      throw ControlError("control socket: cannot listen on \(absolute): \(String(cString: strerror(e)))")
    }
    listenFD = fd
    identity = (UInt(st.st_dev), UInt(st.st_ino))
    surface = .socket
  }

  /// A server with no socket of its own: its clients are connections another front end hands
  /// over (`adopt`), served exactly as the socket's but as `surface` (the web mixer's WebSockets,
  /// each bridged to a socket pair: WebFrontEnd.swift).
  package init(adopting surface: Surface) {
    path = ""
    listenFD = -1
    identity = (0, 0)
    self.surface = surface
  }

  /// Serves `fd` (a connected stream socket, made non-blocking here) as a client from the next step.
  package func adopt(_ fd: Int32) {
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    clients.append(Client(fd: fd))
  }

  deinit { close() }

  package static func address(_ path: String) -> sockaddr_un {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      let bytes = Array(path.utf8.prefix(raw.count - 1))
      raw.copyBytes(from: bytes)
      raw[bytes.count] = 0
    }
    return address
  }

  /// Whether something accepts connections on the socket at `path`.
  package static func answers(_ path: String) -> Bool {
    guard path.utf8.count < MemoryLayout.size(ofValue: sockaddr_un().sun_path) else { return false }
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { Glibc.close(fd) }
    var address = address(path)
    let r = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    return r == 0
  }

  /// Stops listening, drops every client and removes the socket file (only if it is still ours).
  public func close() {
    guard isOpen else { return }
    isOpen = false
    if listenFD >= 0 { Glibc.close(listenFD) }
    listenFD = -1
    for c in clients { Glibc.close(c.fd) }
    clients = []
    var st = stat()
    if lstat(path, &st) == 0, UInt(st.st_dev) == identity.dev, UInt(st.st_ino) == identity.ino { unlink(path) }
  }

  // MARK: - The service step

  /// Accepts new clients, runs their complete request lines through `console`, and writes the
  /// replies without blocking. Control thread only.
  public func service(_ console: Console) {
    guard isOpen else { return }
    if running {
      // A request is running (a `wait`): no other request starts, but subscribers keep getting pushes.
      pushDue(console)
      for client in clients { flush(client) }
      return
    }
    acceptClients()
    for client in clients {
      readAvailable(client)
      // A request that waits: its client's next lines wait behind it; it ends with the client.
      if let parked = client.parked {
        if client.ended && Self.hungUp(client.fd) {
          client.parked = nil
          client.closing = true
          continue
        }
        running = true
        let done = console.withOwnGroup(&client.group) { console.advance(parked.run) }
        running = false
        guard done else { continue }
        client.parked = nil
        var reply = parked.run.reply
        reply["id"] = parked.id
        queue(Self.encode(reply), to: client)
      }
      var handled = 0
      // A client not reading its replies gets one request a step: its work (until it is dropped
      // at `maxQueuedBytes`) is spread between the other clients' requests, not ahead of them.
      let budget = client.output.count > Self.meterBacklogBytes ? 1 : Self.requestsPerStep
      while !client.closing, client.parked == nil, handled < budget, let newline = client.input.firstIndex(of: 10) {
        let line = Array(client.input[..<newline])
        client.input.removeSubrange(...newline)
        handled += 1
        client.lastActive = Date()
        if let text = request(line, console, client: client) { queue(text, to: client) }
      }
      if !client.closing && client.input.count > Self.maxLineBytes && client.input.firstIndex(of: 10) == nil {
        queue(
          Self.encode(["id": NSNull(), "ok": false, "error": "request line longer than \(Self.maxLineBytes) bytes; closing the connection"]
          ), to: client)
        client.input = []
        client.closing = true
      }
      if client.ended && client.parked == nil && client.input.firstIndex(of: 10) == nil { client.closing = true }
    }
    pushDue(console)
    for client in clients { flush(client) }
    clients.removeAll { client in
      let done = client.closing && client.output.isEmpty || client.unread > Self.maxQueuedBytes
      if done { Glibc.close(client.fd) }
      return done
    }
  }

  /// Accepts the connections waiting. With every place taken, the client idle longest (no
  /// request running, waiting or unread) is told and closed to make room: idle connections never
  /// lock the others out; when none is idle, the newcomer is told stemdeck is busy.
  private func acceptClients() {
    while listenFD >= 0 {
      let fd = accept(listenFD, nil, nil)
      if fd < 0 { break }
      _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
      _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
      if clients.filter({ !$0.closing }).count >= Self.maxClients {
        let idle = clients.filter { !$0.closing && $0.parked == nil && !$0.input.contains(10) }.min { $0.lastActive < $1.lastActive }
        guard let idle else {
          let busy = Self.encode([
            "id": NSNull(), "ok": false, "error": "stemdeck is busy: \(Self.maxClients) clients are connected and working; try again"
          ])
          _ = Array((busy + "\n").utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
          Glibc.close(fd)
          continue
        }
        queue(
          Self.encode([
            "id": NSNull(), "ok": false,
            "error": "closing this connection: it was the idlest of \(Self.maxClients) and another client connected; reconnect when needed"
          ]), to: idle)
        idle.closing = true
        flush(idle)
      }
      clients.append(Client(fd: fd))
    }
  }

  /// The peer has closed the connection (not only its sending side): POLLHUP on a Unix stream socket.
  package static func hungUp(_ fd: Int32) -> Bool {
    var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
    return poll(&p, 1, 0) == 1 && (p.revents & Int16(POLLHUP | POLLERR)) != 0
  }

  /// What the control loop watches for this server (ControlLoop.swift): the listening socket
  /// while there is room for a client, each client's socket for reading (while it may send more)
  /// and for writing (while replies wait), and the next meter push. While a request runs (a
  /// `wait`) nothing is read, so only the writes are watched: no busy loop on a waiting line.
  public func interest(_ i: inout ControlLoop.Interest) {
    guard isOpen else { return }
    let now = Date()
    for c in clients where c.topics.contains(.meters) && !c.closing { i.due(max(now, c.nextMeter)) }
    if clients.contains(where: { !$0.topics.isEmpty }) { i.due(now.addingTimeInterval(PushRate.transportInterval)) }
    if !running && listenFD >= 0 { i.watch(listenFD) }
    for c in clients {
      let readable = !running && !c.ended && !c.closing && c.input.count < Self.maxLineBytes * 4
      i.watch(c.fd, read: readable, write: !c.output.isEmpty)
      if !running && !c.closing && c.parked == nil && c.input.contains(10) { i.workPending = true }  // lines left by the per-step bound
      if let parked = c.parked { i.due(now.addingTimeInterval(parked.run.waiting?.step ?? 0)) }  // its wait is polled
    }
  }

  /// Number of connected clients (tests, `status`).
  public var clientCount: Int { clients.count }
  /// Clients whose request waits (RemoteRun.swift).
  public var waitingCount: Int { clients.filter { $0.parked != nil }.count }

  private func readAvailable(_ client: Client) {
    // A client far ahead of its replies is not read until they are run (the kernel's buffer then
    // holds it back): its input stays bounded.
    guard client.input.count < Self.maxLineBytes * 4 else { return }
    var buffer = [UInt8](repeating: 0, count: 16 * 1024)
    // Bounded per step: a client that floods is read a step at a time.
    for _ in 0..<8 {
      let n = buffer.withUnsafeMutableBytes { recv(client.fd, $0.baseAddress, $0.count, 0) }
      if n > 0 {
        client.input += buffer[..<n]; if client.input.count > Self.maxLineBytes * 4 { break }
      } else if n == 0 {
        client.ended = true; break
      }  // the peer closed its side: reply, then close
      else {
        if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR { client.closing = true; client.output = [] }; break
      }
    }
  }

  /// Queues a line; what was queued before it and is still unread counts toward the client's
  /// bound (`maxQueuedBytes`), so one large reply reaches a client that reads.
  package func queue(_ text: String, to client: Client) {
    queue(line: Array((text + "\n").utf8), to: client)
  }

  /// Queues a line already in bytes, its line break included (one meter frame for many clients).
  package func queue(line: [UInt8], to client: Client) {
    client.unread = max(client.unread, client.output.count)
    client.output += line
  }

  private func flush(_ client: Client) {
    while !client.output.isEmpty {
      let n = client.output.withUnsafeBytes { send(client.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
      if n > 0 {
        sentBytes += n
        client.output.removeFirst(n)
        client.unread = min(client.unread, client.output.count)
        continue
      }
      if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return }
      if n < 0 && errno == EINTR { continue }
      client.output = []; client.closing = true  // gone
      return
    }
  }

  // MARK: - Requests

  /// The reply line to one request line, run to its end (a `wait` in it waits here).
  package func reply(to line: [UInt8], _ console: Console) -> String {
    request(line, console, client: nil) ?? ""
  }

  /// The reply line to one request line of `client`, or nil when the request waits (parked on
  /// the client, answered when its wait is over). Without a client it runs to its end.
  package func request(_ line: [UInt8], _ console: Console, client: Client?) -> String? {
    var bytes = line
    if bytes.last == 13 { bytes.removeLast() }  // CRLF clients
    if bytes.allSatisfy({ $0 == 32 || $0 == 9 }) {
      return Self.encode([
        "id": NSNull(), "ok": false, "error": "empty request: send a JSON object such as {\"id\": 1, \"cmd\": \"status\"}"
      ])
    }
    let object: Any
    do { object = try JSONSerialization.jsonObject(with: Data(bytes), options: []) } catch {
      return Self.encode([
        "id": NSNull(), "ok": false,
        "error": "malformed request: not valid JSON (send one object per line, such as {\"id\": 1, \"cmd\": \"status\"})"
      ])
    }
    if let key = JSONDuplicates.firstDuplicateKey(in: bytes) {
      return Self.encode([
        "id": NSNull(), "ok": false,
        "error": "malformed request: \"\(key)\" appears more than once in it; send each key once (nothing was run)"
      ])
    }
    guard let request = object as? [String: Any] else {
      return Self.encode([
        "id": NSNull(), "ok": false, "error": "malformed request: a request is a JSON object such as {\"id\": 1, \"cmd\": \"status\"}"
      ])
    }
    let id = request["id"] ?? NSNull()
    if request["subscribe"] != nil || request["unsubscribe"] != nil {
      return subscription(request, id: id, client: client, console: console)
    }
    guard let command = request["cmd"] as? String else {
      return Self.encode([
        "id": id, "ok": false, "error": "malformed request: \"cmd\" must be a string holding a command line, such as \"vol drums -6dB\""
      ])
    }
    running = true
    defer { running = false }
    // Output for a program, not fitted to stemdeck's terminal; queries add their data, transport
    // commands the frame they took effect at, errors their hint (RemoteRun.swift).
    var reply: [String: Any]
    if let client {
      let run = console.withOwnGroup(&client.group) { console.startRemote(command, from: surface) }
      guard run.finished else {
        client.parked = (id, run)
        return nil
      }
      reply = run.reply
    } else {
      reply = console.withOwnGroup(&unattachedGroup) { console.remoteReply(to: command) }
    }
    reply["id"] = id
    return Self.encode(reply)
  }

  /// One JSON line (keys sorted, so replies are stable). Characters a terminal would act on
  /// that JSONSerialization leaves as they are (DEL, C1 controls, bidirectional overrides, line
  /// separators) are written as \uXXXX escapes: the line is the same JSON, and safe to print
  /// (`terminalSafe` finds nothing to change in it).
  package static func encode(_ object: [String: Any]) -> String {
    guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]),
      let text = String(data: data, encoding: .utf8)
    else {
      return "{\"id\":null,\"ok\":false,\"error\":\"internal error: the reply could not be encoded\"}"
    }
    func escaped(_ v: UInt32) -> Bool {
      (0x7F...0x9F).contains(v) || (0x2028...0x202E).contains(v) || (0x2066...0x2069).contains(v)
    }
    guard text.unicodeScalars.contains(where: { escaped($0.value) }) else { return text }
    var out = ""
    for scalar in text.unicodeScalars {
      if escaped(scalar.value) {
        let hex = String(scalar.value, radix: 16)
        out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      } else {
        out.unicodeScalars.append(scalar)
      }
    }
    return out
  }
}

/// Why the control socket could not be set up.
public struct ControlError: Error, CustomStringConvertible {
  public let description: String
  package init(_ description: String) { self.description = description }
}
