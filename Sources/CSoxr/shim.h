#include <soxr.h>

// soxr's quality recipes are macros of macros, which Swift does not import: the disk side's
// file-rate converter is made here (StemdeckAudioFile, DiskStream+Conversion.swift).

/// A fixed-ratio converter of interleaved 32-bit float frames, linear phase, on one thread (no
/// OpenMP): `very_high` is soxr's VHQ recipe (28-bit), else HQ (20-bit). NULL with `*error` set
/// when soxr refuses.
static inline soxr_t stemdeck_soxr_create(
    double input_rate, double output_rate, unsigned channels, int very_high, const char **error) {
  soxr_io_spec_t io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I);
  soxr_quality_spec_t quality = soxr_quality_spec(very_high ? SOXR_VHQ : SOXR_HQ, 0);
  soxr_runtime_spec_t runtime = soxr_runtime_spec(1);
  soxr_error_t e = 0;
  soxr_t s = soxr_create(input_rate, output_rate, channels, &e, &io, &quality, &runtime);
  *error = e;
  return e ? 0 : s;
}
