/* quant_dot.h -- the SIMD dot products of quant_dot.c, with upstream's
 * ggml_vec_dot_t signature; cpu_traits.c picks them at run time. */
#ifndef GGMLR_QUANT_DOT_H
#define GGMLR_QUANT_DOT_H

#include <stddef.h>

#define GGMLR_QUANT_DOT_DECL(name, T)                                                                                   \
    void ggmlr_vec_dot_##name##_avx2(int n, float * s, size_t bs, const void * x, size_t bx, const void * y, size_t by, \
                                     int nrc);                                                                         \
    void ggmlr_vec_dot_##name##_avx512(int n, float * s, size_t bs, const void * x, size_t bx, const void * y,         \
                                       size_t by, int nrc);
/* the types with SIMD kernels (the _avx512 ones need AVX512BW and VNNI; bf16's AVX512_BF16) */
#define GGMLR_QUANT_DOT_SIMD(X) X(q4_0, Q4_0) X(q8_0, Q8_0) X(q4_K, Q4_K) X(q6_K, Q6_K) X(f16, F16) X(bf16, BF16)
GGMLR_QUANT_DOT_SIMD(GGMLR_QUANT_DOT_DECL)

#endif
