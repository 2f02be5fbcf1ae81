/* ternary.c -- TQ1_0 and TQ2_0, upstream's formats for ternary weights
 * (BitNet b1.58, TriLM): blocks of 256, x = d * (t - 1), t in {0, 1, 2},
 * d fp16 after the quants.
 *
 * TQ2_0: t in 2 bits, in Q2_K's order: element e in bits
 *   2 * ((e % 128) / 32) of qs[32 * (e / 128) + e % 32].
 * TQ1_0: trits packed 5 to a byte as the leading base-3 digits of the
 *   fraction byte / 256 (byte = ceil(T * 256 / 243), T the 5 trits as a
 *   base-3 number, first trit most significant), so trit n of byte b is
 *   ((b * 3^n) mod 256) * 3 >> 8. Elements 0..159: trit n of qs[m] is
 *   element 32n + m (m < 32); 160..239: trit n of qs[32 + m] is element
 *   160 + 16n + m (m < 16); 240..255: trit n (n < 4, the fifth digit 0) of
 *   qh[m] is element 240 + 4n + m.
 *
 * Quantizer (upstream's): d = amax, t = lroundf(x / d) + 1 (with the float
 * reciprocal of d, 0 for d = 0), no search. */
#include "quant/quant.h"

#include <math.h>

/* the block's amax as upstream's MAX macro accumulates it (a NaN element
 * restarts the maximum from the next element) and its reciprocal */
static float ternary_scale(const float * x, float * id) {
    float amax = 0.0f;
    for (int j = 0; j < QK_K; j++) amax = amax > fabsf(x[j]) ? amax : fabsf(x[j]);
    *id = amax != 0.0f ? 1.0f / amax : 0.0f;
    return amax;
}

/* t = lroundf(v * id) + 1, modulo 2^32 (only its low bits are stored) */
static uint32_t trit(float v, float id) { return (uint32_t) ggmlr_lround_i32(v * id) + 1u; }

/* n trits of x[0], x[stride], ... as a base-3 number (first most significant), modulo 256 */
static uint8_t base3(const float * x, int stride, int n, float id) {
    uint8_t q = 0;
    for (int k = 0; k < n; k++) q = (uint8_t) (q * 3u + trit(x[k * stride], id));
    return q;
}

/* T < 243 -> ceil(T * 256 / 243): the byte whose fraction has T's digits */
static uint8_t trits_to_byte(uint8_t t) { return (uint8_t) ((t * 256u + 242u) / 243u); }

void ggmlr_quantize_row_tq1_0(const float * x, void * vy, int64_t k) {
    block_tq1_0 * y = vy;
    for (int64_t i = 0; i < k / QK_K; i++, x += QK_K) {
        float id;
        y[i].d = ggml_fp32_to_fp16(ternary_scale(x, &id));
        for (int m = 0; m < 32; m++) y[i].qs[m] = trits_to_byte(base3(x + m, 32, 5, id));
        for (int m = 0; m < 16; m++) y[i].qs[32 + m] = trits_to_byte(base3(x + 160 + m, 16, 5, id));
        for (int m = 0; m < 4; m++) y[i].qh[m] = trits_to_byte((uint8_t) (base3(x + 240 + m, 4, 4, id) * 3u));
    }
}

/* trits 0..n-1 of byte b, scaled, to y[0], y[stride], ... */
static void unpack_trits(uint8_t b, int n, float d, float * y, int stride) {
    static const uint8_t pow3[5] = {1, 3, 9, 27, 81};
    for (int k = 0; k < n; k++) y[k * stride] = (float) ((((uint8_t) (b * pow3[k])) * 3 >> 8) - 1) * d;
}

void ggmlr_dequantize_row_tq1_0(const void * vx, float * y, int64_t k) {
    const block_tq1_0 * x = vx;
    for (int64_t i = 0; i < k / QK_K; i++, y += QK_K) {
        const float d = ggml_fp16_to_fp32(x[i].d);
        for (int m = 0; m < 32; m++) unpack_trits(x[i].qs[m], 5, d, y + m, 32);
        for (int m = 0; m < 16; m++) unpack_trits(x[i].qs[32 + m], 5, d, y + 160 + m, 16);
        for (int m = 0; m < 4; m++) unpack_trits(x[i].qh[m], 4, d, y + 240 + m, 4);
    }
}

void ggmlr_quantize_row_tq2_0(const float * x, void * vy, int64_t k) {
    block_tq2_0 * y = vy;
    for (int64_t i = 0; i < k / QK_K; i++, x += QK_K) {
        float id;
        y[i].d = ggml_fp32_to_fp16(ternary_scale(x, &id));
        for (int h = 0; h < 2; h++)
            for (int m = 0; m < 32; m++) {
                uint8_t q = 0;
                for (int n = 0; n < 4; n++) q = (uint8_t) (q | (trit(x[128 * h + 32 * n + m], id) & 3u) << (2 * n));
                y[i].qs[32 * h + m] = q;
            }
    }
}

void ggmlr_dequantize_row_tq2_0(const void * vx, float * y, int64_t k) {
    const block_tq2_0 * x = vx;
    for (int64_t i = 0; i < k / QK_K; i++, y += QK_K) {
        const float d = ggml_fp16_to_fp32(x[i].d);
        for (int e = 0; e < QK_K; e++)
            y[e] = (float) ((x[i].qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32)) & 3) - 1) * d;
    }
}
