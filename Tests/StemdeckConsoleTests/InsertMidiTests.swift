import Foundation
import StemdeckControl
import StemdeckEngine
import StemdeckSession
import Testing
@testable import StemdeckConsole
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

/// A plugin insert's control as a MIDI target: `midi map cc N insert STRIP POS SYMBOL` spans the
/// port's range (swh's amp: gain −70…70 dB, linear; swh's lowpass_iir: cutoff 0.0001…0.45,
/// logarithmic), fed to the renderer as the process callback does; saved as "parameter".
@Suite struct InsertMidiTests {
  @Test(
    "a controller spans an insert control's range, linear or logarithmic as the port says; bad targets are refused; saved and read back")
  func controllerDrivesParameter() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    for line in [
      "insert add drums http://plugin.org.uk/swh-plugins/amp", "insert add drums http://plugin.org.uk/swh-plugins/lowpass_iir",
      "midi map cc 21 insert drums 1 gain", "midi map cc 22 ch 3 insert drums 2 cutoff"
    ] {
      let r = h.run(line)
      #expect(r.ok, "\(line): \(r.output)")
    }
    #expect(h.run("midi maps").output == ["cc 21 insert drums 1 gain", "cc 22 ch 3 insert drums 2 cutoff"])
    for (line, fragment) in [
      ("midi map cc 23 insert drums 3 gain", "insert position must be 1 to 2 on 'drums' (got 3)"),
      ("midi map cc 23 insert drums 1 volume", "its controls: gain"),
      ("midi map note 40 insert drums 1 gain", "insert follows a controller or pitch bend, not a note"),
      ("midi map cc 23 insert drums gain", "insert NAME N SYMBOL")
    ] {
      #expect(h.refusal(line)?.contains(fragment) == true, "\(line): \(String(describing: h.refusal(line)))")
    }
    h.render(blocks: 1)
    let send = h.playMIDI
    func value(_ position: Int, _ symbol: String) throws -> Double? { try h.mixer.inserts.list(of: "drums")[position - 1].values[symbol] }
    var gains: [Double?] = []
    // Soft takeover: the knob at 0 leaves the gain (0 dB, the middle) alone until it passes it.
    for cc: UInt8 in [0, 127, 0] {
      send([0xB0, 21, cc])
      gains.append(try value(1, "gain"))
    }
    send([0xB0, 21, 64])
    let middle = try value(1, "gain") ?? .nan
    #expect(gains == [0, 70, -70] && abs(middle - (-70 + 140 * 64 / 127.0)) < 1e-9, "\(gains), \(middle)")
    // Set elsewhere, the parameter is the knob's again only once the knob reaches it.
    #expect(h.run("insert set drums 1 gain -35").ok)
    send([0xB0, 21, 127])
    #expect(try value(1, "gain") == -35, "held: the knob jumped past nothing yet")
    send([0xB0, 21, 20])
    #expect(try value(1, "gain") == -70 + 140 * 20 / 127.0, "picked up where it crossed -35 dB")
    send([0xB2, 22, 0])
    send([0xB2, 22, 127])
    send([0xB2, 22, 64])
    let cutoff = 0.0001 * pow(0.45 / 0.0001, 64 / 127.0)
    let got = try value(2, "cutoff") ?? .nan
    #expect(abs(got - cutoff) < 1e-9, "logarithmic: \(got) ≠ \(cutoff)")
    let path = h.folder.file("insert-midi.json")
    #expect(h.run("save \(path)").ok)
    let text = try String(contentsOfFile: path, encoding: .utf8)
    #expect(text.contains("\"action\" : \"insert\", \"target\" : \"drums\", \"parameter\" : \"1/gain\""), "\(text)")
    #expect(try SessionFile.load(path: path).midi.mappings == h.mixer.midi.mappings)
  }
}

extension ConsoleHarness {
  /// The error a command line ends with, or nil when it succeeds.
  func refusal(_ line: String) -> String? {
    let r = run(line)
    return r.ok ? nil : r.output.first { $0.hasPrefix("error: ") } ?? "failed without an error line"
  }

  /// One 3-byte MIDI message in, as the process callback passes it, then a block and a pump.
  func playMIDI(_ b: [UInt8]) {
    midiInput(mixer.renderState, offset: 0, count: 3, b[0], b[1], b[2])
    render(blocks: 1)
    _ = mixer.pump()
  }
}
