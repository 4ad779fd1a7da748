/// stemdeck's own light time-stretcher, the `fast` stretch quality (issue 25): WSOLA, waveform-
/// similarity overlap-add (Verhelst and Roelands, 1993). The tempo changes and the pitch stays
/// by construction: every output frame is a stretch of input played at its own speed.
///
/// The method: output frames of `frame` samples (a periodic Hann window, which sums to 1 at 50 %
/// overlap) are laid every `hop` samples. Frame k's centre in the input advances by `hop × tempo`
/// from frame k−1's (the tempo in force when frame k is made), so the input is consumed at the
/// tempo; the frame is then moved by up to ±`tolerance` samples to where the input looks most like
/// the natural continuation of frame k−1 (the input that followed it), so the overlap adds
/// waveforms in phase. The search maximises the normalised cross-correlation of the channels' sum
/// (stereo channels share one alignment, so the image stays): first on the sum decimated by 4
/// (every 4th lag), then at full rate within ±3 samples of the coarse best. A stereo stem costs
/// about a fortieth of Rubber Band R3's CPU (README, Stretch quality; docs/architecture.md).
///
/// Alignment and length: frame 0 is centred on input frame 0 and output frame 0 (the input before
/// the start is silence, the output before it is dropped), so the output starts with the file and
/// has no latency; at the end of the input the last hop is cut where its centre mapping reaches
/// the input's end, so a file of L frames at a held tempo t lasts L / t frames (within one).
///
/// Tempo changes (issue 25): the tempo is a schedule over output frames, held (`setTempo`) or
/// gliding (`glideTempo`, a `Glide` over output frames from where it is given). Frame k's centre
/// advances by the schedule's integral over the hop it finishes, not by `hop × tempo` of one
/// moment. A change that arrives while part of the last hop is unplayed re-makes the rest of that
/// hop at once (`update`): the frame's centre is moved to where the new schedule puts it from the
/// current output position on, the search runs again, and the new frame's contribution replaces
/// the old one's through a `crossfade` of `hop / 8` samples (1.3 ms at 48 kHz) starting at the
/// next unplayed frame, so the change is heard from the next retrieved frame without a click. At
/// most one re-make a hop: a second change within the same hop waits for the next hop (at most
/// `hop` frames), which bounds the cost of many changes (a MIDI bend) to twice the steady cost; a
/// glide needs none after its first frame, since the schedule knows it in advance.
///
/// Determinism: the output depends only on the input samples and on the tempo schedule (the tempo
/// given for each output frame, and where each change was given); how the input is cut into
/// `append` calls and how the output is cut into `retrieve` calls change nothing (so live at any
/// period equals the offline render bit for bit, during a glide too).
///
/// Making hops ahead (issue 25): the hop's work (a search and an overlap-add) comes once every
/// `hop` output frames, and stems started together would all do it in the same JACK period.
/// `prepareAhead(lead:)` makes the next hop as soon as at most `lead` frames of the last one are
/// left, into spare buffers; when `ready` runs out, `update` adopts it instead of making it then.
/// It is the hop `update` would have made (the same schedule over the same output frames, the same
/// input), so the output does not change; a change of the schedule drops it (`setTempo`,
/// `glideTempo`) and the hop is made again at the new tempo. Stems given different leads do
/// their hops in different periods.
///
/// - Thread: `init` and `deinit` allocate and free (control thread); everything else is
///   realtime code (no allocation, no locks).
public struct WsolaStretcher: ~Copyable, @unchecked Sendable {
  public let channels: Int
  /// Output samples between frames; half of `frame`.
  public let hop: Int
  /// Samples in a frame (its window).
  public let frame: Int
  /// The largest move of a frame from its nominal input position, in samples (a multiple of 4).
  public let tolerance: Int
  @usableFromInline static var decimation: Int { @_noLocks get { 4 } }
  @usableFromInline let window: UnsafeMutablePointer<Float>
  /// Planar input history, `capacity` samples a channel: absolute input frame `historyStart + i`
  /// at index i (negative frames are the silence before the start).
  @usableFromInline let history: UnsafeMutablePointer<Float>
  @usableFromInline let capacity: Int
  @usableFromInline var historyStart = 0
  @usableFromInline var historyCount = 0
  /// The input has ended at absolute frame `inputLength`.
  @usableFromInline var inputEnded = false
  @usableFromInline var inputLength = 0
  /// Planar overlap-add accumulator, `frame` samples a channel, starting at the current frame's
  /// first output sample.
  @usableFromInline var accumulator: UnsafeMutablePointer<Float>
  /// Planar finished output of the last hop, `hop` samples a channel: `readyCount` of them from
  /// `readyOffset` not yet retrieved.
  @usableFromInline var ready: UnsafeMutablePointer<Float>
  @usableFromInline var readyOffset = 0
  @usableFromInline var readyCount = 0
  /// The last frame's centre in the input (fractional), and where its window started.
  @usableFromInline var center: Double = 0
  @usableFromInline var previousStart = 0
  /// The frame before it (whose natural continuation a re-make of the last one searches against).
  @usableFromInline var earlierCenter: Double = 0
  @usableFromInline var earlierStart = 0
  /// The nominal mapping of the last hop's output: from input `spliceInput` at output frame
  /// `spliceOutput` (the hop's start, or where it was re-made) linearly to `center` at its end.
  @usableFromInline var spliceOutput = 0
  @usableFromInline var spliceInput: Double = 0
  /// The tempo schedule changed since the last hop was made; the last hop was re-made already.
  @usableFromInline var pending = false
  @usableFromInline var remade = false
  /// Output frames retrieved since `init` (`reset` keeps counting): where the schedule is given.
  @usableFromInline var emitted = 0
  /// The tempo schedule: `tempo` (a glide's target while `glide` runs), and an active `glide`
  /// started at output frame `glideStart`.
  @usableFromInline var tempo: Double
  @usableFromInline var glide = Glide()
  @usableFromInline var glideStart = 0
  @usableFromInline var hops = 0
  /// The end of the input has been reached: nothing more after `ready`.
  @usableFromInline var ended = false
  /// Search scratch: the natural continuation's channel sum (`frame`), the candidates' region
  /// (`frame + 2 × tolerance`), and both decimated by 4.
  @usableFromInline let natural: UnsafeMutablePointer<Float>
  @usableFromInline let candidates: UnsafeMutablePointer<Float>
  @usableFromInline let naturalCoarse: UnsafeMutablePointer<Float>
  @usableFromInline let candidatesCoarse: UnsafeMutablePointer<Float>
  /// The accumulator's first `hop` samples a channel before the last hop added its frame (the
  /// frame before's second half): what a re-make adds the new frame to.
  @usableFromInline var tail: UnsafeMutablePointer<Float>
  /// The next hop made ahead (`prepareAhead`): its accumulator, output and tail, swapped with
  /// `accumulator`, `ready` and `tail` when it is adopted; its frame is `aheadHop` while `hasAhead`.
  @usableFromInline var spareAccumulator: UnsafeMutablePointer<Float>
  @usableFromInline var spareReady: UnsafeMutablePointer<Float>
  @usableFromInline var spareTail: UnsafeMutablePointer<Float>
  @usableFromInline var aheadHop = PlannedHop()
  @usableFromInline var hasAhead = false
  /// Searches made since `init` (hops and re-makes, ahead or not): the work, for tests and pulls.
  public internal(set) var searches = 0
  /// Samples of a re-make's crossfade, and its rising curve (`crossfade` values, 0 to 1 exclusive).
  public let crossfade: Int
  @usableFromInline let fade: UnsafeMutablePointer<Float>

