/* tile_impl.h -- register-blocked GEMM micro-kernels (for mul_mat and fused
 * attention) and the softmax kernels of fused attention, written once with
 * GCC/Clang vector extensions and compiled per instruction set by vec.c
 * (VEC_FN adds a suffix, VEC_TARGET sets the ISA, TILE_VEC_BYTES the register
 * width, TILE_NV the vectors per tile row).
 *
 * A GEMM micro-tile is TILE_R = 6 rows x TC columns (TC = TILE_NV vectors) of
 * C held in registers for the whole reduction; each step loads TILE_NV vectors
 * of B and broadcasts 6 elements of A for 6 x TILE_NV FMAs:
 *   AVX-512: 6 x 64 = 24 zmm of 32,  AVX2: 6 x 16 = 12 ymm + 2 + 1 of 16,
 *   SSE/NEON: 6 x 8 = 12 xmm + 2 + 1 of 16. */

typedef float   VEC_FN(tv) __attribute__((vector_size(TILE_VEC_BYTES), aligned(4)));
typedef int32_t VEC_FN(ti) __attribute__((vector_size(TILE_VEC_BYTES), aligned(4)));
#define TV VEC_FN(tv)
#define TI VEC_FN(ti)
#define TL (TILE_VEC_BYTES / 4)
#define TC (TILE_NV * TL)

/* The largest element / the sum of the elements of v, as a tree of halvings
 * on the x86 paths (log2(TL) vector steps: TL - 1 dependent scalar ones cost
 * as much as the exponentials of a row). */
