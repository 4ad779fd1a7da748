// The inner loops of the mix: a voice's source frames times steady gains, added to the bus, with
// the voice's meter (peak and sum of squares) taken in the same pass over the source.
//
// Written with SIMD4<Float> so that on the x86-64 baseline (SSE2) each vector operation is one
// instruction; the loop vectorizer cannot do this by itself, because the meter's sums are float
// reductions it may not reorder and `Swift.max` on floats carries NaN handling. Checked in the
// disassembly: the stereo loop is loads, two `shufps`, `mulps`/`addps` and `andps`/`maxps`, with
// no per-lane code. The bus samples are computed exactly as the scalar loops did (one multiply,
// one add per sample, in the same order), so the mix stays bit-identical.

/// |v| per lane (clears the sign bits: one `andps`).
@inline(__always)
func magnitudes(_ v: SIMD4<Float>) -> SIMD4<Float> {
  unsafeBitCast(unsafeBitCast(v, to: SIMD4<UInt32>.self) & SIMD4<UInt32>(repeating: 0x7FFF_FFFF), to: SIMD4<Float>.self)
}

/// The larger of `a` and `b` per lane, written as the select that lowers to one `maxps` (into
/// `b`'s register, so pass the running maximum as `b`).
@inline(__always)
func larger(_ a: SIMD4<Float>, _ b: SIMD4<Float>) -> SIMD4<Float> {
  a.replacing(with: b, where: a .< b)
}

/// Peak |x| and sum of x² of a block, per output channel (both the same for a mono source).
public struct BlockLevels: Sendable {
  public var peak: (Float, Float)
  public var sumSquares: (Float, Float)
}

/// Adds `frames` interleaved stereo frames of `source`, times `gainLeft` / `gainRight`, to `left`
/// and `right`. With `metering`, returns the source's per-channel peak and sum of squares
/// (pre-fader, as `scanBlock` measures them), taken from the same loads.
///
/// - Realtime: safe; arithmetic on caller-provided buffers. Proven by `@_noLocks`.
@_noLocks
func mixStereoSteady(
  _ source: UnsafePointer<Float>, frames: Int, gainLeft: Float, gainRight: Float,
  left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, metering: Bool
) -> BlockLevels {
  // Pointers advance and a count runs down: the loop control is then two instructions.
  var src = UnsafeRawPointer(source)
  var outL = UnsafeMutableRawPointer(left)
  var outR = UnsafeMutableRawPointer(right)
  let gl = SIMD4<Float>(repeating: gainLeft)
  let gr = SIMD4<Float>(repeating: gainRight)
  // Lanes of the interleaved loads alternate L, R.
  var peakA = SIMD4<Float>(), peakB = SIMD4<Float>()
  var sumA = SIMD4<Float>(), sumB = SIMD4<Float>()
  var quads = frames >> 2
  if metering {
    while quads > 0 {
      let a = src.loadUnaligned(as: SIMD4<Float>.self)
      let b = src.loadUnaligned(fromByteOffset: 16, as: SIMD4<Float>.self)
      let l = SIMD4<Float>(a[0], a[2], b[0], b[2])
      let r = SIMD4<Float>(a[1], a[3], b[1], b[3])
      outL.storeBytes(of: outL.loadUnaligned(as: SIMD4<Float>.self) + l * gl, as: SIMD4<Float>.self)
      outR.storeBytes(of: outR.loadUnaligned(as: SIMD4<Float>.self) + r * gr, as: SIMD4<Float>.self)
      peakA = larger(magnitudes(a), peakA)
      peakB = larger(magnitudes(b), peakB)
      sumA += a * a
      sumB += b * b
      src += 32; outL += 16; outR += 16
      quads &-= 1
    }
  } else {
    while quads > 0 {
      let a = src.loadUnaligned(as: SIMD4<Float>.self)
      let b = src.loadUnaligned(fromByteOffset: 16, as: SIMD4<Float>.self)
      let l = SIMD4<Float>(a[0], a[2], b[0], b[2])
      let r = SIMD4<Float>(a[1], a[3], b[1], b[3])
      outL.storeBytes(of: outL.loadUnaligned(as: SIMD4<Float>.self) + l * gl, as: SIMD4<Float>.self)
      outR.storeBytes(of: outR.loadUnaligned(as: SIMD4<Float>.self) + r * gr, as: SIMD4<Float>.self)
      src += 32; outL += 16; outR += 16
      quads &-= 1
    }
  }
  var i = frames & ~3
  let peak = larger(peakA, peakB)
  let sum = sumA + sumB
  var levels = BlockLevels(
    peak: (Swift.max(peak[0], peak[2]), Swift.max(peak[1], peak[3])),
    sumSquares: (sum[0] + sum[2], sum[1] + sum[3]))
  while i < frames {
    let xl = source[2 &* i], xr = source[2 &* i &+ 1]
    left[i] += xl * gainLeft
    right[i] += xr * gainRight
    levels.peak.0 = Swift.max(levels.peak.0, Swift.abs(xl)); levels.sumSquares.0 += xl * xl
    levels.peak.1 = Swift.max(levels.peak.1, Swift.abs(xr)); levels.sumSquares.1 += xr * xr
    i &+= 1
  }
  return levels
}

