/* bench_matmul.c -- the matrix products of a transformer's training step
 * (forward mul_mat and the two gradient products, out_prod) against the
 * machine's measured FMA peak, in one run.
 *
 * A linear layer y = mul_mat(W, x), W [K, M], x [K, N], g = dL/dy [M, N]:
 *   forward  y  = mul_mat(W, x)         2*K*M*N flops
 *   weights  dW = out_prod(x, g)        [K, M]
 *   inputs   dx = out_prod(W, g^T)      [K, N], g^T a transposed view (no copy)
 * The peak is re-measured before each shape in runs as short as the
 * products', so load on a shared machine moves both sides of the ratio;
 * figures are medians and bests of `reps` (on a loaded machine the best is
 * the figure to read: a run that was not preempted).
 *
 *   bench_matmul [threads] [reps]   (defaults: all cores, 9) */
#include "ggml.h"
#include "ggml-cpu.h"
#include "fma_peak.h"
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_REPS 64

/* GFLOP/s of one node: median and best of reps computes (after a warm-up). */
static void time_node(struct ggml_context * ctx, struct ggml_tensor * node, double flops, int nth, int reps, double * med, double * best) {
    struct ggml_cgraph * g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, node);
    double t[MAX_REPS];
    for (int r = -1; r < reps; r++) {
        const double t0 = bench_clock_s(CLOCK_MONOTONIC);
        if (ggml_graph_compute_with_ctx(ctx, g, nth) != GGML_STATUS_SUCCESS) {
            fprintf(stderr, "compute failed: %s\n", ggml_last_error());
            exit(1);
        }
        if (r >= 0) t[r] = bench_clock_s(CLOCK_MONOTONIC) - t0;
    }
    const double m = bench_median(t, reps);
    *med = flops / m / 1e9;
    *best = flops / t[0] / 1e9;
}

/* FMA peak of nth threads: median and best of 21 short runs (about a
 * millisecond each, like the products, so both see the same time slicing). */
static void measure_peak(const char * simd, int nth, double * med, double * best) {
    double g[21];
    for (int r = 0; r < 21; r++) {
        g[r] = fma_peak_gflops(simd, nth, 500 * 1000, NULL);
        if (g[r] <= 0.0) { fprintf(stderr, "could not start %d threads for the FMA peak\n", nth); exit(1); }
    }
    *med = bench_median(g, 21);
    *best = g[20];
}

struct layer { const char * name; int64_t K, M, N; };

int main(int argc, char ** argv) {
    const int nth = argc > 1 ? atoi(argv[1]) : ggml_cpu_n_cores();
    int reps = argc > 2 ? atoi(argv[2]) : 9;
    if (nth < 1 || reps < 1) { fprintf(stderr, "usage: bench_matmul [threads >= 1] [reps >= 1]\n"); return 1; }
    if (reps > MAX_REPS) reps = MAX_REPS;
    const char * simd = ggml_cpu_simd_name();
    /* the baby GPT's layers: C = 128, 4C = 512, T*B = 64*12 = 768 tokens, vocabulary 82 */
    static const struct layer layers[] = {
        {"attn.qkv  [128x384]  x [128x768]", 128, 384, 768},
        {"mlp.fc    [128x512]  x [128x768]", 128, 512, 768},
        {"mlp.proj  [512x128]  x [512x768]", 512, 128, 768},
        {"lm_head   [128x82]   x [128x768]", 128, 82, 768},
    };
    printf("SIMD path %s, %d thread(s); GFLOP/s median (best) of %d runs; %% of the FMA peak measured just before each layer\n", simd, nth, reps);
    printf("%-34s | %-26s | %-26s | %-26s\n", "layer W x", "forward mul_mat(W, x)", "dW = out_prod(x, g)", "dx = out_prod(W, g^T)");
    srand(1);
    for (size_t l = 0; l < sizeof layers / sizeof layers[0]; l++) {
        const struct layer s = layers[l];
        struct ggml_init_params ip = {(size_t) 64 << 20, NULL, false};
        struct ggml_context * ctx = ggml_init(ip);
        if (!ctx) { fprintf(stderr, "%s\n", ggml_last_error()); return 1; }
        struct ggml_tensor * w = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, s.K, s.M);
        struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, s.K, s.N);
        struct ggml_tensor * g = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, s.M, s.N);
        bench_fill(w); bench_fill(x); bench_fill(g);
        struct ggml_tensor * nodes[3] = {ggml_mul_mat(ctx, w, x), ggml_out_prod(ctx, x, g), ggml_out_prod(ctx, w, ggml_transpose(ctx, g))};
        const double flops = 2.0 * (double) s.K * (double) s.M * (double) s.N;
        double peak_med, peak_best;
        measure_peak(simd, nth, &peak_med, &peak_best);
        printf("%-34s", s.name);
        for (int i = 0; i < 3; i++) {
            double med, best;
            time_node(ctx, nodes[i], flops, nth, reps, &med, &best);
            printf(" | %6.1f (%6.1f) %4.0f%% (%3.0f%%)", med, best, 100 * med / peak_med, 100 * best / peak_best);
        }
        printf("   peak %.1f (%.1f)\n", peak_med, peak_best);
        ggml_free(ctx);
    }
    return 0;
}
