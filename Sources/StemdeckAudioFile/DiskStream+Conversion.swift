import CSoxr
import StemdeckEngine

// File-rate conversion on the disk side (issue 38). A stem whose file rate is not the engine's
// (44.1 kHz stems on a 48 kHz server) used to be converted by its voice, in the JACK process
// callback, at every rate; now its disk stream converts it once, at the fixed ratio engine rate /
// file rate, and its ring carries engine-rate frames. Its voice then mixes straight from the ring
// at rate 1, like a native-rate stem; a varispeed rate converts those engine-rate frames by
// 1 / rate. The converter is the one that measured best for the stem's quality (scripts/bench,
// case 1r): stemdeck's sinc in steady mode (exact rows shared per ratio) for `fast`; soxr for
// `medium` (HQ) and `best` (VHQ), and for a `fast` ratio without steady rows.
//
// What is converted is the looped stream exactly as it would be written unconverted (loop
// passes back to back, the loop region's crossfade mixed in, from the epoch's start frame), with
// the converter reset at each epoch's start, just as the voice reset its own converter on
// reaching the boundary. Both converters' output depends only on the input and the reset, never
// on how the input and output are sliced (steady mode by construction; soxr's stages take fixed
// blocks from its own FIFO: `DiskConversionTests` checks both), so the disk workers (live) and
// the offline renderer's synchronous fills write the same samples. Both are time-aligned (output
// frame 0 is input frame 0: soxr trims its filter's delay). Positions (seeks, loops, loop
// regions, jumps' cuts, the heard position) stay in file frames; only the ring's frames are
// engine frames. docs/architecture.md, *File-rate conversion on the disk side*.

/// How a disk stream converts its file's frames to the engine's rate.
public enum FileRateConversion {
  /// stemdeck's sinc in steady mode: the rows of engine rate / file rate, for a converter made
  /// for ratios down to `minimumRatio` (as the voice's own would be).
  case sinc(rows: SteadyRows, minimumRatio: Double)
  /// soxr at a fixed ratio, made for the stream's channels.
  case soxr(SoxrConverter)
}

/// A soxr converter (`soxr_t`) for one stream: made on the control thread, used and freed by the
/// stream (disk workers hold it one at a time, through the stream's claim).
public struct SoxrConverter: @unchecked Sendable {
  let handle: OpaquePointer
  /// Engine rate / file rate.
  let ratio: Double

  /// soxr HQ (20-bit) or, `veryHigh`, VHQ (28-bit), converting `channels` (1 or 2) interleaved
  /// channels from `fileRate` to `engineRate`. Throws soxr's own reason when it refuses (naming
  /// the file).
  public static func make(
    path: String, fileRate: Int, engineRate: Double, channels: Int, veryHigh: Bool
  ) throws(SoundFileError) -> SoxrConverter {
    var error: UnsafePointer<CChar>?
    guard
      let handle = stemdeck_soxr_create(Double(fileRate), engineRate, UInt32(channels), veryHigh ? 1 : 0, &error)
    else {
      let reason = error.map { String(cString: $0) } ?? "unknown error"
      throw SoundFileError(path: path, reason: "soxr cannot convert \(fileRate) Hz to \(Int(engineRate)) Hz: \(reason)")
    }
    return SoxrConverter(handle: handle, ratio: engineRate / Double(fileRate))
  }

  /// Frees a converter no stream took (a stem whose other parts failed).
  public func free() { soxr_delete(handle) }
}

/// The disk side's converter for one stream, with the file frames read but not yet converted.
///
/// - Thread: the worker holding the stream's claim (as the rest of `DiskStream`).
struct DiskConversion {
  /// Exactly one of the two converters.
  var sinc: SincResampler?
  let soxr: OpaquePointer?
  /// Engine rate / file rate (for the sinc, exactly as the steady rows hold it).
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

  init(_ conversion: FileRateConversion, channels: Int) {
    switch conversion {
    case .sinc(let rows, let minimumRatio):
      sinc = SincResampler(channels: channels, minimumRatio: minimumRatio, steadyRows: rows)
      soxr = nil
      ratio = rows.steadyRatio
    case .soxr(let converter):
      sinc = nil
      soxr = converter.handle
      ratio = converter.ratio
    }
    stage = .allocate(capacity: Self.stageFrames * channels)
  }

  func deallocate() {
    sinc?.deallocate()
    if let soxr { soxr_delete(soxr) }
    stage.deallocate()
  }

  /// Converts up to `inputFrames` of `input` (interleaved) into up to `outputFrames` of `output`;
  /// `endOfInput`: no more input comes, flush what the filter holds (`input` is then ignored).
  /// `error`: soxr refused (it does only on bad arguments or memory exhaustion), nothing made.
  mutating func convert(
    input: UnsafePointer<Float>, inputFrames: Int, output: UnsafeMutablePointer<Float>, outputFrames: Int,
    endOfInput: Bool
  ) -> (used: Int, generated: Int, error: String?) {
    if let soxr {
      var used = 0, generated = 0
      let error = soxr_process(
        soxr, endOfInput ? nil : UnsafeRawPointer(input), endOfInput ? 0 : inputFrames, &used,
        UnsafeMutableRawPointer(output), outputFrames, &generated)
      return (used, generated, error.map { "soxr: " + String(cString: $0) })
    }
    let result = sinc!.process(
      input: input, inputFrames: inputFrames, output: output, outputFrames: outputFrames, ratio: ratio,
      endOfInput: endOfInput)
    return (result.used, result.generated, nil)
  }

  /// Starts over (an epoch's start): the next file frame is output frame 0 again.
  mutating func restart() {
    sinc?.reset()
    if let soxr { _ = soxr_clear(soxr) }
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
      let result = conversion!.convert(
        input: conversion!.stage + start * ch, inputFrames: conversion!.stagedCount, output: out, outputFrames: room,
        endOfInput: false)
      if let error = result.error {
        fail(error)
        break
      }
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
      let result = conversion!.convert(
        input: conversion!.stage, inputFrames: 0, output: out, outputFrames: room, endOfInput: true)
      if let error = result.error {
        fail(error)
        return made
      }
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
