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
 * by `make` (weights qw per element, NULL: x^2), and the one of largest
 * magnitude (signed; *amax its magnitude). */
static float symmetric_scales16(float (*make)(int, int, const float *, int8_t *, const float *), int nmax, const float * x,
                                const float * qw, int8_t * L, float * scales, float * amax) {
    float max_scale = 0;
    *amax = 0;
    for (int j = 0; j < QK_K / 16; j++) {
        scales[j] = make(16, nmax, x + 16 * j, L + 16 * j, qw ? qw + 16 * j : NULL);
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

/* The importance-matrix weights of a super-block (upstream's: imatrix *
 * sqrt(sigma2 + x^2), sigma2 = `factor` * mean(x^2) over the 256) and their
 * sums per sub-block of n; returns nothing, fills w[256] and sw[256/n]. */
static void imatrix_weights(const float * x, const float * qw, float factor, int n, float * w, float * sw) {
    float sumx2 = 0;
    for (int j = 0; j < QK_K; j++) sumx2 += x[j] * x[j];
    const float sigma2 = factor * sumx2 / QK_K;
    for (int j = 0; j < QK_K / n; j++) {
        float sum = 0;
        for (int l = 0; l < n; l++) {
            w[n * j + l] = qw[n * j + l] * sqrtf(sigma2 + x[n * j + l] * x[n * j + l]);
            sum += w[n * j + l];
        }
        sw[j] = sum;
    }
}

/* One Q2_K super-block; qw: its importance-matrix weights, NULL for the
 * reference path (weights |x|, 4-bit scales and mins against their maxima). */
static void q2_K_block(const float * x, const float * qw, block_q2_K * y) {
    uint8_t L[QK_K], Laux[16];
    float weights[QK_K], sw[QK_K / 16], mins[QK_K / 16], scales[QK_K / 16];
    if (qw) {
        uint8_t Ls[QK_K / 16], Lm[QK_K / 16];
        imatrix_weights(x, qw, 1.0f, 16, weights, sw);
        for (int j = 0; j < QK_K / 16; j++)
            scales[j] = ggmlr_make_qkx_quants(16, 3, x + 16 * j, weights + 16 * j, L + 16 * j, &mins[j], Laux, -0.9f, 0.05f, 36, false);
        y->d = ggml_fp32_to_fp16(ggmlr_make_qp_quants(QK_K / 16, 15, scales, Ls, sw));
        y->dmin = ggml_fp32_to_fp16(ggmlr_make_qp_quants(QK_K / 16, 15, mins, Lm, sw));
        for (int j = 0; j < QK_K / 16; j++) y->scales[j] = (uint8_t) (Ls[j] | Lm[j] << 4);
    } else {
        const float q4scale = 15.0f;
        float max_scale = 0, max_min = 0;
        for (int j = 0; j < QK_K / 16; j++) {
            for (int l = 0; l < 16; l++) weights[l] = fabsf(x[16 * j + l]);
            scales[j] = ggmlr_make_qkx_quants(16, 3, x + 16 * j, weights, L + 16 * j, &mins[j], Laux, -0.5f, 0.1f, 15, true);
            if (scales[j] > max_scale) max_scale = scales[j];
            if (mins[j] > max_min) max_min = mins[j];
        }
        if (max_scale > 0) {
            const float iscale = q4scale / max_scale;
            for (int j = 0; j < QK_K / 16; j++) y->scales[j] = (uint8_t) ggmlr_nearest_int(iscale * scales[j]);
            y->d = ggml_fp32_to_fp16(max_scale / q4scale);
        } else {
            memset(y->scales, 0, sizeof y->scales);
            y->d = ggml_fp32_to_fp16(0.0f);
        }
        if (max_min > 0) {
            const float iscale = q4scale / max_min;
            for (int j = 0; j < QK_K / 16; j++) y->scales[j] |= (uint8_t) (ggmlr_nearest_int(iscale * mins[j]) << 4);
            y->dmin = ggml_fp32_to_fp16(max_min / q4scale);
        } else {
            y->dmin = ggml_fp32_to_fp16(0.0f);
        }
    }
    for (int j = 0; j < QK_K / 16; j++) {
        const float d = ggml_fp16_to_fp32(y->d) * (y->scales[j] & 0xf);
        if (!d) continue;
        const float dm = ggml_fp16_to_fp32(y->dmin) * (y->scales[j] >> 4);
        for (int ii = 0; ii < 16; ii++) L[16 * j + ii] = (uint8_t) clampi(ggmlr_nearest_int((x[16 * j + ii] + dm) / d), 0, 3);
    }
    pack2(L, y->qs);
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

/* One Q3_K super-block (qw as q2_K_block; the reference path takes the
 * sub-block scales' signed absmax onto -32, the weighted one a weighted
 * symmetric search over the scales). */
static void q3_K_block(const float * x, const float * qw, block_q3_K * y) {
    int8_t L[QK_K];
    float scales[QK_K / 16];
    int ls[QK_K / 16];   /* the 6-bit scales, biased by 32 */
    float d;
    if (qw) {
        float w[QK_K], sw[QK_K / 16];
        int8_t Ls[QK_K / 16];
        imatrix_weights(x, qw, 2.0f, 16, w, sw);
        for (int j = 0; j < QK_K / 16; j++) scales[j] = ggmlr_make_qx_quants(16, 4, x + 16 * j, L + 16 * j, w + 16 * j);
        d = ggmlr_make_qx_quants(QK_K / 16, 32, scales, Ls, sw);
        for (int j = 0; j < QK_K / 16; j++) ls[j] = Ls[j];
    } else {
        float amax;
        const float max_scale = symmetric_scales16(ggmlr_make_q3_quants, 4, x, NULL, L, scales, &amax);
        const float iscale = max_scale ? -32.0f / max_scale : 0.0f;
        for (int j = 0; j < QK_K / 16; j++) ls[j] = max_scale ? clampi((int8_t) ggmlr_nearest_int(iscale * scales[j]), -32, 31) + 32 : 0;
        d = max_scale ? 1 / iscale : 0.0f;
    }
    memset(y->scales, 0, sizeof y->scales);
    for (int j = 0; j < QK_K / 16; j++) {
        if (j < 8) y->scales[j] = (uint8_t) (ls[j] & 0xf);
        else       y->scales[j - 8] |= (uint8_t) ((ls[j] & 0xf) << 4);
        y->scales[j % 4 + 8] |= (uint8_t) ((ls[j] >> 4) << (2 * (j / 4)));
    }
    y->d = ggml_fp32_to_fp16(d);
    for (int j = 0; j < QK_K / 16; j++) {
        const float dj = ggml_fp16_to_fp32(y->d) * q3_scale(y->scales, j);
        if (!dj) continue;
        for (int ii = 0; ii < 16; ii++) L[16 * j + ii] = (int8_t) (clampi(ggmlr_nearest_int(x[16 * j + ii] / dj), -4, 3) + 4);
    }
    /* high bit of element e: bit e/32 of hmask[e%32]; the low 2 bits as Q2_K */
    memset(y->hmask, 0, sizeof y->hmask);
    uint8_t low[QK_K];
    for (int e = 0; e < QK_K; e++) {
        if (L[e] > 3) y->hmask[e % 32] |= (uint8_t) (1u << (e / 32));
        low[e] = (uint8_t) (L[e] & 3);
    }
    pack2(low, y->qs);
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
 * search, the scales and mins quantized to 6 bits, then L (0..nmax)
 * recomputed from the stored ones. Reference path (qw NULL): weights
 * rms(x) + |x| per 32, the 6-bit values against the maxima; weighted path:
 * upstream's imatrix weights, a finer affine search (rmin -0.9, 36 steps of
 * 0.05) and the 6-bit values by the weighted search over the scales. */
static void quantize_k4_scales(const float * x, const float * qw, int nmax, float rmin, int nstep, uint8_t * scales12,
                               ggml_fp16_t * d_out, ggml_fp16_t * dmin_out, uint8_t L[QK_K]) {
    uint8_t Laux[32], ls[QK_K / 32], lm[QK_K / 32];
    float weights[QK_K], mins[QK_K / 32], scales[QK_K / 32];
    if (qw) {
        float sw[QK_K / 32];
        imatrix_weights(x, qw, 2.0f, 32, weights, sw);
        for (int j = 0; j < QK_K / 32; j++)
            scales[j] = ggmlr_make_qkx_quants(32, nmax, x + 32 * j, weights + 32 * j, L + 32 * j, &mins[j], Laux, -0.9f, 0.05f, 36, false);
        *d_out = ggml_fp32_to_fp16(ggmlr_make_qp_quants(QK_K / 32, 63, scales, ls, sw));
        *dmin_out = ggml_fp32_to_fp16(ggmlr_make_qp_quants(QK_K / 32, 63, mins, lm, sw));
    } else {
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
            const uint8_t s6 = (uint8_t) ggmlr_nearest_int(inv_scale * scales[j]), m6 = (uint8_t) ggmlr_nearest_int(inv_min * mins[j]);
            ls[j] = s6 < 63 ? s6 : 63;
            lm[j] = m6 < 63 ? m6 : 63;
        }
        *d_out = ggml_fp32_to_fp16(max_scale / 63.0f);
        *dmin_out = ggml_fp32_to_fp16(max_min / 63.0f);
    }
    for (int j = 0; j < QK_K / 32; j++) {
        if (j < 4) {
            scales12[j] = ls[j];
            scales12[j + 4] = lm[j];
        } else {
            scales12[j + 4] = (uint8_t) ((ls[j] & 0xf) | (lm[j] & 0xf) << 4);
            scales12[j - 4] |= (uint8_t) ((ls[j] >> 4) << 6);
            scales12[j] |= (uint8_t) ((lm[j] >> 4) << 6);
        }
    }
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
static void q4_K_block(const float * x, const float * qw, block_q4_K * y) {
    uint8_t L[QK_K];
    quantize_k4_scales(x, qw, 15, -1.0f, 20, y->scales, &y->d, &y->dmin, L);
    for (int j = 0; j < QK_K; j += 64)
        for (int l = 0; l < 32; l++) y->qs[j / 2 + l] = (uint8_t) (L[j + l] | L[j + l + 32] << 4);
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
static void q5_K_block(const float * x, const float * qw, block_q5_K * y) {
    uint8_t L[QK_K];
    quantize_k4_scales(x, qw, 31, -0.5f, 15, y->scales, &y->d, &y->dmin, L);
    memset(y->qh, 0, sizeof y->qh);
    for (int e = 0; e < QK_K; e++)
        if (L[e] > 15) y->qh[e % 32] |= (uint8_t) (1u << (e / 32));
    for (int j = 0; j < QK_K; j += 64)
        for (int l = 0; l < 32; l++) y->qs[j / 2 + l] = (uint8_t) ((L[j + l] & 0xf) | (L[j + l + 32] & 0xf) << 4);
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

/* One Q6_K super-block; qw (NULL: the reference path's x^2) weighs the
 * sub-block searches directly, as upstream's weighted path does. */
static void q6_K_block(const float * x, const float * qw, block_q6_K * y) {
    int8_t L[QK_K];
    float scales[QK_K / 16];
    float max_abs_scale;
    const float max_scale = symmetric_scales16(ggmlr_make_qx_quants, 32, x, qw, L, scales, &max_abs_scale);
    if (max_abs_scale < GROUP_MAX_EPS) {   /* all zero: d = 0 and every byte 0 */
        memset(y, 0, sizeof *y);
        return;
    }
    const float iscale = -128.0f / max_scale;
    y->d = ggml_fp32_to_fp16(1 / iscale);
    for (int ib = 0; ib < QK_K / 16; ib++) {
        const int s = ggmlr_nearest_int(iscale * scales[ib]);
        y->scales[ib] = (int8_t) (s < 127 ? s : 127);
    }
    for (int j = 0; j < QK_K / 16; j++) {
        const float d = ggml_fp16_to_fp32(y->d) * y->scales[j];
        if (!d) continue;
        for (int ii = 0; ii < 16; ii++) L[16 * j + ii] = (int8_t) (clampi(ggmlr_nearest_int(x[16 * j + ii] / d), -32, 31) + 32);
    }
    for (int h = 0; h < 2; h++) {
        const int8_t * Lh = L + 128 * h;
        for (int l = 0; l < 32; l++) {
            y->ql[64 * h + l]      = (uint8_t) ((Lh[l] & 0xf) | (Lh[l + 64] & 0xf) << 4);
            y->ql[64 * h + l + 32] = (uint8_t) ((Lh[l + 32] & 0xf) | (Lh[l + 96] & 0xf) << 4);
            y->qh[32 * h + l] = (uint8_t) (Lh[l] >> 4 | (Lh[l + 32] >> 4) << 2 | (Lh[l + 64] >> 4) << 4 | (Lh[l + 96] >> 4) << 6);
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

/* The reference row quantizers: every super-block without weights. */
#define REFERENCE_ROWS(t)                                                          \
    void ggmlr_quantize_row_##t(const float * x, void * vy, int64_t k) {           \
        block_##t * y = vy;                                                        \
        for (int64_t i = 0; i < k / QK_K; i++) t##_block(x + QK_K * i, NULL, &y[i]); \
    }
REFERENCE_ROWS(q2_K)
REFERENCE_ROWS(q3_K)
REFERENCE_ROWS(q4_K)
REFERENCE_ROWS(q5_K)
REFERENCE_ROWS(q6_K)

/* The importance-matrix path of ggml_quantize_chunk: each row's super-blocks
 * with the weights of their columns (imatrix + QK_K * i). */
void ggmlr_quantize_rows_k(enum ggml_type type, const float * x, void * vy, int64_t nrows, int64_t n_per_row,
                           const float * imatrix) {
    uint8_t * out = vy;
    const size_t bs = ggml_type_size(type);
    for (int64_t r = 0; r < nrows; r++)
        for (int64_t i = 0; i < n_per_row / QK_K; i++, out += bs) {
            const float * xb = x + r * n_per_row + QK_K * i, * qw = imatrix + QK_K * i;
            switch (type) {
                case GGML_TYPE_Q2_K: q2_K_block(xb, qw, (block_q2_K *) out); break;
                case GGML_TYPE_Q3_K: q3_K_block(xb, qw, (block_q3_K *) out); break;
                case GGML_TYPE_Q4_K: q4_K_block(xb, qw, (block_q4_K *) out); break;
                case GGML_TYPE_Q5_K: q5_K_block(xb, qw, (block_q5_K *) out); break;
                default:             q6_K_block(xb, qw, (block_q6_K *) out); break;
            }
        }
}
