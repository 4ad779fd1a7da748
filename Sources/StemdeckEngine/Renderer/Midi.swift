/// JACK MIDI control in the renderer (docs/architecture.md, *MIDI control*): the mapping table
/// the control thread publishes through the command ring, the fader curve, soft takeover and
/// 14-bit pairing, and `midiInput`, which the process callback calls for each MIDI event before
/// `renderBlock` so that a mapped volume, pan or rate change lands at the event's frame.

/// The fader curve: controller position (0…127, fractional for 14-bit) ↔ linear gain.
///
/// gain = (position / 100)^k with k = log 2 / log 1.27 ≈ 2.901: position 0 → −inf dB,
/// 100 → 0 dB, 127 → +6.02 dB (gain 2, the volume limit); in dB, 20·k·log10(position / 100).
public enum MidiCurve {
  /// The exponent: (127 / 100)^k == 2 exactly.
  public static var exponent: Double { @_noLocks get { 2.8999923402717513 } }
  /// Unity gain's position.
  public static var unityPosition: Double { @_noLocks get { 100 } }
  /// The highest position (7-bit 127; a 14-bit value 16,383 also maps to 127).
  public static var maxPosition: Double { @_noLocks get { 127 } }

  /// Gain for a controller position.
  @_noLocks
  public static func gain(position: Double) -> Double {
    if position <= 0 { return 0 }
    return Swift.min(2, RealtimeC.pow(Swift.min(position, maxPosition) / unityPosition, exponent))
  }

  /// The controller position of a gain (the inverse of `gain(position:)`).
  @_noLocks
  public static func position(gain: Double) -> Double {
    if gain <= 0 { return 0 }
    return Swift.min(maxPosition, unityPosition * RealtimeC.pow(gain, 1 / exponent))
  }

  /// Pan for a position: 0 → −1, 64 → 0 (centre), 127 → +1.
  @_noLocks
  public static func pan(position: Double) -> Double {
    let p = Swift.max(0, Swift.min(position, maxPosition))
    return p >= 64 ? (p - 64) / 63 : (p - 64) / 64
  }

  /// The position of a pan (the inverse of `pan(position:)`).
  @_noLocks
  public static func position(pan: Double) -> Double {
    pan >= 0 ? 64 + pan * 63 : 64 + pan * 64
  }

  /// Rate for a pitch-bend value (0…16,383, centre 8,192): one octave down to one octave up,
  /// exponential: rate = 2^((value − 8192) / 8192), within 0.5…2.
  @_noLocks
  public static func rate(bend: Int) -> Double {
    let x = Double(Swift.max(0, Swift.min(bend, 16383)) &- 8192) / 8192
    return Swift.max(0.5, Swift.min(2, RealtimeC.pow(2, x)))
  }
}

/// Soft takeover (pick-up): a controller that disagrees with the value it drives does not move it
/// until it reaches or crosses it; then it follows the controller. A change made elsewhere (the
/// REPL, a glide) drops the pick-up again. Positions are on the controller's scale (0…127).
public struct SoftTakeover: BitwiseCopyable, Sendable {
  /// Following the controller.
  public var pickedUp = false
  /// The controller's last position (−1: none yet).
  public var lastPosition = -1.0
  /// The value last applied by the controller (to notice changes made elsewhere).
  public var lastApplied = Double.nan

  @_noLocks public init() {}

  /// Whether a controller move to `position` applies, given the value's current position and
  /// the value itself (`current`, compared with what the controller last applied).
  @_noLocks
  public mutating func accept(position: Double, currentPosition: Double, current: Double) -> Bool {
    if pickedUp && current != lastApplied { pickedUp = false }
    if !pickedUp {
      // Within half a 7-bit step, or crossed since the last move.
      if Swift.abs(position - currentPosition) <= 0.5 {
        pickedUp = true
      } else if lastPosition >= 0 && (lastPosition - currentPosition) * (position - currentPosition) <= 0 {
        pickedUp = true
      }
    }
    lastPosition = position
    return pickedUp
  }
}

