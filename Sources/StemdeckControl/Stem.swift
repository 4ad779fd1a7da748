import CSampleRate
import Foundation
import StemdeckAudioFile
import StemdeckEngine
import StemdeckSession
import Synchronization

/// The control thread's record of one stem.
final class Stem {
  var settings: StemSettings
  /// The audio file's path as opened (absolute when loaded from a session).
  let path: String
  let info: SoundFileInfo
  let slot: Int32
  let shared: StemSharedRef
  var stream: DiskStream?
  var failureReported = false
  var badSamplesReported = false
  /// The audibility (mute and solo) last sent to the renderer (see `pushAllGains`).
  var sentAudible = true
  /// On the cue bus (Mixer+Cue.swift): a listening state, never saved.
  var cue = CueTap.off
  /// Rebuilt in place (`rebuildStems`): its slot belongs to the new stem, not the free list.
  var slotHandedOver = false
  /// Part of a song being left by a setlist change: still playing (or fading out) until the
  /// renderer hands its voice back.
  var leavingSong = false
  var sharedFreed = false
  /// Engine rate / the rate of the frames in its ring (1 when the disk converts them): its
  /// voice's ratio at rate 1.
  var ringScale = 1.0

  init(settings: StemSettings, path: String, info: SoundFileInfo, slot: Int32, shared: StemSharedRef) {
    self.settings = settings
    self.path = path
    self.info = info
    self.slot = slot
    self.shared = shared
  }

  func freeShared() {
    guard !sharedFreed else { return }
    sharedFreed = true
    shared.pointer.deinitialize(count: 1)
    shared.pointer.deallocate()
  }

  var channels: Int { min(info.channelCount, 2) }

  func ratio(engineRate: Double) -> Double {
    engineRate / (Double(info.sampleRate) * settings.rate)
  }

  /// Frames in one pass: the loop region, or the whole file.
  var loopFrames: Int { Self.loopFrames(settings, info) }

  static func loopFrames(_ settings: StemSettings, _ info: SoundFileInfo) -> Int {
    guard let start = settings.loopStart, let end = settings.loopEnd else { return info.frameCount }
    let a = min(max(0, Int((start * Double(info.sampleRate)).rounded())), info.frameCount - 1)
    let b = min(max(a + 1, Int((end * Double(info.sampleRate)).rounded())), info.frameCount)
    return b - a
  }

  /// Tells the disk reader the loop region and crossfade (frames in the file).
  func publishRegion(sampleRate fileRate: Double) {
    let s = shared.pointer
    if let start = settings.loopStart, let end = settings.loopEnd {
      s.pointee.regionStart.store(Int((start * fileRate).rounded()), ordering: .relaxed)
      s.pointee.regionEnd.store(Int((end * fileRate).rounded()), ordering: .relaxed)
    } else {
      s.pointee.regionStart.store(-1, ordering: .relaxed)
    }
    s.pointee.crossfadeFrames.store(Int((settings.crossfade * fileRate).rounded()), ordering: .relaxed)
    s.pointee.regionVersion.add(1, ordering: .releasing)
  }

  /// Seconds from transport 0 until this stem has played all its loops; nil when endless.
  var duration: Double? { Self.duration(settings, info) }

  /// The same for a stem not made yet (a song's stems checked before they are opened).
  static func duration(_ settings: StemSettings, _ info: SoundFileInfo) -> Double? {
    guard settings.loops >= 0 else { return nil }
    let plays = Double(settings.loops + 1)
    return settings.startOffset + plays * Double(loopFrames(settings, info)) / (Double(info.sampleRate) * settings.rate)
  }

  /// Post-fader meters have two channels (the stem after pan); pre-fader ones follow the file.
  func status(engineRate: Double, preFader: Bool) -> StemStatus {
    let s = shared.pointer
    let synced = s.pointee.synced.load(ordering: .relaxed)
    let start = synced ? s.pointee.heardStartFrame.load(ordering: .relaxed) : s.pointee.epochStartFrame.load(ordering: .relaxed)
    // As heard (the ring's read counter runs ahead of a resampled or stretched stem's output).
    let sourceFrame = synced ? start + Int(s.pointee.heardPosition().sourceFrames) : start
    return StemStatus(
      settings: settings, path: path, info: info,
      loopIndex: sourceFrame / max(1, loopFrames),
      positionInFile: (Double(sourceFrame % max(1, loopFrames)) + (settings.loopStart ?? 0) * Double(info.sampleRate))
        / Double(info.sampleRate),
      length: Double(info.frameCount) / Double(info.sampleRate),
      finished: s.pointee.finished.load(ordering: .relaxed),
      underruns: s.pointee.underruns.load(ordering: .relaxed),
      failed: s.pointee.readFailed.load(ordering: .relaxed),
      meter: MeterReading(cells: s.pointee.meters, channels: preFader ? channels : 2),
      gliding: s.pointee.glides.pointee.reading())
  }
}

