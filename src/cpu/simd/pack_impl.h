/* pack_impl.h -- preparing GEMM operands: the transposes that pack mul_mat's
 * panels of a transposed operand and attention's K^T and V^T, and the scan
 * that sorts attention's F16 mask blocks; written once with GCC/Clang vector
 * extensions and compiled per instruction set by vec.c.
 *
 * Element by element, a transpose writes one float per cache line of the
 * destination (or reads one per line of the source); in 8 x 8 blocks it moves
 * whole 32-byte rows both ways and does the exchange in registers: three
 * rounds of two-input shuffles (24 for 64 elements), which the x86 paths turn
 * into unpck / shufps / vperm2f128. */

typedef float VEC_FN(p8) __attribute__((vector_size(32), aligned(4)));
#define P8 VEC_FN(p8)

/* dst[i * ldd + r] = mul * src[r * lds + i] for r < 8, i < n: 8 rows of n
 * floats become n rows of 8. Any n (the last n % 8 columns one by one). */
VEC_TARGET static void VEC_FN(transpose8)(int64_t n, const float * src, int64_t lds, float mul, float * dst, int64_t ldd) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        P8 r[8];
        for (int k = 0; k < 8; k++) r[k] = *(const P8 *) (src + k * lds + i) * mul;
        /* pairs of rows interleaved: t0 = r0[0] r1[0] r0[1] r1[1] | r0[4] r1[4] r0[5] r1[5], t1 the other halves */
        P8 t[8];
        for (int k = 0; k < 4; k++) {
            t[2 * k] = __builtin_shufflevector(r[2 * k], r[2 * k + 1], 0, 8, 1, 9, 4, 12, 5, 13);
            t[2 * k + 1] = __builtin_shufflevector(r[2 * k], r[2 * k + 1], 2, 10, 3, 11, 6, 14, 7, 15);
        }
        /* quads: u0 = column 0 of rows 0-3 | column 4 of rows 0-3, u1 columns 1 | 5, ... (u4-u7: rows 4-7) */
        P8 u[8];
        for (int k = 0; k < 2; k++) {
            const P8 * tk = t + 4 * k;
            u[4 * k + 0] = __builtin_shufflevector(tk[0], tk[2], 0, 1, 8, 9, 4, 5, 12, 13);
            u[4 * k + 1] = __builtin_shufflevector(tk[0], tk[2], 2, 3, 10, 11, 6, 7, 14, 15);
            u[4 * k + 2] = __builtin_shufflevector(tk[1], tk[3], 0, 1, 8, 9, 4, 5, 12, 13);
            u[4 * k + 3] = __builtin_shufflevector(tk[1], tk[3], 2, 3, 10, 11, 6, 7, 14, 15);
        }
        /* halves joined: column c (< 4) = low halves of u[c], u[4 + c]; column c + 4 the high ones */
        for (int c = 0; c < 4; c++) {
            *(P8 *) (dst + (i + c) * ldd) = __builtin_shufflevector(u[c], u[4 + c], 0, 1, 2, 3, 8, 9, 10, 11);
            *(P8 *) (dst + (i + c + 4) * ldd) = __builtin_shufflevector(u[c], u[4 + c], 4, 5, 6, 7, 12, 13, 14, 15);
        }
    }
    for (; i < n; i++)
        for (int k = 0; k < 8; k++) dst[i * ldd + k] = mul * src[k * lds + i];
}

#undef P8

/* 32-byte vectors of 16-bit lanes on every path: 64-byte ones would need
 * AVX512BW, which the AVX-512 path does not assume */
#define MH_BYTES 32
typedef int16_t  VEC_FN(mh) __attribute__((vector_size(MH_BYTES), aligned(2)));
typedef uint64_t VEC_FN(mw) __attribute__((vector_size(MH_BYTES), aligned(2)));
#define MH VEC_FN(mh)
#define MW VEC_FN(mw)
#define MH_LEN (MH_BYTES / 2)

/* IEEE binary16 bits: -Inf is 0xFC00, +-0 is 0x0000 / 0x8000 */
#define F16_NEG_INF ((int16_t) 0xFC00)

/* whether any lane of *v is non-zero (by pointer: a 32-byte vector argument
 * would change the ABI of the plain x86-64 build) */
VEC_TARGET static inline __attribute__((always_inline)) bool VEC_FN(any_lane)(const MH * v) {
    const MW w = (MW) *v;
    uint64_t x = 0;
    for (int k = 0; k < MH_BYTES / 8; k++) x |= w[k];
    return x != 0;
}

/* Of n F16 mask elements x: whether all are -Inf (*all_inf), whether all are
 * +-0 (*all_zero), and returns 1 + the index of the last element that is not
 * -Inf (0 if none). Fused attention reads its whole mask once per node this way. */
VEC_TARGET static int64_t VEC_FN(scan_f16_mask)(int64_t n, const uint16_t * x, bool * all_inf, bool * all_zero) {
    MH live = {0}, nonzero = {0};
    int64_t i = 0;
    for (; i + MH_LEN <= n; i += MH_LEN) {
        const MH v = *(const MH *) (x + i);
        live |= v != F16_NEG_INF;
        nonzero |= v & 0x7FFF;
    }
    bool ai = !VEC_FN(any_lane)(&live), az = !VEC_FN(any_lane)(&nonzero);
    for (; i < n; i++) {
        ai = ai && x[i] == 0xFC00;
        az = az && (x[i] & 0x7FFF) == 0;
    }
    *all_inf = ai;
    *all_zero = az;
    if (ai) return 0;
    int64_t j = n;
    while (j % MH_LEN != 0 && x[j - 1] == 0xFC00) j--;
    if (j % MH_LEN == 0)
        for (; j > 0; j -= MH_LEN) {
            const MH v = *(const MH *) (x + j - MH_LEN) != F16_NEG_INF;
            if (VEC_FN(any_lane)(&v)) break;
        }
    while (j > 0 && x[j - 1] == 0xFC00) j--;
    return j;
}

#undef MH
#undef MW
#undef MH_LEN
#undef MH_BYTES
#undef F16_NEG_INF
