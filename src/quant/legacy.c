/* legacy.c -- the 32-element block types Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1.
 *
 * Symmetric types (Q4_0, Q5_0, Q8_0, Q8_1) store one fp16 scale d and x ~ d*q;
 * the 4/5-bit ones take d = max / -2^(b-1) where max is the element of largest
 * magnitude (with its sign), so that it lands exactly on q = -2^(b-1), the
 * one level the positive side lacks. Affine types (Q4_1, Q5_1) store d and
 * the block minimum m: x ~ d*q + m with d = (max - min) / (2^b - 1).
 *
 * Element j of a block and element j + 16 share byte j of qs (low and high
 * nibble). Q5's fifth bits: bit j of the little-endian u32 qh is element j's.
 * The arithmetic (a reciprocal multiply, +0.5 then truncation, fp16 scales
 * rounded to nearest even) is upstream's reference order, so the bytes are
 * upstream's. An all-zero block gets d = 0 and q at the zero level. */
#include "quant/search.h"

#include <float.h>
#include <math.h>
#include <string.h>

static inline int imin(int a, int b) { return a < b ? a : b; }

/* Q4_0/Q5_0: d = max / -half (max: the element of largest magnitude with
 * its sign, the first on ties), stored in fp16; returns 1/d (0 for zeros) */
static float symmetric_scale(const float * x, int half, ggml_fp16_t * d16) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < 32; j++) {
        if (fabsf(x[j]) > amax) { amax = fabsf(x[j]); max = x[j]; }
    }
    const float d = max / -half;
    *d16 = ggml_fp32_to_fp16(d);
    return d ? 1.0f / d : 0.0f;
}

/* Q4_1/Q5_1: d = (max - min) / nmax and m = min of the 32 values, stored in
 * fp16; returns 1/d (0 for a constant block), *min the float minimum */
static float affine_scale(const float * x, int nmax, ggml_fp16_t * d16, ggml_fp16_t * m16, float * min) {
    float max = -FLT_MAX;
    *min = FLT_MAX;
    for (int j = 0; j < 32; j++) {
        if (x[j] < *min) *min = x[j];
        if (x[j] > max) max = x[j];
    }
    const float d = (max - *min) / nmax;
    *d16 = ggml_fp32_to_fp16(d);
    *m16 = ggml_fp32_to_fp16(*min);
    return d ? 1.0f / d : 0.0f;
}

void ggmlr_quantize_row_q4_0(const float * x, void * vy, int64_t k) {
    block_q4_0 * y = vy;
    for (int64_t i = 0; i < k / QK4_0; i++, x += QK4_0) {
        const float id = symmetric_scale(x, 8, &y[i].d);
        for (int j = 0; j < QK4_0 / 2; j++) {
            const int lo = imin(15, (int8_t) ggmlr_trunc_i32(x[j] * id + 8.5f));
            const int hi = imin(15, (int8_t) ggmlr_trunc_i32(x[j + QK4_0 / 2] * id + 8.5f));
            y[i].qs[j] = (uint8_t) (lo | hi << 4);
        }
    }
}

void ggmlr_dequantize_row_q4_0(const void * vx, float * y, int64_t k) {
    const block_q4_0 * x = vx;
    for (int64_t i = 0; i < k / QK4_0; i++, y += QK4_0) {
        const float d = ggml_fp16_to_fp32(x[i].d);
        for (int j = 0; j < QK4_0 / 2; j++) {
            y[j]             = ((x[i].qs[j] & 0x0f) - 8) * d;
            y[j + QK4_0 / 2] = ((x[i].qs[j] >> 4) - 8) * d;
        }
    }
}

void ggmlr_quantize_row_q4_1(const float * x, void * vy, int64_t k) {
    block_q4_1 * y = vy;
    for (int64_t i = 0; i < k / QK4_1; i++, x += QK4_1) {
        float min;
        const float id = affine_scale(x, 15, &y[i].d, &y[i].m, &min);
        for (int j = 0; j < QK4_1 / 2; j++) {
            const int lo = imin(15, (int8_t) ggmlr_trunc_i32((x[j] - min) * id + 0.5f));
            const int hi = imin(15, (int8_t) ggmlr_trunc_i32((x[j + QK4_1 / 2] - min) * id + 0.5f));
            y[i].qs[j] = (uint8_t) (lo | hi << 4);
        }
    }
}

