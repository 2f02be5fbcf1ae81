/* quant_matmul.c -- mul_mat of a stored 4096 x 4096 weight (Q4_K, Q6_K,
 * Q8_0, BF16) by F32 activations, one column (token generation) and 512
 * (a prompt), against the memory bandwidth measured in the same run.
 *
 * One column reads the weight once: GB/s = its bytes / time, compared with
 * the bandwidth of nth threads summing a 512 MB buffer. The weights rotate
 * over enough copies (>= 128 MB in all) that each product reads from
 * memory, not from the last level cache. 512 columns are compute-bound:
 * GFLOP/s = 2 K M N / time. Figures are medians of `reps` computes (after
 * a warm-up). The same source builds against upstream ggml with
 * -DBENCH_UPSTREAM (bench/README.md), which has the same API. Last
 * column: the type's vec_dot kernel alone (ggml_get_type_traits_cpu), one
 * thread, 64 x 64 dots in cache, on the thread's CPU time: the figure that
 * a loaded machine disturbs least.
 *
 *   quant_matmul [threads] [reps]   (defaults: 2, 15) */
#include "ggml.h"
#include "ggml-cpu.h"
#include "bench_util.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define K 4096
#define M 4096
#define MAX_REPS 64
#define ROTATE_BYTES (128u << 20)
#define BW_BYTES ((size_t) 512 << 20)

/* ---- memory bandwidth: nth threads each sum their share of a buffer ---- */

struct bw_job { const uint64_t * p; size_t n; uint64_t sum; };

static void * bw_read(void * arg) {
    struct bw_job * j = arg;
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (size_t i = 0; i + 4 <= j->n; i += 4) { s0 += j->p[i]; s1 += j->p[i + 1]; s2 += j->p[i + 2]; s3 += j->p[i + 3]; }
    j->sum = s0 + s1 + s2 + s3;
    return NULL;
}

static double bandwidth_gbs(int nth, int reps) {
    uint64_t * buf = malloc(BW_BYTES);
    memset(buf, 1, BW_BYTES);
    const size_t words = BW_BYTES / 8, per = words / (size_t) nth;
    double t[MAX_REPS];
    uint64_t check = 0;
    for (int r = -1; r < reps; r++) {
        pthread_t th[64];
        struct bw_job jobs[64];
        const double t0 = bench_clock_s(CLOCK_MONOTONIC);
        for (int i = 0; i < nth; i++) {
            jobs[i] = (struct bw_job) {buf + (size_t) i * per, per, 0};
            pthread_create(&th[i], NULL, bw_read, &jobs[i]);
        }
        for (int i = 0; i < nth; i++) { pthread_join(th[i], NULL); check += jobs[i].sum; }
        if (r >= 0) t[r] = bench_clock_s(CLOCK_MONOTONIC) - t0;
    }
    free(buf);
    if (check == 42) printf(" ");  /* keeps the sums */
    return (double) BW_BYTES / bench_median(t, reps) / 1e9;
}

/* ---- the dot-product kernel alone: one thread, CPU time ---- */

/* GFLOP/s of the type's vec_dot (ggml_get_type_traits_cpu, as the CPU
 * backend calls it: one row by one column) over 64 rows x 64 columns of K,
 * in cache, on the calling thread's CPU time (so that other processes on a
 * shared machine count less than in wall time); best of reps */
static double kernel_gflops(enum ggml_type type, const float * src, int reps) {
    enum { R = 64, C = 64 };
    const struct ggml_type_traits_cpu * tc = ggml_get_type_traits_cpu(type);
    const size_t rs = ggml_row_size(type, K), cs = ggml_row_size(tc->vec_dot_type, K);
    char * w = malloc(rs * R), * a = malloc(cs * C);
    float * out = malloc(sizeof(float) * R * C);
    ggml_quantize_chunk(type, src, w, 0, R, K, NULL);
    for (int j = 0; j < C; j++) ggml_get_type_traits_cpu(tc->vec_dot_type)->from_float(src + (size_t) (R + j) * K, a + j * cs, K);
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        const double t0 = bench_clock_s(CLOCK_THREAD_CPUTIME_ID);
        for (int i = 0; i < R; i++)
            for (int j = 0; j < C; j++) tc->vec_dot(K, out + i * C + j, 0, w + i * rs, 0, a + j * cs, 0, 1);
        const double t = bench_clock_s(CLOCK_THREAD_CPUTIME_ID) - t0;
        if (t < best) best = t;
    }
    free(w); free(a); free(out);
    return 2.0 * K * R * C / best / 1e9;
}

