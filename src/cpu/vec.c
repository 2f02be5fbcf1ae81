/* vec.c -- builds vec_impl.h once per instruction set and picks one at run time. */
#include "vec.h"

#include "ggml-cpu.h"

#include <stdlib.h>
#include <string.h>

#define TILE_R GGMLR_TILE_R

#define VEC_FN(name) name##_scalar
#define VEC_TARGET
#define TILE_VEC_BYTES 16
#define TILE_NV 2
#include "vec_impl.h"
#include "tile_impl.h"
#undef VEC_FN
#undef VEC_TARGET
#undef TILE_VEC_BYTES
#undef TILE_NV

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define GGMLR_X86_DISPATCH 1
#define VEC_FN(name) name##_avx2
#define VEC_TARGET __attribute__((target("avx2,fma")))
#define TILE_VEC_BYTES 32
#define TILE_NV 2
#include "vec_impl.h"
#include "tile_impl.h"
#undef VEC_FN
#undef VEC_TARGET
#undef TILE_VEC_BYTES
#undef TILE_NV
#define VEC_FN(name) name##_avx512
#define VEC_TARGET __attribute__((target("avx512f,avx512vl,avx2,fma")))
#define TILE_VEC_BYTES 64
#define TILE_NV 4
#include "vec_impl.h"
#include "tile_impl.h"
#undef VEC_FN
#undef VEC_TARGET
#undef TILE_VEC_BYTES
#undef TILE_NV
#endif

#define OPS(isa, tile_c) {#isa, dot_##isa, scal_##isa, tile_c, gemm_6xc_store_##isa, gemm_6xc_acc_##isa, tile_exp_rows_##isa, tile_add_max_##isa, tile_p_ds_##isa}
static const struct ggmlr_vec_ops ops_scalar = OPS(scalar, 8);
#ifdef GGMLR_X86_DISPATCH
static const struct ggmlr_vec_ops ops_avx2   = OPS(avx2, 16);
static const struct ggmlr_vec_ops ops_avx512 = OPS(avx512, 64);
#endif
#undef OPS

static const struct ggmlr_vec_ops * choose(void) {
    const char * want = getenv("GGMLR_SIMD");
    if (want && strcmp(want, "scalar") == 0) return &ops_scalar;
#ifdef GGMLR_X86_DISPATCH
    __builtin_cpu_init();
    const int has_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    const int has_avx512 = has_avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
    if (has_avx512 && !(want && strcmp(want, "avx2") == 0)) return &ops_avx512;
    if (has_avx2) return &ops_avx2;
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
