import Foundation
import StemdeckTestSupport
import Testing

// Autopause live: the master's connections taken away by another client, or its peer quitting,
// pause playback when the option is on and not when it is off.

extension JackIntegrationTests {
  @Test(
    "autopause on: another client disconnecting the master pauses, and the disconnection sticks")
  func autoPauseOnExternalDisconnect() async throws {
    let dir = try IntegrationTempDir()
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let deck = try await deckPlayingToSystem(server, dir, autopause: true)
    defer { deck.kill() }

    let mark = deck.lineCount
    try await disconnectMasterFromSystem(server)
    let disconnected = monotonicSeconds()
    let (paused, state) = try await waitForState(deck, "paused", timeout: 2)
    #expect(paused, "still \(state) 2 s after the master lost its connections\n\(deck.transcript)")
    if paused { print("auto-paused within \(String(format: "%.2f", monotonicSeconds() - disconnected)) s") }
    let events = Self.events(of: deck, since: mark)
    #expect(events.contains { $0.contains("lost") && $0.contains("connection") }, "events: \(events)")
    // The user's disconnection is respected, not healed back.
    let graph = try await server.connections()
    #expect(graph["stemdeck:master_L"] == [] && graph["stemdeck:master_R"] == [], "reconnected behind the user's back: \(graph)")
    #expect(try await deck.finish() == 0, "\(deck.transcript)")
  }

  @Test("autopause on: the master's peer client quitting pauses playback")
  func autoPauseWhenPeerQuits() async throws {
    let dir = try IntegrationTempDir()
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let deck = try await loopingDeck(server, dir)
    defer { deck.kill() }
    // The master feeds another client (jack_capture with manual connections), which then quits.
    let peer = try server.startCapture(ports: [], seconds: 60, to: dir.file("peer.wav"), hookDir: dir, manualConnections: true)
    defer { peer.child.terminate(grace: 2) }
    let registered = try await eventually(timeout: 5, interval: 0.1) {
      try await server.ports().contains("jack_capture:input2")
    }
    try #require(registered, "jack_capture did not register its inputs; log:\n\(peer.log)")
    try await deck.run("autopause on")
    try await deck.run("connect master_L jack_capture:input1")
    try await deck.run("connect master_R jack_capture:input2")
    try await startPlaying(deck)

    let mark = deck.lineCount
    peer.child.send(signal: SIGINT)
    #expect(await peer.child.waitForExit(timeout: 5) != nil, "jack_capture did not quit on SIGINT")
    let quit = monotonicSeconds()
    let (paused, state) = try await waitForState(deck, "paused", timeout: 2)
    #expect(paused, "still \(state) 2 s after the master's peer quit\n\(deck.transcript)")
    if paused { print("auto-paused within \(String(format: "%.2f", monotonicSeconds() - quit)) s of the peer quitting") }
    let events = Self.events(of: deck, since: mark)
    #expect(events.contains { $0.contains("lost") && $0.contains("connection") }, "events: \(events)")
    #expect(try await deck.finish() == 0, "\(deck.transcript)")
  }

  @Test("autopause off: another client disconnecting the master does not pause")
  func autoPauseOff() async throws {
    let dir = try IntegrationTempDir()
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let deck = try await deckPlayingToSystem(server, dir, autopause: false)
    defer { deck.kill() }
    let mark = deck.lineCount
    try await disconnectMasterFromSystem(server)
    try await deck.run("wait 1")
    let after = try await deck.status()
    #expect(after["state"] == "playing", "autopause off, yet: \(after)")
    let events = Self.events(of: deck, since: mark)
    #expect(!events.contains { $0.contains("paused") }, "events: \(events)")
    #expect(try await deck.finish() == 0, "\(deck.transcript)")
  }

  /// A looping deck with autopause on or off, its master connected to the dummy system
  /// playback ports, playing.
  func deckPlayingToSystem(_ server: PrivateJackServer, _ dir: IntegrationTempDir, autopause: Bool) async throws -> StemdeckProcess {
    let deck = try await loopingDeck(server, dir)
    do {
      try await deck.run("autopause \(autopause ? "on" : "off")")
      try await deck.run("connect master_L system:playback_1")
      try await deck.run("connect master_R system:playback_2")
      try await startPlaying(deck)
    } catch {
      deck.kill()
      throw error
    }
    return deck
  }

  /// Another client (jack_disconnect) takes both master connections to the system ports away.
  func disconnectMasterFromSystem(_ server: PrivateJackServer) async throws {
    try await server.disconnect("stemdeck:master_L", "system:playback_1")
    try await server.disconnect("stemdeck:master_R", "system:playback_2")
  }

  /// The events `deck` printed after line `mark`.
  static func events(of deck: StemdeckProcess, since mark: Int) -> [String] {
    deck.lines.dropFirst(mark).filter { $0.hasPrefix("event: ") }
  }
}
