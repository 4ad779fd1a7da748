import Foundation
import Testing
@testable import StemdeckConsole
@testable import StemdeckRemote
@testable import StemdeckLive

/// `NSM_URL` as a session manager sets it, and every way it can be wrong (issue 43): each is
/// refused naming the part, before any socket exists (the peers are in NSMHostileTests).
@Suite("NSM_URL")
struct NSMURLTests {
  @Test("osc.udp://HOST:PORT/ is read: names, IPv4, [IPv6], no path, ports 1 and 65535")
  func goodURLs() throws {
    let cases: [(String, String, Int)] = [
      ("osc.udp://vm:18313/", "vm", 18313), ("osc.udp://127.0.0.1:1/", "127.0.0.1", 1),
      ("osc.udp://[::1]:65535/", "::1", 65535), ("osc.udp://localhost:9000", "localhost", 9000),
      ("osc.udp://host.example:7000/nsm", "host.example", 7000)
    ]
    for (url, host, port) in cases {
      #expect(try NSMClient.parseURL(url) == NSMClient.Address(host: host, port: port), "\(url)")
    }
    #expect(NSMClient.Address(host: "::1", port: 5).description == "[::1]:5")
  }

  @Test("a wrong NSM_URL names what is wrong: not OSC, another protocol, no host, no port, a port that is no number or out of 1…65535")
  func badURLs() {
    let cases: [(String, String)] = [
      ("localhost:9000", "is not an OSC URL"), ("http://localhost:9000/", "is not an OSC URL"),
      ("osc.tcp://localhost:9000/", "uses osc.tcp://: only UDP managers are supported"),
      ("osc.udp://:9000/", "names no host"), ("osc.udp://localhost/", "names no port"),
      ("osc.udp://localhost:/", "has the port '', which is not a number"),
      ("osc.udp://localhost:9x/", "has the port '9x', which is not a number"),
      ("osc.udp://localhost:-1/", "has the port '-1', which is not a number"),
      ("osc.udp://localhost:0/", "has the port 0: a port is 1…65535"),
      ("osc.udp://localhost:99999/", "has the port 99999: a port is 1…65535"),
      ("osc.udp://localhost:99999999999999999999999/", "a port is 1…65535"),
      ("osc.udp://[::1:9000/", "has an IPv6 host without its closing ']'")
    ]
    for (url, words) in cases {
      #expect(throws: (any Error).self, "\(url)") { try NSMClient.parseURL(url) }
      do { _ = try NSMClient.parseURL(url) } catch {
        #expect(error.description.contains(words) && error.description.contains("osc.udp://HOST:PORT/"), "\(url): \(error)")
      }
    }
  }
}
