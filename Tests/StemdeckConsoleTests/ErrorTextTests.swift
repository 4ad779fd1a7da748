// The control layer's errors state facts and carry render options and suggested steps as data
// (StemdeckControl's ControlText); the console words them (ErrorText.swift): flags for the render
// command, the REPL's syntax for a step (issue 18, item 2). The exact REPL texts are held by
// CommandTests' rejections; here the wording itself and the render command's.
import Foundation
import StemdeckControl
@testable import StemdeckConsole
import StemdeckTestSupport
import Testing
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

@Suite("the console words the control layer's errors")
struct ErrorTextTests {
  static let actions: [MixerAction] = [
    .addStem, .nameNewStem, .removeStem("drums"), .reopenSession, .resetPitch("drums"), .stretchMode("drums"),
    .loadEffect, .loadThatEffect, .unloadEffect("horn"), .unloadEffect(nil), .waitForEffect("horn"),
    .startRecording, .stopRecording, .unmapMidi, .exponentialGlide, .exponentialGlideSettings, .addInput, .removeInput,
    .addBus, .addMark
  ]

  @Test("each render option is named by a flag `stemdeck render` takes")
  func optionsAreFlags() {
    for option in RenderOption.allCases {
      #expect(Arguments.allHelp.contains(option.flag + " "), "\(option) → \(option.flag)")
    }
  }

  @Test("each suggested step is worded with REPL commands that exist; its neutral words name none")
  func stepsAreCommands() {
    for action in Self.actions {
      let words = action.replWords
      // Every quoted command ('sfx unload horn', 'add PATH') starts with a command word.
      let quoted = words.split(separator: "'", omittingEmptySubsequences: false).enumerated()
        .filter { $0.offset % 2 == 1 }.map { String($0.element) }
      let commands = quoted.isEmpty ? words.components(separatedBy: " and ") : quoted
      for command in commands {
        // A command ('sfx unload horn'), or a keyword of one's syntax ('as NAME' of add, 'exp').
        let word = String(command.split(separator: " ").first ?? "")
        let known = CommandTable.lookup(word) != nil || CommandTable.all.contains { $0.usage.contains(command) }
        #expect(known, "\(action): '\(command)' in \"\(words)\" is no command nor part of one's usage")
      }
      #expect(!action.plain.contains("'sfx") && !action.plain.contains("'record"), "\(action.plain)")
    }
    let exp = MixerAction.exponentialGlide.replWords.replacingOccurrences(of: "'", with: "")
    #expect((try? GlideSyntax.split(["1", "over", "2", exp], command: "vol"))?.exponential == true, "'\(exp)' is the REPL's glide word")
  }

  @Test("a control error: neutral message, typed step, the REPL's words at the console")
  func unknownStem() {
    let error = MixerError.unknownStem("x", known: [])
    #expect(error.text.actions == [.addStem])
    #expect(error.message == "unknown stem 'x' (there are no stems; add a stem)")
    #expect(error.consoleWords == "unknown stem 'x' (there are no stems; add one with 'add PATH')")
  }

  @Test("render errors name the command line's flags")
  func renderFlags() throws {
    let folder = try TemporaryFolder()
    try folder.wav("tone.wav", channels: 2, sampleRate: 48000, seconds: 1, amplitude: 0.5)
    try folder.write(
      """
      { "format" : "stemdeck-session", "version" : 1,
        "stems" : [ { "name" : "tone", "file" : "tone.wav", "loops" : -1 } ] }
      """, to: "song.json")
    let endless = try runBinary(["render", "song.json", "-o", "out.wav"], in: folder)
    #expect(endless.status == 1)
    #expect(
      endless.stderr.contains { $0.hasSuffix("a stem loops forever (loops -1), so the render needs --duration SECONDS") },
      "\(endless.stderr)")
    let dither = try runBinary(["render", "song.json", "-o", "out.wav", "--duration", "1", "--dither"], in: folder)
    #expect(dither.status == 1)
    #expect(
      dither.stderr.contains(
        "error: --dither is for integer outputs (.flac, .aiff: 24-bit); out.wav is 32-bit float WAV, which needs none"),
      "\(dither.stderr)")
    #expect(!FileManager.default.fileExists(atPath: folder.file("out.wav")))
  }
}
