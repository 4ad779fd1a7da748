import Foundation
import StemdeckEngine
import Synchronization
import StemdeckText

/// One stem's stream from its file into its audio ring, serviced by the disk thread.
///
/// Produces the stem's looped stream: the file's frames repeated `loops + 1` times (or forever),
/// seams sample-exact because the frames are simply written back to back. Files with more than
/// two channels are folded to stereo here: even-numbered channels (1st, 3rd, …) are averaged
/// into the left, odd-numbered ones into the right.
///
/// - Thread: one disk worker at a time (or, for offline renders, the rendering thread between
///   blocks): a worker claims the stream (`tryClaim`) before `service()` and releases it after,
///   so its file handle and bookkeeping are never touched by two threads at once; the claim's
///   acquire/release orders one worker's writes before the next one's reads. Talks to the
///   realtime side only through the ring and the atomics in `StemShared`.
public final class DiskStream: @unchecked Sendable {
  /// Held by the worker servicing this stream; held for good once the streamer dropped it.
  let claimed = Atomic<Bool>(false)
  let file: SoundFile
  var producer: Producer<Float>
  public let shared: StemSharedRef
  /// Channels written to the ring (1 or 2).
  public let outputChannels: Int
  /// Frames in one pass through the file.
  public let length: Int
  var epoch = -1
  /// Position within the looped stream (loop index × length + phase).
  var sourceFrame = 0
  /// Where libsndfile's read position is, or -1 when unknown.
  var filePosition = -1
  var ended = false
  var failed = false
  /// The loop region in file frames [loopStart, loopEnd) (the whole file by default), and the
  /// crossfade: the last `crossfade` frames of each pass that is followed by another are mixed,
  /// with equal-power weights, with the frames just before `loopStart` (cached in `preRoll`).
  var loopStart = 0
  var loopEnd: Int
  var crossfade = 0
  var regionVersion = -1
  var preRoll: [Float] = []
  let foldBuffer: UnsafeMutablePointer<Float>
  let shortBuffer: UnsafeMutablePointer<Int16>
  static let foldFrames = 4096
  /// How a file of more than two channels becomes stereo.
  let downmix: StereoDownmix
  /// Samples written to the ring so far (the producer's counter), published after each slice:
  /// with the ring's capacity and the renderer's read counter it tells how full the ring is
  /// (diagnostics, and tests that must start with full rings).
  public let samplesWritten = Atomic<Int>(0)
  /// The ring's capacity in samples.
  public let ringCapacity: Int
  /// Why reading failed: written once by the worker before it publishes `readFailed`.
  var failureMessage: String?
  /// The file-rate converter of a stream whose ring carries engine-rate frames, else nil
  /// (DiskStream+Conversion.swift).
  var conversion: DiskConversion?
  /// Why reading failed, or nil. Safe from any thread: the message is read only after the
  /// acquiring load of `readFailed` that the worker stored (releasing) after writing it.
  public var failure: String? {
    shared.pointer.pointee.readFailed.load(ordering: .acquiring) ? failureMessage : nil
  }

  /// A stream of `file` into `producer`'s ring. With `conversion`, the ring carries the file's
  /// frames converted to the engine's rate (DiskStream+Conversion.swift; the stream owns and frees
  /// the converter); without, the file's.
  public init(
    file: consuming SoundFile, producer: consuming Producer<Float>, shared: StemSharedRef,
    conversion: FileRateConversion? = nil
  ) {
    let channels = file.info.channelCount
    if let conversion {
      self.conversion = DiskConversion(conversion, channels: min(channels, 2))
    }
    length = file.info.frameCount
    loopEnd = file.info.frameCount
    outputChannels = min(channels, 2)
    foldBuffer = .allocate(capacity: Self.foldFrames * max(channels, 1))
    downmix = StereoDownmix(channels: channels, layout: file.info.layout)
    shortBuffer = .allocate(capacity: Self.foldFrames * max(channels, 1))
    ringCapacity = producer.capacity
    self.file = file
    self.producer = producer
    self.shared = shared
  }

  deinit {
    foldBuffer.deallocate()
    shortBuffer.deallocate()
    conversion?.deallocate()
  }

  /// Takes the stream for one worker; false when another worker (or the remover) has it.
  func tryClaim() -> Bool {
    claimed.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged
  }

  func releaseClaim() { claimed.store(false, ordering: .releasing) }

