import Foundation
import StemdeckAudioFile
import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import Testing

@Suite struct MeterTests {
  @Test("a full-scale 1 kHz sine reads peak 0 dB and average -3.01 dB on the master; silence reads -160")
  func masterMeterKnownSignals() throws {
    let folder = try TemporaryFolder()
    try writeAudio(
      folder.file("sine.wav"), format: .wavFloat,
      channels: [Signal.sine(frequency: 1000, sampleRate: 48000, frames: 48000)])
    let rig = MixerRig()
    // Before anything plays the meters read silence.
    _ = rig.render(4800)
    var meter = rig.mixer.master.meter()
    #expect(meter.channels.count == 2)
    #expect(meter.channels.allSatisfy { $0.peak == -160 && $0.average == -160 })

    try rig.mixer.stems.add(path: folder.file("sine.wav"), settings: stem("sine", "sine.wav") { $0.pan = -1 })
    try rig.mixer.master.setVolume(1)
    try rig.mixer.transport.play()
    _ = rig.render(12000)  // 0.25 s
    meter = rig.mixer.master.meter()
    let left = meter.channels[0]
    #expect(abs(left.peak - 0) <= 0.05, "peak \(left.peak) dB")
    #expect(abs(left.average - (-3.0103)) <= 0.05, "average \(left.average) dB")
    #expect(abs(left.hold - 0) <= 0.05, "hold \(left.hold) dB")
    #expect(left.clips == 0)
    // Pan -1 on a mono stem: sin(0) = 0 on the right.
    #expect(meter.channels[1].peak == -160 && meter.channels[1].average == -160)

    // The stem's own (post-fader) meter agrees.
    let stemMeter = try rig.mixer.stems.status("sine").meter
    #expect(abs(stemMeter.channels[0].peak) <= 0.05, "stem peak \(stemMeter.channels[0].peak)")
    #expect(abs(stemMeter.channels[0].average + 3.0103) <= 0.05, "stem average \(stemMeter.channels[0].average)")

    // Master volume 0.5 → -6.02 dB.
    try rig.mixer.master.setVolume(0.5)
    _ = rig.render(9600)
    meter = rig.mixer.master.meter()
    #expect(abs(meter.channels[0].peak - (-6.0206)) <= 0.05, "peak at half volume \(meter.channels[0].peak)")
    #expect(abs(meter.channels[0].average - (-9.0309)) <= 0.05)

    // Paused: silence.
    try rig.mixer.transport.pause()
    _ = rig.render(9600)
    meter = rig.mixer.master.meter()
    #expect(meter.channels.allSatisfy { $0.peak == -160 && $0.average == -160 }, "\(meter)")
  }

  @Test("a signal over full scale counts clips and reads above 0 dB")
  func overs() throws {
    let folder = try TemporaryFolder()
    try writeAudio(
      folder.file("sine.wav"), format: .wavFloat,
      channels: [Signal.sine(frequency: 1000, sampleRate: 48000, frames: 48000)])
    let rig = MixerRig()
    try rig.mixer.stems.add(
      path: folder.file("sine.wav"),
      settings: stem("sine", "sine.wav") {
        $0.pan = -1; $0.volume = 2
      })
    try rig.mixer.transport.play()
    _ = rig.render(9600)
    let left = rig.mixer.master.meter().channels[0]
    #expect(abs(left.peak - 6.0206) <= 0.05, "peak \(left.peak)")
    #expect(left.clips > 0)
    try rig.mixer.strips.setVolume("sine", 0.5)
    _ = rig.render(9600)
    #expect(rig.mixer.master.meter().channels[0].clips > 0, "clip counts are held until reset")
    rig.mixer.resetMeters()
    _ = rig.render(9600)
    let after = rig.mixer.master.meter().channels[0]
    #expect(after.clips == 0, "reset clears the clip count")
    #expect(abs(after.peak - (-6.0206)) <= 0.05)
  }

