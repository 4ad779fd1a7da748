// Show controls outside the REPL (issue 35, item 7): a footswitch or pad on JACK MIDI and an OSC
// surface move through the setlist (next, prev, goto), stop, and ride the master fader; OSC
// replies and pushes reach a return URL the client names, as with SooperLooper, and never a
// third party.

import Foundation
import StemdeckTestSupport
import Testing

@Suite("show controls: MIDI and OSC next, prev, goto, stop and the master; OSC return URLs", .serialized, .timeLimit(.minutes(2)))
struct ShowControlTests {
  /// The MIDI section every song of the test setlist carries (mappings belong to a session
  /// until the rig layer of issue 35, item 2, holds them across songs).
  static let midi = """
    { "mappings" : [
        { "source" : "note", "number" : 60, "action" : "next" },
        { "source" : "note", "number" : 59, "action" : "prev" },
        { "source" : "note", "number" : 58, "action" : "stop" },
        { "source" : "cc", "number" : 15, "action" : "volume", "target" : "master" } ] }
    """

  /// Three songs (one.json, two.json, three.json: a looping constant each) and show.txt listing them.
  static func setlist(in dir: IntegrationTempDir) throws -> String {
    for name in ["one", "two", "three"] {
      try SetlistIntegrationTests.writeConstant(dir.file("\(name).wav"), value: 0.25, seconds: 2)
      let song = """
        { "format" : "stemdeck-session", "version" : 3,
          "stems" : [ { "name" : "x", "file" : "\(name).wav", "loops" : -1 } ],
          "midi" : \(midi) }
        """
      try song.write(toFile: dir.file("\(name).json"), atomically: true, encoding: .utf8)
    }
    try "one.json\ntwo.json\nthree.json\n".write(toFile: dir.file("show.txt"), atomically: true, encoding: .utf8)
    return dir.file("show.txt")
  }

  /// The current song as `setlist` marks it ("▶ 2. two"), waiting up to 10 s for `want`.
  static func waitForSong(_ deck: StemdeckProcess, _ want: String) async throws -> String {
    var current = ""
    _ = try await eventually(timeout: 10) {
      current = try await deck.run("setlist").first { $0.hasPrefix("▶") } ?? "none"
      return current == want
    }
    return current
  }

  @Test(
    "MIDI: notes mapped to next, prev and stop move through the setlist and stop the show, song after song; a CC on vol master rides the master fader"
  )
  func midiShowControls() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir("stemdeck-show")
    defer { dir.remove() }
    let show = try Self.setlist(in: dir)
    let deck = try StemdeckProcess(server: server, session: dir.file("one.json"))
    defer { deck.kill() }
    try await deck.run("setlist \(show)")
    let probe = try await MidiProbe(server: server)
    defer { probe.stop() }
    try await probe.connect("probe-send:out", "stemdeck:midi_in")
    try await deck.run("play")

