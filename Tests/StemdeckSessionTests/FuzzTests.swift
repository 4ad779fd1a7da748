import Foundation
import StemdeckTestSupport
import Testing
@testable import StemdeckSession

@Suite("Fuzzing the decoder")
struct FuzzTests {
  /// Tokens inserted at random places.
  static let tokens = [
    "{", "}", "[", "]", ",", ":", "\"", "\\", "null", "true", "false", "0", "-1", "1e999",
    "-1e999", "99999999999999999999999999999", "1.5", "-0", "\"x\"", "\"-6dB\"", "\"all\"",
    "\"drums\"", "NaN", "Infinity", "\u{0}", "\n", "\"\\ud800\"", "\"\\u0000\"", "é", "\u{FEFF}",
    "\"name\" : \"n\"", "\"volume\" : 3", "\"loops\" : -1", "\"vol\" : 1", "[]", "{}",
    "\"effects\" : []", "\"recording\" : {}", "\"songChange\" : \"crossfade\"", "\"horn\"",
    "\"tempo\" : {}", "\"tempo\" : { \"bpm\" : 120 }", "\"bpm\" : 400", "\"beatsPerBar\" : 33",
    "\"loopStart\" : 2", "\"loopEnd\" : 1", "\"crossfade\" : 0.5", "\"mode\" : \"stretch\"",
    "\"pitch\" : -24", "\"transportSync\" : \"lead\""
  ]
  /// Values substituted for scalar values.
  static let values = [
    "1e308", "-1e308", "1e-320", "123456789012345678901234567890", "-0", "0.5", "2", "-1", "1",
    "1000001", "1e999", "\"-inf dB\"", "\"+9dB\"", "\"\"", "\"a:b\"", "null", "true", "[]", "{}",
    "\"fast\"", "\"best\"", "\"pre\"", "3.0", "0.49999999999999994", "2.0000000000000004",
    "\"wav24\"", "\"flac24\"", "\"crossfade\"", "\"gapless\"", "0.05", "0.049999999999999996",
    "30", "30.000000000000004", "\"\\u0000\"", "\"kick\"",
    "\"stretch\"", "\"varispeed\"", "\"off\"", "\"follow\"", "\"lead\"", "20", "400",
    "19.999999999999996", "400.00000000000006", "32", "33", "0", "24", "-24", "24.000000000000004",
    "86400", "86400.00000000001", "9.25", "1.25", "1.0000000000000002"
  ]

  /// The document the mutations start from: every section present (effects, recording, tempo, the
  /// crossfade and transport options, stem loop regions, stretch mode and pitch included), several stems.
  static let seed: String = {
    var session = everythingSession()
    session.stems.append(StemSettings(name: "drums", file: "../Samples/drums.flac"))
    return SessionFile.encode(session)
  }()