  /// A stretcher for `channels` channels (1 or 2) at `sampleRate`: 21 ms frames at 48 kHz
  /// (1024 samples, hop 512, tolerance ±384), twice that above 64 kHz; `tempo` held.
  public init(channels: Int, sampleRate: Double, tempo: Double = 1) {
    self.channels = channels
    self.tempo = tempo
    hop = sampleRate > 64000 ? 1024 : 512
    frame = 2 * hop
    tolerance = hop * 3 / 4
    capacity = 8 * frame
    crossfade = hop / 8
    tail = .allocate(capacity: hop * channels)
    tail.initialize(repeating: 0, count: hop * channels)
    spareTail = .allocate(capacity: hop * channels)
    spareTail.initialize(repeating: 0, count: hop * channels)
    fade = .allocate(capacity: crossfade)
    for i in 0..<crossfade {
      fade[i] = Float(0.5 - 0.5 * cosImpl(Double.pi * Double(i + 1) / Double(crossfade + 1)))
    }
    window = .allocate(capacity: frame)
    for i in 0..<frame {
      window[i] = Float(0.5 - 0.5 * cosImpl(2 * Double.pi * Double(i) / Double(frame)))
    }
    history = .allocate(capacity: capacity * channels)
    history.initialize(repeating: 0, count: capacity * channels)
    accumulator = .allocate(capacity: frame * channels)
    accumulator.initialize(repeating: 0, count: frame * channels)
    ready = .allocate(capacity: hop * channels)
    ready.initialize(repeating: 0, count: hop * channels)
    spareAccumulator = .allocate(capacity: frame * channels)
    spareAccumulator.initialize(repeating: 0, count: frame * channels)
    spareReady = .allocate(capacity: hop * channels)
    spareReady.initialize(repeating: 0, count: hop * channels)
    natural = .allocate(capacity: frame)
    natural.initialize(repeating: 0, count: frame)
    candidates = .allocate(capacity: frame + 2 * tolerance)
    candidates.initialize(repeating: 0, count: frame + 2 * tolerance)
    naturalCoarse = .allocate(capacity: frame / Self.decimation)
    naturalCoarse.initialize(repeating: 0, count: frame / Self.decimation)
    candidatesCoarse = .allocate(capacity: (frame + 2 * tolerance) / Self.decimation)
    candidatesCoarse.initialize(repeating: 0, count: (frame + 2 * tolerance) / Self.decimation)
    reset()
  }

