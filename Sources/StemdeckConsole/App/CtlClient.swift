import Foundation
import StemdeckControl
import StemdeckText
import StemdeckMixerView
import StemdeckRemote
import StemdeckLive

/// `stemdeck ctl [--name CLIENT | --socket PATH] 'CMD; CMD'`: sends each command to a running
/// stemdeck's control socket (`ControlServer`), prints its output lines on stdout and its errors
/// on stderr as `error: …`. Exit status 0, 1 when a command failed, 2 on a usage error or when
/// no stemdeck answers. `--json` prints each reply as the JSON line it came as; `--watch TOPIC`
/// (events, meters, meters@RATE, transport) then subscribes and prints what is pushed until the
/// connection ends or ctl is interrupted.
func runCtl(_ a: Arguments) -> Int32 {
  signal(SIGPIPE, SIG_IGN)
  let server = a.server ?? ProcessInfo.processInfo.environment["JACK_DEFAULT_SERVER"] ?? "default"
  // --socket, else the configuration's `control` (the path the live console listens on), else
  // the default path of the client and server.
  if a.list { return listStemdecks() }
  var path = (a.socket ?? a.control).map(Console.absolutePath) ?? ControlServer.defaultPath(client: a.clientName, server: server)
  // Nothing named (no --name, --server, --socket, configured path): when no stemdeck answers at
  // the default path but exactly one runs, that is the one meant.
  let named = a.socket != nil || a.control != nil || a.server != nil || a.clientName != Arguments().clientName
  if !named && !ControlServer.answers(path) {
    let running = ControlServer.running()
    if running.count == 1 {
      path = running[0].path
    } else if running.count > 1 {
      printError(
        "error: no stemdeck answers on \(path), and \(running.count) others run: \(running.map(\.description).joined(separator: ", ")); pick one with --name CLIENT, --server NAME or --socket PATH"
      )
      return 2
    }
  }
  let commands: [String]
  do { commands = try Tokenizer.commands(in: a.commands ?? "").map(commandLine) } catch {
    printError("error: \(error)")
    return 2
  }
  if commands.isEmpty && a.watch.isEmpty { printError("error: ctl: no commands given"); return 2 }
  if !a.watch.isEmpty && parseTopics(a.watch, rate: nil) == nil {
    printError("error: ctl --watch takes events, meters, meters@RATE or transport (got \(a.watch.joined(separator: " ")))")
    return 2
  }
  guard path.utf8.count < MemoryLayout.size(ofValue: sockaddr_un().sun_path) else {
    printError("error: the socket path \(path) is too long for a Unix socket (at most 107 bytes)")
    return 2
  }
  let timeout = a.timeout ?? 10
  let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
  guard fd >= 0 else { printError("error: socket(): \(String(cString: strerror(errno)))"); return 2 }
  defer { close(fd) }
  var address = ControlServer.address(path)
  // Non-blocking: a stemdeck whose queue of connections is full answers EAGAIN (a blocking
  // connect would hang there); tried again until the timeout.
  let connectDeadline = Date().addingTimeInterval(timeout)
  var connected: Int32 = -1
  while true {
    connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard connected != 0, errno == EAGAIN || errno == EINTR, Date() < connectDeadline else { break }
    var none = pollfd(fd: -1, events: 0, revents: 0)
    _ = poll(&none, 0, 10)
  }
  if connected != 0 && errno == EAGAIN {
    printError(
      "error: stemdeck on \(path) is busy: it took no connection within \(NumberFormat.plain(timeout)) s (--timeout SECONDS waits longer)")
    return 2
  }
  guard connected == 0 else {
    let why = String(cString: strerror(errno))
    let hint =
      a.socket == nil
      ? " (is a stemdeck with JACK client name '\(a.clientName)' running on server '\(server)'? --name CLIENT, --server NAME or --socket PATH picks another)"
      : ""
    printError("error: no stemdeck answers on \(path): \(why)\(hint)")
    return 2
  }
  var pending: [UInt8] = []
  var failed = false
  for (n, command) in commands.enumerated() {
    let id = n + 1
    let request = ControlServer.encode(["id": id, "cmd": command]) + "\n"
    guard writeAll(fd, Array(request.utf8)) else {
      printError("error: stemdeck on \(path) went away (sending '\(ValueParser.printable(command))')")
      return 2
    }
    let read = readReply(fd, &pending, within: replyTime(command, timeout: timeout, given: a.timeout != nil))
    guard case .line(let reply) = read else {
      if case .timedOut = read {
        printError(
          "error: stemdeck on \(path) is busy: no answer to '\(ValueParser.printable(command))' within \(NumberFormat.plain(timeout)) s (--timeout SECONDS waits longer)"
        )
      } else {
        printError("error: stemdeck on \(path) closed the connection before answering '\(ValueParser.printable(command))'")
      }
      return 2
    }
    guard let object = try? JSONSerialization.jsonObject(with: Data(reply)) as? [String: Any],
      let ok = object["ok"] as? Bool
    else {
      printError("error: a reply from \(path) is not a stemdeck reply: \(ValueParser.printable(String(decoding: reply, as: UTF8.self)))")
      return 2
    }
    if a.json {
      writeOut(String(decoding: reply, as: UTF8.self))
    } else {
      // One line each, whatever a name in it holds (a file name with a line feed cannot fake an `error:` line).
      for line in object["output"] as? [String] ?? [] { writeOut(lineSafe(line)) }
    }
    if !ok {
      failed = true
      if !a.json {
        printError("error: " + lineSafe(QueryJSON.joined(object["error"] as? String ?? "the command failed", object["hint"] as? String)))
      }
      break  // as script mode: the commands after a failed one are not run
    }
  }
  if failed || a.watch.isEmpty { return failed ? 1 : 0 }
  let request = ControlServer.encode(["id": "watch", "subscribe": a.watch]) + "\n"
  guard writeAll(fd, Array(request.utf8)) else { printError("error: stemdeck on \(path) went away"); return 2 }
  while case .line(let line) = readReply(fd, &pending, within: nil) {
    if a.json { writeOut(String(decoding: line, as: UTF8.self)); continue }
    guard let o = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else { continue }
    if let ok = o["ok"] as? Bool, !ok { printError("error: \(o["error"] as? String ?? "the subscription failed")"); return 1 }
    switch o["push"] as? String {
    case "event": writeOut("event: " + lineSafe(o["text"] as? String ?? o["event"] as? String ?? "?"))
    case "transport":
      writeOut("transport: \(o["state"] ?? "?") \(o["position"] ?? "")" + (o["solo"] as? Bool == true ? " (solo active)" : ""))
    case "meters":
      func peaks(_ m: Any?) -> String {
        ((m as? [String: Any])?["peak"] as? [Any] ?? []).map { ($0 as? NSNumber).map { NumberFormat.fixed($0.doubleValue, 1) } ?? "-inf" }
          .joined(separator: "/")
      }
      let stems = (o["stems"] as? [String: Any] ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key) \(peaks($0.value))" }
      writeOut((["master \(peaks(o["master"]))"] + stems).joined(separator: "  "))
    default: break
    }
  }
  return 0
}