VEC_TARGET static inline __attribute__((always_inline)) float VEC_FN(hmax)(TV v) {
#if TILE_VEC_BYTES == 64
    return _mm512_reduce_max_ps((__m512) v);
#elif TILE_VEC_BYTES == 32
    __m128 h = _mm_max_ps(_mm256_castps256_ps128((__m256) v), _mm256_extractf128_ps((__m256) v, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    return _mm_cvtss_f32(_mm_max_ss(h, _mm_shuffle_ps(h, h, 1)));
#else
    float m = v[0];
    for (int j = 1; j < TL; j++) m = v[j] > m ? v[j] : m;
    return m;
#endif
}

VEC_TARGET static inline __attribute__((always_inline)) float VEC_FN(hsum)(TV v) {
#if TILE_VEC_BYTES == 64
    return _mm512_reduce_add_ps((__m512) v);
#elif TILE_VEC_BYTES == 32
    __m128 h = _mm_add_ps(_mm256_castps256_ps128((__m256) v), _mm256_extractf128_ps((__m256) v, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    return _mm_cvtss_f32(_mm_add_ss(h, _mm_shuffle_ps(h, h, 1)));
#else
    float t = 0.0f;
    for (int j = 0; j < TL; j++) t += v[j];
    return t;
#endif
}

/* acc[r][j] = sum_{k < K} a[r][k] * b[k * ldb + j]   (r < TILE_R, j < nv * TL):
 * the reduction of the store kernels below, whose epilogues differ. Inlined
 * with nv a constant, acc stays in registers. */
VEC_TARGET static inline __attribute__((always_inline)) void VEC_FN(gemm_6xn_reduce)(const int nv, int64_t K, const float * const * a,
                                                                                   const float * b, int64_t ldb, TV acc[TILE_R][TILE_NV]) {
#pragma GCC unroll 8
    for (int r = 0; r < TILE_R; r++)
#pragma GCC unroll 8
        for (int j = 0; j < nv; j++) acc[r][j] = (TV) {0};
    for (int64_t k = 0; k < K; k++) {
        TV bk[TILE_NV];
#pragma GCC unroll 8
        for (int j = 0; j < nv; j++) bk[j] = *(const TV *) (b + k * ldb + j * TL);
#pragma GCC unroll 8
        for (int r = 0; r < TILE_R; r++) {
            const float x = a[r][k];
#pragma GCC unroll 8
            for (int j = 0; j < nv; j++) acc[r][j] += x * bk[j];
        }
    }
}

/* c[r][j] = sum_{k < K} a[r][k] * b[k * ldb + j] (+ add[r * ldc + j])   (r < TILE_R, j < TC)
 * and, with rmax, rmax[r] = max(rmax[r], max_j c[r][j]).
 * Attention's forward: S = Q K^T + mask with the rows' maxima (the online
 * softmax needs them before the exponentials); K^T is packed as b. add and
 * rmax may be NULL. */
VEC_TARGET static inline __attribute__((always_inline)) void VEC_FN(gemm_6xn_store)(const int nv, int64_t K, const float * const * a,
                                                                                  const float * b, int64_t ldb, float * c, int64_t ldc,
                                                                                  const float * add, float * rmax) {
    TV acc[TILE_R][TILE_NV];
    VEC_FN(gemm_6xn_reduce)(nv, K, a, b, ldb, acc);
    if (add) {
#pragma GCC unroll 8
        for (int r = 0; r < TILE_R; r++)
#pragma GCC unroll 8
            for (int j = 0; j < nv; j++) acc[r][j] += *(const TV *) (add + r * ldc + j * TL);
    }
#pragma GCC unroll 8
    for (int r = 0; r < TILE_R; r++)
#pragma GCC unroll 8
        for (int j = 0; j < nv; j++) *(TV *) (c + r * ldc + j * TL) = acc[r][j];
    if (rmax) {
#pragma GCC unroll 8
        for (int r = 0; r < TILE_R; r++) {
            TV m = acc[r][0];
#pragma GCC unroll 8
            for (int j = 1; j < nv; j++) {
                const TI gt = acc[r][j] > m;
                m = (TV) (((TI) acc[r][j] & gt) | ((TI) m & ~gt));
            }
            const float x = VEC_FN(hmax)(m);
            rmax[r] = x > rmax[r] ? x : rmax[r];
        }
    }
}

VEC_TARGET static void VEC_FN(gemm_6xc_store)(int64_t K, const float * const * a, const float * b, int64_t ldb,
                                              float * c, int64_t ldc, const float * add, float * rmax) {
    VEC_FN(gemm_6xn_store)(TILE_NV, K, a, b, ldb, c, ldc, add, rmax);
}

/* The same on TC / 2 columns: the last half of a row of scores that stops
 * there (keys past it are masked in every row, or past the head size). */
VEC_TARGET static void VEC_FN(gemm_6xh_store)(int64_t K, const float * const * a, const float * b, int64_t ldb,
                                              float * c, int64_t ldc, const float * add, float * rmax) {
    VEC_FN(gemm_6xn_store)(TILE_NV / 2, K, a, b, ldb, c, ldc, add, rmax);
}

/* c[r][j] += sum_{k < K} a[r * ars + k * aks] * b[k * ldb + j]   (r < TILE_R, j < nv * TL)
 * for nv = TILE_NV (gemm_6xc_acc) or TILE_NV / 2 (gemm_6xh_acc): a constant
 * once inlined, so the accumulators stay in registers. mul_mat's kernel;
 * attention: O += P V, dQ += dS K, and with a transposed (ars = 1)
 * dV += P^T dO, dK += dS^T Q.
 * Each output lives in one lane, so its sum is one chain of additions, and
 * the rounding error of a chain grows with its length (about n eps |terms|).
 * So the reduction is summed in runs of TILE_RUN products started from zero,
 * the runs into a block sum (on the stack, in L1), and the block sum is added
 * to c once: with mul_mat's blocks of 256, K = 4096 gives running sums of
 * 32 + 8 + 16 terms instead of 4096, for one add per output per run. */
#define TILE_RUN 32
VEC_TARGET static inline __attribute__((always_inline)) void VEC_FN(gemm_6xn_acc)(const int nv, int64_t K, const float * a, int64_t ars,
                                                                                int64_t aks, const float * b, int64_t ldb, float * const * c) {
    TV block[TILE_R][TILE_NV];
#pragma GCC unroll 8
    for (int r = 0; r < TILE_R; r++)
#pragma GCC unroll 8
        for (int j = 0; j < nv; j++) block[r][j] = (TV) {0};
    for (int64_t k0 = 0; k0 < K; k0 += TILE_RUN) {
        const int64_t k1 = K - k0 < TILE_RUN ? K : k0 + TILE_RUN;
        TV acc[TILE_R][TILE_NV];
#pragma GCC unroll 8
        for (int r = 0; r < TILE_R; r++)
#pragma GCC unroll 8
            for (int j = 0; j < nv; j++) acc[r][j] = (TV) {0};
        for (int64_t k = k0; k < k1; k++) {
            TV bk[TILE_NV];
#pragma GCC unroll 8
            for (int j = 0; j < nv; j++) bk[j] = *(const TV *) (b + k * ldb + j * TL);
#pragma GCC unroll 8
            for (int r = 0; r < TILE_R; r++) {
                const float x = a[r * ars + k * aks];
#pragma GCC unroll 8
                for (int j = 0; j < nv; j++) acc[r][j] += x * bk[j];
            }
        }
#pragma GCC unroll 8
        for (int r = 0; r < TILE_R; r++)
#pragma GCC unroll 8
            for (int j = 0; j < nv; j++) block[r][j] += acc[r][j];
    }
#pragma GCC unroll 8
    for (int r = 0; r < TILE_R; r++)
#pragma GCC unroll 8
        for (int j = 0; j < nv; j++) *(TV *) (c[r] + j * TL) += block[r][j];
}
#undef TILE_RUN

_Static_assert(TILE_NV % 2 == 0, "a half tile needs an even number of vectors");

VEC_TARGET static void VEC_FN(gemm_6xc_acc)(int64_t K, const float * a, int64_t ars, int64_t aks, const float * b, int64_t ldb,
                                            float * const * c) {
    VEC_FN(gemm_6xn_acc)(TILE_NV, K, a, ars, aks, b, ldb, c);
}

/* The same on TC / 2 columns: the last columns of a dimension that is an odd
 * multiple of TC / 2 (a head size of 32 under AVX-512), which a whole tile
 * would compute twice over. */
VEC_TARGET static void VEC_FN(gemm_6xh_acc)(int64_t K, const float * a, int64_t ars, int64_t aks, const float * b, int64_t ldb,
                                            float * const * c) {
    VEC_FN(gemm_6xn_acc)(TILE_NV / 2, K, a, ars, aks, b, ldb, c);
}

/* s[i] += add[i] for i < n (a multiple of TL; add NULL: adds nothing);
 * returns max_i s[i] (-Inf if all are). */
VEC_TARGET static float VEC_FN(tile_add_max)(int64_t n, float * s, const float * add) {
    TV mx = (TV) {0} - __builtin_inff();
    for (int64_t i = 0; i < n; i += TL) {
        TV x = *(TV *) (s + i);
        if (add) {
            x += *(const TV *) (add + i);
            *(TV *) (s + i) = x;
        }
        const TI gt = x > mx;
        mx = (TV) (((TI) x & gt) | ((TI) mx & ~gt));
    }
    return VEC_FN(hmax)(mx);
}

/* exp(t / log2(e)) = 2^t elementwise; exactly 0 below 2^-126 (and for -Inf).
 * t = n + f with |f| <= 1/2: 2^f by a degree-6 polynomial (relative error
 * < 2e-7), times 2^n: under AVX-512 one vscalefps, elsewhere by building the
 * exponent bits (which needs t clamped into the exponent's range first). Both
 * round the same product once, so they agree bit for bit. */
VEC_TARGET static inline __attribute__((always_inline)) TV VEC_FN(exp2v)(TV t) {
    const float c1 = 0.693147180559945f, c2 = 0.240226506959101f, c3 = 0.0555041086648216f,
                c4 = 0.00961812910762848f, c5 = 0.00133335581464284f, c6 = 0.000154035303933816f;
#if TILE_VEC_BYTES == 64
    const __mmask16 live = _mm512_cmp_ps_mask((__m512) t, _mm512_set1_ps(-126.0f), _CMP_NLT_UQ);  /* NaN stays */
    t = (TV) _mm512_min_ps(_mm512_set1_ps(127.0f), (__m512) t);  /* min(a, b) returns b for a NaN: it stays */
    const TV r = (TV) _mm512_roundscale_ps((__m512) t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
#else
    const TI dead = t < -126.0f;
    t = (TV) (((TI) t & ~dead) | ((TI) ((TV) {0} - 126.0f) & dead));
    const TI big = t > 127.0f;
    t = (TV) (((TI) t & ~big) | ((TI) ((TV) {0} + 127.0f) & big));
    const TV r = (t + 12582912.0f) - 12582912.0f;  /* round to nearest integer */
#endif
    const TV f = t - r;
    TV p = c6 * f + c5;
    p = p * f + c4;
    p = p * f + c3;
    p = p * f + c2;
    p = p * f + c1;
    p = p * f + 1.0f;
#if TILE_VEC_BYTES == 64
    return (TV) _mm512_maskz_scalef_ps(live, (__m512) p, (__m512) r);
#else
    const TI e = (__builtin_convertvector(r, TI) + 127) << 23;
    return (TV) ((TI) (p * (TV) e) & ~dead);
#endif
}

/* Per row r < rows of n (a multiple of TL) scores s[r * ld + i]:
 *   s := exp(s - shift[r]),  sum[r] = the row's sum of those,
 * exp(-Inf) = 0 exactly; a row with shift[r] = -Inf (nothing attended yet)
 * gives zeros. One call for a block of rows keeps the constants in registers
 * and lets rows overlap. */
VEC_TARGET static void VEC_FN(tile_exp_rows)(int64_t rows, int64_t n, int64_t ld, float * s, const float * shift, float * sum) {
    for (int64_t r = 0; r < rows; r++) {
        float * sr = s + r * ld;
        const float sh = shift[r];  /* a local: the stores to s could alias shift[r] and force a reload per vector */
        TV acc = {0};
        if (sh == -__builtin_inff()) {
            for (int64_t i = 0; i < n; i += TL) *(TV *) (sr + i) = (TV) {0};
        } else {
            for (int64_t i = 0; i < n; i += TL) {
                const TV out = VEC_FN(exp2v)((*(const TV *) (sr + i) - sh) * 1.44269504088896341f);
                *(TV *) (sr + i) = out;
                acc += out;
            }
        }
        sum[r] = VEC_FN(hsum)(acc);
    }
}

/* Attention's backward on a micro-tile of 6 query rows x nv * TL keys, the
 * scores' softmax done in the GEMM's epilogue (S and dP never stored):
 *   gemm_6xn_p:  c := P = exp((S + mask - mx) - lsum),  S = Q K^T = sum_k a[r][k] b[k * ldb + j]
 *   gemm_6xn_ds: c := dS = P (dP - D),                   dP = dO V^T, likewise; P read from p
 * mask, p: rows of stride ldc, like c (mask NULL: none); per row mx, lsum, D.
 * A row with mx = -Inf (nothing attended) gives P = dS = 0. (S + mask - mx)
 * is formed first: it is exact-ish, so large scores keep their digits. */
VEC_TARGET static inline __attribute__((always_inline)) void VEC_FN(gemm_6xn_p)(const int nv, int64_t K, const float * const * a,
                                                                              const float * b, int64_t ldb, float * c, int64_t ldc,
                                                                              const float * mask, const float * mx, const float * lsum) {
    TV acc[TILE_R][TILE_NV];
    VEC_FN(gemm_6xn_reduce)(nv, K, a, b, ldb, acc);
#pragma GCC unroll 8
    for (int r = 0; r < TILE_R; r++) {
        const float m = mx[r], l = lsum[r];
        if (m == -__builtin_inff()) {
#pragma GCC unroll 8
            for (int j = 0; j < nv; j++) *(TV *) (c + r * ldc + j * TL) = (TV) {0};
            continue;
        }
#pragma GCC unroll 8
        for (int j = 0; j < nv; j++) {
            TV x = acc[r][j];
            if (mask) x += *(const TV *) (mask + r * ldc + j * TL);
            x = (x - m) - l;
            *(TV *) (c + r * ldc + j * TL) = VEC_FN(exp2v)(x * 1.44269504088896341f);
        }
    }
}

VEC_TARGET static inline __attribute__((always_inline)) void VEC_FN(gemm_6xn_ds)(const int nv, int64_t K, const float * const * a,
                                                                               const float * b, int64_t ldb, float * c, int64_t ldc,
                                                                               const float * p, const float * mx, const float * D) {
    TV acc[TILE_R][TILE_NV];
    VEC_FN(gemm_6xn_reduce)(nv, K, a, b, ldb, acc);
#pragma GCC unroll 8
    for (int r = 0; r < TILE_R; r++) {
        const float d = D[r];
        if (mx[r] == -__builtin_inff()) {
#pragma GCC unroll 8
            for (int j = 0; j < nv; j++) *(TV *) (c + r * ldc + j * TL) = (TV) {0};
            continue;
        }
#pragma GCC unroll 8
        for (int j = 0; j < nv; j++) *(TV *) (c + r * ldc + j * TL) = *(const TV *) (p + r * ldc + j * TL) * (acc[r][j] - d);
    }
}

/* the two on TC columns, or on TC / 2 (half: the last half tile of a row) */
VEC_TARGET static void VEC_FN(gemm_6xc_p)(bool half, int64_t K, const float * const * a, const float * b, int64_t ldb, float * c,
                                          int64_t ldc, const float * mask, const float * mx, const float * lsum) {
    if (half) VEC_FN(gemm_6xn_p)(TILE_NV / 2, K, a, b, ldb, c, ldc, mask, mx, lsum);
    else VEC_FN(gemm_6xn_p)(TILE_NV, K, a, b, ldb, c, ldc, mask, mx, lsum);
}

VEC_TARGET static void VEC_FN(gemm_6xc_ds)(bool half, int64_t K, const float * const * a, const float * b, int64_t ldb, float * c,
                                           int64_t ldc, const float * p, const float * mx, const float * D) {
    if (half) VEC_FN(gemm_6xn_ds)(TILE_NV / 2, K, a, b, ldb, c, ldc, p, mx, D);
    else VEC_FN(gemm_6xn_ds)(TILE_NV, K, a, b, ldb, c, ldc, p, mx, D);
}

#undef TV
#undef TI
#undef TL
#undef TC
