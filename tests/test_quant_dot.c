/* test_quant_dot.c -- ggml_get_type_traits_cpu: for every type with a dot
 * product, vec_dot of a quantized row x and activations y quantized with
 * from_float to vec_dot_type, against float64 sums of the dequantized
 * operands (to_float, checked in test_quant):
 *  - against x~ . y~ (both dequantized): float rounding only, 1e-5 of
 *    sum |x~||y~| (a wrong element or scale is off by far more);
 *  - against x~ . y (the activations unquantized): within the activation
 *    quantization's own bound, sum |x~_i| |y_i - y~_i|;
 * every kernel of every SIMD path this CPU can run called directly (the
 * reference of quant/dot.c, the AVX2 and the AVX-512 ones), besides the one
 * the traits picked; upstream's nrc = 2 layout s[r + c bs]; the traits'
 * vec_dot_type and nrows as upstream's. */
#include "common/test_common.h"

#include "cpu/simd/quant_dot.h"
#include "ggml-cpu.h"
#include "quant/quant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct kernel { const char * name; ggml_vec_dot_t fn; bool runs; };

struct type_case {
    enum ggml_type type, dot_type;
    struct kernel k[3];  /* reference, AVX2, AVX-512 */
};

static bool has_avx2(void) { return ggml_cpu_has_avx2() && ggml_cpu_has_fma() && ggml_cpu_has_f16c(); }
static bool has_wide(void) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    return has_avx2() && ggml_cpu_has_avx512_vnni() && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
#else
    return false;
#endif
}

#define CASE_REF(name, TX, TY) {GGML_TYPE_##TX, GGML_TYPE_##TY, {{"ref", ggmlr_vec_dot_##name##_ref, true}}},
static struct type_case cases[] = {GGMLR_VEC_DOT_REFS(CASE_REF)};

