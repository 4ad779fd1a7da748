import CWebSockets
import Foundation
import Glibc
import StemdeckJack
import StemdeckLive
import StemdeckText
import Synchronization

/// The web mixer's HTTP and WebSocket server (`--http PORT`; docs/web.md, docs/architecture.md,
/// *The web mixer*): libwebsockets on a thread of its own, `stemdeck-web`.
///
/// - Thread: the context is made on the control thread (so a port in use is an error at start),
///   then only the web thread calls libwebsockets, except `lws_cancel_service`, which is made for
///   other threads. The web thread never touches the console or the mixer: each WebSocket is
///   bridged to a Unix socket pair whose other end the control thread serves as a control-socket
///   client (`ControlServer(adopting: .web)`, WebFrontEnd.swift): a message is one request line,
///   every reply and push line one message back. Between the threads: the socket pairs, the list
///   of new control-side ends (`handed`, under `lock`, then `wakeControlLoop`), and
///   `lws_cancel_service` when the control thread has written to the pairs (`wake`).
/// - Realtime: nothing here is ever on the realtime path.
/// - Bounds: a message at most `maxMessageBytes` (a longer one closes the connection, 1009), at
///   most `maxSessions` WebSockets, headers at most 4 KiB, at most `maxQueuedBytes` of messages
///   waiting for a slow browser (then its pair is not read: the control side's own bounds apply,
///   meter frames skipped, dropped at 1 MiB), TCP keepalive and WebSocket pings for dead peers.
package final class WebServer: @unchecked Sendable {
  package struct Options {
    package var host: String
    package var port: Int
    /// The token a WebSocket must carry (`?token=`); nil on loopback.
    package var token: String?
  }

  package let options: Options
  /// The port bound (the one asked for, or the kernel's choice for 0).
  package private(set) var port = 0
  /// Every file served; nothing else is (no request path reaches the file system).
  package let assetList: [WebAsset]

  /// The longest message a browser may send (a control-socket request line's bound).
  package static let maxMessageBytes = ControlServer.maxLineBytes
  /// WebSockets at once.
  package static let maxSessions = 32
  /// Messages waiting for one browser, at most, before its pair is left unread.
  package static let maxQueuedBytes = 256 * 1024

  // Shared between the threads, under `lock`.
  private let lock = NSLock()
  private var handed: [Int32] = []
  private var stopping = false
  private var sessionCount = 0

  // The web thread's (and the creating thread's before `start`).
  private var context: OpaquePointer?
  private let protocols: UnsafeMutablePointer<lws_protocols>
  private let retry: UnsafeMutablePointer<lws_retry_bo_t>
  private var cStrings: [UnsafeMutablePointer<CChar>] = []
  private var thread: Thread?
  private let finished = DispatchSemaphore(value: 0)
  package var sessions: [Int: WebSession] = [:]
  private var nextSession = 1

  /// Binds `options.host`:`options.port` (the caller has checked both). Throws the reason
  /// libwebsockets could not listen.
  package init(options: Options, assets: [WebAsset]) throws(ControlError) {
    self.options = options
    assetList = assets
    protocols = .allocate(capacity: 2)
    protocols.initialize(repeating: lws_protocols(), count: 2)
    retry = .allocate(capacity: 1)
    retry.initialize(to: lws_retry_bo_t())
    retry.pointee.secs_since_valid_ping = 20
    retry.pointee.secs_since_valid_hangup = 60
    // libwebsockets' errors are kept, not printed (the web thread must not write over the
    // prompt); a failed start says the last one.
    lws_set_log_level(Int32(LLL_ERR), webLogLine)
    var info = lws_context_creation_info()
    info.port = Int32(options.port)
    let any = options.host == "0.0.0.0" || options.host == "::"
    info.iface = any ? nil : UnsafePointer(cString(options.host))
    protocols[0].name = UnsafePointer(cString("stemdeck"))
    protocols[0].callback = webCallback
    protocols[0].per_session_data_size = MemoryLayout<WebSlot>.size
    protocols[0].rx_buffer_size = 16 * 1024
    info.protocols = UnsafePointer(protocols)
    info.gid = -1
    info.uid = -1
    info.options = UInt64(LWS_SERVER_OPTION_VALIDATE_UTF8)
    if !options.host.contains(":") { info.options |= UInt64(LWS_SERVER_OPTION_DISABLE_IPV6) }
    info.max_http_header_data = 4096
    info.max_http_header_pool = 16
    info.ka_time = 30
    info.ka_probes = 3
    info.ka_interval = 5
    info.timeout_secs = 10
    info.keepalive_timeout = 10
    info.retry_and_idle_policy = UnsafePointer(retry)
    info.server_string = UnsafePointer(cString("stemdeck"))
    info.user = Unmanaged.passUnretained(self).toOpaque()
    WebLog.last.withLock { $0 = "" }
    let made = lws_create_context(&info)
    // A context whose listening socket could not be made (an address not of this machine) is
    // made all the same, listening on nothing.
    let bound = made.map { Int(lws_get_vhost_listen_port(lws_get_vhost_by_name($0, "default"))) } ?? 0
    guard let made, bound > 0 else {
      if let made { lws_context_destroy(made) }
      let why = WebLog.last.withLock { $0 }
      throw ControlError(
        "web mixer: cannot listen on \(options.host) port \(options.port)"
          + (why.contains("98)") ? ": the port is in use" : why.contains("DOESN'T EXIST") ? ": not an address of this machine" : "")
          + (why.isEmpty ? "" : " (libwebsockets: \(why))"))
    }
    context = made
    port = bound
  }

  deinit {
    stop()
    for p in cStrings { free(p) }
    protocols.deallocate()
    retry.deallocate()
  }

  /// A C string that lives as long as the server (libwebsockets keeps the pointers).
  private func cString(_ s: String) -> UnsafeMutablePointer<CChar> {
    let p = strdup(s)!
    cStrings.append(p)
    return p
  }

  /// Starts the web thread.
  package func start() {
    let t = Thread { [self] in
      // The web thread's whole life: libwebsockets' loop until `stop`.
      nameCurrentThread("stemdeck-web")
      while !isStopping { _ = lws_service(context, 0) }
      finished.signal()
    }
    t.stackSize = 1 << 20
    t.name = "stemdeck-web"
    thread = t
    t.start()
  }

  private var isStopping: Bool { lock.withLock { stopping } }

  /// Ends the web thread (its connections close), then the context. Control thread.
  package func stop() {
    guard let context else { return }
    if thread != nil {
      lock.withLock { stopping = true }
      lws_cancel_service(context)
      finished.wait()
      thread = nil
    }
    lws_context_destroy(context)
    self.context = nil
    for s in sessions.values { Glibc.close(s.fd) }
    sessions = [:]
    for fd in takeHanded() { Glibc.close(fd) }
  }

  /// The control-side ends of the WebSockets opened since the last call. Control thread.
  package func takeHanded() -> [Int32] {
    lock.withLock {
      defer { handed = [] }
      return handed
    }
  }

  /// Tells the web thread that the control side wrote to (or closed) some pairs. Any thread.
  package func wake() {
    if let context { lws_cancel_service(context) }
  }

  // MARK: - The web thread's side

  /// A new WebSocket: its socket pair, the control side's end handed over. False when the pair
  /// cannot be made.
  func open(_ wsi: OpaquePointer, _ slot: UnsafeMutablePointer<WebSlot>) -> Bool {
    var pair: [Int32] = [0, 0]
    guard stemdeck_socket_pair(&pair) == 0 else { return false }
    let id = nextSession
    nextSession += 1
    slot.pointee = WebSlot(kind: 2, value: id)
    sessions[id] = WebSession(wsi: wsi, fd: pair[0])
    lock.withLock {
      handed.append(pair[1])
      sessionCount = sessions.count
    }
    wakeControlLoop()
    return true
  }

  package func closed(_ slot: UnsafeMutablePointer<WebSlot>) {
    guard slot.pointee.kind == 2, let s = sessions.removeValue(forKey: slot.pointee.value) else { return }
    Glibc.close(s.fd)  // the control side reads the end of it and drops its client
    lock.withLock { sessionCount = sessions.count }
  }

  package var openSessions: Int { lock.withLock { sessionCount } }

  /// Every session reads what the control side wrote (woken by `wake`).
  package func pumpAll() {
    for s in sessions.values { pump(s) }
  }

  /// Reads reply and push lines from the pair while the browser keeps up, and asks to write.
  package func pump(_ s: WebSession) {
    flushRequests(s)
    var buffer = [UInt8](repeating: 0, count: 16 * 1024)
    while !s.ended && s.queuedBytes < Self.maxQueuedBytes {
      let n = buffer.withUnsafeMutableBytes { recv(s.fd, $0.baseAddress, $0.count, 0) }
      if n > 0 {
        s.take(buffer[..<n])
      } else if n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        s.ended = true
      } else if errno != EINTR {
        break
      }
    }
    if !s.outgoing.isEmpty || s.ended { lws_callback_on_writable(s.wsi) }
  }

  /// Passes the requests a browser sent on to the pair, as far as it takes them; the browser is
  /// not read while some wait (`lws_rx_flow_control`).
  package func flushRequests(_ s: WebSession) {
    while !s.toControl.isEmpty {
      let n = s.toControl.withUnsafeBytes { stemdeck_send_nosignal(s.fd, $0.baseAddress, UInt($0.count)) }
      if n > 0 {
        s.toControl.removeFirst(n)
      } else if n < 0 && errno == EINTR {
        continue
      } else {
        break
      }
    }
    let hold = !s.toControl.isEmpty
    if hold != s.held {
      s.held = hold
      _ = lws_rx_flow_control(s.wsi, hold ? 0 : 1)
    }
  }
}

