// The shell completion and the commands man page against the program's own word lists (issue 36:
// `help`, the man page's command list and the completion's words must never disagree), and the
// bash completion run in bash as Tab would run it.
import Foundation
import StemdeckAudioFile
@testable import StemdeckConsole
import StemdeckTestSupport
import Testing
@testable import StemdeckRemote
@testable import StemdeckLive

@Suite("completion files and the commands man page agree with the program")
struct CompletionFilesTests {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()
  static let bashFile = root.appendingPathComponent("completions/stemdeck.bash").path

  /// The words of `local NAME="…"` in the bash completion.
  func words(_ name: String) throws -> [String] {
    let text = try String(contentsOfFile: Self.bashFile, encoding: .utf8)
    let prefix = "local \(name)=\""
    let line = try #require(text.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix(prefix) })
    let value = line.trimmingCharacters(in: .whitespaces).dropFirst(prefix.count).prefix { $0 != "\"" }
    return value.split(separator: " ").map(String.init)
  }

  @Test("the completion's options are the parser's, each under its subcommand; formats and help topics the program's")
  func wordLists() throws {
    let lists = try ["live_options", "render_options", "analyze_options", "ctl_options"].map(words)
    #expect(Set(lists.joined()) == Set(Arguments.knownOptions), "\(Set(lists.joined()).symmetricDifference(Arguments.knownOptions))")
    for (list, topic) in zip(lists, [HelpTopic.live, .render, .analyze, .ctl]) {
      for option in list where option != "--help" && option != "--version" {
        #expect(Arguments.help(topic).contains(option + " ") || Arguments.help(topic).contains(option + ","), "\(topic): \(option)")
      }
    }
    #expect(try words("formats") == OutputFormat.formatNames.map(\.name))
    #expect(try Set(words("topics")) == Set(HelpTopic.allCases.map(\.rawValue)))
    #expect(try words("subcommands") == ["render", "analyze", "ctl", "config", "help"])
  }

  @Test("bash completes options, values, sessions and audio files as Tab would")
  func bashCompletes() throws {
    let folder = try TemporaryFolder()
    for name in ["song.json", "my song.json", "take.wav", "mix.flac", "notes.txt"] { try folder.write("", to: name) }
    try FileManager.default.createDirectory(atPath: folder.file("stems"), withIntermediateDirectories: false)
    let cases: [([String], String)] = [
      (["stemdeck", "--se"], "[--server]"),
      (["stemdeck", "render", "s"], "[song.json][stems]"),
      (["stemdeck", "render", "song.json", "--format", "f"], "[float][flac16][flac24]"),
      (["stemdeck", "analyze", ""], "[my song.json][song.json][mix.flac][take.wav][stems]"),
      (["stemdeck", "analyze", "--j"], "[--json]"),
      (["stemdeck", "help", ""], "[render][analyze][ctl][config][live]"),
      (["stemdeck", "config", "--con"], "[--config][--control]"),
      (["stemdeck", "ctl", "--w"], "[--watch]"),
      (["stemdeck", "--start-server", "n"], "[net][net:]"),
      (["stemdeck", "render", "song.json", "--no"], "[--normalize]")
    ]
    var script = "source '\(Self.bashFile)'\n"
    script += "t() { COMP_WORDS=(\"$@\"); COMP_CWORD=$(( $# - 1 )); _stemdeck; printf '[%s]' \"${COMPREPLY[@]}\"; echo; }\n"
    for (words, _) in cases { script += "t " + words.map { "'\($0)'" }.joined(separator: " ") + "\n" }
    let scriptFile = try folder.write(script, to: "complete.sh")
    let outcome = try runProcess(
      "/bin/bash", [scriptFile], directory: folder.path, environment: [:],
      stdout: folder.file("out"), stderr: folder.file("err"), timeout: 30)
    let out = try String(contentsOfFile: folder.file("out"), encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
    let err = try String(contentsOfFile: folder.file("err"), encoding: .utf8)
    #expect(outcome.status == 0 && err.isEmpty, "\(err)")
    // Compared as sets: bash lists files in the directory's order, which the file system chooses.
    func items(_ line: Substring) -> [String] {
      line.split(separator: "]").map { String($0.drop { $0 == "[" }) }.sorted()
    }
    for (index, (words, expected)) in cases.enumerated() {
      #expect(
        index < out.count && items(out[index]) == items(expected[...]), "\(words): \(index < out.count ? String(out[index]) : "nothing")")
    }
  }

  @Test("the version is the VERSION file's: every man page's header says it and the CHANGELOG has its section")
  func versionInOnePlace() throws {
    func read(_ path: String) throws -> String {
      try String(contentsOfFile: Self.root.appendingPathComponent(path).path, encoding: .utf8)
    }
    let release = try read("VERSION").trimmingCharacters(in: .whitespacesAndNewlines)
    #expect(release.wholeMatch(of: /[0-9]+(\.[0-9]+)*/) != nil, "VERSION: \(release)")
    for page in ["man/stemdeck.1", "man/stemdeck-commands.7", "man/stemdeck-session.5"] {
      let header = try read(page).split(separator: "\n").first { $0.hasPrefix(".TH ") } ?? ""
      #expect(header.contains("\"stemdeck \(release)\""), "\(page): \(header)")
    }
    let sections = try read("CHANGELOG.md").split(separator: "\n").filter { $0.hasPrefix("## ") }
    #expect(sections.contains { $0 == "## \(release)" || $0.hasPrefix("## \(release) ") }, "CHANGELOG sections: \(sections)")
  }

  @Test("stemdeck-commands(7) has an entry for every console command and names every alias, and nothing else")
  func commandsManPage() throws {
    let text = try String(contentsOfFile: Self.root.appendingPathComponent("man/stemdeck-commands.7").path, encoding: .utf8)
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    var entries: [String] = []
    var aliases: [String] = []
    for (i, line) in lines.enumerated() where line == ".PP" && i + 1 < lines.count {
      let next = lines[i + 1]
      guard next.hasPrefix("\\fB"), let end = next.range(of: "\\fP") else { continue }
      entries.append(String(next[next.index(next.startIndex, offsetBy: 3)..<end.lowerBound]))
    }
    for line in lines where line.hasPrefix("Also: ") {
      var rest = line[...]
      while let start = rest.range(of: "\\fB"), let end = rest.range(of: "\\fP", range: start.upperBound..<rest.endIndex) {
        aliases.append(String(rest[start.upperBound..<end.lowerBound]))
        rest = rest[end.upperBound...]
      }
    }
    let names = CommandTable.all.map(\.name)
    #expect(Set(entries) == Set(names), "man page only: \(Set(entries).subtracting(names)); table only: \(Set(names).subtracting(entries))")
    let tableAliases = Set(CommandTable.all.flatMap(\.aliases))
    #expect(
      Set(aliases) == tableAliases,
      "man page only: \(Set(aliases).subtracting(tableAliases)); table only: \(tableAliases.subtracting(aliases))")
  }
}
