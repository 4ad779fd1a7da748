import CSampleRate

/// One stem as the realtime renderer sees it: its audio ring (fed by the disk thread), its
/// resampler, its levels and glides, its smoothed gains and its meter accumulator.
///
/// - Thread: built on the control thread, moved to the realtime thread by pointer in
///   `EngineCommand.addVoice`, handed back through the return ring, destroyed on the control
///   thread (its `deinit` frees the converter, which frees memory).
public struct StemVoice: ~Copyable {
  public let shared: UnsafeMutablePointer<StemShared>
  @usableFromInline var audio: Consumer<Float>
  /// Channels in the ring: 1 or 2 (more are folded to 2 by the disk reader).
  public let channels: Int
  /// The varispeed and file-rate converter (owned: freed with the voice).
  @usableFromInline let converter: RateConverter
  /// engineRate / fileRate: output frames per file frame at rate 1 (the heard position counts
  /// file frames).
  @usableFromInline let rateScale: Double
  /// engineRate / the ring's rate: the converter's ratio at rate 1. `rateScale` when the ring
  /// carries the file's frames; 1 when the disk converted them to the engine's rate
  /// (StemdeckAudioFile, DiskStream+Conversion.swift), so that at rate 1 the voice is in bypass.
  @usableFromInline let ringScale: Double
  /// Varispeed rate (0.5…2).
  @usableFromInline var rate: Double
  /// Output rate / input rate (the ring's frames): ringScale / rate.
  @usableFromInline var ratio: Double
  /// True while the ratio has been exactly 1 since the last seek: frames are copied straight
  /// through and the converter is skipped (it costs most of a stem's CPU).
  @usableFromInline var bypass: Bool
  /// Its fader: volume, pan, width, audibility, their glides and gain ramps (as a bus's and an
  /// input's: StripLevels.swift).
  @usableFromInline var levels: StripLevels
  /// The rate glide (idle unless `isActive`); the levels' glides are in `levels`.
  @usableFromInline var rateGlide = Glide()
  @usableFromInline var meter: MeterAccumulator
  /// The stem's channel EQ, before its fader and pan (bypassed: costs nothing).
  @usableFromInline var eq: ChannelEQ
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
  /// The voice that takes this one's slot once this one has faded out (`EngineCommand.replaceVoice`):
  /// commands for the slot go to it from the moment it arrives.
  @usableFromInline var replacement: UnsafeMutablePointer<StemVoice>? = nil
  /// A setlist's next song, installed but not yet part of the transport (silent until the switch).
  @usableFromInline var pending = false
  /// The song change a pending voice belongs to.
  @usableFromInline var pendingSong = 0
  /// An old song's voice after a crossfade switch: off the transport, on the detached clock.
  @usableFromInline var detached = false
  /// The bus the stem feeds (an index in `BusBank`), or −1 for the master (Buses.swift).
  public var bus: Int32 = -1
  /// After a route change while playing: the destination it leaves, and the crossfade's
  /// progress (`routeFadeTotal` 0: none).
  @usableFromInline var previousBus: Int32 = -1
  @usableFromInline var routeFadeDone = 0
  @usableFromInline var routeFadeTotal = 0
  /// The song-change fade (idle unless `isActive`).
  @usableFromInline var songFade = SongFade()
  /// Source frames to skip after an underrun, so the stem comes back in step with the transport
  /// instead of staying late by the gap.
  @usableFromInline var skipFrames = 0
  /// False until the voice has rendered since it reached its stream's boundary; a voice that
  /// gets there after its join frame skips what it missed.
  @usableFromInline var startedSinceSync = false
  /// The last `historyFrames` source frames played in bypass (circular), used to prime the
  /// converter when a rate change leaves the bypass, so it starts with a full filter history
  /// instead of silence (which would click).
  @usableFromInline let history: UnsafeMutablePointer<Float>
  /// Where the priming output goes (it is all dropped). As large as the history, so the
  /// converter emits the history's output at ratio 1 during priming; only its look-ahead
  /// (a few dozen frames) is left to drop afterwards, where the ratio is still ≈ 1.
  @usableFromInline let primeOutput: UnsafeMutablePointer<Float>
  @usableFromInline var historyWrite = 0
  @usableFromInline var historyFilled = 0
  /// Output frames still to drop after priming (they replay the history).
  @usableFromInline var discardFrames = 0
  /// zita's VResampler for the ratio the stem holds (`fast` quality; Renderer/HeldConverter.swift),
  /// and those the control thread sent for ratios still to come (a rate in a group waiting for its
  /// frame, a glide's target). Freed with the voice, or handed back in `converterRetired`.
  @usableFromInline var held: ZitaResampler? = nil
  @usableFromInline var offered = OfferedConverters()
  /// True in the pass where a rate glide lands: the sinc ramps to its end across the pass, and
  /// zita takes over only from the next one.
  @usableFromInline var rateGlideLanding = false
  /// How many zita converters the voice holds (freed with it).
  public var heldConverterCount: Int { (held == nil ? 0 : 1) + offered.count }
  /// True while `held` converts (the sinc waits; it takes over again without a jump).
  @usableFromInline var heldActive = false
  /// Frames at the end of `history` that `held` has still to be fed (a hand-over's priming).
  @usableFromInline var heldPending = 0
  /// Frames of silence fed to `held` after the stream's end (its flush).
  @usableFromInline var heldFlushed = 0
  /// The time-stretcher of a stem in stretch mode (nil: varispeed through libsamplerate).
  @usableFromInline let stretch: UnsafeMutablePointer<StretchState>?
  /// File frames heard at the output since the boundary: output frames × rate / rateScale,
  /// counted as they are rendered (the ring's read counter runs ahead by what the converter or
  /// stretcher holds). Published with the transport frame it sounds at, for loop-seam times.
  @usableFromInline var heard: Double = 0
  /// Rubber Band pitch scale (stretch mode).
  @usableFromInline var pitchScale: Double
  /// Frames the bypass primes the converter with (the history's capacity is larger for a `fast`
  /// voice: it also holds what a hand-over from the sinc to zita takes over).
  public static let historyFrames = 1024
  @usableFromInline let historyCapacity: Int
  /// `historyFrames`, as a stored value the realtime code can read.
  @usableFromInline let primeFrames = StemVoice.historyFrames