static void add_simd(void) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
#define SIMD(name, T)                                                                                                    \
        if (cases[c].type == GGML_TYPE_##T) {                                                                            \
            cases[c].k[1] = (struct kernel) {"avx2", ggmlr_vec_dot_##name##_avx2, has_avx2()};                           \
            cases[c].k[2] = (struct kernel) {"avx512", ggmlr_vec_dot_##name##_avx512,                                   \
                                             has_wide() && (GGML_TYPE_##T != GGML_TYPE_BF16 || ggml_cpu_has_avx512_bf16())}; \
        }
        GGMLR_QUANT_DOT_SIMD(SIMD)
#undef SIMD
    }
#endif
}

/* activations: a smooth part, a few outliers, some exact zeros */
static void fill_y(float * y, int n) {
    for (int i = 0; i < n; i++) y[i] = (float) (tc_uniform(-2, 2) + (i % 97 == 5 ? 40 : 0) - (i % 131 == 7 ? 25 : 0));
    for (int i = 3; i < n; i += 53) y[i] = 0;
}

/* weights: per 32-run a different magnitude (the scales' range), one
 * all-zero run */
static void fill_x(float * x, int n) {
    for (int i = 0; i < n; i++) x[i] = (float) (tc_uniform(-1, 1) * exp2((double) ((i / 32) % 7) - 3));
    if (n >= 64) memset(x + 32, 0, 32 * sizeof *x);
}

/* Q4_1 and Q5_1 (x = d q + m per block) against Q8_1 activations: upstream's
 * dot takes the min's term m sum y from the block's stored fp16 sum s, so
 * x . y = sum over blocks of (sum_e (x_e - m) y_e + m s). Both x block types
 * begin with the fp16 pair {d, m}. */
static double dot_with_stored_sums(enum ggml_type type, int n, const float * xd, const float * yd, const char * xq, const char * yq) {
    double total = 0;
    for (int b = 0; b < n / QK8_1; b++) {
        const double m = ggml_fp16_to_fp32(((const ggml_fp16_t *) (xq + (size_t) b * ggml_type_size(type)))[1]);
        double part = 0;
        for (int e = b * QK8_1; e < (b + 1) * QK8_1; e++) part += ((double) xd[e] - m) * yd[e];
        total += part + m * ggml_fp16_to_fp32(((const block_q8_1 *) yq)[b].s);
    }
    return total;
}

static void check_type(const struct type_case * tc, int n) {
    const struct ggml_type_traits_cpu * cpu = ggml_get_type_traits_cpu(tc->type);
    const struct ggml_type_traits * tx = ggmlr_type_traits_own(tc->type), * ty = ggmlr_type_traits_own(tc->dot_type);
    const char * name = ggml_type_name(tc->type);
    CHECK(cpu->vec_dot_type == tc->dot_type && cpu->nrows == 1 && cpu->vec_dot && cpu->from_float,
          "%s: traits: vec_dot_type %s, nrows %lld", name, ggml_type_name(cpu->vec_dot_type), (long long) cpu->nrows);
    const size_t xb = ggml_row_size(tc->type, n), yb = ggml_row_size(tc->dot_type, n);
    float * xf = malloc(2 * (size_t) n * sizeof *xf), * yf = malloc(2 * (size_t) n * sizeof *yf);
    float * xd = malloc((size_t) n * sizeof *xd), * yd = malloc((size_t) n * sizeof *yd);
    char * xq = malloc(2 * xb), * yq = malloc(2 * yb);
    fill_x(xf, 2 * n);
    fill_y(yf, 2 * n);
    for (int r = 0; r < 2; r++) {
        CHECK(ggml_quantize_chunk(tc->type, xf + r * n, xq + r * xb, 0, 1, n, NULL) == xb, "%s: quantized", name);
        ggml_get_type_traits_cpu(tc->dot_type)->from_float(yf + r * n, yq + r * yb, n);
    }
    /* vec_dot_type's from_float gives its reference quantizer's bytes */
    char * yq2 = malloc(yb);
    ggmlr_type_traits_own(tc->dot_type)->from_float_ref(yf, yq2, n);
    CHECK(memcmp(yq2, yq, yb) == 0, "%s: from_float gives %s's reference bytes", name, ggml_type_name(tc->dot_type));
    free(yq2);
    double exact[2][2], bound[2][2], scale[2][2];
    for (int r = 0; r < 2; r++)
        for (int c = 0; c < 2; c++) {
            tx->to_float(xq + r * xb, xd, n);
            ty->to_float(yq + c * yb, yd, n);
            double s = 0, a = 0, q = 0, e = 0;
            for (int i = 0; i < n; i++) {
                s += (double) xd[i] * yd[i];
                a += fabs((double) xd[i] * yd[i]);
                q += (double) xd[i] * yf[c * n + i];
                e += fabs((double) xd[i]) * fabs((double) yf[c * n + i] - yd[i]);
            }
            exact[r][c] = tc->dot_type == GGML_TYPE_Q8_1 ? dot_with_stored_sums(tc->type, n, xd, yd, xq + r * xb, yq + c * yb) : s;
            scale[r][c] = a;
            bound[r][c] = e;
            /* the activation quantization's error, checked on the reference: it is what the kernels approach */
            CHECK(fabs(q - s) <= e * 1.000001 + 1e-12, "%s: quantized activations' error within its bound", name);
        }
    for (int k = 0; k < 3; k++) {
        const struct kernel * kr = &tc->k[k];
        if (!kr->fn || !kr->runs) continue;
        float s1 = 0, s4[4];
        kr->fn(n, &s1, 0, xq, 0, yq, 0, 1);
        const double err = fabs(s1 - exact[0][0]);
        CHECK(err <= 1e-5 * scale[0][0] + 1e-30, "%s n=%d %s: |vec_dot - float64 of the dequantized rows| = %.3g (sum |x||y| %.3g)", name,
              n, kr->name, err, scale[0][0]);
        /* upstream's nrc = 2: s[r + c bs] = x_r . y_c */
        kr->fn(n, s4, 2, xq, xb, yq, yb, 2);
        for (int r = 0; r < 2; r++)
            for (int c = 0; c < 2; c++) {
                const double e2 = fabs(s4[r + 2 * c] - exact[r][c]);
                CHECK(e2 <= 1e-5 * scale[r][c] + 1e-30, "%s n=%d %s: nrc 2, s[%d + %d bs] off by %.3g", name, n, kr->name, r, c, e2);
            }
    }
    float st = 0;
    cpu->vec_dot(n, &st, 0, xq, 0, yq, 0, 1);
    CHECK(fabs(st - exact[0][0]) <= 1e-5 * scale[0][0] + 1e-30, "%s n=%d: the traits' vec_dot", name, n);
    tx->to_float(xq, xd, n);
    double q = 0;
    for (int i = 0; i < n; i++) q += (double) xd[i] * yf[i];
    CHECK(fabs(st - q) <= bound[0][0] * 1.0001 + 1e-5 * scale[0][0], "%s n=%d: vec_dot %.6g vs float64 of x~ . y %.6g beyond the bound %.3g",
          name, n, st, q, bound[0][0]);
    free(xf); free(yf); free(xd); free(yd); free(xq); free(yq);
}

int main(void) {
    tc_seed(20261205);
    add_simd();
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int blck = (int) ggml_blck_size(cases[c].type);
        check_type(&cases[c], 1024);
        check_type(&cases[c], 4096);
        if (blck <= 32) check_type(&cases[c], 544);       /* 17 blocks: the wide kernels' odd last block */
        if (blck == 1) check_type(&cases[c], 550);        /* a scalar tail */
    }
    CHECK(ggml_get_type_traits_cpu(GGML_TYPE_COUNT) == NULL, "an out-of-range type has no traits");
    CHECK(ggml_get_type_traits_cpu(GGML_TYPE_Q8_K)->from_float != NULL && ggml_get_type_traits_cpu(GGML_TYPE_Q8_K)->vec_dot == NULL,
          "Q8_K: a quantizer of activations, no dot product (as upstream)");
    /* upstream's tables for the two activation types (src/ggml.c, ggml-cpu.c): Q8_1 a reference quantizer, no
     * dequantizer, vec_dot_type Q8_1 and no dot; Q8_K no converters in the public table. A program such as
     * upstream's test-quantize-fns skips a type without to_float (it would call the NULL vec_dot) */
    const struct ggml_type_traits * p81 = ggml_get_type_traits(GGML_TYPE_Q8_1), * p8k = ggml_get_type_traits(GGML_TYPE_Q8_K);
    const struct ggml_type_traits_cpu * c81 = ggml_get_type_traits_cpu(GGML_TYPE_Q8_1);
    CHECK(p81->from_float_ref && !p81->to_float && c81->from_float && !c81->vec_dot && c81->vec_dot_type == GGML_TYPE_Q8_1,
          "Q8_1: from_float_ref, no to_float, vec_dot_type Q8_1, no vec_dot (as upstream)");
    CHECK(!p8k->from_float_ref && !p8k->to_float && p8k->is_quantized && p8k->blck_size == 256, "Q8_K: no public converters (as upstream)");
    CHECK(ggmlr_type_traits_own(GGML_TYPE_Q8_1)->to_float && ggmlr_type_traits_own(GGML_TYPE_Q8_K)->to_float &&
          ggmlr_type_traits_own(GGML_TYPE_Q8_K)->from_float_ref, "ggmlr's own rows keep Q8_1's and Q8_K's converters");
    printf("SIMD path: %s; AVX2 kernels %s, AVX-512 VNNI kernels %s, AVX512_BF16 %s\n", ggml_cpu_simd_name(), has_avx2() ? "run" : "skipped",
           has_wide() ? "run" : "skipped", ggml_cpu_has_avx512_bf16() ? "yes" : "no");
    return tc_finish("quant_dot");
}