  @Test("stem meters: post-fader reads the stem after volume and pan (two sides), pre-fader the file")
  func stemMeterPoints() throws {
    let folder = try TemporaryFolder()
    try writeAudio(
      folder.file("sine.wav"), format: .wavFloat,
      channels: [Signal.sine(frequency: 1000, sampleRate: 48000, frames: 96000)])
    try writeAudio(
      folder.file("stereo.wav"), format: .wavFloat,
      channels: [
        Signal.sine(frequency: 1000, sampleRate: 48000, frames: 96000, amplitude: 0.5),
        Signal.sine(frequency: 500, sampleRate: 48000, frames: 96000, amplitude: 0.25)
      ])
    let rig = MixerRig()
    try rig.mixer.stems.add(
      path: folder.file("sine.wav"),
      settings: stem("mono", "sine.wav") {
        $0.pan = -1; $0.volume = 0.5
      })
    try rig.mixer.stems.add(path: folder.file("stereo.wav"), settings: stem("stereo", "stereo.wav") { $0.pan = 0.5 })
    try rig.mixer.transport.play()
    _ = rig.render(9600)
    var mono = try rig.mixer.stems.status("mono").meter
    #expect(mono.channels.count == 2)
    #expect(abs(mono.channels[0].peak - (-6.0206)) < 0.05, "post-fader mono left \(mono.channels[0].peak)")
    #expect(abs(mono.channels[0].average - (-9.0309)) < 0.05)
    #expect(mono.channels[1].peak == -160, "pan -1 leaves the right side silent: \(mono.channels[1].peak)")
    var stereo = try rig.mixer.stems.status("stereo").meter
    // Balance at +0.5: left × 0.5, right × 1.
    #expect(abs(stereo.channels[0].peak - decibels(0.25)) < 0.05, "stereo left \(stereo.channels[0].peak)")
    #expect(abs(stereo.channels[1].peak - decibels(0.25)) < 0.05, "stereo right \(stereo.channels[1].peak)")
    #expect(abs(stereo.channels[1].average - decibels(0.25 / 2.0.squareRoot())) < 0.05)

    var options = SessionOptions()
    options.meterPoint = .pre
    try rig.mixer.setOptions(options)
    _ = rig.render(9600)
    mono = try rig.mixer.stems.status("mono").meter
    #expect(mono.channels.count == 1, "a pre-fader meter follows the file's channels")
    #expect(abs(mono.channels[0].peak) < 0.05, "pre-fader mono \(mono.channels[0].peak)")
    #expect(abs(mono.channels[0].average + 3.0103) < 0.05)
    stereo = try rig.mixer.stems.status("stereo").meter
    #expect(abs(stereo.channels[0].peak - decibels(0.5)) < 0.05, "pre-fader stereo left \(stereo.channels[0].peak)")
    #expect(abs(stereo.channels[1].peak - decibels(0.25)) < 0.05)
  }

  @Test("a copy of the mixer at another sample rate keeps stems, settings and position")
  func copyAtOtherRate() throws {
    let folder = try TemporaryFolder()
    try writeAudio(
      folder.file("sine.wav"), format: .wavFloat,
      channels: [Signal.sine(frequency: 1000, sampleRate: 48000, frames: 96000, amplitude: 0.5)])
    let rig = MixerRig()
    try rig.mixer.stems.add(
      path: folder.file("sine.wav"),
      settings: stem("s", "sine.wav") {
        $0.pan = -1; $0.volume = 1.5; $0.loops = 3
      })
    try rig.mixer.master.setVolume(0.8)
    try rig.mixer.transport.seek(toSeconds: 0.75)
    let copy = try rig.mixer.copy(atSampleRate: 44100)
    defer { copy.shutdown() }
    #expect(copy.sampleRate == 44100)
    #expect(copy.transport.position == 0.75)
    #expect(copy.master.volume == 0.8)
    #expect(copy.stems.statuses().map(\.settings) == rig.mixer.stems.statuses().map(\.settings))
    #expect(copy.transport.duration == rig.mixer.transport.duration)
  }

  @Test("a copy at another sample rate also keeps tempo, recording settings, effects and offline stems (all a session file holds)")
  func copyAtOtherRateKeepsEverything() throws {
    let folder = try TemporaryFolder()
    try writeAudio(
      folder.file("sine.wav"), format: .wavFloat,
      channels: [Signal.sine(frequency: 1000, sampleRate: 48000, frames: 48000, amplitude: 0.5)])
    try writeAudio(
      folder.file("hit.wav"), format: .wavFloat,
      channels: [Signal.sine(frequency: 500, sampleRate: 48000, frames: 4800, amplitude: 0.5)])
    var session = Session()
    session.stems = [stem("s", "sine.wav") { $0.volume = 0.7 }, stem("gone", "missing.wav")]
    session.tempo = Tempo(bpm: 96, beatsPerBar: 3)
    session.recording.takesMuted = true
    session.recording.folder = "takes"
    var hit = EffectSettings(name: "hit", file: "hit.wav")
    hit.volume = 0.5
    session.effects = [hit]
    let sessionPath = folder.file("song.json")
    let rig = MixerRig()
    let warnings = try rig.mixer.load(session, sessionPath: sessionPath)
    #expect(warnings.count == 1, "\(warnings)")
    let copy = try rig.mixer.copy(atSampleRate: 44100)
    defer { copy.shutdown() }
    let before = rig.mixer.session(savingTo: sessionPath), after = copy.session(savingTo: sessionPath)
    #expect(after == before)
    #expect(after.tempo == Tempo(bpm: 96, beatsPerBar: 3) && after.effects.map(\.name) == ["hit"])
    #expect(after.stems.map(\.name) == ["s", "gone"])
  }
}
