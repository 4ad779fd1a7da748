import Foundation
import StemdeckControl
import StemdeckEngine
import StemdeckSession
import Testing
@testable import StemdeckConsole
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

/// Live inputs routed to buses (Mixer+Buses.swift `routeLocked`, InputStrips.swift): what the
/// engine renders from a signal at the input's buffers (`InputCommandTests.render`), solo along
/// the graph, refusals, and the session's "bus" field on an input.
@Suite struct InputRouteTests {
  /// A console with the two stems muted (so the master holds the input alone), a mono input
  /// `mic` and a bus `vox_bus`.
  static func harness() throws -> ConsoleHarness {
    let h = try ConsoleHarness.withStems()
    for line in ["mute drums", "mute bass", "input add mic mono", "bus add vox_bus"] {
      let result = h.run(line)
      guard result.ok else { throw CommandError("setup failed: \(line): \(result.output)") }
    }
    h.mixer.markSaved()
    return h
  }

  /// The tone's peak at the centre of a mono input at unity (constant power: −3 dB each side).
  static let centre: Float = 0.5 * 0.70710677

  static func near(_ peak: (left: Float, right: Float), _ expected: Float) -> Bool {
    abs(peak.left - expected) < 1e-3 && abs(peak.right - expected) < 1e-3
  }

  @Test(
    "route mic vox_bus: the input sounds through the bus (its volume, its meter) while playing, silent when stopped; back to the master it is live again"
  )
  func routeToBus() throws {
    let h = try Self.harness()
    defer { h.shutdown() }
    #expect(h.run("route mic vox_bus").output == ["mic → vox_bus"])
    #expect(h.mixer.isDirty)
    #expect(h.run("route mic").output == ["mic → vox_bus"])
    #expect(h.run("route").output == ["master ← drums, bass", "  ← bus vox_bus: mic"])
    #expect(h.run("inputs").output.contains { $0.hasPrefix("mic ") && $0.contains("vox_bus") }, "\(h.run("inputs").output)")
    #expect(h.run("bus vox_bus").output.first?.contains("← mic") == true, "\(h.run("bus vox_bus").output)")
    // Stopped: a bus passes nothing while the transport does not play, an input on it neither.
    var peak = InputCommandTests.render(h, signal: InputCommandTests.tone)
    #expect(peak.left == 0 && peak.right == 0, "stopped: \(peak)")
    #expect(h.run("play").ok)
    peak = InputCommandTests.render(h, signal: InputCommandTests.tone, blocks: 8)
    #expect(Self.near(peak, Self.centre), "through the bus at unity: \(peak)")
    #expect(h.run("vol vox_bus 0.5").ok)
    _ = InputCommandTests.render(h, signal: InputCommandTests.tone, blocks: 2)
    #expect(h.run("meters reset").ok)
    peak = InputCommandTests.render(h, signal: InputCommandTests.tone, blocks: 8)
    #expect(Self.near(peak, Self.centre * 0.5), "the bus's volume applies: \(peak)")
    let bus = try #require(h.mixer.buses.statuses().first)
    #expect(bus.members == ["mic"])
    #expect(abs(bus.meter.channels[0].peak - Decibels.fromAmplitude(Double(Self.centre * 0.5))) < 0.1, "\(bus.meter)")
    // Stopped: the transport fade closes the bus, the input with it.
    #expect(h.run("stop").ok)
    peak = InputCommandTests.render(h, signal: InputCommandTests.tone, blocks: 8)
    #expect(peak.left == 0 && peak.right == 0, "stopped: \(peak)")
    // Back to the master: live whatever the transport does.
    #expect(h.run("route mic master").output == ["mic → master"])
    peak = InputCommandTests.render(h, signal: InputCommandTests.tone, blocks: 8)
    #expect(Self.near(peak, Self.centre), "on the master while stopped: \(peak)")
    #expect(try h.mixer.inputs.status("mic").destination == "master")
    #expect(try h.mixer.buses.statuses().first?.members == [])
  }

  @Test("a route change of a live input crossfades: the largest sample step stays within the signal's slope")
  func routeChangeDoesNotClick() throws {
    let h = try Self.harness()
    defer { h.shutdown() }
    // A bus at −12 dB: moving the input there and back is a level step a hard switch would click on.
    #expect(h.run("vol vox_bus 0.25; play").ok)
    // A constant (DC) signal: any step in the output is the route change's.
    let dc = [Float](repeating: 0.5, count: 1024)
    _ = InputCommandTests.render(h, signal: dc, blocks: 4)
    let left = UnsafeMutablePointer<Float>.allocate(capacity: 1024)
    let right = UnsafeMutablePointer<Float>.allocate(capacity: 1024)
    let input = UnsafeMutablePointer<Float>.allocate(capacity: 1024)
    defer { left.deallocate(); right.deallocate(); input.deallocate() }
    input.update(repeating: 0.5, count: 1024)
    var previous: Float? = nil
    var largestStep: Float = 0
    for line in ["route mic vox_bus", "route mic master"] {
      #expect(h.run(line).ok)
      for _ in 0..<2 {
        h.mixer.engine.fillStreams()
        h.mixer.renderState.pointee.inputs.buffers[0] = input
        renderBlock(h.mixer.renderState, left: left, right: right, frameCount: 1024)
        for i in 0..<1024 {
          if let p = previous { largestStep = max(largestStep, abs(left[i] - p)) }
          previous = left[i]
        }
      }
    }
    // The level moves by 0.354 − 0.088 = 0.27 each way: over 480 frames (10 ms) that is < 0.001 a sample.
    #expect(largestStep < 0.002, "largest step \(largestStep)")
    #expect(abs(left[1023] - Self.centre) < 1e-3, "back on the master at unity: \(left[1023])")
  }

