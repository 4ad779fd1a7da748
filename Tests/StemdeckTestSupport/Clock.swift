#if canImport(Glibc)
import Glibc
#endif

/// Seconds on CLOCK_MONOTONIC (for deadlines and measured waits; never goes back).
public func monotonicSeconds() -> Double {
  var ts = timespec()
  clock_gettime(CLOCK_MONOTONIC, &ts)
  return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}
