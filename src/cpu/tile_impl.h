/* tile_impl.h -- register-blocked micro-kernels for fused attention, written
 * once with GCC/Clang vector extensions and compiled per instruction set by
 * vec.c (VEC_FN adds a suffix, VEC_TARGET sets the ISA, TILE_VEC_BYTES the
 * register width, TILE_NV the vectors per tile row).
 *
 * A tile is TILE_R rows x TILE_C columns (TILE_C = TILE_NV vector lanes) of
 * accumulators held in registers for the whole reduction:
 *   AVX-512: 6 x 64 = 24 zmm,  AVX2: 6 x 16 = 12 ymm,  SSE/NEON: 6 x 8 = 12 xmm. */

typedef float   VEC_FN(tv) __attribute__((vector_size(TILE_VEC_BYTES), aligned(4)));
typedef int32_t VEC_FN(ti) __attribute__((vector_size(TILE_VEC_BYTES), aligned(4)));
#define TV VEC_FN(tv)
#define TI VEC_FN(ti)
#define TL (TILE_VEC_BYTES / 4)
#define TC (TILE_NV * TL)

/* c[r][j] = sum_{d < D} a[r][d] * bt[d * TC + j]   (r < TILE_R, j < TC)
 * S = Q K^T and dP = dO V^T, with K^T / V^T packed as bt. */
