import Foundation
import StemdeckTestSupport
import Testing
@testable import StemdeckConsole
import StemdeckControl

@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

#if canImport(Glibc)
import Glibc
#endif

/// An insert's parameter over OSC: `/stemdeck/strip/NAME/insert/N/SYMBOL f` sets it as `insert
/// set` does (swh's amp, Debian swh-lv2), and a bad value or address is refused with the reason.
@Suite struct InsertOSCTests {
  @Test("/stemdeck/strip/NAME/insert/N/SYMBOL sets the control; out of range, a bad position or a symbol the plugin lacks are refused")
  func parameterAddress() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let server = try OSCServer(host: "127.0.0.1", port: 0)
    defer { server.close() }
    #expect(h.run("insert add drums http://plugin.org.uk/swh-plugins/amp").ok)
    let set = RemoteSafetyTests.osc(server, h, "/stemdeck/strip/drums/insert/1/gain", [.float(-7.5)])
    #expect(set == nil, "\(String(describing: set))")
    #expect(try h.mixer.inserts.list(of: "drums").first?.values["gain"] == -7.5)
    let high = RemoteSafetyTests.osc(server, h, "/stemdeck/strip/drums/insert/1/gain", [.float(71)])
    #expect(high?.ok == false && high?.text.contains("gain must be from -70 to 70 (got 71)") == true, "\(String(describing: high))")
    let position = RemoteSafetyTests.osc(server, h, "/stemdeck/strip/drums/insert/x/gain", [.float(0)])
    #expect(position?.ok == false && position?.text.contains("whole number from 1") == true, "\(String(describing: position))")
    let symbol = RemoteSafetyTests.osc(server, h, "/stemdeck/strip/drums/insert/1/volume", [.float(0)])
    #expect(symbol?.ok == false && symbol?.text.contains("its controls: gain") == true, "\(String(describing: symbol))")
    #expect(try h.mixer.inserts.list(of: "drums").first?.values["gain"] == -7.5, "a refused value changed the control")
  }

  static let convolver = "http://gareus.org/oss/lv2/convoLV2#Mono"

  @Test("a file parameter over OSC (,s) and in --json: refused unless OSC may touch files, set when it may; the reply lists it")
  func fileParameter() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let server = try OSCServer(host: "127.0.0.1", port: 0)
    defer { server.close() }
    let ir = try h.folder.wav("room.wav", channels: 1, sampleRate: 48000, seconds: 0.01)
    #expect(h.run("insert add master \(Self.convolver)").ok)
    let address = "/stemdeck/strip/master/insert/1/impulse"
    let refused = RemoteSafetyTests.osc(server, h, address, [.string(ir)])
    #expect(
      refused?.ok == false && refused?.text.contains("reads or writes files: refused over OSC") == true, "\(String(describing: refused))")
    // A file named like a number passes the line's check and is refused when the command runs.
    let numeric = RemoteSafetyTests.osc(server, h, address, [.string("12")])
    #expect(
      numeric?.ok == false && numeric?.text.contains("reads or writes files: refused over OSC") == true, "\(String(describing: numeric))")
    #expect(try h.mixer.inserts.fileParameters(of: "master", position: 1).first?.path == nil, "a refused file was set")
    h.console.oscAllowsAll = true
    let set = RemoteSafetyTests.osc(server, h, address, [.string(ir)])
    #expect(set == nil, "\(String(describing: set))")
    let data = try #require(QueryJSON.data(for: "insert", ["params", "master", "1"], h.console))
    let files = try #require(data["files"] as? [[String: Any]])
    #expect(files.count == 1 && files.first?["symbol"] as? String == "impulse", "\(files)")
    #expect(files.first?["path"] as? String == ir, "\(files)")
    let missing = RemoteSafetyTests.osc(server, h, address, [.string(h.folder.file("none.wav"))])
    #expect(missing?.ok == false && missing?.text.contains("none.wav") == true, "\(String(describing: missing))")
  }
}
