// WSOLA's hops (Wsola.swift has the method and the stretcher's state and schedule): making the
// next output frame, planning and adopting it (ahead or not), re-making the unplayed rest of a
// hop after a tempo change, the waveform-similarity search and the overlap-add.
// docs/architecture.md, *Engine*.

extension WsolaStretcher {
  /// Makes the next frame at the schedule's tempo over the hop it finishes. False when it needs
  /// more input first (nothing changes); called once `ready` is empty and while not `ended`.
  @_noLocks
  mutating func makeHop() -> Bool {
    if ended || readyCount > 0 { return true }
    let half = frame / 2
    if hops == 0 {
      // Frame 0 sits on input frame 0 without a search; the half before output frame 0 is dropped.
      if !haveInput(upTo: half) { return false }
      overlapAdd(start: -half, accumulator: accumulator, ready: ready, tail: tail)
      previousStart = -half
      earlierStart = -half
      spliceOutput = emitted
      spliceInput = 0
      hops = 1
      readyCount = 0
      readyOffset = 0
      pending = false
      if inputEnded && inputLength == 0 { ended = true }
      return true
    }
    guard let next = planHop(at: emitted) else { return false }
    overlapAdd(start: next.start, accumulator: accumulator, ready: ready, tail: tail)
    adopt(next)
    return true
  }

  /// Takes the hop `prepareAhead` made as the last one: its buffers become the current ones.
  @_noLocks
  mutating func adoptAhead() {
    swap(&accumulator, &spareAccumulator)
    swap(&ready, &spareReady)
    swap(&tail, &spareTail)
    hasAhead = false
    adopt(aheadHop)
  }

  /// The next frame after the last one (its output starting at output frame `hopStart`): its
  /// centre at the schedule's tempo over the hop, where the search puts its window, and how much
  /// of the hop's output is kept (all, or up to where it maps to the input's end). Nil when it needs
  /// more input first. It reads only the input and the schedule: made early, it is the same frame.
  @_noLocks
  mutating func planHop(at hopStart: Int) -> PlannedHop? {
    let half = frame / 2
    let next = center + inputFrames(from: hopStart, to: hopStart &+ hop)
    let natural = previousStart &+ hop
    let nominal = Int(next) &- half  // its floor: `next` is positive
    // Where the input has not ended, this reaches past `next`, so the end cut below is decided
    // the same way whenever the hop is planned.
    if !haveInput(upTo: Swift.max(natural &+ frame, nominal &+ tolerance &+ frame)) { return nil }
    searches &+= 1
    var planned = PlannedHop()
    planned.start = nominal &+ search(natural: natural, nominal: nominal)
    planned.center = next
    planned.outputStart = hopStart
    planned.kept = hop
    if inputEnded && next >= Double(inputLength) {
      // The input's end lies in this hop: keep the output up to where it maps to.
      let fraction = (Double(inputLength) - center) / (next - center)
      let exact = fraction * Double(hop)
      var kept = Int(exact)
      if Double(kept) < exact { kept &+= 1 }  // rounded up
      planned.kept = Swift.max(0, Swift.min(hop, kept))
      planned.ends = true
    }
    return planned
  }

  /// Makes `next` (overlap-added into the current buffers already) the last hop.
  @_noLocks
  mutating func adopt(_ next: PlannedHop) {
    earlierCenter = center
    earlierStart = previousStart
    spliceOutput = next.outputStart
    spliceInput = center
    center = next.center
    previousStart = next.start
    pending = false
    remade = false
    hops &+= 1
    readyOffset = 0
    readyCount = next.kept
    if next.ends { ended = true }
  }