VEC_TARGET static void VEC_FN(tile_abt)(int64_t D, const float * const * a, const float * bt, float * c, int64_t ldc) {
    TV acc[TILE_R][TILE_NV];
#pragma GCC unroll 8
    for (int r = 0; r < TILE_R; r++)
#pragma GCC unroll 8
        for (int k = 0; k < TILE_NV; k++) acc[r][k] = (TV) {0};
    for (int64_t d = 0; d < D; d++) {
        TV b[TILE_NV];
#pragma GCC unroll 8
        for (int k = 0; k < TILE_NV; k++) b[k] = *(const TV *) (bt + d * TC + k * TL);
#pragma GCC unroll 8
        for (int r = 0; r < TILE_R; r++) {
            const float x = a[r][d];
#pragma GCC unroll 8
            for (int k = 0; k < TILE_NV; k++) acc[r][k] += x * b[k];
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < TILE_R; r++)
#pragma GCC unroll 8
        for (int k = 0; k < TILE_NV; k++) *(TV *) (c + r * ldc + k * TL) = acc[r][k];
}

/* c[r][f] += sum_{t < T} p[r * prs + t * pts] * v[t * ldv + f]   (r < TILE_R, f < TC)
 * O += P V, dQ += dS K, and with p transposed (prs = 1) dV += P^T dO, dK += dS^T Q. */
VEC_TARGET static void VEC_FN(tile_pv)(int64_t T, const float * p, int64_t prs, int64_t pts,
                                       const float * v, int64_t ldv, float * const * c) {
    TV acc[TILE_R][TILE_NV];
#pragma GCC unroll 8
    for (int r = 0; r < TILE_R; r++)
#pragma GCC unroll 8
        for (int k = 0; k < TILE_NV; k++) acc[r][k] = *(const TV *) (c[r] + k * TL);
    for (int64_t t = 0; t < T; t++) {
        TV b[TILE_NV];
#pragma GCC unroll 8
        for (int k = 0; k < TILE_NV; k++) b[k] = *(const TV *) (v + t * ldv + k * TL);
#pragma GCC unroll 8
        for (int r = 0; r < TILE_R; r++) {
            const float x = p[r * prs + t * pts];
#pragma GCC unroll 8
            for (int k = 0; k < TILE_NV; k++) acc[r][k] += x * b[k];
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < TILE_R; r++)
#pragma GCC unroll 8
        for (int k = 0; k < TILE_NV; k++) *(TV *) (c[r] + k * TL) = acc[r][k];
}

/* s[i] += add[i] for i < n (a multiple of TL); returns max_i s[i] (-Inf if all are). */
VEC_TARGET static float VEC_FN(tile_add_max)(int64_t n, float * s, const float * add) {
    TV mx = (TV) {0} - __builtin_inff();
    for (int64_t i = 0; i < n; i += TL) {
        const TV x = *(TV *) (s + i) + *(const TV *) (add + i);
        *(TV *) (s + i) = x;
        const TI gt = x > mx;
        mx = (TV) (((TI) x & gt) | ((TI) mx & ~gt));
    }
    float m = mx[0];
    for (int j = 1; j < TL; j++) m = mx[j] > m ? mx[j] : m;
    return m;
}

/* exp(t / log2(e)) = 2^t elementwise; exactly 0 below 2^-126 (and for -Inf).
 * t = n + f with |f| <= 1/2: 2^f by a degree-6 polynomial (relative error
 * < 2e-7), 2^n by building the exponent bits. */
VEC_TARGET static inline __attribute__((always_inline)) TV VEC_FN(exp2v)(TV t) {
    const float c1 = 0.693147180559945f, c2 = 0.240226506959101f, c3 = 0.0555041086648216f,
                c4 = 0.00961812910762848f, c5 = 0.00133335581464284f, c6 = 0.000154035303933816f;
    const TI dead = t < -126.0f;
    t = (TV) (((TI) t & ~dead) | ((TI) ((TV) {0} - 126.0f) & dead));
    const TI big = t > 127.0f;
    t = (TV) (((TI) t & ~big) | ((TI) ((TV) {0} + 127.0f) & big));
    const TV r = (t + 12582912.0f) - 12582912.0f;  /* round to nearest integer */
    const TV f = t - r;
    TV p = c6 * f + c5;
    p = p * f + c4;
    p = p * f + c3;
    p = p * f + c2;
    p = p * f + c1;
    p = p * f + 1.0f;
    const TI e = (__builtin_convertvector(r, TI) + 127) << 23;
    return (TV) ((TI) (p * (TV) e) & ~dead);
}

/* y[i] = exp(x[i] - shift) for i < n (a multiple of TL); exp(-Inf) = 0 exactly.
 * Returns the sum of the y[i]. */
VEC_TARGET static float VEC_FN(tile_exp)(int64_t n, const float * x, float shift, float * y) {
    TV sum = {0};
    for (int64_t i = 0; i < n; i += TL) {
        const TV out = VEC_FN(exp2v)((*(const TV *) (x + i) - shift) * 1.44269504088896341f);
        *(TV *) (y + i) = out;
        sum += out;
    }
    float total = 0.0f;
    for (int j = 0; j < TL; j++) total += sum[j];
    return total;
}

/* Backward softmax of a block of `rows` rows of n (a multiple of TL) scores:
 *   s := P = exp((s + mask - mx) - lsum),  dp := dS = P (dp - D)
 * per row; a row with mx = -Inf (nothing attended) gives P = dS = 0.
 * (s + mask - mx) is formed first: it is exact-ish, so large scores keep their digits. */
VEC_TARGET static void VEC_FN(tile_p_ds)(int64_t rows, int64_t n, float * s, float * dp, const float * mask,
                                         const float * mx, const float * lsum, const float * D) {
    for (int64_t r = 0; r < rows; r++) {
        float * sr = s + r * n, * dr = dp + r * n;
        const float * mr = mask + r * n;
        if (mx[r] == -__builtin_inff()) {
            for (int64_t i = 0; i < n; i += TL) { *(TV *) (sr + i) = (TV) {0}; *(TV *) (dr + i) = (TV) {0}; }
            continue;
        }
        for (int64_t i = 0; i < n; i += TL) {
            const TV x = ((*(const TV *) (sr + i) + *(const TV *) (mr + i)) - mx[r]) - lsum[r];
            const TV p = VEC_FN(exp2v)(x * 1.44269504088896341f);
            *(TV *) (sr + i) = p;
            *(TV *) (dr + i) = p * (*(const TV *) (dr + i) - D[r]);
        }
    }
}

#undef TV
#undef TI
#undef TL
#undef TC
