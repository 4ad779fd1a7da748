import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A failure of the test support itself (a folder that could not be made, a tool that would not start).
public struct TestSupportError: Error, CustomStringConvertible {
  public let description: String
  public init(_ description: String) { self.description = description }
}

/// A fresh folder under /tmp, removed on `remove()` or when the value goes away.
public final class TemporaryFolder: Sendable {
  public let path: String

  /// Makes `/tmp/PREFIX-XXXXXX`.
  public init(_ prefix: String = "stemdeck-test") throws {
    var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else {
      throw TestSupportError("mkdtemp failed: \(String(cString: strerror(errno)))")
    }
    path = String(cString: made)
  }

  deinit { remove() }

  public func remove() { try? FileManager.default.removeItem(atPath: path) }

  /// `path/name`.
  public func file(_ name: String) -> String { path + "/" + name }

  /// The folder's entries, sorted (hidden ones included).
  public func entries() -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
  }

  /// Writes `text` to `path/name` and returns the path.
  @discardableResult
  public func write(_ text: String, to name: String) throws -> String {
    let target = file(name)
    try Data(text.utf8).write(to: URL(fileURLWithPath: target))
    return target
  }

  /// Writes a 16-bit PCM WAV file holding a sine in every channel and returns its path.
  @discardableResult
  public func wav(
    _ name: String, channels: Int, sampleRate: Int, seconds: Double,
    frequency: Double = 440, amplitude: Double = 1
  ) throws -> String {
    let target = file(name)
    try WAV.writeSine(
      target, channels: channels, sampleRate: sampleRate, seconds: seconds,
      frequency: frequency, amplitude: amplitude)
    return target
  }
}
