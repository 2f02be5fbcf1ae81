/* vec_impl.h -- vector primitives, written once with GCC/Clang vector
 * extensions and compiled once per instruction set by vec.c (which defines
 * VEC_FN to add a suffix and VEC_TARGET to set the target ISA). A vector of
 * 16 floats becomes one zmm register under AVX-512, two ymm under AVX2 and
 * four xmm (or scalar code) otherwise. aligned(4) allows unaligned loads. */

typedef float VEC_FN(vf) __attribute__((vector_size(64), aligned(4)));
#define VF VEC_FN(vf)
#define VLEN 16

/* sum_i x[i] * y[i] */
VEC_TARGET static float VEC_FN(dot)(int64_t n, const float * x, const float * y) {
    VF acc0 = {0}, acc1 = {0}, acc2 = {0}, acc3 = {0};
    int64_t i = 0;
    for (; i + 4 * VLEN <= n; i += 4 * VLEN) {
        acc0 += *(const VF *) (x + i)            * *(const VF *) (y + i);
        acc1 += *(const VF *) (x + i + VLEN)     * *(const VF *) (y + i + VLEN);
        acc2 += *(const VF *) (x + i + 2 * VLEN) * *(const VF *) (y + i + 2 * VLEN);
        acc3 += *(const VF *) (x + i + 3 * VLEN) * *(const VF *) (y + i + 3 * VLEN);
    }
    for (; i + VLEN <= n; i += VLEN) acc0 += *(const VF *) (x + i) * *(const VF *) (y + i);
    acc0 = (acc0 + acc1) + (acc2 + acc3);
    float sum = 0.0f;
    for (int j = 0; j < VLEN; j++) sum += acc0[j];
    for (; i < n; i++) sum += x[i] * y[i];
    return sum;
}

/* y[i] *= a */
VEC_TARGET static void VEC_FN(scal)(int64_t n, float a, float * y) {
    int64_t i = 0;
    for (; i + VLEN <= n; i += VLEN) *(VF *) (y + i) *= a;
    for (; i < n; i++) y[i] *= a;
}

/* y[f] += sum_{m < k} p[m] rows[m ld + f] for f < n: y stays in registers
 * over the k rows (one row of a GEMM, no store between rows); each element
 * sums in the order of m */
VEC_TARGET static void VEC_FN(gemv_acc)(int64_t n, int64_t k, const float * p, const float * rows, int64_t ld, float * y) {
    int64_t f = 0;
    for (; f + 4 * VLEN <= n; f += 4 * VLEN) {
        VF a0 = *(const VF *) (y + f), a1 = *(const VF *) (y + f + VLEN), a2 = *(const VF *) (y + f + 2 * VLEN), a3 = *(const VF *) (y + f + 3 * VLEN);
        for (int64_t m = 0; m < k; m++) {
            const float * r = rows + m * ld + f;
            a0 += p[m] * *(const VF *) r;
            a1 += p[m] * *(const VF *) (r + VLEN);
            a2 += p[m] * *(const VF *) (r + 2 * VLEN);
            a3 += p[m] * *(const VF *) (r + 3 * VLEN);
        }
        *(VF *) (y + f) = a0; *(VF *) (y + f + VLEN) = a1; *(VF *) (y + f + 2 * VLEN) = a2; *(VF *) (y + f + 3 * VLEN) = a3;
    }
    for (; f + VLEN <= n; f += VLEN) {
        VF a = *(const VF *) (y + f);
        for (int64_t m = 0; m < k; m++) a += p[m] * *(const VF *) (rows + m * ld + f);
        *(VF *) (y + f) = a;
    }
    for (; f < n; f++) {
        float a = y[f];
        for (int64_t m = 0; m < k; m++) a += p[m] * rows[m * ld + f];
        y[f] = a;
    }
}

/* y[m] = sum_{f < n} x[f] rows[m ld + f] for m < k: one query row's scores
 * against k keys (the transpose of gemv_acc). Eight rows at a time, each
 * summed over f in a vector of its own, then the eight vectors folded into
 * one in three halving steps (2 rows x 8 lanes, 4 x 4, 8 x 2) instead of a
 * horizontal sum per row; the rows past the last eight go through dot. Each
 * y[m] sums in a fixed order given n, k and m, whatever thread computes it. */
