import Foundation
import StemdeckControl
import StemdeckEngine
import StemdeckSession
import Testing

@testable import StemdeckConsole
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

/// `width` (issue 34's proof that a strip control is a row of the table): the console word, its
/// glide, groups, undo, scenes, OSC's address, a MIDI controller and the socket's JSON reach it
/// with no code of their own.
@Suite struct WidthCommandTests {
  @Test("width from the REPL (value, glide, all, refusals), a group, undo, a scene, OSC, MIDI learn's target and the query JSON")
  func everyFrontEnd() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("bus add band; input add keys stereo").ok)
    #expect(h.run("width drums 0.5").ok)
    #expect(try h.mixer.stems.status("drums").settings.width == 0.5)
    #expect(h.run("width drums 3").output == ["error: width must be a number between 0 and 2 (got 3)"])
    #expect(h.run("width drums 0 over 2s exp").output.first?.contains("glides linearly") == true)
    #expect(h.run("width band 1.5; width keys 0").ok)
    #expect(try h.mixer.buses.setting("band").width == 1.5 && h.mixer.inputs.status("keys").settings.width == 0)
    #expect(h.run("width drums 0 over 1s").ok)
    #expect(try h.mixer.stems.status("drums").settings.width == 0, "a glide's setting is its target")
    // A group is all or nothing: the width set in it is put back when a later line fails.
    #expect(h.run("begin; width drums 2; vol nosuch 1; commit").ok == false)
    #expect(try h.mixer.stems.status("drums").settings.width == 0)
    #expect(h.run("undo").ok)
    #expect(try h.mixer.stems.status("drums").settings.width == 0.5, "undo takes the glide's step back")
    #expect(h.run("scene save narrow; width drums 1; scene recall narrow").ok)
    #expect(try h.mixer.stems.status("drums").settings.width == 0.5, "a scene holds the width")

    let osc = try OSCServer(host: "127.0.0.1", port: 0)
    defer { osc.close() }
    let reply = osc.handle(
      OSCMessage(path: "/stemdeck/bus/band/width", arguments: [.float(0.25)], source: sockaddr_storage(), sourceLength: 0),
      h.console)
    #expect(reply == nil, "\(reply?.text ?? "")")
    #expect(try h.mixer.buses.setting("band").width == 0.25)

    // A controller on the width of a stem: its range evenly, 0 → 0 and 127 → 2.
    #expect(h.run("midi map cc 30 width drums").ok)
    #expect(h.run("midi maps").output.last == "cc 30 width drums")
    #expect(h.run("midi map note 31 width drums").output.first?.contains("follows a controller") == true)
    #expect(h.run("width drums 0").ok)
    h.render(blocks: 1)
    for value: UInt8 in [0, 32, 64] {
      midiInput(h.mixer.renderState, offset: 0, count: 3, 0xB0, 30, value)
      h.render(blocks: 1)
      h.console.serviceOnce()
    }
    #expect(abs(try h.mixer.stems.status("drums").settings.width - 2 * 64 / 127) < 1e-9)

    let json = h.console.remoteReply(to: "stems")
    let stems = try #require(json["stems"] as? [[String: Any]], "\(json)")
    #expect(stems.first { $0["name"] as? String == "drums" }?["width"] as? Double == 1.007874, "\(stems)")
    let buses = try #require(json["buses"] as? [[String: Any]])
    #expect(buses.first?["width"] as? Double == 0.25)
  }
}
