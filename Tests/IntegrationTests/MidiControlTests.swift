import Foundation
import StemdeckTestSupport
import Synchronization
import Testing

// JACK MIDI control (issue 21, part 1) against a private jackd: a real JACK MIDI sender moves
// controllers and notes while stemdeck plays, and the master is captured with JACK frame times,
// so a change is checked in the very period (and at the frame) of its MIDI event.

/// A JACK MIDI sender and master capture in one python3-jack-client process (two JACK clients,
/// `NAME-send:out` and `NAME-cap:in_L`, so that stemdeck sits between them in the graph and all
/// three run in the same cycle). Driven on stdin:
///   connect A B            → "connected"
///   send OFF:HEX[,HEX…] …  events (frame offset, bytes) written in the next period
///                          → "sent T…": each event's JACK frame time
///   level START COUNT      → "level P": peak |sample| of in_L over frames [START, START+COUNT)
///                          of JACK frame time, or "level none" while not captured yet
///   now                    → "now T": the last captured period's start frame time
///   received               → "received HEX…": the MIDI messages NAME-cap:midi_in got so far
final class MidiProbe: @unchecked Sendable {
  static let script = #"""
    import collections, jack, queue, sys, array
    name = sys.argv[1]
    send = jack.Client(name + "-send", no_start_server=True)
    cap = jack.Client(name + "-cap", no_start_server=True)
    out = send.midi_outports.register("out")
    inl = cap.inports.register("in_L")
    mid = cap.midi_inports.register("midi_in")
    received = collections.deque(maxlen=4000)
    pending = collections.deque()
    sent = queue.Queue()
    store = collections.deque(maxlen=4000)
    @send.set_process_callback
    def process_send(n):
        out.clear_buffer()
        batch = []
        while pending:
            batch.append(pending.popleft())
        t = send.last_frame_time
        for off, data in batch:
            out.write_midi_event(off, data)
        if batch:
            sent.put([t + off for off, _ in batch])
    @cap.set_process_callback
    def process_cap(n):
        store.append((cap.last_frame_time, bytes(inl.get_buffer())))
        for off, data in mid.incoming_midi_events():
            received.append(bytes(data).hex())
    send.activate()
    cap.activate()
    print("ready", flush=True)
    for line in sys.stdin:
        w = line.split()
        if not w:
            continue
        try:
            if w[0] == "connect":
                send.connect(w[1], w[2])
                print("connected", flush=True)
            elif w[0] == "send":
                for item in w[1:]:
                    off, hexes = item.split(":")
                    pending.append((int(off), bytes(int(h, 16) for h in hexes.split(","))))
                print("sent " + " ".join(str(t) for t in sent.get(timeout=5)), flush=True)
            elif w[0] == "level":
                start, count = int(w[1]), int(w[2])
                peak, seen = 0.0, 0
                for t, raw in list(store):
                    samples = array.array("f", raw)
                    for i in range(max(0, start - t), min(len(samples), start + count - t)):
                        peak = max(peak, abs(samples[i]))
                        seen += 1
                ends = store[-1][0] + len(store[-1][1]) // 4 if store else -1
                print("level %.6f %d %d" % (peak, seen, 1 if ends >= start + count else 0), flush=True)
            elif w[0] == "recent":
                want, peak, seen = int(w[1]), 0.0, 0
                for t, raw in reversed(list(store)):
                    samples = array.array("f", raw)
                    take = samples[max(0, len(samples) - (want - seen)):]
                    peak = max([peak] + [abs(x) for x in take])
                    seen += len(take)
                    if seen >= want:
                        break
                print("recent %.6f" % peak if seen >= want else "recent none", flush=True)
            elif w[0] == "received":
                print("received " + " ".join(list(received)), flush=True)
            elif w[0] == "now":
                print("now %d" % (store[-1][0] if store else -1), flush=True)
        except Exception as e:
            print("error %s" % e, flush=True)
    """#

  let child: ChildProcess
  let name: String
  private let scriptFile: IntegrationTempDir

  init(server: PrivateJackServer, name: String = "probe") async throws {
    scriptFile = try IntegrationTempDir("stemdeck-midi-probe")
    self.name = name
    child = try await startPythonPeer(
      Self.script, file: scriptFile.file("probe.py"), arguments: [name], server: server, what: "the MIDI probe")
  }

  /// Sends one command and returns its answer line (the first line after it starting with `word`).
  func ask(_ command: String, answer word: String) async throws -> String {
    let start = child.stdoutLineCount
    guard child.writeToStdin(command + "\n") else { throw HarnessError("the MIDI probe has exited") }
    var found: String?
    _ = await eventually(timeout: 10) {
      found = self.child.stdoutLines.dropFirst(start).first { $0.hasPrefix(word) || $0.hasPrefix("error") }
      return found != nil
    }
    guard let found, found.hasPrefix(word) else {
      throw HarnessError(
        "probe: no answer to '\(command)' (got \(found ?? "nothing")); stderr: \(child.stderrLines.joined(separator: "\n"))")
    }
    return found
  }

  func connect(_ a: String, _ b: String) async throws { _ = try await ask("connect \(a) \(b)", answer: "connected") }

  /// Sends events in the next period; returns their frame times.
  @discardableResult
  func send(_ events: [(offset: Int, bytes: [UInt8])]) async throws -> [Int] {
    let items = events.map { "\($0.offset):" + $0.bytes.map { String($0, radix: 16) }.joined(separator: ",") }
    let line = try await ask("send " + items.joined(separator: " "), answer: "sent")
    return line.split(separator: " ").dropFirst().compactMap { Int($0) }
  }

  /// The peak over frames [start, start + count), waiting until they have been captured. The
  /// probe is a Python JACK client and can miss a period of its own on a loaded machine: once the
  /// capture has passed the window, a window that holds half of it, or two cycles of the 1 kHz
  /// tone (96 frames), is measured on what it holds (a CI run's probe held 224 of a 480-frame
  /// window, a peak already exact).
  func level(_ start: Int, _ count: Int) async throws -> Double {
    var value: Double?
    var last = ""
    _ = try await eventually(timeout: 10) {
      last = try await self.ask("level \(start) \(count)", answer: "level")
      let words = last.split(separator: " ").dropFirst().map(String.init)
      guard words.count == 3, let peak = Double(words[0]), let seen = Int(words[1]) else { return false }
      if seen == count || (words[2] == "1" && seen >= min((count + 1) / 2, 96)) { value = peak }
      return value != nil || words[2] == "1"
    }
    guard let value else { throw HarnessError("probe: frames \(start)+\(count) were never captured (\(last))") }
    return value
  }

  /// The peak over the last `count` frames the probe captured (a missed period of its own is skipped).
  func recentLevel(_ count: Int) async throws -> Double {
    var value: Double?
    _ = try await eventually(timeout: 10) {
      value = Double(try await self.ask("recent \(count)", answer: "recent").dropFirst(7))
      return value != nil
    }
    guard let value else { throw HarnessError("probe: \(count) frames were never captured") }
    return value
  }

  /// The MIDI messages received so far, as hex ("b00764").
  func received() async throws -> [String] {
    Array(try await ask("received", answer: "received").split(separator: " ").dropFirst().map(String.init))
  }

  func now() async throws -> Int {
    Int(try await ask("now", answer: "now").dropFirst(4)) ?? -1
  }

  func stop() {
    child.closeStdin()
    child.terminate(grace: 2)
  }
}

@Suite("JACK MIDI control", .serialized, .timeLimit(.minutes(2)))
struct MidiControlTests {
  /// A session with one looping 1 kHz tone (peak 0.5) and the given "midi" section.
  static func toneSession(in dir: IntegrationTempDir, midi: String?) throws -> String {
    try WAV.writeSine(dir.file("tone.wav"), channels: 1, sampleRate: 48000, seconds: 4, frequency: 1000, amplitude: 0.5)
    let path = dir.file("midi.json")
    var text = """
      {
        "format" : "stemdeck-session",
        "version" : 1,
        "stems" : [ { "name" : "tone", "file" : "tone.wav", "loops" : -1 } ]
      """
    if let midi { text += ",\n  \"midi\" : \(midi)" }
    try (text + "\n}\n").write(toFile: path, atomically: true, encoding: .utf8)
    return path
  }

  /// stemdeck playing `session`, the probe wired to midi_in and master_L, and the tone's level.
  static func start(
    _ server: PrivateJackServer, session: String, deck existing: StemdeckProcess? = nil
  ) async throws -> (StemdeckProcess, MidiProbe, Double) {
    let deck = try existing ?? StemdeckProcess(server: server, session: session)
    try await deck.run("midi on")
    let probe = try await MidiProbe(server: server)
    try await probe.connect("probe-send:out", "stemdeck:midi_in")
    try await probe.connect("stemdeck:master_L", "probe-cap:in_L")
    try await deck.run("play")
    // The tone is playing once a whole cycle (48 frames) reaches its level.
    var reference = 0.0
    _ = try await eventually(timeout: 10) {
      let t = try await probe.now()
      reference = t > 0 ? try await probe.level(t, 48) : 0
      return reference > 0.2
    }
    #expect(reference > 0.2, "the tone never reached the master: \(reference)\n\(deck.transcript)")
    return (deck, probe, reference)
  }

  static func cc(_ number: UInt8, _ value: UInt8, channel: UInt8 = 0) -> [UInt8] { [0xB0 | channel, number, value] }

  @Test("a CC 7 mapped in the session moves the stem's level at the event's frame, in its period; the value is saved and reopens")
  func ccLandsAtItsFrame() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir("stemdeck-midi")
    let session = try Self.toneSession(
      in: dir,
      midi: """
        { "mappings" : [ { "source" : "cc", "number" : 7, "channel" : 1, "action" : "volume", "target" : "tone" } ] }
        """)
    let (deck, probe, reference) = try await Self.start(server, session: session)
    defer { deck.kill(); probe.stop() }
    let ports = try await server.ports()
    #expect(ports.contains("stemdeck:midi_in"), "\(ports)")

    // CC 100 is the stem's own value (0 dB): takeover picks up; then CC 50 at frame 128 of a period.
    try await probe.send([(0, Self.cc(7, 100))])
    let t = try #require(try await probe.send([(128, Self.cc(7, 50))]).first)
    // The level before the event: the last 96 frames before it that the probe holds (a Python
    // client, it can miss a whole period of its own on a loaded machine: a CI run lost the one
    // before the event, "frames 68640+96 were never captured"; the level was the same a period
    // earlier: CC 100 is the stem's own value).
    var before = -1.0
    for back in [96, 96 + 256, 96 + 512] where before < 0 {
      if let v = try? await probe.level(t - back, 96) { before = v }
    }
    let sameFrame = try await probe.level(t, 48)
    let endOfPeriod = try await probe.level(t + 80, 48)
    let settled = try await probe.level(t + 2000, 480)
    let expected = reference * pow(0.5, 2.9)  // the fader curve at CC 50: -17.5 dB
    #expect(abs(before - reference) < 0.02 * reference, "before the event: \(before) vs \(reference)")
    #expect(sameFrame < before, "the ramp starts at the event's frame: \(sameFrame) vs \(before)")
    #expect(endOfPeriod < 0.9 * reference, "still in the event's period the level has moved: \(endOfPeriod) vs \(reference)")
    #expect(abs(settled - expected) < 0.05 * reference, "after the ramp: \(settled), expected \(expected)")

    // The control thread follows: the value is the stem's (saved), and the mapping round-trips.
    let saved = dir.file("saved.json")
    try await deck.run("save \(saved)")
    let text = try String(contentsOfFile: saved, encoding: .utf8)
    #expect(text.contains("\"midi\" : { \"mappings\" : ["), "\(text)")
    #expect(
      text.contains("{ \"source\" : \"cc\", \"number\" : 7, \"channel\" : 1, \"action\" : \"volume\", \"target\" : \"tone\" }"), "\(text)")
    #expect(text.contains("\"volume\" : 0.13"), "the stem's saved volume is the fader's (0.134): \(text)")
    try await deck.run("open \(saved)")
    let maps = try await deck.run("midi maps")
    #expect(maps.contains("cc 7 ch 1 volume tone"), "\(maps)")
  }

  @Test("midi learn binds the next CC; soft takeover holds a fader that disagrees until it crosses the stem's value")
  func learnAndTakeover() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir("stemdeck-midi")
    let session = try Self.toneSession(in: dir, midi: nil)
    let (deck, probe, reference) = try await Self.start(server, session: session)
    defer { deck.kill(); probe.stop() }

    try await deck.run("midi learn vol tone")
    try await probe.send([(0, Self.cc(20, 30, channel: 2))])
    let learned = await deck.waitForLine(containing: "midi learned: cc 20 ch 3 volume tone", timeout: 10)
    #expect(learned != nil, "\(deck.transcript)")
    let maps = try await deck.run("midi maps")
    #expect(maps.contains("cc 20 ch 3 volume tone"), "\(maps)")

    // The fader at 10 and then 90 is below the stem (0 dB = 100): nothing moves.
    try await probe.send([(0, Self.cc(20, 10, channel: 2))])
    let held = try #require(try await probe.send([(0, Self.cc(20, 90, channel: 2))]).first)
    let still = try await probe.level(held + 1000, 480)
    #expect(
      abs(still - reference) < 0.02 * reference, "soft takeover: a disagreeing fader must not jump the stem: \(still) vs \(reference)")
    // Crossing 100 picks it up: at 110 the stem is at +3.5 dB.
    let crossed = try #require(try await probe.send([(0, Self.cc(20, 110, channel: 2))]).first)
    let up = try await probe.level(crossed + 1000, 480)
    #expect(abs(up - reference * pow(1.1, 2.9)) < 0.03 * reference, "picked up at 110: \(up) vs \(reference * pow(1.1, 2.9))")
    let status = try await deck.run("midi")
    #expect(status.contains { $0.contains("held by takeover 2") }, "\(status)")
  }

  @Test("a mapped note fires a sound effect; a mapped note toggles a stem's mute; a program change recalls a scene")
  func noteFiresEffect() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir("stemdeck-midi")
    let session = try Self.toneSession(in: dir, midi: nil)
    try WAV.writeSine(dir.file("kick.wav"), channels: 1, sampleRate: 48000, seconds: 0.5, frequency: 200, amplitude: 0.8)
    let (deck, probe, reference) = try await Self.start(server, session: session)
    defer { deck.kill(); probe.stop() }
    try await deck.run("sfx load kick \(dir.file("kick.wav")); sfx wait kick")
    try await deck.run("midi map note 36 sfx fire kick")
    try await deck.run("midi map note 40 toggle mute tone")
    try await deck.run("scene save open")
    try await deck.run("midi map pc 3 scene open")

    // Mute the tone by note 40; the master goes silent.
    let muted = try #require(try await probe.send([(0, [0x90, 40, 100])]).first)
    var silent = 1.0
    _ = try await eventually(timeout: 10) {
      silent = try await probe.recentLevel(480)
      return silent < 0.001
    }
    #expect(silent < 0.001, "note 40 toggles the tone's mute: \(silent) (sent at \(muted), reference \(reference))")
    // A program change (two bytes, a pedal board's preset) recalls the scene saved before the
    // mute: the tone is back at its level.
    let recalled = try #require(try await probe.send([(0, [0xC0, 3])]).first)
    var back = 0.0
    _ = try await eventually(timeout: 10) {
      back = try await probe.recentLevel(480)
      return abs(back - reference) < 0.05 * reference
    }
    #expect(
      abs(back - reference) < 0.05 * reference, "pc 3 recalls 'open': \(back) vs \(reference) (sent at \(recalled))\n\(deck.transcript)")
    // Note 36 fires the effect (louder than the tone was).
    let fired = try #require(try await probe.send([(0, [0x90, 36, 100])]).first)
    var peak = 0.0
    _ = try await eventually(timeout: 10) {
      peak = try await probe.recentLevel(2400)
      return peak > 0.5
    }
    #expect(peak > 0.5, "note 36 fires kick: peak \(peak) after \(fired)\n\(deck.transcript)")
  }

  @Test("a CC mapped to a bus's volume moves the bus (soft takeover at 0 dB); a note toggles the bus's mute")
  func busVolume() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir("stemdeck-midi")
    let session = try Self.toneSession(in: dir, midi: nil)
    let (deck, probe, reference) = try await Self.start(server, session: session)
    defer { deck.kill(); probe.stop() }
    try await deck.run("bus add grp")
    try await deck.run("route tone grp")
    try await deck.run("midi map cc 21 vol grp")
    try await deck.run("midi map note 41 toggle mute grp")
    // The bus is at 0 dB (CC 100): 100 picks it up, 50 sets (0.5)^2.9 of the level.
    _ = try await probe.send([(0, Self.cc(21, 100))])
    _ = try await probe.send([(0, Self.cc(21, 50))])
    let want = reference * pow(0.5, 2.9)
    var level = 0.0
    _ = try await eventually(timeout: 10) {
      level = try await probe.recentLevel(480)
      return abs(level - want) < 0.03 * reference
    }
    #expect(abs(level - want) < 0.03 * reference, "bus at CC 50: \(level) vs \(want)\n\(deck.transcript)")
    _ = try await probe.send([(0, [0x90, 41, 100])])
    _ = try await eventually(timeout: 10) {
      level = try await probe.recentLevel(480)
      return level < 0.001
    }
    #expect(level < 0.001, "note 41 mutes the bus: \(level)")
    let buses = try await deck.run("bus")
    #expect(buses.contains { $0.hasPrefix("bus grp") && $0.contains("vol -17.5 dB") && $0.contains("M") }, "\(buses)")
  }

  @Test("midi on registers stemdeck:midi_in and midi off removes it; pitch bend sets a stem's rate")
  func portAndBend() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir("stemdeck-midi")
    let session = try Self.toneSession(in: dir, midi: nil)
    let deck = try StemdeckProcess(server: server, session: session)
    defer { deck.kill() }
    try await deck.run("echo ready")
    #expect(!(try await server.ports()).contains("stemdeck:midi_in"), "no mappings: no MIDI port")
    let (_, probe, _) = try await Self.start(server, session: session, deck: deck)
    defer { probe.stop() }
    #expect((try await server.ports()).contains("stemdeck:midi_in"))
    try await deck.run("midi map bend ch 1 rate tone")
    // Bend 0x3000 → (12288 − 8192) / 8192 = 0.5 octave up: rate 2^0.5.
    try await probe.send([(0, [0xE0, 0x00, 0x60])])
    _ = await eventually(timeout: 10) {
      (try? await deck.run("save \(dir.file("bend.json"))")) != nil
        && ((try? String(contentsOfFile: dir.file("bend.json"), encoding: .utf8))?.contains("\"rate\" : 1.414") ?? false)
    }
    let text = try String(contentsOfFile: dir.file("bend.json"), encoding: .utf8)
    #expect(text.contains("\"rate\" : 1.414"), "\(text)")
    // midi off keeps the port while there are mappings; without them it goes.
    let kept = try await deck.run("midi off")
    #expect(kept.contains { $0.contains("kept: the session has mappings") }, "\(kept)")
    try await deck.run("midi unmap all")
    #expect(!(try await server.ports()).contains("stemdeck:midi_in"), "midi off and no mappings: the port is removed")
  }

  @Test("midi out sends the mapped volume back as its CC when it changes, and a play button's LED (saved in the session)")
  func feedback() async throws {
    let server = try await PrivateJackServer()
    defer { server.stop() }
    let dir = try IntegrationTempDir("stemdeck-midi")
    let session = try Self.toneSession(
      in: dir,
      midi: """
        { "feedback" : true, "mappings" : [ { "source" : "cc", "number" : 7, "channel" : 2, "action" : "volume", "target" : "tone" },
          { "source" : "note", "number" : 60, "channel" : 2, "action" : "play" } ] }
        """)
    let (deck, probe, _) = try await Self.start(server, session: session)
    defer { deck.kill(); probe.stop() }
    #expect((try await server.ports()).contains("stemdeck:midi_out"))
    // midi out off removes the port; on brings it back; a connection gets every value again.
    try await deck.run("midi out off")
    #expect(!(try await server.ports()).contains("stemdeck:midi_out"))
    try await deck.run("midi out on")
    try await probe.connect("stemdeck:midi_out", "probe-cap:midi_in")
    var got: [String] = []
    _ = try await eventually(timeout: 10) {
      got = try await probe.received(); return got.contains("b10764")
    }
    #expect(got.contains("b10764"), "volume 1 is CC 100 on channel 2: \(got)")
    // vol 0.5 → position 100 × 0.5^(1/2.9) = 78.7 → CC 79 (0x4f).
    try await deck.run("vol tone 0.5")
    _ = try await eventually(timeout: 10) {
      got = try await probe.received(); return got.contains("b1074f")
    }
    #expect(got.contains("b1074f"), "\(got)")
    // A play button's LED (issue 42): note 60 on while playing, off once paused.
    #expect(got.contains("913c7f"), "playing: note 60 on at velocity 127 on channel 2: \(got)")
    try await deck.run("pause")
    _ = try await eventually(timeout: 10) {
      got = try await probe.received(); return got.contains("813c00")
    }
    #expect(got.contains("813c00"), "paused: note 60 off: \(got)")
    let saved = dir.file("fb.json")
    try await deck.run("save \(saved)")
    #expect(try String(contentsOfFile: saved, encoding: .utf8).contains("\"midi\" : { \"feedback\" : true, \"mappings\" : ["))
  }
}
