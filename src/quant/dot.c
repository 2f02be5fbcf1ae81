/* dot.c -- the reference dot products of a row of each type with a row of
 * its vec_dot_type (the activations quantized as upstream's CPU backend
 * quantizes them: Q8_0 for the 32-blocks, Q8_1 for Q4_1/Q5_1, Q8_K for the
 * K types and IQ4_XS, F16 with F16, BF16 with BF16). Both rows are
 * dequantized a chunk of at most 256 elements at a time with the types'
 * to_float and the products summed in double: the exact dot of the two
 * stored rows up to one rounding per element, against which the SIMD
 * kernels (cpu/simd/quant_dot.c) are checked. Upstream's vec_dot signature:
 * for r, c < nrc, s[r + c*bs] = row r of x (stride bx bytes) . row c of y
 * (stride by bytes). */
#include "quant/quant.h"

#define CHUNK 256  /* a multiple of every block size */

static double dot_row(const struct ggml_type_traits * tx, const struct ggml_type_traits * ty, int n, const char * x, const char * y) {
    float xs[CHUNK], ys[CHUNK];
    double sum = 0;
    for (int i = 0; i < n; i += CHUNK) {
        const int k = n - i < CHUNK ? n - i : CHUNK;
        tx->to_float(x + (size_t) (i / tx->blck_size) * tx->type_size, xs, k);
        ty->to_float(y + (size_t) (i / ty->blck_size) * ty->type_size, ys, k);
        for (int e = 0; e < k; e++) sum += (double) xs[e] * ys[e];
    }
    return sum;
}

/* Q4_1 and Q5_1 blocks hold x = d q + m; their activations are Q8_1 blocks,
 * y = d_y q_y with s = d_y sum q_y stored as fp16. Upstream's dot takes the
 * min's term m sum y as m s, from the stored (rounded) s: so does this one,
 * by adding m (s - d_y sum q_y) per block to the exact sum, and the two
 * libraries' products then carry the same rounding of s. Both block types
 * begin with the fp16 pair {d, m}. */
static double min_term_correction(const struct ggml_type_traits * tx, int n, const char * x, const char * y) {
    double sum = 0;
    for (int b = 0; b < n / QK8_1; b++) {
        const ggml_fp16_t * dm = (const ggml_fp16_t *) (x + (size_t) b * tx->type_size);
        const block_q8_1 * yb = (const block_q8_1 *) y + b;
        int32_t qsum = 0;
        for (int e = 0; e < QK8_1; e++) qsum += yb->qs[e];
        sum += (double) ggml_fp16_to_fp32(dm[1]) * ((double) ggml_fp16_to_fp32(yb->s) - (double) ggml_fp16_to_fp32(yb->d) * qsum);
    }
    return sum;
}

void ggmlr_vec_dot_ref(enum ggml_type tx, enum ggml_type ty, int n, float * s, size_t bs, const void * x, size_t bx,
                       const void * y, size_t by, int nrc) {
    const struct ggml_type_traits * px = ggmlr_type_traits_own(tx), * py = ggmlr_type_traits_own(ty);
    const bool min_term = ty == GGML_TYPE_Q8_1 && (tx == GGML_TYPE_Q4_1 || tx == GGML_TYPE_Q5_1);
    for (int c = 0; c < nrc; c++)
        for (int r = 0; r < nrc; r++) {
            const char * xr = (const char *) x + r * bx, * yc = (const char *) y + c * by;
            s[r + c * bs] = (float) (dot_row(px, py, n, xr, yc) + (min_term ? min_term_correction(px, n, xr, yc) : 0.0));
        }
}

#define DOT_REF(name, TX, TY)                                                                                          \
    void ggmlr_vec_dot_##name##_ref(int n, float * s, size_t bs, const void * x, size_t bx, const void * y, size_t by, \
                                    int nrc) {                                                                         \
        ggmlr_vec_dot_ref(GGML_TYPE_##TX, GGML_TYPE_##TY, n, s, bs, x, bx, y, by, nrc);                                \
    }
GGMLR_VEC_DOT_REFS(DOT_REF)
