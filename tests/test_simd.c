/* test_simd.c -- the run-time SIMD choice and the vector dot product behind
 * mul_mat, for every length 1..70 (so every vector tail of the 16-wide and
 * 64-wide loops), with aligned and unaligned rows and gathered (transposed)
 * rows. ctest runs it again with GGMLR_SIMD=scalar and GGMLR_SIMD=avx2.
 *
 * Bound per output: |c - ref| <= K 2^-23 sum_k |a_k b_k|, twice the classical
 * float summation bound gamma_K = K u / (1 - K u), u = 2^-24. With |a|, |b| in
 * [0.5, 1] every product is >= 0.25, far above the bound (<= 70^2 2^-23), so
 * a dropped, repeated or misplaced element always fails. */
#include "common/test_common.h"

#include <stdlib.h>
#include <string.h>

static float rand_val(void) { const float v = (float) tc_uniform(0.5, 1); return (tc_next() & 1) ? v : -v; }

static void test_name(void) {
    const char * name = ggml_cpu_simd_name();
    CHECK(name && (!strcmp(name, "avx512") || !strcmp(name, "avx2") || !strcmp(name, "scalar")), "simd name '%s'", name ? name : "(null)");
    const char * want = getenv("GGMLR_SIMD");
    if (want && !strcmp(want, "scalar")) CHECK(!strcmp(name, "scalar"), "GGMLR_SIMD=scalar selects scalar (got %s)", name);
    if (want && !strcmp(want, "avx2")) CHECK(!strcmp(name, "avx2") || !strcmp(name, "scalar"), "GGMLR_SIMD=avx2 never selects avx512 (got %s)", name);
    printf("SIMD path: %s\n", name);
}

/* c = a^T b for a [K, M], b [K, N], b's rows starting `shift` floats into a
 * larger tensor (unaligned for odd shifts); a transposed when `ta`. */
static void check_len(int64_t K, int shift, bool ta) {
    enum { M = 5, N = 3 };
    struct ggml_context * ctx = tc_ctx(1);
    struct ggml_tensor * abase = ta ? ggml_new_tensor_2d(ctx, GGML_TYPE_F32, M, K) : ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, M);
    struct ggml_tensor * bbase = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, K * N + shift);
    for (int64_t i = 0; i < ggml_nelements(abase); i++) ((float *) abase->data)[i] = rand_val();
    for (int64_t i = 0; i < ggml_nelements(bbase); i++) ((float *) bbase->data)[i] = rand_val();
    struct ggml_tensor * a = ta ? ggml_transpose(ctx, abase) : abase;
    struct ggml_tensor * b = ggml_view_2d(ctx, bbase, K, N, (size_t) K * sizeof(float), (size_t) shift * sizeof(float));
    struct ggml_tensor * c = ggml_mul_mat(ctx, a, b);
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 16, false);
    ggml_build_forward_expand(g, c);
    tc_poison(c);
    if (!CHECK(ggml_graph_compute_with_ctx(ctx, g, 2) == GGML_STATUS_SUCCESS, "compute K=%lld: %s", (long long) K, ggml_last_error())) {
        ggml_free(ctx);
        return;
    }
    const float * A = abase->data, * B = (const float *) bbase->data + shift;
    int bad = 0;
    for (int j = 0; j < N; j++)
        for (int i = 0; i < M; i++) {
            double ref = 0, mag = 0;
            for (int64_t k = 0; k < K; k++) {
                const double x = ta ? A[k * M + i] : A[i * K + k];
                ref += x * B[j * K + k];
                mag += fabs(x * B[j * K + k]);
            }
            const double got = ggml_get_f32_nd(c, i, j, 0, 0);
            if (!(fabs(got - ref) <= (double) K * 0x1p-23 * mag)) {
                if (bad < 3) fprintf(stderr, "  K=%lld shift=%d ta=%d c[%d,%d] = %.9g, want %.9g\n", (long long) K, shift, ta, i, j, got, ref);
                bad++;
            }
        }
    CHECK(bad == 0, "mul_mat K=%lld (b shift %d, a %s): %d of %d outputs off", (long long) K, shift, ta ? "transposed" : "contiguous", bad, M * N);
    ggml_free(ctx);
}

int main(void) {
    tc_seed(70);
    test_name();
    for (int64_t K = 1; K <= 70; K++) {
        check_len(K, 0, false);
        check_len(K, 1, false);
        check_len(K, 3, true);
    }
    return tc_finish("simd");
}
