import Foundation
import StemdeckAudioFile
import StemdeckControl
import StemdeckEngine
import StemdeckSession
import StemdeckTestSupport
import Testing

/// The click and the count-in (issue 42, item 1), offline: through `OfflineRenderer` (the same
/// `renderBlock` the JACK driver runs) and a synchronous mixer.
@Suite struct ClickTests {
  /// The frames where click bursts start in `x`: a burst begins with a zero sample (sin 0) and
  /// is non-zero from the next; bursts are 15 ms apart from each other at least.
  static func onsets(_ x: [Float]) -> [Int] {
    var out: [Int] = []
    var quietSince = 0
    for i in x.indices {
      if x[i] == 0 { continue }
      if i - quietSince > 1000 || out.isEmpty && i - quietSince >= 1 { out.append(i - 1) }
      quietSince = i
    }
    return out
  }

  /// The largest |sample| of each burst in `x` starting at `onsets`.
  static func peaks(_ x: [Float], _ onsets: [Int]) -> [Double] {
    onsets.map { peak(x[$0..<min(x.count, $0 + ClickSound.frames(sampleRate: 48000))]) }
  }

  /// A one-second stereo stem of constant 0.5 (non-zero from its first frame).
  static func dcSession(in folder: TemporaryFolder, _ configure: (inout Session) -> Void) throws -> Session {
    let dc = Signal.constant(0.5, frames: 48000)
    try writeAudio(folder.file("dc.wav"), format: .wavFloat, channels: [dc, dc])
    var session = Session()
    session.stems = [stem("dc", "dc.wav")]
    configure(&session)
    return session
  }

  /// 97 bpm in 3/4 with one bar of count-in over the dc stem (and `extra`), rendered with the
  /// click to a file of its own: the render's frames, the master and the click.
  static func renderCountIn(_ extra: (inout Session) -> Void = { _ in }) throws -> (frames: Int, master: Stereo, click: Stereo) {
    let folder = try TemporaryFolder()
    let session = try dcSession(in: folder) {
      $0.tempo = Tempo(bpm: 97, beatsPerBar: 3)
      $0.click = ClickSettings(on: true, countIn: 1)
      extra(&$0)
    }
    let output = folder.file("master.wav"), clickPath = folder.file("click.wav")
    let summary = try OfflineRenderer.render(
      session: session, sessionPath: folder.file("session.stemdeck"), outputPath: output, duration: nil,
      clickPath: clickPath)
    return (summary.frames, Stereo(try readAudio(output)), Stereo(try readAudio(clickPath)))
  }

  /// That count-in's frames at 48 kHz, and where its 3 beats and the song's first 2 start.
  static let perBeat = 48000.0 * 60 / 97
  static let countIn = Int((3 * perBeat).rounded())
  static let countInBeats =
    (0..<3).map { Int((Double($0) * perBeat).rounded()) } + [0, 1].map { countIn + Int((Double($0) * perBeat).rounded()) }

  @Test("count-in: 1 bar of 3/4 at 97 bpm is 89,072 frames of click; the stem's first frame is the next, and the master holds no click")
  func countInOffline() throws {
    let (frames, master, click) = try Self.renderCountIn()
    let countIn = Self.countIn
    #expect(countIn == 89072)
    #expect(frames == countIn + 48000, "the render runs the count-in, then the whole song")
    #expect(master.count == click.count, "the click file is as long as the master")
    // The stem starts on the count-in's last frame + 1, to the sample; nothing of the click is in the master.
    #expect(master.left.firstIndex { $0 != 0 } == countIn)
    #expect(master.left[countIn...].allSatisfy { $0 == master.left[countIn] }, "the master is the stem alone (no click in it)")
    // The click: the count-in's 3 beats, then the song's beats (transport frames 0 and 29,691).
    let beats = Self.countInBeats
    #expect(Self.onsets(click.left) == beats)
    #expect(click.left == click.right)
    let peaks = Self.peaks(click.left, beats)
    let accent = [true, false, false, true, false]
    for (p, a) in zip(peaks, accent) {
      #expect(abs(p - (a ? ClickSound.accentPeak : ClickSound.beatPeak)) < 0.01, "burst peaks \(peaks)")
    }
  }

