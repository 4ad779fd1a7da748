import CLiblo
import Foundation
import StemdeckLive

/// One OSC argument, as stemdeck reads and writes them.
public enum OSCArgument: Equatable, Sendable {
  case int(Int32)
  case float(Float)
  case string(String)
  case double(Double)
  case int64(Int64)
  case bool(Bool)
  case nil_
  /// Any other type (blob, MIDI, timetag…), by its type tag: read but never acted on.
  case other(Character)

  /// The OSC type tag.
  public var tag: Character {
    switch self {
    case .int: return "i"
    case .float: return "f"
    case .string: return "s"
    case .double: return "d"
    case .int64: return "h"
    case .bool(let b): return b ? "T" : "F"
    case .nil_: return "N"
    case .other(let c): return c
    }
  }

  /// A number (i, f, d, h, T/F), else nil.
  public var number: Double? {
    switch self {
    case .int(let v): return Double(v)
    case .float(let v): return Double(v)
    case .double(let v): return v
    case .int64(let v): return Double(v)
    case .bool(let b): return b ? 1 : 0
    default: return nil
    }
  }
}

/// One OSC message received, with where it came from (replies go there).
public struct OSCMessage {
  public var path: String
  public var arguments: [OSCArgument]
  public var source: sockaddr_storage
  public var sourceLength: socklen_t

  /// The type tags, as in OSC (",fs").
  public var typeTags: String { "," + String(arguments.map(\.tag)) }
}

/// A UDP socket speaking OSC (docs/architecture.md, *Remote control*). stemdeck owns the socket
/// (non-blocking, close-on-exec, bound where it is told: 127.0.0.1 unless `--osc-host` widens
/// it, which liblo 0.31's `lo_server` cannot do) and uses liblo to decode and encode messages, so
/// every datagram is validated by liblo before stemdeck reads a field of it. Control thread only.
public final class OSCSocket {
  public private(set) var fd: Int32
  /// The port bound (the one asked for, or the one the kernel chose for port 0).
  public let port: Int
  /// Bound to a loopback address (127.0.0.0/8, ::1, an IPv4-mapped 127.x): only this machine
  /// reaches it, however the address was written (`127.1`, `localhost`).
  public let isLoopback: Bool
  /// Datagrams that were not valid OSC (counted; each got an error reply where possible).
  public private(set) var malformed = 0
  /// Messages that could not be sent (the socket's buffer was full, or the peer unreachable).
  public private(set) var sendFailures = 0
  /// One datagram at most (UDP's largest), kept between steps.
  private var buffer = [UInt8](repeating: 0, count: 65536)

