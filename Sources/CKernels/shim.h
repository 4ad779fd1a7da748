#ifndef STEMDECK_CKERNELS_SHIM_H
#define STEMDECK_CKERNELS_SHIM_H
#include <stddef.h>
#include <stdint.h>

/* DSP kernels that want instructions the baseline x86-64 build may not use (AVX2 and FMA), chosen
   at run time: Swift cannot mark one function for another instruction set, C can. Each kernel has a
   Swift twin that computes the same values with SSE (docs/architecture.md, *Resampling*). Pure
   arithmetic: no allocation, no lock, no system call. */

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#define STEMDECK_HAS_AVX2_KERNELS 1
#include <cpuid.h>
#include <immintrin.h>

/* True when the processor has AVX2 and FMA and the kernel saves the AVX registers (XCR0 bits 1
   and 2), per Intel's "Detecting the availability of AVX". */
static inline int stemdeck_cpu_has_avx2_fma(void) {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
  const unsigned fma = 1u << 12, osxsave = 1u << 27, avx = 1u << 28;
  if ((c & (fma | osxsave | avx)) != (fma | osxsave | avx)) return 0;
  unsigned lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  if ((lo & 6u) != 6u) return 0;
  if (__get_cpuid_max(0, 0) < 7) return 0;
  __cpuid_count(7, 0, a, b, c, d);
  return (b & (1u << 5)) != 0;
}

/* Steady-mode sinc conversion of stereo (SincResampler+Steady.swift): output frames from `rows`
   (L rows of `padded` coefficients, `count` of them non-zero, `padded` a multiple of 8) over the
   planar `left` and `right` input. The read position is `*frame` + `*phase` / L; each output frame
   uses input frames from `*frame` − `width` + 1, row `*phase`, then moves by `frame_step` frames
   and `phase_step` phases. Stops after `max_out` frames or when `*frame` + `width` reaches
   `filled` (more input needed) or `*frame` reaches `end` (the input's end, or a value past
   `filled`); returns the frames made and leaves the position after them. */
__attribute__((target("avx2,fma"))) static inline long stemdeck_steady_stereo_avx2(
    const float *rows, long padded, long count, long width, const float *left, const float *right, long filled,
    long end, long max_out, long frame_step, long phase_step, long l, float *out, long *frame, long *phase) {
  long f = *frame, p = *phase, made = 0;
  const long full = count & ~7L;
  while (made < max_out && f < end && f + width < filled) {
    const float *h = rows + p * padded;
    const float *xl = left + (f - width + 1), *xr = right + (f - width + 1);
    __m256 al = _mm256_setzero_ps(), ar = _mm256_setzero_ps();
    long k = 0;
    for (; k < full; k += 8) {
      const __m256 c = _mm256_loadu_ps(h + k);
      al = _mm256_fmadd_ps(c, _mm256_loadu_ps(xl + k), al);
      ar = _mm256_fmadd_ps(c, _mm256_loadu_ps(xr + k), ar);
    }
    if (k < padded) {
      /* The last group reaches past the window: read only the frames inside it. */
      float tl[8] = {0}, tr[8] = {0};
      for (long i = 0; i < count - k; i++) {
        tl[i] = xl[k + i];
        tr[i] = xr[k + i];
      }
      const __m256 c = _mm256_loadu_ps(h + k);
      al = _mm256_fmadd_ps(c, _mm256_loadu_ps(tl), al);
      ar = _mm256_fmadd_ps(c, _mm256_loadu_ps(tr), ar);
    }
    /* Both sums at once: [l0..3 + l4..7 | r0..3 + r4..7], then pairs, then the two totals. */
    const __m128 l4 = _mm_add_ps(_mm256_castps256_ps128(al), _mm256_extractf128_ps(al, 1));
    const __m128 r4 = _mm_add_ps(_mm256_castps256_ps128(ar), _mm256_extractf128_ps(ar, 1));
    const __m128 pairs = _mm_add_ps(_mm_movelh_ps(l4, r4), _mm_movehl_ps(r4, l4));
    const __m128 sums = _mm_add_ps(_mm_shuffle_ps(pairs, pairs, 0x88), _mm_shuffle_ps(pairs, pairs, 0xdd));
    out[2 * made] = _mm_cvtss_f32(sums);
    out[2 * made + 1] = _mm_cvtss_f32(_mm_shuffle_ps(sums, sums, 1));
    made++;
    f += frame_step;
    p += phase_step;
    if (p >= l) {
      p -= l;
      f++;
    }
  }
  *frame = f;
  *phase = p;
  return made;
}
#else
#define STEMDECK_HAS_AVX2_KERNELS 0
static inline int stemdeck_cpu_has_avx2_fma(void) { return 0; }
static inline long stemdeck_steady_stereo_avx2(const float *rows, long padded, long count, long width,
                                               const float *left, const float *right, long filled, long end,
                                               long max_out, long frame_step, long phase_step, long l, float *out,
                                               long *frame, long *phase) {
  (void)rows; (void)padded; (void)count; (void)width; (void)left; (void)right; (void)filled; (void)end;
  (void)max_out; (void)frame_step; (void)phase_step; (void)l; (void)out; (void)frame; (void)phase;
  return 0;
}
#endif
#endif
