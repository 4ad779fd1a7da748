import Foundation
import StemdeckControl
import StemdeckSession
import Testing
@testable import StemdeckConsole
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

/// The `bus` and `route` commands (Commands+Buses.swift), a bus answering the strip commands by
/// name, the displays, completion, refusals that change nothing, and the session round trip.
@Suite struct BusCommandTests {
  @Test("bus add, route, strip commands on a bus, bus remove; stems, meters, route and routes show the graph")
  func addRouteRemove() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("bus").output == ["no buses (add one with 'bus add NAME')"])
    #expect(h.run("bus add drums_bus").output == ["bus 'drums_bus' added, feeding the master"])
    #expect(h.run("bus add band").ok)
    #expect(h.run("route drums_bus band").output == ["drums_bus → band"])
    #expect(h.run("route drums drums_bus").output == ["drums → drums_bus"])
    #expect(h.run("route drums").output == ["drums → drums_bus"])
    #expect(h.mixer.isDirty)
    // A bus answers the strip commands by its name.
    for line in ["vol drums_bus -6dB", "pan drums_bus -0.3", "mute drums_bus", "unmute drums_bus", "eq drums_bus mid 2k -4dB q 1.2"] {
      #expect(h.run(line).ok, "\(line)")
    }
    let drums = try h.mixer.buses.setting("drums_bus")
    #expect(abs(drums.volume - 0.501187) < 1e-5 && drums.pan == -0.3 && !drums.mute)
    #expect(drums.eq.mid == EQBand(frequency: 2000, gain: -4, q: 1.2))
    #expect(h.run("eq drums_bus").output == ["drums_bus eq: mid 2000 Hz -4 dB q 1.2"])
    let busLine = h.run("bus drums_bus").output
    #expect(busLine.count == 1 && busLine[0].hasPrefix("bus drums_bus  vol -6.0 dB  pan -0.30  Q  → band  ← drums  peak"), "\(busLine)")
    #expect(h.run("stems").output.contains { $0.hasPrefix("bus band ") && $0.contains("← drums_bus") })
    #expect(h.run("meters").output.contains { $0.hasPrefix("bus drums_bus") })
    #expect(h.run("meters drums_bus").output.first?.hasPrefix("bus drums_bus") == true)
    #expect(h.run("route").output == ["master ← bass", "  ← bus band", "    ← bus drums_bus: drums"])
    // Solo on a bus: the stem outside it is silenced, its member is not.
    #expect(h.run("solo band").ok)
    #expect(h.run("bus band").output.first?.contains("  S  ") == true)
    #expect(h.run("unsolo band").ok)
    // Removing a bus routes what fed it to where it went.
    #expect(h.run("bus remove drums_bus").output == ["bus 'drums_bus' removed; drums now feeds bus 'band'"])
    #expect(try h.mixer.buses.destination(of: "drums") == "band")
    #expect(h.run("bus remove band").output == ["bus 'band' removed; drums now feeds the master"])
    #expect(h.run("route").output == ["master ← drums, bass"])
  }

  static let rejections: [(String, String)] = [
    ("bus add master", "the bus name \"master\" is reserved"),
    ("bus add all", "the bus name \"all\" is reserved"),
    ("bus add drums", "a stem named 'drums' already exists; stems and buses need different names"),
    ("bus add x to nowhere", "unknown bus 'nowhere'"),
    ("bus add", "bus: usage: bus add NAME [to BUS|master]"),
    ("bus remove nowhere", "unknown bus 'nowhere'"),
    ("route drums nowhere", "unknown bus 'nowhere'"),
    ("route drum grp", "unknown stem or bus 'drum' — did you mean 'drums'?"),
    ("route grp grp", "cannot route bus 'grp' to itself"),
    ("route grp sub", "cannot route 'grp' to 'sub': it would make a loop (grp → sub → grp); nothing was changed"),
    ("rate grp 1.2", "'grp' is a bus; this applies to stems only"),
    ("vol grp 3", "volume must be")
  ]

  @Test("bad bus and route commands are refused with a clear error and change nothing")
  func rejections() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("bus add grp; bus add sub to grp").ok)
    h.mixer.markSaved()
    let before = (h.mixer.buses.settings, h.mixer.buses.routing().map { "\($0.name)>\($0.bus ?? "")" })
    for (line, fragment) in Self.rejections {
      let result = h.run(line)
      #expect(!result.ok, "\(line)")
      #expect(result.output.joined().contains(fragment), "\(line): \(result.output)")
    }
    #expect(h.mixer.buses.settings == before.0)
    #expect(h.mixer.buses.routing().map { "\($0.name)>\($0.bus ?? "")" } == before.1)
    #expect(!h.mixer.isDirty)
    // 'route' is not part of a group: the group would drop the plan it carries.
    #expect(h.run("begin").ok)
    #expect(!h.run("route drums grp").ok)
    #expect(h.run("abort").ok)
    // A bus's levels are: all or nothing with the rest of the group.
    #expect(h.run("begin; vol grp -6dB; mute sub; eq grp low 100 3; commit").ok)
    let grp = try h.mixer.buses.setting("grp"), sub = try h.mixer.buses.setting("sub")
    #expect(abs(grp.volume - 0.501187) < 1e-5 && grp.eq.low.gain == 3 && sub.mute)
    #expect(!h.run("begin; vol grp 0dB; unmute sub; vol drums 7; commit").ok)
    let grpAfter = try h.mixer.buses.setting("grp"), subAfter = try h.mixer.buses.setting("sub")
    #expect(abs(grpAfter.volume - 0.501187) < 1e-5 && subAfter.mute)
  }

  @Test("buses are saved, opened again and completed by tab")
  func sessionAndCompletion() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("bus add drums_bus; route drums drums_bus; vol drums_bus 0.5; directout drums_bus on").ok)
    let path = h.folder.file("buses.json")
    #expect(h.run("save \(path)").ok)
    let text = try String(contentsOfFile: path, encoding: .utf8)
    #expect(text.contains(#""buses" : ["#))
    #expect(text.contains(#"{ "name" : "drums_bus", "volume" : 0.5, "pan" : 0, "mute" : false, "solo" : false, "directOut" : true }"#))
    #expect(text.contains(#""bus" : "drums_bus" }"#))
    #expect(h.run("bus remove drums_bus; open! \(path)").ok)
    #expect(h.mixer.buses.names == ["drums_bus"])
    #expect(try h.mixer.buses.destination(of: "drums") == "drums_bus")
    #expect(h.mixer.stems.directOutSlots().contains { $0.name == "drums_bus" })
    // Tab completion knows the new words and the buses.
    #expect(Completion.candidates(console: h.console, words: [], partial: "rou") == ["route", "routes"])
    #expect(Completion.candidates(console: h.console, words: ["bus"], partial: "r") == ["remove"])
    #expect(Completion.candidates(console: h.console, words: ["route", "drums"], partial: "") == ["drums_bus", "master"])
    #expect(Completion.candidates(console: h.console, words: ["vol"], partial: "drums") == ["drums", "drums_bus"])
  }

  @Test("the mixer view: a bus strip after the stems; its fader, pan, mute and solo keys reach the bus; rate refuses")
  func mixerViewStrip() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("bus add drums_bus; route drums drums_bus; eq drums_bus low 100 3").ok)
    let model = MixerViewModel.make(h.console)
    #expect(model.strips.map(\.name) == ["drums", "bass", "drums_bus"])
    let bus = model.strips[2]
    #expect(bus.isBus && !bus.isStem && bus.rate == nil && bus.flags.contains(.eq))
    var state = MixerViewState()
    let canvas = MixerScreen.draw(model, &state, columns: 80, rows: 24, unicode: true)
    #expect(canvas.lines[1].contains("drums_bus") || canvas.lines[2].contains("bus"), "\(canvas.lines[1])")
    // The REPL's stems table and the JSON stems stay stems only.
    #expect(!h.run("stems").output.contains { $0.hasPrefix("drums_bus ") })
    #expect(QueryJSON.stems(h.console)["stems"].map { ($0 as? [[String: Any]])?.count == 2 } == true)

    let view = MixerView(console: h.console)
    for _ in 0..<2 { view.handle(.right) }
    #expect(view.state.selected == 2)
    view.handle(.down)
    #expect(abs(Decibels.fromAmplitude(try h.mixer.buses.setting("drums_bus").volume) - -1) < 1e-9)
    view.handle(.character("]"))
    #expect(abs(try h.mixer.buses.setting("drums_bus").pan - 0.1) < 1e-9)
    view.handle(.character("m"))
    #expect(try h.mixer.buses.setting("drums_bus").mute)
    view.handle(.character("s"))
    #expect(try h.mixer.buses.setting("drums_bus").solo)
    view.state.status = ""
    view.handle(.character(">"))
    #expect(view.state.statusIsError && view.state.status.contains("is a bus"), "\(view.state.status)")
    // u takes back the view's changes one by one (the console's undo), last first.
    view.handle(.character("u"))
    #expect(try !h.mixer.buses.setting("drums_bus").solo && h.mixer.buses.setting("drums_bus").mute)
    for _ in 0..<3 { view.handle(.character("u")) }
    let back = try h.mixer.buses.setting("drums_bus")
    #expect(back.volume == 1 && back.pan == 0 && !back.mute && !back.solo && back.eq.low.gain == 3, "\(back)")
  }
}
