// A `fast` voice's converter while its rate holds: zita-resampler's VResampler set up for exactly
// that ratio (DSP/ZitaResampler.swift), which is cleaner and, above rate 1, cheaper than the sinc
// (docs/architecture.md, *Resampling*). The sinc keeps glides and a ratio no instance was made
// for (a MIDI bend); the bypass keeps ratio 1. The control thread makes the instance when it sets
// the rate (`EngineCommand.offerConverter`, sent with `setRate` or a rate glide) or builds the
// voice; one replaced goes back in `EngineEvent.converterRetired` to be freed there.
//
// Hand-overs keep the input position: the converter that takes over makes its next output at
// exactly the input position where the other's next output would have been, from the same
// input frames (`history` holds what zita is fed, the sinc's buffer what it holds), so nothing
// jumps; the two filters differ only by their own error (below −100 dB). Everything here is
// realtime code.

/// Installs an instance for a ratio the voice is about to hold; when four are waiting already,
/// the oldest goes back to the control thread.
@_noLocks
func offerConverter(_ state: UnsafeMutablePointer<RenderState>, _ voice: UnsafeMutablePointer<StemVoice>, _ z: ZitaResampler) {
  if let oldest = voice.pointee.offered.oldestIfFull {
    // A full event ring keeps the old one (the new one is then lost, as click samples are).
    guard state.pointee.events.push(.converterRetired(address: Int(bitPattern: oldest.pointer))) else { return }
    voice.pointee.offered.dropOldest()
  }
  voice.pointee.offered.insert(z)
}

/// The converters sent for ratios a voice is still to hold, oldest first: up to four, as a
/// script may queue several rate changes in groups for later frames.
public struct OfferedConverters: BitwiseCopyable {
  @usableFromInline var a: ZitaResampler? = nil
  @usableFromInline var b: ZitaResampler? = nil
  @usableFromInline var c: ZitaResampler? = nil
  @usableFromInline var d: ZitaResampler? = nil

  public init() {}

  public var count: Int { (a == nil ? 0 : 1) + (b == nil ? 0 : 1) + (c == nil ? 0 : 1) + (d == nil ? 0 : 1) }

  /// The oldest when all four are taken.
  @usableFromInline var oldestIfFull: ZitaResampler? { @_noLocks get { d == nil ? nil : a } }

  @_noLocks @usableFromInline
  mutating func dropOldest() {
    a = b
    b = c
    c = d
    d = nil
  }

  /// Adds one (there is room: `oldestIfFull` is nil).
  @_noLocks @usableFromInline
  mutating func insert(_ z: ZitaResampler) {
    if a == nil { a = z } else if b == nil { b = z } else if c == nil { c = z } else { d = z }
  }

  /// Takes out the one made for `ratio`, if any.
  @_noLocks @usableFromInline
  mutating func take(ratio: Double) -> ZitaResampler? {
    if let z = a, z.ratio == ratio { dropOldest(); return z }
    if let z = b, z.ratio == ratio { b = c; c = d; d = nil; return z }
    if let z = c, z.ratio == ratio { c = d; d = nil; return z }
    if let z = d, z.ratio == ratio { d = nil; return z }
    return nil
  }

  /// Whether one was made for `ratio`.
  @_noLocks @usableFromInline
  func has(ratio: Double) -> Bool {
    a?.ratio == ratio || b?.ratio == ratio || c?.ratio == ratio || d?.ratio == ratio
  }

  /// Frees them all (control thread: the voice is being freed).
  func freeAll() {
    a?.free()
    b?.free()
    c?.free()
    d?.free()
  }
}

/// Whether the voice's rate holds at a ratio `held` was made for (and the sinc can hand over).
@_noLocks @inline(__always)
func holdsHeldRatio(_ voice: UnsafeMutablePointer<StemVoice>) -> Bool {
  guard let z = voice.pointee.held, voice.pointee.stretch == nil, !voice.pointee.rateGlide.isActive else { return false }
  return z.ratio == voice.pointee.ratio
}

