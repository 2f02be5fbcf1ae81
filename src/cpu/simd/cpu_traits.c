/* cpu_traits.c -- upstream's ggml_get_type_traits_cpu: per type, the
 * quantizer of activations (from_float, to vec_dot_type) and the dot
 * product of a stored row with a quantized one. The dot products are the
 * SIMD kernels of quant_dot.c on the path ggmlr_vec() chose (GGMLR_SIMD
 * narrows it): "avx512" takes the 512-bit / VNNI kernels when the CPU has
 * AVX512BW and AVX512_VNNI (else the AVX2 ones) and the AVX512_BF16 one for
 * BF16 when it has that; "scalar", and every type without a SIMD kernel,
 * the reference ones of quant/dot.c. */
#include "cpu/simd/quant_dot.h"
#include "cpu/simd/vec.h"

#include "ggml-cpu.h"
#include "quant/quant.h"

#include <pthread.h>
#include <string.h>

static void f32_dot(int n, float * s, size_t bs, const void * x, size_t bx, const void * y, size_t by, int nrc) {
    for (int c = 0; c < nrc; c++)
        for (int r = 0; r < nrc; r++)
            s[r + c * bs] = ggmlr_vec()->dot(n, (const float *) ((const char *) x + r * bx), (const float *) ((const char *) y + c * by));
}

static void f32_copy(const float * x, void * y, int64_t k) { memcpy(y, x, (size_t) k * sizeof(float)); }
static void f32_to_f16(const float * x, void * y, int64_t k) { ggml_fp32_to_fp16_row(x, y, k); }

enum path { PATH_SCALAR, PATH_AVX2, PATH_AVX512 };

static struct ggml_type_traits_cpu table[GGML_TYPE_COUNT];

static void build(void) {
    const char * isa = ggmlr_vec()->name;
    const enum path path = strcmp(isa, "avx512") == 0 ? PATH_AVX512 : strcmp(isa, "avx2") == 0 ? PATH_AVX2 : PATH_SCALAR;
    table[GGML_TYPE_F32] = (struct ggml_type_traits_cpu) {.from_float = f32_copy, .vec_dot = f32_dot, .vec_dot_type = GGML_TYPE_F32, .nrows = 1};
#define REF(name, TX, TY)                                                                                                     \
    table[GGML_TYPE_##TX] = (struct ggml_type_traits_cpu) {.from_float = ggml_get_type_traits(GGML_TYPE_##TX)->from_float_ref, \
                                                           .vec_dot = ggmlr_vec_dot_##name##_ref, .vec_dot_type = GGML_TYPE_##TY, .nrows = 1};
    GGMLR_VEC_DOT_REFS(REF)
#undef REF
    table[GGML_TYPE_F16].from_float = f32_to_f16;  /* F16C when the path has it */
    table[GGML_TYPE_Q8_1] = (struct ggml_type_traits_cpu) {.from_float = ggmlr_quantize_row_q8_1, .vec_dot_type = GGML_TYPE_Q8_1, .nrows = 1};
    table[GGML_TYPE_Q8_K] = (struct ggml_type_traits_cpu) {.from_float = ggmlr_quantize_row_q8_K, .nrows = 1};
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    const bool wide = path == PATH_AVX512 && ggml_cpu_has_avx512_vnni() && __builtin_cpu_supports("avx512bw");
#define SIMD(name, T) \
    if (path != PATH_SCALAR) table[GGML_TYPE_##T].vec_dot = wide ? ggmlr_vec_dot_##name##_avx512 : ggmlr_vec_dot_##name##_avx2;
    GGMLR_QUANT_DOT_SIMD(SIMD)
#undef SIMD
    /* vdpbf16ps is its own CPUID bit */
    if (path == PATH_AVX512 && !ggml_cpu_has_avx512_bf16()) table[GGML_TYPE_BF16].vec_dot = ggmlr_vec_dot_bf16_avx2;
#else
    (void) path;
#endif
}

const struct ggml_type_traits_cpu * ggml_get_type_traits_cpu(enum ggml_type type) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    if ((unsigned) type >= GGML_TYPE_COUNT) return NULL;
    pthread_once(&once, build);
    return &table[type];
}
