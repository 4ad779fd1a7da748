import CSampleRate

/// One stem as the realtime renderer sees it: its audio ring (fed by the disk thread), its
/// resampler, its smoothed gains and its meter accumulator.
///
/// - Thread: built on the control thread, moved to the realtime thread by pointer in
///   `EngineCommand.addVoice`, handed back through the return ring, destroyed on the control
///   thread (its `deinit` frees the resampler with `src_delete`, which allocates/frees).
public struct StemVoice: ~Copyable {
  public let shared: UnsafeMutablePointer<StemShared>
  @usableFromInline var audio: Consumer<Float>
  /// Channels in the ring: 1 or 2 (more are folded to 2 by the disk reader).
  public let channels: Int
  /// libsamplerate state (`SRC_STATE*`), created with `src_new` for `channels` channels.
  @usableFromInline let resampler: OpaquePointer
  /// Output rate / input rate: engineRate / (fileRate × varispeed).
  @usableFromInline var ratio: Double
  /// True while the ratio has been exactly 1 since the last seek: frames are copied straight
  /// through and the converter is skipped (it costs most of a stem's CPU).
  @usableFromInline var bypass: Bool
  @usableFromInline var gainLeft: GainRamp
  @usableFromInline var gainRight: GainRamp
  @usableFromInline var meter: MeterAccumulator
  /// The seek epoch this voice plays; data before the stream's boundary for it is discarded.
  @usableFromInline var epoch: Int
  @usableFromInline var synced = false
  /// Transport frame at which this voice's first frame sounds (sample-aligned joining).
  @usableFromInline var joinFrame: Int
  /// The join frame the next seek applies (Int.min: the seek position itself).
  @usableFromInline var joinFrameAfterSeek = Int.min
  @usableFromInline var finished = false
  @usableFromInline var drained = false
  @usableFromInline var underrunning = false
  @usableFromInline var removing = false

  /// Builds a voice. `gains` are the initial (left, right) gains; `rampFrames` the smoothing time.
  public init(
    shared: UnsafeMutablePointer<StemShared>, audio: consuming Consumer<Float>, channels: Int,
    resampler: OpaquePointer, ratio: Double, gains: (Float, Float), sampleRate: Double,
    epoch: Int, joinFrame: Int
  ) {
    self.shared = shared
    self.audio = audio
    self.channels = channels
    self.resampler = resampler
    self.ratio = ratio
    self.bypass = ratio == 1
    let rampFrames = Swift.max(1, Int(sampleRate * 0.010))
    self.gainLeft = GainRamp(gain: gains.0, length: rampFrames)
    self.gainRight = GainRamp(gain: gains.1, length: rampFrames)
    self.meter = MeterAccumulator(sampleRate: sampleRate)
    self.epoch = epoch
    self.joinFrame = joinFrame
  }

  deinit {
    src_delete(resampler)
  }
}