VEC_TARGET static void VEC_FN(dot_rows)(int64_t n, int64_t k, const float * x, const float * rows, int64_t ld, float * y) {
    const int64_t nv = n / VLEN * VLEN;
    int64_t m = 0;
    for (; m + 8 <= k; m += 8) {
        const float * r = rows + m * ld;
        VF a[8] = {{0}};
        for (int64_t f = 0; f < nv; f += VLEN) {
            const VF xv = *(const VF *) (x + f);
#pragma GCC unroll 8
            for (int j = 0; j < 8; j++) a[j] += xv * *(const VF *) (r + j * ld + f);
        }
        VF b[4], c[2];
#pragma GCC unroll 4
        for (int j = 0; j < 4; j++)  /* rows 2j, 2j+1 in lanes 0-7, 8-15 */
            b[j] = __builtin_shufflevector(a[2 * j], a[2 * j + 1], 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23) +
                   __builtin_shufflevector(a[2 * j], a[2 * j + 1], 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
#pragma GCC unroll 2
        for (int j = 0; j < 2; j++)  /* rows 4j .. 4j+3 in lanes of 4 */
            c[j] = __builtin_shufflevector(b[2 * j], b[2 * j + 1], 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27) +
                   __builtin_shufflevector(b[2 * j], b[2 * j + 1], 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31);
        /* row j in lanes 2j, 2j+1 */
        const VF d = __builtin_shufflevector(c[0], c[1], 0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29) +
                     __builtin_shufflevector(c[0], c[1], 2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31);
        for (int j = 0; j < 8; j++) {
            float sum = d[2 * j] + d[2 * j + 1];
            for (int64_t f = nv; f < n; f++) sum += x[f] * r[j * ld + f];
            y[m + j] = sum;
        }
    }
    for (; m < k; m++) y[m] = VEC_FN(dot)(n, x, rows + m * ld);
}

/* ---- row statistics of the norms, in double (rows of 1000 + noise keep
 * their digits): VLEN lanes of float widened to double, two accumulators,
 * lanes summed in a fixed order, so a row's result depends only on its data. ---- */

typedef double VEC_FN(vd) __attribute__((vector_size(8 * VLEN), aligned(4)));
#define VD VEC_FN(vd)
#define WIDEN(p) __builtin_convertvector(*(const VF *) (p), VD)

/* sum_i (x[i] - mu) * (y[i] - nu); y = NULL: sum_i (x[i] - mu) (mu = 0: a plain sum) */
VEC_TARGET static double VEC_FN(dot_dev)(int64_t n, const float * x, double mu, const float * y, double nu) {
    VD acc0 = {0}, acc1 = {0};
    int64_t i = 0;
    if (y) {
        for (; i + 2 * VLEN <= n; i += 2 * VLEN) {
            acc0 += (WIDEN(x + i) - mu) * (WIDEN(y + i) - nu);
            acc1 += (WIDEN(x + i + VLEN) - mu) * (WIDEN(y + i + VLEN) - nu);
        }
    } else {
        for (; i + 2 * VLEN <= n; i += 2 * VLEN) {
            acc0 += WIDEN(x + i) - mu;
            acc1 += WIDEN(x + i + VLEN) - mu;
        }
    }
    acc0 += acc1;
    double s = 0.0;
    for (int j = 0; j < VLEN; j++) s += acc0[j];
    for (; i < n; i++) s += ((double) x[i] - mu) * (y ? (double) y[i] - nu : 1.0);
    return s;
}

/* y[i] = (float) ((x[i] - mu) inv), the norms' forward; with g, their backward
 * y[i] = (float) ((g[i] - gmu - (x[i] - mu) inv k) inv) */
VEC_TARGET static void VEC_FN(norm_apply)(int64_t n, const float * x, double mu, double inv, const float * g, double gmu, double k, float * y) {
    int64_t i = 0;
    if (g) {
        for (; i + VLEN <= n; i += VLEN)
            *(VF *) (y + i) = __builtin_convertvector((WIDEN(g + i) - gmu - (WIDEN(x + i) - mu) * inv * k) * inv, VF);
        for (; i < n; i++) y[i] = (float) (((double) g[i] - gmu - ((double) x[i] - mu) * inv * k) * inv);
    } else {
        for (; i + VLEN <= n; i += VLEN) *(VF *) (y + i) = __builtin_convertvector((WIDEN(x + i) - mu) * inv, VF);
        for (; i < n; i++) y[i] = (float) (((double) x[i] - mu) * inv);
    }
}

/* sum[i] += (double) x[i]: each element's additions in the caller's order,
 * so the sums are the same bits on every path (repeat_back's tile sums) */
VEC_TARGET static void VEC_FN(acc_f64)(int64_t n, const float * x, double * sum) {
    int64_t i = 0;
    for (; i + VLEN <= n; i += VLEN) *(VD *) (sum + i) += WIDEN(x + i);
    for (; i < n; i++) sum[i] += x[i];
}

/* ---- pooling windows along a row (POOL_1D/2D's interior outputs) ----
 * acc[o] = acc[o] op in[o s + j] for j < k in order, o < n, where op is max
 * (the new value wins only when larger: a NaN never does) or +. Strides 1
 * and 2 run on vectors of 16 outputs, then of 8 (rows of pooled images are
 * short); stride 2 takes the even lanes of 2W loaded floats, whose last one
 * lies past the window of the block's last output: a block runs only where
 * that float is inside the avail floats readable at in. */
typedef int32_t VEC_FN(vi) __attribute__((vector_size(64), aligned(4)));
typedef float   VEC_FN(hf) __attribute__((vector_size(32), aligned(4)));
typedef int32_t VEC_FN(hi) __attribute__((vector_size(32), aligned(4)));
#define POOL_EVEN16(p) __builtin_shufflevector(*(const VF *) (p), *(const VF *) ((p) + 16), \
                                               0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30)
