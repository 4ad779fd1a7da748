import Foundation
import StemdeckAudioFile
import StemdeckControl
import StemdeckEngine
import StemdeckSession
import StemdeckTestSupport
import Synchronization
import Testing

// Large sessions (hundreds of stems, up to the slot limit) open, render and take `all`
// commands, and changes that rebuild stems are all or nothing (issue 16, items 2, 9, 12, 20).

/// A folder holding one short mono file and a session of `count` stems playing it.
func largeSession(
  _ folder: TemporaryFolder, count: Int, frames: Int = 4800, fileRate: Int = 48000,
  _ configure: (Int, inout StemSettings) -> Void = { _, _ in }
) throws -> Session {
  try writeAudio(folder.file("tone.wav"), format: .wavFloat, sampleRate: fileRate, channels: [Signal.constant(0.001, frames: frames)])
  var session = Session()
  session.stems = (0..<count).map { i in
    var s = StemSettings(name: "s\(i)", file: "tone.wav")
    configure(i, &s)
    return s
  }
  return session
}

@Suite struct LargeSessionTests {
  @Test func renderOfThreeHundredSoloStems() throws {
    // Each soloed stem used to resend every stem's gains: 300 stems queued 45,000 commands
    // before the first block and the render failed with "command queue full" from 127 stems on.
    let folder = try TemporaryFolder()
    let session = try largeSession(folder, count: 300) { i, s in s.solo = i % 2 == 0 }
    let (summary, output) = try renderOffline(session, in: folder, duration: 0.05)
    // 150 soloed stems at 0.001, centred mono (−3 dB each side).
    #expect(abs(peak(output.left) - 150 * 0.001 * 0.5.squareRoot()) < 0.002)
    #expect(summary.underruns == 0)
  }

  @Test func soloMuteAndVolumeOnEveryStemOfALargeSession() throws {
    let folder = try TemporaryFolder()
    let session = try largeSession(folder, count: 400, frames: 24000)
    let rig = MixerRig(maxVoices: 1024)
    try rig.mixer.load(session, sessionPath: folder.file("session.stemdeck"))
    try rig.mixer.transport.play()
    _ = rig.render(1024)
    // No block is rendered between these: every command waits in the ring.
    let before = rig.mixer.engine.commandCounts.sent
    for name in rig.mixer.stems.names { try rig.mixer.strips.setSolo(name, true) }
    #expect(rig.mixer.engine.commandCounts.sent - before < 2 * 400)
    for name in rig.mixer.stems.names { try rig.mixer.strips.setMute(name, true) }
    for name in rig.mixer.stems.names { try rig.mixer.strips.setVolume(name, 0.5) }
    for name in rig.mixer.stems.names.dropFirst() { try rig.mixer.strips.setSolo(name, false) }
    for name in rig.mixer.stems.names { try rig.mixer.strips.setMute(name, false) }
    let out = rig.render(2048)
    // Only s0 is soloed (and heard), at half volume.
    #expect(abs(peak(out.left[1024...]) - 0.5 * 0.001 * 0.5.squareRoot()) < 1e-5)
  }
}

extension LargeSessionTests {
  @Test func burstsOfAllCommandsWaitForTheRendererInsteadOfFailing() throws {
    // 30,000 master volume changes and 50 `vol all` on 200 stems, sent much faster than a
    // renderer with 50 ms periods drains them (4,096 a period): more than the command ring
    // holds. They are delivered (a bounded wait for room), not refused.
    let folder = try TemporaryFolder()
    let session = try largeSession(folder, count: 200, frames: 48000)
    let mixer = Mixer(sampleRate: 48000, streaming: .thread)
    defer { mixer.shutdown() }
    try mixer.load(session, sessionPath: folder.file("session.stemdeck"))
    let audio = AudioThreadStandIn(mixer, period: 0.05)
    audio.start()
    defer { audio.stop() }
    let loaded = try mixer.engine.probeCommand()
    let started = Date().addingTimeInterval(10)
    while mixer.engine.commandCounts.applied < loaded && Date() < started { usleep(1000) }
    for i in 0..<30_000 { try mixer.master.setVolume(i % 2 == 0 ? 0.5 : 1) }
    for round in 0..<50 {
      for name in mixer.stems.names { try mixer.strips.setVolume(name, round % 2 == 0 ? 0.25 : 0.5) }
    }
    let sent = try mixer.engine.probeCommand()
    let deadline = Date().addingTimeInterval(10)
    while mixer.engine.commandCounts.applied < sent && Date() < deadline { usleep(1000) }
    #expect(mixer.engine.commandCounts.applied >= sent)
    #expect(mixer.stems.statuses().allSatisfy { $0.settings.volume == 0.5 })
  }
}

