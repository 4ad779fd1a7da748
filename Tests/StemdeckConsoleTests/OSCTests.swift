import Foundation
import Testing
@testable import StemdeckConsole
import StemdeckControl
import StemdeckSession
import StemdeckTestSupport

@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

#if canImport(Glibc)
import Glibc
#endif

/// The OSC layer without a network peer (the peers are in IntegrationTests.RemoteControlTests):
/// liblo's encoding and decoding as stemdeck uses it, bundles, refusals, and every address run
/// against an offline mixer, where a refused message must change nothing (`MixerSnapshot`).
@Suite("OSC")
struct OSCTests {
  /// Decodes `bytes` as one datagram.
  static func decode(_ bytes: [UInt8]) -> (messages: [OSCMessage], reason: String?) {
    var copy = bytes
    var messages: [OSCMessage] = []
    let reason = copy.withUnsafeMutableBytes { OSCSocket.decode($0, depth: 0, into: &messages) }
    return (messages, reason)
  }

  /// Arguments shorter than their type tags: each is refused before liblo sees it (liblo 0.31
  /// let a 'd' with 4 bytes through, and reading it went past its buffer under AddressSanitizer).
  @Test("arguments shorter than their type tags are refused: d, h, t with 4 bytes, an unterminated string, a blob past the end")
  func shortArguments() {
    let address: [UInt8] = Array("/a".utf8) + [0, 0]
    func tags(_ t: String) -> [UInt8] {
      let b = Array(("," + t).utf8) + [0]; return b + [UInt8](repeating: 0, count: (4 - b.count % 4) % 4)
    }
    let cases: [[UInt8]] = [
      address + tags("d") + [0x3f, 0xf0, 0, 0],
      address + tags("h") + [0, 0, 0, 1],
      address + tags("t") + [0, 0, 0, 1],
      address + tags("fd") + [0, 0, 0, 0, 0, 0, 0, 0],
      address + tags("s") + Array("abcd".utf8),
      address + tags("b") + [0, 0, 0, 8, 1, 2, 3, 4]
    ]
    for bytes in cases {
      let r = Self.decode(bytes)
      #expect(r.messages.isEmpty && r.reason?.hasPrefix("malformed OSC message") == true, "\(bytes): \(String(describing: r.reason))")
    }
    // Whole ones still read, with their values.
    let whole = Self.decode(address + tags("dh") + [0x3f, 0xf0, 0, 0, 0, 0, 0, 0] + [0, 0, 0, 0, 0, 0, 0, 7])
    #expect(whole.reason == nil && whole.messages.first?.arguments == [.double(1), .int64(7)], "\(whole)")
  }

  static func bundle(_ elements: [[UInt8]]) -> [UInt8] {
    var out = header
    for e in elements {
      let n = UInt32(e.count).bigEndian
      out += withUnsafeBytes(of: n) { Array($0) } + e
    }
    return out
  }

  @Test("every argument type stemdeck writes is read back as written (liblo encodes and decodes)")
  func roundTrip() throws {
    let arguments: [OSCArgument] = [
      .int(-7), .float(-6.5), .string("vol drums -6dB"), .double(0.125), .int64(1 << 40),
      .bool(true), .bool(false), .nil_, .string("")
    ]
    let bytes = try #require(OSCSocket.encode("/stemdeck/reply", arguments))
    #expect(bytes.count % 4 == 0)
    let decoded = Self.decode(bytes)
    #expect(decoded.reason == nil)
    try #require(decoded.messages.count == 1)
    #expect(decoded.messages[0].path == "/stemdeck/reply")
    #expect(decoded.messages[0].arguments == arguments)
    #expect(decoded.messages[0].typeTags == ",ifsdhTFNs")
  }

  @Test("a bundle's messages are taken apart in order; nested bundles too, up to 4 deep")
  func bundles() throws {
    let a = try #require(OSCSocket.encode("/stemdeck/ping", []))
    let b = try #require(OSCSocket.encode("/stemdeck/stem/drums/vol", [.float(-3)]))
    let decoded = Self.decode(Self.bundle([a, Self.bundle([b])]))
    #expect(decoded.reason == nil)
    #expect(decoded.messages.map(\.path) == ["/stemdeck/ping", "/stemdeck/stem/drums/vol"])
    var deep = b
    for _ in 0..<6 { deep = Self.bundle([deep]) }
    #expect(Self.decode(deep).reason?.contains("nested more than 4 deep") == true)
  }