#define POOL_EVEN8(p) __builtin_shufflevector(*(const VEC_FN(hf) *) (p), *(const VEC_FN(hf) *) ((p) + 8), 0, 2, 4, 6, 8, 10, 12, 14)
/* blocks of W outputs (vector type VT, its int mask type MT) while they fit */
#define POOL_BLOCKS(VT, MT, W, EVEN)                                                              \
    for (; o + W <= n && s * o + s * W - 1 + k - 1 < avail; o += W) {                             \
        VT r = *(VT *) (acc + o);                                                                 \
        for (int64_t j = 0; j < k; j++) {                                                         \
            const VT v = s == 1 ? *(const VT *) (in + o + j) : EVEN(in + 2 * o + j);              \
            if (is_max) {                                                                         \
                const MT take = v > r;                                                            \
                r = (VT) (((MT) v & take) | ((MT) r & ~take));                                    \
            } else {                                                                              \
                r += v;                                                                           \
            }                                                                                     \
        }                                                                                         \
        *(VT *) (acc + o) = r;                                                                    \
    }
VEC_TARGET static void VEC_FN(pool_rows)(bool is_max, int64_t n, int64_t s, int64_t k, const float * in, int64_t avail, float * acc) {
    int64_t o = 0;
    if (s == 1 || s == 2) {
        POOL_BLOCKS(VF, VEC_FN(vi), 16, POOL_EVEN16)
        POOL_BLOCKS(VEC_FN(hf), VEC_FN(hi), 8, POOL_EVEN8)
    }
    for (; o < n; o++) {
        float r = acc[o];
        for (int64_t j = 0; j < k; j++) {
            const float v = in[o * s + j];
            r = is_max ? (v > r ? v : r) : r + v;
        }
        acc[o] = r;
    }
}
#undef POOL_BLOCKS
#undef POOL_EVEN8
#undef POOL_EVEN16

#undef WIDEN
#undef VD
#undef VF
#undef VLEN