  /// Builds a voice from a stem's levels. `ringScale`: engine rate / the ring's rate (nil:
  /// `rateScale`, the ring carries the file's frames).
  public init(
    shared: UnsafeMutablePointer<StemShared>, audio: consuming Consumer<Float>, channels: Int,
    converter: RateConverter, rateScale: Double, ringScale: Double? = nil, rate: Double, levels start: StripLevelChange,
    sampleRate: Double, epoch: Int, joinFrame: Int,
    stretch: UnsafeMutablePointer<StretchState>? = nil, pitchScale: Double = 1,
    eq: EQParameters = EQParameters(), held: ZitaResampler? = nil
  ) {
    self.held = held
    self.stretch = stretch
    self.pitchScale = pitchScale
    self.shared = shared
    self.audio = audio
    self.channels = channels
    self.converter = converter
    self.rateScale = rateScale
    self.ringScale = ringScale ?? rateScale
    self.rate = rate
    ratio = self.ringScale / rate
    bypass = ratio == 1
    levels = StripLevels(sampleRate: sampleRate, gain: 0)
    levels.channels = channels
    levels.set(start, jump: true)
    meter = MeterAccumulator(sampleRate: sampleRate)
    self.eq = ChannelEQ(sampleRate: sampleRate)
    self.eq.set(eq, immediate: true)
    self.epoch = epoch
    self.joinFrame = joinFrame
    if case .sinc(let sinc) = converter {
      historyCapacity = Swift.max(Self.historyFrames, sinc.pointee.capacity)  // a take-over's frames
    } else {
      historyCapacity = Self.historyFrames
    }
    history = .allocate(capacity: historyCapacity * channels)
    history.initialize(repeating: 0, count: historyCapacity * channels)
    primeOutput = .allocate(capacity: (Self.historyFrames + 64) * channels)
  }

  /// Builds a voice with fixed gains and ratio (tests of the renderer itself).
  public init(
    shared: UnsafeMutablePointer<StemShared>, audio: consuming Consumer<Float>, channels: Int,
    resampler: OpaquePointer, ratio: Double, gains: (Float, Float), sampleRate: Double,
    epoch: Int, joinFrame: Int
  ) {
    self.init(
      shared: shared, audio: audio, channels: channels, converter: .libsamplerate(resampler), rateScale: ratio, rate: 1,
      levels: StripLevelChange(audible: true), sampleRate: sampleRate, epoch: epoch, joinFrame: joinFrame)
    levels.gainLeft.jump(to: gains.0)
    levels.gainRight.jump(to: gains.1)
  }

  deinit {
    converter.free()
    held?.free()
    offered.freeAll()
    if let stretch {
      stretch.deinitialize(count: 1)
      stretch.deallocate()
    }
    history.deallocate()
    primeOutput.deallocate()
  }
}

/// A voice's rate converter: stemdeck's own sinc (the `fast` quality) or a libsamplerate state
/// (`linear`, `medium`, `best`). Both take input and make output like `src_process`.
///
/// - Thread: made and freed on the control thread; used only by the realtime thread in between.
public enum RateConverter {
  case sinc(UnsafeMutablePointer<SincResampler>)
  /// A `SRC_STATE*` from `src_new`.
  case libsamplerate(OpaquePointer)

  /// stemdeck's sinc for `channels` channels at ratios down to `minimumRatio`; `steadyRows`
  /// (shared) are the exact rows of the ratio a stem holds at rate 1. It keeps what zita's
  /// filter needs behind its read position, so that it can hand over to a `ZitaResampler`.
  public static func makeSinc(channels: Int, minimumRatio: Double, steadyRows: SteadyRows? = nil) -> RateConverter {
    let p = UnsafeMutablePointer<SincResampler>.allocate(capacity: 1)
    p.initialize(
      to: SincResampler(
        channels: channels, minimumRatio: minimumRatio, steadyRows: steadyRows,
        keepBehind: ZitaResampler.halfLength(minimumRatio: minimumRatio)))
    return .sinc(p)
  }

  /// Frees the converter (control thread: it frees memory).
  public func free() {
    switch self {
    case .sinc(let p):
      p.pointee.deallocate()
      p.deinitialize(count: 1)
      p.deallocate()
    case .libsamplerate(let state):
      src_delete(state)
    }
  }
}
