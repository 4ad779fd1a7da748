// Every system call of this module, in one place: reading a session file and replacing one
// atomically. Errors become `SessionError`s that name the path and the OS's reason (strerror).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import StemdeckText

enum FileAccess {
  // MARK: Reading

  /// The whole content of the regular file at `path`, at most `limit` bytes. `kind` names the
  /// file in errors ("session file", "setlist", "configuration file").
  static func readSessionFile(at path: String, limit: Int, kind: String = "session file") throws(SessionError) -> [UInt8] {
    guard !path.isEmpty else { throw SessionError(file: path, message: "no \(kind) path given") }
    // O_NONBLOCK so that opening a FIFO by mistake does not hang; it is rejected just below.
    let fd = open(fs(path), O_RDONLY | O_CLOEXEC | O_NONBLOCK)
    if fd < 0 {
      let code = errno
      if code == ENOENT { throw SessionError(file: path, message: "no such file") }
      throw SessionError(file: path, message: "cannot open the \(kind): \(reason(code))")
    }
    defer { close(fd) }
    var info = stat()
    if fstat(fd, &info) != 0 {
      throw SessionError(file: path, message: "cannot read the \(kind): \(reason(errno))")
    }
    switch info.st_mode & S_IFMT {
    case S_IFREG: break
    case S_IFDIR: throw SessionError(file: path, message: "is a directory, not a \(kind)")
    default:
      throw SessionError(
        file: path,
        message: "is not a regular file (a device, pipe or socket), "
          + "not a \(kind)")
    }
    if Int(info.st_size) > limit {
      throw SessionError(file: path, message: tooLargeMessage(Int(info.st_size), limit: limit, kind: kind))
    }
    // Read until end of file, but never more than limit + 1 bytes: the file may grow meanwhile.
    var bytes = [UInt8](repeating: 0, count: max(Int(info.st_size), 4096))
    var count = 0
    while true {
      if count == bytes.count {
        if count > limit { break }
        bytes.append(contentsOf: repeatElement(0, count: min(bytes.count, limit + 1 - count)))
      }
      let wanted = bytes.count - count
      let got = bytes.withUnsafeMutableBytes { buffer in
        read(fd, buffer.baseAddress.map { $0 + count }, wanted)
      }
      if got < 0 {
        let code = errno
        if code == EINTR { continue }
        throw SessionError(file: path, message: "cannot read the \(kind): \(reason(code))")
      }
      if got == 0 { break }
      count += got
    }
    if count > limit { throw SessionError(file: path, message: tooLargeMessage(count, limit: limit, kind: kind)) }
    bytes.removeSubrange(count...)
    return bytes
  }

  static func tooLargeMessage(_ size: Int, limit: Int, kind: String = "session file") -> String {
    "is too large for a \(kind) (\(size) bytes; the limit is \(limit >> 20) MiB)"
  }

  // MARK: Atomic replacement

  /// A temporary file name for `name`: `.<name>.tmp-<pid>-<16 random hex digits>`.
  static func randomTemporaryName(for name: String) -> String {
    // Keep the whole name under NAME_MAX (255 bytes) for long target names.
    var stem = ""
    for scalar in name.unicodeScalars {
      if stem.utf8.count + String(scalar).utf8.count > 200 { break }
      stem.unicodeScalars.append(scalar)
    }
    let random = String(UInt64.random(in: .min ... .max), radix: 16)
    return ".\(stem).tmp-\(getpid())-" + String(repeating: "0", count: 16 - random.count) + random
  }

  /// The folder of `path` ("/" at the root, "." for a bare name) and the name in it (after the
  /// last "/"; empty for a path ending in "/").
  static func folderAndName(_ path: String) -> (folder: String, name: String) {
    guard let slash = path.lastIndex(of: "/") else { return (".", path) }
    return (slash == path.startIndex ? "/" : String(path[..<slash]), String(path[path.index(after: slash)...]))
  }

