import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// What a test asks of a path, without following a symbolic link planted there.
public enum FileFacts {
  /// The file type bits (S_IFREG, S_IFLNK, …) of `path` itself (lstat), or nil when it does not exist.
  public static func kind(_ path: String) -> mode_t? {
    var info = stat()
    return lstat(path, &info) == 0 ? info.st_mode & S_IFMT : nil
  }

  /// The permission bits of `path` itself (lstat), or nil when it does not exist.
  public static func permissions(_ path: String) -> mode_t? {
    var info = stat()
    return lstat(path, &info) == 0 ? info.st_mode & 0o777 : nil
  }

  /// The whole file as bytes (nil if it cannot be read).
  public static func bytes(_ path: String) -> [UInt8]? {
    FileManager.default.contents(atPath: path).map { [UInt8]($0) }
  }

  /// The size of a file in bytes (-1 if it cannot be read).
  public static func size(_ path: String) -> Int {
    var st = stat()
    return stat(path, &st) == 0 ? Int(st.st_size) : -1
  }

  /// The process's umask as the kernel reports it (Linux ≥ 4.7), read without changing it.
  public static func umask() throws -> mode_t {
    let text = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
    guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Umask:") }),
      let mask = mode_t(line.split(separator: "\t").last.map(String.init) ?? "", radix: 8)
    else {
      throw TestSupportError("no Umask line in /proc/self/status")
    }
    return mask
  }
}