  /// Re-makes the unplayed rest of the last hop (frame k) where the schedule now puts its centre:
  /// the mapping goes on from where the next output frame maps to, at the schedule's tempo, the
  /// frame is searched again against the earlier frame's continuation, and the new frame replaces
  /// the old through `crossfade` samples from the next output frame. False when it needs more
  /// input first (nothing changes).
  @_noLocks
  mutating func remake() -> Bool {
    let played = readyOffset
    let hopEnd = emitted &- played &+ hop
    let here = mapped(at: emitted)
    let next = here + inputFrames(from: emitted, to: hopEnd)
    if next == center { return true }
    let natural = earlierStart &+ hop
    let nominal = Int(next) &- frame / 2  // its floor: `next` is positive
    if !haveInput(upTo: Swift.max(natural &+ frame, nominal &+ tolerance &+ frame)) { return false }
    searches &+= 1
    let start = nominal &+ search(natural: natural, nominal: nominal)
    if start != previousStart { splice(start: start, from: played) }
    center = next
    previousStart = start
    spliceOutput = emitted
    spliceInput = here
    remade = true
    // The end of the input may now lie in this hop, or past it.
    readyCount = hop &- played
    ended = false
    if inputEnded && next >= Double(inputLength) {
      let exact = (Double(inputLength) - here) / (next - here) * Double(hop &- played)
      var kept = Swift.max(0, Int(exact))
      if Double(kept) < exact { kept &+= 1 }  // rounded up
      readyCount = Swift.min(hop &- played, kept)
      ended = true
    }
    return true
  }

  /// Replaces the last frame's contribution from `ready`'s sample `played` on (and to the
  /// accumulator, its second half) with the frame of input at absolute frame `start`, crossfading
  /// over the first `crossfade` samples.
  @_noLocks
  mutating func splice(start: Int, from played: Int) {
    let h = hop
    let x = crossfade
    for c in 0..<channels {
      let src = input(channel: c, from: start)
      let before = tail + c &* h
      let out = ready + c &* h
      let acc = accumulator + c &* frame
      for i in played..<h {
        let made = before[i] + window[i] * src[i]
        let k = i &- played
        out[i] = k < x ? out[i] + (made - out[i]) * fade[k] : made
      }
      for j in 0..<h {
        let made = window[h &+ j] * src[h &+ j]
        let k = h &+ j &- played
        acc[j] = k < x ? acc[j] + (made - acc[j]) * fade[k] : made
      }
    }
  }

  /// Whether the history reaches absolute frame `end` (exclusive); past the input's end it is
  /// filled with silence.
  @_noLocks
  mutating func haveInput(upTo end: Int) -> Bool {
    let have = historyStart &+ historyCount
    if end <= have { return true }
    if !inputEnded { return false }
    compact()
    let extra = Swift.min(end &- (historyStart &+ historyCount), capacity &- historyCount)
    for c in 0..<channels { input(channel: c, from: historyStart &+ historyCount).update(repeating: 0, count: extra) }
    historyCount &+= extra
    return historyStart &+ historyCount >= end
  }

  /// The move (−tolerance…tolerance) that best aligns the frame at `nominal` with the natural
  /// continuation at `natural`.
  @_noLocks
  func search(natural start: Int, nominal: Int) -> Int {
    let n = frame
    let span = frame &+ 2 &* tolerance
    let first = nominal &- tolerance
    // The channels' sums.
    sumChannels(from: start, count: n, into: natural)
    sumChannels(from: first, count: span, into: candidates)
    let d = Self.decimation
    let coarseN = n / d
    for j in 0..<coarseN {
      let p = natural + j &* d
      naturalCoarse[j] = (p[0] + p[1]) + (p[2] + p[3])
    }
    for j in 0..<(span / d) {
      let p = candidates + j &* d
      candidatesCoarse[j] = (p[0] + p[1]) + (p[2] + p[3])
    }
    // The score is the normalised correlation squared with its sign (no square root): the same order.
    var best = tolerance / d
    var bestScore = -Float.infinity
    for j in 0...(2 &* tolerance / d) {
      let (cross, energy) = Self.correlate(UnsafePointer(naturalCoarse), UnsafePointer(candidatesCoarse + j), count: coarseN)
      let score = cross * Swift.abs(cross) / (energy + 1e-9)
      if score > bestScore {
        bestScore = score
        best = j
      }
    }
    let coarse = best &* d
    var fine = coarse
    var fineScore = -Float.infinity
    for k in Swift.max(0, coarse &- 3)...Swift.min(2 &* tolerance, coarse &+ 3) {
      let (cross, energy) = Self.correlate(UnsafePointer(natural), UnsafePointer(candidates + k), count: n)
      let score = cross * Swift.abs(cross) / (energy + 1e-9)
      if score > fineScore {
        fineScore = score
        fine = k
      }
    }
    return fine &- tolerance
  }

