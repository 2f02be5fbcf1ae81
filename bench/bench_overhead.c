/* bench_overhead.c -- per-compute overhead of the executor: a one-node graph
 * (c = a + b, 16 floats, so the kernel itself takes nanoseconds) computed
 * many times in a row, each call timed alone; prints the median and the 90th
 * percentile per call, for 1 and 2 threads, through ggml_graph_compute_with_ctx
 * and through the CPU backend. Not a test: it only prints figures.
 *
 *   bench_overhead [calls]        (default 20000 timed calls per row) */
#include "ggml.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { N_ELEMS = 16, WARMUP = 1000 };

/* Times `calls` computes of g (after WARMUP untimed ones); prints median and p90. */
static void measure(const char * label, int n_threads, ggml_backend_t backend, struct ggml_context * ctx,
                    struct ggml_cgraph * g, int calls, double * t) {
    for (int i = 0; i < WARMUP + calls; i++) {
        const double t0 = bench_clock_s(CLOCK_MONOTONIC);
        const enum ggml_status st = backend ? ggml_backend_graph_compute(backend, g) : ggml_graph_compute_with_ctx(ctx, g, n_threads);
        const double t1 = bench_clock_s(CLOCK_MONOTONIC);
        if (st != GGML_STATUS_SUCCESS) { fprintf(stderr, "compute failed: %s\n", ggml_last_error()); exit(1); }
        if (i >= WARMUP) t[i - WARMUP] = 1e6 * (t1 - t0);  /* microseconds */
    }
    qsort(t, (size_t) calls, sizeof *t, bench_cmp_double);
    printf("%-22s %d thread(s): median %8.2f us   p90 %8.2f us\n", label, n_threads, t[calls / 2], t[calls * 9 / 10]);
}

int main(int argc, char ** argv) {
    const int calls = argc > 1 ? atoi(argv[1]) : 20000;
    if (calls < 10) { fprintf(stderr, "usage: bench_overhead [calls >= 10]\n"); return 1; }
    double * t = malloc((size_t) calls * sizeof *t);
    struct ggml_init_params ip = {1 << 20, NULL, true};
    struct ggml_context * ctx = ggml_init(ip);
    ggml_backend_t backend = ggml_backend_cpu_init();
    if (!t || !ctx || !backend) { fprintf(stderr, "setup failed: %s\n", ggml_last_error()); return 1; }
    struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, N_ELEMS);
    struct ggml_tensor * b = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, N_ELEMS);
    struct ggml_tensor * c = ggml_add(ctx, a, b);
    struct ggml_cgraph * g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, c);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, backend);
    if (!buf) { fprintf(stderr, "alloc failed: %s\n", ggml_last_error()); return 1; }
    float ones[N_ELEMS];
    for (int i = 0; i < N_ELEMS; i++) ones[i] = 1.0f;
    ggml_backend_tensor_set(a, ones, 0, sizeof ones);
    ggml_backend_tensor_set(b, ones, 0, sizeof ones);

    printf("one-node graph (add of %d floats), %d timed calls per row after %d warm-up calls\n", N_ELEMS, calls, WARMUP);
    for (int n_threads = 1; n_threads <= 2; n_threads++) {
        measure("graph_compute_with_ctx", n_threads, NULL, ctx, g, calls, t);
        ggml_backend_cpu_set_n_threads(backend, n_threads);
        measure("backend_graph_compute", n_threads, backend, ctx, g, calls, t);
    }
    float out[N_ELEMS];
    ggml_backend_tensor_get(c, out, 0, sizeof out);
    const int ok = out[0] == 2.0f && out[N_ELEMS - 1] == 2.0f;
    ggml_backend_buffer_free(buf);
    ggml_backend_free(backend);
    ggml_free(ctx);
    free(t);
    if (!ok) { fprintf(stderr, "wrong result\n"); return 1; }
    return 0;
}