  /// A stall asked for by the injected `DiskReadPacing`, slept in 10 ms slices so that removing the stem or stopping the
  /// streamer is not held up by it. False when it was cut short (the caller stops reading).
  func stall(milliseconds: Int, keepGoing: () -> Bool) -> Bool {
    var left = milliseconds
    while left > 0 {
      if shared.pointer.pointee.closing.load(ordering: .relaxed) || !keepGoing() { return false }
      let slice = min(left, 10)
      usleep(useconds_t(slice * 1000))
      left -= slice
    }
    return true
  }

  /// Reads the pending seek request consistently (the two atomics can change between loads).
  func request() -> (epoch: Int, frame: Int, cut: Int) {
    let s = shared.pointer
    while true {
      let e = s.pointee.requestedEpoch.load(ordering: .acquiring)
      let f = s.pointee.requestedFrame.load(ordering: .relaxed)
      let c = s.pointee.requestedCut.load(ordering: .relaxed)
      if s.pointee.requestedEpoch.load(ordering: .acquiring) == e { return (e, f, c) }
    }
  }

  /// Starts epoch `newEpoch`'s stream at `frame`: everything written from here on is it.
  func begin(epoch newEpoch: Int, frame: Int) {
    let s = shared.pointer
    epoch = newEpoch
    sourceFrame = max(0, frame)
    ended = false
    conversion?.restart()
    s.pointee.boundary.store(producer.writeCounter, ordering: .relaxed)
    s.pointee.epochStartFrame.store(sourceFrame, ordering: .relaxed)
    s.pointee.publishedEpoch.store(epoch, ordering: .releasing)
  }

  /// Does one bounded slice of work; returns the number of frames written. The caller must hold
  /// the claim (`DiskStreamer` does). `pacing` (tests only: a slow disk) stalls each read;
  /// `keepGoing` turning false cuts such a stall short.
  @discardableResult
  public func service(maxFrames: Int = 32768, pacing: (any DiskReadPacing)? = nil, keepGoing: () -> Bool = { true }) -> Int {
    let s = shared.pointer
    if s.pointee.closing.load(ordering: .relaxed) { return 0 }
    defer { samplesWritten.store(producer.writeCounter, ordering: .releasing) }
    let req = request()
    // A quantised jump's epoch (Renderer/Jump.swift) begins only once the stream being written
    // reaches its cut: until then the old stream goes on, up to the cut and no further.
    var cut = Int.max
    var seeked = false
    var converted = 0
    if req.epoch != epoch {
      let atEnd = conversion.map { $0.awaitingTail || $0.flushing } ?? false
      if req.cut < 0 || ended || failed || atEnd || sourceFrame >= req.cut {
        // A jump's old stream ends in the ring before the new one (a converted one, its tail).
        if req.cut >= 0 && atEnd { converted += serviceConvertedEnd(force: true) }
        if req.cut >= 0 && !atEnd && !ended && !failed && !drainedBeforeCut() { return converted }
        begin(epoch: req.epoch, frame: req.frame)
        seeked = true
      } else {
        cut = req.cut
      }
    }
    // A converted stream's end (DiskStream+Conversion.swift): its tail waits for the voice.
    if conversion.map({ $0.awaitingTail || $0.flushing }) ?? false {
      converted += serviceConvertedEnd()
      if conversion!.awaitingTail || conversion!.flushing || ended { return converted }
    }
    // A stream that ended can start again if the loop count was raised before the renderer got
    // to its end (a short stem is read to its end long before it is heard); a converted one only
    // until its tail was flushed.
    if ended && !failed && !(conversion?.endIsFinal ?? false) {
      let loops = s.pointee.loops.load(ordering: .relaxed)
      let passes = sourceFrame / max(1, loopEnd - loopStart)
      if loops < 0 || loops >= passes {
        ended = false
        s.pointee.endEpoch.store(-1, ordering: .releasing)
      }
    }
    if ended || failed { return converted }
    let version = s.pointee.regionVersion.load(ordering: .acquiring)
    if version != regionVersion { updateRegion(version: version) }
    // Top up in reads of at least 1/64 of the ring (1,024 frames, 21 ms at 48 kHz): filling
    // every sliver of space kept the workers reading a few hundred frames of every stem on
    // every pass, never idle. (At 1/8, ResamplingTests' best-quality rate change played a
    // block of silence on leaving the bypass: some ring layouts starve the converter's
    // priming. Not understood yet; see the issue note.)
    if !seeked && producer.writableSegments().count < producer.capacity / 64 { return converted }
    var written = 0
    let loopLength = loopEnd - loopStart
    while written < maxFrames {
      if conversion != nil {
        // Staged file frames first; while the ring has no room for them, no more are read.
        converted += drainStage()
        if conversion!.stagedCount > 0 { break }
      }
      if sourceFrame >= cut {
        begin(epoch: req.epoch, frame: req.frame)
        cut = Int.max
      }
      let loops = s.pointee.loops.load(ordering: .relaxed)
      let loopIndex = sourceFrame / loopLength
      if loops >= 0 && loopIndex > loops {
        if conversion != nil {
          reachedConvertedEnd()
          converted += serviceConvertedEnd()
        } else {
          markEnd()
        }
        break
      }
      let phase = loopStart + sourceFrame % loopLength
      let segments = producer.writableSegments()
      // A converted stream reads into its stage (converted at the top of the next turn).
      let freeFrames = conversion == nil ? segments.first.count / outputChannels : DiskConversion.stageFrames
      guard freeFrames > 0, let target = conversion?.stage ?? segments.first.baseAddress else { break }
      // Crossfade zone: the last `crossfade` frames of a pass that another pass follows.
      let fadeStart = loopEnd - crossfade
      let anotherPass = loops < 0 || loopIndex < loops
      let inFade = crossfade > 0 && anotherPass && phase >= fadeStart
      var want = min(freeFrames, loopEnd - phase, maxFrames - written, cut - sourceFrame)
      if crossfade > 0 && anotherPass && phase < fadeStart { want = min(want, fadeStart - phase) }
      if let pacing {
        let delay = pacing.stallMilliseconds(beforeReading: shared)
        if delay > 0 && !stall(milliseconds: delay, keepGoing: keepGoing) { break }
      }
      if filePosition != phase {
        do { try file.seek(toFrame: phase) } catch {
          // (A FLAC file cut after its header cannot even seek to frame 0.)
          fail("\(error.reason) (its header declares \(length) frames: truncated, corrupt, or replaced while playing)")
          break
        }
        filePosition = phase
      }
      let got = read(into: target, frames: want)
      if got > 0 && !file.info.isPCM16 { sanitize(target, count: got * outputChannels) }
      if got <= 0 {
        fail("the file ends at frame \(phase) of the \(length) its header declares (truncated, corrupt, or replaced while playing)")
        break
      }
      if inFade { mixPreRoll(into: target, fromFadeFrame: phase - fadeStart, frames: got) }
      if conversion != nil {
        conversion!.stagedStart = 0
        conversion!.stagedCount = got
      } else {
        producer.commit(count: got * outputChannels)
      }
      sourceFrame += got
      filePosition += got
      written += got
    }
    if conversion != nil && !ended && !failed { converted += drainStage() }
    return written + converted
  }

