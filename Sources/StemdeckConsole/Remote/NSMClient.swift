import CLiblo
import Foundation
import StemdeckControl
import StemdeckSession

/// The Non Session Management client (docs/architecture.md, *Remote control*; README, *Session
/// managers*): when `NSM_URL` is set, stemdeck announces itself to the manager, waits for
/// `/nsm/client/open` before it makes its JACK client (named by the manager's client id), keeps
/// its session as `PATH/stemdeck.json` in the folder the manager gives, saves on
/// `/nsm/client/save`, and tells the manager when the session has unsaved changes
/// (`/nsm/client/is_dirty`, `/nsm/client/is_clean`). A manager that goes away takes nothing with
/// it: messages to it are UDP datagrams that nobody reads. Control thread only.
public final class NSMClient {
  let socket: OSCSocket
  let manager: sockaddr_storage
  let managerLength: socklen_t
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
  public private(set) var open: Open?
  /// An open that arrived while running (a manager that switches sessions), for `service`.
  private var pendingOpens: [Open] = []
  /// The dirty state last told to the manager.
  private var toldDirty: Bool?

  /// The capabilities announced: unsaved changes are reported; no session switching (the
  /// JACK client name cannot change while running: the manager restarts stemdeck instead).
  public static let capabilities = ":dirty:"
  static let apiMajor: Int32 = 1, apiMinor: Int32 = 2
  // The API's error codes used here.
  static let errGeneral: Int32 = -1, errBadProject: Int32 = -9, errCreateFailed: Int32 = -10

  public init(url: String) throws(ControlError) {
    self.url = url
    guard let hostC = lo_url_get_hostname(url), let portC = lo_url_get_port(url) else {
      throw ControlError("NSM_URL '\(url)' is not an OSC URL such as osc.udp://host:port/")
    }
    defer { free(hostC); free(portC) }
    let host = String(cString: hostC), port = String(cString: portC)
    if let protoC = lo_url_get_protocol(url) {
      let proto = String(cString: protoC)
      free(protoC)
      guard proto == "udp" else { throw ControlError("NSM_URL '\(url)': only osc.udp:// managers are supported (got \(proto))") }
    }
    guard let (address, length) = OSCSocket.resolve(host: host, port: port) else {
      throw ControlError("NSM_URL '\(url)': cannot resolve \(host):\(port)")
    }
    manager = address
    managerLength = length
    socket = try OSCSocket(clientFor: Int32(address.ss_family))
  }

  public func close() { socket.close() }

  func send(_ path: String, _ arguments: [OSCArgument]) {
    socket.send(path, arguments, to: manager, length: managerLength)
  }

  /// `/nsm/server/announce s:name s:capabilities s:executable i:major i:minor i:pid`.
  public func announce(executable: String) {
    send(
      "/nsm/server/announce",
      [
        .string("stemdeck"), .string(Self.capabilities), .string(executable),
        .int(Self.apiMajor), .int(Self.apiMinor), .int(Int32(getpid()))
      ])
  }

  /// Waits for the manager's `/nsm/client/open` (answering nothing else yet); nil after `timeout`
  /// seconds, when the manager refused the announce (`refusal`), or on a signal.
  public func waitForOpen(timeout: Double, interrupted: () -> Bool) -> Open? {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline && refusal == nil && !interrupted() {
      var fds = pollfd(fd: socket.fd, events: Int16(POLLIN), revents: 0)
      _ = poll(&fds, 1, 50)
      for m in socket.receive().messages where fromManager(m) {
        if m.path == "/nsm/client/open" { if let o = parseOpen(m) { open = o; return o } } else { note(m) }
      }
    }
    return nil
  }

  func fromManager(_ m: OSCMessage) -> Bool {
    // Only the manager's address is listened to: another local program cannot make stemdeck save or open.
    OSCSocket.describe(m.source, m.sourceLength) == OSCSocket.describe(manager, managerLength)
  }

  func parseOpen(_ m: OSCMessage) -> Open? {
    guard m.arguments.count == 3, case .string(let path) = m.arguments[0], case .string(let name) = m.arguments[1],
      case .string(let id) = m.arguments[2], path.hasPrefix("/")
    else {
      send(
        "/error",
        [
          .string("/nsm/client/open"), .int(Self.errGeneral),
          .string("stemdeck: /nsm/client/open takes s:absolute path, s:display name, s:client id (got \(m.typeTags))")
        ])
      return nil
    }
    return Open(path: path, displayName: name, clientID: id)
  }

  /// Replies to the manager's messages that need no console (announce replies, unknown ones).
  func note(_ m: OSCMessage) {
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
        guard let o = parseOpen(m) else { continue }
        let r = console.captured { openSession(o, console) == nil }
        if !r.ok { console.write("error: " + r.errors.joined(separator: "; ")) }
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
