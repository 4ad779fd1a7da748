import StemdeckEngine

// File-rate conversion on the disk side (issue 38). A stem whose file rate is not the engine's
// (44.1 kHz stems on a 48 kHz server) used to be converted by its voice, in the JACK process
// callback, at every rate; now its disk stream converts it once, at the fixed ratio engine rate /
// file rate, with stemdeck's sinc in steady mode (exact rows shared per ratio), and its ring
// carries engine-rate frames. Its voice then mixes straight from the ring at rate 1, like a
// native-rate stem; a varispeed rate converts those engine-rate frames by 1 / rate.
//
// What is converted is the looped stream exactly as it would be written unconverted (loop
// passes back to back, the loop region's crossfade mixed in, from the epoch's start frame), with
// the converter reset at each epoch's start, just as the voice reset its own converter on
// reaching the boundary. Steady mode's output depends only on the input and the reset, never on
// how the input is sliced, so the disk workers (live) and the offline renderer's synchronous
// fills write the same samples. Positions (seeks, loops, loop regions, jumps' cuts, the heard
// position) stay in file frames; only the ring's frames are engine frames.
// docs/architecture.md, *File-rate conversion on the disk side*.

/// The disk side's converter for one stream, with the file frames read but not yet converted.
///
/// - Thread: the worker holding the stream's claim (as the rest of `DiskStream`).
struct DiskConversion {
  var resampler: SincResampler
  /// Engine rate / file rate, exactly as the steady rows hold it.
  let ratio: Double
  /// File frames read and not yet taken by the converter (interleaved, `outputChannels`):
  /// `stagedCount` of them from `stagedStart`.
  let stage: UnsafeMutablePointer<Float>
  var stagedStart = 0
  var stagedCount = 0
  /// The stream's end: the file frames are all converted, but the converter's last frames (those
  /// whose filter reaches past the end: about 20 file frames' worth) wait until the voice is
  /// near them (`awaitingTail`: a quarter of the ring left to play), so that a loop count raised before then continues the stream
  /// seamlessly; then they are flushed (`flushing`, over as many calls as the ring needs) and the
  /// end is marked. After that the end is final for the epoch (`endIsFinal`): frames already
  /// flushed with silence after them cannot be taken back.
  var awaitingTail = false
  var flushing = false
  var endIsFinal = false

  /// File frames staged at a time.
  static let stageFrames = 4096

  init(rows: SteadyRows, minimumRatio: Double, channels: Int) {
    resampler = SincResampler(channels: channels, minimumRatio: minimumRatio, steadyRows: rows)
    ratio = rows.steadyRatio
    stage = .allocate(capacity: Self.stageFrames * channels)
  }

  func deallocate() {
    resampler.deallocate()
    stage.deallocate()
  }

  /// Starts over (an epoch's start): the next file frame is output frame 0 again.
  mutating func restart() {
    resampler.reset()
    stagedStart = 0
    stagedCount = 0
    awaitingTail = false
    flushing = false
    endIsFinal = false
  }
}

extension DiskStream {
  /// Whether this stream's ring carries engine-rate frames converted here.
  public var convertsFileRate: Bool { conversion != nil }

  /// Converts the staged file frames into the ring as far as it has room; returns the ring frames
  /// written. Frames still staged afterwards (`stagedCount`) wait for room.
  func drainStage() -> Int {
    guard conversion != nil else { return 0 }
    let ch = outputChannels
    var made = 0
    while conversion!.stagedCount > 0 {
      let segments = producer.writableSegments()
      let room = segments.first.count / ch
      guard room > 0, let out = segments.first.baseAddress else { break }
      let start = conversion!.stagedStart
      let result = conversion!.resampler.process(
        input: conversion!.stage + start * ch, inputFrames: conversion!.stagedCount, output: out, outputFrames: room,
        ratio: conversion!.ratio, endOfInput: false)
      producer.commit(count: result.generated * ch)
      conversion!.stagedStart += result.used
      conversion!.stagedCount -= result.used
      made += result.generated
      if result.used == 0 && result.generated == 0 { break }
    }
    return made
  }

  /// The end of a converted stream's last pass: every file frame is read; the tail waits.
  func reachedConvertedEnd() {
    conversion?.awaitingTail = true
  }

  /// Services the end of a converted stream (`DiskConversion.awaitingTail`): continues the
  /// stream if the loop count was raised, or flushes the converter's last frames and marks the
  /// end once the voice has at most a quarter of the ring left to play (`force`: at once, as far as the ring
  /// has room, before a jump's new epoch). Returns the ring frames written.
  func serviceConvertedEnd(force: Bool = false) -> Int {
    guard let state = conversion, state.awaitingTail || state.flushing else { return 0 }
    let s = shared.pointer
    var made = drainStage()
    if conversion!.stagedCount > 0 && !force { return made }
    if !state.flushing && !force {
      let loops = s.pointee.loops.load(ordering: .relaxed)
      let passes = sourceFrame / max(1, loopEnd - loopStart)
      if loops < 0 || loops >= passes {
        conversion!.awaitingTail = false  // raised in time: the stream goes on, seamlessly
        return made
      }
      // The voice publishes its read counter; before it has reached this epoch's boundary the
      // counter is an older epoch's (smaller), so count from the boundary at least.
      let read = max(s.pointee.readCounter.load(ordering: .relaxed), s.pointee.boundary.load(ordering: .relaxed))
      if producer.writeCounter - read > producer.capacity / 4 { return made }
    }
    conversion!.awaitingTail = false
    conversion!.flushing = true
    let ch = outputChannels
    while true {
      let segments = producer.writableSegments()
      let room = segments.first.count / ch
      guard room > 0, let out = segments.first.baseAddress else {
        if force { break }
        return made
      }
      let result = conversion!.resampler.process(
        input: conversion!.stage, inputFrames: 0, output: out, outputFrames: room, ratio: conversion!.ratio, endOfInput: true)
      producer.commit(count: result.generated * ch)
      made += result.generated
      if result.generated < room { break }  // drained
    }
    conversion!.flushing = false
    conversion!.endIsFinal = true
    markEnd()
    return made
  }
}