/// Before a pass: takes an offered instance into use once the rate holds at its ratio, and hands
/// the conversion between the sinc and `held` when the rate starts or stops holding there.
@_noLocks
func selectConverter(_ state: UnsafeMutablePointer<RenderState>, _ voice: UnsafeMutablePointer<StemVoice>) {
  guard !voice.pointee.bypass, voice.pointee.stretch == nil, case .sinc(let sinc) = voice.pointee.converter else { return }
  // Once the stream's end is in the ring, the converter in use drains it.
  if streamEndsHere(voice, extra: voice.pointee.audio.availableCount()) { return }
  // A glide that lands in this pass: the sinc ramps to its end first (a glide moves per pass).
  if voice.pointee.rateGlideLanding {
    voice.pointee.rateGlideLanding = false
    return
  }
  let ratio = voice.pointee.ratio
  if !voice.pointee.rateGlide.isActive, voice.pointee.held?.ratio != ratio, voice.pointee.offered.has(ratio: ratio) {
    if voice.pointee.heldActive && !handToSinc(voice, sinc) { return }
    if let old = voice.pointee.held {
      guard state.pointee.events.push(.converterRetired(address: Int(bitPattern: old.pointer))) else { return }
    }
    voice.pointee.held = voice.pointee.offered.take(ratio: ratio)
  }
  let holds = holdsHeldRatio(voice)
  if voice.pointee.discardFrames < 0 {
    // Leaving the bypass: zita starts from the bypass history (else the sinc is primed).
    if holds && engageFromHistory(voice) { voice.pointee.discardFrames = 0 }
    return
  }
  if voice.pointee.heldActive && !holds {
    _ = handToSinc(voice, sinc)
  } else if !voice.pointee.heldActive && holds {
    _ = handToHeld(voice, sinc)
  }
}

/// A start or seek (`syncVoice`): the converter forgets its input; zita when the rate holds at
/// its ratio, fed silence so that its output frame 0 is input frame 0 (as the sinc's is).
@_noLocks
func restartConverter(_ voice: UnsafeMutablePointer<StemVoice>) {
  voice.pointee.heldActive = false
  voice.pointee.heldPending = 0
  voice.pointee.heldFlushed = 0
  if holdsHeldRatio(voice), let z = voice.pointee.held {
    startHeld(voice, z, silence: z.halfLength &- 1, phase: 0)
    return
  }
  resetResampler(voice)
}

/// Resets `z`, feeds it `silence` frames of silence and sets its phase; it converts from now on.
@_noLocks
func startHeld(_ voice: UnsafeMutablePointer<StemVoice>, _ z: ZitaResampler, silence: Int, phase: Double) {
  RealtimeC.zitaReset(z.pointer)
  RealtimeC.zitaSetPhase(z.pointer, phase)
  if silence > 0 {
    // Fewer frames than its filter: it takes them all and makes no output.
    var sink = (Float(0), Float(0))
    withUnsafeMutablePointer(to: &sink) { p in
      p.withMemoryRebound(to: Float.self, capacity: 2) {
        _ = RealtimeC.zitaProcess(z.pointer, input: nil, inputFrames: silence, output: $0, outputFrames: 1)
      }
    }
  }
  voice.pointee.heldActive = true
  voice.pointee.heldFlushed = 0
}

/// Bypass → zita: the next output is the next ring frame; zita is fed the last frames played
/// (from the history; silence before the stream's start) and then the ring.
@_noLocks
func engageFromHistory(_ voice: UnsafeMutablePointer<StemVoice>) -> Bool {
  guard let z = voice.pointee.held else { return false }
  let behind = z.halfLength &- 1
  let have = Swift.min(behind, voice.pointee.historyFilled)
  startHeld(voice, z, silence: behind &- have, phase: 0)
  voice.pointee.heldPending = have
  return true
}

/// Sinc → zita at the sinc's read position: the history takes the sinc's buffered frames (and
/// what zita's filter needs behind the position), zita is fed them first, then the ring.
@_noLocks
func handToHeld(_ voice: UnsafeMutablePointer<StemVoice>, _ sinc: UnsafeMutablePointer<SincResampler>) -> Bool {
  guard let z = voice.pointee.held, let point = sinc.pointee.handOverPoint() else { return false }
  let first = point.centre &- (z.halfLength &- 1)  // zita's first frame, in buffer frames
  // Keep the sinc's own reach behind it too, for a hand back before zita has taken much.
  let from = Swift.min(first, point.centre &- sinc.pointee.keep)
  let frames = point.filled &- from
  guard frames <= voice.pointee.historyCapacity else { return false }
  sinc.pointee.copyInterleaved(from: from, to: point.filled, into: voice.pointee.history)
  voice.pointee.historyWrite = frames == voice.pointee.historyCapacity ? 0 : frames
  voice.pointee.historyFilled = frames
  startHeld(voice, z, silence: 0, phase: point.fraction)
  voice.pointee.heldPending = point.filled &- first
  return true
}