  /// Before a jump's new epoch begins at its cut: the old stream's staged frames are converted
  /// into the ring first; false while the ring has no room for them (try again next slice).
  func drainedBeforeCut() -> Bool {
    guard conversion != nil else { return true }
    _ = drainStage()
    return conversion!.stagedCount == 0
  }

  /// Takes a new loop region and crossfade from the shared atomics (clamped to the file).
  func updateRegion(version: Int) {
    regionVersion = version
    let s = shared.pointer
    let start = s.pointee.regionStart.load(ordering: .relaxed)
    if start < 0 {
      loopStart = 0
      loopEnd = length
    } else {
      loopStart = min(max(0, start), length - 1)
      loopEnd = min(max(loopStart + 1, s.pointee.regionEnd.load(ordering: .relaxed)), length)
    }
    // The crossfade needs frames before the loop start, and cannot be longer than the loop.
    crossfade = min(max(0, s.pointee.crossfadeFrames.load(ordering: .relaxed)), loopStart, loopEnd - loopStart)
    preRoll = []
    if crossfade > 0 {
      let buffer = UnsafeMutablePointer<Float>.allocate(capacity: crossfade * outputChannels)
      defer { buffer.deallocate() }
      var got = 0
      if (try? file.seek(toFrame: loopStart - crossfade)) != nil {
        while got < crossfade {
          let n = read(into: buffer + got * outputChannels, frames: crossfade - got)
          if n <= 0 { break }
          got += n
        }
      }
      filePosition = -1
      if got == crossfade { preRoll = Array(UnsafeBufferPointer(start: buffer, count: crossfade * outputChannels)) } else { crossfade = 0 }
    }
  }

