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

#undef VF
#undef VLEN
