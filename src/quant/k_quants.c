/* k_quants.c -- the K types: super-blocks of 256 elements split into
 * sub-blocks with their own scale (and min), the sub-block scales quantized
 * again against one fp16 super-block scale. Q2_K: x = d*s*q - dmin*m, 2-bit q,
 * 4-bit s and m per 16; Q3_K: x = d*(s-32)*(q-4), 3-bit q, 6-bit s per 16;
 * Q4_K / Q5_K: x = d*s*q - dmin*m, 4/5-bit q, 6-bit s and m per 32; Q6_K:
 * x = d*s*(q-32), 6-bit q, int8 s per 16; Q8_K: x = d*q, float d, int8 q.
 *
 * The reference quantizers follow upstream's: per sub-block a search for the
 * scale (and min) minimising a weighted squared (or absolute) error over a
 * few candidate scales, then the scales quantized, then every quant
 * recomputed against the scale actually stored. Same operations in the same
 * order (with -ffp-contract=off, CMakeLists.txt) give upstream's bytes. */
#include "quant/search.h"

#include <math.h>
#include <string.h>

/* Q3_K's and Q6_K's first pass: the 16 sub-block scales of a super-block
 * by `make`, and the one of largest magnitude (signed; *amax its magnitude). */
static float symmetric_scales16(float (*make)(int, int, const float *, int8_t *, const float *), int nmax, const float * x, int8_t * L,
                                float * scales, float * amax) {
    float max_scale = 0;
    *amax = 0;
    for (int j = 0; j < QK_K / 16; j++) {
        scales[j] = make(16, nmax, x + 16 * j, L + 16 * j, NULL);
        if (fabsf(scales[j]) > *amax) { *amax = fabsf(scales[j]); max_scale = scales[j]; }
    }
    return max_scale;
}

/* 2 bits from each of 4 sub-rows of 32 into one byte: byte l of a 128-group
 * holds L[l], L[l+32], L[l+64], L[l+96] in bits 0-1, 2-3, 4-5, 6-7. Q2_K's qs
 * and Q3_K's low bits. */
static void pack2(const uint8_t * L, uint8_t * qs) {
    for (int j = 0; j < QK_K; j += 128)
        for (int l = 0; l < 32; l++)
            qs[j / 4 + l] = (uint8_t) (L[j + l] | L[j + l + 32] << 2 | L[j + l + 64] << 4 | L[j + l + 96] << 6);
}

static inline int get2(const uint8_t * qs, int i) { return qs[(i / 128) * 32 + i % 32] >> (2 * ((i % 128) / 32)) & 3; }

/* ---- Q2_K ---- */

void ggmlr_quantize_row_q2_K(const float * x, void * vy, int64_t k) {
    block_q2_K * y = vy;
    uint8_t L[QK_K], Laux[16];
    float weights[16], mins[QK_K / 16], scales[QK_K / 16];
    const float q4scale = 15.0f;
    for (int64_t i = 0; i < k / QK_K; i++, x += QK_K) {
        float max_scale = 0, max_min = 0;
        for (int j = 0; j < QK_K / 16; j++) {
            for (int l = 0; l < 16; l++) weights[l] = fabsf(x[16 * j + l]);
            scales[j] = ggmlr_make_qkx_quants(16, 3, x + 16 * j, weights, L + 16 * j, &mins[j], Laux, -0.5f, 0.1f, 15, true);
            if (scales[j] > max_scale) max_scale = scales[j];
            if (mins[j] > max_min) max_min = mins[j];
        }
        if (max_scale > 0) {
            const float iscale = q4scale / max_scale;
            for (int j = 0; j < QK_K / 16; j++) y[i].scales[j] = (uint8_t) ggmlr_nearest_int(iscale * scales[j]);
            y[i].d = ggml_fp32_to_fp16(max_scale / q4scale);
        } else {
            memset(y[i].scales, 0, sizeof y[i].scales);
            y[i].d = ggml_fp32_to_fp16(0.0f);
        }
        if (max_min > 0) {
            const float iscale = q4scale / max_min;
            for (int j = 0; j < QK_K / 16; j++) y[i].scales[j] |= (uint8_t) (ggmlr_nearest_int(iscale * mins[j]) << 4);
            y[i].dmin = ggml_fp32_to_fp16(max_min / q4scale);
        } else {
            y[i].dmin = ggml_fp32_to_fp16(0.0f);
        }
        for (int j = 0; j < QK_K / 16; j++) {
            const float d = ggml_fp16_to_fp32(y[i].d) * (y[i].scales[j] & 0xf);
            if (!d) continue;
            const float dm = ggml_fp16_to_fp32(y[i].dmin) * (y[i].scales[j] >> 4);
            for (int ii = 0; ii < 16; ii++) L[16 * j + ii] = (uint8_t) clampi(ggmlr_nearest_int((x[16 * j + ii] + dm) / d), 0, 3);
        }
        pack2(L, y[i].qs);
    }
}

