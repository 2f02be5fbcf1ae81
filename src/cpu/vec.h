/* vec.h -- SIMD primitives chosen once at run time (AVX-512, AVX2+FMA+F16C or scalar). */
#ifndef GGMLR_VEC_H
#define GGMLR_VEC_H

#include <stdint.h>

/* Rows of every attention micro-tile (columns depend on the ISA: tile_c). */
#define GGMLR_TILE_R 6

struct ggmlr_vec_ops {
    const char * name;
    float (*dot)(int64_t n, const float * x, const float * y);
    void  (*scal)(int64_t n, float a, float * y);
    /* attention micro-kernels (tile_impl.h); tile_c columns per tile */
    int   tile_c;
    void  (*tile_abt)(int64_t D, const float * const * a, const float * bt, float * c, int64_t ldc);
    void  (*tile_pv)(int64_t T, const float * p, int64_t prs, int64_t pts, const float * v, int64_t ldv, float * const * c);
    float (*tile_exp)(int64_t n, const float * x, float shift, float * y);       /* returns the sum */
    float (*tile_add_max)(int64_t n, float * s, const float * add);            /* returns the max */
    void  (*tile_p_ds)(int64_t rows, int64_t n, float * s, float * dp, const float * mask,
                       const float * mx, const float * lsum, const float * D);
    /* IEEE binary16 rows (ggml_fp16_t), F16C on the x86 paths */
    void  (*fp16_to_fp32_row)(const uint16_t * x, float * y, int64_t n);
    void  (*fp32_to_fp16_row)(const float * x, uint16_t * y, int64_t n);
};

/* The best path this CPU supports; GGMLR_SIMD=scalar|avx2|avx512 narrows it. */
const struct ggmlr_vec_ops * ggmlr_vec(void);

#endif
