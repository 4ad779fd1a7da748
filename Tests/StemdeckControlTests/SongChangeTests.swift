import Foundation
import StemdeckControl
import StemdeckEngine
import StemdeckSession
import StemdeckTestSupport
import StemdeckText
import Testing

/// Setlist song changes (`mixer.songs.change`): gapless and crossfade, rendered through the real
/// engine from real files. Song A's stem is panned hard left and B's hard right where the two
/// must be told apart; a mono stem panned hard left passes its samples unchanged (cos 0 = 1).
@Suite struct SongChangeTests {
  static let rate = 48000.0

  /// A distinct value on every frame, so a frame out of place or a gap shows exactly.
  static func ramp(_ base: Float, frames: Int) -> [Float] {
    (0..<frames).map { base + Float($0) * 1e-6 }
  }

  static func session(_ stems: [StemSettings], change: SongChange = .gapless, crossfade: Double = 2) -> Session {
    var s = Session()
    s.stems = stems
    s.options.songChange = change
    s.options.crossfadeSeconds = crossfade
    return s
  }

  /// Renders until the renderer has performed the song change; returns every frame rendered.
  static func renderUntilSwitched(_ rig: MixerRig, block: Int = 256, limit: Int = 48000) -> Stereo {
    var out = Stereo(frames: 0)
    while !rig.mixer.songs.changeDone && out.count < limit { out.append(rig.render(block, block: block)) }
    return out
  }

  @Test("gapless: the new song's first frame follows the old song's last, on the switch frame, with no gap")
  func gaplessIsExact() throws {
    let folder = try TemporaryFolder()
    let a = Self.ramp(-0.5, frames: 96000), b = Self.ramp(0.25, frames: 96000)
    try writeAudio(folder.file("a.wav"), format: .wavFloat, channels: [a])
    try writeAudio(folder.file("b.wav"), format: .wavFloat, channels: [b])
    let rig = MixerRig()
    try rig.mixer.load(Self.session([stem("a", "a.wav") { $0.pan = -1 }]), sessionPath: folder.file("a.json"))
    try rig.mixer.transport.play()
    var out = rig.render(4096 + 100)
    try rig.mixer.songs.change(to: Self.session([stem("b", "b.wav") { $0.pan = -1 }]), sessionPath: folder.file("b.json"))
    #expect(rig.mixer.stems.names == ["b"])
    out.append(Self.renderUntilSwitched(rig))
    out.append(rig.render(4096))
    // The switch frame: the first frame that is not song A's.
    let switchFrame = try #require(out.left.indices.first { out.left[$0] != a[$0] })
    #expect(switchFrame == 4096 + 100, "switched at \(switchFrame): the start of the first block after the request")
    #expect(Array(out.left[..<switchFrame]) == Array(a[..<switchFrame]), "song A plays untouched up to the switch")
    let after = Array(out.left[switchFrame...])
    #expect(after == Array(b[..<after.count]), "song B from its first frame, on the switch frame")
    #expect(out.right.allSatisfy { $0 == 0 })
    // The old voice went back through the return ring and was freed; the transport is B's.
    _ = rig.mixer.pump()
    #expect(rig.mixer.songs.leavingStemCount == 0)
    #expect(!rig.mixer.engine.hasPendingRemovals)
    #expect(rig.mixer.transport.position == Double(after.count) / Self.rate)
  }