/// 14-bit controller pairs: CC n (0…31) carries the most significant 7 bits, CC n + 32 the
/// least. An MSB alone is a plain 7-bit controller; once an LSB arrives the pair is 14-bit.
public struct FineController: BitwiseCopyable, Sendable {
  public var msb = 0
  public var lsb = 0
  /// An LSB has been seen for this controller.
  public var paired = false

  @_noLocks public init() {}

  /// A new MSB (0…127): returns the position (fractional once an LSB came). The LSB is
  /// cleared, as the MIDI specification asks of a new MSB.
  @_noLocks
  public mutating func receive(msb value: Int) -> Double {
    msb = value
    lsb = 0
    return position
  }

  /// A new LSB (0…127): returns the position.
  @_noLocks
  public mutating func receive(lsb value: Int) -> Double {
    lsb = value
    paired = true
    return position
  }

  /// 0…127.99: the 14-bit value / 128, so that an MSB alone reads as its 7-bit value (MSB 100 is
  /// 0 dB whether or not an LSB follows).
  public var position: Double {
    @_noLocks get { Double(msb) + Double(lsb) / 128 }
  }
}

/// What a MIDI binding does in the renderer.
public enum MidiTarget: UInt8, BitwiseCopyable, Sendable {
  /// Stem volume through `MidiCurve.gain`, with soft takeover.
  case volume = 0
  /// Stem pan through `MidiCurve.pan`, with soft takeover.
  case pan = 1
  /// Stem rate through `MidiCurve.rate` (pitch bend).
  case rate = 2
  /// Not a renderer change: the event goes to the control thread (sound effects, toggles,
  /// transport, learn).
  case control = 3
}

/// The kind of MIDI message a binding listens to.
public enum MidiSourceKind: UInt8, BitwiseCopyable, Sendable {
  case cc = 0, note = 1, bend = 2
  /// A program change (two bytes: its number is the program).
  case program = 3
}

/// What a binding shows on `midi_out` besides a fader's position (issue 42, item 3): a play
/// button's LED follows the transport; a song button (`next`, `prev`, a `do "goto …"`) sends the
/// setlist song's number as a program change, for a pedal board's display.
public enum MidiFeedback: BitwiseCopyable, Sendable, Equatable {
  case none
  /// Note on (velocity 127) or CC 127 while the transport plays; note off or CC 0 otherwise.
  case playing
  /// Program change N − 1 for song N of the setlist (0 without one), on the binding's channel.
  case song(Int16)
}

/// One entry of the renderer's mapping table (trivial; sent by `EngineCommand.setMidiBinding`).
public struct MidiBinding: BitwiseCopyable, Sendable {
  public var kind: MidiSourceKind
  /// 0…15, or −1 for any channel.
  public var channel: Int8
  /// Controller or note number (unused for pitch bend).
  public var number: Int16
  public var target: MidiTarget
  /// The stem's slot for volume, pan and rate (−1: its stem is not loaded; the event is ignored).
  public var slot: Int32
  /// What it sends back on `midi_out` beyond a stem fader's position.
  public var feedback: MidiFeedback

  public init(
    kind: MidiSourceKind, channel: Int8, number: Int16, target: MidiTarget, slot: Int32, feedback: MidiFeedback = .none
  ) {
    self.kind = kind
    self.channel = channel
    self.number = number
    self.target = target
    self.slot = slot
    self.feedback = feedback
  }

  @_noLocks @inline(__always)
  func matches(_ kind: MidiSourceKind, channel: Int, number: Int) -> Bool {
    self.kind == kind && (self.channel < 0 || Int(self.channel) == channel)
      && (kind == .bend || Int(self.number) == number)
  }
}

/// What the renderer tells the control thread about MIDI (the MIDI ring).
public enum MidiReport: BitwiseCopyable, Sendable, Equatable {
  /// A binding changed a stem: the control thread records the value (it was applied already).
  case applied(binding: Int32, slot: Int32, target: MidiTarget, value: Double)
  /// A binding's move was held back by soft takeover.
  case held(binding: Int32)
  /// An event for the control thread: a `.control` binding's (binding ≥ 0), or one no binding
  /// took (binding −1: for learn). `status` is the status byte, `data2` −1 for two-byte messages.
  case event(binding: Int32, status: UInt8, data1: UInt8, data2: Int16)
}

