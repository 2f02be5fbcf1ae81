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
#include "bench_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* One untimed compute of g: the first compute of a graph grows the thread
 * pool's scratch block and touches its pages (and the graph's tensors') for
 * the first time; a training loop pays that once, not every step. */
static void warm_up(struct ggml_context * ctx, struct ggml_cgraph * g, int nth, bool reset) {
    if (reset) ggml_graph_reset(g);
    if (ggml_graph_compute_with_ctx(ctx, g, nth) != GGML_STATUS_SUCCESS) {
        fprintf(stderr, "compute failed: %s\n", ggml_last_error());
        exit(1);
    }
}

/* Median seconds of `reps` computes of graph g (warmed up by the caller):
 * wall clock, and CPU time of all threads / nth (*cpu; barrier waits count,
 * so it errs low). */
static double time_graph(struct ggml_context * ctx, struct ggml_cgraph * g, int nth, int reps, bool reset, double * cpu) {
    double t[32], c[32];
    for (int r = 0; r < reps; r++) {
        if (reset) ggml_graph_reset(g);
        const double t0 = bench_clock_s(CLOCK_MONOTONIC), c0 = bench_clock_s(CLOCK_PROCESS_CPUTIME_ID);
        if (ggml_graph_compute_with_ctx(ctx, g, nth) != GGML_STATUS_SUCCESS) {
            fprintf(stderr, "compute failed: %s\n", ggml_last_error());
            exit(1);
        }
        t[r] = bench_clock_s(CLOCK_MONOTONIC) - t0;
        c[r] = (bench_clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0) / nth;
    }
    *cpu = bench_median(c, reps);
    return bench_median(t, reps);
}

/* Median seconds of the backward part of `all` (a forward + backward graph
 * whose forward is `fwd`) over `reps` pairs: each pair computes `all`, then
 * `fwd`, back to back, so load on the machine falls on both; the medians of
 * the pairs' differences (*cpu: of CPU time, as in time_graph). */
static double time_backward(struct ggml_context * ctx, struct ggml_cgraph * fwd, struct ggml_cgraph * all, int nth, int reps, double * cpu) {
    double t[32], c[32];
    for (int r = 0; r < reps; r++) {
        double ca, cf;
        const double ta = time_graph(ctx, all, nth, 1, true, &ca);
        t[r] = ta - time_graph(ctx, fwd, nth, 1, false, &cf);
        c[r] = ca - cf;
    }
    *cpu = bench_median(c, reps);
    return bench_median(t, reps);
}

/* The FMA peak of nth threads running at once on path simd, by wall clock
 * (wall) and by CPU time (cpu), raised to the best of `samples` more
 * measurements: other load on the machine only lowers a sample, so the
 * highest seen in the run is the best estimate of what the cores can do. */
struct peak { double wall, cpu; };

static void measure_peak(const char * simd, int nth, int samples, struct peak * peak) {
    for (int r = 0; r < samples; r++) {
        double cpu;
        const double wall = fma_peak_gflops(simd, nth, 20 * 1000 * 1000, &cpu);
        if (wall <= 0.0) { fprintf(stderr, "could not start %d threads for the FMA peak\n", nth); exit(1); }
        if (wall > peak->wall) peak->wall = wall;
        if (cpu > peak->cpu) peak->cpu = cpu;
    }
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

/* GFLOP/s of each fused variant (forward, flash_attn_back, autodiff backward)
 * by wall clock and per CPU time, and the unfused / fused time ratios. */
struct result { struct shape s; double wall[3], cpu[3], x_unfused[3]; };

static struct result bench_shape(struct shape s, int nth, int reps) {
    const size_t mem = (size_t) 2048 * 1024 * 1024;
    struct ggml_init_params ip = {mem, NULL, false};
    struct ggml_context * ctx = ggml_init(ip);
    if (!ctx) { fprintf(stderr, "%s\n", ggml_last_error()); exit(1); }
    struct ggml_tensor * q = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, s.D, s.N, s.H, 1);
    struct ggml_tensor * k = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, s.D, s.M, s.Hkv, 1);
    struct ggml_tensor * v = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, s.D, s.M, s.Hkv, 1);
    struct ggml_tensor * mask = NULL;
    bench_fill(q); bench_fill(k); bench_fill(v);
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
    bench_fill(d);
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
    double c_ff, c_fb, c_fa, c_unused;
    warm_up(ctx, gf_fwd, nth, false);
    warm_up(ctx, gf_bwd, nth, false);
    warm_up(ctx, gf_all, nth, true);
    warm_up(ctx, gu_fwd, nth, false);
    warm_up(ctx, gu_all, nth, true);
    const double t_ff = time_graph(ctx, gf_fwd, nth, reps, false, &c_ff);
    const double t_fb = time_graph(ctx, gf_bwd, nth, reps, false, &c_fb);
    const double t_fa = time_backward(ctx, gf_fwd, gf_all, nth, reps, &c_fa);  /* autodiff backward */
    const double t_uf = time_graph(ctx, gu_fwd, nth, reps, false, &c_unused);
    const double t_ub = time_backward(ctx, gu_fwd, gu_all, nth, reps, &c_unused);  /* unfused backward */
    const struct result res = {s, {f_fwd / t_ff / 1e9, f_bwd / t_fb / 1e9, f_bwd / t_fa / 1e9},
                               {f_fwd / c_ff / 1e9, f_bwd / c_fb / 1e9, f_bwd / c_fa / 1e9},
                               {t_uf / t_ff, t_ub / t_fb, t_ub / t_fa}};
    ggml_free(ctx);
    return res;
}

