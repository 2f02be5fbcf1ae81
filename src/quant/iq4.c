/* iq4.c -- IQ4_NL and IQ4_XS: 4-bit indices into a fixed non-linear grid of
 * 16 int8 levels (denser near zero), x = d * grid[q]. IQ4_NL: blocks of 32
 * with an fp16 d. IQ4_XS: super-blocks of 256 with an fp16 d and 6-bit signed
 * sub-block scales, x = d * (ls - 32) * grid[q] per 32. Element j of a
 * 32-run is the low nibble of byte j, element j + 16 the high one.
 *
 * The quantizer is upstream's: per 32 the scale from the absmax, then up to
 * 2*ntry+1 candidate scales (itry + grid[0]) / max, each scored by the weighted
 * least-squares fit sumqx^2/sumq2 (weights x^2, or imatrix * sqrt(sigma2 + x^2)
 * with sigma2 = 2 * mean(x^2)); IQ4_XS then quantizes the sub-block scales
 * against their signed absmax and re-picks every index for the stored scale. */
#include "quant/quant.h"

#include <math.h>
#include <string.h>

#define GROUP_MAX_EPS 1e-15f

static const int8_t kvalues_iq4nl[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

/* index of the grid level nearest to x (the lower one on a tie) */
static int best_index(float x) {
    const int8_t * v = kvalues_iq4nl;
    if (x <= v[0]) return 0;
    if (x >= v[15]) return 15;
    int lo = 0, hi = 15;
    while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (x < v[mid]) hi = mid; else lo = mid;
    }
    return x - v[hi - 1] < v[hi] - x ? hi - 1 : hi;
}

/* the best scale of one 32-run (L: its indices), 0 for an all-zero run */
static float iq4_block_scale(const float * x, const float * w, int ntry, uint8_t * L) {
    float amax = 0, max = 0;
    for (int j = 0; j < 32; j++) {
        if (fabsf(x[j]) > amax) { amax = fabsf(x[j]); max = x[j]; }
    }
    if (amax < GROUP_MAX_EPS) return 0;
    const float v0 = kvalues_iq4nl[0];
    float d = ntry > 0 ? -max / v0 : max / v0;
    float id = 1 / d;
    float sumqx = 0, sumq2 = 0;
    for (int j = 0; j < 32; j++) {
        const int l = best_index(id * x[j]);
        L[j] = (uint8_t) l;
        const float q = kvalues_iq4nl[l];
        sumqx += w[j] * q * x[j];
        sumq2 += w[j] * q * q;
    }
    d = sumq2 > 0 ? sumqx / sumq2 : 0.0f;
    float best = d * sumqx;
    for (int itry = -ntry; itry <= ntry; itry++) {
        id = (itry + v0) / max;
        sumqx = sumq2 = 0;
        for (int j = 0; j < 32; j++) {
            const float q = kvalues_iq4nl[best_index(id * x[j])];
            sumqx += w[j] * q * x[j];
            sumq2 += w[j] * q * q;
        }
        if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
            d = sumqx / sumq2;
            best = d * sumqx;
        }
    }
    return d;
}

/* weights of one 32-run: x^2 without an importance matrix */
static void iq4_weights(const float * x, const float * qw, float sigma2, float * w) {
    for (int j = 0; j < 32; j++) w[j] = qw ? qw[j] * sqrtf(sigma2 + x[j] * x[j]) : x[j] * x[j];
}

static float iq4_sigma2(const float * x, int n) {
    float s = 0;
    for (int j = 0; j < n; j++) s += x[j] * x[j];
    return s * (2.0f / n);
}

static void pack_nibbles(const uint8_t * L, uint8_t * qs, int n) {
    for (int i = 0; i < n / 32; i++)
        for (int j = 0; j < 16; j++) qs[16 * i + j] = (uint8_t) (L[32 * i + j] | L[32 * i + 16 + j] << 4);
}

/* One IQ4_NL block. ntry > 0 searches and re-picks the indices for the
 * final scale; the reference row quantizer passes -1 (no search: the
 * indices of the first scale d = max / grid[0] stay). An all-zero block gets
 * d = 0 and every index at the level nearest 0 (upstream leaves those of its
 * reference path as they were). */
static void iq4_nl_block(const float * x, const float * qw, int ntry, block_iq4_nl * y) {
    float w[32];
    uint8_t L[32];
    iq4_weights(x, qw, iq4_sigma2(x, 32), w);
    const float d = iq4_block_scale(x, w, ntry, L);
    y->d = ggml_fp32_to_fp16(d);
    if (ntry > 0 || d == 0) {
        const float id = d ? 1 / d : 0;
        for (int j = 0; j < 32; j++) L[j] = (uint8_t) best_index(id * x[j]);
    }
    pack_nibbles(L, y->qs, 32);
}

