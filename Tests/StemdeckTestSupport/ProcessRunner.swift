import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// How a child process ended.
public struct ProcessOutcome: Sendable {
  /// Its exit status (or what Foundation reports after it was terminated).
  public var status: Int32
  /// True when it outlived its timeout and was terminated.
  public var timedOut: Bool
}

/// Runs `executable` with `arguments` to completion, stdin from /dev/null, stdout and stderr to
/// the files given (or /dev/null), waiting at most `timeout` seconds: a child still running then
/// is terminated and the outcome says so. (The integration tests' ChildProcess is for children
/// that run alongside the test.)
public func runProcess(
  _ executable: String, _ arguments: [String], directory: String? = nil, environment: [String: String] = [:],
  stdout: String? = nil, stderr: String? = nil, timeout: Double
) throws -> ProcessOutcome {
  func sink(_ path: String?) throws -> FileHandle {
    guard let path else { return FileHandle.nullDevice }
    _ = FileManager.default.createFile(atPath: path, contents: nil)
    return try FileHandle(forWritingTo: URL(fileURLWithPath: path))
  }
  let out = try sink(stdout)
  let err = try sink(stderr)
  defer {
    if stdout != nil { try? out.close() }
    if stderr != nil { try? err.close() }
  }
  let process = Process()
  process.executableURL = URL(fileURLWithPath: executable)
  process.arguments = arguments
  if !environment.isEmpty {
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
  }
  if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
  process.standardInput = FileHandle.nullDevice
  process.standardOutput = out
  process.standardError = err
  try process.run()
  let deadline = monotonicSeconds() + timeout
  while process.isRunning && monotonicSeconds() < deadline { usleep(10_000) }
  let timedOut = process.isRunning
  if timedOut { process.terminate() }
  process.waitUntilExit()
  return ProcessOutcome(status: process.terminationStatus, timedOut: timedOut)
}