/// Calls `renderBlock` every `period` seconds on its own thread, as a sound card's callback would.
final class AudioThreadStandIn: @unchecked Sendable {
  let mixer: Mixer
  let period: Double
  let frames: Int
  let stopping = Atomic<Bool>(false)
  let stopped = DispatchSemaphore(value: 0)

  init(_ mixer: Mixer, period: Double = 0.001, frames: Int = 128) {
    self.mixer = mixer
    self.period = period
    self.frames = frames
  }

  func start() {
    Thread.detachNewThread { [self] in
      let left = UnsafeMutablePointer<Float>.allocate(capacity: frames)
      let right = UnsafeMutablePointer<Float>.allocate(capacity: frames)
      while !stopping.load(ordering: .relaxed) {
        renderBlock(mixer.renderState, left: left, right: right, frameCount: frames)
        usleep(UInt32(period * 1_000_000))
      }
      left.deallocate()
      right.deallocate()
      stopped.signal()
    }
  }

  func stop() {
    stopping.store(true, ordering: .relaxed)
    stopped.wait()
  }
}

extension LargeSessionTests {
  @Test func engineCopyAtAnotherRateKeepsAStemWhoseFileWentOfflineInItsPlace() throws {
    // A server back at another rate while a stem's file has been deleted: the copy used to throw
    // (and the JACK driver retried every 250 ms, leaking each half-built engine).
    let folder = try TemporaryFolder()
    for name in ["a", "b", "c"] {
      try writeAudio(folder.file("\(name).wav"), format: .wavFloat, channels: [Signal.constant(0.1, frames: 4800)])
    }
    let rig = MixerRig()
    for name in ["a", "b", "c"] {
      try rig.mixer.stems.add(path: folder.file("\(name).wav"), settings: stem(name, "\(name).wav") { $0.volume = 0.5 })
    }
    try FileManager.default.removeItem(atPath: folder.file("b.wav"))
    var warnings: [ControlText] = []
    let copy = try rig.mixer.copy(atSampleRate: 44100, warnings: &warnings)
    defer { copy.shutdown() }
    #expect(copy.stems.names == ["a", "c"])
    #expect(copy.offlineStems.map(\.settings.name) == ["b"])
    #expect(warnings.count == 1 && warnings[0].plain.contains("'b' is offline") && warnings[0].plain.contains("b.wav"), "\(warnings)")
    #expect(warnings.first?.actions == [.reopenSession])
    let saved = copy.session(savingTo: folder.file("session.stemdeck"))
    #expect(saved.stems.map(\.name) == ["a", "b", "c"])
    #expect(saved.stems[1].volume == 0.5)
  }
}

// MARK: - Rebuilding stems in place (quality, mode, pitch)

