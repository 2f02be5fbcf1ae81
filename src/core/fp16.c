/* fp16.c -- IEEE binary16 <-> binary32 conversion (round to nearest even;
 * Inf and NaN preserved, subnormals exact). Portable bit manipulation; the
 * F16C row converters and the run-time choice are cpu/simd/vec.c's. */
#include "core/internal.h"

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

/* Row converters, element by element (cpu/simd/vec.c has the F16C ones). */
void ggmlr_fp16_to_fp32_row_scalar(const ggml_fp16_t * x, float * y, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] = ggml_fp16_to_fp32(x[i]);
}

void ggmlr_fp32_to_fp16_row_scalar(const float * x, ggml_fp16_t * y, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] = ggml_fp32_to_fp16(x[i]);
}