/// `ctl --list`: one line per running stemdeck (a control socket in the default folder that
/// answers): its JACK client, its server and the socket. None: exit 2, saying where it looked.
func listStemdecks() -> Int32 {
  let running = ControlServer.running()
  guard !running.isEmpty else {
    printError("no stemdeck is running (no control socket answers in \(ControlServer.defaultFolder()))")
    return 2
  }
  for r in running { writeOut("\(r.client) on server \(r.server): \(r.path)") }
  return 0
}

/// One command's words as a command line the tokenizer reads back as the same words.
func commandLine(_ words: [String]) -> String {
  words.map { word in
    let plain =
      !word.isEmpty
      && word.unicodeScalars.allSatisfy {
        CharacterSet.alphanumerics.contains($0) || "._/:+-=@%,".unicodeScalars.contains($0)
      }
    if plain { return word }
    if !word.contains("'") { return "'" + word + "'" }
    return "\"" + word.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
  }.joined(separator: " ")
}

/// How long ctl waits for `command`'s reply: the timeout; for `wait SECONDS` that long more;
/// for `wait end` and `sfx wait` (no knowing how long) as long as it takes, unless --timeout
/// was given. nil: no limit.
func replyTime(_ command: String, timeout: Double, given: Bool) -> Double? {
  guard let words = try? Tokenizer.commands(in: command).first, let first = words.first?.lowercased() else { return timeout }
  if first == "wait", words.count == 2, let seconds = try? ValueParser.duration(words[1]) { return timeout + seconds }
  if first == "wait" || (first == "sfx" && words.dropFirst().first?.lowercased() == "wait") { return given ? timeout : nil }
  return timeout
}

private func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
  var offset = 0
  while offset < bytes.count {
    let n = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    if n < 0 && (errno == EINTR || errno == EAGAIN) {
      var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
      _ = poll(&p, 1, 100)
      continue
    }
    if n <= 0 { return false }
    offset += n
  }
  return true
}

enum ReplyRead { case line([UInt8]), ended, timedOut }

/// The next reply line (without its newline), waiting at most `seconds` (nil: as long as it takes).
private func readReply(_ fd: Int32, _ pending: inout [UInt8], within seconds: Double?) -> ReplyRead {
  var buffer = [UInt8](repeating: 0, count: 16 * 1024)
  let deadline = seconds.map { Date().addingTimeInterval($0) }
  while true {
    if let newline = pending.firstIndex(of: 10) {
      let line = Array(pending[..<newline])
      pending.removeSubrange(...newline)
      return .line(line)
    }
    var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    let left = deadline.map { Int32(max(0, min(1000, $0.timeIntervalSinceNow * 1000))) } ?? 1000
    if poll(&p, 1, left) == 0 {
      if let deadline, Date() >= deadline { return .timedOut }
      continue
    }
    let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
    if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }
    if n <= 0 { return .ended }
    pending += buffer[..<n]
  }
}
