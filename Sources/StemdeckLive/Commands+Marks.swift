import StemdeckControl
import StemdeckSession
import StemdeckText

// Marks and quantised jumps (issue 42, item 2): `mark add NAME [at TIME|at bar N]`, `mark list`,
// `mark remove NAME`, and `goto NAME [now|bar|end]` (the setlist's `goto N|SONG` still opens a
// song: a mark's name is looked up first). docs/architecture.md, *Marks and quantised jumps*.

extension CommandTable {
  package static let markUsage = "mark [list | add NAME [at POSITION | at bar N[.BEAT]] | remove NAME]"

  package static let markCommands: [CommandSpec] = [
    CommandSpec(
      name: "mark", usage: markUsage,
      summary: "named positions of the song, for 'goto NAME' (saved in the session)",
      details: """
        mark add chorus           a mark at the transport's position now
        mark add chorus at 1:02   … at 1:02 (m:ss, seconds); 'at bar 33' or 'at bar 33.3'
                                  at a bar of the tempo
        mark remove chorus        removes it
        mark list (or mark)       the marks in time order, and a jump still waiting
        goto chorus               jumps to the mark on the next bar line (see 'help goto')
        Saved in the session ("marks"); each song of a setlist has its own.
        """,
      argumentCount: 0...5, completions: [.keyword(["add", "remove", "list"])]
    ) { (c, a) throws(CommandError) in
      guard let verb = a.first?.lowercased(), verb != "list" else {
        if a.count > 1 { throw CommandError("mark list: nothing may follow 'list'") }
        for line in markLines(c.mixer) { c.write(line) }
        return
      }
      switch verb {
      case "add" where a.count >= 2:
        var words = Array(a.dropFirst(2))
        var seconds = c.mixer.transport.position
        if !words.isEmpty {
          guard words.first?.lowercased() == "at", words.count >= 2 else {
            throw CommandError("mark add: usage: mark add NAME [at POSITION | at bar N[.BEAT]]")
          }
          words.removeFirst()
          if words[0].lowercased() == "bar" {
            guard words.count == 2 else { throw CommandError("mark add: usage: mark add NAME at bar N[.BEAT]") }
            seconds = try c.barTime(words[1])
          } else {
            guard words.count == 1 else { throw CommandError("mark add: usage: mark add NAME at POSITION") }
            let p = try ValueParser.position(words[0])
            seconds = p.relative ? c.mixer.transport.position + p.seconds : p.seconds
          }
        }
        try c.mixerCall { () throws(MixerError) in try c.mixer.marks.add(a[1], at: seconds) }
        c.write("mark '\(a[1])' at \(NumberFormat.time(seconds))\(barText(seconds, c.mixer.tempo))")
      case "remove" where a.count == 2:
        try c.mixerCall { () throws(MixerError) in try c.mixer.marks.remove(a[1]) }
        c.write("mark '\(a[1])' removed")
      default:
        throw CommandError("mark: usage: \(markUsage)")
      }
    }
  ]

  /// "chorus   1:02.000 (bar 32.1)", in time order; a waiting jump last.
  package static func markLines(_ mixer: Mixer) -> [String] {
    let marks = mixer.marks.all.sorted { ($0.at, $0.name) < ($1.at, $1.name) }
    var lines = marks.isEmpty ? ["no marks ('mark add NAME' adds one at the position now)"] : []
    let width = marks.map(\.name.count).max() ?? 0
    for mark in marks {
      lines.append(
        mark.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + NumberFormat.time(mark.at) + barText(mark.at, mixer.tempo))
    }
    if let jump = mixer.marks.waitingJump { lines.append(jumpLine(jump, mixer.tempo)) }
    return lines
  }

  /// " (bar 32.1)" at the tempo, or nothing without one.
  package static func barText(_ seconds: Double, _ tempo: Tempo?) -> String {
    guard let tempo else { return "" }
    return " (bar \(MixerText.barBeat(seconds, tempo)))"
  }

  /// "jumping to 'chorus' (1:02.000) at 1:04.000 (bar 33.1)".
  package static func jumpLine(_ jump: WaitingJump, _ tempo: Tempo?) -> String {
    "jumping to '\(jump.mark)' (\(NumberFormat.time(jump.toSeconds))) at \(NumberFormat.time(jump.atSeconds))\(barText(jump.atSeconds, tempo))"
  }
}

extension Console {
  /// `goto NAME [now|bar|end]` and the setlist's `goto N|SONG`: a word after the name makes it a
  /// mark; alone, a mark of that name wins, else a song number or name.
  package func gotoMarkOrSong(_ a: [String]) throws(CommandError) {
    let name = a[0]
    if a.count == 2 {
      guard let landing = JumpLanding(rawValue: a[1].lowercased()) else {
        throw CommandError("goto: a jump lands now, bar or end (got '\(ValueParser.printable(a[1]))')")
      }
      try gotoMark(name, landing)
      return
    }
    let marks = mixer.marks.all.map(\.name)
    if marks.contains(name) || (setlist == nil && Int(name) == nil) {
      try gotoMark(name, .bar)
      return
    }
    if let list = setlist, Int(name) == nil, !marks.isEmpty {
      let songs = list.songs.map(Setlist.name(of:))
      if !songs.contains(name) {
        let guess = Suggestion.closest(to: name, in: marks + songs).map { " — did you mean '\($0)'?" } ?? ""
        throw CommandError("goto: no mark or song '\(ValueParser.printable(name))'\(guess)")
      }
    }
    try gotoSong(name)
  }

  package func gotoMark(_ name: String, _ landing: JumpLanding) throws(CommandError) {
    let jump = try mixerCall { () throws(MixerError) -> WaitingJump? in try mixer.marks.goto(mark: name, landing: landing) }
    if let jump {
      write(CommandTable.jumpLine(jump, mixer.tempo))
    } else {
      settleTransport()
      write("at '\(name)' (\(NumberFormat.time(mixer.transport.position)))")
    }
  }
}