  static let header: [UInt8] = Array("#bundle".utf8) + [0, 0, 0, 0, 0, 0, 0, 0, 1]
  static let truncatedVol: [UInt8] = Array("/stemdeck/stem/drums/vol".utf8) + [0, 0, 0, 0, 44, 102, 0, 0, 1]
  static let notOSC: [([UInt8], String)] = [
    ([], "empty datagram"),
    (Array("hello".utf8), "an address starts with '/'"),
    (truncatedVol, "malformed OSC message"),
    (Array("/stemdeck/ping".utf8), "malformed OSC message"),
    (header + [0, 0, 0, 64, 47, 0, 0, 0], "does not fit the bundle"),
    (header + [0, 0], "size is cut off")
  ]

  @Test("datagrams that are not OSC are refused with a reason and yield no message", arguments: notOSC)
  func refused(_ bytes: [UInt8], _ reason: String) {
    let decoded = Self.decode(bytes)
    #expect(decoded.messages.isEmpty)
    #expect(decoded.reason?.contains(reason) == true, "\(decoded.reason ?? "accepted")")
  }

  @Test("20,000 random and mutated datagrams: each is read or refused, never a crash")
  func fuzz() throws {
    var random = SplitMix64(seed: 20)
    let valid = try #require(OSCSocket.encode("/stemdeck/stem/drums/vol", [.float(-6), .string("x"), .int(1)]))
    var read = 0, refused = 0
    for i in 0..<20_000 {
      var bytes: [UInt8]
      if i % 2 == 0 {
        bytes = valid
        for _ in 0..<(1 + Int(random.next() % 4)) {
          bytes[Int(random.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: random.next())
        }
        if random.next() % 4 == 0 { bytes = Array(bytes.prefix(Int(random.next() % UInt64(bytes.count)))) }
      } else {
        bytes = [47] + (0..<Int(random.next() % 64)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
      }
      let decoded = Self.decode(bytes)
      if decoded.reason == nil { read += 1 } else { refused += 1; #expect(decoded.messages.isEmpty) }
    }
    #expect(read + refused == 20_000)
    #expect(read > 0 && refused > 0, "read \(read), refused \(refused)")
  }

  @Test("each address runs its command on the mixer; a pattern names several stems")
  func addresses() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let server = try OSCServer(host: "127.0.0.1", port: 0)
    defer { server.close() }
    func send(_ path: String, _ arguments: [OSCArgument] = []) -> (ok: Bool, text: String)? {
      server.handle(OSCMessage(path: path, arguments: arguments, source: sockaddr_storage(), sourceLength: 0), h.console)
    }
    #expect(send("/stemdeck/stem/drums/vol", [.float(-6)]) == nil)
    #expect(abs(MixerSnapshot(h)[stem: "drums"].volume - linear(decibels: -6)) < 1e-6)
    #expect(send("/stemdeck/stem/bass/pan", [.double(-0.5)]) == nil)
    #expect(send("/stemdeck/stem/bass/rate", [.int(2)]) == nil)
    #expect(send("/stemdeck/stem/*/mute", [.int(1)]) == nil)
    #expect(send("/stemdeck/stem/drums/solo", [.bool(true)]) == nil)
    #expect(send("/stemdeck/stem/{drums,bass}/vol", [.float(-.infinity)]) == nil)
    #expect(send("/stemdeck/master/vol", [.float(-3)]) == nil)
    let after = MixerSnapshot(h)
    #expect(after[stem: "bass"].pan == -0.5 && after[stem: "bass"].rate == 2)
    #expect(after[stem: "drums"].mute && after[stem: "bass"].mute && after[stem: "drums"].solo && !after[stem: "bass"].solo)
    #expect(after[stem: "drums"].volume == 0 && after[stem: "bass"].volume == 0)
    #expect(abs(after.masterVolume - linear(decibels: -3)) < 1e-6)
    #expect(send("/stemdeck/ping")?.text == "pong")
    let reply = send("/stemdeck/cmd", [.string("echo one; echo two")])
    #expect(reply?.ok == true && reply?.text == "one\ntwo")
    #expect(send("/stemdeck/transport/locate", [.float(1.5)]) == nil)
    #expect(abs(h.mixer.transport.position - 1.5) < 0.001)
  }

  @Test("buses, live inputs and aux sends by address: vol/pan/mute/solo, a send level keeping its tap point, a return")
  func stripAddresses() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let server = try OSCServer(host: "127.0.0.1", port: 0)
    defer { server.close() }
    func send(_ path: String, _ arguments: [OSCArgument] = []) -> (ok: Bool, text: String)? {
      server.handle(OSCMessage(path: path, arguments: arguments, source: sockaddr_storage(), sourceLength: 0), h.console)
    }
    for line in ["bus add grp", "bus add keys_bus", "input add mic mono", "send add verb", "send mic verb -20dB pre"] {
      #expect(h.run(line).ok, "\(line)")
    }
    #expect(send("/stemdeck/bus/grp/vol", [.float(-6)]) == nil)
    #expect(send("/stemdeck/bus/*/mute", [.int(1)]) == nil)
    #expect(send("/stemdeck/input/mic/pan", [.float(0.25)]) == nil)
    #expect(send("/stemdeck/input/all/solo", [.int(1)]) == nil)
    #expect(send("/stemdeck/send/mic/verb", [.float(-10)]) == nil)
    #expect(send("/stemdeck/send/drums/verb", [.float(-12)]) == nil)
    #expect(send("/stemdeck/return/verb", [.float(-3)]) == nil)
    let grp = try h.mixer.buses.setting("grp")
    let keys = try h.mixer.buses.setting("keys_bus")
    #expect(abs(grp.volume - linear(decibels: -6)) < 1e-6 && grp.mute && keys.mute)
    let mic = try h.mixer.inputs.status("mic").settings
    #expect(mic.pan == 0.25 && mic.solo)
    let verb = try #require(h.mixer.sends.all.first { $0.name == "verb" })
    #expect(verb.levels["mic"].map { abs($0.gain - linear(decibels: -10)) < 1e-6 && $0.preFader } == true, "\(verb.levels)")
    #expect(verb.levels["drums"].map { abs($0.gain - linear(decibels: -12)) < 1e-6 && !$0.preFader } == true)
    #expect(abs(verb.returnVolume - linear(decibels: -3)) < 1e-6)
    #expect(send("/stemdeck/send/mic/verb", [.float(-.infinity)]) == nil)
    #expect(h.mixer.sends.all.first { $0.name == "verb" }?.levels["mic"] == nil)
    for (path, why) in [
      ("/stemdeck/bus/grp/rate", "'grp' is a bus; this applies to stems only"),
      ("/stemdeck/bus/grp/gain", "a bus's addresses are vol (dB), pan, width, mute, solo"), ("/stemdeck/bus/nosuch/vol", "nosuch"),
      ("/stemdeck/input/x*/mute", "no input matches the pattern 'x*'"), ("/stemdeck/send/mic/nosuch", "nosuch")
    ] {
      let reply = send(path, [.float(0)])
      #expect(reply?.ok == false && reply?.text.contains(why) == true, "\(path): \(reply?.text ?? "no reply")")
    }
  }

  @Test(
    "a refused message answers why and changes nothing",
    arguments: [
      ("/stemdeck/stem/drums/vol", [OSCArgument.string("-6")], "got ,s"),
      ("/stemdeck/stem/drums/vol", [.float(.nan)], "not NaN"),
      ("/stemdeck/stem/drums/vol", [.float(.infinity)], "at most +6 dB"),
      ("/stemdeck/stem/drums/vol", [.float(-6), .float(-6)], "got ,ff"),
      ("/stemdeck/stem/drums/vol", [], "got ,"),
      ("/stemdeck/stem/drums/vol", [.float(12)], "volume"),
      ("/stemdeck/stem/drms/vol", [.float(-6)], "unknown stem 'drms'"),
      ("/stemdeck/stem/x*/mute", [.int(1)], "no stem matches the pattern 'x*'"),
      ("/stemdeck/stem/drums/mute", [.int(2)], "1 (on) or 0 (off)"),
      ("/stemdeck/stem/drums/pan", [.double(3)], "pan"),
      ("/stemdeck/stem/drums/rate", [.float(0.1)], "rate"),
      ("/stemdeck/stem/drums/gain", [.float(1)], "unknown address"),
      ("/stemdeck/transport/locate", [.float(-1)], "0 or more seconds"),
      ("/stemdeck/transport/play", [.string("now")], "takes no arguments"),
      ("/stemdeck/master/vol", [.bool(true)], "takes one number"),
      ("/other/thing", [], "start with /stemdeck/"),
      ("/stemdeck/cmd", [.string("vol drums 0.5; save /tmp/osc-never.json")], "refused over OSC"),
      ("/stemdeck/cmd", [.string("add /etc/passwd")], "refused over OSC"),
      ("/stemdeck/cmd", [.string("sfx load k /etc/passwd")], "refused over OSC"),
      ("/stemdeck/cmd", [.string("vol drums 9")], "got 9"),
      ("/stemdeck/subscribe", [.string("noise")], "topics are events, meters, transport"),
      ("/stemdeck/subscribe", [.string("meters"), .float(500)], "1…60"),
      ("/stemdeck/next", [.string("x")], "takes no arguments"),
      ("/stemdeck/next", [], "no setlist loaded"),
      ("/stemdeck/song/prev", [.int(1)], "no setlist loaded"),
      ("/stemdeck/goto", [], "takes the song"),
      ("/stemdeck/goto", [.float(1.5)], "whole number from 1"),
      ("/stemdeck/song/goto", [.int(2)], "no setlist loaded")
    ])
  func refusals(_ path: String, _ arguments: [OSCArgument], _ why: String) throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let server = try OSCServer(host: "127.0.0.1", port: 0)
    defer { server.close() }
    let before = MixerSnapshot(h)
    let reply = server.handle(OSCMessage(path: path, arguments: arguments, source: sockaddr_storage(), sourceLength: 0), h.console)
    #expect(reply?.ok == false, "\(String(describing: reply))")
    #expect(reply?.text.contains(why) == true, "\(reply?.text ?? "no reply")")
    #expect(MixerSnapshot(h) == before)
    #expect(FileFacts.kind("/tmp/osc-never.json") == nil)
  }

