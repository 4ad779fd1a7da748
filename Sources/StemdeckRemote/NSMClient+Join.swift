import Foundation
import StemdeckControl
import StemdeckLive
import StemdeckText

// Joining a session manager (NSMClient.swift): `NSM_URL` read and checked, the socket connected
// to the manager only, and the wait for its first `/nsm/client/open`, which ends with a reason
// a user can act on (docs/remote-control.md, *Session managers*). Control thread only.

extension NSMClient {
  /// Where a manager listens, from `NSM_URL`.
  public struct Address: Equatable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var description: String { (host.contains(":") ? "[\(host)]" : host) + ":\(port)" }
  }

  /// Reads `NSM_URL`: `osc.udp://HOST:PORT/` as managers set it (HOST a name, an IPv4 address or
  /// `[IPv6]`; PORT 1…65535; a path after it is ignored). Otherwise says which part is wrong.
  public static func parseURL(_ url: String) throws(ControlError) -> Address {
    func wrong(_ why: String) -> ControlError {
      ControlError("NSM_URL '\(printableText(url))' \(why) (a session manager sets it to osc.udp://HOST:PORT/)")
    }
    guard let scheme = url.range(of: "://"), url.hasPrefix("osc.") else { throw wrong("is not an OSC URL") }
    let proto = url[url.index(url.startIndex, offsetBy: 4)..<scheme.lowerBound]
    guard proto == "udp" else { throw wrong("uses osc.\(printableText(String(proto)))://: only UDP managers are supported") }
    var rest = url[scheme.upperBound...]
    let host: Substring
    if rest.hasPrefix("[") {
      guard let close = rest.firstIndex(of: "]") else { throw wrong("has an IPv6 host without its closing ']'") }
      host = rest[rest.index(after: rest.startIndex)..<close]
      rest = rest[rest.index(after: close)...]
    } else {
      let end = rest.firstIndex { $0 == ":" || $0 == "/" } ?? rest.endIndex
      host = rest[..<end]
      rest = rest[end...]
    }
    guard !host.isEmpty else { throw wrong("names no host") }
    guard rest.hasPrefix(":") else { throw wrong("names no port") }
    let portText = rest.dropFirst().prefix { $0 != "/" }
    guard !portText.isEmpty, portText.allSatisfy({ ("0"..."9").contains($0) }) else {
      throw wrong("has the port '\(printableText(String(portText)))', which is not a number")
    }
    guard let port = Int(portText), (1...65535).contains(port) else { throw wrong("has the port \(portText): a port is 1…65535") }
    return Address(host: String(host), port: port)
  }

  /// Connects the (unbound) UDP socket `fd` to the manager: the kernel then binds it on the
  /// address that reaches the manager (127.0.0.1 for one on this machine) instead of every
  /// interface, delivers it nothing but the manager's datagrams, and reports "nothing listens
  /// there" (an ICMP port unreachable) as ECONNREFUSED. The reason when it cannot.
  package static func connectToManager(_ fd: Int32, _ address: sockaddr_storage, _ length: socklen_t) -> String? {
    var a = address
    let r = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) } }
    return r == 0 ? nil : String(cString: strerror(errno))
  }

  /// The address to try first for a manager at `address`: 127.0.0.1 at its port when `address`
  /// is another IPv4 loopback address (Debian names the host 127.0.1.1, and managers put the
  /// host's name in NSM_URL), else nil. A manager listening on every address (liblo's servers
  /// do) answers from 127.0.0.1 whatever address it was sent to, and the connected socket would
  /// drop that answer; one that listens only on the URL's address refuses 127.0.0.1, and is then
  /// reached there (`waitForOpen`).
  package static func loopbackStandIn(_ address: sockaddr_storage) -> (sockaddr_storage, socklen_t)? {
    guard Int32(address.ss_family) == AF_INET else { return nil }
    var a = address
    let ip = withUnsafePointer(to: &a) {
      $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt32(bigEndian: $0.pointee.sin_addr.s_addr) }
    }
    let localhost: UInt32 = 0x7F00_0001
    guard ip >> 24 == 127, ip != localhost else { return nil }
    withUnsafeMutablePointer(to: &a) {
      $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr.s_addr = localhost.bigEndian }
    }
    return (a, socklen_t(MemoryLayout<sockaddr_in>.size))
  }

  /// Connects the socket to another address of the manager; the reason when it cannot.
  package func moveTo(_ address: sockaddr_storage, _ length: socklen_t) -> String? {
    manager = address
    managerLength = length
    return Self.connectToManager(socket.fd, address, length)
  }

  /// How the wait for the manager's first `/nsm/client/open` ended.
  public enum Joining: Equatable {
    /// The session to open (its client id names the JACK client).
    case opened(Open)
    /// The manager answered the announce with `/error` (its words): stemdeck runs without it.
    case announceRefused(String)
    /// stemdeck answered the manager's open with `/error` (what it told the manager).
    case openRefused(String)
    /// Nothing listens at the manager's address (the kernel's words, from ECONNREFUSED).
    case unreachable(String)
    case timedOut
    /// A signal (SIGINT, SIGTERM) while waiting.
    case interrupted
  }

  /// Waits for the manager's first `/nsm/client/open`, answering nothing else yet, at most
  /// `timeout` seconds; `slow` runs once when `slowAfter` seconds pass without it.
  public func waitForOpen(timeout: Double, slowAfter: Double, slow: () -> Void, interrupted: () -> Bool) -> Joining {
    let start = Date()
    var saidSlow = false
    while true {
      if interrupted() { return .interrupted }
      let waited = Date().timeIntervalSince(start)
      if waited >= timeout { return .timedOut }
      if !saidSlow && waited >= slowAfter {
        saidSlow = true
        slow()
      }
      var fds = pollfd(fd: socket.fd, events: Int16(POLLIN), revents: 0)
      _ = poll(&fds, 1, 50)
      // A port nobody listens on answers the announce with an ICMP error: POLLERR, read (and
      // cleared) with SO_ERROR before any receive could swallow it.
      if fds.revents & Int16(POLLERR) != 0, let problem = pendingError() {
        guard let next = untried else { return .unreachable(problem) }
        // 127.0.0.1 refused: the manager listens only on the URL's own address; announce there.
        untried = nil
        if let problem = moveTo(next.address, next.length) { return .unreachable(problem) }
        announce(executable: executable)
        continue
      }
      guard fds.revents & Int16(POLLIN) != 0 else { continue }
      for m in socket.receive().messages where fromManager(m) {
        if m.path == "/nsm/client/open" {
          switch parseOpen(m, first: true) {
          case .success(let o):
            open = o
            return .opened(o)
          case .failure(let refused): return .openRefused(refused.message)
          }
        }
        note(m)
        if let why = refusal { return .announceRefused(why) }
      }
    }
  }

  /// The socket's pending error (SO_ERROR, which reading clears), in words; nil if none.
  package func pendingError() -> String? {
    var error: Int32 = 0
    var length = socklen_t(MemoryLayout<Int32>.size)
    guard getsockopt(socket.fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0, error != 0 else { return nil }
    return String(cString: strerror(error))
  }

  /// The note when JACK gave the client another name than the manager's client id (a client
  /// of that name already runs): under a manager the name is its client id, not `--name`.
  public static func renamedClientMessage(asked: String, got: String, server: String) -> String? {
    guard asked != got else { return nil }
    return "note: the session manager's client id '\(asked)' is already a JACK client's name on server '\(server)' "
      + "(is another copy of this session's stemdeck still running?), so this one is '\(got)' (ports \(got):master_L…); "
      + "connections made for '\(asked):' will not reach it"
  }
}
