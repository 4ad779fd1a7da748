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
    w.setTempo(tempo)
    while made < frames {
      if w.update() {
        made += out.withUnsafeMutableBufferPointer { w.retrieve(into: $0.baseAddress! + made * 2, frames: frames - made) }
        if made == frames || w.isFinished() { break }
      } else {
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

/// Tempo changes between pulls (issue 25: heard in the next period, deterministic, no click).
extension WsolaTests {
  enum TempoChange {
    case hold(Double)
    case glide(to: Double, frames: Int)
  }

  /// Feeds `source` (interleaved, `channels` a frame) and pulls `frames` output frames in blocks
  /// of `block`, a block also ending at each change's output frame (counted from this call's
  /// first), where the change is given. Returns the output and the mapped input position at the
  /// start of every pull. `fed`: the source frames given so far (a stretcher played on).
  /// `lead`: after every pull the next hop is made ahead (`prepareAhead`) once at most `lead`
  /// frames of the last one are left.
  static func play(
    _ w: inout WsolaStretcher, _ source: [Float], channels: Int, frames: Int, block: Int,
    changes: [(at: Int, change: TempoChange)] = [], lead: Int? = nil
  ) -> (out: [Float], mapped: [Int: Double]) {
    var fed = 0
    return play(&w, source, channels: channels, frames: frames, block: block, changes: changes, lead: lead, fed: &fed)
  }

  static func play(
    _ w: inout WsolaStretcher, _ source: [Float], channels: Int, frames: Int, block: Int,
    changes: [(at: Int, change: TempoChange)] = [], lead: Int? = nil, fed: inout Int
  ) -> (out: [Float], mapped: [Int: Double]) {
    var out = [Float](repeating: 0, count: frames * channels)
    var mapped: [Int: Double] = [:]
    var made = 0
    let total = source.count / channels
    var waiting = changes.sorted { $0.at < $1.at }[...]
    while made < frames {
      while let next = waiting.first, next.at <= made {
        switch next.change {
        case .hold(let tempo): w.setTempo(tempo)
        case .glide(let target, let length):
          w.glideTempo(Glide(from: w.tempo(at: w.outputPosition), to: target, frames: length, curve: .linear))
        }
        waiting.removeFirst()
      }
      mapped[made] = w.inputPosition
      let end = min(frames, made + block, waiting.first?.at ?? Int.max)
      while made < end {
        if w.update() {
          made += out.withUnsafeMutableBufferPointer { w.retrieve(into: $0.baseAddress! + made * channels, frames: end - made) }
          if made < end && w.isFinished() { return (out, mapped) }
        } else {
          let n = min(w.room(), total - fed, 256)
          fed += source.withUnsafeBufferPointer {
            w.append(interleaved: $0.baseAddress! + fed * channels, frames: n, final: fed + n == total)
          }
        }
      }
      if let lead { prepare(&w, source, channels: channels, lead: lead, fed: &fed) }
    }
    return (out, mapped)
  }

  /// `prepareAhead(lead:)`, fed from `source` until it has the input it needs.
  static func prepare(_ w: inout WsolaStretcher, _ source: [Float], channels: Int, lead: Int, fed: inout Int) {
    let total = source.count / channels
    while !w.prepareAhead(lead: lead) && fed < total {
      let n = min(w.room(), total - fed, 256)
      fed += source.withUnsafeBufferPointer {
        w.append(interleaved: $0.baseAddress! + fed * channels, frames: n, final: fed + n == total)
      }
    }
  }

  static func sine(frames: Int) -> [Float] {
    (0..<frames).map { Float(0.5 * sin(2 * Double.pi * 440 * Double($0) / 48000)) }
  }

  /// A tempo given between two 128-frame pulls, in the middle of a 512-frame hop (128, 256 or 384
  /// frames into it): from the very next pull on, the input position the output maps to advances
  /// at the new tempo (before: at the old one), the rest of the hop is re-made with its frame
  /// taken from around the new centre, and what was output before the change is untouched.
  @Test(
    "a tempo change between two 128-frame pulls is followed from the next pull on (mid-hop, up and down)",
    arguments: [(1.0, 0.6, 22 * 128), (0.8, 1.5, 21 * 128), (1.2, 0.7, 23 * 128), (0.5, 2.0, 41 * 128)])
  func tempoChangeFollowedNextPull(from: Double, to: Double, at change: Int) {
    let source = Self.input(frames: 96000, seed: 3)
    var changed = WsolaStretcher(channels: 2, sampleRate: 48000, tempo: from)
    var fed = 0
    // Played up to the change, then checked right after the pull that follows it.
    let (changedFrames, mapped) = Self.play(&changed, source, channels: 2, frames: change, block: 128, fed: &fed)
    #expect(change % changed.hop != 0, "the change must fall inside a hop")
    changed.setTempo(to)
    let (after, mappedAfter) = Self.play(&changed, source, channels: 2, frames: 128, block: 128, fed: &fed)
    // The frame re-made for the rest of the hop lies around the new centre: the hop's end maps to
    // where the new tempo takes the input from the change on.
    let hopEnd = (change / changed.hop + 1) * changed.hop
    let here = mappedAfter[0]!
    let centre = here + Double(hopEnd - change) * to
    let nominal = Int(centre) - changed.frame / 2
    #expect(abs(changed.center - centre) < 1e-9, "the hop's centre \(changed.center), want \(centre)")
    #expect(
      abs(changed.previousStart - nominal) <= changed.tolerance,
      "the re-made frame starts at \(changed.previousStart), not within the search of \(nominal)")
    let (_, rest) = Self.play(&changed, source, channels: 2, frames: 8 * 128, block: 128, fed: &fed)
    // Every pull from the change on advances the mapped input by 128 × the new tempo…
    var positions = [here]
    for q in stride(from: 0, to: 8 * 128, by: 128) { positions.append(rest[q]!) }
    for i in 1..<positions.count {
      let advance = positions[i] - positions[i - 1]
      #expect(abs(advance - 128 * to) < 1e-6, "pull \(i) after the change: the input advanced \(advance), want \(128 * to)")
    }
    // …and every pull before it by 128 × the old tempo.
    let before = mapped[change - 128]!
    #expect(abs(here - before - 128 * from) < 1e-6, "the pull before the change advanced \(here - before)")
    // Before the change the output is what an unchanged stretcher made.
    var held = WsolaStretcher(channels: 2, sampleRate: 48000, tempo: from)
    let (reference, _) = Self.play(&held, source, channels: 2, frames: change + 128, block: 128)
    #expect(Array(reference[0..<(change * 2)]) == changedFrames, "the output before the change moved")
    #expect(after.count == 256 && rms(after[...]) > 0.1, "silent after the change")
  }

  /// The splice crossfades from the old frame's contribution into the new one's: on a 440 Hz sine
  /// the largest sample-to-sample step around it stays within the steady output's (a sine of
  /// amplitude 0.5 moves at most 0.0288 a sample).
  @Test(
    "a tempo change in mid-hop has no click: around the splice a sine's largest step is the steady output's",
    arguments: [
      (1.0, 0.6, 22 * 128), (0.6, 1.5, 29 * 128), (1.5, 0.5, 33 * 128), (0.8, 2.0, 45 * 64), (2.0, 0.8, 21 * 128),
      (0.5, 1.8, 77 * 64)
    ])
  func tempoChangeNoClick(from: Double, to: Double, at change: Int) {
    let source = Self.sine(frames: 5 * 48000)
    var w = WsolaStretcher(channels: 1, sampleRate: 48000, tempo: from)
    let block = change % 128 == 0 ? 128 : 64
    let (out, _) = Self.play(&w, source, channels: 1, frames: change + 12000, block: block, changes: [(change, .hold(to))])
    // The steady output at either tempo, away from the change.
    let steady = max(maxStep(out, in: 1024..<(change - 1024)), maxStep(out, in: (change + 4096)..<(change + 11999)))
    let splice = maxStep(out, in: (change - 256)..<(change + 2048))
    #expect(steady < 0.03, "the steady output steps \(steady)")
    #expect(splice <= steady * 1.05, "a step of \(splice) around the splice at \(change) (steady: \(steady))")
    // The step hides a small jump on a sine's steep part; its curvature (the second difference)
    // shows one anywhere: a sine's is at most 0.0017, a jump of 0.01 makes it 0.01 (a splice
    // without the crossfade fails here).
    let steadyBend = max(maxBend(out, in: 1024..<(change - 1024)), maxBend(out, in: (change + 4096)..<(change + 11998)))
    let spliceBend = maxBend(out, in: (change - 256)..<(change + 2048))
    #expect(spliceBend <= steadyBend * 1.1, "a bend of \(spliceBend) around the splice at \(change) (steady: \(steadyBend))")
    // The splice did replace the frame in the rest of this hop (not a vacuous pass).
    var held = WsolaStretcher(channels: 1, sampleRate: 48000, tempo: from)
    let (reference, _) = Self.play(&held, source, channels: 1, frames: change + 512, block: block)
    let hopEnd = (change / w.hop + 1) * w.hop
    let moved = (change..<hopEnd).map { abs(Double(out[$0]) - Double(reference[$0])) }.max() ?? 0
    #expect(moved > 1e-3, "the rest of the hop after the change is the old frame's (largest difference \(moved))")
    // The level holds through it (no dip of out-of-phase frames): rms of a sine of amplitude 0.5 is 0.354.
    for start in stride(from: change - 256, to: change + 2048, by: 128) {
      let level = rms(out[start..<(start + 256)])
      #expect(level > 0.33, "rms \(level) at \(start)")
    }
  }

  /// Output depends only on the input and on the tempo given at each output frame: changes and a
  /// glide at fixed output frames give the same samples however the output is cut into pulls.
  @Test("tempo changes and a glide at fixed output frames: bit-identical in pulls of 64, 128, 1000 and 4096 frames")
  func tempoChangesDeterministic() {
    let source = Self.input(frames: 4 * 48000, seed: 5)
    let changes: [(at: Int, change: TempoChange)] = [
      (2688, .hold(0.7)), (4992, .hold(1.3)), (5120, .hold(1.25)), (9000, .glide(to: 0.6, frames: 20000)),
      (20000, .hold(0.9)), (40000, .glide(to: 1.6, frames: 30000))
    ]
    func render(_ block: Int) -> [Float] {
      var w = WsolaStretcher(channels: 2, sampleRate: 48000, tempo: 1)
      return Self.play(&w, source, channels: 2, frames: 80000, block: block, changes: changes).out
    }
    let a = render(64)
    var w = WsolaStretcher(channels: 2, sampleRate: 48000, tempo: 1)
    let unchanged = Self.play(&w, source, channels: 2, frames: 80000, block: 128).out
    #expect(a != unchanged, "the changes changed nothing")
    for block in [128, 1000, 4096] {
      let b = render(block)
      let differs = (0..<a.count).first { a[$0] != b[$0] }
      #expect(differs == nil, "pulls of \(block) differ from pulls of 64 from sample \(differs ?? -1)")
    }
  }

  /// A glide is a tempo for each output frame: the mapped input at each hop's end is the glide's
  /// integral from where it started (exact for a linear glide), then the target's.
  @Test("a tempo glide 1 → 0.5 over 9600 frames started mid-hop: each hop's centre is the glide's integral")
  func glideFollowedFrameByFrame() {
    let source = Self.input(frames: 4 * 48000, seed: 7)
    var w = WsolaStretcher(channels: 2, sampleRate: 48000, tempo: 1)
    let start = 10 * 512 + 320
    let length = 9600
    let (_, mapped) = Self.play(
      &w, source, channels: 2, frames: 40000, block: 64, changes: [(start, .glide(to: 0.5, frames: length))])
    let origin = mapped[start]!
    #expect(abs(origin - Double(start)) < 1e-9, "at tempo 1 output frame \(start) maps to input \(origin)")
    for q in stride(from: 11 * 512, to: 40000, by: 512) {
      let t = Double(min(q - start, length))
      var want = origin + t - 0.25 * t * t / Double(length)
      if q - start > length { want += Double(q - start - length) * 0.5 }
      #expect(abs(mapped[q]! - want) < 1e-6, "output frame \(q) maps to \(mapped[q]!), want \(want)")
    }
  }
}

/// Hops made ahead (issue 25: the hops of stems started together spread over different periods).
extension WsolaTests {
  static let aheadChanges: [(at: Int, change: TempoChange)] = [
    (2688, .hold(0.7)), (4992, .hold(1.3)), (5120, .hold(1.25)), (9000, .glide(to: 0.6, frames: 20000)),
    (20000, .hold(0.9)), (40000, .glide(to: 1.6, frames: 30000)), (75000, .hold(2.0))
  ]

  /// The hop made ahead is the hop `update` would have made: with tempo changes and glides in
  /// and around it (which drop it), the output is the same sample for sample whatever the lead and
  /// the pull size, to the input's end.
  @Test(
    "hops made ahead at any lead change nothing: tempo changes and glides, pulls of 64, 128 and 1000, to the input's end",
    arguments: [0, 1, 127, 128, 200, 384, 511])
  func aheadChangesNothing(lead: Int) {
    let source = Self.input(frames: 2 * 48000, seed: 11)
    var plain = WsolaStretcher(channels: 2, sampleRate: 48000, tempo: 1)
    let want = Self.play(&plain, source, channels: 2, frames: 120_000, block: 128, changes: Self.aheadChanges).out
    let plainFinished = plain.isFinished()
    #expect(plainFinished, "the reference did not reach the input's end")
    for block in [64, 128, 1000] {
      var w = WsolaStretcher(channels: 2, sampleRate: 48000, tempo: 1)
      let got = Self.play(&w, source, channels: 2, frames: 120_000, block: block, changes: Self.aheadChanges, lead: lead).out
      let differs = (0..<want.count).first { want[$0] != got[$0] }
      #expect(differs == nil, "lead \(lead), pulls of \(block): differs from sample \(differs ?? -1)")
      let finished = w.isFinished()
      #expect(finished, "lead \(lead), pulls of \(block): not finished at the input's end")
    }
  }

  /// Stretchers started together with the renderer's leads (`StretchState.lead(slot:)`), made
  /// ahead as `pullWsola` does (after a pull that made no search): in 128-frame pulls the hops of
  /// 4 and of 32 stems spread evenly over the four pulls of a hop (without leads they all search
  /// in the same pull, one pull in four).
  @Test("stems with the renderer's leads search in every 128-frame pull, evenly, not all in one pull in four", arguments: [4, 32])
  func aheadSpreadsTheWork(stems: Int) {
    let source = Self.input(frames: 48000, seed: 13)
    func searchesPerPull(leads: [Int?]) -> [Int] {
      // The stretcher is noncopyable: one allocation holds them all.
      let stretchers = UnsafeMutablePointer<WsolaStretcher>.allocate(capacity: leads.count)
      for i in leads.indices { (stretchers + i).initialize(to: WsolaStretcher(channels: 2, sampleRate: 48000, tempo: 0.8)) }
      defer {
        stretchers.deinitialize(count: leads.count)
        stretchers.deallocate()
      }
      var fed = [Int](repeating: 0, count: leads.count)
      var perPull: [Int] = []
      for _ in 0..<200 {
        var searches = 0
        for i in leads.indices {
          let w = stretchers + i
          let before = w.pointee.searches
          _ = Self.play(&w.pointee, source, channels: 2, frames: 128, block: 128, fed: &fed[i])
          if let lead = leads[i], w.pointee.searches == before {
            Self.prepare(&w.pointee, source, channels: 2, lead: lead, fed: &fed[i])
          }
          searches += w.pointee.searches - before
        }
        perPull.append(searches)
      }
      return Array(perPull.dropFirst(8))
    }
    let spread = searchesPerPull(leads: (0..<stems).map { StretchState.lead(slot: $0) })
    #expect(spread.max() == stems / 4 && spread.min() == stems / 4, "searches per pull: \(spread.prefix(16))…")
    let bunched = searchesPerPull(leads: [Int?](repeating: nil, count: stems))
    #expect(bunched.max() == stems, "without leads the \(stems) searched in one pull at most \(bunched.max() ?? -1) at once")
  }
}

/// The renderer makes the hops ahead (`pullWsola`): stems started together spread their work.
extension WsolaTests {
  /// Eight `fast` stems in slots 0–7 at tempo 0.8, started on the same frame and rendered in
  /// 128-frame periods: every period makes two of their searches (before, all eight came in one
  /// period of four and none in the other three).
  @Test("eight fast stretch stems in the renderer: two searches in every 128-frame period, none bunched")
  func rendererSpreadsHops() {
    let engine = TestEngine()
    for slot in 0..<8 {
      engine.addStretchVoice(samples: Self.input(frames: 96000, seed: UInt32(20 + slot)), channels: 2, rate: 0.8, slot: Int32(slot))
    }
    engine.send(.play(fadeIn: false))
    func searches() -> Int {
      (0..<8).reduce(0) { sum, slot in
        sum + engine.state.pointee.voices[slot]!.pointee.stretch!.pointee.wsola!.pointee.searches
      }
    }
    var perPeriod: [Int] = []
    var (l, _) = engine.render(frames: 128, block: 128)
    for _ in 0..<400 {
      let before = searches()
      (l, _) = engine.render(frames: 128, block: 128)
      perPeriod.append(searches() - before)
    }
    let steady = perPeriod.dropFirst(8)
    #expect(steady.min() == 2 && steady.max() == 2, "searches per period: \(Array(steady.prefix(16)))…")
    #expect(rms(l[...]) > 0.01, "the stems are silent")
  }
}

/// Largest |a[i+1] - a[i]| over `range`.
private func maxStep(_ a: [Float], in range: Range<Int>) -> Double {
  var worst = 0.0
  for i in range where i + 1 < a.count { worst = max(worst, abs(Double(a[i + 1]) - Double(a[i]))) }
  return worst
}

/// Largest |a[i+1] − 2 a[i] + a[i−1]| over `range`.
private func maxBend(_ a: [Float], in range: Range<Int>) -> Double {
  var worst = 0.0
  for i in range where i >= 1 && i + 1 < a.count {
    worst = max(worst, abs(Double(a[i + 1]) - 2 * Double(a[i]) + Double(a[i - 1])))
  }
  return worst
}

private func rms(_ a: ArraySlice<Float>) -> Double {
  (a.reduce(0) { $0 + Double($1) * Double($1) } / Double(a.count)).squareRoot()
}
