import Foundation
import StemdeckControl

/// One remote request's command line on its way (issue 43, fair scheduling): run up to a `wait`,
/// parked while it waits (its front end polls it each step: `Console.advance`), then on, until
/// the line is done and its reply can be sent. The reply gathers what every step said: `output`,
/// errors, the data of each query it ran (`QueryJSON.data`) and a transport command's `frame`.
package final class RemoteRun {
  package let surface: Surface
  /// The commands not run yet.
  package var rest: ArraySlice<[String]>
  /// What the line waits for now (nil: nothing).
  package var waiting: Waiter?
  package var ok = true
  package var output: [String] = []
  package var errors: [String] = []
  /// Queries' data and the transport's frame, merged as the commands run.
  package var data: [String: Any] = [:]
  /// The line could not start at all (it does not parse, holds too many commands, or a command
  /// its front end may not run): the reply is this error.
  package var refused: String?

  package init(surface: Surface, commands: ArraySlice<[String]>) {
    self.surface = surface
    rest = commands
  }

  package var finished: Bool { waiting == nil && (rest.isEmpty || !ok) }

  /// Commands in one remote request, at most: checked before any runs, so one datagram or
  /// line cannot hold the control thread for seconds (`help;` twelve thousand times).
  package static let maxCommands = 64

  /// The reply without its id: `ok`; `output`; the data; for a failure `error` and, when the
  /// console's words carry one, `hint`.
  package var reply: [String: Any] {
    var reply = data
    reply["ok"] = ok
    if ok {
      reply["output"] = output
    } else {
      let (error, hint) = QueryJSON.split(errors.isEmpty ? "the command failed" : errors.joined(separator: "; "))
      reply["error"] = error
      if let hint { reply["hint"] = hint }
      if !output.isEmpty { reply["output"] = output }
    }
    return reply
  }
}

extension Console {
  /// Runs one command line as the control socket does and returns its reply without the id,
  /// waiting here when the line waits (`--json` script mode: the script is the operator's).
  package func remoteReply(to line: String) -> [String: Any] {
    let run = startRemote(line, from: .socket, parking: false)
    return run.reply
  }

  /// Starts a remote request's line: checked whole (it parses, at most `RemoteRun.maxCommands`
  /// commands, each one its front end may run: Access.swift), then run up to its first wait
  /// (parked when `parking`) or its end.
  package func startRemote(_ line: String, from surface: Surface, parking: Bool = true) -> RemoteRun {
    let commands: [[String]]
    do { commands = try Tokenizer.commands(in: line) } catch {
      return refusedRun(surface, "\(error)")
    }
    if quitRequested { return refusedRun(surface, "stemdeck is quitting") }
    if commands.count > RemoteRun.maxCommands {
      return refusedRun(
        surface,
        "the request holds \(commands.count) commands; at most \(RemoteRun.maxCommands) a request (send the rest in another)")
    }
    if let refusal = refusal(of: line, from: surface) { return refusedRun(surface, refusal) }
    let run = RemoteRun(surface: surface, commands: commands[...])
    _ = advance(run, parking: parking)
    return run
  }

  private func refusedRun(_ surface: Surface, _ error: String) -> RemoteRun {
    let run = RemoteRun(surface: surface, commands: [])
    run.ok = false
    run.errors = [error]
    return run
  }

  /// One step of a remote line: when its wait is over (or there is none), runs on to the next
  /// wait or the end. True once it is finished. A `quit` (from anyone) ends it with an error.
  package func advance(_ run: RemoteRun, parking: Bool = true) -> Bool {
    if let waiter = run.waiting {
      if quitRequested {
        run.waiting = nil
        run.ok = false
        run.errors.append("stemdeck is quitting")
        return true
      }
      do {
        guard try waiter.poll(self) else { return false }
      } catch {
        run.waiting = nil
        run.ok = false
        run.errors.append("\(error)")
        return true
      }
      run.waiting = nil
    }
    guard run.ok, !run.rest.isEmpty else { return true }
    // A request run inside another's `wait` (a socket request during a script's) has its own
    // data: the outer one's observer is set aside, and back when this one ends.
    let outer = afterCommand
    afterCommand = { [unowned self] words, ok in
      guard ok, let first = words.first, let spec = CommandTable.lookup(first.lowercased()) else { return }
      if QueryJSON.transportCommands.contains(spec.name), let frame = self.appliedFrame { run.data["frame"] = frame }
      if let data = QueryJSON.data(for: spec.name, Array(words.dropFirst()), self) {
        run.data.merge(data) { _, new in new }
      }
    }
    let outerParkable = parkable
    parkable = parking
    defer {
      afterCommand = outer
      parkable = outerParkable
    }
    var rest: ArraySlice<[String]> = []
    let r = from(run.surface) {
      captured {
        let step = execute(commands: run.rest, stopOnError: true)
        rest = step.rest
        return step.ok
      }
    }
    run.output += r.output
    run.errors += r.errors
    run.ok = run.ok && r.ok
    run.rest = rest
    if let waiter = parked {
      parked = nil
      run.waiting = waiter
      return false
    }
    return run.finished
  }
}

extension Console {
  /// Runs `body` (one command) with its output captured, as the control socket does: no terminal
  /// width, and `watch` answered with one look at the meters. Returns whether it succeeded, the
  /// output lines, and the error lines (without "error: ").
  package func captured(_ body: () -> Bool) -> (ok: Bool, output: [String], errors: [String]) {
    var lines: [String] = []
    let columns = terminalColumns
    let watchBefore = watchRequested
    terminalColumns = nil
    let ok = capturingOutput({ lines.append($0) }, body)
    terminalColumns = columns
    if watchRequested && !watchBefore {
      watchRequested = false
      if interactive { lines += Display.meters(self, only: nil) }
    }
    let errors = lines.filter { $0.hasPrefix("error: ") }.map { String($0.dropFirst("error: ".count)) }
    return (ok, lines.filter { !$0.hasPrefix("error: ") }, errors)
  }

  /// Runs one command given as words, output captured (`captured`).
  package func runCaptured(_ words: [String]) -> (ok: Bool, output: [String], errors: [String]) {
    captured {
      do { try run(words); return true } catch {
        write("error: \(error)")
        return false
      }
    }
  }
}
