// A JACK server that stops answering (issue 43, item 17): a private jackd stopped for real with
// SIGSTOP, as a wedged server behaves (it takes connections on its socket and never replies).
// Before, a stemdeck started against it hung in jack_client_open with no word, deaf to SIGTERM;
// one already running hung in its next request. docs/architecture.md, *A server that does not
// answer*.

import Foundation
import StemdeckTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("a JACK server that stops answering", .serialized, .timeLimit(.minutes(2)))
struct StuckServerTests {
  @Test(
    "jackd stopped (SIGSTOP): a stemdeck starting says the server does not answer and exits 1 within 15 s; one already running reports it once as an event, refuses JACK commands at once, its console answers, and it goes on when the server is resumed"
  )
  func stoppedServer() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let deck = try StemdeckProcess(server: server, extra: ["--keep-going"])
    defer { deck.kill() }
    try await deck.run("echo up")
    let pid = try #require(server.pid)
    #expect(kill(pid, SIGSTOP) == 0)
    // Resumed before the server is stopped (defers run last first), whatever happens below.
    defer { kill(pid, SIGCONT) }

    // Start-up: the message names the server, and the exit comes within the open's bound (5 s).
    let started = monotonicSeconds()
    let late = try StemdeckProcess(server: server)
    defer { late.kill() }
    let status = await late.child.waitForExit(timeout: 15)
    let took = monotonicSeconds() - started
    await late.child.waitForStreams(timeout: 2)
    #expect(status == 1, "exit \(status.map(String.init) ?? "none within 15 s") after \(twoDecimals(took)) s\n\(late.transcript)")
    #expect(
      late.stderrLines.contains { $0.hasPrefix("error: JACK server '\(server.name)' does not answer") }, "\(late.transcript)")

    // Live: the first request waits its bound and fails, the event is said once, later JACK
    // commands are refused at once, and the console answers.
    let reply = try await deck.attempt("connect master_L system:playback_1", timeout: 15)
    #expect(reply.contains { $0.hasPrefix("error: JACK server '\(server.name)' does not answer") }, "\(deck.transcript)")
    let asked = monotonicSeconds()
    let again = try await deck.attempt("connect master_R system:playback_2", timeout: 15)
    #expect(again.contains { $0.contains("does not answer") }, "\(again)")
    #expect(try await deck.attempt("echo alive") == ["alive"])
    let refusedIn = monotonicSeconds() - asked
    #expect(refusedIn < 2, "the second request and an echo took \(twoDecimals(refusedIn)) s")
    #expect(deck.eventCount("JACK server '\(server.name)' does not answer") == 1, "\(deck.transcript)")
    let said = try await deck.attempt("status")
    #expect(said.contains { $0.hasPrefix("server: \(server.name) (connected, not answering") }, "\(said)")

    // Resumed: said once, and JACK commands work again.
    #expect(kill(pid, SIGCONT) == 0)
    let back = try await deck.waitForEvents("JACK server '\(server.name)' answers again", count: 1, timeout: 10)
    #expect(back, "\(deck.transcript)")
    try await deck.run("connect master_L system:playback_1")
    #expect(try await server.connections()["stemdeck:master_L"]?.contains("system:playback_1") == true)
    print(
      "a stopped server: a starting stemdeck exited after \(twoDecimals(took)) s; a running one refused a request again in \(twoDecimals(refusedIn)) s"
    )
  }
}
