import Foundation
import StemdeckLive

/// A return URL (`osc.udp://HOST:PORT/`) as the last argument of an OSC message: the reply, and
/// for `/stemdeck/subscribe` the pushes, go to that port instead of the port the message came from
/// (as SooperLooper's `/ping` and `/register_auto_update` take one). `oscsend` sends from a
/// port of its own and exits, so without one neither it with `oscdump` beside it nor a surface
/// that sends and listens on different ports (TouchOSC, Open Stage Control) sees a reply.
///
/// The host must be the sender's own: stemdeck never sends to a third party (a message with a
/// forged return URL would otherwise aim its replies and meter pushes at anyone). A numeric
/// host must equal the sender's address; a name (a client writes its own host name, as liblo's
/// `lo_server_get_url` does) is taken to be the sender and not looked up, so no name lookup ever
/// runs on the control thread.
package enum OSCReturnURL {
  package static let scheme = "osc.udp://"

  /// Takes a return URL off the end of `m`'s arguments, if its last is one (a string starting
  /// with `osc.` and holding `://`; no command line or topic name does). Returns it.
  package static func take(from m: inout OSCMessage) -> String? {
    guard case .string(let s)? = m.arguments.last, s.lowercased().hasPrefix("osc."), s.contains("://") else { return nil }
    m.arguments.removeLast()
    return s
  }

  /// The address replies go to for `url`, sent from `source`; or why the URL is refused.
  package static func address(
    _ url: String, from source: sockaddr_storage, length: socklen_t
  ) -> Result<
    (sockaddr_storage, socklen_t), OSCServer.Refusal
  > {
    let shown = url.count > 80 ? String(url.prefix(80)) + "…" : url
    guard url.lowercased().hasPrefix(scheme) else {
      return .failure(.init("a return URL must be \(scheme)HOST:PORT/ (UDP; got '\(shown)')"))
    }
    let rest = url.dropFirst(scheme.count)
    let authority = rest.prefix { $0 != "/" }
    let host: Substring
    let portText: Substring
    if authority.hasPrefix("[") {
      guard let close = authority.firstIndex(of: "]") else {
        return .failure(.init("return URL '\(shown)': an IPv6 host needs its closing ']'"))
      }
      host = authority[authority.index(after: authority.startIndex)..<close]
      let after = authority[authority.index(after: close)...]
      portText = after.hasPrefix(":") ? after.dropFirst() : ""
    } else {
      guard let colon = authority.lastIndex(of: ":") else {
        return .failure(.init("return URL '\(shown)' has no port (\(scheme)HOST:PORT/)"))
      }
      host = authority[..<colon]
      portText = authority[authority.index(after: colon)...]
    }
    guard let port = Int(portText), (1...65535).contains(port) else {
      return .failure(.init("return URL '\(shown)': the port must be 1…65535 (got '\(portText)')"))
    }
    let sender = OSCSocket.describeHost(source, length)
    if isNumeric(String(host)), !sameHost(String(host), sender) {
      return .failure(
        .init(
          "return URL '\(shown)': replies go only to the sender's own host (\(sender)), not to \(host); stemdeck does not send to third parties"
        ))
    }
    var address = source
    OSCSocket.setPort(&address, port)
    return .success((address, length))
  }

  /// Whether `host` is a numeric IPv4 or IPv6 address.
  package static func isNumeric(_ host: String) -> Bool {
    var v4 = in_addr()
    var v6 = in6_addr()
    return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
  }

  /// Whether the numeric `host` is the address `sender` (as `describeHost` writes it); an IPv4
  /// host matches its IPv4-mapped IPv6 form.
  package static func sameHost(_ host: String, _ sender: String) -> Bool {
    func canonical(_ text: String) -> [UInt8]? {
      var v4 = in_addr()
      if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
      var v6 = in6_addr()
      guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
      let bytes = withUnsafeBytes(of: &v6) { Array($0) }
      // ::ffff:a.b.c.d is a.b.c.d.
      if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF { return Array(bytes[12...]) }
      return bytes
    }
    guard let a = canonical(host), let b = canonical(sender) else { return false }
    return a == b
  }
}