  /// Replaces the file at `path` with `bytes`, keeping the old file as `<path>.bak`.
  /// See `SessionFile.save(_:to:)` for the guarantees.
  /// - Parameter temporaryName: makes a new temporary file name for a target name on each call
  ///   (tests substitute a predictable one to plant files at it).
  static func writeAtomically(
    _ bytes: [UInt8], to path: String,
    temporaryName: (String) -> String, backup: Bool = true
  ) throws(SessionError) {
    func fail(_ message: String) -> SessionError { SessionError(file: path, message: message) }

    guard !path.isEmpty else { throw fail("no session file path given") }
    guard !path.hasSuffix("/") else { throw fail("is a folder path (ends with '/'), not a file name") }
    let (folder, name) = folderAndName(path)
    guard name != ".", name != ".." else { throw fail("is a folder, not a file name") }
    func inFolder(_ entry: String) -> String { folder == "/" ? "/" + entry : folder + "/" + entry }

    var folderInfo = stat()
    if stat(fs(folder), &folderInfo) != 0 {
      let code = errno
      if code == ENOENT { throw fail("cannot save: the folder \"\(folder)\" does not exist") }
      throw fail("cannot save into the folder \"\(folder)\": \(reason(code))")
    }
    guard folderInfo.st_mode & S_IFMT == S_IFDIR else {
      throw fail("cannot save: \"\(folder)\" is not a folder")
    }

    var targetInfo = stat()
    let targetExists = lstat(fs(path), &targetInfo) == 0
    let targetType = targetInfo.st_mode & S_IFMT
    if targetExists && targetType == S_IFDIR {
      throw fail("is a directory; cannot save a session over it")
    }
    if targetExists, let what = specialFileKind(targetType) {
      throw fail("is \(what), not a regular file; stemdeck saves only over a regular file or to a new name")
    }
    // The previous version is kept as NAME.bak: that name must fit too (NAME_MAX, 255 bytes).
    if backup && name.utf8.count > maximumNameBytes - 4 {
      throw fail(
        "the file name is \(name.utf8.count) bytes long; the longest that leaves room for its backup (NAME.bak) is \(maximumNameBytes - 4) bytes"
      )
    }

    // 1. Write the new content to a fresh temporary file and flush it to disk.
    let (fd, temporaryPath) = try createExclusive(
      in: inFolder, name: { temporaryName(name) },
      mode: 0o666, target: path)
    var temporaryExists = true
    defer { if temporaryExists { unlink(fs(temporaryPath)) } }
    do {  // a scope, so the descriptor is closed before the rename
      defer { close(fd) }
      if targetExists && targetType == S_IFREG {
        // Keep the permissions of the file being replaced (e.g. a private 0600 session).
        if fchmod(fd, targetInfo.st_mode & 0o777) != 0 {
          throw fail("cannot set the permissions of \(temporaryPath): \(reason(errno))")
        }
      }
      try writeAll(bytes, to: fd, path: temporaryPath, target: path)
      if fsync(fd) != 0 { throw fail("cannot flush \(temporaryPath) to disk: \(reason(errno))") }
    }

    // 2. Keep the existing file as <path>.bak (replacing an older backup atomically).
    if targetExists && backup {
      try keepBackup(of: path, type: targetType, in: inFolder, name: name, temporaryName: temporaryName)
    }

    // 3. Put the new file in place, and make the rename durable.
    if rename(fs(temporaryPath), fs(path)) != 0 {
      throw fail("cannot replace the file: \(reason(errno))")
    }
    temporaryExists = false
    try syncFolder(folder, target: path)
  }

  /// The longest file name Linux file systems take (NAME_MAX).
  static let maximumNameBytes = 255

  /// "a character device", "a FIFO (named pipe)"… for a file type that is neither a regular file,
  /// a folder nor a symbolic link; nil for those.
  static func specialFileKind(_ type: mode_t) -> String? {
    switch type {
    case S_IFCHR: return "a character device"
    case S_IFBLK: return "a block device"
    case S_IFIFO: return "a FIFO (named pipe)"
    case S_IFSOCK: return "a socket"
    default: return nil
    }
  }

  static func specialFileKind(at path: String) -> String? {
    var info = stat()
    guard lstat(fs(path), &info) == 0 else { return nil }
    return specialFileKind(info.st_mode & S_IFMT)
  }