/// Stem export (Renderer/StemTaps.swift): `mixStereoSteady` that also stores each product in a
/// stem's tap (`tapLeft` / `tapRight`, written, not added to) from the same loads: the tap holds
/// the stem as the mix gets it, and the mix gets the same sums as when the tap was added to it
/// afterwards, without a pass to zero the tap and another to read it back.
///
/// - Realtime: safe; arithmetic on caller-provided buffers. Proven by `@_noLocks`.
@_noLocks
func tapStereoSteady(
  _ source: UnsafePointer<Float>, frames: Int, gainLeft: Float, gainRight: Float,
  tapLeft: UnsafeMutablePointer<Float>, tapRight: UnsafeMutablePointer<Float>,
  left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, metering: Bool
) -> BlockLevels {
  var src = UnsafeRawPointer(source)
  var outL = UnsafeMutableRawPointer(left)
  var outR = UnsafeMutableRawPointer(right)
  var tapL = UnsafeMutableRawPointer(tapLeft)
  var tapR = UnsafeMutableRawPointer(tapRight)
  let gl = SIMD4<Float>(repeating: gainLeft)
  let gr = SIMD4<Float>(repeating: gainRight)
  var peakA = SIMD4<Float>(), peakB = SIMD4<Float>()
  var sumA = SIMD4<Float>(), sumB = SIMD4<Float>()
  var quads = frames >> 2
  if metering {
    while quads > 0 {
      let a = src.loadUnaligned(as: SIMD4<Float>.self)
      let b = src.loadUnaligned(fromByteOffset: 16, as: SIMD4<Float>.self)
      let l = SIMD4<Float>(a[0], a[2], b[0], b[2]) * gl
      let r = SIMD4<Float>(a[1], a[3], b[1], b[3]) * gr
      tapL.storeBytes(of: l, as: SIMD4<Float>.self)
      tapR.storeBytes(of: r, as: SIMD4<Float>.self)
      outL.storeBytes(of: outL.loadUnaligned(as: SIMD4<Float>.self) + l, as: SIMD4<Float>.self)
      outR.storeBytes(of: outR.loadUnaligned(as: SIMD4<Float>.self) + r, as: SIMD4<Float>.self)
      peakA = larger(magnitudes(a), peakA)
      peakB = larger(magnitudes(b), peakB)
      sumA += a * a
      sumB += b * b
      src += 32; outL += 16; outR += 16; tapL += 16; tapR += 16
      quads &-= 1
    }
  } else {
    while quads > 0 {
      let a = src.loadUnaligned(as: SIMD4<Float>.self)
      let b = src.loadUnaligned(fromByteOffset: 16, as: SIMD4<Float>.self)
      let l = SIMD4<Float>(a[0], a[2], b[0], b[2]) * gl
      let r = SIMD4<Float>(a[1], a[3], b[1], b[3]) * gr
      tapL.storeBytes(of: l, as: SIMD4<Float>.self)
      tapR.storeBytes(of: r, as: SIMD4<Float>.self)
      outL.storeBytes(of: outL.loadUnaligned(as: SIMD4<Float>.self) + l, as: SIMD4<Float>.self)
      outR.storeBytes(of: outR.loadUnaligned(as: SIMD4<Float>.self) + r, as: SIMD4<Float>.self)
      src += 32; outL += 16; outR += 16; tapL += 16; tapR += 16
      quads &-= 1
    }
  }
  var i = frames & ~3
  let peak = larger(peakA, peakB)
  let sum = sumA + sumB
  var levels = BlockLevels(
    peak: (Swift.max(peak[0], peak[2]), Swift.max(peak[1], peak[3])),
    sumSquares: (sum[0] + sum[2], sum[1] + sum[3]))
  while i < frames {
    let xl = source[2 &* i], xr = source[2 &* i &+ 1]
    let l = xl * gainLeft, r = xr * gainRight
    tapLeft[i] = l
    tapRight[i] = r
    left[i] += l
    right[i] += r
    levels.peak.0 = Swift.max(levels.peak.0, Swift.abs(xl)); levels.sumSquares.0 += xl * xl
    levels.peak.1 = Swift.max(levels.peak.1, Swift.abs(xr)); levels.sumSquares.1 += xr * xr
    i &+= 1
  }
  return levels
}

