// Issue 16, item 29: file names that are not UTF-8. They are typed `"\xNN"` inside double quotes,
// completed in that form, printed escaped, stored losslessly in the session file (`\udbff\udeNN`),
// and the stem loads, plays, saves and opens again.
import Foundation
@testable import StemdeckConsole
import StemdeckAudioFile
import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import StemdeckText
import Testing

@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

#if canImport(Glibc)
import Glibc
#endif

/// Makes a file whose name is `prefix` + the raw `bytes` + `suffix` in `folder` (a sine WAV),
/// and returns its path as stemdeck holds it (RawFileName characters for the bytes).
func makeRawNamedWAV(
  _ folder: TemporaryFolder, prefix: String, bytes: [UInt8], suffix: String,
  seconds: Double = 1
) throws -> String {
  let plain = try folder.wav("plain-for-rename.wav", channels: 1, sampleRate: 48000, seconds: seconds, frequency: 440, amplitude: 0.5)
  let target = Array((folder.path + "/" + prefix).utf8) + bytes + Array(suffix.utf8)
  let result = (target.map { CChar(bitPattern: $0) } + [0]).withUnsafeBufferPointer { rename(plain, $0.baseAddress!) }
  guard result == 0 else { throw TestSupportError("rename to a raw name failed: \(String(cString: strerror(errno)))") }
  return RawFileName.string(fromBytes: target)
}

@Suite("File names that are not UTF-8 (issue 16, item 29)")
struct RawFileNameTests {
  @Test("bytes round-trip through the String form, whatever they are (valid UTF-8 stays text)")
  func roundTrip() {
    var random = SplitMix64(seed: 29)
    for _ in 0..<2000 {
      let bytes = (0..<random.below(24)).map { _ in UInt8(1 + random.below(255)) }
      let text = RawFileName.string(fromBytes: bytes)
      #expect(RawFileName.bytes(text) == bytes, "\(bytes)")
      #expect(RawFileName.normalized(text) == text)
    }
    #expect(RawFileName.string(fromBytes: Array("café".utf8)) == "café")
    #expect(RawFileName.escaped(RawFileName.string(fromBytes: [0x63, 0x61, 0x66, 0xE9])) == "caf\\xe9")
    // A name that really holds a stand-in character keeps naming the same bytes.
    let standIn = Array("\u{10FEE9}".utf8)
    #expect(RawFileName.bytes(RawFileName.string(fromBytes: standIn)) == standIn)
  }

  @Test("the tokenizer reads \\xNN inside double quotes as a byte; valid UTF-8 spelled in bytes is the character; bad escapes are errors")
  func tokenizer() throws {
    let raw = RawFileName.string(fromBytes: Array("caf".utf8) + [0xE9] + Array(".wav".utf8))
    #expect(try Tokenizer.commands(in: #"add "caf\xe9.wav" as x"#) == [["add", raw, "as", "x"]])
    #expect(try Tokenizer.commands(in: #"add caf"\xE9".wav"#) == [["add", raw]])
    #expect(try Tokenizer.commands(in: #"add "caf\xc3\xa9.wav""#) == [["add", "café.wav"]])
    #expect(try Tokenizer.commands(in: #"echo "\x41\x62""#) == [["echo", "Ab"]])
    // Outside double quotes a backslash still just escapes the next character.
    #expect(try Tokenizer.commands(in: #"echo \x41 'a\x41'"#) == [["echo", "x41", "a\\x41"]])
    for bad in [#"add "a\xg1""#, #"add "a\x4""#, #"add "\x00""#] {
      #expect(throws: CommandError.self, "\(bad)") { try Tokenizer.commands(in: bad) }
    }
  }

