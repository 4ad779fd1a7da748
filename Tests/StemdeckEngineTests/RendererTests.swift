import CSampleRate
import Foundation
import Testing
@testable import StemdeckEngine
import StemdeckRing

/// A renderer with voices whose rings the test fills itself (standing in for the disk thread).
final class TestEngine {
  var rings: EngineRings
  let state: UnsafeMutablePointer<RenderState>
  var shared: [UnsafeMutablePointer<StemShared>] = []
  var producers: [ProducerFloatBox] = []

  init(sampleRate: Double = 48000) {
    let m = RenderState.make(sampleRate: sampleRate, maxVoices: 16, maxBlockFrames: 512)
    state = m.state
    rings = m.rings
  }

  /// Adds a voice with `samples` (interleaved, `channels`) already in its ring, as the whole stream.
  @discardableResult
  func addVoice(samples: [Float], channels: Int, gains: (Float, Float), ratio: Double = 1, slot: Int32) -> Int {
    var error: Int32 = 0
    let src = src_new(Int32(SRC_SINC_FASTEST), Int32(channels), &error)!
    addStream(samples: samples, slot: slot) { s, audio in
      StemVoice(
        shared: s, audio: audio, channels: channels, resampler: src,
        ratio: ratio, gains: gains, sampleRate: 48000, epoch: 0, joinFrame: 0)
    }
    return shared.count - 1
  }

  /// A ring holding `samples` as the whole stream and its shared state, the voice `make` builds
  /// on them, added in `slot`.
  private func addStream(
    samples: [Float], slot: Int32, _ make: (UnsafeMutablePointer<StemShared>, consuming Consumer<Float>) -> StemVoice
  ) {
    let ends = SPSCRing.make(minimumCapacity: max(samples.count, 16), of: Float.self)
    var producer = ends.producer
    let s = UnsafeMutablePointer<StemShared>.allocate(capacity: 1)
    s.initialize(to: StemShared(loops: 0))
    _ = samples.withUnsafeBufferPointer { producer.write(from: $0) }
    s.pointee.boundary.store(0, ordering: .relaxed)
    s.pointee.publishedEpoch.store(0, ordering: .releasing)
    s.pointee.endCounter.store(samples.count, ordering: .relaxed)
    s.pointee.endEpoch.store(0, ordering: .releasing)
    let voice = UnsafeMutablePointer<StemVoice>.allocate(capacity: 1)
    voice.initialize(to: make(s, ends.consumer))
    _ = rings.commands.push(.addVoice(slot: slot, voice: voice))
    shared.append(s)
    producers.append(ProducerFloatBox(producer))
  }

  /// Adds a `fast` stretch voice (WSOLA) at `rate` with `samples` in its ring, in `slot`.
  func addStretchVoice(samples: [Float], channels: Int, rate: Double, slot: Int32) {
    let stretch = UnsafeMutablePointer<StretchState>.allocate(capacity: 1)
    stretch.initialize(
      to: StretchState(
        channels: channels, engineRate: 48000, fileRate: 48000, rate: rate, pitchSemitones: 0, slot: Int(slot), fast: true))
    addStream(samples: samples, slot: slot) { s, audio in
      StemVoice(
        shared: s, audio: audio, channels: channels, converter: .makeSinc(channels: channels, minimumRatio: 0.5),
        rateScale: 1, rate: rate, levels: StripLevelChange(audible: true), sampleRate: 48000, epoch: 0, joinFrame: 0,
        stretch: stretch)
    }
  }

