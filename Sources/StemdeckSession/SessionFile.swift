import Foundation

/// Reading and writing session files.
///
/// A session file is human-readable JSON in a fixed layout (see `encode(_:)`). Loading checks
/// every field and reports the first problem with its place in the document and what is allowed;
/// saving is atomic and keeps the previous version as `<path>.bak`.
///
/// - Thread: any thread; no shared state. Not for the realtime thread (allocates, does file I/O).
public enum SessionFile {
  /// The largest session file `load` and `decode` accept, in bytes (16 MiB).
  public static let maximumFileSize = 16 << 20

  /// Reads, decodes and validates the session file at `path`.
  ///
  /// - Throws: `SessionError` naming `path` when the file is missing, is a directory or some other
  ///   non-regular file, cannot be read, is larger than `maximumFileSize`, is not UTF-8, is not valid
  ///   JSON, or breaks a session rule (see `decode(_:source:)`).
  public static func load(path: String) throws(SessionError) -> Session {
    let bytes = try FileAccess.readSessionFile(at: path, limit: maximumFileSize)
    return try decode(bytes, source: path)
  }

  /// Decodes and validates a session document.
  ///
  /// Rules: the document is a JSON object with `"format" : "stemdeck-session"` and an integer
  /// `"version"` from 1 to `Session.currentVersion`; every other section is optional and takes its
  /// default when absent (`quality`, `master`, `options`, `recording`, `tempo`, `click`, `marks`, `position`,
  /// `connections`, `stems`, `effects`), as does every field inside them except a stem's or effect's
  /// `name` and `file` and a tempo's `bpm`. A stem's `loopStart` and `loopEnd` come together or not
  /// at all, start before end. Unknown and duplicate fields are errors. A volume may be a linear number or a dB string
  /// (`"-6dB"`); it is stored as linear gain.
  ///
  /// - Parameters:
  ///   - data: the document's bytes (UTF-8; a leading byte order mark is ignored).
  ///   - source: the name used as `SessionError.file`, usually the file's path.
  /// - Throws: `SessionError` with the location (`"stems[2].pan"`), line, column and what is allowed.
  public static func decode(_ data: Data, source: String) throws(SessionError) -> Session {
    try decode([UInt8](data), source: source)
  }

  /// Writes `session` in the session file layout, ending with a newline:
  ///
  ///     {
  ///       "format" : "stemdeck-session",
  ///       "version" : 3,
  ///       "quality" : "fast",
  ///       "master" : { "volume" : 0.9 },
  ///       "options" : { "autoPauseOnDisconnect" : false, "meterPoint" : "post" },
  ///       "stems" : [
  ///         { "name" : "drums", "file" : "../Samples/drums.flac", "volume" : 0.8, "pan" : 0, ... },
  ///         ...
  ///       ]
  ///     }
  ///
  /// `"recording"` (after `"options"`, all three keys), `"tempo"` (after it, both keys), `"click"` (after it, its keys that are not the default), `"marks"` (after it, one a line, when there are some), `"position"`
  /// (after that), `"connections"` (next, keys sorted), `"effects"` (after `"stems"`, one effect per
  /// line), the options `"songChange"`, `"crossfadeSeconds"`, `"transportSync"` and `"effectsOutput"` (after
  /// `"meterPoint"`) and each stem's `"directOut"`, `"startOffset"`, `"loopStart"`, `"loopEnd"`,
  /// `"crossfade"`, `"mode"` and `"pitch"` (after `"solo"`) appear only when they differ from their
  /// defaults, so a file that does not
  /// use them round-trips byte for byte. Integral numbers are written without a decimal
  /// point; others as the shortest text that reads back exactly. The output of a valid session always
  /// decodes to an equal session. (A NaN or infinite value, which `validate()` rejects, is written as
  /// `null` so that the file fails to load instead of loading wrong.)
  public static func encode(_ session: Session) -> String {
    SessionEncoder.encode(session)
  }

  /// Validates `session` and writes it to `path` atomically.
  ///
  /// Steps: write a new file `.<name>.tmp-<pid>-<random>` in the same folder (created exclusively
  /// with `O_CREAT|O_EXCL|O_NOFOLLOW`, so nothing planted at that name is ever followed or
  /// overwritten), `fsync` it, keep the existing file as `<path>.bak` (a hard link, or a copy where
  /// the filesystem has no hard links, itself put in place by `rename`), `rename` the new file over
  /// `path`, and `fsync` the folder. At every moment `path` holds either the complete old file or the
  /// complete new one.
  ///
  /// - New files get mode 0666 minus the umask; replacing a regular file keeps its permission bits.
  /// - If `path` is a symbolic link, the link itself is replaced by the new regular file; the file it
  ///   pointed to is left untouched, and `<path>.bak` is the old link.
  /// - Throws: `SessionError` naming the path and the OS reason (or the first validation problem).
  ///   On failure the temporary file is removed and the existing file is left as it was.
  /// - `backup: false` (autosaves): no `<path>.bak` is kept; the replacement is as atomic.
  public static func save(_ session: Session, to path: String, backup: Bool = true) throws(SessionError) {
    try session.validate(source: path)
    let bytes = Array(encode(session).utf8)
    removeStaleTemporaries(for: path)
    try FileAccess.writeAtomically(bytes, to: path, temporaryName: FileAccess.randomTemporaryName, backup: backup)
  }

