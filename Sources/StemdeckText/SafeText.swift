// Text helpers every layer shares: user text made safe to show (`printableText`,
// `terminalSafe`, `lineSafe`), "did you mean" suggestions, number formatting, and how a file
// name that is not UTF-8 is held (RawFileName.swift). A leaf module: it depends on nothing of
// stemdeck's, so the session format, the engine's control layer, the JACK driver and the front
// ends all use one copy. docs/architecture.md, *Text*.

/// "Did you mean" suggestions by edit distance.
public enum Suggestion {
  public static func closest(to word: String, in candidates: [String]) -> String? {
    // One edit per three characters; very short words only match on a single edit if they are
    // at least two characters long (so 'c' does not "mean" 'a').
    //
    // The distance is at least the difference in length, so a candidate whose length is further
    // from the word's than the limit is skipped without the quadratic table: a mistyped word of
    // megabytes (a pasted file) costs one pass over it, not its length times each name's
    // (1 MB took 22 s and 3 MB 633 MB of memory). Words far longer than every name stop sooner.
    let (compared, limit) = worthComparing(word, candidates)
    let lowered = word.lowercased()
    var best: (String, Int)?
    for c in compared {
      let d = distance(lowered, c.lowercased())
      if d <= limit, d < (best?.1 ?? Int.max) { best = (c, d) }
    }
    return best?.0
  }

  /// The candidates `closest` builds an edit-distance table for (those whose length is within
  /// `limit` edits of the word's), and that limit. None for a word far longer than every name.
  package static func worthComparing(_ word: String, _ candidates: [String]) -> (candidates: [String], limit: Int) {
    let longest = candidates.reduce(0) { max($0, $1.utf8.count) }
    guard word.utf8.count <= 8 * longest + 8 else { return ([], 0) }
    let length = word.count
    let limit = length < 2 ? 0 : max(1, length / 3)
    return (candidates.filter { abs($0.count - length) <= limit }, limit)
  }

  /// Edit distance counting a swap of two neighbouring letters as one edit ("paly" → "play"):
  /// the optimal-string-alignment variant of Damerau–Levenshtein.
  package static func distance(_ a: String, _ b: String) -> Int {
    let a = Array(a), b = Array(b)
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
    for i in 0...a.count { d[i][0] = i }
    for j in 0...b.count { d[0][j] = j }
    for i in 1...a.count {
      for j in 1...b.count {
        let cost = a[i - 1] == b[j - 1] ? 0 : 1
        d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
        if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
          d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
        }
      }
    }
    return d[a.count][b.count]
  }
}

/// User text made safe to show in a message: control characters as escapes, long text cut.
public func printableText(_ text: String) -> String {
  var out = ""
  for scalar in text.unicodeScalars.prefix(60) {
    if scalar.value < 0x20 || scalar.value == 0x7f {
      out += "\\u{\(String(scalar.value, radix: 16))}"
    } else if RawFileName.byte(of: scalar) != nil {
      out += RawFileName.escaped(String(scalar))
    } else {
      out.unicodeScalars.append(scalar)
    }
  }
  if text.unicodeScalars.count > 60 { out += "…" }
  return out
}

/// `text` safe to print on a terminal: every control character that could move the cursor,
/// retitle the window or rewrite the screen (C0 except newline and tab, DEL, the C1 range
/// U+0080–U+009F, and the bidirectional overrides U+202A–U+202E, U+2066–U+2069) is written as
/// `\u{1b}`. Nothing is cut. Applied to every line the console prints (`Console.write`, stdout
/// and stderr lines), since paths from session files and other clients' JACK port names are
/// whatever their authors made them. Idempotent.
public func terminalSafe(_ text: String) -> String {
  func unsafe(_ v: UInt32) -> Bool {
    (v < 0x20 && v != 0x0A && v != 0x09) || (0x7F...0x9F).contains(v)
      || (0x202A...0x202E).contains(v) || (0x2066...0x2069).contains(v)
  }
  guard text.unicodeScalars.contains(where: { unsafe($0.value) || RawFileName.byte(of: $0) != nil }) else { return text }
  var out = ""
  for scalar in text.unicodeScalars {
    if unsafe(scalar.value) {
      out += "\\u{\(String(scalar.value, radix: 16))}"
    } else if RawFileName.byte(of: scalar) != nil {
      out += RawFileName.escaped(String(scalar))
    }  // a name that is not UTF-8
    else {
      out.unicodeScalars.append(scalar)
    }
  }
  return out
}

/// `terminalSafe` for text that must stay one line (a console line, a reply's output line, the
/// mixer view's status): a line feed, the Unicode line and paragraph separators and the
/// invisible direction marks are escaped too, so a file name or another JACK client's port name
/// can neither start a line of its own (a fake `event:` or `error:` in a script's or `ctl`'s
/// output) nor reorder what is printed.
public func lineSafe(_ text: String) -> String {
  let safe = terminalSafe(text)
  func breaks(_ v: UInt32) -> Bool { v == 0x0A || v == 0x2028 || v == 0x2029 || v == 0x200E || v == 0x200F || v == 0x061C }
  guard safe.unicodeScalars.contains(where: { breaks($0.value) }) else { return safe }
  var out = ""
  for scalar in safe.unicodeScalars {
    if breaks(scalar.value) { out += "\\u{\(String(scalar.value, radix: 16))}" } else { out.unicodeScalars.append(scalar) }
  }
  return out
}
