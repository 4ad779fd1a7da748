// The JACK ports (short names) stemdeck registers for the parts of a session, and the rule that
// no two parts may want the same one (issue 43, item 11): a stem or bus named like a send's or an
// input's port (`verb_return`, `verb_send`, `keys_in`) with direct outs never got its ports (JACK
// has one port per name), was heard nowhere while `stems` showed it routed, and jackd logged the
// refusal at every poll. The session coder and the mixer both check with `PortOwner.clash`.
// docs/architecture.md, *Port names*.

/// One part of a session with the JACK ports it registers: a strip's direct outs, an input's
/// ports, a send's, or stemdeck's own.
public struct PortOwner: Equatable, Sendable {
  /// What kind of part it is: "stem", "bus", "input", "send" ("" for stemdeck's own ports).
  public var kind: String
  /// Its name.
  public var name: String
  /// Its short port names.
  public var ports: [String]
  /// Where it is in a session file (`stems[2]`), or nil.
  public var location: String?

  public init(_ kind: String, _ name: String, ports: [String], location: String? = nil) {
    self.kind = kind
    self.name = name
    self.ports = ports
    self.location = location
  }

  /// What it is, for a message: `stem 'drums'`, `send 'verb'`.
  public var what: String { kind.isEmpty ? name : "\(kind) '\(name)'" }

  /// A strip's direct outs: `NAME_L`, `NAME_R`.
  public static func directOutPorts(_ name: String) -> [String] { ["\(name)_L", "\(name)_R"] }

  /// A send's outputs and its return's inputs: `NAME_send_L/R`, `NAME_return_L/R`.
  public static func sendPorts(_ name: String) -> [String] {
    ["\(name)_send_L", "\(name)_send_R", "\(name)_return_L", "\(name)_return_R"]
  }

  /// stemdeck's own ports (the master, the record input, the sound effects, MIDI).
  public static let own = PortOwner(
    "", "stemdeck's own ports", ports: ["master_L", "master_R", "in_L", "in_R", "sfx_L", "sfx_R", "midi_in", "midi_out"])

  /// The first port `self` shares with one of `others`, and that owner; nil when none.
  public func clash(with others: [PortOwner]) -> (port: String, owner: PortOwner)? {
    let mine = Set(ports)
    for other in others {
      if let port = other.ports.first(where: { mine.contains($0) }) { return (port, other) }
    }
    return nil
  }

  /// Why `self` cannot have its ports beside `others`, or nil: `its port verb_return_L would be
  /// send 'verb''s too (…)`.
  public func clashProblem(with others: [PortOwner]) -> String? {
    guard let (port, owner) = clash(with: others) else { return nil }
    let place = owner.location.map { " (\($0))" } ?? ""
    return "its JACK port \(port) would be \(owner.what)'s too\(place); JACK has one port per name: "
      + "rename one of them, or turn the strip's direct outs off"
  }
}

extension Session {
  /// Every part's ports in file order (stems, buses, inputs, sends), stemdeck's own first: a
  /// strip's only with direct outs on.
  public var portOwners: [PortOwner] {
    var owners = [PortOwner.own]
    for (i, stem) in stems.enumerated() where stem.directOut {
      owners.append(PortOwner("stem", stem.name, ports: PortOwner.directOutPorts(stem.name), location: "stems[\(i)]"))
    }
    for (i, bus) in buses.enumerated() where bus.directOut {
      owners.append(PortOwner("bus", bus.name, ports: PortOwner.directOutPorts(bus.name), location: "buses[\(i)]"))
    }
    for (i, input) in inputs.enumerated() {
      let ports = input.portNames + (input.directOut ? PortOwner.directOutPorts(input.name) : [])
      owners.append(PortOwner("input", input.name, ports: ports, location: "inputs[\(i)]"))
    }
    for (i, send) in sends.enumerated() {
      owners.append(PortOwner("send", send.name, ports: PortOwner.sendPorts(send.name), location: "sends[\(i)]"))
    }
    return owners
  }

  /// The first part whose ports another part before it has, or a send named like a strip, with
  /// its location (`sends[0].name`) and why; nil when there is none. The names are checked
  /// first (`validate`, the decoder), so the parts' own names are valid and unique.
  public func portProblem() -> (location: String, message: String)? {
    let strips =
      stems.enumerated().map { ($0.element.name, "stems[\($0.offset)]") }
      + buses.enumerated().map { ($0.element.name, "buses[\($0.offset)]") }
      + inputs.enumerated().map { ($0.element.name, "inputs[\($0.offset)]") }
    let stripPlace = Dictionary(strips, uniquingKeysWith: { a, _ in a })
    for (i, send) in sends.enumerated() {
      if let place = stripPlace[send.name] {
        return (
          "sends[\(i)].name",
          "\(SessionRules.quote(send.name)) is also a strip's name (\(place)); sends, stems, buses and inputs need different names"
        )
      }
    }
    let owners = portOwners
    for (k, owner) in owners.enumerated() where k > 0 {
      if let problem = owner.clashProblem(with: Array(owners[..<k])), let location = owner.location {
        return (location + ".name", "\(SessionRules.quote(owner.name)): \(problem)")
      }
    }
    return nil
  }
}
