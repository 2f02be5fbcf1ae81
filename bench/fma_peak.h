/* fma_peak.h -- measures this machine's single-core fp32 FMA rate, the
 * yardstick the benchmarks quote their figures against. Twelve independent
 * accumulator chains hide the FMA latency; GCC/Clang vector extensions
 * compiled for AVX-512 (or AVX2) give packed FMAs. */
#ifndef GGMLR_FMA_PEAK_H
#define GGMLR_FMA_PEAK_H

#include <stdint.h>
#include <string.h>

typedef float fma_v16 __attribute__((vector_size(64)));

#define FMA_PEAK_BODY                                                        \
    fma_v16 a[12], x = {0}, y = {0};                                         \
    for (int i = 0; i < 16; i++) { x[i] = 1.0f + 1e-7f * (float) i; y[i] = 1e-8f; } \
    for (int c = 0; c < 12; c++) a[c] = y * (float) c;                       \
    for (int64_t it = 0; it < iters; it++)                                   \
        for (int c = 0; c < 12; c++) a[c] = a[c] * x + y;                    \
    float s = 0;                                                             \
    for (int c = 0; c < 12; c++) for (int i = 0; i < 16; i++) s += a[c][i];  \
    return s;

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("avx512f,fma"), noinline)) static float fma_peak_avx512(int64_t iters) { FMA_PEAK_BODY }
__attribute__((target("avx2,fma"), noinline)) static float fma_peak_avx2(int64_t iters) { FMA_PEAK_BODY }
#endif
__attribute__((noinline)) static float fma_peak_scalar(int64_t iters) { FMA_PEAK_BODY }

/* flops of one call: iters * 12 chains * 16 lanes * 2 */
static inline double fma_peak_flops(int64_t iters) { return (double) iters * 12 * 16 * 2; }

static inline float fma_peak_run(const char * simd, int64_t iters) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (strcmp(simd, "avx512") == 0) return fma_peak_avx512(iters);
    if (strcmp(simd, "avx2") == 0) return fma_peak_avx2(iters);
#endif
    return fma_peak_scalar(iters);
}

#endif
