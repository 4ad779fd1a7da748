import Foundation
import StemdeckEngine
import Synchronization
import StemdeckText

/// Writes one take to disk: drains the renderer's take ring on its own thread and keeps the file
/// valid as it goes (the header is rewritten and the data synced every half second), so a full
/// disk or a killed process loses at most the last half second.
///
/// It sits beside the disk reader (`DiskStream`): both are the non-realtime ends of a renderer
/// ring and own a libsndfile handle; `Mixer` (StemdeckControl) starts and finishes it.
///
/// - Thread: created and finished on the control thread; its writer thread touches only the
///   ring's consumer and the file.
public final class TakeRecorder: @unchecked Sendable {
  public let path: String
  public let name: String
  public let sampleRate: Double
  let take: UnsafeMutablePointer<RecordTake>
  var consumer: Consumer<Float>
  var writer: SoundFileWriter?
  let stopRequested = Atomic<Bool>(false)
  let finished = Atomic<Bool>(false)
  let writtenFrames = Atomic<Int>(0)
  var thread: Thread?
  /// Why writing stopped early (disk full, file too large, folder gone…), if it did. Written once
  /// by the writer thread before `failed` is set; read by others only after seeing `failed`.
  public private(set) var failure: String?
  let failed = Atomic<Bool>(false)
  /// The control thread has told the user about `failure`.
  public var failureReported = false
  /// Frames of latency to subtract from the take's position (capture + playback). Read again
  /// when the take stops (`mixer.recorder.setLatency`): JACK settles latencies after connections.
  public var latencyFrames: Int

  /// Creates the take's file (exclusively: a take never follows, truncates or replaces anything
  /// found at its path) and starts the writer thread.
  public init(path: String, name: String, format: OutputFormat, sampleRate: Double, latencyFrames: Int) throws(SoundFileError) {
    writer = try SoundFileWriter(path: path, format: format, sampleRate: Int(sampleRate), channelCount: 2, exclusive: true)
    self.path = path
    self.name = name
    self.sampleRate = sampleRate
    self.latencyFrames = latencyFrames
    let ends = SPSCRing.make(minimumCapacity: Int(sampleRate * 4) * 2, of: Float.self)
    consumer = ends.consumer
    take = .allocate(capacity: 1)
    take.initialize(to: RecordTake(ring: ends.producer))
    let t = Thread { [self] in
      nameCurrentThread("stemdeck-take")
      self.run()
    }
    t.name = "stemdeck-take"
    thread = t
    t.start()
  }

  /// The renderer's handle on this take (for `EngineCommand.startRecording`).
  public var takePointer: UnsafeMutablePointer<RecordTake> { take }

  func run() {
    let chunk = 8192
    let buffer = UnsafeMutablePointer<Float>.allocate(capacity: chunk * 2)
    defer { buffer.deallocate() }
    var lastFlush = Date()
    while true {
      let stopping = stopRequested.load(ordering: .acquiring)
      let n = consumer.read(into: UnsafeMutableBufferPointer(start: buffer, count: chunk * 2))
      if n > 0, failure == nil {
        do throws(SoundFileError) {
          try writer?.write(buffer, frameCount: n / 2)
          writtenFrames.add(n / 2, ordering: .relaxed)
        } catch {
          // What reached the file stays valid: the header is brought up to date at once.
          failure = error.reason
          writer?.flush()
          failed.store(true, ordering: .releasing)
        }
      }
      if Date().timeIntervalSince(lastFlush) > 0.5 {
        writer?.flush()
        lastFlush = Date()
      }
      if n == 0 {
        if stopping { break }
        usleep(5000)
      }
    }
    writer?.flush()
    writer = nil  // closes the file
    finished.store(true, ordering: .releasing)
  }

  /// Why the take stopped growing, once it has (safe to call from any thread).
  public var failureIfAny: String? { failed.load(ordering: .acquiring) ? failure : nil }

  /// Frames written to the file so far.
  public var framesWritten: Int { writtenFrames.load(ordering: .relaxed) }
  public var framesDropped: Int { take.pointee.dropped.load(ordering: .relaxed) }
  /// Transport frame at which the take's first frame was played, in time with the stems: where
  /// it was captured minus the latency (nil before the first frame). Negative when the take
  /// begins before transport 0 (armed before `play`, or the latency itself).
  public var alignedStartFrame: Int? {
    let s = take.pointee.startFrame.load(ordering: .relaxed)
    return s == Int.min ? nil : s - latencyFrames
  }

  /// Finishes the file once the renderer has let go of the take (after `recordingStopped`).
  public func finish() {
    stopRequested.store(true, ordering: .releasing)
    while !finished.load(ordering: .acquiring) { usleep(1000) }
    thread = nil
  }

  deinit {
    if !finished.load(ordering: .acquiring) { finish() }
    take.deinitialize(count: 1)
    take.deallocate()
  }
}