/// The renderer's MIDI state: the mapping table, per-binding takeover and 14-bit state, and the
/// changes due within the current block. Preallocated; used only by the audio thread once made.
public struct MidiTable: ~Copyable {
  public static var capacity: Int { @_noLocks get { 256 } }
  public static var timedCapacity: Int { @_noLocks get { 256 } }
  @usableFromInline let bindings: UnsafeMutablePointer<MidiBinding>
  @usableFromInline let takeover: UnsafeMutablePointer<SoftTakeover>
  @usableFromInline let fine: UnsafeMutablePointer<FineController>
  /// Per binding: the controller value last sent back on `midi_out` (−1: none yet).
  @usableFromInline let sent: UnsafeMutablePointer<Int16>
  @usableFromInline var count = 0
  /// Renderer changes due at a frame offset of the current block, in arrival (time) order.
  @usableFromInline let timedOffsets: UnsafeMutablePointer<Int>
  @usableFromInline let timedCommands: UnsafeMutablePointer<EngineCommand>
  @usableFromInline var timedCount = 0
  @usableFromInline var timedNext = 0

  init() {
    bindings = .allocate(capacity: Self.capacity)
    takeover = .allocate(capacity: Self.capacity)
    takeover.initialize(repeating: SoftTakeover(), count: Self.capacity)
    fine = .allocate(capacity: Self.capacity)
    fine.initialize(repeating: FineController(), count: Self.capacity)
    sent = .allocate(capacity: Self.capacity)
    sent.initialize(repeating: -1, count: Self.capacity)
    timedOffsets = .allocate(capacity: Self.timedCapacity)
    timedCommands = .allocate(capacity: Self.timedCapacity)
  }

  func free() {
    bindings.deallocate()
    takeover.deallocate()
    fine.deallocate()
    sent.deallocate()
    timedOffsets.deallocate()
    timedCommands.deallocate()
  }

  /// Stores binding `index`; `count` bindings are live after it (the control thread sends the
  /// whole table, then the count). A binding that changed loses its takeover and 14-bit state.
  @_noLocks
  mutating func set(index: Int, binding: MidiBinding, count newCount: Int) {
    guard index >= 0 && index < Self.capacity else { return }
    let old = bindings[index]
    if index >= count || old.kind != binding.kind || old.channel != binding.channel || old.number != binding.number
      || old.target != binding.target || old.slot != binding.slot || old.feedback != binding.feedback
    {
      takeover[index] = SoftTakeover()
      fine[index] = FineController()
      sent[index] = -1
    }
    bindings[index] = binding
    count = Swift.max(0, Swift.min(newCount, Self.capacity))
  }

  /// `EngineCommand.setMidiBinding`: a negative `index` only sets the count of live bindings.
  @_noLocks
  mutating func apply(index: Int32, binding: MidiBinding, count newCount: Int32) {
    if index < 0 {
      count = Swift.max(0, Swift.min(Int(newCount), Self.capacity))
    } else {
      set(index: Int(index), binding: binding, count: Int(newCount))
    }
  }
}

/// Applies the commands the control thread queued so far, before a period's MIDI input is
/// matched (`midiInput`): a binding, a stem or a level sent a moment before an event that
/// arrives in the same period is in place for it. `renderBlock` applies whatever comes after.
///
/// - Realtime: safe (`applyCommands`).
@_noLocks
public func applyCommandsBeforeInput(_ state: UnsafeMutablePointer<RenderState>) {
  applyCommands(state)
}

