import Foundation
import StemdeckControl
import StemdeckLive

/// The web mixer as the control loop sees it (`--http PORT`; docs/web.md): the WebSockets the
/// web thread opened (WebServer.swift), each a control-socket client of a server of their own
/// (`ControlServer(adopting: .web)`): the same requests, replies, subscriptions, pushes, bounds
/// and parked waits as the socket, run on the control thread, with the web surface's ceiling
/// (Access.swift: mix, transport and show). Wakes the web thread when it wrote to the browsers'
/// pairs or dropped one.
package final class WebFrontEnd: FrontEnd {
  package let server: WebServer
  package let clients = ControlServer(adopting: .web)
  private var seenBytes = 0
  private var seenClients = 0

  /// The address as a browser writes it: `http://HOST:PORT/`.
  package var url: String {
    let host = server.options.host.contains(":") ? "[\(server.options.host)]" : server.options.host
    return "http://\(host):\(server.port)/"
  }

  /// Binds the server and starts its thread. A non-loopback `host` needs a token: the one kept in
  /// `tokenPath` (made there when missing).
  package init(host: String, port: Int, tokenPath: String) throws(ControlError) {
    let token = WebToken.isLoopback(host) ? nil : try WebToken.loadOrCreate(at: tokenPath)
    // libwebsockets binds an address or an interface's name, not a host name.
    let address = host.lowercased() == "localhost" ? "127.0.0.1" : host
    server = try WebServer(options: .init(host: address, port: port, token: token), assets: WebAssets.all)
    server.start()
  }

  package func service(_ console: Console) {
    for fd in server.takeHanded() { clients.adopt(fd) }
    clients.service(console)
    if clients.sentBytes != seenBytes || clients.clientCount != seenClients {
      seenBytes = clients.sentBytes
      seenClients = clients.clientCount
      server.wake()
    }
  }

  package func interest(_ i: inout ControlLoop.Interest) { clients.interest(&i) }

  package func push(_ event: LiveEvent) { clients.push(event) }

  package func close() {
    server.stop()
    clients.close()
  }
}

/// The web mixer's token (docs/web.md, *Security*): needed when it listens beyond loopback, kept
/// in the user's configuration folder (`web-token`, 0600), printed at start; the page asks for it
/// once and keeps it.
package enum WebToken {
  /// Whether `host` (an address to bind) is this machine only: 127.0.0.0/8, ::1, localhost.
  package static func isLoopback(_ host: String) -> Bool {
    if host.lowercased() == "localhost" { return true }
    var v4 = in_addr()
    if inet_pton(AF_INET, host, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
    var v6 = in6_addr()
    if inet_pton(AF_INET6, host, &v6) == 1 {
      return withUnsafeBytes(of: &v6) { $0.prefix(15).allSatisfy { $0 == 0 } && $0[15] == 1 }
    }
    return false
  }

  /// Whether a request's Host header (`name:port`, `[v6]:port`) names this machine by a loopback
  /// name or address, or the address stemdeck was asked to bind.
  package static func isLoopbackHost(_ header: String, bound: String) -> Bool {
    var name = header
    if name.hasPrefix("["), let close = name.firstIndex(of: "]") {
      name = String(name[name.index(after: name.startIndex)..<close])
    } else if let colon = name.lastIndex(of: ":") {
      name = String(name[..<colon])
    }
    return isLoopback(name) || name == bound.lowercased()
  }

  /// Compares in time that does not depend on where they differ.
  package static func matches(_ given: String, _ token: String) -> Bool {
    let a = Array(given.utf8)
    let b = Array(token.utf8)
    var difference = a.count ^ b.count
    for i in 0..<b.count { difference |= Int((i < a.count ? a[i] : 0) ^ b[i]) }
    return difference == 0
  }

  /// The token in `path`, or a new one written there (the folder made 0700, the file 0600). A
  /// file that is a link, not a regular file, another user's, readable by others, or not a token
  /// is refused with what to do.
  package static func loadOrCreate(at path: String) throws(ControlError) -> String {
    var st = stat()
    if lstat(path, &st) == 0 {
      guard st.st_mode & S_IFMT == S_IFREG else {
        throw ControlError("web mixer: the token file \(path) is not a regular file (a link or a folder is never used); remove it")
      }
      guard st.st_uid == getuid() else { throw ControlError("web mixer: the token file \(path) belongs to another user; remove it") }
      guard st.st_mode & 0o077 == 0 else {
        throw ControlError(
          "web mixer: the token file \(path) may be read by others (mode \(String(st.st_mode & 0o777, radix: 8))); chmod 600 it or remove it for a new one"
        )
      }
      guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
        throw ControlError("web mixer: cannot read the token file \(path)")
      }
      let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
      guard (16...128).contains(token.count), token.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
        throw ControlError("web mixer: the token file \(path) holds no token (16…128 letters and digits); remove it for a new one")
      }
      return token
    }
    var generator = SystemRandomNumberGenerator()
    let token = (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    let folder = (path as NSString).deletingLastPathComponent
    do {
      try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    } catch {
      throw ControlError("web mixer: cannot create the folder \(folder) for the token: \(error.localizedDescription)")
    }
    let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
    guard fd >= 0 else { throw ControlError("web mixer: cannot write the token file \(path): \(String(cString: strerror(errno)))") }
    let bytes = Array((token + "\n").utf8)
    let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    let synced = fsync(fd) == 0
    Glibc.close(fd)
    guard written == bytes.count, synced else {
      unlink(path)
      throw ControlError("web mixer: cannot write the token file \(path): \(String(cString: strerror(errno)))")
    }
    return token
  }
}