/// What libwebsockets keeps for each connection (`per_session_data_size`): an HTTP response's
/// file and how far it is sent (kind 1), or a WebSocket's session (kind 2).
package struct WebSlot {
  package var kind: Int
  package var value: Int
  package var offset = 0
}

/// One WebSocket, on the web thread.
package final class WebSession {
  package let wsi: OpaquePointer
  /// The web thread's end of the socket pair.
  package let fd: Int32
  /// The message being received (fragments joined).
  package var incoming: [UInt8] = []
  /// Request lines not yet taken by the pair.
  package var toControl: [UInt8] = []
  package var held = false
  /// Bytes of a reply line read so far.
  package var partial: [UInt8] = []
  /// Messages for the browser, in order.
  package var outgoing: [[UInt8]] = []
  package var outgoingHead = 0
  package var queuedBytes = 0
  /// The control side closed its end: what is queued is sent, then the WebSocket closes.
  package var ended = false

  package init(wsi: OpaquePointer, fd: Int32) {
    self.wsi = wsi
    self.fd = fd
  }

  /// Splits what the pair gave into lines, each a message.
  package func take(_ bytes: ArraySlice<UInt8>) {
    var start = bytes.startIndex
    while let newline = bytes[start...].firstIndex(of: 10) {
      let line = partial + bytes[start..<newline]
      partial = []
      outgoing.append(line)
      queuedBytes += line.count
      start = newline + 1
    }
    partial += bytes[start...]
  }

  /// The next message for the browser, removed from the queue.
  package func next() -> [UInt8]? {
    guard outgoingHead < outgoing.count else { return nil }
    let m = outgoing[outgoingHead]
    outgoingHead += 1
    queuedBytes -= m.count
    if outgoingHead == outgoing.count {
      outgoing = []
      outgoingHead = 0
    }
    return m
  }

  package var hasOutgoing: Bool { outgoingHead < outgoing.count }
}

/// libwebsockets' first error line since the start began (`lws_set_log_level`'s emitter), for
/// the refusal of a start.
package enum WebLog {
  package static let last = Mutex("")
}

/// The log emitter: keeps the first line (without lws' time stamp and level), prints nothing.
package func webLogLine(_ level: Int32, _ line: UnsafePointer<CChar>?) {
  guard let line else { return }
  var text = String(decoding: UnsafeRawBufferPointer(start: line, count: strlen(line)), as: UTF8.self)
  if let close = text.range(of: "] E: ") { text = String(text[close.upperBound...]) }
  let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
  WebLog.last.withLock { if $0.isEmpty { $0 = trimmed } }  // the first says why; the others follow from it
}