  @Test(
    "solo follows the graph: a soloed input keeps its bus open, a soloed bus plays its inputs; a solo elsewhere keeps a solo-safe input and its buses, and silences it once unsafe"
  )
  func soloAlongTheGraph() throws {
    let h = try Self.harness()
    defer { h.shutdown() }
    #expect(h.run("bus add band; route vox_bus band; route mic vox_bus; bus add other; play").ok)
    func heard() -> Bool { InputCommandTests.render(h, signal: InputCommandTests.tone, blocks: 6).left > 0.3 }
    func audible(_ bus: String) -> Bool { h.mixer.buses.statuses().first { $0.settings.name == bus }?.audible == true }
    #expect(heard())
    #expect(h.run("solo mic").ok)
    #expect(heard(), "a soloed input keeps its way to the master open")
    #expect(audible("vox_bus") && audible("band") && !audible("other"))
    #expect(h.run("unsolo mic; solo band").ok)
    #expect(heard(), "a soloed bus plays the input routed to it through another bus")
    #expect(h.run("unsolo band; solo vox_bus").ok)
    #expect(heard(), "a soloed bus plays the input routed to it")
    #expect(h.run("unsolo vox_bus; solo other").ok)
    #expect(heard(), "a live input is solo-safe: a soloed bus elsewhere leaves it, and its buses, open")
    #expect(audible("vox_bus") && audible("band"))
    #expect(h.run("safe mic off").ok)
    #expect(!heard(), "not solo-safe, a soloed bus elsewhere silences it")
    #expect(!audible("vox_bus") && !audible("band"))
    #expect(h.run("unsolo other; solo drums").ok)
    #expect(!heard(), "a soloed stem silences it")
    #expect(h.run("unsolo drums; safe mic; mute band").ok)
    #expect(!heard(), "a muted bus on its way silences it")
    #expect(h.run("unmute band").ok)
    #expect(heard())
  }

  @Test("refusals: an unknown bus or strip, said clearly; nothing changes. Removing its bus routes the input on")
  func refusals() throws {
    let h = try Self.harness()
    defer { h.shutdown() }
    #expect(h.run("route mic vox_bus").ok)
    h.mixer.markSaved()
    let cases: [(String, String)] = [
      ("route mic vox", "error: unknown bus 'vox' (buses: vox_bus, or master)"),
      ("route mik vox_bus", "error: unknown stem, input or bus 'mik' — did you mean 'mic'?"),
      ("route mik", "error: unknown stem, input or bus 'mik' — did you mean 'mic'?")
    ]
    for (line, message) in cases {
      let result = h.run(line)
      #expect(!result.ok, "\(line)")
      #expect(result.output == [message], "\(line): \(result.output)")
      #expect(try h.mixer.inputs.status("mic").destination == "vox_bus")
      #expect(!h.mixer.isDirty, "\(line)")
    }
    #expect(h.run("bus remove vox_bus").output == ["bus 'vox_bus' removed; mic now feeds the master"])
    #expect(try h.mixer.inputs.status("mic").destination == "master")
    #expect(try h.mixer.buses.destination(of: "mic") == nil)
  }

  @Test("session: an input's bus is saved (only when not the master) and restored on open; a bad one is refused with nothing lost")
  func sessionRoundTrip() throws {
    let h = try Self.harness()
    defer { h.shutdown() }
    #expect(h.run("input add keys stereo; route mic vox_bus").ok)
    let path = h.folder.file("s.json")
    #expect(h.run("save \(path)").ok, "\(h.run("save \(path)").output)")
    let text = try String(contentsOfFile: path, encoding: .utf8)
    #expect(
      text.contains(#""name" : "mic", "channels" : "mono", "volume" : 1, "pan" : 0, "mute" : false, "solo" : false, "bus" : "vox_bus" }"#),
      "\(text)")
    #expect(
      text.contains(#"{ "name" : "keys", "channels" : "stereo", "volume" : 1, "pan" : 0, "mute" : false, "solo" : false }"#), "\(text)")
    #expect(h.run("route mic master; route keys vox_bus").ok)
    #expect(h.run("open! \(path)").ok)
    #expect(try h.mixer.inputs.status("mic").destination == "vox_bus")
    #expect(try h.mixer.inputs.status("keys").destination == "master")
    #expect(h.mixer.buses.members(of: "vox_bus") == ["mic"])
    // The engine follows: the input sounds through the bus.
    #expect(h.run("mute drums; mute bass; vol vox_bus 0.5; play").ok)
    let peak = InputCommandTests.render(h, signal: InputCommandTests.tone, blocks: 8)
    #expect(Self.near(peak, Self.centre * 0.5), "\(peak)")
    // A document whose input names an unknown bus: refused with file, field and value; nothing changes.
    let bad = h.folder.file("bad.json")
    try text.replacingOccurrences(of: #""bus" : "vox_bus" }"#, with: #""bus" : "vocals" }"#).write(
      toFile: bad, atomically: true, encoding: .utf8)
    let before = h.mixer.inputs.settings
    let result = h.run("open! \(bad)")
    #expect(!result.ok)
    let message = result.output.joined(separator: "\n")
    #expect(message.contains("bad.json") && message.contains("inputs[0].bus") && message.contains("\"vocals\""), "\(message)")
    #expect(h.mixer.inputs.settings == before)
    #expect(try h.mixer.inputs.status("mic").destination == "vox_bus")
    // A new sample rate (the server restarted at another): the copy keeps the route.
    let copy = try h.mixer.copy(atSampleRate: 44100)
    defer { copy.shutdown() }
    #expect(try copy.inputs.status("mic").destination == "vox_bus")
    #expect(copy.buses.members(of: "vox_bus") == ["mic"])
  }
}
