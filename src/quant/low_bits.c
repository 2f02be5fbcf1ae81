/* low_bits.c -- the 1- and 2-bit scaled formats, upstream's layouts:
 *   Q1_0, blocks of 128: x[j] = (bit j of qs set) ? d : -d, bits in
 *         little-endian order (element j in bit j % 8 of qs[j / 8]);
 *         quantizer: d = sum |x| / 128 (the sum in element order, float), the
 *         bit set where x >= 0 (so -0 gives +d, NaN -d).
 *   Q2_0, blocks of 64: x[j] = d * (q - 1), q in 0..3 in bits 2 * (j % 4)
 *         of qs[j / 4]: the levels -d, 0, d, 2d; quantizer: d = amax,
 *         q = round(x / d) + 1 (halves away from zero, the float reciprocal
 *         of the unrounded d) clamped to 0..3. */
#include "quant/quant.h"

#include <math.h>
#include <string.h>

void ggmlr_quantize_row_q1_0(const float * x, void * vy, int64_t k) {
    block_q1_0 * y = vy;
    for (int64_t i = 0; i < k / QK1_0; i++, x += QK1_0) {
        float sum = 0.0f;
        for (int j = 0; j < QK1_0; j++) sum += fabsf(x[j]);
        y[i].d = ggml_fp32_to_fp16(sum / QK1_0);
        memset(y[i].qs, 0, sizeof y[i].qs);
        for (int j = 0; j < QK1_0; j++)
            if (x[j] >= 0.0f) y[i].qs[j / 8] |= (uint8_t) (1u << (j % 8));
    }
}

void ggmlr_dequantize_row_q1_0(const void * vx, float * y, int64_t k) {
    const block_q1_0 * x = vx;
    for (int64_t i = 0; i < k / QK1_0; i++, y += QK1_0) {
        const float d = ggml_fp16_to_fp32(x[i].d);
        for (int j = 0; j < QK1_0; j++) y[j] = x[i].qs[j / 8] >> (j % 8) & 1 ? d : -d;
    }
}

void ggmlr_quantize_row_q2_0(const float * x, void * vy, int64_t k) {
    block_q2_0 * y = vy;
    for (int64_t i = 0; i < k / QK2_0; i++, x += QK2_0) {
        float amax = 0.0f;
        for (int j = 0; j < QK2_0; j++)
            if (fabsf(x[j]) > amax) amax = fabsf(x[j]);
        const float id = amax > 0.0f ? 1.0f / amax : 0.0f;
        y[i].d = ggml_fp32_to_fp16(amax);
        memset(y[i].qs, 0, sizeof y[i].qs);
        for (int j = 0; j < QK2_0; j++) {
            int q = ggmlr_trunc_i32(roundf(x[j] * id)) + 1;   /* upstream: (int) roundf(...) */
            q = q < 0 ? 0 : q > 3 ? 3 : q;
            y[i].qs[j / 4] |= (uint8_t) (q << (2 * (j % 4)));
        }
    }
}

void ggmlr_dequantize_row_q2_0(const void * vx, float * y, int64_t k) {
    const block_q2_0 * x = vx;
    for (int64_t i = 0; i < k / QK2_0; i++, y += QK2_0) {
        const float d = ggml_fp16_to_fp32(x[i].d);
        for (int j = 0; j < QK2_0; j++) y[j] = (float) ((x[i].qs[j / 4] >> (2 * (j % 4)) & 3) - 1) * d;
    }
}