void ggmlr_quantize_row_iq4_nl(const float * x, void * vy, int64_t k) {
    block_iq4_nl * y = vy;
    for (int64_t i = 0; i < k / QK4_NL; i++) iq4_nl_block(x + QK4_NL * i, NULL, -1, &y[i]);
}

void ggmlr_quantize_rows_iq4_nl(const float * x, void * vy, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    block_iq4_nl * y = vy;
    for (int64_t r = 0; r < nrows; r++)
        for (int64_t i = 0; i < n_per_row / QK4_NL; i++, y++)
            iq4_nl_block(x + r * n_per_row + QK4_NL * i, imatrix ? imatrix + QK4_NL * i : NULL, 7, y);
}

void ggmlr_dequantize_row_iq4_nl(const void * vx, float * y, int64_t k) {
    const block_iq4_nl * x = vx;
    for (int64_t i = 0; i < k / QK4_NL; i++, y += QK4_NL) {
        const float d = ggml_fp16_to_fp32(x[i].d);
        for (int j = 0; j < 16; j++) {
            y[j]      = d * kvalues_iq4nl[x[i].qs[j] & 0xf];
            y[j + 16] = d * kvalues_iq4nl[x[i].qs[j] >> 4];
        }
    }
}

/* One IQ4_XS super-block (ntry 7 always, as upstream). */
static void iq4_xs_block(const float * x, const float * qw, block_iq4_xs * y) {
    float w[32], scales[QK_K / 32];
    uint8_t L[QK_K];
    const float sigma2 = iq4_sigma2(x, QK_K);
    float max_scale = 0, amax_scale = 0;
    for (int ib = 0; ib < QK_K / 32; ib++) {
        iq4_weights(x + 32 * ib, qw ? qw + 32 * ib : NULL, sigma2, w);
        scales[ib] = iq4_block_scale(x + 32 * ib, w, 7, L + 32 * ib);
        if (fabsf(scales[ib]) > amax_scale) { amax_scale = fabsf(scales[ib]); max_scale = scales[ib]; }
    }
    const float d = -max_scale / 32;
    const float id = d ? 1 / d : 0.0f;
    y->d = ggml_fp32_to_fp16(d);
    y->scales_h = 0;
    memset(y->scales_l, 0, sizeof y->scales_l);
    for (int ib = 0; ib < QK_K / 32; ib++) {
        int l = ggmlr_nearest_int(id * scales[ib]);
        l = l < -32 ? -32 : l > 31 ? 31 : l;
        const float dl = d * l;
        const float idl = dl ? 1 / dl : 0.0f;
        for (int j = 0; j < 32; j++) L[32 * ib + j] = (uint8_t) best_index(idl * x[32 * ib + j]);
        l += 32;
        y->scales_l[ib / 2] |= (uint8_t) ((l & 0xf) << 4 * (ib % 2));
        y->scales_h |= (uint16_t) ((l >> 4) << 2 * ib);
    }
    pack_nibbles(L, y->qs, QK_K);
}

void ggmlr_quantize_rows_iq4_xs(const float * x, void * vy, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    block_iq4_xs * y = vy;
    for (int64_t r = 0; r < nrows; r++)
        for (int64_t i = 0; i < n_per_row / QK_K; i++, y++)
            iq4_xs_block(x + r * n_per_row + QK_K * i, imatrix ? imatrix + QK_K * i : NULL, y);
}

void ggmlr_quantize_row_iq4_xs(const float * x, void * y, int64_t k) { ggmlr_quantize_rows_iq4_xs(x, y, 1, k, NULL); }

void ggmlr_dequantize_row_iq4_xs(const void * vx, float * y, int64_t k) {
    const block_iq4_xs * x = vx;
    for (int64_t i = 0; i < k / QK_K; i++) {
        const float d = ggml_fp16_to_fp32(x[i].d);
        for (int ib = 0; ib < QK_K / 32; ib++, y += 32) {
            const int ls = (x[i].scales_l[ib / 2] >> 4 * (ib % 2) & 0xf) | (x[i].scales_h >> 2 * ib & 3) << 4;
            const float dl = d * (ls - 32);
            const uint8_t * qs = x[i].qs + 16 * ib;
            for (int j = 0; j < 16; j++) {
                y[j]      = dl * kvalues_iq4nl[qs[j] & 0xf];
                y[j + 16] = dl * kvalues_iq4nl[qs[j] >> 4];
            }
        }
    }
}
