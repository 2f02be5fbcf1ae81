/* fp16.c -- IEEE binary16 <-> binary32 conversion (round to nearest even;
 * Inf and NaN preserved, subnormals exact). Portable bit manipulation; the
 * row converters also come with F16C, chosen at run time by cpu/vec.c. */
#include "core/internal.h"
#include "cpu/simd/vec.h"

static inline uint32_t f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float    bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

float ggml_fp16_to_fp32(ggml_fp16_t h) {
    const uint32_t sign = (uint32_t) (h & 0x8000u) << 16;
    const uint32_t exp  = (h >> 10) & 0x1fu;
    const uint32_t mant = h & 0x3ffu;
    if (exp == 0x1f) return bits_f32(sign | 0x7f800000u | (mant << 13) | (mant ? 0x400000u : 0u));  /* Inf / NaN, quieted as F16C does */
    if (exp != 0)    return bits_f32(sign | ((exp + 112u) << 23) | (mant << 13));
    /* zero or subnormal: mant * 2^-24, exact in float */
    const float mag = (float) mant * 5.9604644775390625e-8f;
    return sign ? -mag : mag;
}

ggml_fp16_t ggml_fp32_to_fp16(float f) {
    const uint32_t u    = f32_bits(f);
    const uint16_t sign = (uint16_t) ((u >> 16) & 0x8000u);
    const uint32_t abs  = u & 0x7fffffffu;
    if (abs >= 0x7f800000u) {                       /* Inf or NaN (keep NaN quiet) */
        return (uint16_t) (sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u | ((abs >> 13) & 0x3ffu) : 0u));
    }
    if (abs >= 0x477ff000u) return (uint16_t) (sign | 0x7c00u);  /* rounds past 65504 -> Inf */
    if (abs < 0x38800000u) {                        /* below 2^-14: subnormal half */
        /* value / 2^-24 rounded to nearest even, done in float arithmetic */
        const float scaled = bits_f32(abs) * 16777216.0f;   /* exact: power of two */
        float r = scaled + 8388608.0f;                       /* forces rounding at integer */
        r -= 8388608.0f;
        return (uint16_t) (sign | (uint16_t) r);
    }
    /* normal: rebias exponent, round mantissa from 23 to 10 bits, nearest even */
    uint32_t m = abs - 0x38000000u;                 /* exponent bias 127 -> 15 */
    m += 0x0fffu + ((m >> 13) & 1u);
    return (uint16_t) (sign | (m >> 13));
}

/* Row converters: F16C hardware conversion (8 values per instruction, the
 * same IEEE round-to-nearest-even results) or the scalar ones above. */
void ggmlr_fp16_to_fp32_row_scalar(const ggml_fp16_t * x, float * y, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] = ggml_fp16_to_fp32(x[i]);
}

void ggmlr_fp32_to_fp16_row_scalar(const float * x, ggml_fp16_t * y, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] = ggml_fp32_to_fp16(x[i]);
}

#ifdef GGMLR_HAVE_F16C
#include <immintrin.h>

__attribute__((target("avx,f16c"))) void ggmlr_fp16_to_fp32_row_f16c(const ggml_fp16_t * x, float * y, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (x + i))));
    for (; i < n; i++) y[i] = ggml_fp16_to_fp32(x[i]);
}

__attribute__((target("avx,f16c"))) void ggmlr_fp32_to_fp16_row_f16c(const float * x, ggml_fp16_t * y, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *) (y + i), _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    for (; i < n; i++) y[i] = ggml_fp32_to_fp16(x[i]);
}
#endif

/* Through the run-time SIMD choice (cpu/vec.c), so GGMLR_SIMD=scalar turns F16C off too. */
void ggml_fp16_to_fp32_row(const ggml_fp16_t * x, float * y, int64_t n) { ggmlr_vec()->fp16_to_fp32_row(x, y, n); }

void ggml_fp32_to_fp16_row(const float * x, ggml_fp16_t * y, int64_t n) { ggmlr_vec()->fp32_to_fp16_row(x, y, n); }
