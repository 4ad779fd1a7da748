// Case 1r of scripts/bench (issue 38): one converter library at one setting, timed on raw float
// audio. stemdeck's own sinc is timed by `stemdeck-dsp-bench` (Sources/stemdeck-dsp-bench); this
// program times the libraries in Debian it is compared with, the same way: interleaved 32-bit
// float in, 128 output frames a call (a live period), CPU time of the conversion calls only.
//
//   resample_compare LIBRARY SETTING IN.f32 CHANNELS IN_RATE OUT_RATE OUT.f32 [RATE_FROM [RATE_TO]]
//
// LIBRARY SETTING: src sinc_fastest|sinc_medium|sinc_best|linear; soxr quick|low|medium|high|
// very_high; zita resampler|vresampler. With RATE_FROM the ratio is OUT_RATE / IN_RATE / rate
// (varispeed); with RATE_TO too it glides linearly from RATE_FROM to RATE_TO across the output.
// Prints one line: "ns_per_sample N frames_out F" (N per output sample per channel).
#include <samplerate.h>
#include <soxr.h>
#include <zita-resampler/resampler.h>
#include <zita-resampler/vresampler.h>


#include "bench_io.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

// The ratio (output / input) for output frame `i` of `total`.
struct Schedule {
  double base, from, to;
  long total;
  double at(long i) const {
    double rate = from + (to - from) * (total > 0 ? double(i) / double(total) : 0);
    return base / rate;
  }
};

const long kBlock = 128;

long run_src(int type, const std::vector<float> &in, int ch, Schedule s, std::vector<float> &out, double &cpu) {
  int err = 0;
  SRC_STATE *st = src_new(type, ch, &err);
  if (!st) return -1;
  long frames = long(in.size()) / ch, read = 0, made = 0;
  double t0 = cpu_seconds();
  while (made + kBlock <= long(out.size()) / ch) {
    SRC_DATA d;
    std::memset(&d, 0, sizeof d);
    d.data_in = in.data() + read * ch;
    d.input_frames = frames - read;
    d.data_out = out.data() + made * ch;
    d.output_frames = kBlock;
    d.src_ratio = s.at(made);
    d.end_of_input = 1;
    if (src_process(st, &d) != 0) break;
    read += d.input_frames_used;
    made += d.output_frames_gen;
    if (d.input_frames_used == 0 && d.output_frames_gen == 0) break;
  }
  cpu = cpu_seconds() - t0;
  src_delete(st);
  return made;
}

long run_soxr(unsigned long recipe, bool variable, const std::vector<float> &in, int ch, Schedule s, double in_rate,
              double out_rate, std::vector<float> &out, double &cpu) {
  soxr_error_t err = nullptr;
  soxr_io_spec_t io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I);
  soxr_quality_spec_t q = soxr_quality_spec(recipe, variable ? SOXR_VR : 0);
  // A variable-rate soxr takes io_ratio (input / output) through soxr_set_io_ratio; its nominal
  // rates bound the largest ratio it will be asked for.
  soxr_t st = variable ? soxr_create(2, 1, ch, &err, &io, &q, nullptr)
                       : soxr_create(in_rate, out_rate, ch, &err, &io, &q, nullptr);
  if (!st || err) return -1;
  long frames = long(in.size()) / ch, read = 0, made = 0;
  double t0 = cpu_seconds();
  if (variable) soxr_set_io_ratio(st, 1 / s.at(0), 0);
  while (made + kBlock <= long(out.size()) / ch) {
    if (variable) soxr_set_io_ratio(st, 1 / s.at(made), kBlock);
    size_t idone = 0, odone = 0;
    long feed = read < frames ? std::min<long>(frames - read, 256) : 0;
    err = soxr_process(st, feed ? in.data() + read * ch : nullptr, size_t(feed), &idone, out.data() + made * ch,
                       size_t(kBlock), &odone);
    if (err) break;
    read += long(idone);
    made += long(odone);
    if (feed == 0 && odone == 0) break;
  }
  cpu = cpu_seconds() - t0;
  soxr_delete(st);
  return made;
}

