// Issue 16 regressions at the mixer level ("nothing lost").
import Foundation
import StemdeckAudioFile
@testable import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import Testing

@Suite("Hostile input: the mixer keeps what it cannot load (issue 16)")
struct HostileControlTests {
  @Test("8: an effect whose file is gone when the engine is rebuilt at a new rate (server followed) is kept, not dropped")
  func effectKeptAcrossRebuild() throws {
    let folder = try TemporaryFolder()
    try writeAudio(folder.file("hit.wav"), format: .wavFloat, channels: [Signal.ramp(frames: 4800)])
    try writeAudio(folder.file("gone.wav"), format: .wavFloat, channels: [Signal.ramp(frames: 4800)])
    let mixer = Mixer(sampleRate: 48000, streaming: .synchronous)
    defer { mixer.shutdown() }
    try mixer.effects.load(path: folder.file("hit.wav"), settings: EffectSettings(name: "hit", file: "hit.wav"))
    var gone = EffectSettings(name: "gone", file: "gone.wav")
    gone.volume = 0.5
    try mixer.effects.load(path: folder.file("gone.wav"), settings: gone)
    try FileManager.default.removeItem(atPath: folder.file("gone.wav"))
    let copy = try mixer.copy(atSampleRate: 44100)
    defer { copy.shutdown() }
    #expect(copy.effects.statuses().map(\.settings.name) == ["hit"])
    let saved = copy.session(savingTo: folder.file("s.json")).effects
    #expect(saved.map(\.name) == ["hit", "gone"])
    #expect(saved.last?.file == "gone.wav" && saved.last?.volume == 0.5)
  }
}
