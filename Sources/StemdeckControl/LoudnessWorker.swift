import Foundation
import StemdeckEngine
import StemdeckText

/// The master's live loudness meter (issue 23) on a thread of its own (docs/architecture.md,
/// "Threads"). libebur128 costs more than everything else the control loop does: K-weighting and
/// 4× oversampled true peak on every frame, and each short-term figure is a sum over the last
/// 3 s of audio. So the control thread only copies what the renderer's tap holds into this
/// meter's inbox (`Mixer.pump`: a copy, 96,000 floats a second at 48 kHz) and reads the figures
/// it publishes; the meter thread owns libebur128, feeds it, and measures:
/// - 5 times a second while someone reads the published figures (`published`: the mixer view,
///   drawn 30 times a second, only formats them; it shows short-term and integrated loudness and
///   true peak). Momentary and short-term loudness are then those at the last 100 ms boundary,
///   kept current 100 ms at a time (`LoudnessSlices`): asked of libebur128, each is a sum over
///   the last 400 ms or 3 s, which five times a second cost more than a third of the thread's
///   time (README, Performance);
/// - at once when asked for fresh figures (`fresh`: `meters master`, the socket's meter stream,
///   tests): everything handed in before the request is measured, as the control thread's own
///   meter did.
///
/// `reset` (`meters reset`) drops what was handed in and not yet measured, and the figures
/// published before it are never published after it (an epoch), so the next reading after a
/// reset never shows the figures from before.
final class LoudnessWorker: @unchecked Sendable {
  let sampleRate: Int
  /// Publications at most this often while only `published` is read.
  static let publishInterval: Duration = .milliseconds(200)

  private let condition = NSCondition()
  // Guarded by `condition`:
  /// Interleaved stereo frames handed in and not yet measured.
  private var inbox: [Float] = []
  /// The tap's dropped-frame count when the inbox was last filled.
  private var droppedSoFar: Int
  /// Frames the inbox had no room for (the meter thread fell two seconds behind).
  private var inboxLost = 0
  /// A reset asked for: the tap's dropped-frame count then.
  private var resetAsked: Int?
  /// Counts resets: a reading measured before one is not published after it.
  private var epoch = 0
  /// Fresh readings asked for, and the request count the latest reading answers.
  private var requested = 0
  private var answered = 0
  /// Someone read `published` since the last publication.
  private var wanted = false
  private var latest: LiveLoudness
  private var stopping = false
  private var running = true

  // The meter thread's own:
  private var meter: LoudnessMeter
  private var slices: LoudnessSlices
  private var batch: [Float] = []
  private var frames = 0
  private var droppedAtReset: Int
  private var lostAtReset = 0
  private var lastPublication = ContinuousClock.now
  private let capacity: Int
  /// Samples (interleaved) that wake the meter thread: 100 ms of stereo.
  private let wakeSamples: Int

  /// Starts the meter thread. `droppedSoFar`: the tap's dropped-frame count now.
  init(sampleRate: Int, droppedSoFar: Int) throws(MixerError) {
    self.sampleRate = sampleRate
    meter = try LoudnessMeter(sampleRate: sampleRate, histogram: true)
    slices = LoudnessSlices(sampleRate: sampleRate)
    self.droppedSoFar = droppedSoFar
    droppedAtReset = droppedSoFar
    latest = Self.silence
    // Two seconds of stereo: the inbox and the batch swap, so neither grows after this.
    capacity = max(8192, sampleRate * 4)
    wakeSamples = max(2, sampleRate / 5)
    inbox.reserveCapacity(capacity)
    batch.reserveCapacity(capacity)
    let thread = Thread { [self] in
      nameCurrentThread("stemdeck-lufs")  // scripts/measure-mixer-view finds it by name
      run()
    }
    thread.name = "stemdeck-lufs"
    thread.start()
  }

  static let silence = LiveLoudness(
    momentary: -.infinity, shortTerm: -.infinity, integrated: -.infinity, range: 0, truePeak: 0, seconds: 0,
    droppedFrames: 0)

  /// Hands interleaved stereo frames to the meter (control thread, from `Mixer.pump`). When the
  /// meter thread is two seconds behind (renders faster than real time, a starved machine),
  /// waits for it to take the inbox: for as long as it takes to measure what it holds, at most
  /// a second, after which the frames that do not fit are counted as missed.
  func add(_ segments: RingSegments<Float>, droppedSoFar dropped: Int) {
    condition.lock()
    defer { condition.unlock() }
    droppedSoFar = dropped
    let deadline = Date(timeIntervalSinceNow: 1)
    for part in [segments.first, segments.second] where part.count > 0 {
      while inbox.count + part.count > capacity && running && !stopping {
        condition.broadcast()
        if !condition.wait(until: deadline) { break }
      }
      if inbox.count + part.count > capacity {
        inboxLost += part.count / 2
      } else {
        inbox.append(contentsOf: part)
      }
    }
    // The meter thread measures 100 ms at a time (or sooner when a reading is due or asked
    // for): fewer wake-ups than one per `pump`, which were a tenth of its time.
    if inbox.count >= wakeSamples { condition.broadcast() }
  }