/// Stem export with interleaved taps (`RenderState.tapStride` 2, Renderer/StemTaps.swift):
/// `tapStereoSteady` whose tap is interleaved stereo, `tap[2i]` left and `tap[2i + 1]` right, the
/// layout of the file: the stem writer's chunk is written here, in the mix's pass, and no later
/// pass reads planar taps to interleave them. The source is interleaved already, so each load
/// times (gainLeft, gainRight, gainLeft, gainRight) is two frames of the tap as they are stored;
/// the mix gets the same products, deinterleaved. Every sample is the one multiply of
/// `tapStereoSteady`, so tap and mix are bit for bit what it gives.
///
/// - Realtime: safe; arithmetic on caller-provided buffers. Proven by `@_noLocks`.
@_noLocks
func tapStereoSteadyInterleaved(
  _ source: UnsafePointer<Float>, frames: Int, gainLeft: Float, gainRight: Float,
  tap: UnsafeMutablePointer<Float>,
  left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, metering: Bool
) -> BlockLevels {
  var src = UnsafeRawPointer(source)
  var outL = UnsafeMutableRawPointer(left)
  var outR = UnsafeMutableRawPointer(right)
  var out = UnsafeMutableRawPointer(tap)
  let g = SIMD4<Float>(gainLeft, gainRight, gainLeft, gainRight)
  var peakA = SIMD4<Float>(), peakB = SIMD4<Float>()
  var sumA = SIMD4<Float>(), sumB = SIMD4<Float>()
  var quads = frames >> 2
  if metering {
    while quads > 0 {
      let a = src.loadUnaligned(as: SIMD4<Float>.self)
      let b = src.loadUnaligned(fromByteOffset: 16, as: SIMD4<Float>.self)
      let pa = a * g, pb = b * g
      out.storeBytes(of: pa, as: SIMD4<Float>.self)
      out.storeBytes(of: pb, toByteOffset: 16, as: SIMD4<Float>.self)
      let l = SIMD4<Float>(pa[0], pa[2], pb[0], pb[2])
      let r = SIMD4<Float>(pa[1], pa[3], pb[1], pb[3])
      outL.storeBytes(of: outL.loadUnaligned(as: SIMD4<Float>.self) + l, as: SIMD4<Float>.self)
      outR.storeBytes(of: outR.loadUnaligned(as: SIMD4<Float>.self) + r, as: SIMD4<Float>.self)
      peakA = larger(magnitudes(a), peakA)
      peakB = larger(magnitudes(b), peakB)
      sumA += a * a
      sumB += b * b
      src += 32; outL += 16; outR += 16; out += 32
      quads &-= 1
    }
  } else {
    while quads > 0 {
      let a = src.loadUnaligned(as: SIMD4<Float>.self)
      let b = src.loadUnaligned(fromByteOffset: 16, as: SIMD4<Float>.self)
      let pa = a * g, pb = b * g
      out.storeBytes(of: pa, as: SIMD4<Float>.self)
      out.storeBytes(of: pb, toByteOffset: 16, as: SIMD4<Float>.self)
      let l = SIMD4<Float>(pa[0], pa[2], pb[0], pb[2])
      let r = SIMD4<Float>(pa[1], pa[3], pb[1], pb[3])
      outL.storeBytes(of: outL.loadUnaligned(as: SIMD4<Float>.self) + l, as: SIMD4<Float>.self)
      outR.storeBytes(of: outR.loadUnaligned(as: SIMD4<Float>.self) + r, as: SIMD4<Float>.self)
      src += 32; outL += 16; outR += 16; out += 32
      quads &-= 1
    }
  }
  var i = frames & ~3
  let peak = larger(peakA, peakB)
  let sum = sumA + sumB
  var levels = BlockLevels(
    peak: (Swift.max(peak[0], peak[2]), Swift.max(peak[1], peak[3])),
    sumSquares: (sum[0] + sum[2], sum[1] + sum[3]))
  while i < frames {
    let xl = source[2 &* i], xr = source[2 &* i &+ 1]
    let l = xl * gainLeft, r = xr * gainRight
    tap[2 &* i] = l
    tap[2 &* i &+ 1] = r
    left[i] += l
    right[i] += r
    levels.peak.0 = Swift.max(levels.peak.0, Swift.abs(xl)); levels.sumSquares.0 += xl * xl
    levels.peak.1 = Swift.max(levels.peak.1, Swift.abs(xr)); levels.sumSquares.1 += xr * xr
    i &+= 1
  }
  return levels
}