  /// The byte ranges of scalar values that follow a " : " in the document (numbers, strings, literals).
  static func valueRanges(_ bytes: [UInt8]) -> [Range<Int>] {
    var ranges: [Range<Int>] = []
    var i = 0
    while i + 3 < bytes.count {
      if bytes[i] == UInt8(ascii: " "), bytes[i + 1] == UInt8(ascii: ":"), bytes[i + 2] == UInt8(ascii: " ") {
        let start = i + 3
        var end = start
        var inString = false
        while end < bytes.count {
          let byte = bytes[end]
          if inString {
            if byte == UInt8(ascii: "\\") { end += 1 } else if byte == UInt8(ascii: "\"") { inString = false }
          } else if byte == UInt8(ascii: "\"") {
            inString = true
          } else if [
            UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), UInt8(ascii: "\n"),
            UInt8(ascii: "{"), UInt8(ascii: "[")
          ].contains(byte) {
            break
          }
          end += 1
        }
        // Trim the space before a closing brace.
        var trimmed = min(end, bytes.count)
        while trimmed > start && bytes[trimmed - 1] == UInt8(ascii: " ") { trimmed -= 1 }
        if trimmed > start { ranges.append(start..<trimmed) }
        i = end
      } else {
        i += 1
      }
    }
    return ranges
  }

  static func mutate(_ input: [UInt8], using random: inout SplitMix64) -> [UInt8] {
    var bytes = input
    guard !bytes.isEmpty else { return Array(tokens.randomElement(using: &random)!.utf8) }
    switch Int.random(in: 0..<9, using: &random) {
    case 0:  // flip bits of a byte
      let index = Int.random(in: 0..<bytes.count, using: &random)
      bytes[index] ^= UInt8.random(in: 1...255, using: &random)
    case 1:  // truncate
      bytes.removeSubrange(Int.random(in: 0..<bytes.count, using: &random)...)
    case 2:  // insert a token
      let index = Int.random(in: 0...bytes.count, using: &random)
      bytes.insert(contentsOf: Array(tokens.randomElement(using: &random)!.utf8), at: index)
    case 3:  // duplicate a "key" : value member into the same object
      let ranges = valueRanges(bytes)
      guard let range = ranges.randomElement(using: &random),
        let keyStart = bytes[..<range.lowerBound].dropLast(4).lastIndex(of: UInt8(ascii: "\"")).flatMap({
          bytes[..<$0].lastIndex(of: UInt8(ascii: "\""))
        })
      else { break }
      let member = Array(bytes[keyStart..<range.upperBound])
      bytes.insert(contentsOf: member + Array(", ".utf8), at: keyStart)
    case 4:  // swap two values
      let ranges = valueRanges(bytes)
      guard ranges.count >= 2 else { break }
      var a = ranges.randomElement(using: &random)!
      var b = ranges.randomElement(using: &random)!
      if a.lowerBound > b.lowerBound { swap(&a, &b) }
      guard a.upperBound <= b.lowerBound else { break }
      let first = Array(bytes[a])
      let second = Array(bytes[b])
      bytes.replaceSubrange(b, with: first)
      bytes.replaceSubrange(a, with: second)
    case 5:  // replace a value with an odd one (huge, tiny, wrong type…)
      guard let range = valueRanges(bytes).randomElement(using: &random) else { break }
      bytes.replaceSubrange(range, with: Array(values.randomElement(using: &random)!.utf8))
    case 6:  // replace a value with deep nesting
      guard let range = valueRanges(bytes).randomElement(using: &random) else { break }
      let depth = Int.random(in: 1...200, using: &random)
      let nested =
        Bool.random(using: &random)
        ? String(repeating: "[", count: depth) + "1" + String(repeating: "]", count: depth)
        : String(repeating: "{\"a\":", count: depth) + "1" + String(repeating: "}", count: depth)
      bytes.replaceSubrange(range, with: Array(nested.utf8))
    case 7:  // delete a random span
      let start = Int.random(in: 0..<bytes.count, using: &random)
      let end = min(bytes.count, start + Int.random(in: 1...8, using: &random))
      bytes.removeSubrange(start..<end)
    default:  // insert random bytes
      let index = Int.random(in: 0...bytes.count, using: &random)
      let count = Int.random(in: 1...4, using: &random)
      bytes.insert(contentsOf: (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }, at: index)
    }
    return bytes
  }

  @Test("5,000 mutated sessions either decode within the rules or fail with a message")
  func mutations() throws {
    var random = SplitMix64(seed: 0x5EED_5E55_1011)
    let seedBytes = Array(Self.seed.utf8)
    var decoded = 0
    var rejected = 0
    var changedButDecoded = 0
    var rejectedFields = Set<String>()  // the last part of each rejected location: "loopEnd", "bpm"…
    for iteration in 0..<5_000 {
      var bytes = seedBytes
      for _ in 0..<Int.random(in: 1...3, using: &random) {
        bytes = Self.mutate(bytes, using: &random)
      }
      do {
        let session = try SessionFile.decode(Data(bytes), source: "fuzz")
        decoded += 1
        if bytes != seedBytes { changedButDecoded += 1 }
        #expect(isWithinRules(session), "iteration \(iteration)")
        // Whatever decodes must survive a round trip unchanged.
        let text = SessionFile.encode(session)
        #expect((try? SessionFile.decode(Data(text.utf8), source: "again")) == session, "iteration \(iteration)")
      } catch {
        rejected += 1
        if let location = error.location { rejectedFields.insert(String(location.split(separator: ".").last!)) }
        #expect(!error.message.isEmpty, "iteration \(iteration)")
        #expect(error.file == "fuzz")
        if let line = error.line { #expect(line >= 1) }
      }
    }
    #expect(decoded > 0)
    #expect(changedButDecoded > 0)
    #expect(rejected > 0)
    #expect(decoded + rejected == 5_000)
    // The mutations reach the fields added without a version change.
    for field in ["bpm", "beatsPerBar", "loopStart", "loopEnd", "crossfade", "mode", "pitch", "transportSync"] {
      #expect(rejectedFields.contains(field), "no mutation was rejected at \(field)")
    }
  }

  @Test(
    "pathological inputs fail cleanly",
    arguments: [
      String(repeating: "[", count: 200_000),
      String(repeating: "{\"a\":", count: 100_000),
      "{\"format\":\"stemdeck-session\",\"version\":" + String(repeating: "9", count: 100_000) + "}",
      "{\"format\":\"stemdeck-session\",\"version\":1,\"position\":1" + String(repeating: "0", count: 400) + "}",
      "{\"format\":\"stemdeck-session\",\"version\":1,\"stems\":[" + String(repeating: "{},", count: 50_000) + "{}]}",
      "\"" + String(repeating: "\\", count: 100_001)
    ])
  func pathological(text: String) {
    #expect(throws: SessionError.self) { try decode(text) }
  }

  @Test("a long single-line document decodes in linear time")
  func longSingleLine() throws {
    var session = Session()
    session.stems = (0..<20_000).map { StemSettings(name: "s\($0)", file: "f\($0).wav") }
    let oneLine = SessionFile.encode(session).replacingOccurrences(of: "\n", with: " ")
    let start = ContinuousClock.now
    #expect(try decode(oneLine) == session)
    // A quadratic column count took minutes here; the time is a figure, not asserted (speed
    // targets live in scripts/bench).
    print("a one-line document of 20,000 stems decoded in \(ContinuousClock.now - start)")
  }
}