void ggmlr_dequantize_row_q2_K(const void * vx, float * y, int64_t k) {
    const block_q2_K * x = vx;
    for (int64_t i = 0; i < k / QK_K; i++, y += QK_K) {
        const float d = ggml_fp16_to_fp32(x[i].d), dmin = ggml_fp16_to_fp32(x[i].dmin);
        for (int e = 0; e < QK_K; e++) {
            const uint8_t sc = x[i].scales[e / 16];
            y[e] = d * (sc & 0xf) * get2(x[i].qs, e) - dmin * (sc >> 4);
        }
    }
}

/* ---- Q3_K ---- */

/* the 6-bit scale j (0..15) of Q3_K's 12 bytes: low nibbles in bytes 0-7
 * (j < 8: low half, else high half of byte j-8), the 2 high bits of scale j
 * in byte 8 + j%4 at bits 2*(j/4) */
static int q3_scale(const uint8_t * s, int j) {
    const int lo = j < 8 ? s[j] & 0xf : s[j - 8] >> 4;
    return (lo | (s[8 + j % 4] >> (2 * (j / 4)) & 3) << 4) - 32;
}

void ggmlr_quantize_row_q3_K(const float * x, void * vy, int64_t k) {
    block_q3_K * y = vy;
    int8_t L[QK_K];
    float scales[QK_K / 16];
    for (int64_t i = 0; i < k / QK_K; i++, x += QK_K) {
        float amax;
        const float max_scale = symmetric_scales16(ggmlr_make_q3_quants, 4, x, L, scales, &amax);
        memset(y[i].scales, 0, sizeof y[i].scales);
        if (max_scale) {
            const float iscale = -32.0f / max_scale;
            for (int j = 0; j < QK_K / 16; j++) {
                const int l = clampi((int8_t) ggmlr_nearest_int(iscale * scales[j]), -32, 31) + 32;
                if (j < 8) y[i].scales[j] = (uint8_t) (l & 0xf);
                else       y[i].scales[j - 8] |= (uint8_t) ((l & 0xf) << 4);
                y[i].scales[j % 4 + 8] |= (uint8_t) ((l >> 4) << (2 * (j / 4)));
            }
            y[i].d = ggml_fp32_to_fp16(1 / iscale);
        } else {
            y[i].d = ggml_fp32_to_fp16(0.0f);
        }
        for (int j = 0; j < QK_K / 16; j++) {
            const float d = ggml_fp16_to_fp32(y[i].d) * q3_scale(y[i].scales, j);
            if (!d) continue;
            for (int ii = 0; ii < 16; ii++) L[16 * j + ii] = (int8_t) (clampi(ggmlr_nearest_int(x[16 * j + ii] / d), -4, 3) + 4);
        }
        /* high bit of element e: bit e/32 of hmask[e%32]; the low 2 bits as Q2_K */
        memset(y[i].hmask, 0, sizeof y[i].hmask);
        uint8_t low[QK_K];
        for (int e = 0; e < QK_K; e++) {
            if (L[e] > 3) y[i].hmask[e % 32] |= (uint8_t) (1u << (e / 32));
            low[e] = (uint8_t) (L[e] & 3);
        }
        pack2(low, y[i].qs);
    }
}

