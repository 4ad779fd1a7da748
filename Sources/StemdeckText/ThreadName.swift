import Foundation

#if canImport(Glibc)
import Glibc
#endif

// The system's name of a thread (top -H, perf, /proc/PID/task/TID/comm, what
// docs/architecture.md's *Threads* table calls each). Foundation's `Thread.name` on Linux names
// the thread for Foundation only, and Swift does not see glibc's `pthread_setname_np` (a GNU
// extension): the thread writes its own `comm`.

/// Names the calling thread for the system; Linux keeps the first 15 bytes.
public func nameCurrentThread(_ name: String) {
  guard let comm = fopen("/proc/thread-self/comm", "w") else { return }
  fputs(String(decoding: name.utf8.prefix(15), as: UTF8.self), comm)
  fclose(comm)
}
