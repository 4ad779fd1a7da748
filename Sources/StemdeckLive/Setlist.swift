import Foundation
import StemdeckControl
import StemdeckSession
import StemdeckText

/// A setlist: an ordered list of session files (songs), one path per line, relative to the
/// setlist file; blank lines and lines starting with '#' are ignored. A line `@scene NAME` after
/// a song names a scene of that song's session, recalled when the song opens.
public struct Setlist: Equatable {
  public var path: String
  public var songs: [String]
  /// The scene recalled when a song opens, by song index.
  public var scenes: [Int: String] = [:]

  /// Reads a setlist; every listed session must exist (checked up front, so a show does not stop
  /// at song 7 with a typo).
  public static func load(_ path: String) throws(CommandError) -> Setlist {
    let absolute = Console.absolutePath(path)
    // Read like a session file: a regular file only (never a device or FIFO), at most 1 MiB.
    let data: [UInt8]
    do { data = try SessionFile.readRegularFile(at: absolute, limit: 1 << 20, kind: "setlist") } catch {
      throw CommandError("\(printableText(path)): cannot read the setlist: \(error.message)")
    }
    guard let text = String(validating: data, as: UTF8.self) else {
      throw CommandError("\(path): the setlist is not UTF-8 text")
    }
    var songs: [String] = []
    var scenes: [Int: String] = [:]
    for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
      let line = String(raw).trimmingSpaces()
      if line.isEmpty || line.hasPrefix("#") { continue }
      if line.hasPrefix("@") {
        let words = line.split(separator: " ").map(String.init)
        let place = "\(printableText(path)): line \(number + 1)"
        guard words.first == "@scene", words.count == 2 else {
          throw CommandError(
            "\(place): '\(printableText(line))' is not a setlist directive (@scene NAME, after a song: the scene recalled when it opens)")
        }
        guard !songs.isEmpty else { throw CommandError("\(place): @scene comes after the song whose session holds the scene") }
        if let problem = NameRules.sceneProblem(words[1]) { throw CommandError("\(place): \(problem)") }
        scenes[songs.count - 1] = words[1]
        continue
      }
      let song = SessionFile.resolve(file: line, sessionPath: absolute)
      var isDir: ObjCBool = false
      guard FileManager.default.fileExists(atPath: song, isDirectory: &isDir), !isDir.boolValue else {
        throw CommandError("\(path): line \(number + 1): no session file at '\(line)' (looked at \(song))")
      }
      // Only a regular file can be a session: a device or FIFO is refused now, not at its song.
      guard (try? FileManager.default.attributesOfItem(atPath: song)[.type] as? FileAttributeType) == .typeRegular else {
        throw CommandError(
          "\(path): line \(number + 1): '\(printableText(line))' is not a regular file (a device, pipe or socket), so not a session file")
      }
      songs.append(song)
    }
    if songs.isEmpty { throw CommandError("\(path): the setlist lists no sessions (one session path per line)") }
    return Setlist(path: absolute, songs: songs, scenes: scenes)
  }

  /// The song's display name: its file name without extension.
  public static func name(of song: String) -> String {
    var base = String(song.split(separator: "/").last ?? "")
    if let dot = base.lastIndex(of: "."), dot != base.startIndex { base = String(base[..<dot]) }
    return base
  }
}

/// What stemdeck does when a song of the setlist plays to its end (the transport stops there).
public enum SetlistAdvance: String, CaseIterable, Sendable {
  /// Stay on the finished song (`play` plays it again from the top).
  case off
  /// Open the next song, stopped at its saved position, ready for `play`.
  case cue
  /// Open the next song and play it.
  case play
}

extension Console {
  /// Acts on the end of the current song (`periodic` calls it once per end) as `advance` says.
  /// The last song of the setlist ends the show: nothing wraps around. Unsaved changes in
  /// interactive mode are kept, and say so, rather than discarded by an automatic switch.
  package func songEnded() {
    guard advance != .off, let list = setlist else { return }
    let next = setlistIndex + 1
    guard next < list.songs.count else {
      writeEvent(
        "end of the setlist: song \(list.songs.count)/\(list.songs.count) (\(Setlist.name(of: list.songs[setlistIndex]))) has finished")
      return
    }
    let name = Setlist.name(of: list.songs[next])
    if interactive && live.songLayerDirty {
      writeEvent(
        "not advancing to song \(next + 1)/\(list.songs.count) (\(name)): this song has unsaved changes; 'save' them, or 'next!' to discard them"
      )
      return
    }
    do {
      try switchSong(to: next, afterEnd: true)
      if advance == .play { try mixerCall { () throws(MixerError) in try mixer.transport.play() } }
    } catch {
      writeEvent("cannot advance to song \(next + 1)/\(list.songs.count) (\(name)): \(consoleWords(error))")
    }
  }

