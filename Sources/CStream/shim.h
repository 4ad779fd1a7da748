#ifndef STEMDECK_CSTREAM_SHIM_H
#define STEMDECK_CSTREAM_SHIM_H
#include <stddef.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* `render --stems` (docs/architecture.md, *Stem export*): a stem's block, left and right, times
   `gain`, interleaved into its part of the stem writer's chunk with non-temporal stores. The chunk
   (megabytes, written straight to the disk) is not read again by this thread, so the stores go
   past the cache instead of first fetching every line they fill: half the memory traffic of plain
   stores. Each sample is `left[i] * gain` rounded once, as the scalar loop it replaces; a store
   fence at the end orders the stores before the chunk is handed to the writer thread. Swift has no
   non-temporal stores, hence C. Without SSE2: plain stores. */
static inline void stemdeck_interleave_stream(const float *left, const float *right, float *out, size_t frames,
                                              float gain) {
  size_t i = 0;
#if defined(__SSE2__)
  /* Plain stores up to a 16-byte boundary of `out` (a frame is 8 bytes: at most one). */
  for (; i < frames && ((size_t)(out + 2 * i) & 15) != 0; i++) {
    out[2 * i] = left[i] * gain;
    out[2 * i + 1] = right[i] * gain;
  }
  if (((size_t)(out + 2 * i) & 15) == 0) {
    const __m128 g = _mm_set1_ps(gain);
    for (; i + 4 <= frames; i += 4) {
      const __m128 l = _mm_loadu_ps(left + i), r = _mm_loadu_ps(right + i);
      _mm_stream_ps(out + 2 * i, _mm_mul_ps(_mm_unpacklo_ps(l, r), g));
      _mm_stream_ps(out + 2 * i + 4, _mm_mul_ps(_mm_unpackhi_ps(l, r), g));
    }
  }
#endif
  for (; i < frames; i++) {
    out[2 * i] = left[i] * gain;
    out[2 * i + 1] = right[i] * gain;
  }
#if defined(__SSE2__)
  _mm_sfence();
#endif
}
#endif