void ggmlr_dequantize_row_q3_K(const void * vx, float * y, int64_t k) {
    const block_q3_K * x = vx;
    for (int64_t i = 0; i < k / QK_K; i++, y += QK_K) {
        const float d = ggml_fp16_to_fp32(x[i].d);
        for (int e = 0; e < QK_K; e++) {
            const int q = get2(x[i].qs, e) - (x[i].hmask[e % 32] >> (e / 32) & 1 ? 0 : 4);
            y[e] = d * q3_scale(x[i].scales, e / 16) * q;
        }
    }
}

/* ---- Q4_K, Q5_K: 8 sub-blocks of 32, 6-bit scale and min each ---- */

/* Scale and min j (0..7) of the 12 bytes: j < 4: the low 6 bits of bytes j
 * and j+4; j >= 4: the nibbles of byte j+4 plus, as bits 4-5, the top 2 bits
 * of bytes j-4 (scale) and j (min). */
static void get_scale_min_k4(int j, const uint8_t * q, uint8_t * d, uint8_t * m) {
    if (j < 4) {
        *d = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *d = (uint8_t) ((q[j + 4] & 0xf) | (q[j - 4] >> 6) << 4);
        *m = (uint8_t) ((q[j + 4] >> 4) | (q[j] >> 6) << 4);
    }
}

/* Shared by Q4_K (nmax 15) and Q5_K (nmax 31): per sub-block the affine
 * search weighted by rms(x) + |x|, the scales and mins quantized to 6 bits
 * against their maxima, then L (0..nmax) recomputed from the stored ones. */
static void quantize_k4_scales(const float * x, int nmax, float rmin, int nstep, uint8_t * scales12, ggml_fp16_t * d_out,
                               ggml_fp16_t * dmin_out, uint8_t L[QK_K]) {
    uint8_t Laux[32];
    float weights[32], mins[QK_K / 32], scales[QK_K / 32];
    float max_scale = 0, max_min = 0;
    for (int j = 0; j < QK_K / 32; j++) {
        float sum_x2 = 0;
        for (int l = 0; l < 32; l++) sum_x2 += x[32 * j + l] * x[32 * j + l];
        const float av_x = sqrtf(sum_x2 / 32);
        for (int l = 0; l < 32; l++) weights[l] = av_x + fabsf(x[32 * j + l]);
        scales[j] = ggmlr_make_qkx_quants(32, nmax, x + 32 * j, weights, L + 32 * j, &mins[j], Laux, rmin, 0.1f, nstep, false);
        if (scales[j] > max_scale) max_scale = scales[j];
        if (mins[j] > max_min) max_min = mins[j];
    }
    const float inv_scale = max_scale > 0 ? 63.0f / max_scale : 0.0f;
    const float inv_min = max_min > 0 ? 63.0f / max_min : 0.0f;
    for (int j = 0; j < QK_K / 32; j++) {
        uint8_t ls = (uint8_t) ggmlr_nearest_int(inv_scale * scales[j]);
        uint8_t lm = (uint8_t) ggmlr_nearest_int(inv_min * mins[j]);
        ls = ls < 63 ? ls : 63;
        lm = lm < 63 ? lm : 63;
        if (j < 4) {
            scales12[j] = ls;
            scales12[j + 4] = lm;
        } else {
            scales12[j + 4] = (uint8_t) ((ls & 0xf) | (lm & 0xf) << 4);
            scales12[j - 4] |= (uint8_t) ((ls >> 4) << 6);
            scales12[j] |= (uint8_t) ((lm >> 4) << 6);
        }
    }
    *d_out = ggml_fp32_to_fp16(max_scale / 63.0f);
    *dmin_out = ggml_fp32_to_fp16(max_min / 63.0f);
    for (int j = 0; j < QK_K / 32; j++) {
        uint8_t sc, m;
        get_scale_min_k4(j, scales12, &sc, &m);
        const float d = ggml_fp16_to_fp32(*d_out) * sc;
        if (!d) continue;
        const float dm = ggml_fp16_to_fp32(*dmin_out) * m;
        for (int ii = 0; ii < 32; ii++) L[32 * j + ii] = (uint8_t) clampi(ggmlr_nearest_int((x[32 * j + ii] + dm) / d), 0, nmax);
    }
}