  /// The bytes of the regular file at `path` (a device, FIFO, socket or folder is an error), at
  /// most `limit` bytes: for small text files read like session files (setlists, the
  /// configuration). `kind` names the file in errors ("is a directory, not a setlist").
  public static func readRegularFile(at path: String, limit: Int, kind: String) throws(SessionError) -> [UInt8] {
    try FileAccess.readSessionFile(at: path, limit: limit, kind: kind)
  }

  /// Removes temporary files a save of `path` left behind when its process was killed:
  /// `.<name>.tmp-<pid>-*` (and the backup's `.<name>.bak.tmp-<pid>-*`) whose process is gone.
  static func removeStaleTemporaries(for path: String) {
    let url = URL(fileURLWithPath: path)
    let folder = url.deletingLastPathComponent().path
    let name = url.lastPathComponent
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
    for entry in entries {
      for prefix in [".\(name).tmp-", ".\(name).bak.tmp-"] where entry.hasPrefix(prefix) {
        let rest = entry.dropFirst(prefix.count)
        guard let dash = rest.firstIndex(of: "-"), let pid = Int32(rest[..<dash]) else { continue }
        // kill(pid, 0) fails with ESRCH when no such process exists.
        if pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH {
          FileAccess.removeRegularFile(folder + "/" + entry)
        }
      }
    }
  }

  /// The absolute, normalized path of a stem's audio file.
  ///
  /// A relative `file` is taken relative to the folder holding the session file; a relative
  /// `sessionPath` is taken relative to the current directory. The result has no `.` or `..`
  /// components and no repeated slashes. Normalization is textual: symbolic links are not resolved
  /// (so `link/..` becomes the folder that holds `link`).
  ///
  /// A relative `file` that climbs (`../Samples/x.wav`) climbs from where the session's folder
  /// really is: when that folder is reached through a symbolic link, `..` is its real parent
  /// (as the shell's `cd -P` and the kernel take it), not the folder holding the link.
  public static func resolve(file: String, sessionPath: String) -> String {
    if file.hasPrefix("/") { return PathText.normalize(file) }
    var folder = PathText.folder(of: PathText.absolute(sessionPath))
    if file.split(separator: "/").contains(".."), let physical = FileAccess.physicalPath(folder) {
      folder = physical
    }
    return PathText.normalize(folder + "/" + file)
  }

  /// How to write an audio file's path in a session file, so sessions move with their audio.
  ///
  /// - Returns: a relative path when the file is inside the session file's folder (`"drums.flac"`,
  ///   `"audio/drums.flac"`) or inside that folder's parent (`"../Samples/drums.flac"`), and the
  ///   absolute normalized path otherwise, and always when that parent would be `/`.
  ///   `resolve(file: storedPath(...), sessionPath:)` gives back the normalized absolute path.
  public static func storedPath(forAudioFile absolutePath: String, sessionPath: String) -> String {
    let audio = PathText.normalize(PathText.absolute(absolutePath))
    let folder = PathText.folder(of: PathText.absolute(sessionPath))
    guard folder != "/" else { return audio }
    if audio.hasPrefix(folder + "/") { return String(audio.dropFirst(folder.count + 1)) }
    // `..` climbs from where the folder really is (see `resolve`): from its real parent when it
    // is reached through a symbolic link.
    let physical = FileAccess.physicalPath(folder) ?? folder
    if physical != folder && audio.hasPrefix(physical + "/") { return String(audio.dropFirst(physical.count + 1)) }
    let parent = PathText.folder(of: physical)
    if parent != "/" && audio.hasPrefix(parent + "/") {
      return "../" + String(audio.dropFirst(parent.count + 1))
    }
    return audio
  }

  // MARK: Internals

  static func decode(_ bytes: [UInt8], source: String) throws(SessionError) -> Session {
    if bytes.count > maximumFileSize {
      throw SessionError(file: source, message: FileAccess.tooLargeMessage(bytes.count, limit: maximumFileSize))
    }
    if let offset = UTF8Check.firstInvalidOffset(bytes) {
      let position = UTF8Check.position(ofByte: offset, in: bytes)
      throw SessionError(
        file: source, line: position.line, column: position.column,
        message: "is not valid UTF-8 text (bad byte 0x"
          + String(bytes[offset], radix: 16, uppercase: true)
          + " at byte offset \(offset)); save the file as UTF-8")
    }
    let root: JSONNode
    do {
      root = try JSONReader.parse(bytes)
    } catch {
      throw SessionError(
        file: source, line: error.position.line, column: error.position.column,
        message: "invalid JSON: " + error.message)
    }
    return try SessionDecoder(source: source).decode(root)
  }
}

/// Textual path manipulation (no filesystem access).
enum PathText {
  /// `path` made absolute against the current directory.
  static func absolute(_ path: String) -> String {
    if path.hasPrefix("/") { return path }
    return FileManager.default.currentDirectoryPath + "/" + path
  }

  /// An absolute path without `.`, `..` or empty components (`..` at the root stays at the root).
  static func normalize(_ path: String) -> String {
    var parts: [Substring] = []
    for part in path.split(separator: "/", omittingEmptySubsequences: true) {
      switch part {
      case ".": continue
      case "..": if !parts.isEmpty { parts.removeLast() }
      default: parts.append(part)
      }
    }
    return "/" + parts.joined(separator: "/")
  }

  /// The normalized folder that holds the file at absolute `path`.
  static func folder(of path: String) -> String {
    let normalized = normalize(path)
    guard let slash = normalized.lastIndex(of: "/"), slash != normalized.startIndex else { return "/" }
    return String(normalized[..<slash])
  }
}
