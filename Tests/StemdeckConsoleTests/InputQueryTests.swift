import Foundation
import StemdeckControl
import StemdeckEngine
import StemdeckSession
import Testing
@testable import StemdeckConsole
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

/// Live inputs in the queries and the graph (issue 22, item 3): `directout` on an input, the
/// mixer graph of `route`/`routes`, the control socket's JSON (`stems`, `inputs`, `meters`) and
/// the pushed meter frames, and the mixer view's input strip lined up as a stem's.
@Suite struct InputQueryTests {
  @Test(
    "directout on an input: its setting and flag, its direct-out slot after the stems' and buses', the render goes there instead of the master"
  )
  func directOut() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("input add mic mono; vol mic 0.5").ok)
    #expect(h.run("directout mic on").ok)
    let settings = try h.mixer.inputs.status("mic").settings
    #expect(settings.directOut && h.mixer.isDirty)
    let slot = InputBank.directSlot(0, maxVoices: h.mixer.renderState.pointee.maxVoices)
    #expect(h.mixer.stems.directOutSlots().contains { $0.name == "mic" && $0.slot == slot })
    let table = h.run("inputs").output
    #expect(table.count == 2 && table[1].contains(" DL ") && table[1].contains("mic_L/R"), "\(table)")
    // The engine: the strip's buffers (what the driver hands in) get it, the master does not.
    let tap = UnsafeMutablePointer<Float>.allocate(capacity: 2048)
    defer { tap.deallocate() }
    let state = h.mixer.renderState
    state.pointee.directOutputs[2 * slot] = tap
    state.pointee.directOutputs[2 * slot + 1] = tap + 1024
    defer {
      state.pointee.directOutputs[2 * slot] = nil
      state.pointee.directOutputs[2 * slot + 1] = nil
    }
    let master = InputCommandTests.render(h, signal: InputCommandTests.tone)
    var peak: Float = 0
    for i in 0..<2048 { peak = max(peak, abs(tap[i])) }
    // 0.5 (tone) × 0.5 (volume) × cos(π/4): mono at the centre, constant power.
    #expect(abs(peak - Float(0.25 * cos(Double.pi / 4))) < 1e-3, "direct out peak \(peak)")
    #expect(master.left == 0 && master.right == 0, "master \(master)")
    #expect(h.run("directout mic off").ok)
    #expect(!h.mixer.stems.directOutSlots().contains { $0.name == "mic" })
  }

  @Test("the mixer graph lists inputs (on the master or their bus); one with direct outs says so")
  func graph() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("input add mic mono; input add keys stereo; bus add band; route keys band").ok)
    #expect(h.run("route").output == ["master ← drums, bass, mic", "  ← bus band: keys"])
    #expect(h.run("directout mic on").ok)
    #expect(h.run("route").output == ["master ← drums, bass, mic (direct outs mic_L/R)", "  ← bus band: keys"])
  }

  @Test("the control socket's queries and the pushed meter frames list the inputs")
  func queries() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("input add mic mono; input add keys stereo; vol mic 0.5; directout keys on").ok)
    let stems = QueryJSON.stems(h.console)
    #expect((stems["stems"] as? [[String: Any]])?.count == 2, "inputs are not stems")
    let inputs = try #require(stems["inputs"] as? [[String: Any]])
    #expect(inputs.map { $0["name"] as? String } == ["mic", "keys"])
    #expect(inputs[0]["volume"] as? Double == 0.5 && inputs[0]["channels"] as? String == "mono")
    #expect(inputs[0]["ports"] as? [String] == ["mic_in"] && inputs[0]["destination"] as? String == "master")
    #expect(inputs[1]["directOut"] as? Bool == true && inputs[1]["destination"] as? String == "keys_L/R")
    #expect(inputs[0]["gliding"] as? Bool == false)
    #expect((inputs[1]["meters"] as? [[String: Any]])?.count == 2)
    let listed = try #require(QueryJSON.data(for: "inputs", [], h.console)?["inputs"] as? [[String: Any]])
    #expect(listed.count == 2)
    let meters = QueryJSON.meters(h.console, only: nil)
    #expect((meters["inputs"] as? [[String: Any]])?.map { $0["name"] as? String } == ["mic", "keys"])
    let one = QueryJSON.meters(h.console, only: "mic")
    #expect((one["inputs"] as? [[String: Any]])?.count == 1 && (one["stems"] as? [[String: Any]])?.isEmpty == true)
    let frame = RemotePush.meters(h.mixer)
    #expect((frame["inputs"] as? [String: Any]).map { Set($0.keys) } == ["mic", "keys"])
    // A session without inputs: no "inputs" key (the frames stay as they were).
    let plain = try ConsoleHarness.withStems()
    defer { plain.shutdown() }
    #expect(QueryJSON.stems(plain.console)["inputs"] == nil && RemotePush.meters(plain.mixer)["inputs"] == nil)
  }

  @Test("the mixer view: an input's name, meters, fader and values sit at the same offsets in its strip as a stem's")
  func viewAlignment() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("input add mic mono; vol mic -20dB; vol drums -20dB").ok)
    let model = MixerViewModel.make(h.console)
    var state = MixerViewState()
    let lines = MixerScreen.draw(model, &state, columns: 80, rows: 24, unicode: false).lines.map { Array($0) }
    func column(of text: String, row: Int) -> Int? {
      let line = String(lines[row])
      return line.range(of: text).map { line.distance(from: line.startIndex, to: $0.lowerBound) }
    }
    let drums = try #require(column(of: "drums", row: 1)), mic = try #require(column(of: "mic", row: 1))
    // The fader's handle row at -20 dB: the first two handles are drums' and mic's.
    let handleRow = try #require(lines.indices.first { row in String(lines[row]).components(separatedBy: "=O=").count == 3 })
    let handles = String(lines[handleRow]).ranges(of: "=O=").map {
      String(lines[handleRow]).distance(from: String(lines[handleRow]).startIndex, to: $0.lowerBound)
    }
    #expect(handles.count == 2 && handles[0] - drums == handles[1] - mic, "name columns \(drums), \(mic); handles \(handles)")
  }
}
