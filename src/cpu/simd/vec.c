/* vec.c -- builds vec_impl.h once per instruction set and picks one at run time. */
#include "cpu/simd/vec.h"

#include "core/internal.h"
#include "ggml-cpu.h"
#include "ggml.h"  /* enum ggml_unary_op (act_impl.h's GLU) */

#include <stdlib.h>
#include <string.h>

#define TILE_R GGMLR_TILE_R

#define VEC_FN(name) name##_scalar
#define VEC_TARGET
#define TILE_VEC_BYTES 16
#define TILE_NV 2
#include "cpu/simd/vec_impl.h"
#include "cpu/simd/tile_impl.h"
#include "cpu/simd/act_impl.h"
#include "cpu/simd/pack_impl.h"
#undef VEC_FN
#undef VEC_TARGET
#undef TILE_VEC_BYTES
#undef TILE_NV

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>  /* vscalefps and horizontal reductions (tile_impl.h) */
#define GGMLR_X86_DISPATCH 1
#define VEC_FN(name) name##_avx2
#define VEC_TARGET __attribute__((target("avx2,fma")))
#define TILE_VEC_BYTES 32
#define TILE_NV 2
#include "cpu/simd/vec_impl.h"
#include "cpu/simd/tile_impl.h"
#include "cpu/simd/act_impl.h"
#include "cpu/simd/pack_impl.h"
#undef VEC_FN
#undef VEC_TARGET
#undef TILE_VEC_BYTES
#undef TILE_NV
#define VEC_FN(name) name##_avx512
#define VEC_TARGET __attribute__((target("avx512f,avx512vl,avx2,fma")))
#define TILE_VEC_BYTES 64
#define TILE_NV 4
#include "cpu/simd/vec_impl.h"
#include "cpu/simd/tile_impl.h"
#include "cpu/simd/act_impl.h"
#include "cpu/simd/pack_impl.h"
#undef VEC_FN
#undef VEC_TARGET
#undef TILE_VEC_BYTES
#undef TILE_NV
#endif

#ifdef GGMLR_X86_DISPATCH
/* F16C row converters: 8 values per instruction, the same IEEE
 * round-to-nearest-even results as core/fp16.c's scalar ones. */
static __attribute__((target("avx,f16c"))) void ggmlr_fp16_to_fp32_row_f16c(const ggml_fp16_t * x, float * y, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (x + i))));
    for (; i < n; i++) y[i] = ggml_fp16_to_fp32(x[i]);
}

static __attribute__((target("avx,f16c"))) void ggmlr_fp32_to_fp16_row_f16c(const float * x, ggml_fp16_t * y, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *) (y + i), _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    for (; i < n; i++) y[i] = ggml_fp32_to_fp16(x[i]);
}
#endif

#define OPS(isa, tile_c, fp16) {#isa, dot_##isa, scal_##isa, gemv_acc_##isa, dot_rows_##isa, tile_c, gemm_6xc_store_##isa, gemm_6xh_store_##isa, gemm_6xc_acc_##isa, \
                               gemm_6xh_acc_##isa, tile_exp_rows_##isa, tile_add_max_##isa, gemm_6xc_p_##isa, gemm_6xc_ds_##isa, \
                               transpose8_##isa, scan_f16_mask_##isa, act_exp_##isa, act_gelu_##isa, act_gelu_back_##isa, \
                               act_silu_##isa, act_gelu_quick_##isa, act_gelu_erf_##isa, act_oai_##isa, act_glu_##isa, copy_stream_##isa, stream_fence_##isa, \
                               dot_dev_##isa, norm_apply_##isa, acc_f64_##isa, pool_rows_##isa, ggmlr_fp16_to_fp32_row_##fp16, ggmlr_fp32_to_fp16_row_##fp16}
static const struct ggmlr_vec_ops ops_scalar = OPS(scalar, 8, scalar);
#ifdef GGMLR_X86_DISPATCH
static const struct ggmlr_vec_ops ops_scalar_f16c = OPS(scalar, 8, f16c);  /* F16C without AVX2 (Ivy Bridge) */
static const struct ggmlr_vec_ops ops_avx2   = OPS(avx2, 16, f16c);
static const struct ggmlr_vec_ops ops_avx512 = OPS(avx512, 64, f16c);

static bool has_f16c(void) {
    /* F16C is CPUID.1:ECX bit 29; clang < 16 rejects __builtin_cpu_supports("f16c") */
    unsigned int eax, ebx, ecx, edx;
    return __builtin_cpu_supports("avx") && __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
}
#endif
#undef OPS

/* GGMLR_SIMD=scalar turns every SIMD kernel off, F16C included. Every AVX2
 * CPU has F16C; the AVX2 paths require it all the same. */
static const struct ggmlr_vec_ops * choose(void) {
    const char * want = getenv("GGMLR_SIMD");
    if (want && strcmp(want, "scalar") == 0) return &ops_scalar;
#ifdef GGMLR_X86_DISPATCH
    __builtin_cpu_init();
    const bool f16c = has_f16c();
    const bool has_avx2 = f16c && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    const bool has_avx512 = has_avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
    if (has_avx512 && !(want && strcmp(want, "avx2") == 0)) return &ops_avx512;
    if (has_avx2) return &ops_avx2;
    if (f16c) return &ops_scalar_f16c;
#endif
    return &ops_scalar;
}

const struct ggmlr_vec_ops * ggmlr_vec(void) {
    /* a benign race: every thread computes the same answer */
    static const struct ggmlr_vec_ops * chosen;
    const struct ggmlr_vec_ops * ops = __atomic_load_n(&chosen, __ATOMIC_ACQUIRE);
    if (!ops) {
        ops = choose();
        __atomic_store_n(&chosen, ops, __ATOMIC_RELEASE);
    }
    return ops;
}

const char * ggml_cpu_simd_name(void) { return ggmlr_vec()->name; }

/* Through the run-time SIMD choice, so GGMLR_SIMD=scalar turns F16C off too. */
void ggml_fp16_to_fp32_row(const ggml_fp16_t * x, float * y, int64_t n) { ggmlr_vec()->fp16_to_fp32_row(x, y, n); }

void ggml_fp32_to_fp16_row(const float * x, ggml_fp16_t * y, int64_t n) { ggmlr_vec()->fp32_to_fp16_row(x, y, n); }
