import Foundation
import StemdeckTestSupport
import Testing

// The bus words in a real terminal (tmux): Tab completes `route`, `bus`'s keywords and bus names.
extension TerminalSessionTests {
  @Test("Tab completes the bus words and names: rou → route, bus r → remove, route short d → drums_bus")
  func busCompletion() async throws {
    let run = try await atPrompt(columns: 80, rows: 24)
    defer { run.close() }
    let term = run.term
    try await term.type("bus add drums_bus")
    try await term.send("Enter")
    try await term.check(try await term.waitFor("bus 'drums_bus' added, feeding the master"), "bus add: ")
    try await term.type("rou")
    try await term.send("Tab", "Tab")
    // Two commands start so (route, routes): the first Tab completes to 'route', the second lists.
    try await term.check(try await term.waitFor("routes"), "route listed: ")
    try await term.send("C-u")
    try await term.type("route short d")
    try await term.send("Tab")
    try await term.check(try await term.waitForCursorRow("stemdeck> route short drums_bus"), "bus name completed: ")
    try await term.send("Enter")
    try await term.check(try await term.waitFor("short → drums_bus"), "route ran: ")
    try await term.type("bus r")
    try await term.send("Tab")
    try await term.check(try await term.waitForCursorRow("stemdeck> bus remove"), "bus keyword completed: ")
    try await term.type(" drums_bus")
    try await term.send("Enter")
    try await term.check(try await term.waitFor("bus 'drums_bus' removed; short now feeds the master"), "bus remove: ")
  }
}
