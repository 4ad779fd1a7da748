import Foundation
import StemdeckControl
import StemdeckSession
import Testing
@testable import StemdeckConsole
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

/// The `send` and `sends` commands (Commands+Sends.swift): add, levels pre/post, off, return
/// volume, remove; `stems`/`routes` show the sends; completion; refusals that change nothing.
@Suite struct SendCommandTests {
  @Test("send add, send STEM NAME LEVEL pre|post, off, return, remove; sends, stems lists them")
  func addLevelRemove() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("sends").output == ["no sends (add one with 'send add NAME')"])
    #expect(h.run("send add verb").output == ["added send verb (verb_send_L, verb_send_R, verb_return_L, verb_return_R)"])
    #expect(h.run("send drums verb -12dB post").output == ["drums → verb: -12.0 dB post"])
    #expect(h.run("send bass verb -6dB pre").ok)
    #expect(h.mixer.isDirty)
    let levels = h.mixer.sends.all[0].levels
    #expect(abs((levels["drums"]?.gain ?? 0) - 0.251189) < 1e-5 && levels["drums"]?.preFader == false)
    #expect(levels["bass"]?.preFader == true)
    #expect(
      h.run("send").output == [
        "verb: out verb_send_L,verb_send_R, return verb_return_L,verb_return_R at 0.0 dB", "  bass -6.0 dB pre", "  drums -12.0 dB post"
      ])
    #expect(h.run("stems").output.contains("  drums -12.0 dB post"))
    #expect(h.run("send return verb -6dB").ok)
    #expect(abs(h.mixer.sends.all[0].returnVolume - 0.501187) < 1e-5)
    // Every strip and return has a meter, by name, in every front end (nothing plays: silence).
    #expect(h.run("bus add band; input add mic mono").ok)
    let verb = h.run("meters verb")
    #expect(
      verb.ok && verb.output.count == 1 && verb.output[0].hasPrefix("return verb ") && verb.output[0].contains("L peak"), "\(verb.output)")
    let all = h.run("meters").output
    #expect(
      ["master", "drums", "bass", "bus band", "mic", "return verb"].allSatisfy { n in all.contains { $0.hasPrefix(n + " ") } }, "\(all)")
    let json = QueryJSON.meters(h.console, only: nil)
    #expect((json["returns"] as? [[String: Any]])?.first?["name"] as? String == "verb", "\(json)")
    #expect((json["buses"] as? [[String: Any]])?.first?["name"] as? String == "band")
    let frame = RemotePush.meters(h.mixer)
    #expect((frame["returns"] as? [String: Any])?["verb"] != nil && (frame["buses"] as? [String: Any])?["band"] != nil, "\(frame)")
    #expect(h.run("bus remove band; input remove mic").ok)
    #expect(h.run("send drums verb off").output == ["drums → verb: off"])
    #expect(h.mixer.sends.all[0].levels["drums"] == nil)
    #expect(h.run("send remove verb").output == ["removed send verb"])
    #expect(h.mixer.sends.all.isEmpty)
  }

  @Test("save and open!: the sends and levels come back; a file with a level into an unknown send changes nothing")
  func savedAndOpened() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let path = h.folder.file("s.json")
    #expect(h.run("send add verb; send drums verb -12dB pre; send return verb -6dB; save \(path)").ok)
    let text = try String(contentsOfFile: path, encoding: .utf8)
    #expect(text.contains(#""sends" : [ { "to" : "verb", "level" : "-12dB", "pre" : true } ]"#), "\(text)")
    #expect(text.contains(#"{ "name" : "verb", "returnVolume" : "-6dB" }"#), "\(text)")
    #expect(h.run("send remove verb; send add dly").ok)
    #expect(h.run("open! \(path)").ok)
    #expect(h.mixer.sends.all.map(\.name) == ["verb"])
    #expect(
      h.run("send").output == ["verb: out verb_send_L,verb_send_R, return verb_return_L,verb_return_R at -6.0 dB", "  drums -12.0 dB pre"])
    // A level into a send the file does not have: refused by file, field and value; nothing changes.
    let bad = h.folder.file("bad.json")
    try text.replacingOccurrences(of: #""to" : "verb""#, with: #""to" : "hall""#).write(toFile: bad, atomically: true, encoding: .utf8)
    let result = h.run("open! \(bad)")
    let message = result.output.joined(separator: "\n")
    #expect(
      !result.ok && message.contains("bad.json") && message.contains("stems[0].sends[0].to") && message.contains("\"hall\""), "\(message)")
    #expect(h.mixer.sends.all.map(\.name) == ["verb"] && h.mixer.sends.all[0].levels["drums"]?.preFader == true)
  }

  @Test("send refusals: unknown stem or send, bad level or tap point, the limit; nothing changes")
  func refusals() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("send add verb").ok)
    for line in [
      "send drums delay -6dB", "send drumz verb -6dB", "send drums verb loud", "send drums verb -6dB sideways",
      "send drums verb off pre", "send add verb", "send remove delay", "send return verb 99", "send add"
    ] {
      let r = h.run(line)
      #expect(!r.ok, "\(line) was accepted")
    }
    #expect(h.mixer.sends.all.count == 1 && h.mixer.sends.all[0].levels.isEmpty && h.mixer.sends.all[0].returnVolume == 1)
    for i in 1..<8 { #expect(h.run("send add s\(i)").ok) }
    let over = h.run("send add one_more")
    #expect(!over.ok && over.output.joined().contains("at most 8 sends"), "\(over.output)")
  }

  @Test("completion: send keywords and stems, then send names, then levels and pre/post")
  func completion() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("send add verb").ok)
    #expect(Completion.candidates(console: h.console, words: ["send"], partial: "a") == ["add", "all"])
    #expect(Completion.candidates(console: h.console, words: ["send"], partial: "dr") == ["drums"])
    #expect(Completion.candidates(console: h.console, words: ["send", "drums"], partial: "v") == ["verb"])
    #expect(Completion.candidates(console: h.console, words: ["send", "drums", "verb"], partial: "o") == ["off"])
    #expect(Completion.candidates(console: h.console, words: ["send", "drums", "verb", "-12dB"], partial: "p") == ["post", "pre"])
    #expect(Completion.candidates(console: h.console, words: [], partial: "se").contains("sends"))
  }

  @Test("send BUS and send INPUT: levels pre|post, listed by send, buses, inputs, stems and routes; completion; removal forgets them")
  func busAndInputSends() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("send add verb; bus add drums_bus; route drums drums_bus; input add mic mono").ok)
    #expect(h.run("send drums_bus verb -6dB post").output == ["drums_bus → verb: -6.0 dB post"])
    #expect(h.run("send mic verb -10dB pre").output == ["mic → verb: -10.0 dB pre"])
    let levels = h.mixer.sends.all[0].levels
    #expect(levels["drums_bus"]?.preFader == false && levels["mic"]?.preFader == true)
    #expect(
      h.run("sends").output == [
        "verb: out verb_send_L,verb_send_R, return verb_return_L,verb_return_R at 0.0 dB", "  drums_bus -6.0 dB post",
        "  mic -10.0 dB pre"
      ])
    #expect(h.run("buses").output.first?.hasSuffix("sends verb -6.0 dB post") == true, "\(h.run("buses").output)")
    #expect(h.run("inputs").output.contains("mic sends verb -10.0 dB pre"), "\(h.run("inputs").output)")
    #expect(h.run("stems").output.contains("  drums_bus -6.0 dB post"))
    #expect(Completion.candidates(console: h.console, words: ["send"], partial: "dr") == ["drums", "drums_bus"])
    #expect(Completion.candidates(console: h.console, words: ["send"], partial: "m") == ["mic"])
    // Saved with the bus and the input.
    let path = h.folder.file("s.json")
    #expect(h.run("save \(path)").ok)
    let text = try String(contentsOfFile: path, encoding: .utf8)
    #expect(
      text.contains(#""bus" : "drums_bus""#) && text.contains(#""sends" : [ { "to" : "verb", "level" : "-6dB" } ]"#), "\(text)")
    #expect(text.contains(#""sends" : [ { "to" : "verb", "level" : "-10dB", "pre" : true } ]"#), "\(text)")
    // A bad level changes nothing; removing the bus and the input forgets their levels.
    #expect(!h.run("send drums_bus verb 9").ok)
    #expect(h.mixer.sends.all[0].levels["drums_bus"]?.preFader == false)
    #expect(h.run("bus remove drums_bus; input remove mic").ok)
    #expect(h.mixer.sends.all[0].levels.isEmpty)
  }
}
