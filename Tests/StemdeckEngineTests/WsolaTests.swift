import Foundation
import Testing
@testable import StemdeckEngine

/// The `fast` stretcher itself (DSP/Wsola.swift), apart from the renderer (whose tests are in
/// StemdeckControlTests' MusicalStretchFastTests).
@Suite("WSOLA stretcher")
struct WsolaTests {
  /// Stereo input with different sides: a quiet tone on the left, loud noise on the right (so the
  /// right side leads the alignment search).
  static func input(frames: Int, seed: UInt32) -> [Float] {
    var state = seed
    return (0..<frames).flatMap { i -> [Float] in
      state = state &* 1_664_525 &+ 1_013_904_223
      let noise = Float(Int32(bitPattern: state)) / Float(Int32.max)
      return [Float(0.05 * sin(2 * Double.pi * 330 * Double(i) / 48000)), 0.8 * noise]
    }
  }

  /// Feeds `source` (interleaved stereo) and returns `frames` output frames at `tempo`.
  static func run(_ w: inout WsolaStretcher, _ source: [Float], frames: Int, tempo: Double) -> [Float] {
    var out = [Float](repeating: 0, count: frames * 2)
    var fed = 0, made = 0
    let total = source.count / 2
    while made < frames {
      made += out.withUnsafeMutableBufferPointer { w.retrieve(into: $0.baseAddress! + made * 2, frames: frames - made) }
      if made == frames || w.isFinished() { break }
      if !w.hop(tempo: tempo) {
        let n = min(w.room(), total - fed, 256)
        fed += source.withUnsafeBufferPointer {
          w.append(interleaved: $0.baseAddress! + fed * 2, frames: n, final: fed + n == total)
        }
      }
    }
    return out
  }

  @Test("after reset, a stereo stretcher makes what a new one makes: nothing of the old input on either side", arguments: [0.5, 0.8])
  func resetForgetsEveryChannel(tempo: Double) {
    let first = Self.input(frames: 48000, seed: 1)
    let second = Self.input(frames: 48000, seed: 2)
    var used = WsolaStretcher(channels: 2, sampleRate: 48000)
    _ = Self.run(&used, first, frames: 30000, tempo: tempo)
    used.reset()
    let again = Self.run(&used, second, frames: 20000, tempo: tempo)
    var fresh = WsolaStretcher(channels: 2, sampleRate: 48000)
    let want = Self.run(&fresh, second, frames: 20000, tempo: tempo)
    let differs = (0..<want.count).first { again[$0] != want[$0] }
    #expect(differs == nil, "differs from sample \(differs ?? -1) (\(differs.map { $0 % 2 == 0 ? "left" : "right" } ?? ""))")
  }
}
