import Foundation
import StemdeckControl
import StemdeckEngine
import StemdeckSession
import Testing

/// The control layer's refusals as cases with their values (`MixerError.Reason`, issue 34 item
/// 5): what a program or a test matches on, apart from the words a front end makes of them.
@Suite struct TypedErrorTests {
  func refusal(_ body: () throws(MixerError) -> Void) -> MixerError? {
    do throws(MixerError) {
      try body()
      return nil
    } catch { return error }
  }

  @Test("an unknown strip is .unknown with the name as given and the closest name; the value is not checked first")
  func unknownStrip() throws {
    let mixer = Mixer(sampleRate: 48000)
    defer { mixer.shutdown() }
    try mixer.buses.add(BusSettings(name: "verb"))
    let error = refusal { () throws(MixerError) in try mixer.strips.setVolume("verv", 7) }
    #expect(error?.reason == .unknown(kind: .strip(withInputs: false), name: "verv", known: ["verb"], suggestion: "verb"))
    #expect(error?.message == "unknown stem or bus 'verv' — did you mean 'verb'?")
    let far = refusal { () throws(MixerError) in try mixer.strips.setVolume("zzzzzz", 1) }
    #expect(far?.message == "unknown stem or bus 'zzzzzz' (strips: verb)", "no close name: the names there are")
    let bus = refusal { () throws(MixerError) in try mixer.buses.route("verb", to: "nope") }
    if case .unknown(.bus, "nope", _, nil)? = bus?.reason {} else { Issue.record("not an unknown bus: \(String(describing: bus))") }
  }

  @Test("a value outside its rule is .outOfRange with the rule and the value as shown")
  func outOfRange() throws {
    let mixer = Mixer(sampleRate: 48000)
    defer { mixer.shutdown() }
    try mixer.buses.add(BusSettings(name: "verb"))
    let error = refusal { () throws(MixerError) in try mixer.strips.setPan("verb", 7) }
    #expect(error?.reason == .outOfRange(what: "pan", rule: .pan, got: "7"))
    #expect(error?.message == "pan must be a number between -1 and 1 (got 7)")
    let seek = refusal { () throws(MixerError) in try mixer.transport.seek(toSeconds: 2e6) }
    #expect(seek?.reason == .outOfRange(what: "seek position", rule: .position, got: "2000000"))
  }

  @Test("a full bank is .limit with its capacity and the name refused; nothing is added")
  func limit() throws {
    let mixer = Mixer(sampleRate: 48000)
    defer { mixer.shutdown() }
    for i in 0..<BusBank.maxBuses { try mixer.buses.add(BusSettings(name: "b\(i)")) }
    let error = refusal { () throws(MixerError) in try mixer.buses.add(BusSettings(name: "extra")) }
    #expect(error?.reason == .limit(what: .buses, max: BusBank.maxBuses, adding: "extra"))
    #expect(mixer.buses.statuses().count == BusBank.maxBuses)
  }

  @Test("a refusal without a case of its own keeps its words and its front-end parts")
  func refusedKeepsParts() {
    let error = MixerError("nothing to undo (\(action: .addStem))")
    #expect(error.reason == .refused("nothing to undo (\(action: .addStem))"))
    #expect(error.text.actions == [.addStem])
    #expect(MixerError.unknownStem("x", known: []).text.actions == [.addStem])
  }
}
