// stemdeck-dsp-bench: scripts/bench's cases 1r and 2r (issue 38) time stemdeck's own DSP on raw
// audio exactly as scripts/stemdeck_bench/resample_compare.cpp and stretch_compare.cpp time the
// libraries it is compared with: interleaved 32-bit float in, 128 output frames a call (a live
// period), CPU time of the processing calls only.
//
//   stemdeck-dsp-bench resample MODE IN.f32 CHANNELS IN_RATE OUT_RATE OUT.f32 [RATE_FROM [RATE_TO]]
//
// MODE: `fast` (as a stem uses it: the exact rows of the file-to-engine ratio, AVX2 where the
// processor has it), `fast-sse` (the same without AVX2), `fast-general` (without the exact rows:
// the interpolated table every ratio uses). With RATE_FROM the ratio is OUT_RATE / IN_RATE / rate
// (varispeed); with RATE_TO too it glides linearly from RATE_FROM to RATE_TO across the output.
//
//   stemdeck-dsp-bench stretch wsola IN.f32 CHANNELS RATE TEMPO OUT.f32
//
// stemdeck's WSOLA (the `fast` stretch) at TEMPO (0.8: slower, the output 1.25 times as long),
// fed 256 frames at a time as a stem's voice feeds it.
//
// Both print one line: "ns_per_sample N frames_out F" (N per output sample per channel).
import Foundation
import StemdeckEngine

func fail(_ message: String, status: Int32 = 2) -> Never {
  // A closed stderr must not trap here: the throwing write, its error ignored (nothing is left
  // to tell it to).
  try? FileHandle.standardError.write(contentsOf: Data("stemdeck-dsp-bench: \(message)\n".utf8))
  exit(status)
}

func cpuSeconds() -> Double {
  var t = timespec()
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t)
  return Double(t.tv_sec) + Double(t.tv_nsec) * 1e-9
}

/// Raw interleaved 32-bit floats from `path`.
func readFloats(_ path: String) -> [Float] {
  let data: Data
  do {
    data = try Data(contentsOf: URL(fileURLWithPath: path))
  } catch {
    fail("cannot read \(path): \(error.localizedDescription)", status: 1)
  }
  return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
}

func positive(_ text: String, _ what: String) -> Double {
  guard let v = Double(text), v > 0, v.isFinite else { fail("\(what) must be a positive number, not \(text)") }
  return v
}

/// Writes the first `frames` frames of `output` to `path` and prints the timing line.
func finish(_ output: [Float], frames: Int, channels: Int, cpu: Double, path: String) {
  let bytes = output.withUnsafeBytes { Data($0.prefix(frames * channels * MemoryLayout<Float>.size)) }
  if !FileManager.default.createFile(atPath: path, contents: bytes) { fail("cannot write \(path)", status: 1) }
  let ns = frames > 0 ? cpu * 1e9 / Double(frames) / Double(channels) : 0
  print(String(format: "ns_per_sample %.3f frames_out %d", ns, frames))
}

func resample(_ args: [String]) {
  let mode = args[2]
  guard ["fast", "fast-sse", "fast-general"].contains(mode) else {
    fail("unknown mode \(mode): fast, fast-sse or fast-general")
  }
  guard let channels = Int(args[4]), (1...2).contains(channels) else { fail("CHANNELS must be 1 or 2, not \(args[4])") }
  guard let inRate = Int(args[5]), let outRate = Int(args[6]), inRate > 0, outRate > 0 else {
    fail("IN_RATE and OUT_RATE must be positive whole numbers of Hz, not \(args[5]) and \(args[6])")
  }
  let rateFrom = args.count > 8 ? positive(args[8], "RATE_FROM") : 1
  let rateTo = args.count > 9 ? positive(args[9], "RATE_TO") : rateFrom
  let input = readFloats(args[3])
  let inFrames = input.count / channels
  let base = Double(outRate) / Double(inRate)
  let total = Double(inFrames) * base / ((rateFrom + rateTo) / 2)
  let capacity = Int(Double(inFrames) * base / Swift.min(rateFrom, rateTo) * 1.05) + 8192
  var output = [Float](repeating: 0, count: capacity * channels)
  // As a stem makes it (Stem.swift): ratios down to the file ratio at the top rate, 2.
  var converter = SincResampler(
    channels: channels, minimumRatio: base / 2,
    steadyRates: mode == "fast-general" ? nil : (output: outRate, input: inRate))
  if mode == "fast-sse" { converter.usesAVX2 = false }
  defer { converter.deallocate() }
  var read = 0, made = 0
  let block = 128
  let start = cpuSeconds()
  input.withUnsafeBufferPointer { source in
    output.withUnsafeMutableBufferPointer { destination in
      while made + block <= capacity {
        let rate = rateFrom + (rateTo - rateFrom) * Swift.min(1, Double(made) / total)
        let feed = Swift.min(256, inFrames - read)
        let got = converter.process(
          input: source.baseAddress! + read * channels, inputFrames: feed,
          output: destination.baseAddress! + made * channels, outputFrames: block,
          ratio: base / rate, endOfInput: read + feed == inFrames)
        read += got.used
        made += got.generated
        if got.used == 0 && got.generated == 0 { break }
      }
    }
  }
  finish(output, frames: made, channels: channels, cpu: cpuSeconds() - start, path: args[7])
}

func stretch(_ args: [String]) {
  guard args[2] == "wsola" else { fail("unknown stretcher \(args[2]): wsola") }
  guard let channels = Int(args[4]), (1...2).contains(channels) else { fail("CHANNELS must be 1 or 2, not \(args[4])") }
  let rate = positive(args[5], "RATE")
  let tempo = positive(args[6], "TEMPO")
  let input = readFloats(args[3])
  let inFrames = input.count / channels
  let capacity = Int(Double(inFrames) / tempo) + 8192
  var output = [Float](repeating: 0, count: capacity * channels)
  var wsola = WsolaStretcher(channels: channels, sampleRate: rate, tempo: tempo)
  var fed = 0, made = 0
  let block = 128
  let start = cpuSeconds()
  input.withUnsafeBufferPointer { source in
    output.withUnsafeMutableBufferPointer { destination in
      while made + block <= capacity {
        if wsola.update() {
          made += wsola.retrieve(into: destination.baseAddress! + made * channels, frames: block)
          if wsola.isFinished() { break }
        } else {
          let n = Swift.min(wsola.room(), inFrames - fed, 256)
          if n <= 0 { break }  // no room and no more input: nothing more will come
          fed += wsola.append(interleaved: source.baseAddress! + fed * channels, frames: n, final: fed + n == inFrames)
        }
      }
    }
  }
  finish(output, frames: made, channels: channels, cpu: cpuSeconds() - start, path: args[7])
}

let args = CommandLine.arguments
if args.count >= 8 && args[1] == "resample" {
  resample(args)
} else if args.count == 8 && args[1] == "stretch" {
  stretch(args)
} else {
  fail(
    "usage: stemdeck-dsp-bench resample fast|fast-sse|fast-general IN.f32 CHANNELS IN_RATE OUT_RATE OUT.f32 "
      + "[RATE_FROM [RATE_TO]]\n       stemdeck-dsp-bench stretch wsola IN.f32 CHANNELS RATE TEMPO OUT.f32")
}
