/* mxfp4.c -- MXFP4 (OCP microscaling): blocks of 32 FP4 E2M1 values sharing
 * one E8M0 exponent e, x = 2^(e-127) * E2M1(q). The E2M1 levels are kept
 * doubled as integers (0, 1, 2, 3, 4, 6, 8, 12 and their negatives, sign in
 * bit 3), so the scale applied is 2^(e-128). Element j is the low nibble of
 * byte j, element j + 16 the high one.
 *
 * Quantizer (upstream's): e = floor(log2(amax)) - 2 + 127, so that amax / 2^(e-127)
 * lies in [4, 8) (the largest level is 6, values above it clip to 6), then
 * each element goes to the nearest level (e2m1.h). An all-zero block has
 * e = 0. */
#include "quant/e2m1.h"
#include "quant/quant.h"

#include <math.h>
#include <string.h>

/* 2^(e-128) as a float, exact (subnormal for e < 2) */
static float e8m0_half(uint8_t e) {
    const uint32_t bits = e < 2 ? 0x00200000u << e : (uint32_t) (e - 1) << 23;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

void ggmlr_quantize_row_mxfp4(const float * x, void * vy, int64_t k) {
    block_mxfp4 * y = vy;
    for (int64_t i = 0; i < k / QK_MXFP4; i++, x += QK_MXFP4) {
        float amax = 0.0f;
        for (int j = 0; j < QK_MXFP4; j++)
            if (amax < fabsf(x[j])) amax = fabsf(x[j]);
        /* upstream converts the float exponent with a plain cast to uint8 */
        const uint8_t e = amax > 0.0f ? (uint8_t) ggmlr_trunc_i32(floorf(log2f(amax)) - 2 + 127) : 0;
        const float d = e8m0_half(e);
        y[i].e = e;
        for (int j = 0; j < QK_MXFP4 / 2; j++)
            y[i].qs[j] = (uint8_t) (ggmlr_nearest_e2m1(x[j], d) | ggmlr_nearest_e2m1(x[j + QK_MXFP4 / 2], d) << 4);
    }
}

void ggmlr_dequantize_row_mxfp4(const void * vx, float * y, int64_t k) {
    const block_mxfp4 * x = vx;
    for (int64_t i = 0; i < k / QK_MXFP4; i++, y += QK_MXFP4) {
        const float d = e8m0_half(x[i].e);
        for (int j = 0; j < QK_MXFP4 / 2; j++) {
            y[j]                = ggmlr_e2m1_doubled[x[i].qs[j] & 0xf] * d;
            y[j + QK_MXFP4 / 2] = ggmlr_e2m1_doubled[x[i].qs[j] >> 4] * d;
        }
    }
}