  @Test("completion lists the file and inserts it in the \\xNN form, in each quoting style, so the line reads back as the file")
  func completion() throws {
    let folder = try TemporaryFolder()
    let path = try makeRawNamedWAV(folder, prefix: "caf", bytes: [0xE9], suffix: ".wav")
    let found = Completion.files(matching: folder.path + "/caf")
    #expect(found == [path], "\(found.map(RawFileName.escaped))")
    for opening in ["", "\"", "'"] {
      let rendered = CompletionWord(lineBeforeCursor: "add " + opening).render(path)
      #expect(!RawFileName.holdsRawBytes(rendered) && rendered.contains("\\xe9"), "\(rendered)")
      #expect(try Tokenizer.commands(in: "add " + rendered) == [["add", path]], "\(opening): \(rendered)")
    }
    // What was typed so far in the escaped form is read back too (Tab after `"caf\xe9`).
    let typed = CompletionWord(lineBeforeCursor: #"add ""# + folder.path + #"/caf\xe9"#)
    #expect(typed.unquoted == folder.path + "/caf" + String(Character(RawFileName.scalar(forByte: 0xE9))))
  }

  @Test("the stem is added, listed escaped, saved as \\udbff\\udeNN, and opens again online and plays; a missing one is named escaped")
  func loadSaveReopen() throws {
    let h = try ConsoleHarness()
    defer { h.shutdown() }
    let path = try makeRawNamedWAV(h.folder, prefix: "caf", bytes: [0xE9], suffix: ".wav")
    #expect(h.run(#"add ""# + h.folder.path + #"/caf\xe9.wav""#) == (true, ["added caf_"]))
    #expect(h.mixer.stems.statuses().map(\.path) == [path])
    let listed = h.run("stems").output.joined(separator: "\n")
    #expect(listed.contains("caf\\xe9") && !RawFileName.holdsRawBytes(listed), "\(listed)")
    #expect(h.run("play").ok)
    #expect(h.render(blocks: 8) > 0.3)

    let session = h.folder.file("raw.json")
    #expect(h.run("save \(session)").ok)
    let text = try String(contentsOfFile: session, encoding: .utf8)
    #expect(text.contains(#""file" : "caf\udbff\udee9.wav""#), "\(text)")

    let again = try ConsoleHarness()
    defer { again.shutdown() }
    let opened = again.run("open \(session)")
    #expect(opened == (true, ["opened \(session): 1 stem"]), "\(opened)")
    #expect(again.mixer.offlineStems.isEmpty)
    #expect(again.mixer.stems.statuses().map(\.path) == [path])
    #expect(again.run("play").ok)
    #expect(again.render(blocks: 8) > 0.3)
    #expect(again.run("save").ok)
    let resaved = try String(contentsOfFile: session, encoding: .utf8)
    #expect(resaved.contains(#""file" : "caf\udbff\udee9.wav""#), "\(resaved)\nfirst saved as:\n\(text)")

    // A raw name that does not exist: the error names it escaped, never with the raw byte.
    let missing = h.run(#"add ""# + h.folder.path + #"/nope\xff.wav""#)
    #expect(!missing.ok)
    #expect(
      missing.output.count == 1 && missing.output[0].contains("nope\\xff.wav") && missing.output[0].contains("no such file"),
      "\(missing.output)")
    #expect(!RawFileName.holdsRawBytes(missing.output.joined()))
  }

  @Test("a file written under a name that is not UTF-8 (a render output, a take) gets exactly those bytes, and reads back")
  func writerUsesTheBytes() throws {
    let folder = try TemporaryFolder()
    let path = folder.path + "/take" + String(Character(RawFileName.scalar(forByte: 0xFF))) + ".wav"
    let writer = try SoundFileWriter(path: path, format: .wavFloat, sampleRate: 48000, channelCount: 2, exclusive: true)
    let samples = [Float](repeating: 0.25, count: 200)
    try samples.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frameCount: 100) }
    try writer.finish()
    #expect(Completion.folderEntries(folder.path).map(RawFileName.bytes) == [Array("take".utf8) + [0xFF] + Array(".wav".utf8)])
    #expect(try SoundFile(readingFrom: path).info.frameCount == 100)
  }

  @Test("a session file whose name is not UTF-8: saved (its backup too), opened again, by its bytes")
  func sessionUnderARawName() throws {
    let h = try ConsoleHarness.withStems()
    defer { h.shutdown() }
    let typed = #"""# + h.folder.path + #"/set\xe9.json""#
    #expect(h.run("save \(typed)").ok)
    #expect(h.run("vol drums 0.4; save").ok)
    let names = Completion.folderEntries(h.folder.path).map(RawFileName.bytes).filter { $0.starts(with: Array("set".utf8)) }
    #expect(
      Set(names) == [Array("set".utf8) + [0xE9] + Array(".json".utf8), Array("set".utf8) + [0xE9] + Array(".json.bak".utf8)],
      "\(names)")
    let again = try ConsoleHarness()
    defer { again.shutdown() }
    let opened = again.run("open \(typed)")
    #expect(opened.ok && opened.output.first?.contains("set\\xe9.json") == true, "\(opened)")
    #expect(again.mixer.stems.statuses().first { $0.settings.name == "drums" }?.settings.volume == 0.4)
  }
}
