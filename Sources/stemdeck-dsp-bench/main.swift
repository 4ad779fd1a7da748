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
  // Through write(2): a closed stderr must not trap here, and its error is ignored (nothing is
  // left to tell it to).
  let line = Array("stemdeck-dsp-bench: \(message)\n".utf8)
  _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
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

/// Output frames a processing call makes at most: a live period.
let blockFrames = 128

/// The timed loop both cases share: calls `step` while a block more fits in the output
/// (`capacity` frames), with the input, where the output's next frame goes, and the frames made
/// so far (which it adds to), until it returns false; then writes what was made to `path` with
/// the CPU time of the calls (`finish`).
func runBlocks(
  _ input: [Float], channels: Int, capacity: Int, path: String,
  step: (_ source: UnsafePointer<Float>, _ destination: UnsafeMutablePointer<Float>, _ made: inout Int) -> Bool
) {
  var output = [Float](repeating: 0, count: capacity * channels)
  var made = 0
  let start = cpuSeconds()
  input.withUnsafeBufferPointer { source in
    output.withUnsafeMutableBufferPointer { destination in
      while made + blockFrames <= capacity {
        if !step(source.baseAddress!, destination.baseAddress! + made * channels, &made) { break }
      }
    }
  }
  finish(output, frames: made, channels: channels, cpu: cpuSeconds() - start, path: path)
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
  // As a stem makes it (Stem.swift): ratios down to the file ratio at the top rate, 2.
  var converter = SincResampler(
    channels: channels, minimumRatio: base / 2,
    steadyRates: mode == "fast-general" ? nil : (output: outRate, input: inRate))
  if mode == "fast-sse" { converter.usesAVX2 = false }
  defer { converter.deallocate() }
  var read = 0
  runBlocks(input, channels: channels, capacity: capacity, path: args[7]) { source, destination, made in
    let rate = rateFrom + (rateTo - rateFrom) * Swift.min(1, Double(made) / total)
    let feed = Swift.min(256, inFrames - read)
    let got = converter.process(
      input: source + read * channels, inputFrames: feed, output: destination, outputFrames: blockFrames,
      ratio: base / rate, endOfInput: read + feed == inFrames)
    read += got.used
    made += got.generated
    return got.used != 0 || got.generated != 0
  }
}

func stretch(_ args: [String]) {
  guard args[2] == "wsola" else { fail("unknown stretcher \(args[2]): wsola") }
  guard let channels = Int(args[4]), (1...2).contains(channels) else { fail("CHANNELS must be 1 or 2, not \(args[4])") }
  let rate = positive(args[5], "RATE")
  let tempo = positive(args[6], "TEMPO")
  let input = readFloats(args[3])
  let inFrames = input.count / channels
  let capacity = Int(Double(inFrames) / tempo) + 8192
  var wsola = WsolaStretcher(channels: channels, sampleRate: rate, tempo: tempo)
  var fed = 0
  runBlocks(input, channels: channels, capacity: capacity, path: args[7]) { source, destination, made in
    if wsola.update() {
      made += wsola.retrieve(into: destination, frames: blockFrames)
      return !wsola.isFinished()
    }
    let n = Swift.min(wsola.room(), inFrames - fed, 256)
    if n <= 0 { return false }  // no room and no more input: nothing more will come
    fed += wsola.append(interleaved: source + fed * channels, frames: n, final: fed + n == inFrames)
    return true
  }
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
