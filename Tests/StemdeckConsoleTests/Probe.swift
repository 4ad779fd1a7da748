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
  func run(_ lines: [String]) { for line in lines {
    out.append("> \(line)")
    let ok = c.execute(line: line)
    out.append("  [\(ok)]")
  } }
  run(["add /tmp/conprobe/drums.wav", "add /tmp/conprobe/bass.wav", "vol drums 0.5", "pan drums -0.3", "loops drums 2", "mute drums", "solo drums", "directout drums on", "offset bass 500ms", "rate bass 0.75", "master -6 dB", "stems", "play"])
  let l = UnsafeMutablePointer<Float>.allocate(capacity: 1024), r = UnsafeMutablePointer<Float>.allocate(capacity: 1024)
  for _ in 0..<20 { mixer.fillStreams(); renderBlock(mixer.renderState, left: l, right: r, frameCount: 1024) }
  run(["unmute drums", "unsolo drums"])
  for _ in 0..<20 { mixer.fillStreams(); renderBlock(mixer.renderState, left: l, right: r, frameCount: 1024) }
  run(["meters", "meters drums", "stems", "status", "save /tmp/conprobe/s.json", "status", "vol bass 0.3", "status"])
  print(try String(contentsOfFile: "/tmp/conprobe/s.json", encoding: .utf8))
  c.interactive = true
  run(["new", "open /tmp/conprobe/s.json", "quit", "quit!"])
  print(out.joined(separator: "\n"))
  print(Arguments.usage)
  for a in [["render", "S", "--output", "o.wav", "--duration", "5"], ["--server"], ["--server", "--play"], ["a.json", "render"], ["render", "a.json"], ["render", "--output", "x"], ["--duration", "-5"], ["-r", "abc"], ["--bogus"]] {
    do { print(a, try Arguments.parse(a)) } catch { print(a, "ERR", error) }
  }
}