  static func regularFileMode(at path: String) -> mode_t? {
    var info = stat()
    guard lstat(fs(path), &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
    return info.st_mode & 0o777
  }

  /// Whether `a` and `b` name the same existing file (device and inode; links followed).
  static func sameFile(_ a: String, _ b: String) -> Bool {
    var x = stat(), y = stat()
    return RawFileName.withCPath(a) { stat($0, &x) } == 0 && RawFileName.withCPath(b) { stat($0, &y) } == 0
      && x.st_dev == y.st_dev && x.st_ino == y.st_ino
  }

  /// Removes `path` only if it is a regular file (never a folder, device, or what a symbolic link
  /// points to; a symbolic link itself is left alone too). Returns whether something was removed.
  @discardableResult
  static func removeRegularFile(_ path: String) -> Bool {
    var info = stat()
    guard lstat(fs(path), &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return false }
    return unlink(fs(path)) == 0
  }

  /// Creates a new file with `O_CREAT|O_EXCL|O_NOFOLLOW` under a fresh name, retrying on collisions
  /// (so a file or symbolic link planted at a predicted name is neither followed nor overwritten).
  private static func createExclusive(
    in inFolder: (String) -> String, name: () -> String, mode: mode_t,
    target: String
  ) throws(SessionError) -> (Int32, String) {
    var lastCode: Int32 = EEXIST
    for _ in 0..<100 {
      let candidate = inFolder(name())
      let fd = open(fs(candidate), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
      if fd >= 0 { return (fd, candidate) }
      lastCode = errno
      if lastCode != EEXIST && lastCode != EINTR { break }
    }
    throw SessionError(file: target, message: "cannot create a temporary file next to it: \(reason(lastCode))")
  }

  private static func writeAll(
    _ bytes: [UInt8], to fd: Int32, path: String,
    target: String
  ) throws(SessionError) {
    var written = 0
    while written < bytes.count {
      let result = bytes.withUnsafeBytes { buffer in
        write(fd, buffer.baseAddress.map { $0 + written }, bytes.count - written)
      }
      if result < 0 {
        let code = errno
        if code == EINTR { continue }
        throw SessionError(file: target, message: "cannot write \(path): \(reason(code))")
      }
      written += result
    }
  }

  /// Makes `<path>.bak` refer to the current content of `path`: a hard link made under a temporary
  /// name and renamed over any older backup; where hard links are not supported, a copy (or, for a
  /// symbolic link, a new link with the same target).
  private static func keepBackup(
    of path: String, type: mode_t, in inFolder: (String) -> String,
    name: String, temporaryName: (String) -> String
  ) throws(SessionError) {
    let backupPath = path + ".bak"
    func fail(_ code: Int32) -> SessionError {
      SessionError(file: path, message: "cannot keep the previous version as \(backupPath): \(reason(code))")
    }
    var backupTemporary: String?
    for _ in 0..<100 {
      let candidate = inFolder(temporaryName(name + ".bak"))
      // linkat with no flags does not follow a symbolic link at `path`: the backup is the link.
      if linkat(AT_FDCWD, fs(path), AT_FDCWD, fs(candidate), 0) == 0 {
        backupTemporary = candidate
        break
      }
      let code = errno
      if code == EEXIST || code == EINTR { continue }
      if code == ENOENT { return }  // the file vanished meanwhile: nothing to keep
      if [EPERM, EXDEV, EOPNOTSUPP, EMLINK, ENOSYS].contains(code) {
        backupTemporary = try copyForBackup(
          path, type: type, in: inFolder,
          name: { temporaryName(name + ".bak") }, backupPath: backupPath)
        break
      }
      throw fail(code)
    }
    guard let backupTemporary else { throw fail(EEXIST) }
    if rename(fs(backupTemporary), fs(backupPath)) != 0 {
      let code = errno
      unlink(fs(backupTemporary))
      throw fail(code)
    }
    // When the backup already was a link to the same file (a save killed between its backup and
    // its rename leaves that), rename() does nothing and succeeds: the temporary name remains.
    var left = stat()
    if lstat(fs(backupTemporary), &left) == 0 { unlink(fs(backupTemporary)) }
  }

  /// The fallback backup for filesystems without hard links. Returns the temporary name it made.
  private static func copyForBackup(
    _ path: String, type: mode_t, in inFolder: (String) -> String,
    name: () -> String, backupPath: String
  ) throws(SessionError) -> String {
    func fail(_ code: Int32) -> SessionError {
      SessionError(file: path, message: "cannot keep the previous version as \(backupPath): \(reason(code))")
    }
    if type == S_IFLNK {
      var target = [CChar](repeating: 0, count: 4097)
      let length = readlink(fs(path), &target, target.count - 1)
      if length < 0 { throw fail(errno) }
      for _ in 0..<100 {
        let candidate = inFolder(name())
        if symlink(&target, fs(candidate)) == 0 { return candidate }
        if errno != EEXIST { throw fail(errno) }
      }
      throw fail(EEXIST)
    }
    let source = open(fs(path), O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
    if source < 0 { throw fail(errno) }
    defer { close(source) }
    let (fd, candidate) = try createExclusive(in: inFolder, name: name, mode: 0o666, target: path)
    var success = false
    defer {
      close(fd)
      if !success { unlink(fs(candidate)) }
    }
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
      let got = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
      if got < 0 {
        if errno == EINTR { continue }
        throw fail(errno)
      }
      if got == 0 { break }
      try writeAll(Array(buffer[0..<got]), to: fd, path: candidate, target: path)
    }
    if fsync(fd) != 0 { throw fail(errno) }
    success = true
    return candidate
  }

  /// fsync on the folder makes the renames in it durable. Filesystems that cannot sync a folder
  /// (EINVAL) are accepted; a real I/O error is reported, although the file has been replaced.
  private static func syncFolder(_ folder: String, target: String) throws(SessionError) {
    let fd = open(fs(folder), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    if fd < 0 { return }  // the rename is done; nothing more can be made durable from here
    defer { close(fd) }
    if fsync(fd) != 0 {
      let code = errno
      if code == EINVAL || code == EROFS || code == EOPNOTSUPP { return }
      throw SessionError(file: target, message: "saved, but flushing the folder to disk failed: \(reason(code))")
    }
  }

  // MARK: Replacing a file another library writes

  /// Replaces `path` with a file that `produce` writes at the path it is handed (for C libraries
  /// that only take a path, like libedit's `write_history`), never following a symbolic link
  /// planted at `path` or anywhere on the way.
  ///
  /// `produce` writes into a fresh folder made by `mkdtemp` (mode 0700, so no other user can
  /// plant anything in it) next to `path`; the result must be a regular file. It gets the mode
  /// of the regular file it replaces, or 0666 minus the user's umask for a new one (libraries
  /// like libedit force their own mode), and is renamed over `path`: a symbolic link there is
  /// replaced, not followed. No backup is kept.
  static func replaceAtomically(
    _ path: String, newMode: mode_t = 0o666,
    produce: (String) -> Bool
  ) throws(SessionError) {
    func fail(_ message: String) -> SessionError { SessionError(file: path, message: message) }
    guard !path.isEmpty, !path.hasSuffix("/") else { throw fail("is not a file name") }
    // Never rename over a device, FIFO or socket (as root that would replace /dev/null).
    if let what = specialFileKind(at: path) { throw fail("is \(what), not a regular file; it is not replaced") }
    let (folder, name) = folderAndName(path)
    var template = Array(((folder == "/" ? "/" : folder + "/") + randomTemporaryName(for: name) + "-XXXXXX").utf8CString)
    guard let made = mkdtemp(&template) else {
      throw fail("cannot create a temporary folder next to it: \(reason(errno))")
    }
    let scratch = String(cString: made)
    let temporary = scratch + "/" + name
    defer {
      unlink(temporary)
      rmdir(scratch)
    }
    errno = 0
    guard produce(temporary) else { throw fail("cannot write \(temporary)" + (errno != 0 ? ": \(reason(errno))" : "")) }
    var written = stat()
    guard lstat(temporary, &written) == 0, written.st_mode & S_IFMT == S_IFREG else {
      throw fail("\(temporary) was not written as a regular file")
    }
    var target = stat()
    let mode: mode_t
    if lstat(path, &target) == 0 && target.st_mode & S_IFMT == S_IFREG {
      mode = target.st_mode & 0o777
    } else {
      mode = newMode & 0o777 & ~currentUmask()
    }
    if chmod(temporary, mode) != 0 { throw fail("cannot set the permissions of \(temporary): \(reason(errno))") }
    if rename(temporary, path) != 0 { throw fail("cannot replace the file: \(reason(errno))") }
  }

  /// The process's umask, read from /proc/self/status (reading it with umask(2) would have to
  /// change it for a moment, racing any other thread creating a file); 022 if that fails.
  static func currentUmask() -> mode_t {
    guard let bytes = try? readSessionFile(at: "/proc/self/status", limit: 1 << 16) else { return 0o022 }
    let text = String(decoding: bytes, as: UTF8.self)
    for line in text.split(separator: "\n") where line.hasPrefix("Umask:") {
      let digits = line.dropFirst("Umask:".count).drop { $0 == " " || $0 == "\t" }
      if let value = mode_t(digits, radix: 8) { return value }
    }
    return 0o022
  }

  /// The absolute path of `path` with every symbolic link, `.` and `..` resolved (realpath(3)),
  /// or nil when it does not exist or cannot be resolved.
  static func physicalPath(_ path: String) -> String? {
    guard let resolved = RawFileName.withCPath(path, { realpath($0, nil) }) else { return nil }
    defer { free(resolved) }
    return RawFileName.string(fromBytes: UnsafeRawBufferPointer(start: resolved, count: strlen(resolved)))
  }

  /// The file system's bytes of `path`, NUL-terminated (a name that is not UTF-8: RawFileName).
  static func fs(_ path: String) -> [CChar] { RawFileName.cPath(path) }

  /// The OS's description of an errno value, e.g. "Permission denied".
  static func reason(_ code: Int32) -> String {
    String(cString: strerror(code))
  }
}
