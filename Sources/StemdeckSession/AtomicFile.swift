/// Files stemdeck writes through a library that takes only a path (the REPL history, written by
/// libedit), replaced atomically without following a symbolic link planted in their place.
public enum AtomicFile {
  /// Replaces `path` with what `produce` writes at the temporary path it is handed.
  /// See `FileAccess.replaceAtomically` for the guarantees (no symbolic link followed, the old
  /// file's permission bits kept, else 0666 minus the umask).
  public static func replace(_ path: String, producingWith produce: (String) -> Bool) throws(SessionError) {
    try FileAccess.replaceAtomically(path, produce: produce)
  }
}