  /// An IPv4 address `host`:`port`.
  static func address(_ host: String, _ port: Int) -> (sockaddr_storage, socklen_t) {
    var storage = sockaddr_storage()
    withUnsafeMutablePointer(to: &storage) {
      $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
        $0.pointee.sin_family = sa_family_t(AF_INET)
        $0.pointee.sin_port = UInt16(port).bigEndian
        $0.pointee.sin_addr.s_addr = inet_addr(host)
      }
    }
    return (storage, socklen_t(MemoryLayout<sockaddr_in>.size))
  }

  @Test(
    "a return URL: taken off the end of a message; the sender's host at the URL's port; another host, another scheme or a bad port refused")
  func returnURL() throws {
    var m = OSCMessage(
      path: "/stemdeck/subscribe", arguments: [.string("events"), .string("osc.udp://localhost:9001/")], source: sockaddr_storage(),
      sourceLength: 0)
    #expect(OSCReturnURL.take(from: &m) == "osc.udp://localhost:9001/")
    #expect(m.arguments == [.string("events")] && m.typeTags == ",s")
    var command = OSCMessage(path: "/stemdeck/cmd", arguments: [.string("status")], source: sockaddr_storage(), sourceLength: 0)
    #expect(OSCReturnURL.take(from: &command) == nil && command.arguments.count == 1)

    let (sender, length) = Self.address("127.0.0.1", 40000)
    for url in [
      "osc.udp://localhost:9001/", "osc.udp://127.0.0.1:9001", "OSC.UDP://my-laptop:9001/stemdeck", "osc.udp://[::ffff:127.0.0.1]:9001/"
    ] {
      switch OSCReturnURL.address(url, from: sender, length: length) {
      case .success(let (to, toLength)): #expect(OSCSocket.describe(to, toLength) == "127.0.0.1:9001", "\(url)")
      case .failure(let r): Issue.record("\(url): \(r.text)")
      }
    }
    let refused = [
      ("osc.udp://10.0.0.5:9001/", "only to the sender's own host (127.0.0.1), not to 10.0.0.5"),
      ("osc.tcp://localhost:9001/", "must be osc.udp://HOST:PORT/"),
      ("osc.udp://localhost/", "has no port"),
      ("osc.udp://localhost:0/", "1…65535 (got '0')"),
      ("osc.udp://localhost:99999/", "1…65535"),
      ("osc.udp://[::1:9001/", "closing ']'")
    ]
    for (url, why) in refused {
      switch OSCReturnURL.address(url, from: sender, length: length) {
      case .success(let (to, toLength)): Issue.record("\(url) taken: \(OSCSocket.describe(to, toLength))")
      case .failure(let r): #expect(r.text.contains(why), "\(url): \(r.text)")
      }
    }
  }

  @Test("a transport subscriber is told /stemdeck/solo: 0 on subscribing, 1 once a strip is soloed, 0 when none is")
  func soloPush() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let server = try OSCServer(host: "127.0.0.1", port: 0)
    defer { server.close() }
    let client = try OSCSocket(host: "127.0.0.1", port: 0)
    defer { client.close() }
    let (address, length) = Self.address("127.0.0.1", client.port)
    let subscribed = server.handle(
      OSCMessage(path: "/stemdeck/subscribe", arguments: [.string("transport")], source: address, sourceLength: length), h.console)
    #expect(subscribed?.ok == true, "\(subscribed?.text ?? "no reply")")
    /// The next `/stemdeck/solo`'s value (pushes what is due meanwhile; at most 5 s).
    func nextSolo() -> Int32? {
      let got = Self.received(server, client, h.mixer) { $0.contains { $0.path == "/stemdeck/solo" } }
      guard case .int(let v)? = got.first(where: { $0.path == "/stemdeck/solo" })?.arguments.first else { return nil }
      return v
    }
    #expect(nextSolo() == 0)
    #expect(h.run("solo drums").ok)
    #expect(nextSolo() == 1)
    #expect(h.run("unsolo drums").ok)
    #expect(nextSolo() == 0)
  }

  @Test("binding: port 0 takes a free port; a port in use and an unknown host are clear errors")
  func binding() throws {
    let first = try OSCServer(host: "127.0.0.1", port: 0)
    defer { first.close() }
    #expect(first.port > 0)
    #expect(throws: ControlError.self) { try OSCServer(host: "127.0.0.1", port: first.port) }
    do { _ = try OSCServer(host: "127.0.0.1", port: first.port) } catch {
      #expect(
        error.description.contains("UDP 127.0.0.1:\(first.port)") && error.description.contains("choose another with --osc PORT"),
        "\(error)")
    }
    #expect(throws: ControlError.self) { try OSCServer(host: "no.such.host.invalid", port: 0) }
  }

  @Test("a values subscriber gets every value, then each change at the address that sets it; sending one back sets it")
  func valuesPush() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("insert add drums http://plugin.org.uk/swh-plugins/amp").ok)
    let server = try OSCServer(host: "127.0.0.1", port: 0)
    defer { server.close() }
    let client = try OSCSocket(host: "127.0.0.1", port: 0)
    defer { client.close() }
    let (address, length) = Self.address("127.0.0.1", client.port)
    let subscribed = server.handle(
      OSCMessage(path: "/stemdeck/subscribe", arguments: [.string("values")], source: address, sourceLength: length), h.console)
    #expect(subscribed?.ok == true, "\(subscribed?.text ?? "no reply")")
    /// What arrives (as address → value) until `until` holds or 5 s pass.
    func receive(until: @escaping ([String: Float]) -> Bool) -> [String: Float] {
      var got: [String: Float] = [:]
      _ = Self.received(server, client, h.mixer) { messages in
        for m in messages { if case .float(let v)? = m.arguments.first { got[m.path] = v } }
        return until(got)
      }
      return got
    }
    let all = receive { $0["/stemdeck/strip/drums/insert/1/gain"] != nil && $0["/stemdeck/stem/bass/solo"] != nil }
    #expect(all["/stemdeck/stem/drums/vol"] == 0 && all["/stemdeck/stem/bass/solo"] == 0 && all["/stemdeck/stem/drums/pan"] == 0)
    #expect(all["/stemdeck/strip/drums/insert/1/gain"] == 0, "\(all.keys.sorted())")
    #expect(h.run("vol drums -12dB; solo bass; insert set drums 1 gain -6").ok)
    let changed = receive { $0.count >= 3 }
    #expect(changed == ["/stemdeck/stem/drums/vol": -12, "/stemdeck/stem/bass/solo": 1, "/stemdeck/strip/drums/insert/1/gain": -6])
    // The address a value is pushed to is the one that sets it, in the same unit.
    #expect(
      server.handle(OSCMessage(path: "/stemdeck/stem/drums/vol", arguments: [.float(-3)], source: address, sourceLength: length), h.console)
        == nil)
    #expect(abs(Decibels.fromAmplitude(h.mixer.stems.statuses()[0].settings.volume) + 3) < 1e-6)
    #expect(receive { !$0.isEmpty } == ["/stemdeck/stem/drums/vol": -3])
  }

  /// Pushes what is due and reads what `client` receives (poll on its socket) until `done` holds
  /// for the messages read in one look, or 5 s pass; returns the last look's messages.
  static func received(
    _ server: OSCServer, _ client: OSCSocket, _ mixer: Mixer, until done: ([OSCMessage]) -> Bool
  ) -> [OSCMessage] {
    var fds = pollfd(fd: client.fd, events: Int16(POLLIN), revents: 0)
    let deadline = Date().addingTimeInterval(5)
    var messages: [OSCMessage] = []
    while Date() < deadline {
      server.pushDue(mixer)
      messages = client.receive().messages
      if done(messages) { return messages }
      _ = poll(&fds, 1, 50)
    }
    return messages
  }
}
