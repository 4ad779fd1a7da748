// The copies `runInserts` (Inserts.swift) makes between a strip and its stages' planar buffers,
// and between consecutive stages. Realtime code.
//
// A stem's samples are interleaved (stride 2: the right channel is the left pointer + 1), every
// other strip's planar (stride 1): each has its own loop with a constant stride, which the
// compiler vectorizes (a variable stride it did not: these copies were about a third of
// `runInserts`' cost in case 3i's perf profile, ~100 ns an insert a period).
//
// A stage's output is checked for NaN and infinity while it is copied on, not in a pass of its
// own (the pass was a quarter of `runInserts`' samples in case 3i's profile). The check: a
// float is NaN or ±infinity exactly when its exponent bits are all ones, and only then does
// adding 1 to its exponent field carry into bit 31. OR-ing that over the samples is and, add,
// or: integer work the compiler vectorizes with SSE2 alone (a float sum of x − x, which it may
// not reorder, ran one add at a time: a tenth of a 2-plugin render).

@_noLocks @inline(__always)
func finiteCarry(_ x: Float) -> UInt32 { (x.bitPattern & 0x7f80_0000) &+ 0x0080_0000 }

/// Copies the strip's `count` frames into `planes` (left, then right `planeStride` later).
@_noLocks @inline(__always)
func stripToPlanes(
  left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>?, stride: Int, planes: UnsafeMutablePointer<Float>,
  planeStride: Int, count n: Int
) {
  if stride == 1 {
    let r = planes + planeStride
    for i in 0..<n { planes[i] = left[i] }
    if let right { for i in 0..<n { r[i] = right[i] } }
  } else if stride == 2, let right, right == left + 1 {
    let r = planes + planeStride
    for i in 0..<n {
      planes[i] = left[2 &* i]
      r[i] = left[2 &* i &+ 1]
    }
  } else {
    for i in 0..<n { planes[i] = left[i &* stride] }
    if let right { for i in 0..<n { planes[planeStride &+ i] = right[i &* stride] } }
  }
}

/// Copies `planes` (left, then right `planeStride` later) back into the strip's `count` frames;
/// false when a sample was NaN or infinite (all are copied all the same).
@_noLocks @inline(__always)
func planesToStripCheckingFinite(
  planes: UnsafeMutablePointer<Float>, planeStride: Int, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>?,
  stride: Int, count n: Int
) -> Bool {
  var carry: UInt32 = 0
  if stride == 1 {
    let r = planes + planeStride
    for i in 0..<n {
      let x = planes[i]
      carry |= finiteCarry(x)
      left[i] = x
    }
    if let right {
      for i in 0..<n {
        let x = r[i]
        carry |= finiteCarry(x)
        right[i] = x
      }
    }
  } else if stride == 2, let right, right == left + 1 {
    let r = planes + planeStride
    for i in 0..<n {
      let a = planes[i], b = r[i]
      carry |= finiteCarry(a) | finiteCarry(b)
      left[2 &* i] = a
      left[2 &* i &+ 1] = b
    }
  } else {
    for i in 0..<n {
      let x = planes[i]
      carry |= finiteCarry(x)
      left[i &* stride] = x
    }
    if let right {
      for i in 0..<n {
        let x = planes[planeStride &+ i]
        carry |= finiteCarry(x)
        right[i &* stride] = x
      }
    }
  }
  return carry & 0x8000_0000 == 0
}

/// Copies `planes` planar channels of `count` frames from one stage's buffers to another's;
/// false when a sample was NaN or infinite (all are copied all the same).
@_noLocks @inline(__always)
func copyCheckingFinite(
  _ from: UnsafeMutablePointer<Float>, stride fromStride: Int, to: UnsafeMutablePointer<Float>, stride toStride: Int,
  planes: Int, count n: Int
) -> Bool {
  var carry: UInt32 = 0
  for c in 0..<planes {
    let src = from + c &* fromStride, dst = to + c &* toStride
    for i in 0..<n {
      let x = src[i]
      carry |= finiteCarry(x)
      dst[i] = x
    }
  }
  return carry & 0x8000_0000 == 0
}

/// Copies `planes` planar channels of `count` frames from one stage's buffers to another's.
@_noLocks @inline(__always)
func copyPlanes(
  _ from: UnsafeMutablePointer<Float>, stride fromStride: Int, to: UnsafeMutablePointer<Float>, stride toStride: Int,
  planes: Int, count n: Int
) {
  for c in 0..<planes {
    let src = from + c &* fromStride, dst = to + c &* toStride
    for i in 0..<n { dst[i] = src[i] }
  }
}

/// Writes silence over the strip's `count` frames.
@_noLocks
func silenceStrip(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>?, stride: Int, count n: Int) {
  for i in 0..<n { left[i &* stride] = 0 }
  if let right { for i in 0..<n { right[i &* stride] = 0 } }
}