  @Test(
    "a playing change to a song saved at or past its end brings it in at its top, with a warning; saved inside it, where it was (issue 35, item 4)"
  )
  func savedAtTheEndComesInAtTheTop() throws {
    let folder = try TemporaryFolder()
    let a = Self.ramp(-0.5, frames: 96000), b = Self.ramp(0.25, frames: 96000)  // 2 s each, no loops
    try writeAudio(folder.file("a.wav"), format: .wavFloat, channels: [a])
    try writeAudio(folder.file("b.wav"), format: .wavFloat, channels: [b])
    for (saved, startsAt, warns) in [(2.0, 0, true), (9.0, 0, true), (1.0, 48000, false)] {
      let rig = MixerRig()
      try rig.mixer.load(Self.session([stem("a", "a.wav") { $0.pan = -1 }]), sessionPath: folder.file("a.json"))
      try rig.mixer.transport.play()
      var out = rig.render(1024)
      var song = Self.session([stem("b", "b.wav") { $0.pan = -1 }])
      song.position = saved
      let warnings = try rig.mixer.songs.change(to: song, sessionPath: folder.file("b.json"))
      out.append(Self.renderUntilSwitched(rig))
      out.append(rig.render(1024))
      let switchFrame = try #require(out.left.indices.first { out.left[$0] != a[$0] }, "saved at \(saved): no switch")
      #expect(
        Array(out.left[switchFrame..<(switchFrame + 512)]) == Array(b[startsAt..<(startsAt + 512)]),
        "saved at \(saved): song B from frame \(startsAt)")
      let said = warnings.map(\.detail)
      if warns {
        #expect(
          said == ["position: saved at \(NumberFormat.time(saved)), at or past the end of the song (0:02.000): opened at the top"],
          "\(said)")
      } else {
        #expect(said.isEmpty, "\(said)")
      }
    }
  }

  @Test("gapless with the disk thread, paced like a live audio thread: no frame belongs to neither song")
  func gaplessLive() throws {
    let folder = try TemporaryFolder()
    try writeAudio(folder.file("a.wav"), format: .wavFloat, channels: [Signal.constant(0.25, frames: 240000)])
    try writeAudio(folder.file("b.wav"), format: .wavFloat, channels: [Signal.constant(0.5, frames: 240000)])
    let mixer = Mixer(sampleRate: Self.rate, streaming: .thread, maxVoices: 64)
    defer { mixer.shutdown() }
    try mixer.load(Self.session([stem("a", "a.wav") { $0.pan = -1 }]), sessionPath: folder.file("a.json"))
    try mixer.transport.play()
    let audio = LiveAudioThread(mixer)
    audio.start()
    // Song A is heard for a while (a quarter second of 0.25) before the change is asked for.
    #expect(audio.waitUntil(timeout: 10) { $0.filter { $0 == 0.25 }.count >= 12_000 }, "song A never played")
    try mixer.songs.change(to: Self.session([stem("b", "b.wav") { $0.pan = -1 }]), sessionPath: folder.file("b.json"))
    let deadline = ContinuousClock.now + .seconds(10)
    while !mixer.songs.changeDone && ContinuousClock.now < deadline { usleep(1000) }
    #expect(mixer.songs.changeDone, "the song change did not complete within 10 s")
    while mixer.songs.leavingStemCount > 0 && ContinuousClock.now < deadline { _ = mixer.pump(); usleep(10_000) }
    // Song B is heard for a while too (a tenth of a second of 0.5).
    #expect(audio.waitUntil(timeout: 10) { $0.filter { $0 == 0.5 }.count >= 4_800 }, "song B never played")
    let out = audio.stop()
    let lastA = try #require(out.lastIndex(of: 0.25))
    let firstB = try #require(out.firstIndex(of: 0.5))
    let started = try #require(out.firstIndex(of: 0.25))
    #expect(firstB == lastA + 1, "gap of \(firstB - lastA - 1) frames")
    #expect(out[started...].allSatisfy { $0 == 0.25 || $0 == 0.5 })
    #expect(mixer.songs.leavingStemCount == 0)
  }

  @Test("crossfade: equal-power gains from the same frame; after it the old song is silent, handed back, and the new one is at full gain")
  func crossfade() throws {
    let folder = try TemporaryFolder()
    try writeAudio(folder.file("a.wav"), format: .wavFloat, channels: [Signal.constant(0.25, frames: 96000)])
    try writeAudio(folder.file("b.wav"), format: .wavFloat, channels: [Signal.constant(0.5, frames: 96000)])
    let rig = MixerRig()
    // Both songs call their stem "x": the old one must not be mistaken for the new one.
    try rig.mixer.load(
      Self.session([stem("x", "a.wav") { $0.pan = -1 }], change: .crossfade, crossfade: 0.1),
      sessionPath: folder.file("a.json"))
    try rig.mixer.transport.play()
    var out = rig.render(2048)
    try rig.mixer.songs.change(to: Self.session([stem("x", "b.wav") { $0.pan = 1 }]), sessionPath: folder.file("b.json"))
    #expect(rig.mixer.stems.names == ["x"])
    #expect(rig.mixer.songs.leavingStemCount == 1)
    out.append(Self.renderUntilSwitched(rig))
    out.append(rig.render(4096 + 1000))  // 0.1 s = 4800 frames of fade, and more
    let n = 4800
    let p = try #require(out.right.indices.first { out.right[$0] != 0 }.map { $0 - 1 })  // sin(0) = 0 on the switch frame
    #expect(p == 2048, "switch frame \(p): the start of the first block after the request")
    #expect(out.left[..<p].allSatisfy { $0 == 0.25 })
    var worst = 0.0
    for k in 0..<n {
      let angle = Double.pi / 2 * Double(k) / Double(n)
      worst = max(worst, abs(Double(out.left[p + k]) - 0.25 * cos(angle)), abs(Double(out.right[p + k]) - 0.5 * sin(angle)))
    }
    #expect(worst < 1e-6, "largest deviation from the equal-power curves: \(worst)")
    // The midpoint: both at cos(π/4) = sin(π/4) = −3.01 dB.
    #expect(abs(Double(out.left[p + n / 2]) - 0.25 * 0.5.squareRoot()) < 1e-6)
    #expect(abs(Double(out.right[p + n / 2]) - 0.5 * 0.5.squareRoot()) < 1e-6)
    // (B panned hard right still leaks 0.5 · cos(π/2) ≈ 3e-17 into the left.)
    #expect(out.left[(p + n)...].allSatisfy { abs($0) < 1e-15 }, "the old song is silent after the fade")
    #expect(out.right[(p + n)...].allSatisfy { $0 == 0.5 }, "the new song is at full gain after the fade")
    _ = rig.mixer.pump()
    #expect(rig.mixer.songs.leavingStemCount == 0, "the old voice was handed back and freed")
    #expect(rig.mixer.renderState.pointee.status.pointee.detachedVoices.load(ordering: .relaxed) == 0)
    #expect(rig.mixer.stems.statuses().map(\.settings.pan) == [1], "the stem called x is the new song's")
  }

  @Test("crossfade: the old song is off the transport — a pause and a seek during the fade leave its fade-out alone")
  func crossfadeIgnoresTransport() throws {
    let folder = try TemporaryFolder()
    try writeAudio(folder.file("a.wav"), format: .wavFloat, channels: [Signal.constant(0.25, frames: 96000)])
    try writeAudio(folder.file("b.wav"), format: .wavFloat, channels: [Signal.constant(0.5, frames: 96000)])
    let rig = MixerRig()
    try rig.mixer.load(
      Self.session([stem("a", "a.wav") { $0.pan = -1 }], change: .crossfade, crossfade: 0.2),
      sessionPath: folder.file("a.json"))
    try rig.mixer.transport.play()
    var out = rig.render(1024)
    try rig.mixer.songs.change(to: Self.session([stem("b", "b.wav") { $0.pan = 1 }]), sessionPath: folder.file("b.json"))
    out.append(Self.renderUntilSwitched(rig))
    let p = out.count  // the switch happened at the start of the last block rendered
    out.append(rig.render(2048))
    try rig.mixer.transport.seek(toSeconds: 1)
    out.append(rig.render(1024))
    try rig.mixer.transport.pause()
    out.append(rig.render(8192))
    let n = 9600
    let switchFrame = p - 256
    var worst = 0.0
    for k in 0..<n {
      worst = max(worst, abs(Double(out.left[switchFrame + k]) - 0.25 * cos(Double.pi / 2 * Double(k) / Double(n))))
    }
    #expect(worst < 1e-6, "the old song's fade-out ignored the seek and the pause (deviation \(worst))")
    #expect(out.left[(switchFrame + n)...].allSatisfy { $0 == 0 })
    #expect(out.right.suffix(1000).allSatisfy { $0 == 0 }, "the new song paused")
    _ = rig.mixer.pump()
    #expect(rig.mixer.songs.leavingStemCount == 0)
  }

  @Test("a next song that fails to open leaves the current one playing untouched, and names the file")
  func failedChangeKeepsSong() throws {
    let folder = try TemporaryFolder()
    let a = Self.ramp(-0.5, frames: 96000)
    try writeAudio(folder.file("a.wav"), format: .wavFloat, channels: [a])
    try writeAudio(folder.file("b.wav"), format: .wavFloat, channels: [Signal.constant(0.5, frames: 4800)])
    let rig = MixerRig()  // 64 voice slots
    try rig.mixer.load(Self.session([stem("a", "a.wav") { $0.pan = -1 }]), sessionPath: folder.file("a.json"))
    try rig.mixer.transport.play()
    var out = rig.render(2048)
    let before = snapshot(rig.mixer)
    // A missing audio file (strict): refused before anything is built.
    let missing = Self.session([stem("b", "b.wav"), stem("gone", "gone.wav")])
    expectMixerError([folder.file("missing.json"), "stems[1]", "gone", folder.file("gone.wav")]) { () throws(MixerError) in
      try rig.mixer.songs.change(to: missing, sessionPath: folder.file("missing.json"), strict: true)
    }
    // 64 stems while the old song holds a slot: the 64th finds no slot, after 63 were sent to
    // the renderer as pending voices; they are taken back.
    let tooMany = Self.session((0..<64).map { stem("b\($0)", "b.wav") })
    expectMixerError([folder.file("big.json"), "stems[63]", "slots are in use"]) { () throws(MixerError) in
      try rig.mixer.songs.change(to: tooMany, sessionPath: folder.file("big.json"))
    }
    #expect(snapshot(rig.mixer) == before)
    out.append(rig.render(4096))
    #expect(out.left == Array(a[..<out.count]), "song A played on, untouched")
    _ = rig.mixer.pump()
    #expect(!rig.mixer.engine.hasPendingRemovals, "the pending voices came back and were freed")
    #expect(rig.mixer.songs.leavingStemCount == 0)
    // And a later change still works.
    try rig.mixer.songs.change(to: Self.session([stem("b", "b.wav") { $0.pan = -1 }]), sessionPath: folder.file("b.json"))
    let rest = Self.renderUntilSwitched(rig)
    #expect(rest.left.last == 0.5)
  }

  @Test(
    "crossfade between two stems called x with direct outs: both feed x's ports, nothing reaches the master, and x's meter is the new song's"
  )
  func crossfadeDirectOutsAndMeters() throws {
    let folder = try TemporaryFolder()
    try writeAudio(folder.file("a.wav"), format: .wavFloat, channels: [Signal.constant(0.25, frames: 96000)])
    try writeAudio(folder.file("b.wav"), format: .wavFloat, channels: [Signal.constant(0.5, frames: 96000)])
    let rig = MixerRig()
    let mixer = rig.mixer
    try mixer.load(
      Self.session(
        [
          stem("x", "a.wav") {
            $0.pan = -1; $0.directOut = true
          }
        ], change: .crossfade, crossfade: 0.1),
      sessionPath: folder.file("a.json"))
    try mixer.transport.play()
    // The ports of "x", as the JACK driver wires them: every slot using the name writes there.
    let portL = UnsafeMutablePointer<Float>.allocate(capacity: 256), portR = UnsafeMutablePointer<Float>.allocate(capacity: 256)
    defer { portL.deallocate(); portR.deallocate() }
    let state = mixer.renderState
    func wire() {
      for i in 0..<(state.pointee.maxVoices * 2) { state.pointee.directOutputs[i] = nil }
      for (name, slot) in mixer.stems.directOutSlots() where name == "x" {
        state.pointee.directOutputs[2 * slot] = portL
        state.pointee.directOutputs[2 * slot + 1] = portR
      }
    }
    var direct = Stereo(frames: 0), master = Stereo(frames: 0)
    func render(_ blocks: Int) {
      for _ in 0..<blocks {
        wire()
        master.append(rig.render(256))
        direct.append(
          Stereo(
            left: Array(UnsafeBufferPointer(start: portL, count: 256)),
            right: Array(UnsafeBufferPointer(start: portR, count: 256))))
      }
    }
    render(8)
    try mixer.songs.change(
      to: Self.session([
        stem("x", "b.wav") {
          $0.pan = 1; $0.directOut = true
        }
      ]), sessionPath: folder.file("b.json"))
    let slots = mixer.stems.directOutSlots()
    #expect(slots.count == 2 && slots.allSatisfy { $0.name == "x" } && slots[0].slot != slots[1].slot, "\(slots)")
    render(30)  // 0.1 s = 4800 frames of fade from frame 2048
    #expect(master.left.allSatisfy { $0 == 0 } && master.right.allSatisfy { $0 == 0 }, "direct-out stems stay off the master")
    let p = 2048, n = 4800
    var worst = 0.0
    for k in 0..<n {
      let angle = Double.pi / 2 * Double(k) / Double(n)
      worst = max(
        worst, abs(Double(direct.left[p + k]) - 0.25 * cos(angle) - 0.5 * cos(Double.pi / 2) * sin(angle)),
        abs(Double(direct.right[p + k]) - 0.5 * sin(angle)))
    }
    #expect(worst < 1e-6, "x's ports carry both songs' x with the crossfade gains (deviation \(worst))")
    #expect(direct.left[..<p].allSatisfy { $0 == 0.25 })
    #expect(direct.right[(p + n)...].allSatisfy { $0 == 0.5 })
    _ = mixer.pump()
    #expect(mixer.stems.directOutSlots().count == 1, "the old x let go of the ports once handed back")
    // x's meter is the new stem's: hard right, nothing of the old stem's 0.25 on the left.
    let meter = try mixer.stems.status("x").meter
    #expect(meter.channels[0].peak < -100, "left peak \(meter.channels[0].peak) dB")
    #expect(abs(meter.channels[1].peak - decibels(0.5)) < 0.01, "right peak \(meter.channels[1].peak) dB")
  }

  @Test("offline stems: the old song's may share a name with the new song's; the new song's are listed, with a warning")
  func offlineStemsAcrossChange() throws {
    let folder = try TemporaryFolder()
    try writeAudio(folder.file("a.wav"), format: .wavFloat, channels: [Signal.constant(0.25, frames: 96000)])
    try writeAudio(folder.file("b.wav"), format: .wavFloat, channels: [Signal.constant(0.5, frames: 96000)])
    let rig = MixerRig()
    try rig.mixer.load(Self.session([stem("a", "a.wav") { $0.pan = -1 }, stem("x", "gone.wav")]), sessionPath: folder.file("a.json"))
    #expect(rig.mixer.offlineStems.map(\.settings.name) == ["x"])
    try rig.mixer.transport.play()
    _ = rig.render(1024)
    let warnings = try rig.mixer.songs.change(
      to: Self.session([stem("x", "b.wav") { $0.pan = -1 }, stem("y", "missing.wav")]), sessionPath: folder.file("b.json"))
    #expect(warnings.count == 1 && warnings[0].description.contains(folder.file("missing.wav")), "\(warnings)")
    #expect(rig.mixer.stems.names == ["x"])
    #expect(rig.mixer.offlineStems.map(\.settings.name) == ["y"])
    let out = Self.renderUntilSwitched(rig)
    #expect(out.left.allSatisfy { $0 == 0.5 })
  }

  @Test("a second change while the first still waits for the disk: the first song never sounds, the old one goes straight to the third")
  func supersededChange() throws {
    let folder = try TemporaryFolder()
    try writeAudio(folder.file("a.wav"), format: .wavFloat, channels: [Signal.constant(0.25, frames: 96000)])
    try writeAudio(folder.file("b.wav"), format: .wavFloat, channels: [Signal.constant(0.5, frames: 96000)])
    try writeAudio(folder.file("c.wav"), format: .wavFloat, channels: [Signal.constant(0.125, frames: 96000)])
    let rig = MixerRig()
    try rig.mixer.load(Self.session([stem("a", "a.wav") { $0.pan = -1 }]), sessionPath: folder.file("a.json"))
    try rig.mixer.transport.play()
    var out = rig.render(1024)
    // No render between the two changes: the first cannot have happened.
    try rig.mixer.songs.change(to: Self.session([stem("b", "b.wav") { $0.pan = -1 }]), sessionPath: folder.file("b.json"))
    #expect(!rig.mixer.songs.changeDone)
    try rig.mixer.songs.change(to: Self.session([stem("c", "c.wav") { $0.pan = -1 }]), sessionPath: folder.file("c.json"))
    #expect(rig.mixer.stems.names == ["c"])
    out.append(Self.renderUntilSwitched(rig))
    out.append(rig.render(2048))
    #expect(!out.left.contains(0.5), "song b never sounded")
    let switchFrame = try #require(out.left.firstIndex(of: 0.125))
    #expect(switchFrame == 1024)
    #expect(out.left[..<switchFrame].allSatisfy { $0 == 0.25 } && out.left[switchFrame...].allSatisfy { $0 == 0.125 })
    _ = rig.mixer.pump()
    #expect(rig.mixer.songs.leavingStemCount == 0, "a's and b's voices were handed back")
    #expect(!rig.mixer.engine.hasPendingRemovals)
  }

  @Test("opening a session while a change waits: the change completes first, then the open applies to what plays")
  func openDuringPendingChange() throws {
    let folder = try TemporaryFolder()
    try writeAudio(folder.file("a.wav"), format: .wavFloat, channels: [Signal.constant(0.25, frames: 96000)])
    try writeAudio(folder.file("b.wav"), format: .wavFloat, channels: [Signal.constant(0.5, frames: 96000)])
    try writeAudio(folder.file("c.wav"), format: .wavFloat, channels: [Signal.constant(0.125, frames: 96000)])
    let rig = MixerRig()
    try rig.mixer.load(Self.session([stem("a", "a.wav") { $0.pan = -1 }]), sessionPath: folder.file("a.json"))
    try rig.mixer.transport.play()
    _ = rig.render(1024)
    try rig.mixer.songs.change(to: Self.session([stem("b", "b.wav") { $0.pan = -1 }]), sessionPath: folder.file("b.json"))
    try rig.mixer.load(Self.session([stem("c", "c.wav") { $0.pan = -1 }]), sessionPath: folder.file("c.json"))
    let out = rig.render(9600)
    #expect(out.left.last == 0.125, "the opened session plays (a plain open while playing: fade, seek, resume)")
    #expect(!out.left.contains(0.25), "the old song stopped at the change, which the open completed")
    _ = rig.mixer.pump()
    #expect(rig.mixer.songs.leavingStemCount == 0)
    #expect(rig.mixer.songs.changeDone)
  }

  @Test("paused, a song change is a plain open: nothing plays, the new song waits at its position")
  func pausedChangeIsLoad() throws {
    let folder = try TemporaryFolder()
    try writeAudio(folder.file("a.wav"), format: .wavFloat, channels: [Signal.constant(0.25, frames: 9600)])
    try writeAudio(folder.file("b.wav"), format: .wavFloat, channels: [Signal.constant(0.5, frames: 9600)])
    let rig = MixerRig()
    try rig.mixer.load(Self.session([stem("a", "a.wav")], change: .crossfade), sessionPath: folder.file("a.json"))
    try rig.mixer.songs.change(to: Self.session([stem("b", "b.wav") { $0.pan = -1 }]), sessionPath: folder.file("b.json"))
    #expect(rig.mixer.stems.names == ["b"])
    #expect(rig.render(1024).left.allSatisfy { $0 == 0 })
    try rig.mixer.transport.play()
    #expect(rig.render(1024).left.allSatisfy { $0 == 0.5 })
  }

  @Test("play sent while a seek fades out no longer cancels the seek (the old 'next' left the new song silent)")
  func playDuringSeekFade() throws {
    let folder = try TemporaryFolder()
    try writeAudio(folder.file("a.wav"), format: .wavFloat, channels: [Signal.constant(0.25, frames: 96000)])
    try writeAudio(folder.file("b.wav"), format: .wavFloat, channels: [Signal.constant(0.5, frames: 96000)])
    let rig = MixerRig()
    try rig.mixer.load(Self.session([stem("a", "a.wav") { $0.pan = -1 }]), sessionPath: folder.file("a.json"))
    try rig.mixer.transport.play()
    _ = rig.render(2048)
    // What 'next' did before song changes existed: open (a seek while playing), then play.
    try rig.mixer.load(Self.session([stem("b", "b.wav") { $0.pan = -1 }]), sessionPath: folder.file("b.json"))
    try rig.mixer.transport.play()
    let out = rig.render(4800)
    #expect(out.left.last == 0.5)
  }
}

