/* bench_attention.c -- fused attention forward and backward against the
 * unfused path (mul_mat + soft_max + mul_mat, differentiated by autodiff)
 * and against the machine's measured FMA peak, all in one run.
 *
 * Flops are counted the way the field does: forward 4*N*M*D*H*B, backward
 * 10*N*M*D*H*B (with D = DK = DV).
 *
 *   bench_attention [threads] [rounds] [n_max] [f32|bf16]  (defaults: all cores, 5, every shape, f32)
 * n_max skips the shapes with more than n_max queries. bf16: the attention
 * nodes at GGML_PREC_BF16 (bf16 operands, FP32 sums; docs/precision.md), the
 * yardstick the peak of the bf16 path (VDPBF16PS) where the CPU has one. The fused graphs of
 * every shape are timed once per round, the rounds in turn; each figure is
 * the median over the rounds. */
#include "ggml.h"
#include "ggml-cpu.h"
#include "fma_peak.h"
#include "bench_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_ROUNDS 31

static void compute_or_exit(struct ggml_context * ctx, struct ggml_cgraph * g, int nth) {
    if (ggml_graph_compute_with_ctx(ctx, g, nth) != GGML_STATUS_SUCCESS) {
        fprintf(stderr, "compute failed: %s\n", ggml_last_error());
        exit(1);
    }
}

/* One untimed compute of g: the first compute of a graph grows the thread
 * pool's scratch block and touches its pages (and the graph's tensors') for
 * the first time; a training loop pays that once, not every step. */
static void warm_up(struct ggml_context * ctx, struct ggml_cgraph * g, int nth, bool reset) {
    if (reset) ggml_graph_reset(g);
    compute_or_exit(ctx, g, nth);
}

/* Median seconds of `reps` computes of graph g (warmed up by the caller):
 * wall clock, and CPU time of all threads / nth (*cpu; barrier waits count,
 * so it errs low). */
