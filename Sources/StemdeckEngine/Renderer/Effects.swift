/// A sound effect held in memory: interleaved frames at the engine's sample rate, mono or
/// stereo. Trivial, so it travels inside a command; the memory is owned by the control thread,
/// which frees it only after the renderer reports `effectUnloaded`.
public struct EffectSample: BitwiseCopyable, @unchecked Sendable {
  public let data: UnsafePointer<Float>
  public let frames: Int
  public let channels: Int
  public init(data: UnsafePointer<Float>, frames: Int, channels: Int) {
    self.data = data
    self.frames = frames
    self.channels = channels
  }
}

/// One playing instance of an effect (the pool is fixed; the oldest voice is stolen when full).
public struct EffectVoice: Sendable {
  @usableFromInline var active = false
  @usableFromInline var slot = 0
  @usableFromInline var position = 0
  @usableFromInline var gainLeft: Float = 0
  @usableFromInline var gainRight: Float = 0
  @usableFromInline var startedAt = 0
  /// Fading out after `sfx stop`; 1 → 0 over `fadeFrames`.
  @usableFromInline var fade: Float = 1
  @usableFromInline var stopping = false
  public init() {}
}

/// The renderer's effect table and voice pool, preallocated.
public struct EffectBank: ~Copyable {
  public static let maxEffects = 256
  public static let poolSize = 32
  @usableFromInline let samples: UnsafeMutablePointer<EffectSample?>
  @usableFromInline let voices: UnsafeMutablePointer<EffectVoice>
  @usableFromInline var fires = 0
  @usableFromInline let fadeStep: Float

  init(sampleRate: Double) {
    samples = .allocate(capacity: Self.maxEffects)
    samples.initialize(repeating: nil, count: Self.maxEffects)
    voices = .allocate(capacity: Self.poolSize)
    voices.initialize(repeating: EffectVoice(), count: Self.poolSize)
    fadeStep = 1 / Float(Swift.max(1, Int(sampleRate * 0.005)))
  }

  deinit {
    samples.deallocate()
    voices.deallocate()
  }

  /// Installs a sample in `slot`.
  @_noLocks
  mutating func load(slot: Int, sample: EffectSample) {
    guard slot >= 0, slot < Self.maxEffects else { return }
    samples[slot] = sample
  }

  /// Starts an instance of effect `slot` in a free voice, or steals the oldest.
  @_noLocks
  mutating func fire(slot: Int, gainLeft: Float, gainRight: Float) {
    guard slot >= 0, slot < Self.maxEffects, samples[slot] != nil else { return }
    var chosen = 0
    var oldest = Int.max
    for i in 0..<Self.poolSize {
      if !voices[i].active { chosen = i; break }
      if voices[i].startedAt < oldest { oldest = voices[i].startedAt; chosen = i }
    }
    fires &+= 1
    voices[chosen] = EffectVoice()
    voices[chosen].active = true
    voices[chosen].slot = slot
    voices[chosen].gainLeft = gainLeft
    voices[chosen].gainRight = gainRight
    voices[chosen].startedAt = fires
  }

  /// Fades out every voice playing `slot` (or all voices for a negative slot).
  @_noLocks
  mutating func stop(slot: Int) {
    for i in 0..<Self.poolSize where voices[i].active && (slot < 0 || voices[i].slot == slot) {
      voices[i].stopping = true
    }
  }

  /// Stops voices of `slot` at once and forgets the sample (the control thread frees it).
  @_noLocks
  mutating func unload(slot: Int) {
    guard slot >= 0, slot < Self.maxEffects else { return }
    for i in 0..<Self.poolSize where voices[i].active && voices[i].slot == slot { voices[i].active = false }
    samples[slot] = nil
  }

  /// Adds every playing voice into the mix.
  @_noLocks
  mutating func render(intoLeft mixL: UnsafeMutablePointer<Float>, right mixR: UnsafeMutablePointer<Float>, frameCount n: Int) {
    for v in 0..<Self.poolSize where voices[v].active {
      guard let sample = samples[voices[v].slot] else { voices[v].active = false; continue }
      let start = voices[v].position
      let count = Swift.min(n, sample.frames &- start)
      let gl = voices[v].gainLeft, gr = voices[v].gainRight
      var fade = voices[v].fade
      let step = voices[v].stopping ? fadeStep : 0
      let data = sample.data
      if sample.channels == 1 {
        for i in 0..<count {
          let x = data[start &+ i] * fade
          mixL[i] += x * gl
          mixR[i] += x * gr
          fade = Swift.max(0, fade - step)
        }
      } else {
        for i in 0..<count {
          let f = (start &+ i) &* 2
          mixL[i] += data[f] * gl * fade
          mixR[i] += data[f &+ 1] * gr * fade
          fade = Swift.max(0, fade - step)
        }
      }
      voices[v].fade = fade
      voices[v].position = start &+ count
      if voices[v].position >= sample.frames || fade <= 0 { voices[v].active = false }
    }
  }

  /// Number of voices sounding (for status).
  @_noLocks
  func activeCount() -> Int {
    var n = 0
    for i in 0..<Self.poolSize where voices[i].active { n &+= 1 }
    return n
  }
}
