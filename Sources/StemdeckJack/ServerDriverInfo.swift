import Foundation

/// What drives a JACK server: its driver (`alsa`, `dummy`, `net`, …) and, for a NetJack2 slave
/// (`-d net`), the master it links to and the network latency in periods.
///
/// libjack tells a client nothing about the server's driver. jackd2 lists its running servers
/// (process id and name) in /dev/shm/jack-shm-registry; the driver and its options are then read
/// from that process's command line in /proc. A server in another process namespace, or one whose
/// registry layout is unknown, gives nil (shown as "unknown"). See docs/architecture.md.
public struct ServerDriverInfo: Sendable, Equatable {
  public var driver: String
  /// `-a`: the master's address, or the multicast group the slave looks for a master in.
  public var master: String?
  /// `-p`: the UDP port of the master's netmanager.
  public var udpPort: Int?
  /// `-l`: the network latency, in periods.
  public var latencyPeriods: Int?
  /// For net: whether the slave is linked to its master now (its system ports exist only then);
  /// nil when not known.
  public var linked: Bool?

  /// NetJack2's defaults (jackd -d net --help, jackd2 1.9.x).
  public static let netDefaultMulticast = "225.3.19.154"
  public static let netDefaultPort = 19000
  public static let netDefaultLatency = 5

  public init(driver: String, master: String? = nil, udpPort: Int? = nil, latencyPeriods: Int? = nil) {
    self.driver = driver
    self.master = master
    self.udpPort = udpPort
    self.latencyPeriods = latencyPeriods
  }

  /// True for an IPv4 multicast group (224.0.0.0/4): the slave finds its master there.
  public static func isMulticast(_ address: String) -> Bool {
    guard let first = address.split(separator: ".").first, let byte = Int(first) else { return false }
    return (224...239).contains(byte)
  }

  /// The value of an option in `arguments` given as `-x VALUE`, `-xVALUE`, `--long VALUE` or
  /// `--long=VALUE`.
  static func option(_ short: String, _ long: String, in arguments: ArraySlice<String>) -> String? {
    var i = arguments.startIndex
    while i < arguments.endIndex {
      let a = arguments[i]
      if a == short || a == long { return i + 1 < arguments.endIndex ? arguments[i + 1] : nil }
      if a.hasPrefix(long + "=") { return String(a.dropFirst(long.count + 1)) }
      if !a.hasPrefix("--") && a.hasPrefix(short) && a.count > short.count { return String(a.dropFirst(short.count)) }
      i += 1
    }
    return nil
  }

  /// Reads a jackd command line (the arguments after the program): the driver follows `-d`
  /// (`-dNAME`, `--driver NAME`, `--driver=NAME`); the driver's options come after it. The net
  /// driver takes its defaults for `-a` and `-p` from JACK_NETJACK_MULTICAST and JACK_NETJACK_PORT
  /// in the server's `environment`.
  public static func parse(arguments: [String], environment: [String: String] = [:]) -> ServerDriverInfo? {
    var i = 0
    var driver: String?
    while i < arguments.count {
      let a = arguments[i]
      if a == "-d" || a == "--driver" {
        driver = i + 1 < arguments.count ? arguments[i + 1] : nil
        i += 2
        break
      }
      if a.hasPrefix("--driver=") { driver = String(a.dropFirst(9)); i += 1; break }
      if a.hasPrefix("-d") && !a.hasPrefix("--") && a.count > 2 { driver = String(a.dropFirst(2)); i += 1; break }
      i += 1
    }
    guard let driver, !driver.isEmpty else { return nil }
    var info = ServerDriverInfo(driver: driver)
    if driver == "net" {
      let rest = arguments[min(i, arguments.count)...]
      info.master = option("-a", "--multicast-ip", in: rest) ?? environment["JACK_NETJACK_MULTICAST"] ?? netDefaultMulticast
      info.udpPort = (option("-p", "--udp-net-port", in: rest) ?? environment["JACK_NETJACK_PORT"]).flatMap { Int($0) } ?? netDefaultPort
      info.latencyPeriods = option("-l", "--latency", in: rest).flatMap { Int($0) } ?? netDefaultLatency
    }
    return info
  }

  /// The process id of the running jackd2 server `name` (this user's), from jackd2's registry
  /// (`jack_shm_header_t` of shm.h: 24 bytes of header, then 8 entries of { pid_t; char[257] }
  /// padded to 264 bytes; names are "jack-UID:NAME:"). nil when it is not there or unreadable.
  public static func serverProcess(named name: String, registry: String = "/dev/shm/jack-shm-registry") -> pid_t? {
    let entrySize = 264, firstEntry = 24, servers = 8
    guard let data = FileManager.default.contents(atPath: registry), data.count >= firstEntry + entrySize * servers,
      data.prefix(4) == Data("KCAJ".utf8)
    else { return nil }
    let wanted = "jack-\(getuid()):\(name):"
    for i in 0..<servers {
      let start = firstEntry + entrySize * i
      let pid = data.subdata(in: start..<(start + 4)).withUnsafeBytes { $0.loadUnaligned(as: Int32.self) }
      let nameBytes = data.subdata(in: (start + 4)..<(start + entrySize)).prefix { $0 != 0 }
      guard pid > 0, String(decoding: nameBytes, as: UTF8.self) == wanted else { continue }
      guard kill(pid, 0) == 0 || errno == EPERM else { return nil }
      return pid
    }
    return nil
  }

  /// The driver of the running server `name`, or nil when it cannot be seen from here.
  public static func of(server name: String) -> ServerDriverInfo? {
    guard let pid = serverProcess(named: name),
      let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline")
    else { return nil }
    func strings(_ data: Data) -> [String] { data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) } }
    var environment: [String: String] = [:]
    for entry in strings(FileManager.default.contents(atPath: "/proc/\(pid)/environ") ?? Data()) where entry.hasPrefix("JACK_NETJACK_") {
      let pair = entry.split(separator: "=", maxSplits: 1)
      if pair.count == 2 { environment[String(pair[0])] = String(pair[1]) }
    }
    return parse(arguments: Array(strings(data).dropFirst()), environment: environment)
  }

  /// The `driver:` line of `status`, after the colon.
  public var description: String {
    guard driver == "net" else { return driver }
    var parts: [String] = []
    if let master {
      let multicast = Self.isMulticast(master)
      switch linked {
      case true?: parts.append(multicast ? "linked to a master found by multicast on \(master)" : "linked to master \(master)")
      case false?: parts.append(multicast ? "waiting for a master by multicast on \(master)" : "waiting for master \(master)")
      case nil: parts.append(multicast ? "master found by multicast on \(master)" : "master \(master)")
      }
    }
    if let udpPort { parts.append("UDP port \(udpPort)") }
    if let latencyPeriods { parts.append("network latency \(latencyPeriods) period\(latencyPeriods == 1 ? "" : "s")") }
    return parts.isEmpty ? driver : "\(driver) (\(parts.joined(separator: ", ")))"
  }
}