  /// Loads a setlist and opens its first song.
  package func loadSetlist(_ path: String) throws(CommandError) {
    let list = try Setlist.load(path)
    if interactive && live.songLayerDirty && !commandWord.hasSuffix("!") {
      throw CommandError("there are unsaved changes: 'save' them first, or use 'setlist! \(path)' to discard them")
    }
    setlist = list
    try switchSong(to: 0)
  }

  /// Opens song `index` of the setlist (wrapping). A playing transport keeps playing: the song
  /// being left decides how (`songchange`: gapless, or a crossfade), see `mixer.songs.change`.
  /// An error (missing or bad session file) names the file and leaves the current song playing.
  /// `afterEnd`: the song has played to its end, and the mixer has already asked the renderer to
  /// stop there, so this is a plain `open` even though the renderer may still say it is playing.
  package func switchSong(to index: Int, afterEnd: Bool = false) throws(CommandError) {
    guard let list = setlist else { throw CommandError("no setlist loaded (use 'setlist FILE')") }
    // Only the song's own changes would be lost: the rig (routing, inputs, buses, sends, master)
    // goes on to the next song (SessionRig.swift).
    if interactive && live.songLayerDirty && !commandWord.hasSuffix("!") {
      throw CommandError("this song has unsaved changes: 'save' them first, or add '!' (e.g. 'next!') to discard them")
    }
    let count = list.songs.count
    let wrapped = ((index % count) + count) % count
    let change = afterEnd || mixer.transport.state == .paused ? nil : mixer.options
    // Unsaved changes that are not the song's are the rig's: they go on with it, still unsaved
    // (a later `save` writes them, `quit` asks about them).
    let rigUnsaved = mixer.isDirty && !live.songLayerDirty
    try open(list.songs[wrapped], force: true, asSongChange: !afterEnd, throughRig: true)
    if rigUnsaved { mixer.markDirty() }
    setlistIndex = wrapped
    mixer.midi.setSongNumber(wrapped)
    var line = "song \(wrapped + 1)/\(count): \(Setlist.name(of: list.songs[wrapped]))"
    if let change {
      line +=
        change.songChange == .crossfade
        ? " (crossfade \(NumberFormat.plain(change.crossfadeSeconds)) s)" : " (gapless)"
    }
    write(line)
    guard let scene = list.scenes[wrapped] else { return }
    // The song's scene, as it opens (a missing one is said, and the song plays as saved); the
    // history starts after it, as after any open.
    do {
      let r = try mixer.scenes.recall(scene)
      write("scene '\(scene)' recalled: \(r.changed.isEmpty ? "nothing differed" : r.changed.joined(separator: ", "))")
    } catch {
      write("warning: song \(wrapped + 1)'s scene '\(scene)': \(consoleWords(error)); the song plays as saved")
    }
    resetHistory()
  }

  package func showSetlist() throws(CommandError) {
    guard let list = setlist else { throw CommandError("no setlist loaded (use 'setlist FILE')") }
    for (i, song) in list.songs.enumerated() {
      write("\(i == setlistIndex ? "▶" : " ") \(i + 1). \(Setlist.name(of: song))")
    }
  }

  package func gotoSong(_ target: String) throws(CommandError) {
    guard let list = setlist else { throw CommandError("no setlist loaded (use 'setlist FILE')") }
    if let n = Int(target) {
      guard (1...list.songs.count).contains(n) else {
        throw CommandError("goto: song number must be from 1 to \(list.songs.count) (got \(n))")
      }
      try switchSong(to: n - 1)
      return
    }
    let names = list.songs.map(Setlist.name(of:))
    guard let index = names.firstIndex(of: target) else {
      if let guess = Suggestion.closest(to: target, in: names) {
        throw CommandError("goto: no song '\(ValueParser.printable(target))' in the setlist — did you mean '\(guess)'?")
      }
      throw CommandError("goto: no song '\(ValueParser.printable(target))' in the setlist (songs: \(names.joined(separator: ", ")))")
    }
    try switchSong(to: index)
  }
}
