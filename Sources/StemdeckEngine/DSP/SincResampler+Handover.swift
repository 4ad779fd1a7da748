// The sinc's side of a hand-over to and from another converter at the same input position
// (zita's VResampler while a rate holds: Renderer/HeldConverter.swift). Realtime code.

extension SincResampler {
  /// Where the next output lies, in buffer frames (`centre` + `fraction`), and the frames the
  /// buffer holds (`filled`: the input taken so far ends there); nil once the input has ended.
  @_noLocks
  mutating func handOverPoint() -> (centre: Int, fraction: Double, filled: Int)? {
    if inSteady { leaveSteady() }
    guard inputEnd < 0 else { return nil }
    let centre = Int(position)
    return (centre, position - Double(centre), filled)
  }

  /// Copies buffer frames `from ..< to` interleaved into `out` (frames before the buffer's start
  /// are silence: the stream's start, or what a reset forgot).
  @_noLocks
  func copyInterleaved(from: Int, to: Int, into out: UnsafeMutablePointer<Float>) {
    var i = from
    var o = out
    while i < to {
      for c in 0..<channels { o[c] = i < 0 ? 0 : buffer[c &* capacity &+ i] }
      o += channels
      i &+= 1
    }
  }

  /// Starts taking over from another converter: forgets all input and holds `zeros` frames of
  /// silence; the caller then `append`s the input frames that follow and calls `finishTakeOver`.
  @_noLocks
  mutating func beginTakeOver(zeros: Int) {
    reset()  // the buffer is all zeros after it
    inSteady = false
    filled = zeros
  }

  /// The next output lies at buffer frame `position`; the ratio ramps from `ratio` (the
  /// converter it takes over from) to the next call's.
  @_noLocks
  mutating func finishTakeOver(position: Double, ratio: Double) {
    self.position = position
    lastRatio = ratio
  }
}