/// Zita → sinc at zita's next output position: the sinc's buffer takes the frames around it
/// from the history (silence before its start) and the sinc ramps on from zita's ratio.
@_noLocks
func handToSinc(_ voice: UnsafeMutablePointer<StemVoice>, _ sinc: UnsafeMutablePointer<SincResampler>) -> Bool {
  guard let z = voice.pointee.held else { return false }
  // Position of the next output relative to the end of what the history holds (≤ 0).
  let distance = RealtimeC.zitaInputDistance(z.pointer) + Double(voice.pointee.heldPending)
  guard distance >= 0 else { return false }
  let centreFromEnd = wholeFramesUp(distance)  // from the position's frame to the end
  let fraction = Double(centreFromEnd) - distance
  let keep = sinc.pointee.keep
  let frames = keep &+ centreFromEnd
  guard frames <= sinc.pointee.capacity else { return false }
  let available = Swift.min(frames, voice.pointee.historyFilled)
  sinc.pointee.beginTakeOver(zeros: frames &- available)
  // The history's last `available` frames, in at most two runs.
  let k = voice.pointee.historyCapacity, ch = voice.pointee.channels
  var done = 0
  while done < available {
    let start = (voice.pointee.historyWrite &- available &+ done &+ k) % k
    let run = Swift.min(available &- done, k &- start)
    sinc.pointee.append(voice.pointee.history + start &* ch, frames: run)
    done &+= run
  }
  sinc.pointee.finishTakeOver(position: Double(keep) + fraction, ratio: z.ratio)
  voice.pointee.heldActive = false
  voice.pointee.heldPending = 0
  return true
}

/// Pulls `count` frames through zita: first the frames a hand-over left in the history, then
/// the ring (remembered in the history); at the stream's end, silence until the output's
/// position passes the last input frame. Returns frames made.
@_noLocks
func pullHeld(_ voice: UnsafeMutablePointer<StemVoice>, into destination: UnsafeMutablePointer<Float>, count: Int) -> Int {
  guard let z = voice.pointee.held else { return 0 }
  let ch = voice.pointee.channels
  let k = voice.pointee.historyCapacity
  var produced = 0
  while produced < count && voice.pointee.heldPending > 0 {
    let start = (voice.pointee.historyWrite &- voice.pointee.heldPending &+ k) % k
    let run = Swift.min(voice.pointee.heldPending, k &- start)
    let r = RealtimeC.zitaProcess(
      z.pointer, input: voice.pointee.history + start &* ch, inputFrames: run, output: destination + produced &* ch,
      outputFrames: count &- produced)
    voice.pointee.heldPending &-= r.used
    produced &+= r.made
    if r.used == 0 && r.made == 0 { break }
  }
  var attempts = 0
  while produced < count && attempts < 8 {
    attempts &+= 1
    let segments = voice.pointee.audio.readableSegments()
    let inputFrames = segments.first.count / ch
    if inputFrames == 0 {
      if streamEndsHere(voice, extra: 0) {
        produced &+= flushHeld(voice, z, into: destination + produced &* ch, count: count &- produced)
      }
      break
    }
    guard let base = segments.first.baseAddress else { break }
    let r = RealtimeC.zitaProcess(
      z.pointer, input: base, inputFrames: inputFrames, output: destination + produced &* ch, outputFrames: count &- produced)
    remember(voice, base, frames: r.used)
    voice.pointee.audio.release(count: r.used &* ch)
    produced &+= r.made
    if r.used == 0 && r.made == 0 { break }
  }
  return produced
}

/// The stream has ended: feeds zita silence for the outputs whose position is before the end
/// of the input (as the sinc flushes its look-ahead); marks the voice drained after them.
@_noLocks
func flushHeld(
  _ voice: UnsafeMutablePointer<StemVoice>, _ z: ZitaResampler, into destination: UnsafeMutablePointer<Float>, count: Int
) -> Int {
  // The last input frame's end is `heldFlushed` frames before the next input; the next output
  // lies `inpdist` before it.
  let distance = RealtimeC.zitaInputDistance(z.pointer) - Double(voice.pointee.heldFlushed)
  let left = distance > 0 ? wholeFramesUp(distance * z.ratio) : 0
  let n = Swift.min(left, count)
  var made = 0
  if n > 0 {
    let r = RealtimeC.zitaProcess(z.pointer, input: nil, inputFrames: 4 &* z.halfLength &+ 2 &* n, output: destination, outputFrames: n)
    voice.pointee.heldFlushed &+= r.used
    made = r.made
  }
  if made == left { voice.pointee.drained = true }
  return made
}

/// ⌈x⌉ for x ≥ 0.
@_noLocks @inline(__always)
func wholeFramesUp(_ x: Double) -> Int {
  let n = Int(x)
  return Double(n) < x ? n &+ 1 : n
}