extension LargeSessionTests {
  @Test func qualityChangeOnSixHundredStemsKeepsEveryStem() throws {
    // Re-adding 600 stems needed 600 more slots while the old ones were still fading: 176 stems
    // were dropped at the 1,024-slot limit. Rebuilt in place, each keeps its slot.
    let folder = try TemporaryFolder()
    // (16 kHz keeps the 1,200 rings small. At 8 kHz a stem rebuilt at `medium` reports itself
    // finished early, before and after this change: a separate defect.)
    let session = try largeSession(folder, count: 600, frames: 16000, fileRate: 16000) { i, s in s.volume = i == 0 ? 1 : 0 }
    let rig = MixerRig(sampleRate: 16000, maxVoices: 1024)
    try rig.mixer.load(session, sessionPath: folder.file("session.stemdeck"))
    try rig.mixer.transport.play()
    _ = rig.render(800)
    for quality in [ResamplerQuality.medium, .linear] {
      try rig.mixer.setQuality(quality)
      #expect(rig.mixer.quality == quality)
      #expect(rig.mixer.stems.names == (0..<600).map { "s\($0)" })
      let out = rig.render(2000)
      #expect(rig.mixer.pump().isEmpty)
      #expect(!rig.mixer.engine.hasPendingRemovals, "old voices were not handed back")
      #expect(abs(peak(out.left[1000...]) - 0.001 * 0.5.squareRoot()) < 1e-5, "s0 is not heard after 'quality \(quality)'")
    }
    // Every slot the old voices had is accounted for: the remaining 424 can still be used, no more.
    try writeAudio(folder.file("more.wav"), format: .wavFloat, sampleRate: 16000, channels: [Signal.constant(0, frames: 800)])
    for i in 0..<424 { try rig.mixer.stems.add(path: folder.file("more.wav"), settings: StemSettings(name: "m\(i)", file: "more.wav")) }
    #expect(throws: MixerError.self) {
      try rig.mixer.stems.add(path: folder.file("more.wav"), settings: StemSettings(name: "one-too-many", file: "more.wav"))
    }
  }

  /// Three looping stems; `b`'s file is deleted while it plays.
  func rigWithADeletedFile(_ folder: TemporaryFolder) throws -> MixerRig {
    for (name, level) in [("a", 0.1), ("b", 0.2), ("c", 0.3)] {
      try writeAudio(folder.file("\(name).wav"), format: .wavFloat, channels: [Signal.constant(Float(level), frames: 48000)])
    }
    let rig = MixerRig()
    for name in ["a", "b", "c"] {
      try rig.mixer.stems.add(
        path: folder.file("\(name).wav"),
        settings: stem(name, "\(name).wav") {
          $0.loops = -1; $0.pan = -1
        })
    }
    try rig.mixer.strips.setMute("a", true)
    try rig.mixer.strips.setMute("c", true)
    try rig.mixer.transport.play()
    _ = rig.render(4096)
    try FileManager.default.removeItem(atPath: folder.file("b.wav"))
    return rig
  }

  /// b still plays at its level (0.2, hard left), and a save keeps it with its settings.
  func expectBPlaysOnUnchanged(_ rig: MixerRig, _ folder: TemporaryFolder, mode: RateMode = .varispeed) {
    #expect(rig.mixer.stems.names == ["a", "b", "c"])
    let out = rig.render(4096)
    #expect(abs(peak(out.left[2048...]) - 0.2) < 1e-4, "b is not heard as before")
    let saved = rig.mixer.session(savingTo: folder.file("session.stemdeck"))
    #expect(saved.stems.map(\.name) == ["a", "b", "c"])
    #expect(saved.stems[1].mode == mode && saved.stems[1].pan == -1)
  }

  @Test func modeChangeOfAStemWhoseFileIsGoneLeavesItAsItWas() throws {
    let folder = try TemporaryFolder()
    let rig = try rigWithADeletedFile(folder)
    let error = #expect(throws: MixerError.self) { try rig.mixer.stems.setMode("b", .stretch) }
    #expect(
      error?.description.contains("b.wav") == true && error?.description.contains("plays on as it was") == true,
      "\(String(describing: error))")
    expectBPlaysOnUnchanged(rig, folder)
  }

  @Test func pitchChangeOfAStemWhoseFileIsGoneLeavesItAsItWas() throws {
    let folder = try TemporaryFolder()
    for (name, level) in [("a", 0.1), ("b", 0.2), ("c", 0.3)] {
      try writeAudio(folder.file("\(name).wav"), format: .wavFloat, channels: [Signal.constant(Float(level), frames: 48000)])
    }
    let rig = MixerRig()
    for name in ["a", "b", "c"] {
      try rig.mixer.stems.add(
        path: folder.file("\(name).wav"),
        settings: stem(name, "\(name).wav") {
          $0.loops = -1; $0.mode = .stretch
        })
    }
    try FileManager.default.removeItem(atPath: folder.file("b.wav"))
    // Out of pitch 0 the stretcher is rebuilt: the file is needed again.
    let error = #expect(throws: MixerError.self) { try rig.mixer.stems.setPitch("b", 3) }
    #expect(error?.description.contains("b.wav") == true, "\(String(describing: error))")
    #expect(rig.mixer.stems.names == ["a", "b", "c"])
    #expect(try rig.mixer.stems.status("b").settings.pitch == 0)
    #expect(rig.mixer.session(savingTo: folder.file("session.stemdeck")).stems.map(\.name) == ["a", "b", "c"])
  }

  @Test func qualityChangeWithOneFileGoneChangesNothing() throws {
    let folder = try TemporaryFolder()
    let rig = try rigWithADeletedFile(folder)
    let error = #expect(throws: MixerError.self) { try rig.mixer.setQuality(.best) }
    #expect(
      error?.description.contains("'b'") == true && error?.description.contains("no stem was changed") == true,
      "\(String(describing: error))")
    #expect(rig.mixer.quality == .fast)
    expectBPlaysOnUnchanged(rig, folder)
  }

  @Test func modeChangeKeepsTheStemsOrder() throws {
    let folder = try TemporaryFolder()
    let rig = try rigWithADeletedFile(folder)
    try rig.mixer.stems.setMode("a", .stretch)
    #expect(rig.mixer.stems.names == ["a", "b", "c"])
    #expect(try rig.mixer.stems.status("a").settings.mode == .stretch)
    _ = rig.render(4096)
    _ = rig.mixer.pump()
    #expect(!rig.mixer.engine.hasPendingRemovals)
  }
}

