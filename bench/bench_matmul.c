/* bench_matmul.c -- the matrix products of a transformer's training step
 * (forward mul_mat and the two gradient products, out_prod) against the
 * machine's measured FMA peak, in one run.
 *
 * A linear layer y = mul_mat(W, x), W [K, M], x [K, N], g = dL/dy [M, N]:
 *   forward  y  = mul_mat(W, x)         2*K*M*N flops
 *   weights  dW = out_prod(x, g)        [K, M]
 *   inputs   dx = out_prod(W, g^T)      [K, N], g^T a transposed view (no copy)
 * The peak is measured before each shape in runs as short as the products'
 * (21 samples each); the yardstick is the best sample of the whole run, as
 * load from other work only lowers a sample. Figures are medians and bests of
 * `reps` computes (on a loaded machine the best is the figure to read: a run
 * that was not preempted). A figure above the yardstick means the yardstick
 * is wrong: the program says so and exits with status 2.
 *
 * With precision bf16 the products are at GGML_PREC_BF16 and the yardstick
 * is the peak of the path ggml_cpu_bf16_name() names (VDPBF16PS on
 * "avx512_bf16"; the FMA peak when it is "f32").
 *
 *   bench_matmul [threads] [reps] [f32|bf16] [baby|shakespeare]
 *   (defaults: all cores, 9, f32, baby) */
#include "ggml.h"
#include "ggml-cpu.h"
#include "fma_peak.h"
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* FMA peak of nth threads: raises *best to the best of 21 short runs (about
 * a millisecond each, like the products, so both see the same time slicing). */
static void measure_peak(const char * simd, int nth, double * best) {
    for (int r = 0; r < 21; r++) {
        const double g = fma_peak_gflops(simd, nth, 500 * 1000, NULL);
        if (g <= 0.0) { fprintf(stderr, "could not start %d threads for the FMA peak\n", nth); exit(1); }
        if (g > *best) *best = g;
    }
}

struct layer { const char * name; int64_t K, M, N; };

int main(int argc, char ** argv) {
    const int nth = argc > 1 ? atoi(argv[1]) : ggml_cpu_n_cores();
    int reps = argc > 2 ? atoi(argv[2]) : 9;
    const char * prec_name = argc > 3 ? argv[3] : "f32", * config = argc > 4 ? argv[4] : "baby";
    const bool bf16 = strcmp(prec_name, "bf16") == 0, shakespeare = strcmp(config, "shakespeare") == 0;
    if (nth < 1 || reps < 1 || (!bf16 && strcmp(prec_name, "f32") != 0) || (!shakespeare && strcmp(config, "baby") != 0)) {
        fprintf(stderr, "usage: bench_matmul [threads >= 1] [reps >= 1] [f32|bf16] [baby|shakespeare]\n");
        return 1;
    }
    if (reps > MAX_REPS) reps = MAX_REPS;
    const char * simd = bf16 && strcmp(ggml_cpu_bf16_name(), "f32") != 0 ? ggml_cpu_bf16_name() : ggml_cpu_simd_name();
    /* the baby GPT's layers: C = 128, 4C = 512, T*B = 64*12 = 768 tokens, vocabulary 82;
     * nanoGPT's Shakespeare-char: C = 384, 4C = 1536, T*B = 256*8 = 2048 tokens, vocabulary 65 */
    static const struct layer baby[] = {
        {"attn.qkv  [128x384]  x [128x768]", 128, 384, 768},
        {"mlp.fc    [128x512]  x [128x768]", 128, 512, 768},
        {"mlp.proj  [512x128]  x [512x768]", 512, 128, 768},
        {"lm_head   [128x82]   x [128x768]", 128, 82, 768},
    }, shakes[] = {
        {"attn.qkv  [384x1152] x [384x2048]", 384, 1152, 2048},
        {"mlp.fc    [384x1536] x [384x2048]", 384, 1536, 2048},
        {"mlp.proj  [1536x384] x [1536x2048]", 1536, 384, 2048},
        {"lm_head   [384x65]   x [384x2048]", 384, 65, 2048},
    };
    enum { N_LAYERS = sizeof baby / sizeof baby[0] };
    const struct layer * layers = shakespeare ? shakes : baby;
    double med[N_LAYERS][3], best[N_LAYERS][3], peak = 0.0;
    srand(1);
    for (int l = 0; l < N_LAYERS; l++) {
        const struct layer s = layers[l];
        struct ggml_init_params ip = {(size_t) 256 << 20, NULL, false};
        struct ggml_context * ctx = ggml_init(ip);
        if (!ctx) { fprintf(stderr, "%s\n", ggml_last_error()); return 1; }
        struct ggml_tensor * w = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, s.K, s.M);
        struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, s.K, s.N);
        struct ggml_tensor * g = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, s.M, s.N);
        bench_fill(w); bench_fill(x); bench_fill(g);
        struct ggml_tensor * nodes[3] = {ggml_mul_mat(ctx, w, x), ggml_out_prod(ctx, x, g), ggml_out_prod(ctx, w, ggml_transpose(ctx, g))};
        for (int i = 0; i < 3; i++) ggml_mul_mat_set_prec(nodes[i], bf16 ? GGML_PREC_BF16 : GGML_PREC_DEFAULT);
        const double flops = 2.0 * (double) s.K * (double) s.M * (double) s.N;
        measure_peak(simd, nth, &peak);
        for (int i = 0; i < 3; i++) time_node(ctx, nodes[i], flops, nth, reps, &med[l][i], &best[l][i]);
        ggml_free(ctx);
    }
    measure_peak(simd, nth, &peak);
    printf("%s, products %s: path %s, %d thread(s); its peak %.1f GFLOP/s (the best of %d measurements through the run)\n", config,
           prec_name, simd, nth, peak, 21 * (N_LAYERS + 1));
    printf("GFLOP/s median (best) of %d runs, %% of that peak\n", reps);
    printf("%-34s | %-26s | %-26s | %-26s\n", "layer W x", "forward mul_mat(W, x)", "dW = out_prod(x, g)", "dx = out_prod(W, g^T)");
    for (int l = 0; l < N_LAYERS; l++) {
        printf("%-34s", layers[l].name);
        for (int i = 0; i < 3; i++) {
            if (best[l][i] > peak) {
                fprintf(stderr, "\n%s: %.1f GFLOP/s is above the measured peak %.1f: the yardstick is wrong\n", layers[l].name, best[l][i], peak);
                return 2;
            }
            printf(" | %6.1f (%6.1f) %4.0f%% (%3.0f%%)", med[l][i], best[l][i], 100 * med[l][i] / peak, 100 * best[l][i] / peak);
        }
        printf("\n");
    }
    return 0;
}