static double time_graph(struct ggml_context * ctx, struct ggml_cgraph * g, int nth, int reps, bool reset, double * cpu) {
    double t[MAX_ROUNDS], c[MAX_ROUNDS];
    for (int r = 0; r < reps; r++) {
        if (reset) ggml_graph_reset(g);
        const double t0 = bench_clock_s(CLOCK_MONOTONIC), c0 = bench_clock_s(CLOCK_PROCESS_CPUTIME_ID);
        compute_or_exit(ctx, g, nth);
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
    double t[MAX_ROUNDS], c[MAX_ROUNDS];
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

/* q, k, v (parameters) and the causal mask (NULL for dense) of shape s in ctx. */
struct inputs { struct ggml_tensor * q, * k, * v, * mask; };

static struct ggml_context * new_ctx(size_t mb) {
    struct ggml_init_params ip = {mb * 1024 * 1024, NULL, false};
    struct ggml_context * ctx = ggml_init(ip);
    if (!ctx) { fprintf(stderr, "%s\n", ggml_last_error()); exit(1); }
    return ctx;
}

static struct inputs make_inputs(struct ggml_context * ctx, struct shape s) {
    struct inputs in = {ggml_new_tensor_4d(ctx, GGML_TYPE_F32, s.D, s.N, s.H, 1), ggml_new_tensor_4d(ctx, GGML_TYPE_F32, s.D, s.M, s.Hkv, 1),
                        ggml_new_tensor_4d(ctx, GGML_TYPE_F32, s.D, s.M, s.Hkv, 1), NULL};
    bench_fill(in.q); bench_fill(in.k); bench_fill(in.v);
    if (s.causal) {
        in.mask = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, s.M, s.N);
        for (int n = 0; n < s.N; n++)
            for (int m = 0; m < s.M; m++)
                ((ggml_fp16_t *) in.mask->data)[m + (int64_t) s.M * n] = ggml_fp32_to_fp16(m <= n + (s.M - s.N) ? 0.0f : -INFINITY);
    }
    ggml_set_param(in.q); ggml_set_param(in.k); ggml_set_param(in.v);
    return in;
}

static void build_backward(struct ggml_context * ctx, struct ggml_cgraph * g) {
    if (ggml_build_backward_expand(ctx, g, NULL) != GGML_STATUS_SUCCESS) { fprintf(stderr, "%s\n", ggml_last_error()); exit(1); }
}

/* The fused graphs of one shape, kept for the whole run: the forward, the
 * standalone ggml_flash_attn_back, and forward + backward as autodiff builds
 * it (the backward reuses the forward's output and row statistics); and each
 * graph's timings, one per round. */
struct fused {
    struct shape s;
    struct ggml_context * ctx;
    struct ggml_cgraph * fwd, * bwd, * all;
    double t[3][MAX_ROUNDS], c[3][MAX_ROUNDS];  /* wall and CPU seconds: forward, flash_attn_back, autodiff backward */
};

static void build_fused(struct fused * f, struct shape s, int nth, enum ggml_prec prec) {
    f->s = s;
    f->ctx = new_ctx(512);
    const struct inputs in = make_inputs(f->ctx, s);
    struct ggml_tensor * out = ggml_flash_attn_ext(f->ctx, in.q, in.k, in.v, in.mask, 1.0f / sqrtf((float) s.D), 0.0f, 0.0f);
    ggml_flash_attn_ext_set_prec(out, prec);
    f->fwd = ggml_new_graph(f->ctx);
    ggml_build_forward_expand(f->fwd, out);
    struct ggml_tensor * d = ggml_new_tensor_4d(f->ctx, GGML_TYPE_F32, s.D, s.H, s.N, 1);
    bench_fill(d);
    f->bwd = ggml_new_graph(f->ctx);
    struct ggml_tensor * back = ggml_flash_attn_back(f->ctx, in.q, in.k, in.v, in.mask, d, 1.0f / sqrtf((float) s.D));
    ggml_flash_attn_ext_set_prec(back, prec);
    ggml_build_forward_expand(f->bwd, back);
    struct ggml_tensor * loss = ggml_sum(f->ctx, out);
    ggml_set_loss(loss);
    f->all = ggml_new_graph_custom(f->ctx, 256, true);
    ggml_build_forward_expand(f->all, loss);
    build_backward(f->ctx, f->all);
    warm_up(f->ctx, f->fwd, nth, false);
    warm_up(f->ctx, f->bwd, nth, false);
    warm_up(f->ctx, f->all, nth, true);
}

/* Round r of a shape: each fused graph timed once, right after an untimed
 * compute of it, so that it runs with its operands in cache as in back-to-back
 * repetitions (the shapes timed since then have evicted them). */
static void time_fused_round(struct fused * f, int nth, int r) {
    warm_up(f->ctx, f->fwd, nth, false);
    f->t[0][r] = time_graph(f->ctx, f->fwd, nth, 1, false, &f->c[0][r]);
    warm_up(f->ctx, f->bwd, nth, false);
    f->t[1][r] = time_graph(f->ctx, f->bwd, nth, 1, false, &f->c[1][r]);
    warm_up(f->ctx, f->all, nth, true);
    f->t[2][r] = time_backward(f->ctx, f->fwd, f->all, nth, 1, &f->c[2][r]);
}

/* The unfused baseline of a shape, S = K^T Q, P = softmax, O = V P (products
 * at prec) and its autodiff backward: median seconds of reps forward computes (*fwd) and of
 * reps backward differences (*bwd), in a context of its own that is freed
 * after (it holds N x M matrices). */
static void time_unfused(struct shape s, int nth, int reps, enum ggml_prec prec, double * fwd, double * bwd) {
    struct ggml_context * ctx = new_ctx(2048);
    const struct inputs in = make_inputs(ctx, s);
    struct ggml_tensor * S = ggml_mul_mat(ctx, in.k, in.q);                          /* [M, N, H] */
    ggml_mul_mat_set_prec(S, prec);
    struct ggml_tensor * P = ggml_soft_max_ext(ctx, S, in.mask, 1.0f / sqrtf((float) s.D), 0.0f);
    struct ggml_tensor * O = ggml_mul_mat(ctx, ggml_cont(ctx, ggml_transpose(ctx, in.v)), P); /* [D, N, H] */
    ggml_mul_mat_set_prec(O, prec);
    struct ggml_tensor * loss = ggml_sum(ctx, ggml_cont(ctx, ggml_permute(ctx, O, 0, 2, 1, 3)));
    ggml_set_loss(loss);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, loss);
    struct ggml_cgraph * ga = ggml_new_graph_custom(ctx, 512, true);
    ggml_build_forward_expand(ga, loss);
    build_backward(ctx, ga);
    warm_up(ctx, gf, nth, false);
    warm_up(ctx, ga, nth, true);
    double unused;
    *fwd = time_graph(ctx, gf, nth, reps, false, &unused);
    *bwd = time_backward(ctx, gf, ga, nth, reps, &unused);
    ggml_free(ctx);
}

/* GFLOP/s of each fused variant (forward, flash_attn_back, autodiff backward)
 * by wall clock and per CPU time (medians over the rounds), and the unfused /
 * fused time ratios. */
struct result { struct shape s; double wall[3], cpu[3], x_unfused[3]; };