  func send(_ c: EngineCommand) { let ok = rings.commands.push(c); #expect(ok) }

  /// Renders `frames` frames in blocks of `block`; returns (left, right).
  func render(frames: Int, block: Int = 256) -> ([Float], [Float]) {
    var l = [Float](repeating: 0, count: frames), r = l
    var done = 0
    while done < frames {
      let n = min(block, frames - done)
      l.withUnsafeMutableBufferPointer { lp in
        r.withUnsafeMutableBufferPointer { rp in
          renderBlock(state, left: lp.baseAddress! + done, right: rp.baseAddress! + done, frameCount: n)
        }
      }
      done += n
    }
    return (l, r)
  }

  deinit {
    RenderState.destroy(state) { v in
      v.deinitialize(count: 1); v.deallocate()
    }
    while let v = rings.retired.pop() { v.deinitialize(count: 1); v.deallocate() }
    for s in shared { s.deinitialize(count: 1); s.deallocate() }
  }
}

final class ProducerFloatBox {
  var p: Producer<Float>
  init(_ p: consuming Producer<Float>) { self.p = consume p }
}

func sine(frequency: Double, sampleRate: Double = 48000, frames: Int, amplitude: Double = 1) -> [Float] {
  (0..<frames).map { Float(amplitude * sin(2 * Double.pi * frequency * Double($0) / sampleRate)) }
}

@Suite struct DSPTests {
  @Test func meterReadsFullScaleSine() {
    var acc = MeterAccumulator(sampleRate: 48000)
    let cells = MeterCells.allocate()
    defer { cells.deinitialize(count: 1); cells.deallocate() }
    let s = sine(frequency: 1000, frames: 48000)
    s.withUnsafeBufferPointer { p in
      acc.accumulate(left: p.baseAddress!, right: p.baseAddress!, count: p.count, into: cells)
    }
    let peak = 20 * log10(Double(cells.pointee.left.peak))
    let rms = 20 * log10(Double(cells.pointee.left.rms))
    #expect(abs(peak - 0) < 0.05, "peak \(peak) dB")
    #expect(abs(rms - -3.0103) < 0.05, "rms \(rms) dB")
    #expect(cells.pointee.left.clips == 0)
  }

  @Test func meterFloorAndClips() {
    var acc = MeterAccumulator(sampleRate: 48000)
    let cells = MeterCells.allocate()
    defer { cells.deinitialize(count: 1); cells.deallocate() }
    let silence = [Float](repeating: 0, count: 4800)
    silence.withUnsafeBufferPointer { acc.accumulate(left: $0.baseAddress!, right: $0.baseAddress!, count: 4800, into: cells) }
    #expect(cells.pointee.left.peak == 0)
    let hot = [Float](repeating: 1.5, count: 4800)
    hot.withUnsafeBufferPointer { acc.accumulate(left: $0.baseAddress!, right: $0.baseAddress!, count: 4800, into: cells) }
    #expect(cells.pointee.left.clips == 4800)
    #expect(abs(20 * log10(Double(cells.pointee.left.hold)) - 3.52) < 0.01)
    cells.pointee.requestReset()
    silence.withUnsafeBufferPointer { acc.accumulate(left: $0.baseAddress!, right: $0.baseAddress!, count: 4800, into: cells) }
    #expect(cells.pointee.left.clips == 0, "reset must clear the clip count")
  }

  @Test func panLawIsConstantPowerForMonoAndBalanceForStereo() {
    let centre = PanLaw.gains(pan: 0, channelCount: 1)
    #expect(abs(20 * log10(centre.left) - -3.0103) < 0.001)
    #expect(abs(centre.left - centre.right) < 1e-12)
    for pan in stride(from: -1.0, through: 1.0, by: 0.1) {
      let g = PanLaw.gains(pan: pan, channelCount: 1)
      #expect(abs(g.left * g.left + g.right * g.right - 1) < 1e-9, "power at pan \(pan)")
    }
    let hardLeft = PanLaw.gains(pan: -1, channelCount: 1)
    #expect(abs(hardLeft.left - 1) < 1e-12 && abs(hardLeft.right) < 1e-12)
    #expect(PanLaw.gains(pan: 0, channelCount: 2) == (1, 1))
    let right = PanLaw.gains(pan: 0.5, channelCount: 2)
    #expect(right.left == 0.5 && right.right == 1)
  }
}

@Suite struct RendererTests {
  @Test func volumeJumpOnFullScaleDCIsSmoothed() {
    let engine = TestEngine()
    engine.addVoice(samples: [Float](repeating: 1, count: 48000), channels: 1, gains: (0, 0), slot: 0)
    engine.send(.play(fadeIn: false))
    _ = engine.render(frames: 1024)
    engine.send(.setGains(slot: 0, left: 1, right: 1))
    let (l, _) = engine.render(frames: 4096)
    var maxStep: Float = 0
    for i in 1..<l.count { maxStep = max(maxStep, abs(l[i] - l[i - 1])) }
    #expect(l.last == 1, "the ramp must reach the target")
    #expect(maxStep <= 1.0 / 400, "largest step \(maxStep) is a click")
    #expect(l[0] == 0, "no output before the change")
  }

