import Foundation

// The one lock helper every layer shares (the mixer's and the JACK driver's NSRecursiveLock),
// kept in this leaf module beside the text helpers so neither layer imports the other for it.

extension NSRecursiveLock {
  /// Runs `body` holding the lock, keeping `body`'s typed error (Foundation's `withLock` rethrows
  /// untyped errors).
  @inlinable
  public func locked<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
    lock()
    defer { unlock() }
    return try body()
  }
}
