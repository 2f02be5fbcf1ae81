/* bench_attention.c -- fused attention forward and backward against the
 * unfused path (mul_mat + soft_max + mul_mat, differentiated by autodiff)
 * and against the machine's measured FMA peak, all in one run.
 *
 * Flops are counted the way the field does: forward 4*N*M*D*H*B, backward
 * 10*N*M*D*H*B (with D = DK = DV). Each figure is the median of several runs.
 *
 *   bench_attention [threads] [reps] [n_max]  (defaults: all cores, 5, every shape)
 * n_max skips the shapes with more than n_max queries. */
#include "ggml.h"
#include "ggml-cpu.h"
#include "fma_peak.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

static int cmp_double(const void * a, const void * b) {
    const double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

static double median(double * v, int n) {
    qsort(v, (size_t) n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void fill(struct ggml_tensor * t) {
    float * d = t->data;
    for (int64_t i = 0; i < ggml_nelements(t); i++) d[i] = (float) (rand() % 2001) / 1000.0f - 1.0f;
}

/* Median seconds of `reps` computes of graph g. */
static double time_graph(struct ggml_context * ctx, struct ggml_cgraph * g, int nth, int reps, bool reset) {
    double t[32];
    for (int r = 0; r < reps; r++) {
        if (reset) ggml_graph_reset(g);
        const double t0 = now();
        if (ggml_graph_compute_with_ctx(ctx, g, nth) != GGML_STATUS_SUCCESS) {
            fprintf(stderr, "compute failed: %s\n", ggml_last_error());
            exit(1);
        }
        t[r] = now() - t0;
    }
    return median(t, reps);
}

/* Peak GFLOP/s of nth threads running FMAs at once on path simd: median of 5. */
static double measure_peak(const char * simd, int nth) {
    double g[5];
    for (int r = 0; r < 5; r++) {
        g[r] = fma_peak_gflops(simd, nth, 20 * 1000 * 1000);
        if (g[r] <= 0.0) { fprintf(stderr, "could not start %d threads for the FMA peak\n", nth); exit(1); }
    }
    return median(g, 5);
}

/* A figure above the measured peak means the yardstick is wrong, not the kernel fast. */
static double fraction_of_peak(double gflops, double peak, const char * what) {
    const double f = gflops / peak;
    if (f > 1.0) {
        fprintf(stderr, "%s: %.1f GFLOP/s is %.0f%% of the measured FMA peak %.1f GFLOP/s: the yardstick (fma_peak.h) is broken\n",
                what, gflops, 100 * f, peak);
        exit(2);
    }
    return f;
}

struct shape { int D, N, M, H, Hkv; bool causal; };

static void bench_shape(struct shape s, int nth, int reps, double peak) {
    const size_t mem = (size_t) 2048 * 1024 * 1024;
    struct ggml_init_params ip = {mem, NULL, false};
    struct ggml_context * ctx = ggml_init(ip);
    if (!ctx) { fprintf(stderr, "%s\n", ggml_last_error()); exit(1); }
    struct ggml_tensor * q = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, s.D, s.N, s.H, 1);
    struct ggml_tensor * k = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, s.D, s.M, s.Hkv, 1);
    struct ggml_tensor * v = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, s.D, s.M, s.Hkv, 1);
    struct ggml_tensor * mask = NULL;
    fill(q); fill(k); fill(v);
    if (s.causal) {
        mask = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, s.M, s.N);
        for (int n = 0; n < s.N; n++)
            for (int m = 0; m < s.M; m++)
                ((ggml_fp16_t *) mask->data)[m + (int64_t) s.M * n] = ggml_fp32_to_fp16(m <= n + (s.M - s.N) ? 0.0f : -INFINITY);
    }
    ggml_set_param(q); ggml_set_param(k); ggml_set_param(v);
    const float scale = 1.0f / sqrtf((float) s.D);

    /* fused */
    struct ggml_tensor * fused = ggml_flash_attn_ext(ctx, q, k, v, mask, scale, 0.0f, 0.0f);
    struct ggml_tensor * lf = ggml_sum(ctx, fused);
    ggml_set_loss(lf);
    struct ggml_cgraph * gf_fwd = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf_fwd, fused);
    struct ggml_tensor * d = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, s.D, s.H, s.N, 1);
    fill(d);
    struct ggml_tensor * fab = ggml_flash_attn_back(ctx, q, k, v, mask, d, scale);
    struct ggml_cgraph * gf_bwd = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf_bwd, fab);
    /* fused through autodiff: the backward reuses the forward's output and row statistics */
    struct ggml_cgraph * gf_all = ggml_new_graph_custom(ctx, 256, true);
    ggml_build_forward_expand(gf_all, lf);
    if (ggml_build_backward_expand(ctx, gf_all, NULL) != GGML_STATUS_SUCCESS) { fprintf(stderr, "%s\n", ggml_last_error()); exit(1); }

    /* unfused: S = K^T Q, P = softmax, O = V P, differentiated by autodiff */
    struct ggml_tensor * S = ggml_mul_mat(ctx, k, q);                          /* [M, N, H] */
    struct ggml_tensor * P = ggml_soft_max_ext(ctx, S, mask, scale, 0.0f);
    struct ggml_tensor * O = ggml_mul_mat(ctx, ggml_cont(ctx, ggml_transpose(ctx, v)), P); /* [D, N, H] */
    struct ggml_tensor * lu = ggml_sum(ctx, ggml_cont(ctx, ggml_permute(ctx, O, 0, 2, 1, 3)));
    ggml_set_loss(lu);
    struct ggml_cgraph * gu_fwd = ggml_new_graph(ctx);
    ggml_build_forward_expand(gu_fwd, lu);
    struct ggml_cgraph * gu_all = ggml_new_graph_custom(ctx, 512, true);
    ggml_build_forward_expand(gu_all, lu);
    if (ggml_build_backward_expand(ctx, gu_all, NULL) != GGML_STATUS_SUCCESS) { fprintf(stderr, "%s\n", ggml_last_error()); exit(1); }

    const double causal = s.causal ? 0.5 : 1.0;
    const double f_fwd = 4.0 * s.N * s.M * s.D * s.H * causal, f_bwd = 10.0 * s.N * s.M * s.D * s.H * causal;
    const double t_ff = time_graph(ctx, gf_fwd, nth, reps, false);
    const double t_fb = time_graph(ctx, gf_bwd, nth, reps, false);
    const double t_fa = time_graph(ctx, gf_all, nth, reps, true) - t_ff;  /* autodiff backward */
    const double t_uf = time_graph(ctx, gu_fwd, nth, reps, false);
    const double t_ua = time_graph(ctx, gu_all, nth, reps, true);
    const double t_ub = t_ua - t_uf;  /* unfused backward = (forward + backward) - forward */
    const double g_ff = f_fwd / t_ff / 1e9, g_fb = f_bwd / t_fb / 1e9, g_fa = f_bwd / t_fa / 1e9;
    const double p_ff = fraction_of_peak(g_ff, peak, "fwd"), p_fb = fraction_of_peak(g_fb, peak, "bwd"),
                 p_fa = fraction_of_peak(g_fa, peak, "autodiff bwd");
    printf("D=%-3d N=%-5d M=%-5d H=%d/%d %-6s | fwd %6.1f GF/s %5.1f%% peak %4.1fx unfused | bwd %6.1f GF/s %5.1f%% peak %4.1fx unfused"
           " | autodiff bwd %6.1f GF/s %5.1f%% peak %4.1fx unfused\n",
           s.D, s.N, s.M, s.H, s.Hkv, s.causal ? "causal" : "full",
           g_ff, 100 * p_ff, t_uf / t_ff, g_fb, 100 * p_fb, t_ub / t_fb, g_fa, 100 * p_fa, t_ub / t_fa);
    fflush(stdout);
    ggml_free(ctx);
}

