import Foundation
import Testing
@testable import StemdeckConsole
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

@Suite("ValueParser")
struct ValueParserTests {
  // MARK: volume

  @Test(
    "volumes: linear and dB",
    arguments: [
      ("0.8", 0.8), ("0", 0), ("2", 2), (".5", 0.5), ("+0.5", 0.5), ("-0", 0), ("1e-1", 0.1),
      ("-6dB", linear(decibels: -6)), ("-6db", linear(decibels: -6)), ("-6 dB", linear(decibels: -6)),
      ("0dB", 1), ("+3dB", linear(decibels: 3)), ("+6dB", linear(decibels: 6)), ("6dB", linear(decibels: 6)),
      ("-inf dB", 0), ("-infdB", 0), ("-inf DB", 0), ("-200dB", 0)
    ])
  func volume(_ text: String, _ expected: Double) throws {
    let v = try ValueParser.volume(text)
    #expect(abs(v - expected) < 1e-9, "\(text) → \(v), expected \(expected)")
  }

  @Test("-6dB is 0.501187 linear")
  func minusSixDecibels() throws {
    #expect(abs(try ValueParser.volume("-6dB") - 0.501187) < 1e-6)
  }

  @Test(
    "volumes that are rejected, with their messages",
    arguments: [
      ("3", "volume must be a number between 0 and 2, or a level in dB such as \"-6dB\" (got 3)"),
      ("-0.1", "volume must be a number between 0 and 2, or a level in dB such as \"-6dB\" (got -0.1)"),
      ("2.0001", "volume must be a number between 0 and 2, or a level in dB such as \"-6dB\" (got 2.0001)"),
      ("+7dB", "volume must be a number between 0 and 2, or a level in dB such as \"-6dB\" (got +7dB, which is a gain of 2.239)"),
      ("6.1dB", "volume must be a number between 0 and 2, or a level in dB such as \"-6dB\" (got 6.1dB, which is a gain of 2.018)"),
      ("nan", "volume must be a number (got 'nan')"),
      ("inf", "volume must be a number (got 'inf')"),
      ("-inf", "volume must be a number (got '-inf')"),
      ("0x10", "volume must be a number (got '0x10')"),
      ("1e400", "volume must be a number (got '1e400')"),
      ("", "volume must be a number (got '')"),
      ("half", "volume must be a number (got 'half')"),
      ("0.5.5", "volume must be a number (got '0.5.5')"),
      ("nandB", "volume must be a number between 0 and 2, or a level in dB such as \"-6dB\" (got 'nandB')"),
      ("1e400dB", "volume must be a number between 0 and 2, or a level in dB such as \"-6dB\" (got '1e400dB')"),
      ("+infdB", "volume must be a number between 0 and 2, or a level in dB such as \"-6dB\" (got '+infdB')")
    ])
  func badVolume(_ text: String, _ message: String) {
    #expect(throws: CommandError(message)) { try ValueParser.volume(text) }
  }

  // MARK: number and integer

  @Test(
    "numbers: finite decimals only",
    arguments: [
      ("0.8", 0.8), ("-0.3", -0.3), ("2", 2), (".5", 0.5), ("-0", 0), ("1e3", 1000)
    ])
  func number(_ text: String, _ expected: Double) throws {
    let v = try ValueParser.number(text, "pan")
    #expect(v == expected)
    #expect(v.sign == .plus || v != 0, "-0 must come back as 0")
  }

