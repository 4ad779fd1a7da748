// What resample_compare.cpp and stretch_compare.cpp (cases 1r and 2r) share: the CPU clock they
// time with, and reading and writing raw 32-bit float audio.
#ifndef STEMDECK_BENCH_IO_H
#define STEMDECK_BENCH_IO_H
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

// CPU seconds of this process (every thread).
inline double cpu_seconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

// The whole of raw float file `path`; exits 1 with `tool`'s message when it cannot be opened.
inline std::vector<float> read_all(const char *tool, const char *path) {
  std::vector<float> data;
  FILE *f = std::fopen(path, "rb");
  if (!f) {
    std::fprintf(stderr, "%s: cannot open %s\n", tool, path);
    std::exit(1);
  }
  float buf[4096];
  size_t n;
  while ((n = std::fread(buf, sizeof(float), 4096, f)) > 0) data.insert(data.end(), buf, buf + n);
  std::fclose(f);
  return data;
}

// Writes the first `frames` frames of `out` to `path`, then the timing line both tools print;
// returns the exit status (1: the file could not be written).
inline int finish(const char *tool, const char *path, const std::vector<float> &out, long frames, int channels,
                  double cpu) {
  FILE *f = std::fopen(path, "wb");
  size_t count = size_t(frames) * size_t(channels);
  bool ok = f && std::fwrite(out.data(), sizeof(float), count, f) == count;
  if (f) ok = std::fclose(f) == 0 && ok;
  if (!ok) {
    std::fprintf(stderr, "%s: cannot write %s\n", tool, path);
    return 1;
  }
  std::printf("ns_per_sample %.3f frames_out %ld\n", frames > 0 ? cpu * 1e9 / double(frames) / channels : 0.0,
              frames);
  return 0;
}
#endif