int main(int argc, char ** argv) {
    const int nth = argc > 1 ? atoi(argv[1]) : ggml_cpu_n_cores();
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    if (reps < 1) reps = 1;
    if (reps > 31) reps = 31;
    const int n_max = argc > 3 ? atoi(argv[3]) : 1 << 30;
    const char * simd = ggml_cpu_simd_name();
    const double peak = measure_peak(simd, nth);
    printf("SIMD path %s, %d thread(s); measured FMA peak %.1f GFLOP/s for %d thread(s) at once (%.1f per thread)\n",
           simd, nth, peak, nth, peak / nth);
    printf("medians of %d runs; 'x unfused' = time of mul_mat+soft_max+mul_mat (autodiff for bwd) / fused time\n", reps);
    printf("bwd = ggml_flash_attn_back (recomputes the forward); autodiff bwd = the backward autodiff builds (reuses it)\n");
    /* H = 8 heads, N = M in {1024, 2048}, D in {64, 128}, dense and causal */
    const struct shape shapes[] = {
        {64, 1024, 1024, 8, 8, false},  {64, 1024, 1024, 8, 8, true},
        {128, 1024, 1024, 8, 8, false}, {128, 1024, 1024, 8, 8, true},
        {64, 2048, 2048, 8, 8, false},  {64, 2048, 2048, 8, 8, true},
        {128, 2048, 2048, 8, 8, false}, {128, 2048, 2048, 8, 8, true},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        if (shapes[i].N <= n_max) bench_shape(shapes[i], nth, reps, peak);
    return 0;
}