    // The footswitch: next twice (the mapping, and midi_in's connection, carry across songs),
    // then prev.
    for (note, want) in [(60, "▶ 2. two"), (60, "▶ 3. three"), (59, "▶ 2. two")] {
      _ = try await probe.send([(0, [0x90, UInt8(note), 100]), (1, [0x80, UInt8(note), 0])])
      let now = try await Self.waitForSong(deck, want)
      #expect(now == want, "note \(note): \(now)\n\(deck.transcript)")
    }
    #expect(deck.events.contains { $0.contains("midi next: song 3/3: three") }, "\(deck.transcript)")
    // The master fader: CC 100 is 0 dB (the fader picks it up there), 50 is -17.5 dB.
    _ = try await probe.send([(0, [0xB0, 15, 100])])
    _ = try await probe.send([(0, [0xB0, 15, 50])])
    var master = ""
    _ = try await eventually(timeout: 10) {
      master = try await deck.status()["master"] ?? ""
      return master.contains("-17.5 dB")
    }
    #expect(master.contains("-17.5 dB"), "master after CC 15 at 50: \(master)\n\(deck.transcript)")
    // Stop.
    #expect(try await deck.status()["state"] == "playing", "\(deck.transcript)")
    _ = try await probe.send([(0, [0x90, 58, 100])])
    var state = ""
    _ = try await eventually(timeout: 10) {
      state = try await deck.status()["state"] ?? ""
      return state == "stopped"
    }
    #expect(state == "stopped", "note 58 (stop): \(state)\n\(deck.transcript)")
    let maps = try await deck.run("midi maps")
    #expect(maps.contains("cc 15 volume master") && maps.contains("note 60 next"), "\(maps)")
    #expect(!deck.lines.contains { $0.hasPrefix("error") }, "\(deck.transcript)")
    #expect(try await deck.finish() == 0, "\(deck.transcript)")
  }

  @Test(
    "OSC: oscsend's next, prev and goto move through the setlist; with a return URL oscdump gets the replies and the pushes; a URL naming another host is refused"
  )
  func oscShowControls() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir("stemdeck-show")
    defer { dir.remove() }
    let show = try Self.setlist(in: dir)
    let port = try RemoteControlTests.freeUDPPort()
    let deck = try StemdeckProcess(server: server, session: dir.file("one.json"), extra: ["--osc", String(port)])
    defer { deck.kill() }
    try await deck.run("setlist \(show)")
    let listen = try RemoteControlTests.freeUDPPort()
    let dump = try ChildProcess("oscdump", ["-L", String(listen)])
    defer { dump.terminate(grace: 1) }
    let url = "osc.udp://localhost:\(listen)/"
    func osc(_ arguments: [String]) async throws {
      let r = try await runTool("oscsend", ["localhost", String(port)] + arguments, timeout: 10)
      #expect(r.status == 0, "oscsend \(arguments): \(r.text)")
    }
    func dumped(_ text: String) async -> Bool {
      await eventually(timeout: 10) { dump.stdoutLines.contains { $0.contains(text) } }
    }

    // oscdump is listening once a ping's pong reaches it.
    var ponged = false
    for _ in 0..<50 where !ponged {
      try await osc(["/stemdeck/ping", "s", url])
      ponged = await eventually(timeout: 0.2) { dump.stdoutLines.contains { $0.contains("pong") } }
    }
    #expect(ponged, "no pong at the return URL: \(dump.stdoutLines)\n\(deck.transcript)")
    try await osc(["/stemdeck/subscribe", "ss", "events", url])
    #expect(await dumped("subscribed events for 127.0.0.1:\(listen)"), "\(dump.stdoutLines)")

    try await osc(["/stemdeck/next"])
    var now = try await Self.waitForSong(deck, "▶ 2. two")
    #expect(now == "▶ 2. two", "after /stemdeck/next: \(now)\n\(deck.transcript)")
    try await osc(["/stemdeck/goto", "i", "3"])
    now = try await Self.waitForSong(deck, "▶ 3. three")
    #expect(now == "▶ 3. three", "after /stemdeck/goto 3: \(now)\n\(deck.transcript)")
    try await osc(["/stemdeck/song/prev", "i", "1"])
    now = try await Self.waitForSong(deck, "▶ 2. two")
    #expect(now == "▶ 2. two", "after /stemdeck/song/prev: \(now)\n\(deck.transcript)")
    try await osc(["/stemdeck/goto", "s", "one"])
    now = try await Self.waitForSong(deck, "▶ 1. one")
    #expect(now == "▶ 1. one", "after /stemdeck/goto one: \(now)\n\(deck.transcript)")
    // A refusal comes back to the return URL too, and changes nothing.
    try await osc(["/stemdeck/goto", "is", "9", url])
    #expect(await dumped("song number must be from 1 to 3"), "\(dump.stdoutLines)\n\(deck.transcript)")
    // The subscription's events (an event the console pushes: a stem's end is not due here, so
    // an effect that loads).
    try WAV.writeSine(dir.file("kick.wav"), channels: 1, sampleRate: 48000, seconds: 0.2, frequency: 200, amplitude: 0.5)
    try await deck.run("sfx load kick \(dir.file("kick.wav")); sfx wait kick")
    #expect(await dumped("effectLoaded"), "no event pushed to the return URL: \(dump.stdoutLines)\n\(deck.transcript)")

    // Another host is refused: the refusal goes to the sender (a Python peer that can read it),
    // nothing to the host named.
    let refused = try await runTool(
      "/usr/bin/python3",
      [
        "-c",
        """
        import liblo, sys
        srv = liblo.Server()
        got = []
        srv.add_method("/stemdeck/reply", "iss", lambda path, args: got.append(args))
        srv.send(liblo.Address("127.0.0.1", \(port)), "/stemdeck/ping", "osc.udp://10.9.8.7:\(listen)/")
        for _ in range(50):
            if got: break
            srv.recv(100)
        print(got)
        """
      ], timeout: 20)
    #expect(
      refused.text.contains("[0, '/stemdeck/ping',") && refused.text.contains("not to 10.9.8.7"),
      "\(refused.text)\n\(deck.transcript)")
    #expect(try await deck.finish() == 0, "\(deck.transcript)")
  }
}