  /// Restarts the integration: what was handed in and not measured yet is dropped, and the
  /// figures read until the meter thread has measured anything new are those of silence.
  func reset(droppedSoFar dropped: Int) {
    condition.lock()
    defer { condition.unlock() }
    inbox.removeAll(keepingCapacity: true)
    droppedSoFar = dropped
    resetAsked = dropped
    epoch += 1
    latest = Self.silence
    condition.broadcast()
  }

  /// The figures last published (at most about 300 ms old while they are read: every 200 ms, to the last 100 ms boundary): for displays
  /// that read them many times a second. Never waits for the meter thread.
  var published: LiveLoudness {
    condition.lock()
    defer { condition.unlock() }
    if !wanted {
      wanted = true
      condition.broadcast()
    }
    return latest
  }

  /// The figures over everything handed in before this call (waits for the meter thread,
  /// normally well under a millisecond; the last published figures if it takes over 2 s).
  func fresh() -> LiveLoudness {
    condition.lock()
    defer { condition.unlock() }
    requested += 1
    let target = requested
    condition.broadcast()
    let deadline = Date(timeIntervalSinceNow: 2)
    while answered < target && running {
      if !condition.wait(until: deadline) { break }
    }
    return latest
  }

  /// Stops the meter thread and waits for it to end.
  func stop() {
    condition.lock()
    defer { condition.unlock() }
    stopping = true
    condition.broadcast()
    while running { condition.wait() }
  }

  private func run() {
    condition.lock()
    while true {
      while !stopping && inbox.count < wakeSamples && resetAsked == nil && requested == answered
        && !(wanted && ContinuousClock.now - lastPublication >= Self.publishInterval)
      {
        // While the figures are read, publish on time even when no audio comes in.
        if wanted {
          _ = condition.wait(until: Date(timeIntervalSinceNow: 0.2))
        } else {
          condition.wait()
        }
      }
      if stopping { break }
      let request = requested, readingEpoch = epoch, reset = resetAsked, dropped = droppedSoFar, lost = inboxLost
      let due = wanted && ContinuousClock.now - lastPublication >= Self.publishInterval
      resetAsked = nil
      swap(&inbox, &batch)
      condition.broadcast()  // room in the inbox again (`add`)
      condition.unlock()

      if let reset {
        if let made = try? LoudnessMeter(sampleRate: sampleRate, histogram: true) {
          meter = made
          slices = LoudnessSlices(sampleRate: sampleRate)
        }
        frames = 0
        droppedAtReset = reset
        lostAtReset = lost
      }
      if batch.count >= 2 {
        let count = batch.count - batch.count % 2
        batch.withUnsafeBufferPointer { b in
          // libebur128 fails only on allocation; the frames are then simply not measured.
          if let base = b.baseAddress { try? slices.add(base, frames: count / 2, to: meter) }
        }
        frames += count / 2
      }
      batch.removeAll(keepingCapacity: true)
      var reading: LiveLoudness?
      if request != answered || due || reset != nil {
        reading = measure(droppedSoFar: dropped, lost: lost, exact: request != answered || reset != nil)
        lastPublication = ContinuousClock.now
      }

      condition.lock()
      // Measured before a reset that came in meanwhile: dropped (the loop measures again).
      if let reading, epoch == readingEpoch {
        latest = reading
        answered = request
        if due { wanted = false }
        condition.broadcast()
      }
    }
    running = false
    condition.broadcast()
    condition.unlock()
  }

  /// `exact`: momentary and short-term loudness at the last frame measured (libebur128 sums the
  /// last 3 s for them), for `fresh`; otherwise at the last 100 ms boundary (`LoudnessSlices`:
  /// the same figures, at most 100 ms older, for a fraction of the cost), for publications.
  private func measure(droppedSoFar: Int, lost: Int, exact: Bool) -> LiveLoudness {
    let l = meter.loudness
    return LiveLoudness(
      momentary: exact ? meter.momentary : slices.momentary(meter),
      shortTerm: exact ? meter.shortTerm : slices.shortTerm(meter), integrated: l.integrated, range: l.range,
      truePeak: l.truePeak, seconds: Double(frames) / Double(sampleRate),
      droppedFrames: droppedSoFar - droppedAtReset + lost - lostAtReset)
  }
}

/// The mixer's handle on its `LoudnessWorker`: the meter thread ends when the handle goes (the
/// meter stopped, the mixer freed).
final class LiveLoudnessMeter {
  let worker: LoudnessWorker

  init(sampleRate: Int, droppedSoFar: Int) throws(MixerError) {
    worker = try LoudnessWorker(sampleRate: sampleRate, droppedSoFar: droppedSoFar)
  }

  deinit { worker.stop() }
}