  deinit {
    window.deallocate()
    history.deallocate()
    accumulator.deallocate()
    ready.deallocate()
    natural.deallocate()
    candidates.deallocate()
    naturalCoarse.deallocate()
    candidatesCoarse.deallocate()
    tail.deallocate()
    fade.deallocate()
    spareAccumulator.deallocate()
    spareReady.deallocate()
    spareTail.deallocate()
  }

  /// Forgets everything but the tempo schedule: the next input is frame 0 of a new stream, and
  /// the next output frame its output frame 0.
  @_noLocks
  public mutating func reset() {
    // The silence before the start that the first frames' windows and searches reach into.
    let lead = frame / 2 &+ tolerance
    for c in 0..<channels { (history + c &* capacity).update(repeating: 0, count: lead) }
    historyStart = -lead
    historyCount = lead
    inputEnded = false
    inputLength = 0
    accumulator.update(repeating: 0, count: frame &* channels)
    readyOffset = 0
    readyCount = 0
    center = 0
    previousStart = 0
    earlierCenter = 0
    earlierStart = 0
    spliceOutput = emitted
    spliceInput = 0
    pending = false
    remade = false
    hops = 0
    ended = false
    hasAhead = false
  }

  /// From the next output frame on, the tempo is `tempo` (input frames per output frame,
  /// 0.5…2), held; a glide stops. The next `update` re-makes the unplayed rest of the last hop.
  @_noLocks
  public mutating func setTempo(_ tempo: Double) {
    if tempo == self.tempo && !isGliding() {
      glide = Glide()
      return
    }
    self.tempo = tempo
    glide = Glide()
    pending = true
    hasAhead = false  // made at the old tempo
  }

  /// From the next output frame on, the tempo follows `glide` (from its start: `doneFrames` 0),
  /// one value an output frame, then holds its target.
  @_noLocks
  public mutating func glideTempo(_ glide: Glide) {
    var g = glide
    g.doneFrames = 0
    self.glide = g
    glideStart = emitted
    tempo = g.to
    pending = true
    hasAhead = false  // made on the old schedule
  }

  /// Whether a glide is moving the tempo at the next output frame.
  @_noLocks
  public func isGliding() -> Bool { glide.isActive && emitted < glideStart &+ glide.totalFrames }

  /// The schedule's tempo at output frame `position` (not before the glide's start).
  @_noLocks
  func tempo(at position: Int) -> Double {
    if !glide.isActive || position >= glideStart &+ glide.totalFrames { return tempo }
    var g = glide
    g.doneFrames = Swift.max(0, position &- glideStart)
    return g.value
  }

  /// Input frames the schedule consumes from output frame `start` to `end`: exact for a held
  /// tempo and a linear glide (a trapezoid; an exponential glide's curve is nearly straight over
  /// a hop).
  @_noLocks
  func inputFrames(from start: Int, to end: Int) -> Double {
    let glideEnd = glideStart &+ glide.totalFrames
    if !glide.isActive || start >= glideEnd { return Double(end &- start) * tempo }
    let middle = Swift.min(end, glideEnd)
    var sum = Double(middle &- start) * ((tempo(at: start) + tempo(at: middle)) * 0.5)
    if end > middle { sum += Double(end &- middle) * tempo }
    return sum
  }

  /// Output frames retrieved since `init`: where a tempo given now takes effect.
  public var outputPosition: Int { @_noLocks get { emitted } }

  /// The nominal input frame the next output frame maps to (the frames' centres joined
  /// linearly, from a re-make's splice where there was one): it advances at the tempo.
  public var inputPosition: Double { @_noLocks get { mapped(at: emitted) } }

  @_noLocks
  func mapped(at position: Int) -> Double {
    let span = emitted &- readyOffset &+ hop &- spliceOutput
    if span <= 0 { return center }
    return spliceInput + Double(position &- spliceOutput) * ((center - spliceInput) / Double(span))
  }

  /// True when every output frame has been retrieved and no more will come.
  @_noLocks
  public func isFinished() -> Bool { ended && readyCount == 0 }

  /// Input frames it can take now (the history's room once what no later frame reads is dropped).
  @_noLocks
  public mutating func room() -> Int {
    compact()
    return capacity &- historyCount
  }

