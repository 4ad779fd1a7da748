// The level floor in the console's text and JSON (issue 37, item 4): a level at or below −160 dB
// is `-inf` in the REPL's meters and the mixer view, and `null` in the control socket's JSON and
// pushes; `analyze` and `render` print their levels by the same rule (the binary, end to end).
import Foundation
import StemdeckAudioFile
@testable import StemdeckConsole
import StemdeckControl
import StemdeckTestSupport
import Testing
@testable import StemdeckRemote
@testable import StemdeckLive

@Suite("level floor: -inf in text, null in JSON, at or below -160 dB")
struct LevelFloorTextTests {
  /// (dB, text); −infinity: digital silence.
  static let levels: [(Double, String)] = [(-159.9, "-159.9"), (-160, "-inf"), (-165, "-inf"), (-.infinity, "-inf")]

  @Test("REPL meters and the mixer view print -159.9 as a number and -160, -165 and silence as -inf")
  func text() {
    for (db, text) in Self.levels {
      #expect(Display.db(db) == text, "\(db)")
      #expect(MixerText.db(db) == text, "\(db)")
      let meter = MixerViewModel.Meter(peak: db, rms: db, hold: db, clipped: false)
      #expect(
        Display.meterChannel(0, of: [meter]) == "M peak \(text.padLeft(6)) avg \(text.padLeft(6)) hold \(text.padLeft(6)) clips 0",
        "\(Display.meterChannel(0, of: [meter]))")
    }
  }

  @Test("JSON (replies and pushes): -159.9 is a number, -160, -165 and silence are null")
  func json() {
    for (db, text) in Self.levels {
      let meter = MixerViewModel.Meter(peak: db, rms: db, hold: db, clipped: false)
      let encoded = ControlServer.encode(QueryJSON.meter(meter))
      let value = text == "-inf" ? "null" : "-159.9"
      #expect(encoded == "{\"clipped\":false,\"hold\":\(value),\"peak\":\(value),\"rms\":\(value)}", "\(encoded)")
      #expect((RemotePush.db(db) is NSNull) == (text == "-inf"), "\(db)")
    }
    // Two decimals in JSON: -159.996 would be -160.00, so null; -159.96 is a number.
    #expect(QueryJSON.db(-159.996) is NSNull && RemotePush.db(-159.996) is NSNull)
    #expect((QueryJSON.db(-159.96) as? Double) == -159.96 && (RemotePush.db(-159.96) as? Double) == -159.96)
  }

  /// A folder with level.wav: a stereo float WAV at `db` dBFS (2 s, 5 ms raised-cosine ends)
  /// and level.json playing it.
  func fixture(_ db: Double) throws -> TemporaryFolder {
    let folder = try TemporaryFolder()
    let frames = 96000, ramp = 240
    let a = db.isFinite ? pow(10, db / 20) : 0
    let mono = (0..<frames).map { i -> Float in
      let edge = min(i, frames - 1 - i)
      return Float(edge >= ramp ? a : a * (0.5 - 0.5 * cos(Double.pi * Double(edge) / Double(ramp))))
    }
    try writeOneStemSession(folder, name: "level", mono: mono)
    return folder
  }

  @Test("stemdeck analyze and render: the peak/RMS line and the sample peak line at -159.9, -160, -165 dBFS and silence")
  func analyzeAndRender() throws {
    for (db, text) in Self.levels {
      let folder = try fixture(db)
      let analyzed = try runBinary(["analyze", "level.json"], in: folder)
      #expect(analyzed.status == 0, "\(analyzed.stderr)")
      let rendered = try runBinary(["render", "level.json", "-o", "out.wav"], in: folder)
      #expect(rendered.status == 0, "\(rendered.stderr)")
      let line = "peak L \(text) dB, R \(text) dB; RMS L \(text) dB, R \(text) dB; clipped samples 0"
      #expect(analyzed.stdout.contains(line), "\(db): \(analyzed.stdout)")
      #expect(rendered.stdout.contains(line), "\(db): \(rendered.stdout)")
      #expect(analyzed.stdout.contains("sample peak \(text) dBFS"), "\(db): \(analyzed.stdout)")
      #expect(analyzed.stdout.contains("integrated loudness -inf LUFS"), "under the gate: \(analyzed.stdout)")
      if db < -160 { #expect(analyzed.stdout.contains("true peak -inf dBTP"), "\(analyzed.stdout)") }
      #expect(!analyzed.stdout.joined().contains("-160.0"), "the floor is never printed as a number: \(analyzed.stdout)")
    }
  }
}