/// Renders 256-frame blocks every 5.33 ms on its own thread, like JACK's process thread.
final class LiveAudioThread: @unchecked Sendable {
  let state: UnsafeMutablePointer<RenderState>
  private let lock = NSLock()
  private var output: [Float] = []
  private var stopping = false
  private var thread: Thread?
  private let done = DispatchSemaphore(value: 0)

  init(_ mixer: Mixer) { state = mixer.renderState }

  func start() {
    let t = Thread { [self] in
      let left = UnsafeMutablePointer<Float>.allocate(capacity: 256), right = UnsafeMutablePointer<Float>.allocate(capacity: 256)
      defer { left.deallocate(); right.deallocate(); done.signal() }
      while !lock.withLock({ stopping }) {
        renderBlock(state, left: left, right: right, frameCount: 256)
        lock.withLock { output += UnsafeBufferPointer(start: left, count: 256) }
        usleep(5333)
      }
    }
    thread = t
    t.start()
  }

  /// Waits (polling, up to `timeout` seconds) until `condition` holds for the left channel
  /// rendered so far.
  func waitUntil(timeout: Double, _ condition: ([Float]) -> Bool) -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
    while true {
      if lock.withLock({ condition(output) }) { return true }
      if ContinuousClock.now >= deadline { return false }
      usleep(2000)
    }
  }

  /// Stops the thread and returns the left channel rendered.
  func stop() -> [Float] {
    lock.withLock { stopping = true }
    done.wait()
    return lock.withLock { output }
  }
}
