import Foundation
import StemdeckEngine
import StemdeckSession
import StemdeckText

// Live input channels (issue 22, item 3) on the control side: the inputs' settings, their strips
// in the renderer (InputStrips.swift, addressed by index) and the ports the JACK driver registers
// for them (`inputs.ports`). docs/architecture.md, *Live inputs*.

/// One live input: its settings and its strip in the renderer.
final class LiveInput {
  var settings: InputSettings
  /// The renderer's strip (`InputBank`), also the index of its ports in the process context.
  let index: Int
  /// The audibility (mute and solo) last sent to the renderer.
  var sentAudible = true
  /// Removed: the command count after which the renderer has started its fade-out.
  var removedAfterCommand = 0
  /// On the cue bus (Mixer+Cue.swift): a listening state, never saved.
  var cue = CueTap.off

  init(settings: InputSettings, index: Int) {
    self.settings = settings
    self.index = index
  }

}

/// The inputs: in use, and removed ones fading out (their strips and ports are not free yet).
struct InputTable {
  var inputs: [LiveInput] = []
  var retiring: [LiveInput] = []

  func find(_ name: String) -> LiveInput? { inputs.first { $0.settings.name == name } }
}

/// What one live input is doing, for `inputs`, `meters` and the tests.
public struct InputStatus: Sendable {
  public var settings: InputSettings
  /// Its JACK ports (short names) and where its signal goes: a bus's name or "master".
  public var ports: [String]
  public var destination: String
  public var meter: MeterReading
  /// Where its running glides have got to (nil: that parameter is not gliding); the settings
  /// hold the targets.
  public var gliding = GlideReading()
  public var glidingVolume: Double? { gliding.volume }
  public var glidingPan: Double? { gliding.pan }
}

extension Mixer {

  /// `inputs.add`; `checkingOthers` false for a session's inputs (`replaceInputs`: the session's
  /// names and ports were checked as a whole, and the old session's sends are still there).
  func insertInput(_ settings: InputSettings, checkingOthers: Bool) throws(MixerError) {
    try lock.locked { () throws(MixerError) in
      try checkInput(settings, isNew: true)
      if checkingOthers {
        try checkNotASend(settings.name, kind: "input")
        let s = settings
        try checkPorts(PortOwner("input", s.name, ports: s.portNames + (s.directOut ? PortOwner.directOutPorts(s.name) : [])))
      }
      collectRetiredInputs()
      let capacity = renderState.pointee.inputs.capacity
      let used = Set((liveInputs.inputs + liveInputs.retiring).map(\.index))
      guard liveInputs.inputs.count < capacity else {
        throw MixerError(reason: .limit(what: .liveInputs, max: capacity, adding: nil))
      }
      guard let index = (0..<capacity).first(where: { !used.contains($0) }) else {
        throw MixerError("all \(capacity) live input strips are in use while removed inputs fade out; try again in a moment")
      }
      let input = LiveInput(settings: settings, index: index)
      let solo = anyInputOrStemSolo(including: settings.solo)
      input.sentAudible = stripAudible(settings.strip, anySolo: solo)
      try send(
        .addInput(
          index: Int32(index), channels: Int32(settings.channels.count), Self.allLevels(settings.strip, audible: input.sentAudible)))
      liveInputs.inputs.append(input)
      if settings.bus != nil { try? send(.setInputBus(index: Int32(index), bus: busIndex(settings.bus), crossfade: false)) }
      if settings.eq != EQSettings() { try? sendEQ(.input(Int32(index)), from: nil, to: settings.eq) }
      if settings.strip.changesOthersUnderSolo { try? pushAllGains() }
      isDirty = true
    }
  }

  /// (name, direct-out slot) of every input with direct outs (`InputBank.directSlot`: after the
  /// stems' and buses' slots), removed ones still fading out included (their fade goes there).
  func inputDirectOutSlots() -> [(name: String, slot: Int)] {
    (liveInputs.inputs + liveInputs.retiring).filter(\.settings.directOut).map {
      ($0.settings.name, InputBank.directSlot($0.index, maxVoices: renderState.pointee.maxVoices))
    }
  }

  /// Frees the strips of removed inputs the renderer has faded out.
  func collectRetiredInputs() {
    guard !liveInputs.retiring.isEmpty else { return }
    let applied = renderState.pointee.status.pointee.commandsApplied.load(ordering: .acquiring)
    let live = renderState.pointee.inputs.live
    liveInputs.retiring.removeAll { input in
      applied >= input.removedAfterCommand && live[input.index].load(ordering: .acquiring) == 0
    }
  }

  /// Makes the inputs those of `wanted` (opening a session, a song change): an input of the same
  /// name and channels is kept (its ports and connections stay) and takes the new settings;
  /// the others are removed or added.
  func replaceInputs(with wanted: [InputSettings]) throws(MixerError) {
    // Their send levels live in the send table (Mixer+Sends.swift), set after the inputs.
    let wanted = wanted.map { settings in
      var settings = settings
      settings.sends = []
      return settings
    }
    for input in liveInputs.inputs {
      if let new = wanted.first(where: { $0.name == input.settings.name }), new.channels == input.settings.channels { continue }
      try inputs.remove(input.settings.name)
    }
    // The strips of the inputs just removed are free once faded (10 ms): wait for that (bounded)
    // when the new ones need them.
    let adding = wanted.filter { liveInputs.find($0.name) == nil }.count
    let capacity = renderState.pointee.inputs.capacity
    let deadline = Date().addingTimeInterval(1)
    collectRetiredInputs()
    while streaming == .thread && liveInputs.inputs.count + liveInputs.retiring.count + adding > capacity && Date() < deadline {
      usleep(1000)
      collectRetiredInputs()
    }
    for settings in wanted {
      if let input = liveInputs.find(settings.name) {
        try changeStrip(.input(input)) { (s: inout StripSettings) throws(MixerError) in s = settings.strip }
      } else {
        try insertInput(settings, checkingOthers: false)
      }
    }
  }

