// Golden tests of the script-visible output formats: `stems`, `status`, `meters`.
// README: "Script mode output is documented; keep these formats stable."
import Foundation
import Testing
@testable import StemdeckConsole
import StemdeckControl
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

@Suite("Display (golden)")
struct DisplayTests {
  static let stemsFooter =
    "flags: M muted, S solo, D direct outs, E ended, U underruns, G gliding, Q EQ, T stretch, F stretch fast, ! unreadable, L solo-safe"

  @Test("stems with no stems")
  func noStems() throws {
    let h = try ConsoleHarness()
    defer { h.shutdown() }
    #expect(h.run("stems") == (true, ["no stems (add one with 'add PATH')"]))
    #expect(h.run("ls") == (true, ["no stems (add one with 'add PATH')"]))
  }

  /// Issue 17: a file with more than two channels is downmixed by its layout when one is known
  /// (a FLAC's channel order is fixed: 6 channels are 5.1), else folded; `stems` says which.
  @Test("stems: more than two channels show the layout the downmix uses, or 'fold'")
  func stemsMultichannel() throws {
    let h = try ConsoleHarness()
    defer { h.shutdown() }
    let plain = try h.folder.wav("six.wav", channels: 6, sampleRate: 48000, seconds: 1)
    let sox = Process()
    sox.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    sox.arguments = ["sox", plain, h.folder.file("six.flac")]
    try sox.run()
    sox.waitUntilExit()
    try #require(sox.terminationStatus == 0, "sox could not write FLAC")
    #expect(h.run("add \(plain) as plain; add \(h.folder.file("six.flac")) as surround").ok)
    #expect(
      h.run("stems").output == [
        "name      file          ch     Hz  length     vol   pan  rate  loops  flags  loop  position  peak dB",
        "plain     six.wav   6 fold  48000  0:01.000  1.00  0.00  1.00  0      -         1  0:00.000  -inf/-inf",
        "surround  six.flac   6 5.1  48000  0:01.000  1.00  0.00  1.00  0      -         1  0:00.000  -inf/-inf",
        Self.stemsFooter,
        "ch: more than 2 channels are downmixed by their layout (ITU-R BS.775; 'fold': no known layout, odd channels averaged left, even right)"
      ])
  }

  @Test("stems: header, rows and flags")
  func stemsTable() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let result = h.run("stems")
    #expect(result.ok)
    #expect(
      result.output == [
        "name   file       ch     Hz  length     vol   pan  rate  loops  flags  loop  position  peak dB",
        "drums  drums.wav   2  48000  0:02.000  1.00  0.00  1.00  0      -         1  0:00.000  -inf/-inf",
        "bass   bass.wav    1  44100  0:01.000  1.00  0.00  1.00  0      -         1  0:00.000  -inf/-inf",
        Self.stemsFooter
      ])
    #expect(h.run("vol drums 0.5; pan drums -0.3; loops drums -1; mute drums; solo drums; directout drums on; rate bass 0.75").ok)
    #expect(
      h.run("stems").output == [
        "name   file       ch     Hz  length     vol    pan  rate  loops    flags  loop  position  peak dB",
        "drums  drums.wav   2  48000  0:02.000  0.50  -0.30  1.00  forever  MSD       1  0:00.000  -inf/-inf",
        "bass   bass.wav    1  44100  0:01.000  1.00   0.00  0.75  0        -         1  0:00.000  -inf/-inf",
        Self.stemsFooter
      ])
  }

  @Test("status without JACK")
  func status() throws {
    let h = try ConsoleHarness()
    defer { h.shutdown() }
    #expect(
      h.run("status") == (
        true,
        [
          "state: stopped",
          "position: 0:00.000 / -",
          "sample rate: 48000 Hz",
          "server: none (offline)",
          "underruns: 0",
          "stems: 0",
          "master: 1.00 (0.0 dB)",
          "quality: fast"
        ]
      ))
  }

  @Test("status with stems, a seek, the master in dB and an endless stem")
  func statusWithStems() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let first = h.run("status").output
    #expect(first.prefix(2) == ["state: stopped", "position: 0:00.000 / 0:02.000"])
    #expect(first.contains("stems: 2"))

    #expect(h.run("seek 1:23.5; master -6dB; quality medium; loops bass -1").ok)
    let lines = h.run("status").output
    #expect(
      lines == [
        "state: paused",
        "position: 1:23.500 / 0:02.000 (some stems loop forever)",
        "sample rate: 48000 Hz",
        "server: none (offline)",
        "underruns: 0",
        "stems: 2",
        "master: 0.50 (-6.0 dB)",
        "quality: medium"
      ])
    #expect(h.run("seek 1:02:03.25").ok)
    #expect(h.run("status").output.dropFirst().first == "position: 1:02:03.250 / 0:02.000 (some stems loop forever)")
  }

  static let silentMaster = "master       L peak   -inf avg   -inf hold   -inf clips 0 | R peak   -inf avg   -inf hold   -inf clips 0"

  @Test("meters before anything played")
  func metersSilent() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let silentStem = { (name: String) in
      name.padding(toLength: 12, withPad: " ", startingAt: 0)
        + " L peak   -inf avg   -inf hold   -inf clips 0 | R peak   -inf avg   -inf hold   -inf clips 0"
    }
    #expect(h.run("meters") == (true, [Self.silentMaster, silentStem("drums"), silentStem("bass")]))
    #expect(h.run("meters master") == (true, [Self.silentMaster]))
    #expect(h.run("meters bass") == (true, [silentStem("bass")]))
    #expect(h.run("meters reset") == (true, ["meters reset"]))
    // Script mode: --watch and watch print one snapshot instead of the live view.
    #expect(h.run("meters --watch").output == [Self.silentMaster, silentStem("drums"), silentStem("bass")])
    #expect(h.run("watch").output.count == 3)
  }

  /// The number after `label` in a meter line ("peak   -6.0" → -6.0).
  func value(after label: String, in text: Substring) -> Double? {
    guard let range = text.range(of: label + " ") else { return nil }
    let rest = text[range.upperBound...].drop { $0 == " " }
    return Double(rest.prefix { $0 != " " })
  }

  @Test("meters after playing: a full-scale sine at vol 0.5 reads -6.0 dB peak, about -9.0 dB average")
  func metersAfterPlaying() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("remove bass; vol drums 0.5").ok)
    #expect(h.run("play").ok)
    h.render(blocks: 20)
    let lines = h.run("meters drums").output
    #expect(lines.count == 1)
    let line = try #require(lines.first)
    #expect(line.hasPrefix("drums        L peak "))
    let channels = line.split(separator: "|")
    #expect(channels.count == 2)
    for ch in channels {
      #expect(value(after: "peak", in: ch) == -6.0, "\(line)")
      // RMS of a sine is peak - 3.01 dB; the meter window need not hold whole cycles.
      let average = try #require(value(after: "avg", in: ch))
      #expect(abs(average - (-9.03)) <= 0.1, "\(line)")
      #expect(ch.hasSuffix("clips 0") || ch.hasSuffix("clips 0 "), "\(line)")
    }
    let status = h.run("status").output
    #expect(status.first == "state: playing")
  }

  @Test(
    "settings changed before the first play take effect from the first sample",
    arguments: ["mute drums", "vol drums 0", "master 0", "solo bass"])
  func noLeakBeforeFirstPlay(_ line: String) throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    #expect(h.run("offset bass 10; stop").ok)  // bass stays silent for the first 10 s
    #expect(h.run(line).ok)
    #expect(h.run("play").ok)
    let peak = h.render(blocks: 4)
    #expect(peak == 0, "\(line): master peak \(peak) while nothing should sound")
  }
}
