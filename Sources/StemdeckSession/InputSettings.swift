import Foundation

// Live input channels (issue 22, item 3): the optional top-level "inputs" list of a session,
//
//   "inputs" : [
//     { "name" : "mic", "channels" : "mono", "volume" : 0.8, "pan" : -0.2, "mute" : false, "solo" : false },
//     { "name" : "keys", "channels" : "stereo", "volume" : 1, "pan" : 0, "mute" : false, "solo" : false, "eq" : { … } }
//   ]
//
// "bus" (the name of a bus of "buses", like a stem's) routes an input to that bus; it is written
// only when the input does not go to the master ("master" reads as leaving it out);
// "directOut" : true (written only when true) sends it to its own outputs NAME_L/NAME_R instead.
// An input is solo-safe (heard whatever is soloed): "soloSafe" : false, written only then, makes
// it follow solo as a stem does.
// written only when a session has inputs (a file without them is byte for byte what it was).
// An input registers the JACK input port `NAME_in` (mono) or `NAME_in_L`/`NAME_in_R` (stereo);
// its connections are saved with the others under "connections". docs/architecture.md, *Live inputs*.

/// How many channels a live input has: one port or a left/right pair.
public enum InputChannels: String, CaseIterable, Sendable {
  case mono
  case stereo

  public var count: Int { self == .mono ? 1 : 2 }
}

/// One live input strip: a stem strip without file, loop or rate.
public struct InputSettings: Equatable, Sendable {
  public var name: String
  public var channels: InputChannels
  /// The strip: volume, pan (mono, constant power) or balance (stereo), mute, solo, EQ, the bus
  /// it feeds (nil: the master), its sends, and direct outs (post-fader to its own JACK outputs
  /// `NAME_L`/`NAME_R` instead of its bus or the master); also read and written as `volume`,
  /// `pan`, … (StripSettings.swift).
  public var strip = StripSettings.defaults(of: .input)

  public init(name: String, channels: InputChannels) {
    self.name = name
    self.channels = channels
  }

  /// The input's JACK port short names: `mic_in`, or `keys_in_L` and `keys_in_R`.
  public var portNames: [String] {
    channels == .mono ? ["\(name)_in"] : ["\(name)_in_L", "\(name)_in_R"]
  }

  /// The message for a `"bus"` that names no bus of the session.
  static func unknownBus(_ target: String, buses: [BusSettings]) -> String {
    let list = buses.isEmpty ? "there are no buses" : "the buses are " + buses.map { "'\($0.name)'" }.joined(separator: ", ")
    return "names no bus (got \(SessionRules.quote(target)); \(list), or leave it out for the master)"
  }

  /// The most inputs a session may have (the renderer's preallocated strips).
  public static let maximumCount = 32
  /// The fields of one element of "inputs".
  static let fields = ["name", "channels"] + StripParameter.sessionKeys(of: .input) + ["eq", "bus", "sends", "directOut", "inserts"]
  /// Input names whose ports would be stemdeck's own (`midi_in`).
  public static let reservedNames: Set<String> = ["midi"]

  /// Why `name` is not a valid input name, or nil: the stem name rules (inputs share the stems'
  /// names, so `master`, `in`, `sfx` and `all` are refused too) and no port of stemdeck's own.
  public static func nameProblem(_ name: String) -> String? {
    if let problem = SessionRules.nameProblem(name, of: .stem) {
      return problem.replacingOccurrences(of: "stem name", with: "input name")
    }
    if reservedNames.contains(name.lowercased()) {
      return "the input name \(SessionRules.quote(name)) is reserved: an input's port is NAME_in, and "
        + "\(name.lowercased())_in is stemdeck's own port; choose another name"
    }
    return nil
  }
}

extension Session {
  /// Checks the inputs alone (the mixer, before it opens a session).
  public func validateInputs(source: String) throws(SessionError) {
    try validateInputs { SessionError(file: source, location: $0, message: $1) }
  }

  /// Checks the inputs (part of `validate()`): names, clashes with stems, count, ranges.
  func validateInputs(_ fail: (String, String) -> SessionError) throws(SessionError) {
    if inputs.count > InputSettings.maximumCount {
      throw fail("inputs", "has \(inputs.count) inputs; at most \(InputSettings.maximumCount)")
    }
    var firstIndexByName: [String: Int] = [:]
    let stemNames = Set(stems.map(\.name))
    let busNames = Set(buses.map(\.name))
    for (index, input) in inputs.enumerated() {
      let base = "inputs[\(index)]"
      if let problem = InputSettings.nameProblem(input.name) { throw fail(base + ".name", problem) }
      if let earlier = firstIndexByName[input.name] {
        throw fail(base + ".name", "duplicate input name \(SessionRules.quote(input.name)) (also inputs[\(earlier)])")
      }
      if stemNames.contains(input.name) {
        throw fail(
          base + ".name", "\(SessionRules.quote(input.name)) is also a stem's name; inputs and stems share one set of names")
      }
      if busNames.contains(input.name) {
        throw fail(
          base + ".name",
          "\(SessionRules.quote(input.name)) is also a bus's name; inputs, buses and stems share one set of names")
      }
      firstIndexByName[input.name] = index
      if let p = input.strip.ruleProblem(of: .input) { throw fail(base + "." + p.key, p.message) }
      if let problem = input.eq.problem() { throw fail(base + ".eq." + problem.field, problem.message) }
      if let target = input.bus, !busNames.contains(target) { throw fail(base + ".bus", InputSettings.unknownBus(target, buses: buses)) }
    }
  }
}