  /// Appends `frames` interleaved frames (at most `room()`); `final` marks the input's end.
  /// Returns the frames taken.
  @_noLocks @discardableResult
  public mutating func append(interleaved source: UnsafePointer<Float>, frames: Int, final: Bool) -> Int {
    compact()
    let n = Swift.min(frames, capacity &- historyCount)
    let ch = channels
    for c in 0..<ch {
      let dst = history + (c &* capacity &+ historyCount)
      for i in 0..<n { dst[i] = source[i &* ch &+ c] }
    }
    historyCount &+= n
    if final { markEnd() }
    return n
  }

  /// Appends `frames` frames from one buffer per channel (at most `room()`); returns the frames taken.
  @_noLocks @discardableResult
  public mutating func append(planar source: UnsafePointer<UnsafeMutablePointer<Float>?>, frames: Int, final: Bool) -> Int {
    compact()
    let n = Swift.min(frames, capacity &- historyCount)
    for c in 0..<channels {
      let src = source[c]!
      let dst = history + (c &* capacity &+ historyCount)
      for i in 0..<n { dst[i] = src[i] }
    }
    historyCount &+= n
    if final { markEnd() }
    return n
  }

  @_noLocks
  mutating func markEnd() {
    inputEnded = true
    inputLength = historyStart &+ historyCount
  }

  /// Drops the history no later frame reads: before the natural continuation of the last frame
  /// and before the earliest candidate of the next (its centre is at least the last one's).
  @_noLocks
  mutating func compact() {
    // The centres are never negative: Int() is their floor. The earlier frame's continuation and
    // its centre's candidates stay for a re-make of the last frame (the re-made centre is at least
    // the earlier one).
    let earliest = Swift.min(
      Swift.min(previousStart, earlierStart) &+ hop, Int(earlierCenter) &- frame / 2 &- tolerance)
    let drop = earliest &- historyStart
    if drop <= 0 { return }
    let keep = historyCount &- drop
    if keep > 0 {
      for c in 0..<channels {
        let base = history + c &* capacity
        UnsafeMutableRawPointer(base).copyMemory(from: UnsafeRawPointer(base + drop), byteCount: keep &* 4)
      }
      historyCount = keep
    } else {
      historyCount = 0
    }
    historyStart = earliest
  }

  /// Moves up to `frames` finished frames into `destination` (interleaved, `channels` a frame);
  /// returns how many.
  @_noLocks
  public mutating func retrieve(into destination: UnsafeMutablePointer<Float>, frames: Int) -> Int {
    let n = Swift.min(frames, readyCount)
    let ch = channels
    for c in 0..<ch {
      let src = ready + (c &* hop &+ readyOffset)
      for i in 0..<n { destination[i &* ch &+ c] = src[i] }
    }
    readyOffset &+= n
    readyCount &-= n
    emitted &+= n
    return n
  }

  /// Brings `ready` up to the tempo schedule before frames are retrieved: re-makes the unplayed
  /// rest of the last hop when the schedule changed since it was made (once a hop), and makes
  /// the next hop when `ready` is empty (`hop` output frames, fewer at the end), or adopts the one
  /// `prepareAhead` made. False when it needs more input first (nothing changes: append and call
  /// it again, or `abandonRemake`).
  @_noLocks
  public mutating func update() -> Bool {
    if pending {
      if readyCount > 0 && !remade && !remake() { return false }
      pending = false
    }
    if readyCount == 0 && !ended {
      if hasAhead {
        adoptAhead()
        return true
      }
      return makeHop()
    }
    return true
  }

  /// Makes the next hop now if at most `lead` output frames of the last one are left to retrieve
  /// and none is made yet, so that `update` only has to adopt it when they run out (see the type's
  /// doc: stems with different leads work in different periods). The same hop `update` would make
  /// then: the output does not change. False when it needs more input first (nothing changes:
  /// append and call it again, or leave it to `update`); true when it is made or not due.
  @_noLocks
  public mutating func prepareAhead(lead: Int) -> Bool {
    if hasAhead || pending || ended || hops == 0 || readyCount > lead { return true }
    guard let next = planHop(at: emitted &+ readyCount) else { return false }
    UnsafeMutableRawPointer(spareAccumulator).copyMemory(
      from: UnsafeRawPointer(accumulator), byteCount: frame &* channels &* 4)
    overlapAdd(start: next.start, accumulator: spareAccumulator, ready: spareReady, tail: spareTail)
    aheadHop = next
    hasAhead = true
    return true
  }

  /// Gives up a re-make `update` could not do for want of input (the disk is late): the change
  /// waits for the next hop. False when none was waiting.
  @_noLocks
  public mutating func abandonRemake() -> Bool {
    if !pending || readyCount == 0 || remade { return false }
    pending = false
    remade = true
    return true
  }
}