static void print_result(const struct result * r, struct peak peak) {
    static const char * what[3] = {"fwd", "bwd", "autodiff bwd"};
    double f[3], fc[3];
    for (int i = 0; i < 2; i++) {
        f[i] = fraction_of_peak(r->wall[i], peak.wall, what[i]);
        fc[i] = fraction_of_peak(r->cpu[i], peak.cpu, what[i]);
    }
    /* the autodiff backward is a difference of two timings: on a loaded
     * machine it can come out implausible, which says nothing of the yardstick */
    f[2] = r->wall[2] / peak.wall <= 1.0 ? r->wall[2] / peak.wall : NAN;
    fc[2] = r->cpu[2] / peak.cpu <= 1.0 ? r->cpu[2] / peak.cpu : NAN;
    printf("D=%-3d N=%-5d M=%-5d H=%d/%d %-6s | fwd %6.1f GF/s %5.1f%% peak %4.1fx unfused | bwd %6.1f GF/s %5.1f%% peak %4.1fx unfused"
           " | autodiff bwd %6.1f GF/s %5.1f%% peak %4.1fx unfused | CPU time: %5.1f%% %5.1f%% %5.1f%%\n",
           r->s.D, r->s.N, r->s.M, r->s.H, r->s.Hkv, r->s.causal ? "causal" : "full",
           r->wall[0], 100 * f[0], r->x_unfused[0], r->wall[1], 100 * f[1], r->x_unfused[1],
           r->wall[2], 100 * f[2], r->x_unfused[2], 100 * fc[0], 100 * fc[1], 100 * fc[2]);
}

int main(int argc, char ** argv) {
    const int nth = argc > 1 ? atoi(argv[1]) : ggml_cpu_n_cores();
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    if (reps < 1) reps = 1;
    if (reps > 31) reps = 31;
    const int n_max = argc > 3 ? atoi(argv[3]) : 1 << 30;
    const char * simd = ggml_cpu_simd_name();
    /* H = 8 heads, N = M in {1024, 2048}, D in {64, 128}, dense and causal */
    const struct shape shapes[] = {
        {64, 1024, 1024, 8, 8, false},  {64, 1024, 1024, 8, 8, true},
        {128, 1024, 1024, 8, 8, false}, {128, 1024, 1024, 8, 8, true},
        {64, 2048, 2048, 8, 8, false},  {64, 2048, 2048, 8, 8, true},
        {128, 2048, 2048, 8, 8, false}, {128, 2048, 2048, 8, 8, true},
    };
    enum { n_shapes = sizeof shapes / sizeof shapes[0] };
    struct result results[n_shapes];
    int n_done = 0;
    struct peak peak = {0, 0};
    measure_peak(simd, nth, 5, &peak);
    for (int i = 0; i < n_shapes; i++) {
        if (shapes[i].N > n_max) continue;
        fprintf(stderr, "D=%d N=%d %s ...\n", shapes[i].D, shapes[i].N, shapes[i].causal ? "causal" : "full");
        results[n_done++] = bench_shape(shapes[i], nth, reps);
        measure_peak(simd, nth, 3, &peak);
    }
    printf("SIMD path %s, %d thread(s); FMA peak for %d thread(s) at once: %.1f GFLOP/s (%.1f per thread),"
           " per CPU-second x %d: %.1f (the best of %d measurements through the run)\n",
           simd, nth, nth, peak.wall, peak.wall / nth, nth, peak.cpu, 5 + 3 * n_done);
    printf("medians of %d runs; 'x unfused' = time of mul_mat+soft_max+mul_mat (autodiff for bwd) / fused time\n", reps);
    printf("bwd = ggml_flash_attn_back (recomputes the forward); autodiff bwd = the backward autodiff builds (reuses it)\n");
    printf("CPU time: fwd, bwd, autodiff bwd as %% of peak, both per second of CPU time (robust to other load; barrier waits count)\n");
    for (int i = 0; i < n_done; i++) print_result(&results[i], peak);
    return 0;
}
