import Foundation
import StemdeckControl
import StemdeckEngine
import StemdeckSession
import Testing
@testable import StemdeckConsole
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

/// Live input strips from the console (Commands+Inputs.swift): `input add|remove`, `inputs`, the
/// strip commands on an input's name, refusals, completion, and what the engine then renders
/// from a signal at the input's buffers (what the JACK driver hands in each period).
@Suite struct InputCommandTests {
  /// Renders `blocks` blocks of 1024 frames with `signal` (1024 frames) at input strip `index`'s
  /// buffers (left and right); returns the master's peaks per side.
  static func render(_ h: ConsoleHarness, signal: [Float], index: Int = 0, blocks: Int = 4) -> (left: Float, right: Float) {
    let left = UnsafeMutablePointer<Float>.allocate(capacity: 1024)
    let right = UnsafeMutablePointer<Float>.allocate(capacity: 1024)
    let input = UnsafeMutablePointer<Float>.allocate(capacity: 1024)
    defer { left.deallocate(); right.deallocate(); input.deallocate() }
    for i in 0..<1024 { input[i] = signal[i] }
    var peak: (Float, Float) = (0, 0)
    for block in 0..<blocks {
      h.mixer.engine.fillStreams()
      h.mixer.renderState.pointee.inputs.buffers[2 * index] = input
      h.mixer.renderState.pointee.inputs.buffers[2 * index + 1] = input
      renderBlock(h.mixer.renderState, left: left, right: right, frameCount: 1024)
      // The last block only: the gains have ramped (10 ms) to where they go.
      if block == blocks - 1 {
        for i in 0..<1024 { peak = (max(peak.0, abs(left[i])), max(peak.1, abs(right[i]))) }
      }
    }
    return peak
  }

  static let tone: [Float] = (0..<1024).map { Float(0.5 * sin(2 * Double.pi * 1000 * Double($0) / 48000)) }

