// The C interface of czita.h over zita-resampler's VResampler. Only make and free allocate.

#include "czita.h"

#include <atomic>
#include <new>
#include <zita-resampler/vresampler.h>

struct stemdeck_zita {
  VResampler resampler;
};

static std::atomic<long> live_count{0};

extern "C" stemdeck_zita *stemdeck_zita_make(double ratio, unsigned channels, unsigned hlen) {
  stemdeck_zita *z = new (std::nothrow) stemdeck_zita;
  if (!z) return nullptr;
  int failed = 1;
  try {
    failed = z->resampler.setup(ratio, channels, hlen);
  } catch (...) {  // std::bad_alloc from its tables: no exception may cross into Swift
  }
  if (failed != 0) {
    delete z;
    return nullptr;
  }
  live_count.fetch_add(1, std::memory_order_relaxed);
  return z;
}

extern "C" void stemdeck_zita_free(stemdeck_zita *z) {
  if (!z) return;
  live_count.fetch_sub(1, std::memory_order_relaxed);
  delete z;
}

extern "C" void stemdeck_zita_reset(stemdeck_zita *z) { z->resampler.reset(); }

extern "C" void stemdeck_zita_set_phase(stemdeck_zita *z, double p) { z->resampler.set_phase(p); }

extern "C" int stemdeck_zita_inpsize(const stemdeck_zita *z) { return z->resampler.inpsize(); }

extern "C" double stemdeck_zita_inpdist(const stemdeck_zita *z) { return z->resampler.inpdist(); }

extern "C" void stemdeck_zita_process(
    stemdeck_zita *z, const float *input, unsigned input_frames, float *output, unsigned output_frames,
    unsigned *used, unsigned *made) {
  VResampler &r = z->resampler;
  r.inp_count = input_frames;
  r.inp_data = const_cast<float *>(input);
  r.out_count = output_frames;
  r.out_data = output;
  r.process();
  *used = input_frames - r.inp_count;
  *made = output_frames - r.out_count;
}

extern "C" long stemdeck_zita_live_count(void) { return live_count.load(std::memory_order_relaxed); }
