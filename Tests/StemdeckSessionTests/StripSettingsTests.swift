import Testing
@testable import StemdeckSession

/// The strip every kind embeds (StripSettings.swift): one value for stems, buses and inputs.
@Suite("One strip: StripSettings in stems, buses and inputs")
struct StripSettingsTests {
  /// A strip with no field at its default.
  static var unusual: StripSettings {
    var s = StripSettings()
    s.volume = 0.25
    s.pan = -0.5
    s.mute = true
    s.solo = true
    s.soloSafe = true
    s.directOut = true
    s.eq.low.gain = 3
    s.bus = "drums_bus"
    s.sends = [StemSend(to: "verb", level: 0.5)]
    return s
  }

  @Test("volume, pan, mute, solo, soloSafe, directOut, eq, bus and sends of each kind are its strip's")
  func kindsShareTheStrip() {
    var stem = StemSettings(name: "a", file: "a.wav")
    var bus = BusSettings(name: "b")
    var input = InputSettings(name: "c", channels: .mono)
    stem.strip = Self.unusual
    bus.strip = Self.unusual
    input.strip = Self.unusual
    for holder in [stem, bus, input] as [any StripSettingsHolder] {
      #expect(holder.volume == 0.25 && holder.pan == -0.5 && holder.mute && holder.solo && holder.soloSafe && holder.directOut)
      #expect(holder.eq.low.gain == 3 && holder.bus == "drums_bus" && holder.sends == Self.unusual.sends)
    }
    stem.volume = 0.5
    #expect(stem.strip.volume == 0.5, "a field set by its old name lands in the strip")
    #expect(StemSettings(name: "a", file: "a.wav").strip == StripSettings(), "a new stem's strip is the default strip")
    #expect(BusSettings(name: "b").strip == StripSettings.defaults(of: .bus))
    #expect(InputSettings(name: "c", channels: .mono).strip == StripSettings.defaults(of: .input), "an input is solo-safe")
    #expect(StripSettings.defaults(of: .input).soloSafe && !StripSettings.defaults(of: .stem).soloSafe)
  }

  @Test("a strip's mix is every field but bus, directOut and sends: what a failed group puts back")
  func mixLeavesRoutingAlone() {
    let routed = StripSettings.withRouting
    let mixed = routed.withMix(of: Self.unusual)
    #expect(mixed.bus == routed.bus && mixed.directOut == routed.directOut && mixed.sends == routed.sends)
    var expected = Self.unusual
    expected.bus = routed.bus
    expected.directOut = routed.directOut
    expected.sends = routed.sends
    #expect(mixed == expected)
    // Every stored field is named here: a field added to the strip fails this until it is decided
    // whether it is mix (put back by `withMix`, the default) or routing (kept, listed there).
    let fields = Mirror(reflecting: StripSettings()).children.compactMap(\.label)
    #expect(fields == ["volume", "pan", "width", "mute", "solo", "soloSafe", "directOut", "eq", "bus", "sends", "inserts"])
  }
}

extension StripSettings {
  /// A default mix, routed somewhere other than `StripSettingsTests.unusual`.
  fileprivate static var withRouting: StripSettings {
    var s = StripSettings()
    s.bus = "other_bus"
    s.directOut = false
    s.sends = [StemSend(to: "dly", level: 1, preFader: true)]
    return s
  }
}
