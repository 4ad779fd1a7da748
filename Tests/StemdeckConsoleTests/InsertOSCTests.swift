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
}
