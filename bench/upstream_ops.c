/* upstream_ops.c -- times the norms, POOL_2D and every GLU variant through
 * ggml's public API only (ggml.h, ggml-backend.h, ggml-cpu.h), so the same
 * source builds against ggmlr and against upstream ggml's CPU backend
 * (scripts/compare-upstream-perf.sh builds and runs both). Upstream's
 * `test-backend-ops perf` has no cases for these ops; this program is the
 * counterpart for them, at shapes of real models.
 *
 *   upstream_ops THREADS [OP]     OP: only the cases of that op (its name as printed)
 *
 * Prints one line per case in test-backend-ops perf's layout,
 *   "  OP(case):   RUNS runs -   T us/run"
 * T the median over 7 batches of the mean time of one graph compute in the
 * batch (one op per graph, inputs filled once with uniform [-1, 1] noise).
 * The time is wall-clock time; with BENCH_CLOCK=cpu in the environment it is
 * the CPU time of the process (all its threads), which time spent waiting
 * for a core on a loaded host does not inflate (a thread pool that
 * spin-waits pays for its spinning there). With BENCH_STAT=min, T is instead
 * the least time of a single graph compute over all the batches' runs: on a
 * loaded host every 20 ms batch holds some preemption, but among thousands
 * of runs of a few hundred us some run undisturbed on both threads. */
#define _POSIX_C_SOURCE 199309L  /* clock_gettime */
#include "ggml.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static clockid_t bench_clock = CLOCK_MONOTONIC;

