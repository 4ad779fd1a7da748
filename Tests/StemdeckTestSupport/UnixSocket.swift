import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A Unix stream socket bound at `path` (the file appears there) and, if `listening`, listening;
/// its descriptor, or −1 when the socket, bind or listen failed (errno says why).
public func bindUnixSocket(at path: String, listening: Bool = false) -> Int32 {
  let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
  guard fd >= 0 else { return -1 }
  var address = sockaddr_un()
  address.sun_family = sa_family_t(AF_UNIX)
  withUnsafeMutableBytes(of: &address.sun_path) { raw in
    for (i, byte) in path.utf8.enumerated() where i < raw.count - 1 { raw[i] = byte }
  }
  let bound = withUnsafePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
  }
  guard bound == 0, !listening || listen(fd, 1) == 0 else {
    close(fd)
    return -1
  }
  return fd
}
