#if canImport(Glibc)
import Glibc  // mode_t only: the system calls are in FileAccess
#endif

/// Files stemdeck writes through a library that takes only a path (the REPL history, written by
/// libedit), replaced atomically without following a symbolic link planted in their place.
public enum AtomicFile {
  /// Replaces `path` with what `produce` writes at the temporary path it is handed.
  /// See `FileAccess.replaceAtomically` for the guarantees (no symbolic link followed, the old
  /// file's permission bits kept, else `newMode` minus the umask: 0600 for a private file like
  /// the REPL history, which holds every path and command typed).
  public static func replace(
    _ path: String, newMode: mode_t = 0o666,
    producingWith produce: (String) -> Bool
  ) throws(SessionError) {
    try FileAccess.replaceAtomically(path, newMode: newMode, produce: produce)
  }
}

extension AtomicFile {
  /// Removes `path` only if it is a regular file: a folder, device, FIFO, socket or symbolic link
  /// planted at that name is left alone. Returns whether a file was removed.
  @discardableResult
  public static func removeRegularFile(_ path: String) -> Bool { FileAccess.removeRegularFile(path) }

  /// A fresh temporary name for a file that will be renamed to `name` (`.NAME.tmp-PID-RANDOM`,
  /// always short enough for the file system).
  public static func temporaryName(for name: String) -> String { FileAccess.randomTemporaryName(for: name) }

  /// "a character device", "a FIFO (named pipe)", "a block device" or "a socket" for what lies
  /// at `path` (not following a symbolic link); nil for a regular file, folder, link or nothing.
  public static func specialFileKind(at path: String) -> String? { FileAccess.specialFileKind(at: path) }

  /// Whether `a` and `b` name the same existing file (device and inode, so hard and symbolic
  /// links count).
  public static func sameFile(_ a: String, _ b: String) -> Bool { FileAccess.sameFile(a, b) }

  /// The permission bits of the regular file at `path` (not following a symbolic link), or nil.
  public static func regularFileMode(at path: String) -> mode_t? { FileAccess.regularFileMode(at: path) }
}