static double now_us(void) {
    struct timespec ts;
    clock_gettime(bench_clock, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static int cmp_double(const void * a, const void * b) {
    const double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

static void fill(struct ggml_tensor * t, unsigned * seed) {
    const int64_t n = ggml_nelements(t);
    for (int64_t i = 0; i < n; i++) {
        *seed = *seed * 1664525u + 1013904223u;
        const float v = (float) (*seed >> 8) / (float) (1u << 24) * 2.0f - 1.0f;
        if (t->type == GGML_TYPE_F32) ((float *) t->data)[i] = v;
        else ((ggml_fp16_t *) t->data)[i] = ggml_fp32_to_fp16(v);
    }
}

/* the op's inputs (at most 2), made by the caller's case */
struct bench_case {
    const char * op, * name;
    struct ggml_tensor * (*build)(struct ggml_context * ctx, const int64_t * ne, int variant);
    int64_t ne[4];
    int variant;
};

static struct ggml_tensor * input(struct ggml_context * ctx, const int64_t * ne) {
    return ggml_new_tensor_4d(ctx, GGML_TYPE_F32, ne[0], ne[1], ne[2], ne[3]);
}

static struct ggml_tensor * b_norm(struct ggml_context * c, const int64_t * ne, int v) {
    struct ggml_tensor * x = input(c, ne);
    switch (v) {
        case 0:  return ggml_norm(c, x, 1e-5f);
        case 1:  return ggml_rms_norm(c, x, 1e-6f);
        case 2:  return ggml_l2_norm(c, x, 1e-12f);
        case 3:  return ggml_rms_norm_back(c, input(c, ne), x, 1e-6f);
        default: return ggml_group_norm(c, x, 32, 1e-6f);
    }
}

/* variant: kernel k (k x k, stride k for k = 2, stride 2 pad 1 for k = 3); + 100 for AVG */
static struct ggml_tensor * b_pool(struct ggml_context * c, const int64_t * ne, int v) {
    const enum ggml_op_pool op = v >= 100 ? GGML_OP_POOL_AVG : GGML_OP_POOL_MAX;
    const int k = v % 100, s = 2, p = k == 3 ? 1 : 0;
    return ggml_pool_2d(c, input(c, ne), op, k, k, s, s, (float) p, (float) p);
}

/* variant: the GLU op; + 100 for the split form (two tensors of ne); fused: one of [2 ne0, ...] */
static struct ggml_tensor * b_glu(struct ggml_context * c, const int64_t * ne, int v) {
    const enum ggml_glu_op op = (enum ggml_glu_op) (v % 100);
    if (v >= 100) {
        struct ggml_tensor * a = input(c, ne), * b = input(c, ne);
        return op == GGML_GLU_OP_SWIGLU_OAI ? ggml_swiglu_oai(c, a, b, 1.702f, 7.0f) : ggml_glu_split(c, a, b, op);
    }
    const int64_t ne2[4] = {2 * ne[0], ne[1], ne[2], ne[3]};
    struct ggml_tensor * a = input(c, ne2);
    if (op == GGML_GLU_OP_SWIGLU_OAI) {
        /* the fused form of OAI: the halves of a as views, as a model writes it */
        struct ggml_tensor * x = ggml_view_2d(c, a, ne[0], ne[1], a->nb[1], 0);
        struct ggml_tensor * g = ggml_view_2d(c, a, ne[0], ne[1], a->nb[1], (size_t) ne[0] * sizeof(float));
        return ggml_swiglu_oai(c, x, g, 1.702f, 7.0f);
    }
    return ggml_glu(c, a, op, false);
}

static const struct bench_case cases[] = {
    {"NORM",          "LLM row 4096 x 512",  b_norm, {4096, 512, 1, 1}, 0},
    {"NORM",          "row 768 x 2048",      b_norm, {768, 2048, 1, 1}, 0},
    {"RMS_NORM",      "LLM row 4096 x 512",  b_norm, {4096, 512, 1, 1}, 1},
    {"RMS_NORM",      "row 768 x 2048",      b_norm, {768, 2048, 1, 1}, 1},
    {"L2_NORM",       "row 4096 x 512",      b_norm, {4096, 512, 1, 1}, 2},
    {"RMS_NORM_BACK", "row 4096 x 512",      b_norm, {4096, 512, 1, 1}, 3},
    {"GROUP_NORM",    "UNet 64x64x320, 32 groups", b_norm, {64, 64, 320, 1}, 4},
    {"GROUP_NORM",    "UNet 32x32x640, 32 groups", b_norm, {32, 32, 640, 1}, 4},
    {"POOL_2D",       "max k3 s2 p1 112x112x64", b_pool, {112, 112, 64, 1}, 3},
    {"POOL_2D",       "avg k3 s2 p1 112x112x64", b_pool, {112, 112, 64, 1}, 103},
    {"POOL_2D",       "max k2 s2 56x56x128",     b_pool, {56, 56, 128, 1}, 2},
    {"POOL_2D",       "avg k2 s2 56x56x128",     b_pool, {56, 56, 128, 1}, 102},
    {"GLU",           "REGLU fused 4096 x 256",       b_glu, {4096, 256, 1, 1}, GGML_GLU_OP_REGLU},
    {"GLU",           "GEGLU fused 4096 x 256",       b_glu, {4096, 256, 1, 1}, GGML_GLU_OP_GEGLU},
    {"GLU",           "SWIGLU fused 4096 x 256",      b_glu, {4096, 256, 1, 1}, GGML_GLU_OP_SWIGLU},
    {"GLU",           "SWIGLU_OAI fused 4096 x 256",  b_glu, {4096, 256, 1, 1}, GGML_GLU_OP_SWIGLU_OAI},
    {"GLU",           "GEGLU_ERF fused 4096 x 256",   b_glu, {4096, 256, 1, 1}, GGML_GLU_OP_GEGLU_ERF},
    {"GLU",           "GEGLU_QUICK fused 4096 x 256", b_glu, {4096, 256, 1, 1}, GGML_GLU_OP_GEGLU_QUICK},
    {"GLU",           "REGLU split 4096 x 256",       b_glu, {4096, 256, 1, 1}, 100 + GGML_GLU_OP_REGLU},
    {"GLU",           "GEGLU split 4096 x 256",       b_glu, {4096, 256, 1, 1}, 100 + GGML_GLU_OP_GEGLU},
    {"GLU",           "SWIGLU split 4096 x 256",      b_glu, {4096, 256, 1, 1}, 100 + GGML_GLU_OP_SWIGLU},
    {"GLU",           "SWIGLU_OAI split 4096 x 256",  b_glu, {4096, 256, 1, 1}, 100 + GGML_GLU_OP_SWIGLU_OAI},
    {"GLU",           "GEGLU_ERF split 4096 x 256",   b_glu, {4096, 256, 1, 1}, 100 + GGML_GLU_OP_GEGLU_ERF},
    {"GLU",           "GEGLU_QUICK split 4096 x 256", b_glu, {4096, 256, 1, 1}, 100 + GGML_GLU_OP_GEGLU_QUICK},
};

#define BATCHES 7

static bool least_run;  /* BENCH_STAT=min */

static void run_case(ggml_backend_t backend, const struct bench_case * bc) {
    struct ggml_init_params ip = {(size_t) 256 << 20, NULL, false};
    struct ggml_context * ctx = ggml_init(ip);
    struct ggml_tensor * out = bc->build(ctx, bc->ne, bc->variant);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, out);
    unsigned seed = 42;
    for (int i = 0; i < ggml_graph_n_nodes(gf); i++) {
        struct ggml_tensor * node = ggml_graph_node(gf, i);
        for (int s = 0; s < GGML_MAX_SRC; s++)
            if (node->src[s] && node->src[s]->op == GGML_OP_NONE) fill(node->src[s], &seed);
    }
    /* a batch of about 20 ms, sized on a warm-up run */
    ggml_backend_graph_compute(backend, gf);
    double t0 = now_us();
    ggml_backend_graph_compute(backend, gf);
    const double one = now_us() - t0;
    const int n = one > 20000.0 ? 1 : (int) (20000.0 / (one > 1.0 ? one : 1.0));
    double per_run[BATCHES], least = one;
    for (int b = 0; b < BATCHES; b++) {
        t0 = now_us();
        for (int i = 0; i < n; i++) {
            const double t1 = now_us();
            ggml_backend_graph_compute(backend, gf);
            const double dt = now_us() - t1;
            least = dt < least ? dt : least;
        }
        per_run[b] = (now_us() - t0) / n;
    }
    qsort(per_run, BATCHES, sizeof(double), cmp_double);
    const double t = least_run ? least : per_run[BATCHES / 2];
    char head[160];
    const int len = snprintf(head, sizeof head, "  %s(%s): ", bc->op, bc->name);
    printf("%s%*s    %8d runs - %8.2f us/run\n", head, len < 64 ? 64 - len : 1, "", n * BATCHES, t);
    ggml_free(ctx);
}

int main(int argc, char ** argv) {
    if (argc < 2 || atoi(argv[1]) < 1) {
        fprintf(stderr, "usage: %s THREADS [OP]\n", argv[0]);
        return 2;
    }
    const char * clock_name = getenv("BENCH_CLOCK");
    if (clock_name && strcmp(clock_name, "cpu") == 0) bench_clock = CLOCK_PROCESS_CPUTIME_ID;
    const char * stat = getenv("BENCH_STAT");
    least_run = stat && strcmp(stat, "min") == 0;
    ggml_backend_t backend = ggml_backend_cpu_init();
    ggml_backend_cpu_set_n_threads(backend, atoi(argv[1]));
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (argc < 3 || strcmp(cases[i].op, argv[2]) == 0) run_case(backend, &cases[i]);
    ggml_backend_free(backend);
    return 0;
}