  /// Channel `c`'s input from absolute frame `frame` on, in the history (which must hold it).
  @_noLocks @inline(__always)
  func input(channel c: Int, from frame: Int) -> UnsafeMutablePointer<Float> {
    history + (c &* capacity &+ (frame &- historyStart))
  }

  /// The channels' input from absolute frame `frame` on, summed, into `destination`.
  @_noLocks @inline(__always)
  func sumChannels(from frame: Int, count: Int, into destination: UnsafeMutablePointer<Float>) {
    let left = input(channel: 0, from: frame)
    if channels == 1 {
      UnsafeMutableRawPointer(destination).copyMemory(from: UnsafeRawPointer(left), byteCount: count &* 4)
      return
    }
    let right = input(channel: 1, from: frame)
    for i in 0..<count { destination[i] = left[i] + right[i] }
  }

  /// The dot product of `a` and `b` and the energy of `b` over `count` samples (a multiple of 8),
  /// in SIMD lanes (a fixed order of additions: deterministic).
  @_noLocks @inline(__always)
  static func correlate(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, count: Int) -> (Float, Float) {
    let ra = UnsafeRawPointer(a)
    let rb = UnsafeRawPointer(b)
    var cross = SIMD8<Float>(repeating: 0)
    var energy = SIMD8<Float>(repeating: 0)
    var i = 0
    while i &+ 8 <= count {
      let x = ra.loadUnaligned(fromByteOffset: i &* 4, as: SIMD8<Float>.self)
      let y = rb.loadUnaligned(fromByteOffset: i &* 4, as: SIMD8<Float>.self)
      cross += x * y
      energy += y * y
      i &+= 8
    }
    return (cross.sum(), energy.sum())
  }

  /// Adds the windowed frame of input starting at absolute frame `start` into `accumulator`
  /// (keeping its first `hop` samples before in `tail`), moves the first `hop` samples (now
  /// finished) to `ready` and shifts the accumulator by a hop.
  @_noLocks
  mutating func overlapAdd(
    start: Int, accumulator: UnsafeMutablePointer<Float>, ready: UnsafeMutablePointer<Float>,
    tail: UnsafeMutablePointer<Float>
  ) {
    let n = frame
    let h = hop
    for c in 0..<channels {
      let src = input(channel: c, from: start)
      let acc = accumulator + c &* n
      UnsafeMutableRawPointer(tail + c &* h).copyMemory(from: UnsafeRawPointer(acc), byteCount: h &* 4)
      for i in 0..<n { acc[i] += window[i] * src[i] }
      UnsafeMutableRawPointer(ready + c &* h).copyMemory(from: UnsafeRawPointer(acc), byteCount: h &* 4)
      UnsafeMutableRawPointer(acc).copyMemory(from: UnsafeRawPointer(acc + h), byteCount: (n &- h) &* 4)
      (acc + (n &- h)).update(repeating: 0, count: h)
    }
  }
}

/// A hop's frame before it is the last one (`WsolaStretcher.planHop`): where its window starts,
/// its centre, the output frame its output starts at, the output frames it keeps, and whether the
/// input ends in it.
@usableFromInline
struct PlannedHop {
  @usableFromInline var start = 0
  @usableFromInline var center: Double = 0
  @usableFromInline var outputStart = 0
  @usableFromInline var kept = 0
  @usableFromInline var ends = false
  @usableFromInline init() {}
}
