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

static float dot_row(const struct ggml_type_traits * tx, const struct ggml_type_traits * ty, int n, const char * x, const char * y) {
    float xs[CHUNK], ys[CHUNK];
    double sum = 0;
    for (int i = 0; i < n; i += CHUNK) {
        const int k = n - i < CHUNK ? n - i : CHUNK;
        tx->to_float(x + (size_t) (i / tx->blck_size) * tx->type_size, xs, k);
        ty->to_float(y + (size_t) (i / ty->blck_size) * ty->type_size, ys, k);
        for (int e = 0; e < k; e++) sum += (double) xs[e] * ys[e];
    }
    return (float) sum;
}

void ggmlr_vec_dot_ref(enum ggml_type tx, enum ggml_type ty, int n, float * s, size_t bs, const void * x, size_t bx,
                       const void * y, size_t by, int nrc) {
    const struct ggml_type_traits * px = ggmlr_type_traits_own(tx), * py = ggmlr_type_traits_own(ty);
    for (int c = 0; c < nrc; c++)
        for (int r = 0; r < nrc; r++)
            s[r + c * bs] = dot_row(px, py, n, (const char *) x + r * bx, (const char *) y + c * by);
}

#define DOT_REF(name, TX, TY)                                                                                          \
    void ggmlr_vec_dot_##name##_ref(int n, float * s, size_t bs, const void * x, size_t bx, const void * y, size_t by, \
                                    int nrc) {                                                                         \
        ggmlr_vec_dot_ref(GGML_TYPE_##TX, GGML_TYPE_##TY, n, s, bs, x, bx, y, by, nrc);                                \
    }
GGMLR_VEC_DOT_REFS(DOT_REF)
