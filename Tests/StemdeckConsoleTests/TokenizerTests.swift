import Testing
@testable import StemdeckConsole
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

@Suite("Tokenizer")
struct TokenizerTests {
  /// (line, the commands it splits into).
  static let cases: [(String, [[String]])] = [
    ("", []),
    ("   \t ", []),
    ("play", [["play"]]),
    ("  vol   drums\t0.8  ", [["vol", "drums", "0.8"]]),
    // Quotes group words; both kinds; quotes may sit inside a word.
    ("add 'My Drums.wav' as drums", [["add", "My Drums.wav", "as", "drums"]]),
    ("add \"My Drums.wav\"", [["add", "My Drums.wav"]]),
    ("echo it''s", [["echo", "its"]]),
    ("echo a'b c'd", [["echo", "ab cd"]]),
    ("echo ''", [["echo", ""]]),
    ("echo \"it's\" 'say \"hi\"'", [["echo", "it's", "say \"hi\""]]),
    // Backslash escapes outside single quotes and inside double quotes; literal inside single quotes.
    ("add My\\ Drums.wav", [["add", "My Drums.wav"]]),
    ("echo \"a\\\"b\"", [["echo", "a\"b"]]),
    ("echo 'a\\b'", [["echo", "a\\b"]]),
    ("echo \\#not-a-comment", [["echo", "#not-a-comment"]]),
    ("echo a\\;b", [["echo", "a;b"]]),
    ("echo trailing\\", [["echo", "trailing\\"]]),
    // '#' starts a comment only at the start of a word.
    ("# a comment", []),
    ("play # and a comment", [["play"]]),
    ("play #comment; stop", [["play"]]),
    ("echo a#b", [["echo", "a#b"]]),
    ("echo '#quoted'", [["echo", "#quoted"]]),
    // ';' separates commands outside quotes; empty commands vanish.
    ("play; stop", [["play"], ["stop"]]),
    ("play;stop", [["play"], ["stop"]]),
    (" ; play ;; stop ; ", [["play"], ["stop"]]),
    ("echo 'a;b'", [["echo", "a;b"]]),
    ("vol drums -6 dB; pan drums -0.3 # done", [["vol", "drums", "-6", "dB"], ["pan", "drums", "-0.3"]]),
    // `{ … }` is one word, semicolons and '#' included (the body of `at POSITION { cmd; cmd }`).
    ("at 1:00 { vol bass 0; unmute lead }", [["at", "1:00", "{ vol bass 0; unmute lead }"]]),
    ("at bar 3 {vol bass 0;mute lead}; echo done", [["at", "bar", "3", "{vol bass 0;mute lead}"], ["echo", "done"]]),
    ("at 1 { a { b } c } d", [["at", "1", "{ a { b } c }", "d"]]),
    ("at 1 { mute a # not a comment }", [["at", "1", "{ mute a # not a comment }"]]),
    ("echo a{b}", [["echo", "a{b}"]]),
    ("echo '{'", [["echo", "{"]])
  ]

  @Test("splits lines into commands and words", arguments: cases)
  func splits(_ line: String, _ expected: [[String]]) throws {
    #expect(try Tokenizer.commands(in: line) == expected)
  }

  @Test(
    "unbalanced quotes are an error naming the quote",
    arguments: [
      ("add 'My Drums.wav", "unbalanced quote: a ' is not closed"),
      ("echo \"abc", "unbalanced quote: a \" is not closed"),
      ("echo \"a\\\"", "unbalanced quote: a \" is not closed"),
      ("play; echo 'x", "unbalanced quote: a ' is not closed")
    ])
  func unbalanced(_ line: String, _ message: String) {
    #expect(throws: CommandError(message)) { try Tokenizer.commands(in: line) }
  }

  @Test("an unbalanced quote rejects the whole line: nothing runs")
  func unbalancedRunsNothing() throws {
    let h = try ConsoleHarness()
    defer { h.shutdown() }
    let result = h.run("echo first; echo 'second")
    #expect(!result.ok)
    #expect(result.output == ["error: unbalanced quote: a ' is not closed"])
  }
}