/* element e of a K4 super-block: sub-block e/32 (its scale/min), byte
 * 32*(e/64) + e%32 of the nibble array, low nibble when (e/32) is even */
void ggmlr_quantize_row_q4_K(const float * x, void * vy, int64_t k) {
    block_q4_K * y = vy;
    uint8_t L[QK_K];
    for (int64_t i = 0; i < k / QK_K; i++, x += QK_K) {
        quantize_k4_scales(x, 15, -1.0f, 20, y[i].scales, &y[i].d, &y[i].dmin, L);
        for (int j = 0; j < QK_K; j += 64)
            for (int l = 0; l < 32; l++) y[i].qs[j / 2 + l] = (uint8_t) (L[j + l] | L[j + l + 32] << 4);
    }
}

/* one Q4_K (qh NULL) or Q5_K super-block: x = d*sc*q - dmin*m */
static void dequantize_k4_block(ggml_fp16_t d16, ggml_fp16_t dmin16, const uint8_t * scales, const uint8_t * qs,
                                const uint8_t * qh, float * y) {
    const float d = ggml_fp16_to_fp32(d16), dmin = ggml_fp16_to_fp32(dmin16);
    for (int e = 0; e < QK_K; e++) {
        uint8_t sc, m;
        get_scale_min_k4(e / 32, scales, &sc, &m);
        const uint8_t byte = qs[32 * (e / 64) + e % 32];
        const int q = ((e / 32) % 2 ? byte >> 4 : byte & 0xf) + (qh && (qh[e % 32] >> (e / 32) & 1) ? 16 : 0);
        y[e] = d * sc * q - dmin * m;
    }
}

void ggmlr_dequantize_row_q4_K(const void * vx, float * y, int64_t k) {
    const block_q4_K * x = vx;
    for (int64_t i = 0; i < k / QK_K; i++, y += QK_K) dequantize_k4_block(x[i].d, x[i].dmin, x[i].scales, x[i].qs, NULL, y);
}

/* Q5_K: Q4_K's nibbles plus a fifth bit: bit e/32 of qh[e%32] */
void ggmlr_quantize_row_q5_K(const float * x, void * vy, int64_t k) {
    block_q5_K * y = vy;
    uint8_t L[QK_K];
    for (int64_t i = 0; i < k / QK_K; i++, x += QK_K) {
        quantize_k4_scales(x, 31, -0.5f, 15, y[i].scales, &y[i].d, &y[i].dmin, L);
        memset(y[i].qh, 0, sizeof y[i].qh);
        for (int e = 0; e < QK_K; e++)
            if (L[e] > 15) y[i].qh[e % 32] |= (uint8_t) (1u << (e / 32));
        for (int j = 0; j < QK_K; j += 64)
            for (int l = 0; l < 32; l++) y[i].qs[j / 2 + l] = (uint8_t) ((L[j + l] & 0xf) | (L[j + l + 32] & 0xf) << 4);
    }
}

void ggmlr_dequantize_row_q5_K(const void * vx, float * y, int64_t k) {
    const block_q5_K * x = vx;
    for (int64_t i = 0; i < k / QK_K; i++, y += QK_K) dequantize_k4_block(x[i].d, x[i].dmin, x[i].scales, x[i].qs, x[i].qh, y);
}

/* ---- Q6_K ---- */

/* Element e = 128*h + 32*g + l (h: half, g: 0..3, l: 0..31): its low nibble
 * in ql[64*h + l + 32*(g%2)] (low half for g < 2, high half otherwise), its
 * two high bits in qh[32*h + l] at bits 2*g; its scale scales[e/16]. */
static int q6_get(const block_q6_K * b, int e) {
    const int h = e / 128, g = (e % 128) / 32, l = e % 32;
    const uint8_t lo = b->ql[64 * h + l + 32 * (g % 2)];
    return ((g < 2 ? lo & 0xf : lo >> 4) | (b->qh[32 * h + l] >> (2 * g) & 3) << 4) - 32;
}