  @Test(
    "click to master with a soloed stem: the click is there (solo-safe), it is the only difference, and nothing of it without 'to master'")
  func clickInMasterIsSoloSafe() throws {
    let folder = try TemporaryFolder()
    let quiet = Signal.constant(0.25, frames: 48000)
    try writeAudio(folder.file("quiet.wav"), format: .wavFloat, channels: [quiet, quiet])
    func render(_ click: ClickSettings, _ name: String) throws -> Stereo {
      let session = try Self.dcSession(in: folder) {
        $0.stems.append(stem("solo", "quiet.wav") { $0.solo = true })
        $0.tempo = Tempo(bpm: 120, beatsPerBar: 4)
        $0.click = click
      }
      return try renderOffline(session, in: folder, name: name).output
    }
    let plain = try render(ClickSettings(), "plain.wav")
    let own = try render(ClickSettings(on: true), "own.wav")
    let master = try render(ClickSettings(on: true, output: .master, level: -6), "master.wav")
    #expect(own.left == plain.left && own.right == plain.right, "a click on its own ports changes the master by nothing")
    #expect(plain.left.allSatisfy { $0 == plain.left[0] } && plain.left[0] > 0, "the soloed stem alone (the other is muted)")
    let difference = zip(master.left, plain.left).map { $0 - $1 }
    #expect(Self.onsets(difference) == [0, 24000], "beats at 120 bpm in a second")
    let gain = pow(10, -6.0 / 20)
    let peaks = Self.peaks(difference, [0, 24000])
    #expect(abs(peaks[0] - ClickSound.accentPeak * gain) < 0.01 && abs(peaks[1] - ClickSound.beatPeak * gain) < 0.01, "\(peaks)")
  }

  @Test("with 100 frames of plugin latency in the mix, every click (count-in and song) sounds 100 frames late, as the stem does")
  func clickMeetsInsertLatency() throws {
    let (_, master, click) = try Self.renderCountIn {
      $0.stems[0].strip.inserts = [InsertSettings(uri: InsertRenderTests.delay, values: [InsertValue(symbol: "delay", value: 100)])]
    }
    #expect(master.left.firstIndex { $0 != 0 } == Self.countIn + 100, "the stem sounds 100 frames after the count-in")
    #expect(Self.onsets(click.left) == Self.countInBeats.map { $0 + 100 }, "every beat 100 frames late")
  }

  @Test("the click follows a tempo change: 120 bpm, then 150 bpm from transport frame 48,000 (beats on the new tempo's grid)")
  func tempoChange() throws {
    let rig = MixerRig()
    rig.mixer.tempo = Tempo(bpm: 120, beatsPerBar: 4)
    try rig.mixer.click.set(ClickSettings(on: true, output: .master))
    try rig.mixer.transport.play()
    var out = rig.render(48000)
    rig.mixer.tempo = Tempo(bpm: 150, beatsPerBar: 4)
    out.append(rig.render(52000))
    // 150 bpm: a beat every 19,200 frames from transport frame 0; bar lines at 0 and 76,800.
    let beats = [0, 24000, 57600, 76800, 96000]
    #expect(Self.onsets(out.left) == beats)
    let peaks = Self.peaks(out.left, beats)
    #expect(peaks.map { $0 > 0.45 } == [true, false, false, true, false], "accents on the bars' first beats: \(peaks)")
  }

