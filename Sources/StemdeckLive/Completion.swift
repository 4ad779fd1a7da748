import Foundation
import StemdeckSession
import StemdeckText

/// Tab-completion candidates: command names, stem names, port names, keywords and file paths.
package enum Completion {
  package static func candidates(console: Console, words: [String], partial: String) -> [String] {
    guard let first = words.first else {
      return CommandTable.allNames.filter { $0.hasPrefix(partial) && !$0.hasSuffix("!") }.sorted()
    }
    guard let spec = CommandTable.lookup(first.lowercased()) else { return [] }
    let index = words.count - 1
    let kind: ArgumentKind =
      index < spec.completions.count ? spec.completions[index] : (spec.name == "add" && index == 1 ? .keyword(["as"]) : .none)
    var options: [String]
    // `input remove NAME`: the live inputs' names (InputSettings; Commands+Inputs.swift).
    if spec.name == "input", index == 1, words[1].lowercased() == "remove" {
      return (console.mixer.inputs.names + ["all"]).filter { $0.hasPrefix(partial) }.sorted()
    }
    // `send …`: the keywords and stems, then send names, then levels (Commands+Sends.swift).
    if spec.name == "send", let options = sendCompletions(console: console, words: words, index: index) {
      return options.filter { $0.hasPrefix(partial) }.sorted()
    }
    switch kind {
    case .stem:
      options =
        console.mixer.stems.names + console.mixer.buses.names + console.mixer.inputs.names
        + (spec.name == "meters" ? ["master", "reset"] : [])
    case .stemOrAll: options = console.mixer.stems.names + console.mixer.buses.names + console.mixer.inputs.names + ["all"]
    case .bus: options = console.mixer.buses.names + ["master"]
    case .strip: options = console.mixer.stems.names + console.mixer.buses.names + console.mixer.inputs.names + ["master"]
    case .keyword(let words): options = words
    case .command: options = CommandTable.all.map(\.name)
    case .port:
      var ports = (try? console.driver?.ports(matching: nil)) ?? []
      let own = console.driver?.clientName
      func full(_ name: String) -> String { name.contains(":") || own == nil ? name : "\(own!):\(name)" }
      // A port already typed (connect master_L …): only ports that can connect to it, the
      // other direction (an output connects to inputs, an input to outputs) and the same type
      // (MIDI to MIDI: `connect midi_in …` offers no audio port).
      if index >= 1, let other = ports.first(where: { $0.name == full(words[index]) }) {
        ports = ports.filter { (other.isOutput ? $0.isInput : $0.isOutput) && $0.isAudio == other.isAudio }
      }
      options = ports.map(\.name)
      if let own {
        options += options.filter { $0.hasPrefix(own + ":") }.map { String($0.dropFirst(own.count + 1)) }
      }
    case .file: return files(matching: partial)
    case .none: return []
    }
    return options.filter { $0.hasPrefix(partial) }.sorted()
  }

  /// Paths starting with `partial`; folders get a trailing '/'. Names that are not UTF-8 are
  /// listed too, their bytes as RawFileName characters (rendered `"\xNN"` by CompletionWord).
  package static func files(matching partial: String) -> [String] {
    let slash = partial.lastIndex(of: "/")
    let dirPart = slash.map { String(partial[...$0]) } ?? ""
    let prefix = slash.map { String(partial[partial.index(after: $0)...]) } ?? partial
    let dir = dirPart.isEmpty ? "." : dirPart
    let entries = folderEntries(dir)
    return entries.filter { $0.hasPrefix(prefix) && (!$0.hasPrefix(".") || prefix.hasPrefix(".")) }.sorted().map { name in
      let full = dirPart + name
      var info = stat()
      let isDir = RawFileName.withCPath(dir + "/" + name) { stat($0, &info) } == 0 && info.st_mode & S_IFMT == S_IFDIR
      return isDir ? full + "/" : full
    }
  }

  /// The names in `folder` as readdir gives them (FileManager drops or mangles names that are
  /// not UTF-8), without "." and "..".
  package static func folderEntries(_ folder: String) -> [String] {
    guard let stream = RawFileName.withCPath(folder, { opendir($0) }) else { return [] }
    defer { closedir(stream) }
    var names: [String] = []
    while let entry = readdir(stream) {
      let name = withUnsafeBytes(of: &entry.pointee.d_name) { raw in
        RawFileName.string(fromBytes: raw.prefix { $0 != 0 })
      }
      if name != "." && name != ".." { names.append(name) }
    }
    return names
  }
}

