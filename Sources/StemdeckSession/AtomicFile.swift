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
  public static func replace(_ path: String, newMode: mode_t = 0o666,
                             producingWith produce: (String) -> Bool) throws(SessionError) {
    try FileAccess.replaceAtomically(path, newMode: newMode, produce: produce)
  }
}