  @Test(
    "non-numbers are rejected",
    arguments: ["nan", "NaN", "inf", "infinity", "0x10", "1e400", "-1e400", "", "1,5", "½", String(repeating: "1", count: 33)])
  func badNumber(_ text: String) {
    #expect(throws: CommandError("pan must be a number (got '\(ValueParser.printable(text))')")) {
      try ValueParser.number(text, "pan")
    }
  }

  @Test("integers", arguments: [("3", 3), ("-1", -1), ("0", 0), ("+2", 2), ("1000000", 1_000_000)])
  func integer(_ text: String, _ expected: Int) throws {
    #expect(try ValueParser.integer(text, "loops") == expected)
  }

  @Test("non-integers are rejected", arguments: ["1.5", "", "three", "1e3", "0x10", String(repeating: "9", count: 19)])
  func badInteger(_ text: String) {
    #expect(throws: CommandError("loops must be a whole number (got '\(text)')")) { try ValueParser.integer(text, "loops") }
  }

  // MARK: position

  @Test(
    "positions: seconds, m:ss, h:mm:ss and relative forms",
    arguments: [(String, Double, Bool)]([
      ("83.5", 83.5, false), ("0", 0, false), ("1:23.5", 83.5, false), ("0:05", 5, false),
      ("1:02:03", 3723, false), ("99:59", 99 * 60 + 59, false), ("1:59.999", 119.999, false),
      ("+10", 10, true), ("-5", -5, true), ("-1:30", -90, true), ("+0:00.5", 0.5, true)
    ]))
  func position(_ text: String, _ seconds: Double, _ relative: Bool) throws {
    let p = try ValueParser.position(text)
    #expect(abs(p.seconds - seconds) < 1e-9)
    #expect(p.relative == relative)
  }

  static let positionFormat = "position must be seconds (83.5), m:ss (1:23.5) or h:mm:ss, optionally +/- for relative"

  @Test(
    "malformed positions",
    arguments: ["abc", "", "+", "-", "1:", ":30", "1::2", "1:2:3:4", "1.5:30", "1e3", "--5", "+-5", "1:-5", "nan", "inf"])
  func badPosition(_ text: String) {
    #expect(throws: CommandError("\(Self.positionFormat) (got '\(text)')")) { try ValueParser.position(text) }
  }

  @Test("minutes and seconds after ':' must be below 60", arguments: ["1:75", "0:60", "1:60:00", "+1:60"])
  func sixtyOrMore(_ text: String) {
    #expect(throws: CommandError("position '\(text)': minutes and seconds after ':' must be below 60")) {
      try ValueParser.position(text)
    }
  }

  // MARK: duration

  @Test(
    "durations",
    arguments: [
      ("500ms", 0.5), ("2s", 2), ("2S", 2), ("2", 2), ("1:30", 90), ("0.25", 0.25), ("1500MS", 1.5), ("1:00:00", 3600)
    ])
  func duration(_ text: String, _ expected: Double) throws {
    #expect(abs(try ValueParser.duration(text) - expected) < 1e-12)
  }

  @Test(
    "bad durations",
    arguments: [
      ("-5", "duration must not have a sign (got '-5')"),
      ("+5", "duration must not have a sign (got '+5')"),
      ("xs", "duration must be seconds (2, 2s, 500ms) or m:ss (1:30) (got 'xs')"),
      ("nanms", "duration must be seconds (2, 2s, 500ms) or m:ss (1:30) (got 'nanms')"),
      ("1:30s", "duration must be seconds (2, 2s, 500ms) or m:ss (1:30) (got '1:30s')")
    ])
  func badDuration(_ text: String, _ message: String) {
    #expect(throws: CommandError(message)) { try ValueParser.duration(text) }
  }

  @Test(
    "negative durations with a unit are rejected like those without",
    arguments: ["-2s", "-500ms", "+2s"])
  func negativeDurationWithUnit(_ text: String) {
    #expect(throws: CommandError.self) { try ValueParser.duration(text) }
  }

  // MARK: on/off and printable

  @Test(
    "on/off words",
    arguments: [
      ("on", true), ("ON", true), ("yes", true), ("true", true), ("1", true),
      ("off", false), ("Off", false), ("no", false), ("false", false), ("0", false)
    ])
  func onOff(_ text: String, _ expected: Bool) throws {
    #expect(try ValueParser.onOff(text, "directout") == expected)
  }

  @Test("other words are not on/off", arguments: ["maybe", "", "2", "enable"])
  func badOnOff(_ text: String) {
    #expect(throws: CommandError("directout must be on or off (got '\(text)')")) { try ValueParser.onOff(text, "directout") }
  }

  @Test("echoed text has control characters escaped and is cut at 60 characters")
  func printable() {
    #expect(ValueParser.printable("a\u{1B}[31mb\u{7F}") == "a\\u{1b}[31mb\\u{7f}")
    #expect(ValueParser.printable(String(repeating: "x", count: 61)) == String(repeating: "x", count: 60) + "…")
    #expect(ValueParser.printable(String(repeating: "x", count: 60)) == String(repeating: "x", count: 60))
  }
}