// MARK: - Names that collide with stemdeck's own ports (item 17)

@Suite struct ReservedStemNameTests {
  @Test(arguments: ["master", "in", "sfx", "Master"])
  func aStemCannotTakeTheNameOfStemdecksOwnPorts(_ name: String) throws {
    let folder = try TemporaryFolder()
    try writeAudio(folder.file("a.wav"), format: .wavFloat, channels: [Signal.constant(0.1, frames: 480)])
    let rig = MixerRig()
    let error = #expect(throws: MixerError.self) { try rig.mixer.stems.add(path: folder.file("a.wav"), settings: stem(name, "a.wav")) }
    #expect(error?.description.contains("\(name.lowercased())_L/R are stemdeck's own ports") == true, "\(String(describing: error))")
    // A session naming one is refused with the stem's place, and nothing changes.
    var session = Session()
    session.stems = [stem("ok", "a.wav"), stem(name, "a.wav") { $0.directOut = true }]
    let loadError = #expect(throws: MixerError.self) { try rig.mixer.load(session, sessionPath: folder.file("s.stemdeck")) }
    #expect(loadError?.description.contains("stems[1] (\(name))") == true, "\(String(describing: loadError))")
    #expect(rig.mixer.stems.names.isEmpty)
    // A name derived from a file called so steps aside.
    #expect(StemName.derived(fromPath: "/x/\(name).wav", taken: []) == "\(name)-stem")
  }
}

// MARK: - Many offline stems (item 20)

extension LargeSessionTests {
  @Test func fortyThousandOfflineStemsOpenAndSaveInLinearTime() throws {
    // Each stem looked through the offline list (load) and a save inserted each offline stem
    // into the list (memmove): 50,000 offline stems took 10.4 s, 150,000 90 s; these 40,000
    // took 207 s in a debug build, 1.8 s now. The time is a figure, printed, not asserted (speed
    // targets live in scripts/bench): the test asserts what the load and save produce.
    let folder = try TemporaryFolder()
    try writeAudio(folder.file("a.wav"), format: .wavFloat, channels: [Signal.constant(0.1, frames: 480)])
    var session = Session()
    session.stems = (0..<40_000).map { i in stem("s\(i)", i % 1000 == 0 ? "a.wav" : "gone-\(i).wav") }
    let rig = MixerRig()
    let start = Date()
    let warnings = try rig.mixer.load(session, sessionPath: folder.file("s.stemdeck"))
    let loadSeconds = Date().timeIntervalSince(start)
    let saved = rig.mixer.session(savingTo: folder.file("s.stemdeck"))
    let seconds = Date().timeIntervalSince(start)
    #expect(warnings.count == 39_960)
    #expect(rig.mixer.stems.names.count == 40)
    #expect(saved.stems.map(\.name) == session.stems.map(\.name))
    print(
      "40,000 stems (39,960 offline): load and save in \(String(format: "%.2f", seconds)) s (load \(String(format: "%.2f", loadSeconds)) s)"
    )
  }
}

