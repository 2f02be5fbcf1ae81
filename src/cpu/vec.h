/* vec.h -- SIMD primitives chosen once at run time (AVX-512, AVX2+FMA or scalar). */
#ifndef GGMLR_VEC_H
#define GGMLR_VEC_H

#include <stdint.h>

struct ggmlr_vec_ops {
    const char * name;
    float (*dot)(int64_t n, const float * x, const float * y);
    void  (*axpy)(int64_t n, float a, const float * x, float * y);
    void  (*scal)(int64_t n, float a, float * y);
};

/* The best path this CPU supports; GGMLR_SIMD=scalar|avx2|avx512 narrows it. */
const struct ggmlr_vec_ops * ggmlr_vec(void);

#endif