extension ResamplerQuality {
  /// A converter for a stem whose file plays at `fileRate` on an engine at `engineRate`:
  /// stemdeck's own sinc (`SincResampler`, with exact rows for the ratio at rate 1) for `fast`
  /// (zita's converter for a held rate comes with it: `heldConverter`),
  /// libsamplerate for the others (its converter constants import as Int, docs/architecture.md).
  func makeConverter(channels: Int, engineRate: Double, fileRate: Int) throws(MixerError) -> RateConverter {
    let type: Int
    switch self {
    case .fast:
      // The ratio is rateScale / rate, and rate goes up to its range's top.
      let minimumRatio = engineRate / Double(fileRate) / SettingRange.rate.upperBound
      let rows = Int(exactly: engineRate).flatMap {
        SteadyRowsCache.shared.rows(output: $0, input: fileRate, reach: SincResampler.reach(minimumRatio: minimumRatio))
      }
      return .makeSinc(channels: channels, minimumRatio: minimumRatio, steadyRows: rows)
    case .linear: type = SRC_LINEAR
    case .medium: type = SRC_SINC_MEDIUM_QUALITY
    case .best: type = SRC_SINC_BEST_QUALITY
    }
    var errorCode: Int32 = 0
    guard let state = src_new(Int32(type), Int32(channels), &errorCode) else {
      throw MixerError("libsamplerate: \(String(cString: src_strerror(errorCode)))")
    }
    return .libsamplerate(state)
  }
}

extension ResamplerQuality {
  /// The disk side's file-rate conversion for a varispeed stem whose file rate is not the engine's
  /// (StemdeckAudioFile, DiskStream+Conversion.swift): its ring then carries engine-rate frames.
  /// What measured best for the quality (scripts/bench, case 1r): `fast` converts with
  /// stemdeck's sinc in steady mode where the ratio has steady rows, else with soxr HQ (cheaper
  /// and cleaner than the interpolated table); `medium` with soxr HQ, `best` with soxr VHQ (each
  /// cleaner than libsamplerate's matching sinc at a tenth to a thirtieth of its cost). `linear`
  /// and stretch stems: nil, the ring carries the file's frames and the voice converts them.
  func diskConversion(
    mode: RateMode, engineRate: Double, fileRate: Int, channels: Int, path: String
  ) throws(MixerError) -> FileRateConversion? {
    guard mode == .varispeed, let engine = Int(exactly: engineRate), engine != fileRate else { return nil }
    var veryHigh = false
    switch self {
    case .linear: return nil
    case .fast:
      // The converter is made as the voice's was (the same reach, so the same shared rows).
      let minimumRatio = engineRate / Double(fileRate) / SettingRange.rate.upperBound
      let reach = SincResampler.reach(minimumRatio: minimumRatio)
      if let rows = SteadyRowsCache.shared.rows(output: engine, input: fileRate, reach: reach) {
        return .sinc(rows: rows, minimumRatio: minimumRatio)
      }
    case .medium: break
    case .best: veryHigh = true
    }
    do throws(SoundFileError) {
      return .soxr(
        try SoxrConverter.make(path: path, fileRate: fileRate, engineRate: engineRate, channels: channels, veryHigh: veryHigh))
    } catch {
      throw MixerError(file: path, "\(error.reason)")
    }
  }
}

/// The mixer's stems by where they are in their life.
struct StemTable {
  /// Playing (or ready to), in session order.
  var stems: [Stem] = []
  /// Stems of a session whose audio file could not be opened: kept (and saved) as they were.
  var offline: [OfflineStem] = []
  /// Removed, replaced or left behind by a song change: waiting for the renderer to hand their
  /// voices back (see `pump`).
  var retiring: [Stem] = []
  /// Retired stems whose stream a disk worker may still be in the middle of (see `pump`).
  var detaching: [Stem] = []
  /// Voice slots no stem holds.
  var freeSlots: [Int32]

  init(freeSlots: [Int32]) { self.freeSlots = freeSlots }
}

/// Steady rows (SincResampler+Steady.swift) for every stem of one file rate on one engine rate:
/// built the first time a stem needs them (about 0.5 ms for 44.1 → 48 kHz) and kept for the
/// process, so a session of 256 such stems builds them once, not 256 times. Immutable once built;
/// a handful of ratios, at most 256 KB each.
final class SteadyRowsCache: @unchecked Sendable {
  static let shared = SteadyRowsCache()
  private let lock = NSLock()
  /// By [output rate, input rate, reach]; nil: that ratio has no steady rows.
  private var built: [[Int]: SteadyRows?] = [:]

  func rows(output: Int, input: Int, reach: Int) -> SteadyRows? {
    lock.withLock {
      let key = [output, input, reach]
      if let rows = built[key] { return rows }
      let rows = SteadyRows(output: output, input: input, reach: reach)
      built[key] = rows
      return rows
    }
  }
}

extension Mixer {
  /// zita's converter for a `fast` varispeed stem holding `rate` (nil: another quality or mode,
  /// ratio 1, or zita refused): the voice converts with it while the rate holds there
  /// (StemdeckEngine, HeldConverter.swift). Control thread: it allocates.
  func heldConverter(_ stem: Stem, quality: ResamplerQuality, rate: Double) -> ZitaResampler? {
    guard quality == .fast, stem.settings.mode == .varispeed, heldConverters.enabled else { return nil }
    let ratio = stem.ringScale / rate  // exactly the voice's ratio (StemVoice.ratio)
    guard ratio != 1, let z = ZitaResampler.make(ratio: ratio, channels: stem.channels) else { return nil }
    heldConverters.made += 1
    return z
  }

  /// Counts the zita converters a voice about to be freed holds (its `deinit` frees them).
  func countHeldConverters(of voice: UnsafeMutablePointer<StemVoice>) {
    heldConverters.freed += voice.pointee.heldConverterCount
  }

  /// Sends the stem's voice zita's converter for `rate` ahead of the command that sets it (never
  /// grouped: it changes nothing heard until the rate holds there). One that cannot be sent is freed.
  func offerHeldConverter(_ stem: Stem, rate: Double) {
    guard let z = heldConverter(stem, quality: quality, rate: rate) else { return }
    do { try send(.offerConverter(slot: stem.slot, z)) } catch { z.free() }
  }
}