  /// Binds a UDP socket on `host` (a numeric IPv4 or IPv6 address, or a name) and `port`
  /// (0: any free port).
  public init(host: String, port: Int) throws(ControlError) {
    guard (0...65535).contains(port) else { throw ControlError("OSC: the port must be 0…65535 (got \(port))") }
    var hints = addrinfo()
    hints.ai_family = AF_UNSPEC
    hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
    hints.ai_flags = AI_PASSIVE
    var list: UnsafeMutablePointer<addrinfo>?
    let r = getaddrinfo(host, String(port), &hints, &list)
    guard r == 0, let first = list else {
      throw ControlError("OSC: cannot use the address '\(host)': \(String(cString: gai_strerror(r)))")
    }
    defer { freeaddrinfo(list) }
    let s = socket(first.pointee.ai_family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard s >= 0 else { throw ControlError("OSC: socket(): \(String(cString: strerror(errno)))") }
    guard bind(s, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
      let e = errno
      Glibc.close(s)
      throw ControlError(
        "OSC: cannot listen on UDP \(host):\(port): \(String(cString: strerror(e)))"
          + (e == EADDRINUSE ? " (another program uses that port; choose another with --osc PORT)" : ""))
    }
    var bound = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    _ = withUnsafeMutablePointer(to: &bound) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(s, $0, &length) } }
    fd = s
    self.port = Self.port(of: bound)
    isLoopback = Self.isLoopback(bound)
  }

  /// An unbound socket for a client (the NSM client): the kernel picks the local port on the
  /// first send; `family` is the peer's.
  public init(clientFor family: Int32) throws(ControlError) {
    let s = socket(family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard s >= 0 else { throw ControlError("OSC: socket(): \(String(cString: strerror(errno)))") }
    fd = s
    port = 0
    isLoopback = false
  }

  deinit { close() }

  public func close() {
    if fd >= 0 { Glibc.close(fd); fd = -1 }
  }

  package static func isLoopback(_ address: sockaddr_storage) -> Bool {
    var a = address
    switch Int32(a.ss_family) {
    case AF_INET:
      let ip = withUnsafePointer(to: &a) {
        $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt32(bigEndian: $0.pointee.sin_addr.s_addr) }
      }
      return ip >> 24 == 127
    case AF_INET6:
      let bytes = withUnsafePointer(to: &a) {
        $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { p in withUnsafeBytes(of: p.pointee.sin6_addr) { Array($0) } }
      }
      if bytes == [UInt8](repeating: 0, count: 15) + [1] { return true }  // ::1
      return bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF && bytes[12] == 127  // ::ffff:127.x
    default: return false
    }
  }

  package static func port(of address: sockaddr_storage) -> Int {
    var a = address
    switch Int32(a.ss_family) {
    case AF_INET:
      return withUnsafePointer(to: &a) {
        $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
      }
    case AF_INET6:
      return withUnsafePointer(to: &a) {
        $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
      }
    default: return 0
    }
  }

  /// An address with its port set to `port` (IPv4 or IPv6).
  package static func setPort(_ address: inout sockaddr_storage, _ port: Int) {
    switch Int32(address.ss_family) {
    case AF_INET:
      withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_port = UInt16(port).bigEndian }
      }
    case AF_INET6:
      withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_port = UInt16(port).bigEndian }
      }
    default: break
    }
  }

  /// The numeric host of an address ("127.0.0.1", "::1"), for messages and comparisons.
  package static func describeHost(_ address: sockaddr_storage, _ length: socklen_t) -> String {
    let text = describe(address, length)
    guard let colon = text.lastIndex(of: ":") else { return text }
    return String(text[..<colon])
  }

  /// "host:port" of an address, for messages.
  package static func describe(_ address: sockaddr_storage, _ length: socklen_t) -> String {
    var a = address
    var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
    var serv = [CChar](repeating: 0, count: Int(NI_MAXSERV))
    let r = withUnsafePointer(to: &a) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        getnameinfo($0, length, &host, socklen_t(host.count), &serv, socklen_t(serv.count), NI_NUMERICHOST | NI_NUMERICSERV)
      }
    }
    guard r == 0 else { return "?" }
    func text(_ c: [CChar]) -> String { String(decoding: c.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self) }
    return text(host) + ":" + text(serv)
  }

  /// What one receive step read: messages, and datagrams that were not OSC (with their sender
  /// and why, for an error reply).
  public struct Received {
    public var messages: [OSCMessage] = []
    public var refused: [(reason: String, source: sockaddr_storage, length: socklen_t)] = []
  }

  /// Reads the datagrams waiting, at most `limit` (the engine is served between steps).
  public func receive(limit: Int = 64) -> Received {
    var result = Received()
    guard fd >= 0 else { return result }
    for _ in 0..<limit {
      var source = sockaddr_storage()
      var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
      let n = buffer.withUnsafeMutableBytes { raw in
        withUnsafeMutablePointer(to: &source) {
          $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(fd, raw.baseAddress, raw.count, 0, $0, &length) }
        }
      }
      if n < 0 {
        if errno == EINTR { continue }
        break  // EAGAIN: nothing more; an ICMP error of an earlier send: ignore
      }
      var messages: [OSCMessage] = []
      let reason = buffer.withUnsafeMutableBytes {
        Self.decode(UnsafeMutableRawBufferPointer(rebasing: $0[..<n]), depth: 0, into: &messages)
      }
      if let reason {
        malformed += 1
        result.refused.append((reason, source, length))
      }
      for var m in messages {
        m.source = source
        m.sourceLength = length
        result.messages.append(m)
      }
    }
    return result
  }

  /// Decodes one datagram (a message, or a bundle of them) with liblo; the reason when it is not
  /// valid OSC (then nothing of it is used).
  package static func decode(_ data: UnsafeMutableRawBufferPointer, depth: Int, into messages: inout [OSCMessage]) -> String? {
    guard let base = data.baseAddress, data.count > 0 else { return "an empty datagram is not an OSC message" }
    if data.count >= 16, memcmp(base, "#bundle", 8) == 0 {
      guard depth < 4 else { return "OSC bundles nested more than 4 deep are refused" }
      var offset = 16  // "#bundle\0" and the time tag (acted on at once: stemdeck does not schedule)
      var inner: [OSCMessage] = []
      while offset < data.count {
        guard offset + 4 <= data.count else { return "malformed OSC bundle: an element's size is cut off" }
        let size = Int(UInt32(bigEndian: data.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
        offset += 4
        guard size > 0, size % 4 == 0, offset + size <= data.count else {
          return "malformed OSC bundle: an element's size (\(size) bytes) does not fit the bundle"
        }
        if let reason = decode(UnsafeMutableRawBufferPointer(rebasing: data[offset..<(offset + size)]), depth: depth + 1, into: &inner) {
          return reason
        }
        offset += size
      }
      messages += inner
      return nil
    }
    guard base.load(as: UInt8.self) == UInt8(ascii: "/") else { return "not an OSC message: an address starts with '/'" }
    // liblo 0.31 lets some messages through whose arguments are shorter than their type tags say
    // (a 'd' with 4 bytes left: AddressSanitizer caught the 8-byte read past its buffer in the
    // fuzz test), so the sizes are checked here first, on the datagram itself.
    if let reason = checkArgumentSizes(UnsafeRawBufferPointer(data)) { return reason }
    var result: Int32 = 0
    guard let message = lo_message_deserialise(base, data.count, &result) else {
      return "malformed OSC message (liblo error \(result)): check the address, the type tags and the arguments' sizes"
    }
    defer { lo_message_free(message) }
    guard let pathPointer = lo_get_path(base, data.count) else { return "malformed OSC message: no address" }
    let path = String(cString: pathPointer)
    var arguments: [OSCArgument] = []
    let count = Int(lo_message_get_argc(message))
    if count > 0, let types = lo_message_get_types(message), let argv = lo_message_get_argv(message) {
      for i in 0..<count {
        let tag = UInt8(bitPattern: types[i])
        // T, F, N (and I) carry no data: liblo gives no argument pointer for them.
        switch tag {
        case UInt8(ascii: "T"): arguments.append(.bool(true)); continue
        case UInt8(ascii: "F"): arguments.append(.bool(false)); continue
        case UInt8(ascii: "N"): arguments.append(.nil_); continue
        default: break
        }
        guard let arg = argv[i] else { arguments.append(.other(Character(UnicodeScalar(tag)))); continue }
        switch tag {
        // liblo's buffer is only 4-byte aligned: 8-byte values are loaded unaligned.
        case UInt8(ascii: "i"): arguments.append(.int(UnsafeRawPointer(arg).loadUnaligned(as: Int32.self)))
        case UInt8(ascii: "f"): arguments.append(.float(UnsafeRawPointer(arg).loadUnaligned(as: Float.self)))
        case UInt8(ascii: "d"): arguments.append(.double(UnsafeRawPointer(arg).loadUnaligned(as: Double.self)))
        case UInt8(ascii: "h"): arguments.append(.int64(UnsafeRawPointer(arg).loadUnaligned(as: Int64.self)))
        case UInt8(ascii: "s"), UInt8(ascii: "S"):
          let text = UnsafeRawPointer(arg).assumingMemoryBound(to: CChar.self)
          arguments.append(
            .string(
              String(
                decoding: UnsafeBufferPointer(start: UnsafeRawPointer(text).assumingMemoryBound(to: UInt8.self), count: strlen(text)),
                as: UTF8.self)))
        default: arguments.append(.other(Character(UnicodeScalar(tag))))
        }
      }
    }
    messages.append(OSCMessage(path: path, arguments: arguments, source: sockaddr_storage(), sourceLength: 0))
    return nil
  }

  /// Checks that a message's arguments fit its datagram as its type tags say (OSC 1.0: strings
  /// NUL-terminated and padded to 4 bytes, blobs a size then padded bytes, i f c r m 4 bytes,
  /// d h t 8 bytes, T F N I none); the reason when they do not.
  package static func checkArgumentSizes(_ data: UnsafeRawBufferPointer) -> String? {
    /// The offset after a padded NUL-terminated string starting at `at`, or nil if it runs out.
    func afterString(_ at: Int) -> Int? {
      var i = at
      while i < data.count && data[i] != 0 { i += 1 }
      guard i < data.count else { return nil }
      let end = (i + 4) & ~3
      return end <= data.count ? end : nil
    }
    guard let tagsAt = afterString(0) else { return "malformed OSC message: the address is not terminated" }
    guard tagsAt < data.count, data[tagsAt] == UInt8(ascii: ",") else {
      // No type tag string: an old-style message without arguments is accepted only if it is empty.
      return tagsAt == data.count ? nil : "malformed OSC message: no type tag string after the address"
    }
    guard var offset = afterString(tagsAt) else { return "malformed OSC message: the type tags are not terminated" }
    var t = tagsAt + 1
    while t < data.count && data[t] != 0 {
      let needed: Int
      switch data[t] {
      case UInt8(ascii: "i"), UInt8(ascii: "f"), UInt8(ascii: "c"), UInt8(ascii: "r"), UInt8(ascii: "m"): needed = 4
      case UInt8(ascii: "d"), UInt8(ascii: "h"), UInt8(ascii: "t"): needed = 8
      case UInt8(ascii: "T"), UInt8(ascii: "F"), UInt8(ascii: "N"), UInt8(ascii: "I"), UInt8(ascii: "["), UInt8(ascii: "]"): needed = 0
      case UInt8(ascii: "s"), UInt8(ascii: "S"):
        guard let end = afterString(offset) else { return "malformed OSC message: a string argument runs past the end" }
        needed = end - offset
      case UInt8(ascii: "b"):
        guard offset + 4 <= data.count else { return "malformed OSC message: a blob's size is cut off" }
        let size = Int(UInt32(bigEndian: data.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
        needed = 4 + ((size + 3) & ~3)
      default:
        return "malformed OSC message: unknown type tag '\(Character(UnicodeScalar(data[t])))'"
      }
      guard offset + needed <= data.count else {
        return "malformed OSC message: the arguments are shorter than the type tags say"
      }
      offset += needed
      t += 1
    }
    return nil
  }

  /// The bytes of an OSC message (liblo encodes it); nil if liblo refuses it.
  package static func encode(_ path: String, _ arguments: [OSCArgument]) -> [UInt8]? {
    guard let message = lo_message_new() else { return nil }
    defer { lo_message_free(message) }
    for a in arguments {
      switch a {
      case .int(let v): lo_message_add_int32(message, v)
      case .float(let v): lo_message_add_float(message, v)
      case .double(let v): lo_message_add_double(message, v)
      case .int64(let v): lo_message_add_int64(message, v)
      case .string(let s): lo_message_add_string(message, s.replacingOccurrences(of: "\0", with: ""))
      case .bool(let b): if b { lo_message_add_true(message) } else { lo_message_add_false(message) }
      case .nil_: lo_message_add_nil(message)
      case .other: return nil
      }
    }
    let length = lo_message_length(message, path)
    guard length > 0 else { return nil }
    var bytes = [UInt8](repeating: 0, count: length)
    var size = length
    let written = bytes.withUnsafeMutableBytes { lo_message_serialise(message, path, $0.baseAddress, &size) }
    guard written != nil, size == length else { return nil }
    return bytes
  }

  /// Sends one message to `address`; false when it could not (counted in `sendFailures`): UDP
  /// never waits for a peer.
  @discardableResult
  public func send(_ path: String, _ arguments: [OSCArgument], to address: sockaddr_storage, length: socklen_t) -> Bool {
    guard fd >= 0, let bytes = Self.encode(path, arguments) else { sendFailures += 1; return false }
    var a = address
    let n = bytes.withUnsafeBytes { raw in
      withUnsafePointer(to: &a) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL), $0, length) }
      }
    }
    if n != bytes.count { sendFailures += 1; return false }
    return true
  }

  /// The address of `host`:`port` for UDP (the first one the resolver gives).
  package static func resolve(host: String, port: String) -> (sockaddr_storage, socklen_t)? {
    var hints = addrinfo()
    hints.ai_family = AF_UNSPEC
    hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
    var list: UnsafeMutablePointer<addrinfo>?
    guard getaddrinfo(host, port, &hints, &list) == 0, var first = list else { return nil }
    defer { freeaddrinfo(list) }
    // IPv4 first: liblo servers (NSM managers) listen on IPv4 by default.
    var entry: UnsafeMutablePointer<addrinfo>? = list
    while let e = entry {
      if e.pointee.ai_family == AF_INET { first = e; break }
      entry = e.pointee.ai_next
    }
    var storage = sockaddr_storage()
    withUnsafeMutableBytes(of: &storage) { raw in
      raw.copyMemory(from: UnsafeRawBufferPointer(start: first.pointee.ai_addr, count: Int(first.pointee.ai_addrlen)))
    }
    return (storage, first.pointee.ai_addrlen)
  }
}
