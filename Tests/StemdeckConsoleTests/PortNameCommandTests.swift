import Foundation
import StemdeckControl
import StemdeckSession
import Testing
@testable import StemdeckConsole
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

/// Names whose JACK ports would be another part's (issue 43, item 11): refused when a stem or
/// bus gets direct outs, and when a send, input, bus or stem is added, naming the other part;
/// a send named like a strip (or the other way round) is refused too. Nothing changes.
@Suite struct PortNameCommandTests {
  @Test(
    "directout on a stem named like a send's ports, send add over a strip's direct outs, input add over them, a send named like a strip and a strip like a send: refused naming the other part, nothing changes"
  )
  func refusals() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("add \(h.drums) as verb_return; add \(h.bass) as keys_in; send add verb").ok)
    // A stem whose direct outs would be the send's return ports.
    var r = h.run("directout verb_return on")
    #expect(!r.ok && r.output.joined().contains("verb_return_L") && r.output.joined().contains("send 'verb'"), "\(r.output)")
    #expect(h.mixer.buses.routing().first { $0.name == "verb_return" }?.directOut == false)
    // Direct outs first, then the send or the input that would take their names.
    #expect(h.run("directout keys_in on").ok)
    r = h.run("input add keys stereo")
    #expect(!r.ok && r.output.joined().contains("keys_in_L") && r.output.joined().contains("stem 'keys_in'"), "\(r.output)")
    #expect(h.mixer.inputs.names.isEmpty)
    #expect(h.run("input add keys mono").ok, "a mono input's port is keys_in: no direct out has that name")
    #expect(h.run("send remove verb; directout verb_return on").ok)
    r = h.run("send add verb")
    #expect(!r.ok && r.output.joined().contains("stem 'verb_return'"), "\(r.output)")
    #expect(h.mixer.sends.all.isEmpty)
    // One set of names: a send is not named like a stem, a bus or an input, nor they like it.
    for name in ["drums", "keys"] {
      r = h.run("send add \(name)")
      #expect(!r.ok && r.output.joined().contains("different names"), "\(r.output)")
    }
    #expect(h.run("send add fx").ok)
    for line in ["bus add fx", "input add fx mono", "add \(h.drums) as fx"] {
      r = h.run(line)
      #expect(!r.ok && r.output.joined().contains("a send's name"), "\(line): \(r.output)")
    }
    #expect(h.mixer.sends.all.map(\.name) == ["fx"] && h.mixer.inputs.names == ["keys"])
    // Names that are folders, hidden files or options.
    for name in [".", "..", "-"] {
      r = h.run("add \(h.drums) as \(name)")
      #expect(!r.ok && r.output.joined().contains("may not start with"), "\(name): \(r.output)")
    }
    #expect(StemName.derived(fromPath: "/x/.hidden.wav", taken: []) == "hidden")
  }
}