  @Test("the click setting is saved only when not the default, and survives a round trip")
  func sessionRoundTrip() throws {
    var session = Session()
    #expect(!SessionFile.encode(session).contains("\"click\""), "an old session stays byte-identical")
    session.click = ClickSettings(on: true, output: .master, level: -4.5, countIn: 2)
    let text = SessionFile.encode(session)
    #expect(text.contains("\"click\" : { \"on\" : true, \"output\" : \"master\", \"level\" : -4.5, \"countIn\" : 2 }"))
    #expect(try SessionFile.decode(Data(text.utf8), source: "s").click == session.click)
    // A song's own in a setlist: its click comes with it, whatever the rig's.
    #expect(session.songLayer.click == session.click)
    #expect(session.playedThrough(rig: Session()).click == session.click)
    let bad = text.replacingOccurrences(of: "\"countIn\" : 2", with: "\"countIn\" : 17")
    #expect {
      try SessionFile.decode(Data(bad.utf8), source: "s")
    } throws: { error in
      "\(error)".contains("click.countIn") && "\(error)".contains("from 0 to 16")
    }
  }

  @Test(
    "click samples from the session: the accent's file (24 kHz, brought to 48 kHz) on the bar's first beat, the beat's on the others, in place of the bursts; a missing one warns and keeps the setting"
  )
  func clickSamples() throws {
    let folder = try TemporaryFolder()
    try writeAudio(folder.file("wood.wav"), format: .wavFloat, channels: [Signal.constant(0.3, frames: 100)])
    try writeAudio(folder.file("cow.wav"), format: .wavFloat, sampleRate: 24000, channels: [Signal.constant(0.5, frames: 50)])
    let session = try Self.dcSession(in: folder) {
      $0.tempo = Tempo(bpm: 120, beatsPerBar: 2)
      $0.click = ClickSettings(on: true)
      $0.click.sample = "wood.wav"
      $0.click.accentSample = "cow.wav"
    }
    let text = SessionFile.encode(session)
    #expect(text.contains("\"click\" : { \"on\" : true, \"sample\" : \"wood.wav\", \"accentSample\" : \"cow.wav\" }"))
    #expect(try SessionFile.decode(Data(text.utf8), source: "s").click == session.click)
    let clickPath = folder.file("click.wav")
    _ = try OfflineRenderer.render(
      session: session, sessionPath: folder.file("session.stemdeck"), outputPath: folder.file("master.wav"), duration: nil,
      clickPath: clickPath)
    let click = Stereo(try readAudio(clickPath)).left
    // 120 bpm: beats at 0 (the accent: 50 frames at 24 kHz are 100 at 48 kHz), 24,000, 48,000 (a bar of 2).
    #expect(click[0..<100].allSatisfy { $0 == 0.5 } && click[100..<24000].allSatisfy { $0 == 0 }, "the accent's sample, once")
    #expect(click[24000..<24100].allSatisfy { $0 == 0.3 } && click[24100..<48000].allSatisfy { $0 == 0 }, "the beat's sample")

    let rig = MixerRig()
    var missing = session
    missing.click.sample = "nope.wav"
    missing.click.accentSample = nil
    let warnings = try rig.mixer.load(missing, sessionPath: folder.file("session.stemdeck"))
    #expect(
      warnings.contains { "\($0)".contains("click sample") && "\($0)".contains("nope.wav") && "\($0)".contains("synthesized click plays") })
    #expect(rig.mixer.session(savingTo: folder.file("session.stemdeck")).click.sample == "nope.wav", "kept, and saved back as it was")
    var bad = rig.mixer.click.settings
    bad.sample = folder.file("also-missing.wav")
    #expect(throws: MixerError.self) { try rig.mixer.click.set(bad) }
    #expect(rig.mixer.click.settings.sample == folder.file("nope.wav"), "a refused sample changes nothing")
    for (json, fragment) in [
      ("\"sample\" : 5", "click.sample"), ("\"accentSample\" : \"a.wav\"", "needs \"sample\" too"),
      ("\"sample\" : \"\"", "must not be empty")
    ] {
      let doc = text.replacingOccurrences(of: "\"sample\" : \"wood.wav\", \"accentSample\" : \"cow.wav\"", with: json)
      do {
        _ = try SessionFile.decode(Data(doc.utf8), source: "s")
        Issue.record("accepted: \(json)")
      } catch { #expect("\(error)".contains(fragment), "\(error)") }
    }
  }
}