/// Adds `frames` mono frames of `source`, times `gainLeft` / `gainRight`, to `left` and `right`;
/// with `metering`, returns the source's peak and sum of squares (the same for both channels).
///
/// - Realtime: safe; arithmetic on caller-provided buffers. Proven by `@_noLocks`.
@_noLocks
func mixMonoSteady(
  _ source: UnsafePointer<Float>, frames: Int, gainLeft: Float, gainRight: Float,
  left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, metering: Bool
) -> BlockLevels {
  var src = UnsafeRawPointer(source)
  var outL = UnsafeMutableRawPointer(left)
  var outR = UnsafeMutableRawPointer(right)
  let gl = SIMD4<Float>(repeating: gainLeft)
  let gr = SIMD4<Float>(repeating: gainRight)
  var peakV = SIMD4<Float>(), sumV = SIMD4<Float>()
  var quads = frames >> 2
  while quads > 0 {
    let x = src.loadUnaligned(as: SIMD4<Float>.self)
    outL.storeBytes(of: outL.loadUnaligned(as: SIMD4<Float>.self) + x * gl, as: SIMD4<Float>.self)
    outR.storeBytes(of: outR.loadUnaligned(as: SIMD4<Float>.self) + x * gr, as: SIMD4<Float>.self)
    if metering {
      peakV = larger(magnitudes(x), peakV)
      sumV += x * x
    }
    src += 16; outL += 16; outR += 16
    quads &-= 1
  }
  var i = frames & ~3
  var peak = Swift.max(Swift.max(peakV[0], peakV[1]), Swift.max(peakV[2], peakV[3]))
  var sum = (sumV[0] + sumV[1]) + (sumV[2] + sumV[3])
  while i < frames {
    let x = source[i]
    left[i] += x * gainLeft
    right[i] += x * gainRight
    peak = Swift.max(peak, Swift.abs(x)); sum += x * x
    i &+= 1
  }
  return BlockLevels(peak: (peak, peak), sumSquares: (sum, sum))
}