  @Test func stereoVoicePassesThroughSampleExact() {
    let engine = TestEngine()
    let frames = 3000
    var interleaved: [Float] = []
    for i in 0..<frames { interleaved.append(Float(i) / 4096); interleaved.append(-Float(i) / 8192) }
    engine.addVoice(samples: interleaved, channels: 2, gains: (1, 1), slot: 3)
    engine.send(.play(fadeIn: false))
    let (l, r) = engine.render(frames: frames + 100, block: 128)
    for i in 0..<frames {
      #expect(l[i] == interleaved[2 * i] && r[i] == interleaved[2 * i + 1], "frame \(i)")
      if l[i] != interleaved[2 * i] { break }
    }
    #expect(l[frames] == 0, "silence after the end")
    let finished = engine.shared[0].pointee.finished.load(ordering: .relaxed)
    #expect(finished)
    var sawFinished = false
    while let e = engine.rings.events.pop() { if e == .stemFinished(slot: 3) { sawFinished = true } }
    #expect(sawFinished)
  }

  @Test func pauseFadesOutAndStopsTheTransport() {
    let engine = TestEngine()
    engine.addVoice(samples: [Float](repeating: 0.5, count: 48000), channels: 1, gains: (1, 1), slot: 0)
    engine.send(.play(fadeIn: false))
    _ = engine.render(frames: 2048)
    engine.send(.pause)
    let (l, _) = engine.render(frames: 2048)
    var maxStep: Float = 0
    for i in 1..<l.count { maxStep = max(maxStep, abs(l[i] - l[i - 1])) }
    #expect(maxStep < 0.01, "pause must fade, not cut (step \(maxStep))")
    #expect(l.last == 0)
    let frame = engine.state.pointee.status.pointee.transportFrame.load(ordering: .relaxed)
    _ = engine.render(frames: 1024)
    let after = engine.state.pointee.status.pointee.transportFrame.load(ordering: .relaxed)
    #expect(after == frame, "paused transport moved")
  }

  @Test func underrunPlaysSilenceAndIsCounted() {
    let engine = TestEngine()
    engine.addVoice(samples: [Float](repeating: 0.25, count: 1000), channels: 1, gains: (1, 1), slot: 0)
    engine.send(.play(fadeIn: false))
    let (first, _) = engine.render(frames: 256)
    // From now on the stream has no end mark: the disk is merely late, so running dry is an underrun.
    engine.shared[0].pointee.endEpoch.store(-1, ordering: .releasing)
    let (l, _) = engine.render(frames: 2000)
    let g: Float = 1  // the voice was built with gains (1, 1)
    #expect(first[0] == 0.25 * g)
    #expect(l[999 - 256] == 0.25 * g)
    #expect(l[1000 - 256] == 0)
    let underruns = engine.shared[0].pointee.underruns.load(ordering: .relaxed)
    #expect(underruns > 0)
    let finishedAfter = engine.shared[0].pointee.finished.load(ordering: .relaxed)
    #expect(!finishedAfter)
    var underrunEvents = 0
    while let e = engine.rings.events.pop() { if e == .underrun(slot: 0) { underrunEvents += 1 } }
    #expect(underrunEvents == 1, "one event per underrun episode, not one per block")
  }
}
