import Foundation
import StemdeckAudioFile
import StemdeckControl
import StemdeckSession
import Testing

@Suite struct MeterTests {
  @Test("a full-scale 1 kHz sine reads peak 0 dB and average -3.01 dB on the master; silence reads -160")
  func masterMeterKnownSignals() throws {
    let folder = try TemporaryFolder()
    try writeAudio(folder.file("sine.wav"), format: .wavFloat,
                   channels: [Signal.sine(frequency: 1000, sampleRate: 48000, frames: 48000)])
    let rig = MixerRig()
    // Before anything plays the meters read silence.
    _ = rig.render(4800)
    var meter = rig.mixer.masterMeter()
    #expect(meter.channels.count == 2)
    #expect(meter.channels.allSatisfy { $0.peak == -160 && $0.average == -160 })

    try rig.mixer.addStem(path: folder.file("sine.wav"), settings: stem("sine", "sine.wav") { $0.pan = -1 })
    try rig.mixer.setMasterVolume(1)
    try rig.mixer.play()
    _ = rig.render(12000)  // 0.25 s
    meter = rig.mixer.masterMeter()
    let left = meter.channels[0]
    #expect(abs(left.peak - 0) <= 0.05, "peak \(left.peak) dB")
    #expect(abs(left.average - (-3.0103)) <= 0.05, "average \(left.average) dB")
    #expect(abs(left.hold - 0) <= 0.05, "hold \(left.hold) dB")
    #expect(left.clips == 0)
    // Pan -1 on a mono stem: sin(0) = 0 on the right.
    #expect(meter.channels[1].peak == -160 && meter.channels[1].average == -160)

    // The stem's own (post-fader) meter agrees.
    let stemMeter = try rig.mixer.stemStatus("sine").meter
    #expect(abs(stemMeter.channels[0].peak) <= 0.05, "stem peak \(stemMeter.channels[0].peak)")
    #expect(abs(stemMeter.channels[0].average + 3.0103) <= 0.05, "stem average \(stemMeter.channels[0].average)")

    // Master volume 0.5 → -6.02 dB.
    try rig.mixer.setMasterVolume(0.5)
    _ = rig.render(9600)
    meter = rig.mixer.masterMeter()
    #expect(abs(meter.channels[0].peak - (-6.0206)) <= 0.05, "peak at half volume \(meter.channels[0].peak)")
    #expect(abs(meter.channels[0].average - (-9.0309)) <= 0.05)

    // Paused: silence.
    try rig.mixer.pause()
    _ = rig.render(9600)
    meter = rig.mixer.masterMeter()
    #expect(meter.channels.allSatisfy { $0.peak == -160 && $0.average == -160 }, "\(meter)")
  }

  @Test("a signal over full scale counts clips and reads above 0 dB")
  func overs() throws {
    let folder = try TemporaryFolder()
    try writeAudio(folder.file("sine.wav"), format: .wavFloat,
                   channels: [Signal.sine(frequency: 1000, sampleRate: 48000, frames: 48000)])
    let rig = MixerRig()
    try rig.mixer.addStem(path: folder.file("sine.wav"), settings: stem("sine", "sine.wav") { $0.pan = -1; $0.volume = 2 })
    try rig.mixer.play()
    _ = rig.render(9600)
    let left = rig.mixer.masterMeter().channels[0]
    #expect(abs(left.peak - 6.0206) <= 0.05, "peak \(left.peak)")
    #expect(left.clips > 0)
    try rig.mixer.setVolume("sine", 0.5)
    _ = rig.render(9600)
    #expect(rig.mixer.masterMeter().channels[0].clips > 0, "clip counts are held until reset")
    rig.mixer.resetMeters()
    _ = rig.render(9600)
    let after = rig.mixer.masterMeter().channels[0]
    #expect(after.clips == 0, "reset clears the clip count")
    #expect(abs(after.peak - (-6.0206)) <= 0.05)
  }
}
