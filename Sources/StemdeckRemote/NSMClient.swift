import Foundation
import StemdeckControl
import StemdeckJack
import StemdeckLive
import StemdeckSession
import StemdeckText

/// The Non Session Management client (docs/architecture.md, *Remote control*; README, *Session
/// managers*): when `NSM_URL` is set, stemdeck announces itself to the manager, waits for
/// `/nsm/client/open` before it makes its JACK client (named by the manager's client id), keeps
/// its session as `PATH/stemdeck.json` in the folder the manager gives, saves on
/// `/nsm/client/save`, and tells the manager when the session has unsaved changes
/// (`/nsm/client/is_dirty`, `/nsm/client/is_clean`). A manager that goes away takes nothing with
/// it: messages to it are UDP datagrams that nobody reads. Control thread only.
public final class NSMClient {
  package let socket: OSCSocket
  /// Where the manager is reached (the socket is connected there), and, while joining, the
  /// URL's own address when a loopback stand-in is tried first (`loopbackStandIn`).
  package var manager: sockaddr_storage
  package var managerLength: socklen_t
  package var untried: (address: sockaddr_storage, length: socklen_t)?
  /// The executable name announced (an announce is sent again to the URL's own address).
  package var executable = "stemdeck"
  public let url: String
  /// The manager's name, from its reply to the announce.
  public private(set) var managerName: String?
  /// The manager refused the announce (its reason): stemdeck then runs without it.
  public private(set) var refusal: String?
  /// The last `/nsm/client/open`: the folder for the session, the display name, the client id.
  public struct Open: Sendable, Equatable {
    public var path: String
    public var displayName: String
    public var clientID: String
    /// The session file in it.
    public var sessionFile: String { path + "/stemdeck.json" }
  }
  public internal(set) var open: Open?
  /// The dirty state last told to the manager.
  private var toldDirty: Bool?

  /// The capabilities announced: unsaved changes are reported; no session switching (the
  /// JACK client name cannot change while running: the manager restarts stemdeck instead).
  public static let capabilities = ":dirty:"
  package static let apiMajor: Int32 = 1, apiMinor: Int32 = 2
  // The API's error codes used here.
  package static let errGeneral: Int32 = -1, errUnsavedChanges: Int32 = -7, errBadProject: Int32 = -9, errCreateFailed: Int32 = -10

  /// Reads `url` (`parseURL`), resolves its host and connects a UDP socket to the manager
  /// (`connectToManager`): only the manager can reach it, and nothing listening there is known at once.
  public init(url: String) throws(ControlError) {
    self.url = url
    let address = try Self.parseURL(url)
    guard let (resolved, length) = OSCSocket.resolve(host: address.host, port: String(address.port)) else {
      throw ControlError("NSM_URL '\(printableText(url))': cannot resolve the host '\(printableText(address.host))'")
    }
    (manager, managerLength) = (resolved, length)
    if let standIn = Self.loopbackStandIn(resolved) {
      untried = (resolved, length)
      (manager, managerLength) = standIn
    }
    socket = try OSCSocket(clientFor: Int32(resolved.ss_family))
    if let problem = Self.connectToManager(socket.fd, manager, managerLength) {
      socket.close()
      throw ControlError("NSM_URL '\(printableText(url))': cannot reach the session manager at \(address): \(problem)")
    }
  }

  public func close() { socket.close() }

  package func send(_ path: String, _ arguments: [OSCArgument]) {
    socket.send(path, arguments, to: manager, length: managerLength)
  }

  /// `/nsm/server/announce s:name s:capabilities s:executable i:major i:minor i:pid`.
  public func announce(executable: String) {
    self.executable = executable
    send(
      "/nsm/server/announce",
      [
        .string("stemdeck"), .string(Self.capabilities), .string(executable),
        .int(Self.apiMajor), .int(Self.apiMinor), .int(Int32(getpid()))
      ])
  }

  package func fromManager(_ m: OSCMessage) -> Bool {
    // The socket is connected to the manager (`connectToManager`): the kernel delivers nothing
    // else. Checked again here, so that no other program can make stemdeck save or open.
    OSCSocket.describe(m.source, m.sourceLength) == OSCSocket.describe(manager, managerLength)
  }

  /// An open the manager sent that stemdeck answered with `/error` (the message it was told).
  public struct Refused: Error, Equatable {
    public let message: String
  }

  /// Reads an `/nsm/client/open`; a malformed one is answered with `/error` here. `first`: the
  /// open that names the JACK client, whose client id must be a name JACK takes.
  package func parseOpen(_ m: OSCMessage, first: Bool) -> Result<Open, Refused> {
    guard m.arguments.count == 3, case .string(let path) = m.arguments[0], case .string(let name) = m.arguments[1],
      case .string(let id) = m.arguments[2], path.hasPrefix("/")
    else {
      return .failure(
        refuseOpen(Self.errGeneral, "stemdeck: /nsm/client/open takes s:absolute path, s:display name, s:client id (got \(m.typeTags))"))
    }
    if first, let problem = JackNames.clientProblem(id) {
      return .failure(
        refuseOpen(
          Self.errGeneral,
          "stemdeck cannot use the client id '\(printableText(id))' as its JACK client name: it \(problem)"))
    }
    return .success(Open(path: path, displayName: name, clientID: id))
  }