/// One MIDI event from the driver, at `offset` frames into the block about to be rendered
/// (`renderBlock` must follow in the same period). `count` bytes of `b0…b2` are valid. Mapped
/// volume, pan and rate changes are queued to apply at `offset`; every event is reported to the
/// control thread on the MIDI ring (which keeps the mixer's settings in step, and acts on the
/// others). Events other than note on, control change, pitch bend and program change are ignored.
///
/// - Realtime: safe. A scan of at most `MidiTable.capacity` bindings; no allocation, no lock.
@_noLocks
public func midiInput(_ state: UnsafeMutablePointer<RenderState>, offset: Int, count: Int, _ b0: UInt8, _ b1: UInt8, _ b2: UInt8) {
  guard count >= 2 else { return }
  let type = b0 & 0xF0
  let channel = Int(b0 & 0x0F)
  let d1 = Int(b1 & 0x7F)
  let d2 = count >= 3 ? Int(b2 & 0x7F) : 0
  let kind: MidiSourceKind
  switch type {
  case 0xB0: kind = .cc
  case 0x90: kind = .note
  case 0xE0: kind = .bend
  case 0xC0: kind = .program
  default: return
  }
  if count < 3 && kind != .program { return }
  var taken = false
  let n = state.pointee.midi.count
  // Whether a CC 32…63 can be the LSB of a binding on CC n − 32: only when it is not bound itself
  // (scanned once per event, so an event costs at most two scans of the table).
  let lsbCandidate = kind == .cc && d1 >= 32 && d1 < 64 && !midiBound(state, channel: channel, number: d1)
  for i in 0..<n {
    let binding = state.pointee.midi.bindings[i]
    var lsb = false
    if !binding.matches(kind, channel: channel, number: d1) {
      // The LSB of a 14-bit pair: CC n + 32 for a binding of CC n (0…31), unless bound itself.
      guard lsbCandidate, binding.target != .control, binding.matches(.cc, channel: channel, number: d1 &- 32) else { continue }
      lsb = true
    }
    taken = true
    if binding.target == .control {
      _ = state.pointee.midiReports.push(.event(binding: Int32(i), status: b0, data1: UInt8(d1), data2: Int16(d2)))
      continue
    }
    guard let voice = voiceAt(state, binding.slot), !voice.pointee.removing else { continue }
    var command: EngineCommand
    var value: Double
    switch binding.target {
    case .rate:
      guard kind == .bend else { continue }
      value = MidiCurve.rate(bend: d2 &* 128 &+ d1)
      command = .setRate(slot: binding.slot, rate: value)
    case .volume, .pan:
      let position: Double
      if kind == .cc {
        position = lsb ? state.pointee.midi.fine[i].receive(lsb: d2) : state.pointee.midi.fine[i].receive(msb: d2)
      } else if kind == .bend {
        position = Double(d2 &* 128 &+ d1) / 128
      } else {
        position = Double(d2)
      }
      let volume = binding.target == .volume
      let current = volume ? voice.pointee.levels.volume : voice.pointee.levels.pan
      let currentPosition = volume ? MidiCurve.position(gain: current) : MidiCurve.position(pan: current)
      guard state.pointee.midi.takeover[i].accept(position: position, currentPosition: currentPosition, current: current) else {
        _ = state.pointee.midiReports.push(.held(binding: Int32(i)))
        continue
      }
      value = volume ? MidiCurve.gain(position: position) : MidiCurve.pan(position: position)
      state.pointee.midi.takeover[i].lastApplied = value
      var change = StripLevelChange(audible: voice.pointee.levels.audible)
      if volume { change.volume = value } else { change.pan = value }
      command = .setStripLevels(.stem(slot: binding.slot), change)
      // The voice holds the new value at once, so that takeover judges the next event of this
      // block against it; the gains move when the command applies at `offset`.
      if volume { voice.pointee.levels.volume = value } else { voice.pointee.levels.pan = value }
    case .control:
      continue
    }
    queueTimed(state, offset: offset, command: command)
    _ = state.pointee.midiReports.push(.applied(binding: Int32(i), slot: binding.slot, target: binding.target, value: value))
  }
  if !taken {
    _ = state.pointee.midiReports.push(.event(binding: -1, status: b0, data1: UInt8(d1), data2: Int16(d2)))
  }
}

