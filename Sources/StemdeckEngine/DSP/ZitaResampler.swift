import CZita

/// zita-resampler's `VResampler` set up for one ratio (through the CZita shim): the `fast`
/// quality's converter while a stem holds a varispeed rate. Set up for exactly that ratio and
/// never moved (`set_rratio` is not used), its output depends only on its input, never on how
/// the calls are sliced. The voice's sinc takes over for glides, and the bypass at ratio 1
/// (Renderer/HeldConverter.swift; docs/architecture.md, *Resampling*).
///
/// - Thread: `make` and `free` allocate and take zita's table mutex: the control thread only.
///   The voice runs it on the realtime thread through `RealtimeC`.
public struct ZitaResampler: BitwiseCopyable, @unchecked Sendable {
  /// The `stemdeck_zita *`.
  public let pointer: OpaquePointer
  /// Output rate / input rate it was set up for.
  public let ratio: Double
  public let channels: Int
  /// Input frames on each side of an output's position (half of `inpsize`).
  public let halfLength: Int

  /// zita's half filter length at ratios ≥ 1 (widened by 1 / ratio below 1): 32, as measured in
  /// scripts/bench case 1r.
  public static let halfLengthAtUnity = 32

  /// A VResampler for `ratio` and `channels` (control thread); nil when zita refuses it.
  public static func make(ratio: Double, channels: Int) -> ZitaResampler? {
    guard let z = stemdeck_zita_make(ratio, UInt32(channels), UInt32(halfLengthAtUnity)) else { return nil }
    return ZitaResampler(pointer: z, ratio: ratio, channels: channels, halfLength: Int(stemdeck_zita_inpsize(z)) / 2)
  }

  /// Frees it (control thread).
  public func free() { stemdeck_zita_free(pointer) }

  /// Frees the instance at `address` (`EngineEvent.converterRetired`; control thread).
  public static func free(address: Int) { stemdeck_zita_free(OpaquePointer(bitPattern: address)) }

  /// The most input frames zita keeps on each side of an output at ratios down to
  /// `minimumRatio` (what the sinc must keep behind its position for a hand-over).
  public static func halfLength(minimumRatio: Double) -> Int {
    let r = Swift.min(1, Swift.max(minimumRatio, 1.0 / 64))
    return (Int((Double(halfLengthAtUnity) / r).rounded(.up)) &+ 3) & ~3
  }

  /// Instances made and not yet freed in this process (tests count them).
  public static var liveCount: Int { stemdeck_zita_live_count() }
}
