import Foundation
import StemdeckControl
import StemdeckSession
import Testing

@testable import StemdeckConsole
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

/// Solo-safe strips (issue 35, item 3; the `soloSafe` row of StripParameter.swift): `safe NAME
/// [on|off]` and `unsafe NAME` on stems, buses and inputs, live inputs safe from the start, the
/// `L` flag, the buses a safe strip keeps open, "solo active" in `status` and its JSON, and the
/// session key written only where it is not the kind's default.
@Suite struct SoloSafeCommandTests {
  func busAudible(_ h: ConsoleHarness, _ name: String) -> Bool? {
    h.mixer.buses.statuses().first { $0.settings.name == name }?.audible
  }

  @Test("safe/unsafe on stems, buses and inputs: flags, refusals that change nothing, and the buses a safe strip keeps open under a solo")
  func commandsAndBuses() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("input add mic mono; bus add vox; bus add verb; route mic vox").ok)
    #expect(try h.mixer.inputs.status("mic").settings.soloSafe, "a live input is solo-safe from the start")
    #expect(h.run("inputs").output.contains { $0.hasPrefix("mic ") && $0.contains(" L ") })
    // No solo: everything heard, and status says nothing of solo.
    #expect(!h.run("status").output.contains { $0.hasPrefix("solo:") })
    #expect(busAudible(h, "vox") == true && busAudible(h, "verb") == true)
    // A stem soloed: the bus the safe mic feeds stays open, the empty one does not.
    #expect(h.run("solo drums").ok)
    #expect(h.run("status").output.contains("solo: active (drums): strips neither soloed nor solo-safe are silent"))
    #expect(busAudible(h, "vox") == true, "the mic keeps its bus open")
    #expect(busAudible(h, "verb") == false)
    #expect(h.run("bus").output.contains { $0.hasPrefix("bus verb ") && $0.contains("  s  ") }, "flag s: silenced by the solo")
    // A safe bus: heard under the solo, flagged L.
    #expect(h.run("safe verb").ok)
    #expect(busAudible(h, "verb") == true)
    #expect(h.run("bus verb").output.contains { $0.hasPrefix("bus verb ") && $0.contains("  L  ") }, "\(h.run("bus verb").output)")
    #expect(h.run("safe verb off").ok)
    #expect(busAudible(h, "verb") == false)
    // The mic made unsafe: its bus closes; a muted safe mic opens nothing either.
    #expect(h.run("unsafe mic").ok)
    #expect(busAudible(h, "vox") == false)
    #expect(h.run("safe mic on; mute mic").ok)
    #expect(busAudible(h, "vox") == false, "a muted safe strip keeps no bus open")
    #expect(h.run("unmute mic").ok)
    #expect(busAudible(h, "vox") == true)
    // A stem: flag L in the stems table; all works as for the other toggles.
    #expect(h.run("safe bass").ok)
    #expect(h.run("stems").output.contains { $0.hasPrefix("bass ") && $0.contains("L") })
    #expect(h.run("unsafe all").ok)
    #expect(try !h.mixer.stems.status("bass").settings.soloSafe)
    // Refusals: a word that is not on or off, an unknown strip; nothing changes.
    let before = h.mixer.session(savingTo: h.folder.file("x.json"))
    let bad = h.run("safe mic maybe")
    #expect(!bad.ok && bad.output.joined().contains("safe must be on or off (got 'maybe')"), "\(bad.output)")
    let unknown = h.run("safe nope")
    #expect(!unknown.ok && unknown.output.joined().contains("nope"), "\(unknown.output)")
    #expect(h.mixer.session(savingTo: h.folder.file("x.json")) == before)
    #expect(h.run("help safe").output.contains { $0.contains("so soloing a backing track keeps the singer's mic") })
  }

  @Test("status's JSON says whether a solo is active and which strips are soloed; the transport push whether one is")
  func statusJSON() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    func solo() -> [String: Any]? {
      (QueryJSON.status(Display.statusReport(h.console))["solo"]) as? [String: Any]
    }
    #expect(solo()?["active"] as? Bool == false && (solo()?["soloed"] as? [String])?.isEmpty == true)
    #expect(RemotePush.transport(h.mixer)["solo"] as? Bool == false)
    #expect(h.run("bus add band; solo bass; solo band").ok)
    #expect(solo()?["active"] as? Bool == true)
    #expect(solo()?["soloed"] as? [String] == ["bass", "band"])
    #expect(RemotePush.transport(h.mixer)["solo"] as? Bool == true, "the transport push says so too")
  }

  @Test("the session keeps soloSafe only where it is not the kind's default: an unsafe input, a safe stem or bus; read back equal")
  func sessionKey() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("input add mic mono; input add keys stereo; bus add verb").ok)
    let path = h.folder.file("safe.json")
    #expect(h.run("save \(path)").ok)
    var text = try String(contentsOfFile: path, encoding: .utf8)
    #expect(!text.contains("soloSafe"), "defaults are not written: \(text)")
    #expect(h.run("safe mic off; safe drums; safe verb").ok)
    #expect(h.run("save \(path)").ok)
    text = try String(contentsOfFile: path, encoding: .utf8)
    let lines = text.split(separator: "\n")
    #expect(lines.contains { $0.contains("\"name\" : \"mic\"") && $0.contains("\"soloSafe\" : false") }, "\(text)")
    #expect(lines.contains { $0.contains("\"name\" : \"drums\"") && $0.contains("\"soloSafe\" : true") }, "\(text)")
    #expect(lines.contains { $0.contains("\"name\" : \"verb\"") && $0.contains("\"soloSafe\" : true") }, "\(text)")
    #expect(!lines.contains { ($0.contains("\"name\" : \"keys\"") || $0.contains("\"name\" : \"bass\"")) && $0.contains("soloSafe") })
    let back = try SessionFile.load(path: path)
    #expect(back.inputs.map(\.soloSafe) == [false, true])
    #expect(back.stems.map(\.soloSafe) == [true, false])
    #expect(back.buses.map(\.soloSafe) == [true])
  }
}