  /// Checks an input's settings (a new one's name too).
  func checkInput(_ s: InputSettings, isNew: Bool) throws(MixerError) {
    if let problem = InputSettings.nameProblem(s.name) { throw MixerError(ControlText(problem)) }
    if isNew {
      if liveInputs.find(s.name) != nil {
        throw MixerError("an input named '\(s.name)' already exists; choose another name")
      }
      if table.stems.contains(where: { $0.settings.name == s.name }) || table.offline.contains(where: { $0.settings.name == s.name }) {
        throw MixerError("'\(s.name)' is a stem's name; stems and inputs share one set of names, choose another")
      }
      if busPosition(s.name) != nil {
        throw MixerError("'\(s.name)' is a bus's name; buses and inputs share one set of names, choose another")
      }
    }
    try MixerError.check(s.volume, .volume, "volume")
    try MixerError.check(s.pan, .pan, "pan")
    try Mixer.checkEQ(s.eq, of: "'\(s.name)'")
    if let target = s.bus, busPosition(target) == nil { throw unknownBus(target) }
  }

  /// Whether an input is soloed (solo is one for stems and inputs: a soloed strip silences
  /// every strip that is not).
  var anyInputSolo: Bool { liveInputs.inputs.contains { $0.settings.solo } }

  func anyInputOrStemSolo(including extra: Bool) -> Bool { extra || anySolo() }

  func unknownInput(_ name: String) -> MixerError {
    MixerError.unknown(.input, name, known: liveInputs.inputs.map(\.settings.name))
  }

  /// The refusal of a stem-only setting for an input.
  func notForInputs(_ name: String) -> MixerError {
    MixerError(
      "'\(printableText(name))' is a live input: it has volume, pan, mute, solo, eq and direct outs, but no file, loop or rate (to take it away: \(action: .removeInput))"
    )
  }
}

extension Mixer.Inputs {
  /// The live inputs' names, in the order they were added.
  public var names: [String] { mixer.lock.locked { mixer.liveInputs.inputs.map(\.settings.name) } }

  /// The live inputs' settings, in order (saved in the session's "inputs").
  public var settings: [InputSettings] { mixer.lock.locked { mixer.liveInputs.inputs.map(\.settings) } }

  /// Adds a live input strip; its ports are registered by the JACK driver at its next poll.
  /// Refused: an invalid or taken name (stems and inputs share names), more than
  /// `InputBank.maxInputs`, bad levels or EQ.
  public func add(_ settings: InputSettings) throws(MixerError) {
    try mixer.insertInput(settings, checkingOthers: true)
  }

  /// Removes a live input: it fades out (10 ms), then its strip and ports are freed.
  public func remove(_ name: String) throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      guard let input = mixer.liveInputs.find(name) else { throw mixer.unknownInput(name) }
      try mixer.send(.removeInput(index: Int32(input.index)))
      mixer.clearSends(ofStrip: name, address: .input(Int32(input.index)))
      mixer.dropInserts(of: .input(Int32(input.index)))
      input.removedAfterCommand = mixer.commandsSent
      mixer.liveInputs.inputs.removeAll { $0 === input }
      mixer.liveInputs.retiring.append(input)
      if input.settings.strip.changesOthersUnderSolo { try? mixer.pushAllGains() }
      mixer.isDirty = true
    }
  }

  /// Every input's status (settings, ports, meter), in order.
  public func statuses() -> [InputStatus] {
    mixer.lock.locked {
      mixer.liveInputs.inputs.map { input in
        InputStatus(
          settings: input.settings, ports: input.settings.portNames, destination: input.settings.bus ?? "master",
          meter: MeterReading(cells: mixer.renderState.pointee.inputs.meters + input.index, channels: input.settings.channels.count),
          gliding: mixer.glideProgress(of: .input(input)))
      }
    }
  }

  /// One input's status.
  public func status(_ name: String) throws(MixerError) -> InputStatus {
    try mixer.lock.locked { () throws(MixerError) -> InputStatus in
      guard let status = mixer.inputs.statuses().first(where: { $0.settings.name == name }) else { throw mixer.unknownInput(name) }
      return status
    }
  }

  /// The ports the JACK driver keeps registered, by strip index: every input's and those of
  /// removed inputs still fading out (so the fade has its signal). The driver publishes them to
  /// the process callback (`ProcessContext.liveInputPorts`).
  public func ports() -> [Int: [String]] {
    mixer.lock.locked {
      mixer.collectRetiredInputs()
      var ports: [Int: [String]] = [:]
      for input in mixer.liveInputs.inputs + mixer.liveInputs.retiring { ports[input.index] = input.settings.portNames }
      return ports
    }
  }
}

// The live inputs' part of the session file (Mixer+Session.swift calls these under the lock).
extension Mixer.Inputs {
  /// Writes the live inputs in console order, each with its send levels.
  func save(into s: inout Session) {
    s.inputs = mixer.liveInputs.inputs.map(\.settings)
    for i in s.inputs.indices { s.inputs[i].sends = mixer.stemSends(s.inputs[i].name) }
  }
}