void ggmlr_dequantize_row_q4_1(const void * vx, float * y, int64_t k) {
    const block_q4_1 * x = vx;
    for (int64_t i = 0; i < k / QK4_1; i++, y += QK4_1) {
        const float d = ggml_fp16_to_fp32(x[i].d), m = ggml_fp16_to_fp32(x[i].m);
        for (int j = 0; j < QK4_1 / 2; j++) {
            y[j]             = (x[i].qs[j] & 0x0f) * d + m;
            y[j + QK4_1 / 2] = (x[i].qs[j] >> 4) * d + m;
        }
    }
}

/* the low nibbles of 32 5-bit quants into qs, their fifth bits into qh */
static void pack5(const int q[32], uint8_t qs[16], uint8_t qh[4]) {
    uint32_t h = 0;
    for (int j = 0; j < 16; j++) {
        qs[j] = (uint8_t) ((q[j] & 0x0f) | (q[j + 16] & 0x0f) << 4);
        h |= (uint32_t) (q[j] >> 4 & 1) << j | (uint32_t) (q[j + 16] >> 4 & 1) << (j + 16);
    }
    const uint8_t le[4] = {(uint8_t) h, (uint8_t) (h >> 8), (uint8_t) (h >> 16), (uint8_t) (h >> 24)};
    memcpy(qh, le, 4);
}

static void unpack5(const uint8_t qs[16], const uint8_t qh[4], int q[32]) {
    const uint32_t h = (uint32_t) qh[0] | (uint32_t) qh[1] << 8 | (uint32_t) qh[2] << 16 | (uint32_t) qh[3] << 24;
    for (int j = 0; j < 16; j++) {
        q[j]      = (qs[j] & 0x0f) | (int) (h >> j & 1) << 4;
        q[j + 16] = (qs[j] >> 4) | (int) (h >> (j + 16) & 1) << 4;
    }
}

void ggmlr_quantize_row_q5_0(const float * x, void * vy, int64_t k) {
    block_q5_0 * y = vy;
    for (int64_t i = 0; i < k / QK5_0; i++, x += QK5_0) {
        const float id = symmetric_scale(x, 16, &y[i].d);
        int q[QK5_0];
        for (int j = 0; j < QK5_0; j++) q[j] = imin(31, (int8_t) ggmlr_trunc_i32(x[j] * id + 16.5f));
        pack5(q, y[i].qs, y[i].qh);
    }
}

void ggmlr_dequantize_row_q5_0(const void * vx, float * y, int64_t k) {
    const block_q5_0 * x = vx;
    for (int64_t i = 0; i < k / QK5_0; i++, y += QK5_0) {
        const float d = ggml_fp16_to_fp32(x[i].d);
        int q[QK5_0];
        unpack5(x[i].qs, x[i].qh, q);
        for (int j = 0; j < QK5_0; j++) y[j] = (q[j] - 16) * d;
    }
}

void ggmlr_quantize_row_q5_1(const float * x, void * vy, int64_t k) {
    block_q5_1 * y = vy;
    for (int64_t i = 0; i < k / QK5_1; i++, x += QK5_1) {
        float min;
        const float id = affine_scale(x, 31, &y[i].d, &y[i].m, &min);
        int q[QK5_1];
        for (int j = 0; j < QK5_1; j++) q[j] = imin(31, (uint8_t) ggmlr_trunc_i32((x[j] - min) * id + 0.5f));
        pack5(q, y[i].qs, y[i].qh);
    }
}

void ggmlr_dequantize_row_q5_1(const void * vx, float * y, int64_t k) {
    const block_q5_1 * x = vx;
    for (int64_t i = 0; i < k / QK5_1; i++, y += QK5_1) {
        const float d = ggml_fp16_to_fp32(x[i].d), m = ggml_fp16_to_fp32(x[i].m);
        int q[QK5_1];
        unpack5(x[i].qs, x[i].qh, q);
        for (int j = 0; j < QK5_1; j++) y[j] = q[j] * d + m;
    }
}

/* d = amax / 127 and q = round(x / d), half away from zero (roundf) */
static float quantize8(const float * x, int8_t * q) {
    float amax = 0.0f;
    for (int j = 0; j < 32; j++) amax = amax > fabsf(x[j]) ? amax : fabsf(x[j]);  /* a NaN propagates */
    const float d = amax / 127;
    const float id = d ? 1.0f / d : 0.0f;
    for (int j = 0; j < 32; j++) q[j] = (int8_t) ggmlr_trunc_i32(roundf(x[j] * id));
    return d;
}

