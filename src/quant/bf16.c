/* bf16.c -- bfloat16: the upper 16 bits of an IEEE binary32.
 *
 * From float: round to nearest, ties to even, by adding 0x7fff plus the
 * lowest kept bit before dropping the low half (a carry into the exponent
 * is right: it is the next binade, and past FLT_MAX it gives Inf). A NaN is
 * truncated and bit 6 is set so that it stays a (quiet) NaN even when its
 * payload lived only in the dropped half. To float: exact (shift left). */
#include "quant/quant.h"

#include <string.h>

ggml_bf16_t ggml_fp32_to_bf16(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    ggml_bf16_t h;
    if ((u & 0x7fffffffu) > 0x7f800000u) h.bits = (uint16_t) ((u >> 16) | 0x40u);
    else                                  h.bits = (uint16_t) ((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
    return h;
}

float ggml_bf16_to_fp32(ggml_bf16_t h) {
    const uint32_t u = (uint32_t) h.bits << 16;
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

void ggml_bf16_to_fp32_row(const ggml_bf16_t * x, float * y, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] = ggml_bf16_to_fp32(x[i]);
}

void ggml_fp32_to_bf16_row_ref(const float * x, ggml_bf16_t * y, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] = ggml_fp32_to_bf16(x[i]);
}

/* no SIMD path yet: the reference conversion (upstream may use AVX512-BF16) */
void ggml_fp32_to_bf16_row(const float * x, ggml_bf16_t * y, int64_t n) { ggml_fp32_to_bf16_row_ref(x, y, n); }

void ggmlr_bf16_to_float_row(const void * x, float * y, int64_t k) { ggml_bf16_to_fp32_row(x, y, k); }
void ggmlr_float_to_bf16_row(const float * x, void * y, int64_t k) { ggml_fp32_to_bf16_row_ref(x, y, k); }