  @Test("input add/remove and inputs: ports, settings and the session; the strip commands take an input's name")
  func addListRemove() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("inputs").output == ["no live inputs (add one with 'input add NAME mono|stereo')"])
    #expect(h.run("input add mic mono").output == ["added input mic (mic_in)"])
    #expect(h.run("input add keys stereo").output == ["added input keys (keys_in_L, keys_in_R)"])
    #expect(h.mixer.isDirty)
    #expect(h.mixer.inputs.names == ["mic", "keys"])
    #expect(h.mixer.inputs.ports() == [0: ["mic_in"], 1: ["keys_in_L", "keys_in_R"]])
    for line in ["vol mic -6dB", "pan mic -0.5", "mute keys", "solo mic", "eq mic hpf 120", "pan keys 0.3"] {
      #expect(h.run(line).ok, "\(line): \(h.run(line).output)")
    }
    let mic = try h.mixer.inputs.status("mic").settings
    #expect(abs(mic.volume - 0.501187) < 1e-6)
    #expect(mic.pan == -0.5 && mic.solo && !mic.mute)
    #expect(mic.eq.highPass == EQHighPass(frequency: 120, slope: 12))
    #expect(h.run("eq mic").output == ["mic eq: hpf 120 Hz 12 dB/oct"])
    let keys = try h.mixer.inputs.status("keys").settings
    #expect(keys.mute && keys.pan == 0.3)
    let table = h.run("inputs").output
    #expect(table.first?.hasPrefix("name  ch") == true, "\(table)")
    // S solo, M mute, L solo-safe (every input is, from the start).
    #expect(table.contains { $0.hasPrefix("mic ") && $0.contains("mic_in") && $0.contains(" SL ") && $0.contains("master") }, "\(table)")
    #expect(table.contains { $0.hasPrefix("keys ") && $0.contains("keys_in_L,keys_in_R") && $0.contains(" ML ") }, "\(table)")
    #expect(h.run("meters mic").output.first?.hasPrefix("mic ") == true)
    #expect(h.run("meters").output.contains { $0.hasPrefix("keys ") && $0.contains("L peak") && $0.contains("R peak") })
    // Saved with the session, and opened again.
    let saved = h.mixer.session(savingTo: h.folder.file("s.json"))
    #expect(saved.inputs.map(\.name) == ["mic", "keys"])
    #expect(saved.inputs[0] == mic)
    try SessionFile.save(saved, to: h.folder.file("s.json"))
    #expect(h.run("input remove keys").output == ["removed input keys"])
    #expect(h.mixer.inputs.names == ["mic"])
    #expect(h.run("open! \(h.folder.file("s.json"))").ok)
    #expect(h.mixer.inputs.settings == saved.inputs)
    #expect(h.run("input remove all").output == ["removed input mic, keys"])
    #expect(h.mixer.inputs.names.isEmpty)
  }

  static let refusals: [(String, String)] = [
    ("input add mic quad", "input channels must be mono or stereo (got 'quad')"),
    ("input add drums mono", "'drums' is a stem's name; stems and inputs share one set of names, choose another"),
    ("input add master mono", "the input name \"master\" is reserved"),
    ("input add midi mono", "the input name \"midi\" is reserved: an input's port is NAME_in, and midi_in is stemdeck's own port"),
    ("input add all stereo", "is reserved (it means every"),
    ("input add mic mono", "an input named 'mic' already exists; choose another name"),
    ("input remove nope", "unknown input 'nope' (inputs: mic)"),
    ("input remov mic", "input: usage: input add NAME mono|stereo | input remove NAME|all (got 'remov')"),
    ("input add mic", "input: usage: input add NAME mono|stereo | input remove NAME|all"),
    ("rate mic 1.5", "'mic' is a live input: it has volume, pan, mute, solo, eq and direct outs, but no file, loop or rate"),
    ("loops mic 2", "'mic' is a live input"),
    ("directout mic maybe", "must be on or off"),
    ("rate mic 1.5 over 2s", "'mic' is a live input"),
    ("remove mic", "(to take it away: 'input remove NAME')"),
    ("vol mic 3", "volume must be a number between 0 and 2"),
    ("pan mic 2", "pan must be a number between -1 and 1 (got 2)"),
    ("eq mic low 100 +30dB", "eq low gain must be a gain in dB from -18 to 18 (got 30)")
  ]

  @Test("vol and pan glide on an input's name ('over 0.1s', 'exp' too), with the transport stopped: the engine gets there")
  func inputGlides() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("input add mic mono").ok)
    #expect(h.run("vol mic 0.25 over 0.1s exp; pan mic -1 over 0.1s").ok)
    #expect(h.mixer.inputs.settings.first?.volume == 0.25 && h.mixer.inputs.settings.first?.pan == -1)
    // 0.1 s is 4,800 frames: after 6 blocks of 1024 the glides are done: hard left at a quarter.
    let peak = Self.render(h, signal: Self.tone, blocks: 6)
    #expect(abs(peak.left - 0.125) < 0.002 && peak.right < 1e-6, "\(peak)")
    // A glide under way shows in `inputs` (flag G, reached→target); `glide cancel` stops it there.
    #expect(h.run("vol mic 0 over 10s").ok)
    _ = Self.render(h, signal: Self.tone, blocks: 2)
    let row = h.run("inputs").output.first { $0.hasPrefix("mic ") } ?? ""
    #expect(row.contains("0.25→0.00") && row.split(separator: " ").contains("GL"), "\(row)")
    let cancel = h.run("glide cancel mic")
    #expect(cancel.ok, "\(cancel.output)")
    let held = try #require(h.mixer.inputs.settings.first?.volume)
    #expect(held > 0.2 && held < 0.25, "the volume is not where the glide stopped: \(held)")
    _ = Self.render(h, signal: Self.tone, blocks: 1)
    let after = h.run("inputs").output.first { $0.hasPrefix("mic ") } ?? ""
    #expect(!after.contains("→"), "\(after)")
  }

  @Test("refusals say what is wrong and what is allowed; nothing changes")
  func refusalsChangeNothing() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("input add mic mono; vol mic 0.7").ok)
    h.mixer.markSaved()
    let before = h.mixer.inputs.settings
    for (line, message) in Self.refusals {
      let result = h.run(line)
      #expect(!result.ok, "\(line)")
      #expect(
        result.output.count == 1 && result.output[0].hasPrefix("error: ") && result.output[0].contains(message), "\(line): \(result.output)"
      )
    }
    #expect(h.mixer.inputs.settings == before)
    #expect(!h.mixer.isDirty)
    // A stem cannot take an input's name either.
    #expect(h.run("add \(h.drums) as mic").output.first?.contains("'mic' is a live input's name") == true)
  }

  @Test("buses and live inputs share one set of names: each refuses the other's, nothing changes")
  func busAndInputNamesClash() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("input add mic mono; bus add drums_bus").ok)
    let bus = h.run("bus add mic")
    #expect(!bus.ok && bus.output.first?.contains("a live input named 'mic' already exists") == true, "\(bus.output)")
    let input = h.run("input add drums_bus stereo")
    #expect(!input.ok && input.output.first?.contains("'drums_bus' is a bus's name") == true, "\(input.output)")
    #expect(h.mixer.inputs.names == ["mic"])
    #expect(h.mixer.buses.names == ["drums_bus"])
    // A session file with an input named like a bus is refused at the input, by name.
    var session = h.mixer.session(savingTo: h.folder.file("clash.json"))
    session.inputs[0].name = "drums_bus"
    #expect(throws: SessionError.self) { try SessionFile.save(session, to: h.folder.file("clash.json")) }
    let text = """
      { "format" : "stemdeck-session", "version" : 3, "buses" : [ { "name" : "drums_bus" } ],
        "inputs" : [ { "name" : "drums_bus", "channels" : "mono" } ] }
      """
    try text.write(toFile: h.folder.file("clash.json"), atomically: true, encoding: .utf8)
    let open = h.run("open \(h.folder.file("clash.json"))")
    #expect(!open.ok && open.output.first?.contains("inputs[0].name: \"drums_bus\" is also a bus's name") == true, "\(open.output)")
    #expect(h.mixer.inputs.names == ["mic"])
  }

  @Test("at most 32 live inputs; the 33rd is refused with the limit")
  func limit() throws {
    let h = try ConsoleHarness()
    defer { h.shutdown() }
    for i in 0..<InputBank.maxInputs { #expect(h.run("input add in\(i) mono").ok) }
    let result = h.run("input add one_more mono")
    #expect(result.output == ["error: stemdeck has at most 32 live inputs (32 are in use; 'input remove NAME')"])
    #expect(h.mixer.inputs.names.count == 32)
  }

  @Test(
    "the engine: an input plays with the transport stopped, at its volume and pan; mute silences it; a stem's solo does only once it is not solo-safe"
  )
  func engineLevels() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("input add mic mono").ok)
    // Centre, unity: −3 dB each side (constant power).
    var peak = Self.render(h, signal: Self.tone)
    #expect(abs(peak.left - 0.5 * 0.70710677) < 1e-3 && abs(peak.right - 0.5 * 0.70710677) < 1e-3, "\(peak)")
    #expect(h.run("vol mic 0.5; pan mic -1").ok)
    peak = Self.render(h, signal: Self.tone)
    #expect(abs(peak.left - 0.25) < 1e-3 && peak.right < 1e-6, "\(peak)")
    #expect(h.run("mute mic").ok)
    peak = Self.render(h, signal: Self.tone)
    #expect(peak.left == 0 && peak.right == 0, "\(peak)")
    #expect(h.run("unmute mic; solo drums").ok)
    peak = Self.render(h, signal: Self.tone)
    #expect(abs(peak.left - 0.25) < 1e-3, "an input is solo-safe: a soloed stem leaves it heard: \(peak)")
    #expect(h.run("safe mic off").ok)
    peak = Self.render(h, signal: Self.tone)
    #expect(peak.left == 0 && peak.right == 0, "not solo-safe, a soloed stem silences the input: \(peak)")
    #expect(h.run("solo mic").ok)
    peak = Self.render(h, signal: Self.tone)
    #expect(abs(peak.left - 0.25) < 1e-3, "soloed too: \(peak)")
    #expect(h.run("unsolo drums; unsolo mic; safe mic; pause; stop").ok)
    peak = Self.render(h, signal: Self.tone)
    #expect(abs(peak.left - 0.25) < 1e-3, "pause and stop leave it open: \(peak)")
    // The strip's meter: post-fader, as the stems'.
    #expect(h.run("meters reset").ok)
    _ = Self.render(h, signal: Self.tone, blocks: 8)
    let meter = try h.mixer.inputs.status("mic").meter
    #expect(abs(meter.channels[0].peak - -12.04) < 0.1, "\(meter)")
    // Removed: it fades out, then its strip is free.
    #expect(h.run("input remove mic").ok)
    peak = Self.render(h, signal: Self.tone)
    #expect(peak.left == 0 && peak.right == 0, "\(peak)")
    #expect(h.mixer.inputs.ports().isEmpty)
  }

  @Test("tab completion: input's words, input names where a strip name goes, input remove's names")
  func completion() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("input add mic mono; input add mix stereo").ok)
    func complete(_ line: String) -> [String] {
      var words = line.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
      let partial = words.removeLast()
      return Completion.candidates(console: h.console, words: words, partial: partial)
    }
    #expect(complete("inp").contains("input") && complete("inp").contains("inputs"))
    #expect(complete("input ") == ["add", "remove"])
    #expect(complete("input add mic ") == ["mono", "stereo"])
    #expect(complete("input remove m") == ["mic", "mix"])
    #expect(complete("vol mi") == ["mic", "mix"])
    #expect(complete("mute ") == ["all", "bass", "drums", "mic", "mix"])
    #expect(complete("eq mi") == ["mic", "mix"])
  }
}