static struct result result_of(struct fused * f, int rounds, double t_uf, double t_ub) {
    const struct shape s = f->s;
    const double causal = s.causal ? 0.5 : 1.0;
    const double flops[3] = {4.0 * s.N * s.M * s.D * s.H * causal, 10.0 * s.N * s.M * s.D * s.H * causal, 10.0 * s.N * s.M * s.D * s.H * causal};
    const double unfused[3] = {t_uf, t_ub, t_ub};
    struct result res = {s, {0}, {0}, {0}};
    for (int i = 0; i < 3; i++) {
        const double t = bench_median(f->t[i], rounds), c = bench_median(f->c[i], rounds);
        res.wall[i] = flops[i] / t / 1e9;
        res.cpu[i] = flops[i] / c / 1e9;
        res.x_unfused[i] = unfused[i] / t;
    }
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
    int rounds = argc > 2 ? atoi(argv[2]) : 5;
    if (rounds < 1) rounds = 1;
    if (rounds > MAX_ROUNDS) rounds = MAX_ROUNDS;
    const int n_max = argc > 3 ? atoi(argv[3]) : 1 << 30;
    const bool bf16 = argc > 4 && strcmp(argv[4], "bf16") == 0;
    if (argc > 4 && !bf16 && strcmp(argv[4], "f32") != 0) {
        fprintf(stderr, "usage: bench_attention [threads] [rounds] [n_max] [f32|bf16]\n");
        return 2;
    }
    /* the yardstick: the peak of the path the products run on */
    const char * simd = bf16 && strcmp(ggml_cpu_bf16_name(), "f32") != 0 ? ggml_cpu_bf16_name() : ggml_cpu_simd_name();
    /* H = 8 heads, N = M in {1024, 2048}, D in {64, 128}, dense and causal */
    const struct shape shapes[] = {
        {64, 1024, 1024, 8, 8, false},  {64, 1024, 1024, 8, 8, true},
        {128, 1024, 1024, 8, 8, false}, {128, 1024, 1024, 8, 8, true},
        {64, 2048, 2048, 8, 8, false},  {64, 2048, 2048, 8, 8, true},
        {128, 2048, 2048, 8, 8, false}, {128, 2048, 2048, 8, 8, true},
    };
    enum { n_shapes = sizeof shapes / sizeof shapes[0] };
    static struct fused fused[n_shapes];
    int n_done = 0;
    for (int i = 0; i < n_shapes; i++)
        if (shapes[i].N <= n_max) build_fused(&fused[n_done++], shapes[i], nth, bf16 ? GGML_PREC_BF16 : GGML_PREC_DEFAULT);
    struct peak peak = {0, 0};
    measure_peak(simd, nth, 5, &peak);
    /* every shape once a round, rounds in turn: a burst of load on the shared
     * machine lands on one round of a few shapes, and the median over the
     * rounds sets it aside (back-to-back repetitions of one shape would all
     * fall in it) */
    for (int r = 0; r < rounds; r++) {
        fprintf(stderr, "round %d of %d ...\n", r + 1, rounds);
        for (int i = 0; i < n_done; i++) time_fused_round(&fused[i], nth, r);
        measure_peak(simd, nth, 3, &peak);
    }
    struct result results[n_shapes];
    for (int i = 0; i < n_done; i++) {
        fprintf(stderr, "unfused D=%d N=%d %s ...\n", fused[i].s.D, fused[i].s.N, fused[i].s.causal ? "causal" : "full");
        double t_uf, t_ub;
        time_unfused(fused[i].s, nth, rounds, bf16 ? GGML_PREC_BF16 : GGML_PREC_DEFAULT, &t_uf, &t_ub);
        results[i] = result_of(&fused[i], rounds, t_uf, t_ub);
        ggml_free(fused[i].ctx);
    }
    printf("precision %s; ", bf16 ? "bf16" : "f32");
    printf("SIMD path %s, %d thread(s); FMA peak for %d thread(s) at once: %.1f GFLOP/s (%.1f per thread),"
           " per CPU-second x %d: %.1f (the best of %d measurements through the run)\n",
           simd, nth, nth, peak.wall, peak.wall / nth, nth, peak.cpu, 5 + 3 * rounds);
    printf("fused: medians of %d rounds (every shape once a round); 'x unfused' = time of mul_mat+soft_max+mul_mat"
           " (autodiff for bwd, median of %d back-to-back runs) / fused time\n", rounds, rounds);
    printf("bwd = ggml_flash_attn_back (recomputes the forward); autodiff bwd = the backward autodiff builds (reuses it)\n");
    printf("CPU time: fwd, bwd, autodiff bwd as %% of peak, both per second of CPU time (robust to other load; barrier waits count)\n");
    for (int i = 0; i < n_done; i++) print_result(&results[i], peak);
    return 0;
}