/// The word being completed, read the way `Tokenizer` reads a line: quotes and backslashes
/// group it, so `add my\\ loop` and `add "my loop` both complete the file `my loop (take 2).wav`.
/// Candidates are written back in the same style (escaped, or inside the quote that was opened)
/// so that the completed line parses to the candidate.
package struct CompletionWord: Equatable {
  /// The complete words before the one being completed (unquoted).
  package var previousWords: [String] = []
  /// The word being completed as typed, quotes and backslashes included.
  package var typed = ""
  /// The same word as the tokenizer will read it.
  package var unquoted = ""
  /// The quote opened at its start and still open (nil: none).
  package var quote: Character?

  package init(lineBeforeCursor line: String) {
    // Only the current command counts: what follows the last ';' outside quotes.
    var words: [String] = []
    var inWord = false
    var escaping = false
    var hexDigits: String?  // after `\x` in double quotes, as the tokenizer reads it
    var openQuote: Character?
    var startQuote: Character?
    for c in line {
      if let digits = hexDigits {
        typed.append(c)
        if digits.isEmpty { hexDigits = String(c); continue }
        hexDigits = nil
        if let value = UInt8(digits + String(c), radix: 16), value != 0 {
          unquoted.unicodeScalars.append(value < 0x80 ? Unicode.Scalar(value) : RawFileName.scalar(forByte: value))
        }
        continue
      }
      if escaping {
        typed.append(c); escaping = false; inWord = true
        if c == "x" && openQuote == "\"" { hexDigits = ""; continue }
        unquoted.append(c)
        continue
      }
      if let q = openQuote {
        typed.append(c)
        if c == q { openQuote = nil } else if c == "\\" && q == "\"" { escaping = true } else { unquoted.append(c) }
        continue
      }
      switch c {
      case "\\": escaping = true; inWord = true; typed.append(c)
      case "'", "\"":
        if !inWord { startQuote = c }
        openQuote = c; inWord = true; typed.append(c)
      case " ", "\t":
        if inWord { words.append(unquoted) }
        inWord = false; unquoted = ""; typed = ""; startQuote = nil
      case ";":
        words = []; inWord = false; unquoted = ""; typed = ""; startQuote = nil
      default:
        inWord = true; unquoted.append(c); typed.append(c)
      }
    }
    previousWords = words
    unquoted = RawFileName.normalized(unquoted)
    quote = openQuote != nil && openQuote == startQuote ? openQuote : nil
  }

  /// `candidate` written so that the tokenizer reads it back unchanged: inside the quote the
  /// word was started with (closed unless it is a folder, which Tab continues into), otherwise
  /// with a backslash before each space, quote, backslash and other special character.
  /// A byte of a name that is not UTF-8 (RawFileName) is written `\xNN` inside double quotes,
  /// opened for it where the word has no double quote open (`caf"\xe9".wav`).
  package func render(_ candidate: String) -> String {
    let folder = candidate.hasSuffix("/")
    switch quote {
    case "'" where !candidate.contains("'"):
      let body = Self.rawBytesQuoted(candidate) { "'\"" + $0 + "\"'" }
      return "'" + body + (folder ? "" : "'")
    case "\"":
      var body = ""
      for c in candidate { if c == "\"" || c == "\\" { body.append("\\") }; body.append(c) }
      return "\"" + Self.rawBytesQuoted(body) { $0 } + (folder ? "" : "\"")
    default:
      return Self.escaped(candidate)
    }
  }

  /// `text` with each raw byte written `\xNN`, `wrap`ped so that it sits inside double quotes.
  package static func rawBytesQuoted(_ text: String, wrap: (String) -> String) -> String {
    guard RawFileName.holdsRawBytes(text) else { return text }
    var out = ""
    for s in text.unicodeScalars {
      if RawFileName.byte(of: s) != nil { out += wrap(RawFileName.escaped(String(s))) } else { out.unicodeScalars.append(s) }
    }
    return out
  }

  /// `text` with a backslash before every character the tokenizer would treat specially, and
  /// raw bytes as `"\xNN"`.
  package static func escaped(_ text: String) -> String {
    var out = ""
    for (i, c) in text.enumerated() {
      if let s = c.unicodeScalars.first, c.unicodeScalars.count == 1, RawFileName.byte(of: s) != nil {
        out += "\"" + RawFileName.escaped(String(c)) + "\""
        continue
      }
      let special = " \t\r\n'\"\\;".contains(c) || (i == 0 && (c == "#" || c == "{"))
      if special { out.append("\\") }
      out.append(c)
    }
    return out
  }
}

/// The live meter view (`watch`): on the terminal's alternate screen (what was on the screen
/// comes back after), redrawn ten times a second at the terminal's current size (SIGWINCH), until
/// a key is pressed; the whole key (an arrow's escape sequence too) is consumed, so nothing of it
/// reaches the prompt. Plain text when NO_COLOR is set.
package enum MeterView {
  package static func run(_ console: Console) {
    var saved = termios()
    let haveTerminal = tcgetattr(0, &saved) == 0
    var raw = saved
    raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
    if haveTerminal { tcsetattr(0, TCSANOW, &raw) }
    defer { if haveTerminal { tcsetattr(0, TCSANOW, &saved) } }
    let color = ProcessInfo.processInfo.environment["NO_COLOR"] == nil
    // Alternate screen, cursor hidden; both undone on the way out.
    Output.write("\u{1B}[?1049h\u{1B}[?25l\u{1B}[H\u{1B}[2J")
    defer { Output.write("\u{1B}[?25h\u{1B}[?1049l") }
    let startInterrupts = interruptRequests.load(ordering: .relaxed)
    while interruptRequests.load(ordering: .relaxed) == startInterrupts && !Output.stdoutLost {
      console.idle()
      let size = TerminalInfo.size(1) ?? (TerminalInfo.columns(), 24)
      if terminalResized.exchange(false, ordering: .relaxed) { Output.write("\u{1B}[2J") }
      var lines = Display.meterBars(console, width: size.columns, color: color)
      if size.rows > 1 && lines.count > size.rows {
        let hidden = lines.count - (size.rows - 1)
        lines =
          Array(lines.prefix(size.rows - 1)) + [Display.shortened("… \(hidden) more lines: make the terminal taller", toEnd: size.columns)]
      }
      var frame = "\u{1B}[H"
      for (i, l) in lines.enumerated() { frame += l + "\u{1B}[K" + (i == lines.count - 1 ? "" : "\r\n") }
      frame += "\u{1B}[J"
      Output.write(frame)
      var fds = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
      if poll(&fds, 1, 100) > 0 {
        // A key: read it and whatever of its sequence follows at once (ESC [ A …).
        var buffer = [UInt8](repeating: 0, count: 64)
        repeat {
          if buffer.withUnsafeMutableBytes({ read(0, $0.baseAddress, 64) }) <= 0 { break }
          fds.revents = 0
        } while poll(&fds, 1, 30) > 0
        break
      }
    }
  }
}