extension InputCommandTests {
  @Test("the mixer view: a live input's strip at the right edge; fader, pan, mute and solo keys reach the input, rate refuses")
  func mixerViewStrip() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("input add mic mono").ok)
    let model = MixerViewModel.make(h.console)
    #expect(model.inputs.map(\.name) == ["mic"] && model.inputs[0].isInput && model.inputs[0].rate == nil)
    #expect(model.strips.map(\.name) == ["drums", "bass"], "inputs are not stems")
    var state = MixerViewState()
    let canvas = MixerScreen.draw(model, &state, columns: 80, rows: 24, unicode: true)
    #expect(canvas.lines[1].contains("mic") && canvas.lines[1].contains("master"), "\(canvas.lines[1])")
    let view = MixerView(console: h.console)
    for _ in 0..<2 { view.handle(.right) }
    #expect(view.state.selected == 2)
    view.handle(.down)
    #expect(abs(Decibels.fromAmplitude(try h.mixer.inputs.status("mic").settings.volume) - -1) < 1e-9)
    view.handle(.character("]"))
    #expect(try h.mixer.inputs.status("mic").settings.pan == 0.1)
    view.handle(.character("m"))
    view.handle(.character("s"))
    let settings = try h.mixer.inputs.status("mic").settings
    #expect(settings.mute && settings.solo)
    view.handle(.character("<"))
    #expect(view.state.statusIsError && view.state.status == "'mic' is a live input: it has no rate", "\(view.state.status)")
    view.handle(.character("0"))
    #expect(try h.mixer.inputs.status("mic").settings.volume == 1 && h.mixer.inputs.status("mic").settings.pan == 0)
    #expect(!view.state.status.contains("error"), "\(view.state.status)")
  }
}

extension InputCommandTests {
  @Test("begin … commit takes an input's changes; a group that fails puts the input's settings back")
  func groups() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("input add mic mono").ok)
    #expect(h.run("begin; vol mic 0.5; pan mic 0.5; commit").ok)
    #expect(try h.mixer.inputs.status("mic").settings.volume == 0.5)
    let failed = h.run("begin; vol mic 0.2; mute mic; eq mic low 100 +3dB; rate drums 9; commit")
    #expect(!failed.ok && failed.output.first?.contains("nothing changed") == true, "\(failed.output)")
    let after = try h.mixer.inputs.status("mic").settings
    #expect(after.volume == 0.5 && after.pan == 0.5 && !after.mute && after.eq == EQSettings(), "\(after)")
  }
}
