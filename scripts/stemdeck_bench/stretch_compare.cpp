// Case 2r of scripts/bench (issue 38): one time-stretcher library at one setting, timed on raw
// float audio the way `stemdeck-dsp-bench stretch` times stemdeck's WSOLA: interleaved 32-bit
// float in, 256 input frames fed at a time, 128 output frames read a call, CPU time of the
// stretcher's calls only.
//
//   stretch_compare LIBRARY SETTING IN.f32 CHANNELS RATE TEMPO OUT.f32
//
// LIBRARY SETTING: soundtouch default (its WSOLA with its default sequence, seek window and
// overlap); rubberband r2 (real-time, the faster engine), r3 (real-time, the finer engine) or
// r3short (real-time, finer, short window: stemdeck's `fine` stretch). TEMPO 0.8 is slower (the output 1.25 times as long).
// Prints one line: "ns_per_sample N frames_out F" (N per output sample per channel).
#include <rubberband/rubberband-c.h>
#include <soundtouch/SoundTouch.h>

#include "bench_io.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

const long kFeed = 256, kBlock = 128;

long run_soundtouch(const std::vector<float> &in, int ch, double rate, double tempo, std::vector<float> &out,
                    double &cpu) {
  soundtouch::SoundTouch st;
  st.setSampleRate(unsigned(rate));
  st.setChannels(unsigned(ch));
  st.setTempo(tempo);
  long frames = long(in.size()) / ch, fed = 0, made = 0, capacity = long(out.size()) / ch;
  double t0 = cpu_seconds();
  while (made + kBlock <= capacity) {
    long got = long(st.receiveSamples(out.data() + made * ch, unsigned(kBlock)));
    made += got;
    if (got < kBlock) {
      if (fed >= frames) {
        if (fed == frames) {
          st.flush();
          fed++;
          continue;
        }
        if (got == 0) break;
        continue;
      }
      long n = std::min(kFeed, frames - fed);
      st.putSamples(in.data() + fed * ch, unsigned(n));
      fed += n;
    }
  }
  cpu = cpu_seconds() - t0;
  return made;
}

long run_rubberband(int options, const std::vector<float> &in, int ch, double rate, double tempo,
                    std::vector<float> &out, double &cpu) {
  RubberBandState rb = rubberband_new(unsigned(rate), unsigned(ch), options, 1.0 / tempo, 1.0);
  rubberband_set_max_process_size(rb, unsigned(kFeed));
  long frames = long(in.size()) / ch, fed = 0, made = 0, capacity = long(out.size()) / ch;
  std::vector<std::vector<float>> planar_in(ch, std::vector<float>(kFeed)), planar_out(ch, std::vector<float>(kBlock));
  std::vector<const float *> ip(ch);
  std::vector<float *> op(ch);
  for (int c = 0; c < ch; c++) {
    ip[c] = planar_in[c].data();
    op[c] = planar_out[c].data();
  }
  double t0 = cpu_seconds();
  while (made + kBlock <= capacity) {
    int avail = rubberband_available(rb);
    if (avail < 0) break;  // finished
    if (avail >= kBlock || (fed >= frames && avail > 0)) {
      unsigned got = rubberband_retrieve(rb, op.data(), unsigned(std::min<long>(kBlock, avail)));
      for (unsigned i = 0; i < got; i++)
        for (int c = 0; c < ch; c++) out[size_t(made + i) * ch + c] = planar_out[c][i];
      made += got;
      continue;
    }
    if (fed >= frames) break;
    long n = std::min(kFeed, frames - fed);
    for (long i = 0; i < n; i++)
      for (int c = 0; c < ch; c++) planar_in[c][i] = in[size_t(fed + i) * ch + c];
    rubberband_process(rb, ip.data(), unsigned(n), fed + n == frames ? 1 : 0);
    fed += n;
  }
  cpu = cpu_seconds() - t0;
  rubberband_delete(rb);
  return made;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 8) {
    std::fprintf(stderr, "usage: stretch_compare soundtouch|rubberband SETTING IN.f32 CHANNELS RATE TEMPO OUT.f32\n");
    return 2;
  }
  std::string lib = argv[1], setting = argv[2];
  std::vector<float> in = read_all("stretch_compare", argv[3]);
  int ch = std::atoi(argv[4]);
  double rate = std::atof(argv[5]), tempo = std::atof(argv[6]);
  if (ch < 1 || ch > 2 || rate <= 0 || tempo <= 0) {
    std::fprintf(stderr, "stretch_compare: CHANNELS 1 or 2, RATE and TEMPO positive\n");
    return 2;
  }
  std::vector<float> out(size_t(double(in.size()) / tempo * 1.05) + size_t(65536) * ch, 0.0f);
  double cpu = 0;
  long made = -1;
  const int rt = RubberBandOptionProcessRealTime;
  if (lib == "soundtouch" && setting == "default") {
    made = run_soundtouch(in, ch, rate, tempo, out, cpu);
  } else if (lib == "rubberband" && setting == "r2") {
    made = run_rubberband(rt | RubberBandOptionEngineFaster, in, ch, rate, tempo, out, cpu);
  } else if (lib == "rubberband" && setting == "r3") {
    made = run_rubberband(rt | RubberBandOptionEngineFiner, in, ch, rate, tempo, out, cpu);
  } else if (lib == "rubberband" && setting == "r3short") {
    made = run_rubberband(rt | RubberBandOptionEngineFiner | RubberBandOptionWindowShort, in, ch, rate, tempo, out,
                          cpu);
  }
  if (made < 0) {
    std::fprintf(stderr, "stretch_compare: unknown %s %s\n", lib.c_str(), setting.c_str());
    return 2;
  }
  return finish("stretch_compare", argv[7], out, made, ch, cpu);
}