/// MIDI feedback (`midi out`): the next message to send back so that a motorised fader or an LED
/// ring shows a stem's volume or pan, a play button's LED the transport, a pedal board's display
/// the song (`MidiFeedback`), starting the scan at binding `index` (advanced past the binding
/// returned). A value is sent when it differs from the one last sent. Call after `renderBlock`
/// (the values are then the block's), until it returns nil; `midiFeedbackLength` says how many of
/// the three bytes a message has.
///
/// - Realtime: safe. A scan of at most `MidiTable.capacity` bindings per period in all.
@_noLocks
public func midiFeedback(_ state: UnsafeMutablePointer<RenderState>, index: inout Int) -> (status: UInt8, data1: UInt8, data2: UInt8)? {
  while index < state.pointee.midi.count {
    let i = index
    index &+= 1
    let binding = state.pointee.midi.bindings[i]
    guard let value = feedbackValue(state, binding), value != state.pointee.midi.sent[i] else { continue }
    state.pointee.midi.sent[i] = value
    let channel = UInt8(truncatingIfNeeded: Swift.max(0, Int(binding.channel)))
    let number = UInt8(truncatingIfNeeded: binding.number), byte = UInt8(truncatingIfNeeded: value)
    switch binding.feedback {
    case .song: return (0xC0 | channel, byte, 0)  // two bytes: `midiFeedbackLength`
    case .playing where binding.kind == .note: return value > 0 ? (0x90 | channel, number, 127) : (0x80 | channel, number, 0)
    default: return (0xB0 | channel, number, byte)
    }
  }
  return nil
}

/// The value binding `binding` shows now (0…127), or nil when it shows nothing: a stem fader's
/// position (a CC of volume or pan), the transport (`.playing`, a note or a CC), the song's
/// number (`.song`).
@_noLocks @inline(__always)
func feedbackValue(_ state: UnsafeMutablePointer<RenderState>, _ binding: MidiBinding) -> Int16? {
  switch binding.feedback {
  case .playing:
    guard binding.kind == .note || binding.kind == .cc else { return nil }
    return state.pointee.transport.playing ? 127 : 0
  case .song(let number):
    return Swift.max(0, Swift.min(127, number))
  case .none:
    guard binding.kind == .cc, binding.target == .volume || binding.target == .pan,
      let voice = voiceAt(state, binding.slot), !voice.pointee.removing
    else { return nil }
    let position =
      binding.target == .volume
      ? MidiCurve.position(gain: voice.pointee.levels.volume)
      : MidiCurve.position(pan: voice.pointee.levels.pan)
    return Int16(Swift.max(0, Swift.min(127, Int(position + 0.5))))
  }
}

/// Bytes in a feedback message with status byte `status`: a program change has one data byte.
@_noLocks @inline(__always)
public func midiFeedbackLength(status: UInt8) -> Int { status & 0xF0 == 0xC0 ? 2 : 3 }

/// Forgets what feedback was sent, so that every value goes out again (a new `midi_out` port).
@_noLocks
public func midiFeedbackReset(_ state: UnsafeMutablePointer<RenderState>) {
  for i in 0..<MidiTable.capacity { state.pointee.midi.sent[i] = -1 }
}

/// Whether a binding listens to exactly CC `number` on `channel`.
@_noLocks
func midiBound(_ state: UnsafeMutablePointer<RenderState>, channel: Int, number: Int) -> Bool {
  for i in 0..<state.pointee.midi.count where state.pointee.midi.bindings[i].matches(.cc, channel: channel, number: number) {
    return true
  }
  return false
}

/// Queues `command` for `offset` frames into the next block (at once if the queue is full).
@_noLocks
func queueTimed(_ state: UnsafeMutablePointer<RenderState>, offset: Int, command: EngineCommand) {
  let c = state.pointee.midi.timedCount
  guard c < MidiTable.timedCapacity else { apply(state, command); return }
  state.pointee.midi.timedOffsets[c] = Swift.max(0, offset)
  state.pointee.midi.timedCommands[c] = command
  state.pointee.midi.timedCount = c &+ 1
}

/// Applies the timed changes due at or before `offset` into the block; returns the offset of
/// the next one (Int.max: none).
@_noLocks
func applyTimed(_ state: UnsafeMutablePointer<RenderState>, upTo offset: Int) -> Int {
  while state.pointee.midi.timedNext < state.pointee.midi.timedCount {
    let i = state.pointee.midi.timedNext
    let at = state.pointee.midi.timedOffsets[i]
    if at > offset { return at }
    apply(state, state.pointee.midi.timedCommands[i])
    state.pointee.midi.timedNext = i &+ 1
  }
  return Int.max
}
