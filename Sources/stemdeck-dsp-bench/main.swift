// stemdeck-dsp-bench: scripts/bench's case 1r (issue 38) times stemdeck's own sinc converter on
// raw audio exactly as scripts/stemdeck_bench/resample_compare.cpp times the libraries it is
// compared with: interleaved 32-bit float in, 128 output frames a call (a live period), CPU time
// of the conversion calls only.
//
//   stemdeck-dsp-bench resample MODE IN.f32 CHANNELS IN_RATE OUT_RATE OUT.f32 [RATE_FROM [RATE_TO]]
//
// MODE: `fast` (as a stem uses it: the exact rows of the file-to-engine ratio, AVX2 where the
// processor has it), `fast-sse` (the same without AVX2), `fast-general` (without the exact rows:
// the interpolated table every ratio uses). With RATE_FROM the ratio is OUT_RATE / IN_RATE / rate
// (varispeed); with RATE_TO too it glides linearly from RATE_FROM to RATE_TO across the output.
// Prints one line: "ns_per_sample N frames_out F" (N per output sample per channel).
import Foundation
import StemdeckEngine

func fail(_ message: String, status: Int32 = 2) -> Never {
  FileHandle.standardError.write(Data("stemdeck-dsp-bench: \(message)\n".utf8))
  exit(status)
}

let args = CommandLine.arguments
guard args.count >= 8, args[1] == "resample" else {
  fail("usage: stemdeck-dsp-bench resample fast|fast-sse|fast-general IN.f32 CHANNELS IN_RATE OUT_RATE OUT.f32 [RATE_FROM [RATE_TO]]")
}
let mode = args[2]
guard ["fast", "fast-sse", "fast-general"].contains(mode) else { fail("unknown mode \(mode): fast, fast-sse or fast-general") }
guard let channels = Int(args[4]), (1...2).contains(channels) else { fail("CHANNELS must be 1 or 2, not \(args[4])") }
guard let inRate = Int(args[5]), let outRate = Int(args[6]), inRate > 0, outRate > 0 else {
  fail("IN_RATE and OUT_RATE must be positive whole numbers of Hz, not \(args[5]) and \(args[6])")
}
let rateFrom = args.count > 8 ? Double(args[8]) : 1
let rateTo = args.count > 9 ? Double(args[9]) : rateFrom
guard let rateFrom, let rateTo, rateFrom > 0, rateTo > 0 else { fail("RATE_FROM and RATE_TO must be positive numbers") }

let inputData: Data
do {
  inputData = try Data(contentsOf: URL(fileURLWithPath: args[3]))
} catch {
  fail("cannot read \(args[3]): \(error.localizedDescription)", status: 1)
}
let input: [Float] = inputData.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
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

func cpuSeconds() -> Double {
  var t = timespec()
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t)
  return Double(t.tv_sec) + Double(t.tv_nsec) * 1e-9
}

var read = 0, made = 0
let block = 128
let start = cpuSeconds()
input.withUnsafeBufferPointer { source in
  output.withUnsafeMutableBufferPointer { destination in
    while made + block <= capacity {
      let rate = rateFrom + (rateTo - rateFrom) * Swift.min(1, Double(made) / total)
      let got = converter.process(
        input: source.baseAddress! + read * channels, inputFrames: Swift.min(256, inFrames - read),
        output: destination.baseAddress! + made * channels, outputFrames: block,
        ratio: base / rate, endOfInput: read + Swift.min(256, inFrames - read) == inFrames)
      read += got.used
      made += got.generated
      if got.used == 0 && got.generated == 0 { break }
    }
  }
}
let cpu = cpuSeconds() - start

let bytes = output.withUnsafeBytes { Data($0.prefix(made * channels * MemoryLayout<Float>.size)) }
if !FileManager.default.createFile(atPath: args[7], contents: bytes) { fail("cannot write \(args[7])", status: 1) }
print(String(format: "ns_per_sample %.3f frames_out %d", made > 0 ? cpu * 1e9 / Double(made) / Double(channels) : 0, made))