/* ---- the products ---- */

/* median seconds of one product: a graph of `n` products (one per copy of the weight), timed whole */
static double time_products(struct ggml_context * ctx, struct ggml_tensor ** w, int n, struct ggml_tensor * x, int nth, int reps) {
    struct ggml_cgraph * g = ggml_new_graph(ctx);
    for (int i = 0; i < n; i++) ggml_build_forward_expand(g, ggml_mul_mat(ctx, w[i], x));
    double t[MAX_REPS];
    for (int r = -1; r < reps; r++) {
        const double t0 = bench_clock_s(CLOCK_MONOTONIC);
        if (ggml_graph_compute_with_ctx(ctx, g, nth) != GGML_STATUS_SUCCESS) {
            fprintf(stderr, "compute failed\n");
            exit(1);
        }
        if (r >= 0) t[r] = (bench_clock_s(CLOCK_MONOTONIC) - t0) / n;
    }
    return bench_median(t, reps);
}

static void bench_type(enum ggml_type type, int nth, int reps, double bw) {
    const size_t wbytes = ggml_row_size(type, K) * M;
    const int copies = (int) ((ROTATE_BYTES + wbytes - 1) / wbytes);
    const size_t mem = (size_t) copies * wbytes + (size_t) K * 512 * 4 + (size_t) M * 512 * 4 * 2 + ((size_t) 64 << 20);
    struct ggml_init_params ip = {mem, NULL, false};
    struct ggml_context * ctx = ggml_init(ip);
    float * src = malloc((size_t) K * M * sizeof *src);
    for (size_t i = 0; i < (size_t) K * M; i++) src[i] = (float) (rand() % 2001) / 1000.0f - 1.0f;
    struct ggml_tensor * w[64];
    for (int c = 0; c < copies; c++) {
        w[c] = ggml_new_tensor_2d(ctx, type, K, M);
        if (c == 0) ggml_quantize_chunk(type, src, w[0]->data, 0, M, K, NULL);
        else memcpy(w[c]->data, w[0]->data, wbytes);
    }
    struct ggml_tensor * x1 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, 1), * x512 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, 512);
    for (int64_t i = 0; i < K; i++) ((float *) x1->data)[i] = (float) (rand() % 2001) / 1000.0f - 1.0f;
    for (int64_t i = 0; i < K * 512; i++) ((float *) x512->data)[i] = (float) (rand() % 2001) / 1000.0f - 1.0f;
    const double t1 = time_products(ctx, w, copies, x1, nth, reps);
    const double t512 = time_products(ctx, w, 1, x512, nth, reps < 7 ? reps : 7);
    const double gbs = (double) wbytes / t1 / 1e9;
    const double kern = kernel_gflops(type, src, reps);
    free(src);
    printf("%-5s  %5.1f MB  1 col: %8.3f ms %6.1f GB/s (%3.0f %% of bandwidth) %6.1f GFLOP/s   512 cols: %8.2f ms %6.1f GFLOP/s"
           "   vec_dot: %5.1f GFLOP/s\n",
           ggml_type_name(type), (double) wbytes / 1e6, t1 * 1e3, gbs, 100 * gbs / bw, 2.0 * K * M / t1 / 1e9, t512 * 1e3,
           2.0 * K * M * 512 / t512 / 1e9, kern);
    ggml_free(ctx);
}

int main(int argc, char ** argv) {
    const int nth = argc > 1 ? atoi(argv[1]) : 2, reps = argc > 2 ? atoi(argv[2]) : 15;
    if (nth < 1 || nth > 64 || reps < 1 || reps > MAX_REPS) {
        fprintf(stderr, "usage: quant_matmul [threads 1..64] [reps 1..%d]\n", MAX_REPS);
        return 2;
    }
#ifdef BENCH_UPSTREAM
    const char * lib = "upstream ggml";
#else
    const char * lib = "ggmlr";
    printf("SIMD path: %s\n", ggml_cpu_simd_name());
#endif
    const double bw = bandwidth_gbs(nth, reps);
    printf("%s, %d threads, %d reps (medians); memory bandwidth (%d threads reading 512 MB): %.1f GB/s\n", lib, nth, reps, nth, bw);
    const enum ggml_type types[] = {GGML_TYPE_Q4_K, GGML_TYPE_Q6_K, GGML_TYPE_Q8_0, GGML_TYPE_BF16};
    for (int i = 0; i < 4; i++) bench_type(types[i], nth, reps, bw);
    return 0;
}
