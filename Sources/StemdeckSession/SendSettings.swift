// Aux sends (issue 22, item 2) in a session file:
//
//   "sends" : [                                   <- only when the session has sends
//     { "name" : "verb", "returnVolume" : 1 }
//   ],
//   "stems" : [
//     { "name" : "drums", …, "sends" : [ { "to" : "verb", "level" : 0.25 }, { "to" : "dly", "level" : 0.5, "pre" : true } ] }
//   ],
//   "buses" : [ { "name" : "drums_bus", …, "sends" : [ { "to" : "verb", "level" : 0.5 } ] } ],
//   "inputs" : [ { "name" : "mic", …, "sends" : [ { "to" : "verb", "level" : 0.3, "pre" : true } ] } ]
//
// A send registers the JACK outputs `NAME_send_L/R` and the return inputs `NAME_return_L/R`
// (their connections are saved with the others under "connections"). A stem's "sends" lists
// its levels into sends of "sends": "level" a gain like "volume" (0…2, or "-12dB"), "pre": true
// for before the stem's fader (left out: after it). Written only when a stem has sends. A bus's
// and a live input's "sends" are the same (optional in format 3, read as none when left out).
// docs/architecture.md, *Aux sends*.

/// One aux send of a session: its name and its return's volume.
public struct SendSettings: Equatable, Sendable {
  public var name: String
  /// The return's volume (linear gain, as a stem's `volume`).
  public var returnVolume: Double = 1

  public init(name: String, returnVolume: Double = 1) {
    self.name = name
    self.returnVolume = returnVolume
  }

  /// The most sends a session may have (the renderer's preallocated sends).
  public static let maximumCount = 8
  /// The fields of one element of "sends".
  static let fields = ["name", "returnVolume"]
  /// The fields of one element of a stem's "sends".
  static let stemFields = ["to", "level", "pre"]

  /// Why `name` is not a valid send name, or nil: the bus name rules (its ports are
  /// `NAME_send_L/R` and `NAME_return_L/R`).
  public static func nameProblem(_ name: String) -> String? {
    SessionRules.nameProblem(name, of: .bus).map { $0.replacingOccurrences(of: "bus name", with: "send name") }
  }
}

/// A stem's level into one aux send.
public struct StemSend: Equatable, Sendable {
  /// The send's name (one of the session's "sends").
  public var to: String
  /// Linear gain, as a stem's `volume`.
  public var level: Double
  /// Before the stem's fader (after its EQ); false: after it (volume, pan, mute, solo).
  public var preFader: Bool

  public init(to: String, level: Double, preFader: Bool = false) {
    self.to = to
    self.level = level
    self.preFader = preFader
  }
}

extension Session {
  /// The first problem of the sends and the send levels of the stems, buses and inputs, with its
  /// location, or nil: send names (rules, unique), count, return volumes, levels, and that every
  /// level names a send of the session once per strip.
  public func sendProblem() -> (location: String, message: String)? {
    if sends.count > SendSettings.maximumCount {
      return ("sends", "has \(sends.count) sends; at most \(SendSettings.maximumCount)")
    }
    var firstIndexByName: [String: Int] = [:]
    for (index, send) in sends.enumerated() {
      let base = "sends[\(index)]"
      if let problem = SendSettings.nameProblem(send.name) { return (base + ".name", problem) }
      if let earlier = firstIndexByName[send.name] {
        return (base + ".name", "duplicate send name \(SessionRules.quote(send.name)) (also sends[\(earlier)])")
      }
      firstIndexByName[send.name] = index
      if !SettingRule.volume.accepts(send.returnVolume) {
        return (base + ".returnVolume", SettingRule.volume.rule + " (got \(SessionRules.number(send.returnVolume)))")
      }
    }
    let strips =
      stems.enumerated().map { ("stems[\($0.offset)]", $0.element.sends) }
      + buses.enumerated().map { ("buses[\($0.offset)]", $0.element.sends) }
      + inputs.enumerated().map { ("inputs[\($0.offset)]", $0.element.sends) }
    for (strip, levels) in strips {
      var seen: [String: Int] = [:]
      for (index, level) in levels.enumerated() {
        let base = "\(strip).sends[\(index)]"
        if firstIndexByName[level.to] == nil {
          let list = sends.isEmpty ? "the session has no sends" : "the sends are " + sends.map { "'\($0.name)'" }.joined(separator: ", ")
          return (base + ".to", "names no send (got \(SessionRules.quote(level.to)); \(list))")
        }
        if let earlier = seen[level.to] {
          return (base + ".to", "a second level into \(SessionRules.quote(level.to)) (also sends[\(earlier)]); one per send")
        }
        seen[level.to] = index
        if !SettingRule.volume.accepts(level.level) {
          return (base + ".level", SettingRule.volume.rule + " (got \(SessionRules.number(level.level)))")
        }
      }
    }
    return nil
  }
}