void ggmlr_quantize_row_q8_0(const float * x, void * vy, int64_t k) {
    block_q8_0 * y = vy;
    for (int64_t i = 0; i < k / QK8_0; i++, x += QK8_0) y[i].d = ggml_fp32_to_fp16(quantize8(x, y[i].qs));
}

void ggmlr_dequantize_row_q8_0(const void * vx, float * y, int64_t k) {
    const block_q8_0 * x = vx;
    for (int64_t i = 0; i < k / QK8_0; i++, y += QK8_0) {
        const float d = ggml_fp16_to_fp32(x[i].d);
        for (int j = 0; j < QK8_0; j++) y[j] = x[i].qs[j] * d;
    }
}

/* Q8_1: as Q8_0, plus s = d * sum(q) (the float d, before its fp16 rounding) */
void ggmlr_quantize_row_q8_1(const float * x, void * vy, int64_t k) {
    block_q8_1 * y = vy;
    for (int64_t i = 0; i < k / QK8_1; i++, x += QK8_1) {
        const float d = quantize8(x, y[i].qs);
        int sum = 0;
        for (int j = 0; j < QK8_1; j++) sum += y[i].qs[j];
        y[i].d = ggml_fp32_to_fp16(d);
        y[i].s = ggml_fp32_to_fp16(sum * d);
    }
}

void ggmlr_dequantize_row_q8_1(const void * vx, float * y, int64_t k) {
    const block_q8_1 * x = vx;
    for (int64_t i = 0; i < k / QK8_1; i++, y += QK8_1) {
        const float d = ggml_fp16_to_fp32(x[i].d);
        for (int j = 0; j < QK8_1; j++) y[j] = x[i].qs[j] * d;
    }
}

/* The importance-matrix path (upstream's quantize_row_*_impl): per row
 * sigma2 = mean(x^2), per element the weight imatrix[column] * sqrt(sigma2 +
 * x^2); the symmetric types take the weighted symmetric search, the affine
 * ones the weighted affine search (rmin -0.9, steps of 0.05, 36 of them,
 * squared error), whose min is stored as m = -min. */
void ggmlr_quantize_rows_legacy(enum ggml_type type, const float * x, void * vy, int64_t nrows, int64_t n_per_row,
                                const float * imatrix) {
    const bool affine = type == GGML_TYPE_Q4_1 || type == GGML_TYPE_Q5_1;
    const bool five = type == GGML_TYPE_Q5_0 || type == GGML_TYPE_Q5_1;
    const int nmax = affine ? (five ? 31 : 15) : (five ? 16 : 8);
    uint8_t * out = vy;
    for (int64_t r = 0; r < nrows; r++, x += n_per_row) {
        float sum_x2 = 0;
        for (int64_t j = 0; j < n_per_row; j++) sum_x2 += x[j] * x[j];
        const float sigma2 = sum_x2 / n_per_row;
        for (int64_t ib = 0; ib < n_per_row / 32; ib++, out += ggml_type_size(type)) {
            const float * xb = x + 32 * ib, * qw = imatrix + 32 * ib;
            float w[32], d, min = 0;
            int q[32];
            for (int j = 0; j < 32; j++) w[j] = qw[j] * sqrtf(sigma2 + xb[j] * xb[j]);
            if (affine) {
                uint8_t L[32], Laux[32];
                d = ggmlr_make_qkx_quants(32, nmax, xb, w, L, &min, Laux, -0.9f, 0.05f, 36, false);
                for (int j = 0; j < 32; j++) q[j] = L[j];
            } else {
                int8_t L[32];
                d = ggmlr_make_qx_quants(32, nmax, xb, L, w);
                for (int j = 0; j < 32; j++) q[j] = L[j];
            }
            /* d (and m) lead every one of these blocks; then qs, or qh and qs */
            const ggml_fp16_t dm[2] = {ggml_fp32_to_fp16(d), ggml_fp32_to_fp16(-min)};
            memcpy(out, dm, affine ? 4 : 2);
            uint8_t * rest = out + (affine ? 4 : 2);
            if (five) pack5(q, rest + 4, rest);
            else for (int j = 0; j < 16; j++) rest[j] = (uint8_t) (q[j] | q[j + 16] << 4);
        }
    }
}