// MARK: - Song changes in a row (item 21)

extension LargeSessionTests {
  @Test func twoHundredSongChangesInARowNeverRunOutOfSlots() throws {
    // 200 `next` while playing: the superseded songs' stems held their slots until the service
    // loop happened to collect them, and the 64 slots here ran out after 8 changes.
    let folder = try TemporaryFolder()
    try writeAudio(folder.file("a.wav"), format: .wavFloat, channels: [Signal.constant(0.1, frames: 48000)])
    func song(_ tag: String) -> Session {
      var s = Session()
      s.stems = (0..<8).map { i in stem("\(tag)\(i)", "a.wav") { $0.loops = -1 } }
      return s
    }
    let mixer = Mixer(sampleRate: 48000, streaming: .thread, maxVoices: 64)
    defer { mixer.shutdown() }
    try mixer.load(song("first"), sessionPath: folder.file("s.json"))
    let audio = AudioThreadStandIn(mixer, period: 0.005)
    audio.start()
    defer { audio.stop() }
    try mixer.transport.play()
    for n in 0..<200 {
      try mixer.songs.change(to: song("song\(n)-"), sessionPath: folder.file("s.json"))
    }
    let deadline = Date().addingTimeInterval(10)
    while !mixer.songs.changeDone && Date() < deadline { usleep(1000) }
    #expect(mixer.songs.changeDone)
    #expect(mixer.stems.names == (0..<8).map { "song199-\($0)" })
  }
}

// MARK: - Files recorded above the engine rate (item 16)

extension LargeSessionTests {
  @Test func aHighRateFileAtRateTwoRendersWithoutUnderruns() throws {
    // The ring held 1.25 s of *engine* frames: a 192 kHz file at rate 2 on a 12 kHz render
    // needs 32 file frames per output frame, and the render was mostly silence (exit 0).
    let folder = try TemporaryFolder()
    try writeAudio(
      folder.file("hi.wav"), format: .wavFloat, sampleRate: 192_000,
      channels: [Signal.constant(0.1, frames: 192_000 * 3)])
    var session = Session()
    session.stems = [
      stem("hi", "hi.wav") {
        $0.rate = 2; $0.pan = -1
      }
    ]
    let (summary, output) = try renderOffline(session, in: folder, duration: 1.2, sampleRate: 12000)
    #expect(summary.underruns == 0)
    let body = output.left[600..<(output.count - 600)]
    #expect(body.allSatisfy { abs($0 - 0.1) < 0.01 }, "silent or wrong frames: min \(body.min() ?? 0), max \(body.max() ?? 0)")
  }
}

extension LargeSessionTests {
  @Test("a 384 kHz stem at rate 2 in 4096-frame periods never underruns: its ring holds what a period consumes")
  func a384kHzStemPlaysLiveAt4096FramePeriodsWithoutUnderruns() throws {
    // Its ring held 65,536 file frames (170 ms at 384 kHz): at rate 2 one 4096-frame period at
    // 48 kHz consumes all of that, and it underran on every period. The ring is filled to the
    // top before every period here (what a disk worker with time to spare does), so the outcome
    // depends on the ring's size alone, not on how fast this machine (or a sanitizer) runs.
    let folder = try TemporaryFolder()
    try writeAudio(
      folder.file("hi.wav"), format: .wavFloat, sampleRate: 384_000,
      channels: [Signal.constant(0.1, frames: 384_000 * 4)])
    let rig = MixerRig()  // shuts its mixer down when it goes
    try rig.mixer.stems.add(
      path: folder.file("hi.wav"),
      settings: stem("hi", "hi.wav") {
        $0.loops = -1; $0.rate = 2
      })
    try rig.mixer.transport.play()
    let out = rig.render(4096 * 18, block: 4096)  // 1.5 s
    #expect(try rig.mixer.stems.status("hi").underruns == 0)
    // After the start (the converter's delay and the 5 ms fade-in), every frame is heard.
    #expect(out.left[4096...].allSatisfy { $0 != 0 }, "silent frames: the stem ran dry")
  }
}