/// A voice's steady mix: `mixMonoSteady` for a mono source, `mixStereoSteady` for an
/// interleaved stereo one.
///
/// - Realtime: safe; arithmetic on caller-provided buffers. Proven by `@_noLocks`.
@_noLocks @inline(__always)
func mixSteady(
  _ source: UnsafePointer<Float>, mono: Bool, frames: Int, gainLeft: Float, gainRight: Float,
  left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, metering: Bool
) -> BlockLevels {
  mono
    ? mixMonoSteady(source, frames: frames, gainLeft: gainLeft, gainRight: gainRight, left: left, right: right, metering: metering)
    : mixStereoSteady(source, frames: frames, gainLeft: gainLeft, gainRight: gainRight, left: left, right: right, metering: metering)
}

/// Adds `count` frames of a mono or interleaved stereo `source`, times gains that ramp, to `left`
/// and `right` (every `stride`th sample): the left gain starts at `stepL.start`, moves by
/// `stepL.step` a frame for `stepL.rampFrames` frames and is `targets.left` from then on; the
/// right likewise. One multiply and one add per sample, so a tap and the mix given the same
/// ramp get the same products.
///
/// - Realtime: safe; arithmetic on caller-provided buffers. Proven by `@_noLocks`.
@_noLocks @inline(__always)
func mixRamping(
  _ source: UnsafePointer<Float>, mono: Bool, count: Int,
  stepL: (start: Float, step: Float, rampFrames: Int), stepR: (start: Float, step: Float, rampFrames: Int),
  targets: (left: Float, right: Float),
  left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, stride: Int = 1
) {
  var gl = stepL.start, gr = stepR.start
  for i in 0..<count {
    let xl = mono ? source[i] : source[2 &* i]
    let xr = mono ? xl : source[2 &* i &+ 1]
    left[i &* stride] += xl * gl
    right[i &* stride] += xr * gr
    gl = i &+ 1 < stepL.rampFrames ? gl + stepL.step : targets.left
    gr = i &+ 1 < stepR.rampFrames ? gr + stepR.step : targets.right
  }
}

/// Peak |x|, sum of x² and count of |x| > 1 over `count` contiguous samples (the master and
/// input meters). Peak and sum in SIMD lanes; overs are counted in a second pass only when the
/// peak is over full scale.
@_noLocks
func scanChannel(_ p: UnsafePointer<Float>, count: Int) -> (peak: Float, sumSquares: Float, clips: Int) {
  var raw = UnsafeRawPointer(p)
  var peakA = SIMD4<Float>(), peakB = SIMD4<Float>()
  var sumA = SIMD4<Float>(), sumB = SIMD4<Float>()
  var octets = count >> 3
  while octets > 0 {
    let a = raw.loadUnaligned(as: SIMD4<Float>.self)
    let b = raw.loadUnaligned(fromByteOffset: 16, as: SIMD4<Float>.self)
    peakA = larger(magnitudes(a), peakA)
    peakB = larger(magnitudes(b), peakB)
    sumA += a * a
    sumB += b * b
    raw += 32
    octets &-= 1
  }
  var i = count & ~7
  let peakV = larger(peakA, peakB)
  let sumV = sumA + sumB
  var peak = Swift.max(Swift.max(peakV[0], peakV[1]), Swift.max(peakV[2], peakV[3]))
  var sum = (sumV[0] + sumV[1]) + (sumV[2] + sumV[3])
  while i < count {
    let x = p[i]
    peak = Swift.max(peak, Swift.abs(x)); sum += x * x
    i &+= 1
  }
  var clips = 0
  if peak > 1 {
    for j in 0..<count where Swift.abs(p[j]) > 1 { clips &+= 1 }
  }
  return (peak, sum, clips)
}
