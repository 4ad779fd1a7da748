// A setlist song change live: the real stemdeck against a private jackd, recorded by
// jack_capture through the connections the sessions themselves ask for.

import Foundation
import StemdeckAudioFile
import Testing

@Suite("setlist song changes against a private JACK server", .serialized, .timeLimit(.minutes(2)))
struct SetlistIntegrationTests {
  /// A constant-valued mono float WAV of `seconds`.
  static func writeConstant(_ path: String, value: Float, seconds: Double) throws {
    let frames = Int(seconds * 48000)
    let data = [Float](repeating: value, count: frames)
    let writer = try SoundFileWriter(path: path, format: .wavFloat, sampleRate: 48000, channelCount: 1)
    try data.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frameCount: frames) }
    writer.flush()
  }

  static func song(file: String, connections: String) -> String {
    """
    {
      "format" : "stemdeck-session",
      "version" : 1,
      "connections" : { \(connections) },
      "stems" : [ { "name" : "x", "file" : "\(file)", "pan" : -1, "loops" : -1 } ]
    }
    """
  }

  @Test(
    "gapless next, live: the captured master goes from song 1's last frame to song 2's first; song 2's connections are restored and master_L never drops"
  )
  func gaplessLive() async throws {
    let dir = try IntegrationTempDir()
    defer { dir.remove() }
    try Self.writeConstant(dir.file("one.wav"), value: 0.25, seconds: 2)
    try Self.writeConstant(dir.file("two.wav"), value: 0.5, seconds: 2)
    try Self.song(file: "one.wav", connections: #""master_L" : [ "jack_capture:input1" ]"#)
      .write(toFile: dir.file("one.json"), atomically: true, encoding: .utf8)
    try Self.song(file: "two.wav", connections: #""master_L" : [ "jack_capture:input1" ], "master_R" : [ "jack_capture:input2" ]"#)
      .write(toFile: dir.file("two.json"), atomically: true, encoding: .utf8)
    try "one.json\ntwo.json\n".write(toFile: dir.file("show.txt"), atomically: true, encoding: .utf8)

    let server = try await PrivateJackServer()
    defer { server.stop() }
    let capture = try server.startCapture(ports: [], seconds: 5, to: dir.file("live.wav"), hookDir: dir, manualConnections: true)
    defer { capture.child.terminate(grace: 2) }
    let registered = try await eventually(timeout: 5, interval: 0.1) { try await server.ports().contains("jack_capture:input2") }
    try #require(registered, "jack_capture did not register its inputs; log:\n\(capture.log)")

    let deck = try StemdeckProcess(server: server)
    defer { deck.kill() }
    let opened = try await deck.run("setlist \(dir.file("show.txt"))")
    #expect(answer(opened) == "song 1/2: one", "\(deck.transcript)")
    var graph = try await server.connections()
    #expect(graph["stemdeck:master_L"] == ["jack_capture:input1"], "\(graph)")
    #expect(graph["stemdeck:master_R"] == [], "\(graph)")
    try await deck.run("play")
    try await deck.run("wait 1")
    let switched = try await deck.run("next")
    #expect(answer(switched) == "song 2/2: two (gapless)", "\(deck.transcript)")
    graph = try await server.connections()
    #expect(graph["stemdeck:master_L"] == ["jack_capture:input1"], "\(graph)")
    #expect(graph["stemdeck:master_R"] == ["jack_capture:input2"], "song 2's connection restored: \(graph)")
    try await deck.run("wait 1")
    _ = try await capture.finish(timeout: 15)
    #expect(try await deck.finish() == 0, "\(deck.transcript)")

    let live = try readAudio(dir.file("live.wav"))
    let left = (0..<live.frames).map { live.sample($0, 0) }
    let first = try #require(left.firstIndex(of: 0.25), "song 1 never reached the capture")
    let lastOne = try #require(left.lastIndex(of: 0.25))
    let firstTwo = try #require(left.firstIndex(of: 0.5), "song 2 never reached the capture")
    #expect(firstTwo == lastOne + 1, "\(firstTwo - lastOne - 1) frames between song 1's last frame and song 2's first")
    let end = try #require(left.lastIndex(of: 0.5))
    let stray = left[first...end].filter { $0 != 0.25 && $0 != 0.5 }.count
    #expect(stray == 0, "\(stray) frames from neither song between the first and the last")
    print("setlist live: song 1 from frame \(first), switch at \(firstTwo), song 2 until \(end); frames from neither: \(stray)")
  }

  @Test(
    "crossfade next, live: equal-power curves in the capture; the old song's direct out stays connected during the fade, then goes, and is not saved with the new song"
  )
  func crossfadeLive() async throws {
    let dir = try IntegrationTempDir()
    defer { dir.remove() }
    try Self.writeConstant(dir.file("one.wav"), value: 0.25, seconds: 3)
    try Self.writeConstant(dir.file("two.wav"), value: 0.5, seconds: 3)
    // Song 1: x hard left into the master, plus "lead" on its own ports (direct out) connected
    // to system:playback_1; it crossfades into the next song over 0.5 s.
    try """
    {
      "format" : "stemdeck-session",
      "version" : 1,
      "options" : { "songChange" : "crossfade", "crossfadeSeconds" : 0.5 },
      "connections" : { "master_L" : [ "jack_capture:input1" ], "master_R" : [ "jack_capture:input2" ],
                        "lead_L" : [ "system:playback_1" ] },
      "stems" : [ { "name" : "x", "file" : "one.wav", "pan" : -1, "loops" : -1 },
                  { "name" : "lead", "file" : "one.wav", "loops" : -1, "directOut" : true } ]
    }
    """.write(toFile: dir.file("one.json"), atomically: true, encoding: .utf8)
    try """
    {
      "format" : "stemdeck-session",
      "version" : 1,
      "connections" : { "master_L" : [ "jack_capture:input1" ], "master_R" : [ "jack_capture:input2" ] },
      "stems" : [ { "name" : "x", "file" : "two.wav", "pan" : 1, "loops" : -1 } ]
    }
    """.write(toFile: dir.file("two.json"), atomically: true, encoding: .utf8)
    try "one.json\ntwo.json\n".write(toFile: dir.file("show.txt"), atomically: true, encoding: .utf8)

    let server = try await PrivateJackServer()
    defer { server.stop() }
    let capture = try server.startCapture(ports: [], seconds: 5, to: dir.file("live.wav"), hookDir: dir, manualConnections: true)
    defer { capture.child.terminate(grace: 2) }
    let registered = try await eventually(timeout: 5, interval: 0.1) { try await server.ports().contains("jack_capture:input2") }
    try #require(registered, "jack_capture did not register its inputs; log:\n\(capture.log)")

    let deck = try StemdeckProcess(server: server)
    defer { deck.kill() }
    try await deck.run("setlist \(dir.file("show.txt"))")
    let wired = try await server.waitForConnection("stemdeck:lead_L", timeout: 5) { $0 == "system:playback_1" }
    let graph = try await server.connections()
    #expect(wired, "lead_L was not connected: \(graph)")
    try await deck.run("play")
    try await deck.run("wait 1")
    let switched = try await deck.run("next")
    #expect(answer(switched) == "song 2/2: two (crossfade 0.5 s)", "\(deck.transcript)")
    // During the fade the old song's lead still reaches its peer.
    let during = try await server.connections()
    #expect(during["stemdeck:lead_L"] == ["system:playback_1"], "\(during)")
    try await deck.run("wait 1.5")
    let gone = try await eventually(timeout: 3, interval: 0.05) { try await server.ports().contains("stemdeck:lead_L") == false }
    #expect(gone, "the old song's direct out is still registered after its fade")
    try await deck.run("save \(dir.file("saved.json"))")
    let saved = try String(contentsOfFile: dir.file("saved.json"), encoding: .utf8)
    #expect(!saved.contains("lead"), "the old song's routing leaked into the new song:\n\(saved)")
    let captured = try await capture.finish(timeout: 15)
    #expect(try await deck.finish() == 0, "\(deck.transcript)")

    let live = try readAudio(dir.file("live.wav"))
    let left = (0..<live.frames).map { live.sample($0, 0) }, right = (0..<live.frames).map { live.sample($0, 1) }
    // The switch frame: sin(0) = 0 there, so the right channel starts one frame later.
    let p = try #require(right.firstIndex { $0 != 0 }, "song 2 never reached the capture") - 1
    let n = 24000
    try #require(p + n + 4800 <= live.frames, "the capture ends too early (switch at \(p) of \(live.frames))")
    var worst = 0.0
    for k in 0..<n {
      let angle = Double.pi / 2 * Double(k) / Double(n)
      worst = max(worst, abs(Double(left[p + k]) - 0.25 * cos(angle)), abs(Double(right[p + k]) - 0.5 * sin(angle)))
    }
    // Exact to 1e-6 when the capture itself was clean; a period jack_capture lost or repeated
    // (its own xrun count, on a busy machine) shifts the curve, and is not stemdeck's.
    #expect(worst < 1e-6 || captured.xruns > 0, "deviation from the equal-power curves: \(worst) (jack_capture xruns \(captured.xruns))")
    let start = try #require(left.firstIndex(of: 0.25))
    #expect(left[start..<p].allSatisfy { $0 == 0.25 }, "song 1 unbroken up to the switch")
    #expect(
      left[(p + n)...].allSatisfy { abs($0) < 1e-15 } && right[(p + n)...].allSatisfy { $0 == 0.5 },
      "after the fade: song 1 silent, song 2 at full gain")
    print("setlist crossfade live: switch at frame \(p), fade \(n) frames, max deviation \(worst)")
  }

  @Test(
    "advance play, live, in script mode: song 2 follows song 1 on its own, 'wait end' returns at each song's end, and the show ends after the last"
  )
  func advancePlayLive() async throws {
    let dir = try IntegrationTempDir()
    defer { dir.remove() }
    try Self.writeConstant(dir.file("one.wav"), value: 0.25, seconds: 0.5)
    try Self.writeConstant(dir.file("two.wav"), value: 0.5, seconds: 0.5)
    for (name, file) in [("one", "one.wav"), ("two", "two.wav")] {
      try Self.song(file: file, connections: #""master_L" : [ "jack_capture:input1" ]"#)
        .replacingOccurrences(of: #""loops" : -1"#, with: #""loops" : 0"#)
        .write(toFile: dir.file("\(name).json"), atomically: true, encoding: .utf8)
    }
    try "one.json\ntwo.json\n".write(toFile: dir.file("show.txt"), atomically: true, encoding: .utf8)
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let capture = try server.startCapture(ports: [], seconds: 4, to: dir.file("live.wav"), hookDir: dir, manualConnections: true)
    defer { capture.child.terminate(grace: 2) }
    let registered = try await eventually(timeout: 5, interval: 0.1) { try await server.ports().contains("jack_capture:input1") }
    try #require(registered, "jack_capture did not register its inputs; log:\n\(capture.log)")

    let deck = try StemdeckProcess(
      server: server,
      extra: [
        "-c", "setlist \(dir.file("show.txt")); advance play; wait 0.3; play; wait end; wait end"
      ])
    defer { deck.kill() }
    let status = await deck.child.waitForExit(timeout: 20)
    #expect(status == 0, "exit status \(String(describing: status))\n\(deck.transcript)")
    let lines = deck.lines
    let song2 = lines.firstIndex(of: "song 2/2: two")
    let ends = lines.indices.filter { lines[$0] == "event: all stems finished" }
    let showEnd = lines.firstIndex(of: "event: end of the setlist: song 2/2 (two) has finished")
    #expect(song2 != nil && ends.count == 2 && showEnd != nil, "\(deck.transcript)")
    if let song2, ends.count == 2, let showEnd {
      // The second 'wait end' would fail on a stopped transport: song 2 played on its own.
      #expect(ends[0] < song2 && song2 < ends[1] && ends[1] < showEnd, "\(deck.transcript)")
    }

    _ = try await capture.finish(timeout: 15)
    let live = try readAudio(dir.file("live.wav"))
    let left = (0..<live.frames).map { live.sample($0, 0) }
    let lastOne = try #require(left.lastIndex(of: 0.25), "song 1 never reached the capture")
    let firstTwo = try #require(left.firstIndex(of: 0.5), "song 2 never reached the capture")
    let heardTwo = left.filter { $0 == 0.5 }.count
    let startTwo = left[(lastOne + 1)...].firstIndex { $0 != 0 } ?? -1
    let gap = Double(firstTwo - lastOne - 1) / 48000
    print(
      "advance play live: \(String(format: "%.1f", gap * 1000)) ms of silence between song 1's last frame and song 2's first; song 2 heard for \(heardTwo) frames"
    )
    #expect(firstTwo > lastOne && gap < 0.25, "song 2 started \(gap) s after song 1's end")
    #expect(
      startTwo == firstTwo, "song 2 faded in (first samples \(left[max(0, startTwo)..<(max(0, startTwo) + 3)])): it should start as written"
    )
    #expect(heardTwo >= 23000, "song 2 (24000 frames) heard for only \(heardTwo) frames")
  }
}

extension SetlistIntegrationTests {
  /// Issue 35, item 2: the rig outlives the songs. A live input added during song 1 and fed by a
  /// JACK peer (the python tone as the singer), and a send, are there with their JACK ports and
  /// connections after a gapless and a crossfaded `next` while playing, and the mic is still heard
  /// on the master (the songs' stems are silent: only the mic can reach it); the master stays
  /// connected throughout.
  @Test(
    "a mic input fed by a JACK peer and a reverb send made in song 1 keep their ports, connections and sound through two live song changes"
  )
  func rigThroughSongChanges() async throws {
    let dir = try IntegrationTempDir()
    defer { dir.remove() }
    for (i, name) in ["one", "two", "three"].enumerated() {
      try Self.writeConstant(dir.file("\(name).wav"), value: Float(i + 1) * 0.1, seconds: 2)
      let change = i == 1 ? #", "options" : { "songChange" : "crossfade", "crossfadeSeconds" : 0.1 }"# : ""
      try """
      { "format" : "stemdeck-session", "version" : 3, "connections" : { "master_L" : [ "system:playback_1" ] }\(change),
        "stems" : [ { "name" : "x\(i)", "file" : "\(name).wav", "loops" : -1, "volume" : 0 } ] }
      """.write(toFile: dir.file("\(name).json"), atomically: true, encoding: .utf8)
    }
    try "one.json\ntwo.json\nthree.json\n".write(toFile: dir.file("show.txt"), atomically: true, encoding: .utf8)
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let tone = try await JackIntegrationTests.startTonePeer(server, dir)
    defer { tone.terminate(grace: 2) }
    let deck = try StemdeckProcess(server: server)
    defer { deck.kill() }
    #expect(answer(try await deck.run("setlist \(dir.file("show.txt"))")) == "song 1/3: one", "\(deck.transcript)")
    for line in ["input add mic mono", "connect tone:out mic_in", "send add verb", "connect verb_send_L system:playback_2", "play"] {
      let r = try await deck.attempt(line)
      #expect(!r.contains { $0.hasPrefix("error:") }, "\(line): \(r)")
    }
    for (song, change) in [(2, "gapless"), (3, "crossfade 0.1 s")] {
      let switched = try await deck.run("next")
      #expect(answer(switched)?.hasPrefix("song \(song)/3") == true && answer(switched)?.contains(change) == true, "\(deck.transcript)")
      let graph = try await server.connections()
      #expect(graph["stemdeck:mic_in"] == ["tone:out"], "song \(song): \(graph)")
      #expect(graph["stemdeck:verb_send_L"] == ["system:playback_2"], "song \(song): \(graph)")
      #expect(graph["stemdeck:master_L"] == ["system:playback_1"], "song \(song): \(graph)")
      let inputs = try await deck.run("inputs")
      #expect(inputs.contains { $0.hasPrefix("mic ") }, "song \(song): \(inputs)")
      // The singer is heard: the tone through the mic strip (the stems are at volume 0).
      try await deck.run("meters reset")
      try await deck.run("wait 0.3")
      let peak = JackIntegrationTests.masterPeak(try await deck.run("meters master"))
      #expect((peak ?? -200) > -20, "song \(song): the mic is not on the master (peak \(String(describing: peak)))\n\(deck.transcript)")
    }
    #expect(try await deck.finish() == 0, "\(deck.transcript)")
  }
}

/// A command's answer: its last output line that is not an event (an xrun under load may print
/// an `event: ` line among them).
private func answer(_ lines: [String]) -> String? { lines.last { !$0.hasPrefix("event: ") } }
