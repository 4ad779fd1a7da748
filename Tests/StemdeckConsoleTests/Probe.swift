import Testing
import Foundation
@testable import StemdeckConsole
import StemdeckControl
import StemdeckSession
import StemdeckEngine

@Test func probe() throws {
  let mixer = Mixer(sampleRate: 48000, streaming: .synchronous)
  defer { mixer.shutdown() }
  var out: [String] = []
  let c = Console(mixer: mixer) { out.append($0) }
  for line in ["help", "help pan", "help rm", "help nosuch", "paly", "stems", "add /tmp/conprobe/drums.wav", "add /tmp/conprobe/bass.wav", "stems", "status", "meters", "vol drms 0.5", "pan drums", "add /nonexistent.wav", "add /tmp/conprobe/notes.txt", "add /tmp/conprobe/drums.wav", "stems", "wait -2s", "wait 5m", "master 0.5 0.5", "vol drums 0.5 x", "add x as", "ports", "save", "offset drums -1", "loops drums 1.5", "seek abc", "quality ultra", "seek 1:75"] {
    out.append("> \(line)")
    let ok = c.execute(line: line)
    out.append("  [\(ok)]")
  }
  print(out.joined(separator: "\n"))
}