// zita's output lags its input by about hlen input frames; the analysis fits tones, so a delay
// does not count against it. After the input, silence flushes what the filter holds.
template <class R, class Before>
long run_zita(R &r, const std::vector<float> &in, int ch, Schedule s, Before before, std::vector<float> &out,
              double &cpu) {
  long frames = long(in.size()) / ch, read = 0, made = 0;
  std::vector<float> silence(size_t(4096) * ch, 0.0f);
  double t0 = cpu_seconds();
  while (made + kBlock <= long(out.size()) / ch) {
    before(made);
    long feed = read < frames ? std::min<long>(frames - read, 256) : 4096;
    r.inp_count = unsigned(feed);
    r.inp_data = read < frames ? const_cast<float *>(in.data() + read * ch) : silence.data();
    r.out_count = unsigned(kBlock);
    r.out_data = out.data() + made * ch;
    r.process();
    long used = feed - long(r.inp_count), got = kBlock - long(r.out_count);
    if (read < frames) read += used;
    made += got;
    if (read >= frames && made >= long(double(frames) * s.at(made) + 64)) break;
    if (got == 0 && used == 0) break;
  }
  cpu = cpu_seconds() - t0;
  return made;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 8) {
    std::fprintf(stderr, "usage: resample_compare LIBRARY SETTING IN.f32 CHANNELS IN_RATE OUT_RATE OUT.f32 "
                         "[RATE_FROM [RATE_TO]]\n");
    return 2;
  }
  std::string lib = argv[1], setting = argv[2];
  std::vector<float> in = read_all("resample_compare", argv[3]);
  int ch = std::atoi(argv[4]);
  double in_rate = std::atof(argv[5]), out_rate = std::atof(argv[6]);
  bool variable = argc > 8;
  double from = variable ? std::atof(argv[8]) : 1, to = argc > 9 ? std::atof(argv[9]) : from;
  long in_frames = long(in.size()) / ch;
  Schedule s{out_rate / in_rate, from, to, 0};
  long capacity = long(double(in_frames) * out_rate / in_rate / std::min(from, to) * 1.05) + 8192;
  s.total = long(double(in_frames) * out_rate / in_rate / ((from + to) / 2));
  std::vector<float> out(size_t(capacity) * ch, 0.0f);
  double cpu = 0;
  long made = -1;
  if (lib == "src") {
    int type = setting == "sinc_fastest" ? SRC_SINC_FASTEST
               : setting == "sinc_medium" ? SRC_SINC_MEDIUM_QUALITY
               : setting == "sinc_best"   ? SRC_SINC_BEST_QUALITY
               : setting == "linear"      ? SRC_LINEAR
                                          : -1;
    if (type >= 0) made = run_src(type, in, ch, s, out, cpu);
  } else if (lib == "soxr") {
    unsigned long recipe = setting == "quick"       ? SOXR_QQ
                           : setting == "low"       ? SOXR_LQ
                           : setting == "medium"    ? SOXR_MQ
                           : setting == "high"      ? SOXR_HQ
                           : setting == "very_high" ? SOXR_VHQ
                                                    : 99;
    if (recipe != 99) made = run_soxr(recipe, variable, in, ch, s, in_rate, out_rate, out, cpu);
  } else if (lib == "zita" && setting == "resampler" && !variable) {
    Resampler r;
    if (r.setup(unsigned(in_rate), unsigned(out_rate), unsigned(ch), 32) == 0)
      made = run_zita(r, in, ch, s, [](long) {}, out, cpu);
  } else if (lib == "zita" && setting == "vresampler") {
    VResampler r;
    // VResampler's filter is set up for one ratio and its ratio may then move by a factor of 16
    // either way (set_rratio); set up for the lowest ratio this run meets: a host that rebuilds
    // it for every new rate or glide (stemdeck's converter takes any rate up to 2 at once).
    double lowest = std::min(s.at(0), s.at(s.total));
    if (r.setup(lowest, unsigned(ch), 32) == 0) {
      r.set_rratio(s.at(0) / lowest);
      made = run_zita(r, in, ch, s, [&](long at) { r.set_rratio(s.at(at) / lowest); }, out, cpu);
    }
  }
  if (made < 0) {
    std::fprintf(stderr, "resample_compare: %s %s: unknown or refused (with varispeed: %s)\n", lib.c_str(),
                 setting.c_str(), variable ? "yes" : "no");
    return 2;
  }
  return finish("resample_compare", argv[7], out, made, ch, cpu);
}