  /// Equal-power crossfade: the pass's tail fades out (cos) while the frames before the loop
  /// start fade in (sin), so the seam flows into the next pass.
  func mixPreRoll(into p: UnsafeMutablePointer<Float>, fromFadeFrame first: Int, frames: Int) {
    let ch = outputChannels
    for f in 0..<frames {
      let k = first + f
      let theta = Double.pi / 2 * (Double(k) + 0.5) / Double(crossfade)
      let out = Float(cos(theta)), into = Float(sin(theta))
      for c in 0..<ch { p[f * ch + c] = p[f * ch + c] * out + preRoll[k * ch + c] * into }
    }
  }

  func read(into destination: UnsafeMutablePointer<Float>, frames: Int) -> Int {
    let channels = file.info.channelCount
    if channels <= 2 && file.info.isPCM16 {
      // 16-bit PCM: read the integers and convert in one vectorizable loop.
      let n = min(frames, Self.foldFrames)
      let shorts = shortBuffer
      let got = file.readFrames(intoShorts: shorts, frameCount: n)
      if got <= 0 { return got }
      let count = got * channels
      let scale: Float = 1.0 / 32768
      for i in 0..<count { destination[i] = Float(shorts[i]) * scale }
      return got
    }
    if channels <= 2 { return file.readFrames(into: destination, frameCount: frames) }
    let n = min(frames, Self.foldFrames)
    let got = file.readFrames(into: foldBuffer, frameCount: n)
    if got <= 0 { return got }
    downmix.apply(foldBuffer, frames: got, into: destination)
    return got
  }

  /// Float files can hold NaN, infinity or denormals, which would poison the mix (or slow it
  /// down): replace them by 0 here, off the realtime thread, and flag the stem.
  func sanitize(_ p: UnsafeMutablePointer<Float>, count: Int) {
    var bad = false
    for i in 0..<count {
      let x = p[i]
      if !x.isFinite { p[i] = 0; bad = true } else if x != 0 && abs(x) < 1e-30 { p[i] = 0 }
    }
    if bad { shared.pointer.pointee.badSamples.store(true, ordering: .relaxed) }
  }

  func markEnd() {
    ended = true
    let s = shared.pointer
    s.pointee.endCounter.store(producer.writeCounter, ordering: .relaxed)
    s.pointee.endEpoch.store(epoch, ordering: .releasing)
  }

  func fail(_ reason: String) {
    failed = true
    conversion?.awaitingTail = false
    conversion?.flushing = false
    failureMessage = "\(file.path): \(reason)"
    shared.pointer.pointee.readFailed.store(true, ordering: .releasing)
    markEnd()
  }
}

/// The disk workers: keep every stream's ring filled a second or so ahead.
///
/// A small pool of threads (`workerCount`, 4 by default) share the stream list. A worker walks
/// the list from its own starting point, claims each stream it can (`DiskStream.tryClaim`),
/// services it and releases it; a stream another worker holds is skipped, not waited for. So a
/// worker stuck in a read that stalls (a dying disk sector, a network file system that hangs, a
/// file being rewritten, a slow disk injected by a test) holds up that one stream only: the
/// other workers keep every other ring filled. With N workers, N − 1 stems can stall at the same time before the
/// healthy ones feel it. (Per-stream deadlines cannot do this: a read blocked in the kernel
/// cannot be abandoned, and the thread blocked in it is lost to every stream until it returns.)
///
/// Workers poll fill levels every `idleMilliseconds` rather than being woken by the realtime
/// thread (which must not make syscalls): with over a second of look-ahead that is plenty. The
/// control thread wakes them at once when a stream needs audio now (a seek, a start, a new stem:
/// `wake()`), so starts stay quick. (They polled every 4 ms, four of them: 3–4 % of a core at
/// 32 stems on a 2-core machine, taken from the same cores the JACK thread runs on.) The list is guarded by a mutex shared only with the control thread (never with the
/// realtime thread) and held only to copy it, never across a read.
public final class DiskStreamer: @unchecked Sendable {
  /// The streams, guarded by `listLock`. A pthread mutex (NSLock), not Synchronization's `Mutex`:
  /// on Linux that one is built on raw futexes, which ThreadSanitizer cannot see, so it reported
  /// every new stream's fields (written by the control thread before `add`) as raced by the
  /// worker that first serviced it. The ordering was real; only the checker was blind to it.
  private var list: [DiskStream] = []
  private let listLock = NSLock()
  /// Threads in the pool (when started).
  public let workerCount: Int
  let running = Atomic<Bool>(false)
  let liveWorkers = Atomic<Int>(0)
  /// Spreads the workers' starting points over the list.
  let nextStart = Atomic<Int>(0)
  /// Passes made by all workers together (for tests and diagnostics).
  public let passes = Atomic<Int>(0)
  /// How long an idle worker waits before looking again, unless woken.
  public static let idleMilliseconds = 15
  let wakeup = DispatchSemaphore(value: 0)

