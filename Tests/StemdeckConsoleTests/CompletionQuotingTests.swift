import Testing
@testable import StemdeckConsole
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

/// What Tab inserts parses back to the file or name it completed: escaped, or inside the quote
/// the user opened (the terminal tests drive the same through libedit).
@Suite("Completion quoting")
struct CompletionQuotingTests {
  static let names = [
    "my loop (take 2).wav", "café.flac", "it's.wav", "say \"hi\".wav", "back\\slash.wav", "semi;colon.wav",
    "#hash.wav", "{brace}.wav", "tab\there.wav", "plain.wav", "Samples/"
  ]

  @Test("a completed word reads back as the candidate, in each style", arguments: ["", "\"", "'"])
  func roundTrip(_ opening: String) throws {
    for name in Self.names {
      let word = CompletionWord(lineBeforeCursor: "add " + opening)
      let rendered = word.render(name)
      let folder = name.hasSuffix("/")
      // A folder stays open (Tab goes on into it); close what is open to parse it.
      let closed = folder && rendered.first.map({ $0 == "\"" || $0 == "'" }) == true ? rendered + String(rendered.first!) : rendered
      let parsed = try Tokenizer.commands(in: "add " + closed + " as x")
      #expect(parsed == [["add", name, "as", "x"]], "\(opening)\(name) → \(rendered)")
    }
  }

  @Test("the word being completed is read as the tokenizer reads it")
  func wordBeforeCursor() {
    let escaped = CompletionWord(lineBeforeCursor: "add my\\ lo")
    #expect(escaped.previousWords == ["add"] && escaped.unquoted == "my lo" && escaped.typed == "my\\ lo" && escaped.quote == nil)
    let quoted = CompletionWord(lineBeforeCursor: "vol all 0; add \"Samples/my lo")
    #expect(quoted.previousWords == ["add"] && quoted.unquoted == "Samples/my lo" && quoted.quote == "\"")
    let fresh = CompletionWord(lineBeforeCursor: "mute ")
    #expect(fresh.previousWords == ["mute"] && fresh.unquoted == "" && fresh.typed == "")
    // What was typed is the start of what is inserted, so libedit keeps it and adds the rest.
    #expect(escaped.render("my loop (take 2).wav").hasPrefix(escaped.typed))
    #expect(quoted.render("Samples/my loop.wav") == "\"Samples/my loop.wav\"")
  }
}
