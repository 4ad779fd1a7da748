import Foundation
import StemdeckSession
import Testing

@testable import StemdeckConsole
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

/// Buses in the control socket's JSON: `bus` (and `buses`) replies with every bus, `stems` adds
/// them as it adds the inputs. A bus's controls come from the strip controls' table
/// (StripParameter.swift), as an input's do.
@Suite struct BusQueryTests {
  @Test("'buses' over the socket: every bus with its table controls, audibility, members, destination and meters; 'stems' adds them")
  func queries() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("bus add band; bus add drums_bus to band; route drums drums_bus; vol band -6dB; pan band -0.25; mute drums_bus").ok)
    let reply = h.console.remoteReply(to: "buses")
    #expect(reply["ok"] as? Bool == true)
    let buses = try #require(reply["buses"] as? [[String: Any]], "\(reply)")
    #expect(buses.map { $0["name"] as? String } == ["band", "drums_bus"])
    let band = buses[0], drums = buses[1]
    for control in StripParameter.all where control.kinds.contains(.bus) && control.field != nil {
      #expect(band[control.key] != nil, "\(control.key) missing: \(band)")
    }
    #expect(abs((band["volume"] as? Double ?? 0) - 0.501187) < 1e-6 && band["volumeDB"] as? Double == -6, "\(band)")
    #expect(band["pan"] as? Double == -0.25 && band["mute"] as? Bool == false && band["solo"] as? Bool == false)
    #expect(band["destination"] as? String == "master" && band["members"] as? [String] == ["drums_bus"])
    #expect(band["audible"] as? Bool == true && band["gliding"] as? Bool == false && band["eq"] as? Bool == false)
    #expect(drums["mute"] as? Bool == true && drums["audible"] as? Bool == false)
    #expect(drums["destination"] as? String == "band" && drums["members"] as? [String] == ["drums"])
    #expect((band["meters"] as? [[String: Any]])?.count == 2)
    // A solo elsewhere silences a bus: it says so.
    #expect(h.run("solo bass").ok)
    let soloed = try #require(QueryJSON.data(for: "bus", [], h.console)?["buses"] as? [[String: Any]])
    #expect(soloed[0]["audible"] as? Bool == false)
    // A glide in progress is told, and the value is the target.
    #expect(h.run("unsolo bass; play; vol band 0 over 10s").ok)
    let gliding = try #require(QueryJSON.data(for: "bus", [], h.console)?["buses"] as? [[String: Any]])
    #expect(gliding[0]["volume"] as? Double == 0)
    #expect((QueryJSON.stems(h.console)["buses"] as? [[String: Any]])?.count == 2)
    // `bus add` is not a query: no data.
    #expect(QueryJSON.data(for: "bus", ["add", "x"], h.console) == nil)
    // A session without buses: no "buses" key in `stems`.
    let plain = try ConsoleHarness.withStems()
    defer { plain.shutdown() }
    #expect(QueryJSON.stems(plain.console)["buses"] == nil)
  }
}