  /// Answers an open with `/error` (`code`, `message`); the refusal, for the caller to say.
  package func refuseOpen(_ code: Int32, _ message: String) -> Refused {
    send("/error", [.string("/nsm/client/open"), .int(code), .string(message)])
    return Refused(message: message)
  }

  /// Replies to the manager's messages that need no console (announce replies, unknown ones).
  package func note(_ m: OSCMessage) {
    switch m.path {
    case "/reply":
      if m.arguments.count >= 3, case .string("/nsm/server/announce") = m.arguments[0], case .string(let name) = m.arguments[2] {
        managerName = name
      }
    case "/error":
      if m.arguments.count >= 3, case .string("/nsm/server/announce") = m.arguments[0], case .string(let why) = m.arguments[2] {
        refusal = why
      }
    default: break  // session_is_loaded and other notes need no answer
    }
  }

  /// Opens the session of `o` in `console`: the file if it exists, else a new empty session
  /// saved there (its folder made). Returns nil when done, else the error told to the manager.
  @discardableResult
  public func openSession(_ o: Open, _ console: Console) -> String? {
    let file = o.sessionFile
    var isFolder: ObjCBool = false
    do {
      if FileManager.default.fileExists(atPath: file) {
        try console.open(file, force: true)
      } else {
        if !(FileManager.default.fileExists(atPath: o.path, isDirectory: &isFolder) && isFolder.boolValue) {
          do { try FileManager.default.createDirectory(atPath: o.path, withIntermediateDirectories: true) } catch {
            let message = "stemdeck cannot create the session folder \(o.path): \(error.localizedDescription)"
            send("/error", [.string("/nsm/client/open"), .int(Self.errCreateFailed), .string(message)])
            return message
          }
        }
        // The new project's file is written first, empty: a folder that cannot take it (read-only,
        // full) leaves the current session as it was. Then it opens like an existing project.
        do { try SessionFile.save(Session(), to: file) } catch { throw CommandError(error.description) }
        try console.open(file, force: true)
      }
    } catch {
      let message = "stemdeck cannot open \(file): \(error)"
      send("/error", [.string("/nsm/client/open"), .int(Self.errBadProject), .string(message)])
      return message
    }
    open = o
    toldDirty = nil
    send("/reply", [.string("/nsm/client/open"), .string("opened \(file)")])
    return nil
  }

  /// Tells the manager that the open it asked for failed before the session could be read.
  public func openFailed(_ message: String) {
    send("/error", [.string("/nsm/client/open"), .int(Self.errGeneral), .string(message)])
  }

  /// A later open (a manager switching projects). stemdeck announces no `:switch:`, so a
  /// conforming manager sends none; one that comes anyway is honoured only without unsaved
  /// changes, else refused with ERR_UNSAVED_CHANGES (the NSM API's answer for "unsaved changes
  /// would be lost"): nothing is discarded, the manager and the console say why.
  package func switchSession(to o: Open, _ console: Console) {
    if console.mixer.isDirty {
      let current = open.map { " in \($0.sessionFile)" } ?? ""
      let what = console.unsavedSummary().map { " (\($0))" } ?? ""
      let refused = refuseOpen(
        Self.errUnsavedChanges,
        "stemdeck has unsaved changes\(current)\(what) and does not switch sessions over them (it announces no :switch:): "
          + "save them (/nsm/client/save) first; \(o.sessionFile) was not opened")
      console.write("error: refused the session manager's open: \(refused.message)")
      return
    }
    let r = console.captured { openSession(o, console) == nil }
    if !r.ok { console.write("error: " + r.errors.joined(separator: "; ")) }
  }

  /// What the control loop watches (ControlLoop.swift): the manager's socket.
  public func interest(_ i: inout ControlLoop.Interest) { i.watch(socket.fd) }

  /// One step: runs the manager's save and open requests through `console`, and tells it when
  /// the unsaved state changed.
  public func service(_ console: Console) {
    for m in socket.receive().messages where fromManager(m) {
      switch m.path {
      case "/nsm/client/save":
        guard let o = open else {
          send("/error", [.string("/nsm/client/save"), .int(Self.errGeneral), .string("stemdeck has no session open")])
          continue
        }
        let r = console.captured { () -> Bool in
          do { try console.save(to: o.sessionFile); return true } catch { console.write("error: \(error)"); return false }
        }
        if r.ok {
          send("/reply", [.string("/nsm/client/save"), .string("saved \(o.sessionFile)")])
        } else {
          send("/error", [.string("/nsm/client/save"), .int(Self.errGeneral), .string(r.errors.joined(separator: "; "))])
        }
      case "/nsm/client/open":
        switch parseOpen(m, first: false) {
        case .failure(let refused): console.write("error: refused the session manager's open: \(refused.message)")
        case .success(let o): switchSession(to: o, console)
        }
      default: note(m)
      }
    }
    let dirty = console.mixer.isDirty
    if dirty != toldDirty {
      toldDirty = dirty
      send(dirty ? "/nsm/client/is_dirty" : "/nsm/client/is_clean", [])
    }
  }
}