  /// Injected by tests to simulate a slow disk (nil in the product): see `DiskReadPacing`.
  let pacing: (any DiskReadPacing)?

  public init(workers: Int = 4, pacing: (any DiskReadPacing)? = nil) {
    precondition(workers >= 1, "a disk streamer needs at least one worker")
    workerCount = workers
    self.pacing = pacing
  }

  public func add(_ stream: DiskStream) {
    listLock.lock()
    list.append(stream)
    listLock.unlock()
  }

  /// Removes a stream and waits until no worker is servicing it (a slice of a read at most, or
  /// as long as a stalled read takes). After this returns no worker touches it again.
  public func remove(_ stream: DiskStream) {
    drop(stream)
    while !stream.tryClaim() { usleep(500) }
  }

  /// Removes a stream without waiting: true when no worker holds it (then no worker will touch it
  /// again), false when one is still in the middle of it (call again later; it is already off the
  /// list, so this settles as soon as that worker lets go).
  public func tryRemove(_ stream: DiskStream) -> Bool {
    drop(stream)
    return stream.tryClaim()
  }

  private func drop(_ stream: DiskStream) {
    listLock.lock()
    list.removeAll { $0 === stream }
    listLock.unlock()
  }

  private func snapshot() -> [DiskStream] {
    listLock.lock()
    defer { listLock.unlock() }
    return list
  }

  /// One pass over all streams on the calling thread; returns frames written. Called directly by
  /// the offline renderer (which then needs no thread).
  @discardableResult
  public func fillAll() -> Int {
    pass(startingAt: 0, keepGoing: { true })
  }

  /// One pass over the list from `first`: services every stream no other worker holds.
  func pass(startingAt first: Int, keepGoing: () -> Bool) -> Int {
    passes.add(1, ordering: .relaxed)
    let list = snapshot()
    guard !list.isEmpty else { return 0 }
    var total = 0
    let offset = first % list.count
    for i in 0..<list.count {
      let stream = list[(offset + i) % list.count]
      guard stream.tryClaim() else { continue }
      total += stream.service(pacing: pacing, keepGoing: keepGoing)
      stream.releaseClaim()
    }
    return total
  }

  /// Starts the worker threads.
  public func start() {
    guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
    for n in 0..<workerCount {
      liveWorkers.add(1, ordering: .relaxed)
      let t = Thread { [self] in
        // Background work: below the JACK thread and the server when JACK runs without realtime
        // scheduling (both then compete with the workers for the same cores). Nice 10 is the
        // setpriority of this thread alone (on Linux, who 0 is the calling thread: nice is per thread).
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
        nameCurrentThread("stemdeck-disk-\(n)")
        while running.load(ordering: .acquiring) {
          let first = nextStart.add(1, ordering: .relaxed).oldValue &* 7919
          let written = pass(startingAt: first & Int.max, keepGoing: { running.load(ordering: .relaxed) })
          if written == 0 { _ = wakeup.wait(timeout: .now() + .milliseconds(Self.idleMilliseconds)) }
        }
        liveWorkers.subtract(1, ordering: .releasing)
      }
      t.name = "stemdeck-disk-\(n)"
      t.stackSize = 1 << 20
      t.start()
    }
  }

  /// Wakes the idle workers now (control thread: after a seek, a start or a new stream).
  public func wake() {
    for _ in 0..<workerCount { wakeup.signal() }
  }

  /// Stops the workers and waits for each to finish its slice (a stalled read delays this).
  public func stop() {
    guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
    wake()
    while liveWorkers.load(ordering: .acquiring) > 0 { usleep(1000) }
  }

  deinit { stop() }
}

/// Fault injection for tests: a slow disk. The disk workers ask it, before each read of a
/// stream, how many milliseconds to stall first (0: none). Given to `DiskStreamer` (through
/// `Mixer`'s initialiser); the product never sets one, so no test hook lives in the engine.
public protocol DiskReadPacing: AnyObject, Sendable {
  func stallMilliseconds(beforeReading stem: StemSharedRef) -> Int
}