void ggmlr_quantize_row_q6_K(const float * x, void * vy, int64_t k) {
    block_q6_K * y = vy;
    int8_t L[QK_K];
    float scales[QK_K / 16];
    for (int64_t i = 0; i < k / QK_K; i++, x += QK_K) {
        float max_abs_scale;
        const float max_scale = symmetric_scales16(ggmlr_make_qx_quants, 32, x, L, scales, &max_abs_scale);
        if (max_abs_scale < GROUP_MAX_EPS) {   /* all zero: d = 0 and every byte 0 */
            memset(&y[i], 0, sizeof y[i]);
            continue;
        }
        const float iscale = -128.0f / max_scale;
        y[i].d = ggml_fp32_to_fp16(1 / iscale);
        for (int ib = 0; ib < QK_K / 16; ib++) {
            const int s = ggmlr_nearest_int(iscale * scales[ib]);
            y[i].scales[ib] = (int8_t) (s < 127 ? s : 127);
        }
        for (int j = 0; j < QK_K / 16; j++) {
            const float d = ggml_fp16_to_fp32(y[i].d) * y[i].scales[j];
            if (!d) continue;
            for (int ii = 0; ii < 16; ii++) L[16 * j + ii] = (int8_t) (clampi(ggmlr_nearest_int(x[16 * j + ii] / d), -32, 31) + 32);
        }
        for (int h = 0; h < 2; h++) {
            const int8_t * Lh = L + 128 * h;
            for (int l = 0; l < 32; l++) {
                y[i].ql[64 * h + l]      = (uint8_t) ((Lh[l] & 0xf) | (Lh[l + 64] & 0xf) << 4);
                y[i].ql[64 * h + l + 32] = (uint8_t) ((Lh[l + 32] & 0xf) | (Lh[l + 96] & 0xf) << 4);
                y[i].qh[32 * h + l] = (uint8_t) (Lh[l] >> 4 | (Lh[l + 32] >> 4) << 2 | (Lh[l + 64] >> 4) << 4 | (Lh[l + 96] >> 4) << 6);
            }
        }
    }
}

void ggmlr_dequantize_row_q6_K(const void * vx, float * y, int64_t k) {
    const block_q6_K * x = vx;
    for (int64_t i = 0; i < k / QK_K; i++, y += QK_K) {
        const float d = ggml_fp16_to_fp32(x[i].d);
        for (int e = 0; e < QK_K; e++) y[e] = d * x[i].scales[e / 16] * q6_get(&x[i], e);
    }
}

/* ---- Q8_K: d = max / -127 (the signed absmax), q = round(x / d) ---- */

void ggmlr_quantize_row_q8_K(const float * x, void * vy, int64_t k) {
    block_q8_K * y = vy;
    for (int64_t i = 0; i < k / QK_K; i++, x += QK_K) {
        float max = 0, amax = 0;
        for (int j = 0; j < QK_K; j++) {
            if (fabsf(x[j]) > amax) { amax = fabsf(x[j]); max = x[j]; }
        }
        memset(&y[i], 0, sizeof y[i]);   /* upstream leaves an all-zero block's bsums as they were */
        if (!amax) continue;
        const float iscale = -127.0f / max;
        for (int j = 0; j < QK_K; j++) {
            const int v = ggmlr_nearest_int(iscale * x[j]);
            y[i].qs[j] = (int8_t) (v < 127 ? v : 127);
        }
        for (int j = 0; j < QK_K / 16; j++) {
            int sum = 0;
            for (int ii = 0; ii < 16; ii++) sum += y[i].qs[16 * j + ii];
            y[i].bsums[j] = (int16_t) sum;
        }
        y[i].d = 1 / iscale;
    }
}

void ggmlr_dequantize_row_q8_K(const void * vx, float * y, int64_t k) {
    const block_q8_K * x = vx;
    for (int64_t i = 0; i < k / QK_K; i++, y += QK_K)
        for (int j = 0; j < QK_K; j++) y[j] = x[i].d * x[i].qs[j];
}
