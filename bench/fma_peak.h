/* fma_peak.h -- measures this machine's fp32 FMA rate on the SIMD path the
 * library uses, the yardstick the benchmarks quote their figures against.
 *
 * Each path is measured at its native register width: AVX-512 zmm (16 lanes),
 * AVX2 ymm (8 lanes), and for the scalar path the widest vector its build has
 * without a target attribute (16 bytes: SSE2 on x86-64, NEON on arm64; no FMA
 * instruction there, so a*x+y is a multiply and an add, still 2 flops a lane).
 * Twelve independent chains a = a*x + y cover the FMA latency (2 pipes x 4
 * cycles needs 8 in flight) and, with x and y, take 14 registers: no spills
 * even with 16 (check with objdump -d: the loop is 12 FMAs, no memory operands).
 *
 * The path "avx512_bf16" (GGML_PREC_BF16 products) is VDPBF16PS instead:
 * each of 16 lanes adds two bf16 products, 4 flops a lane, counted as 32
 * lanes of FMA.
 *
 * The peak for T threads is measured with T threads running at once, so SMT
 * siblings, shared power budgets and clock drops under load count. */
#ifndef GGMLR_FMA_PEAK_H
#define GGMLR_FMA_PEAK_H

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#endif
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define FMA_PEAK_CHAINS 12

/* float fma_peak_<isa>(int64_t iters): iters x FMA_PEAK_CHAINS vector FMAs of
 * `bytes`-byte vectors; returns a sum of the results so nothing is dead code. */
#define FMA_PEAK_KERNEL(isa, target, bytes)                                            \
    typedef float fma_peak_v_##isa __attribute__((vector_size(bytes)));                 \
    target __attribute__((noinline)) static float fma_peak_##isa(int64_t iters) {       \
        enum { lanes = (bytes) / 4 };                                                   \
        fma_peak_v_##isa a[FMA_PEAK_CHAINS], x, y;                                      \
        for (int i = 0; i < lanes; i++) { x[i] = 1.0f + 1e-7f * (float) i; y[i] = 1e-8f; } \
        for (int c = 0; c < FMA_PEAK_CHAINS; c++) a[c] = y * (float) c;                 \
        for (int64_t it = 0; it < iters; it++) {                                        \
            _Pragma("GCC unroll 12")                                                    \
            for (int c = 0; c < FMA_PEAK_CHAINS; c++) a[c] = a[c] * x + y;              \
        }                                                                               \
        float s = 0;                                                                    \
        for (int c = 0; c < FMA_PEAK_CHAINS; c++) for (int i = 0; i < lanes; i++) s += a[c][i]; \
        return s;                                                                       \
    }

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
FMA_PEAK_KERNEL(avx512, __attribute__((target("avx512f,fma"))), 64)
FMA_PEAK_KERNEL(avx2, __attribute__((target("avx2,fma"))), 32)

__attribute__((target("avx512f,avx512bf16"), noinline)) static float fma_peak_avx512_bf16(int64_t iters) {
    __m512 a[FMA_PEAK_CHAINS];
    const __m512bh x = (__m512bh) _mm512_set1_epi32(0x3f803f80), y = (__m512bh) _mm512_set1_epi32(0x32ab32ab);  /* 1, 2e-8 */
    for (int c = 0; c < FMA_PEAK_CHAINS; c++) a[c] = _mm512_set1_ps((float) c);
    for (int64_t it = 0; it < iters; it++) {
        _Pragma("GCC unroll 12")
        for (int c = 0; c < FMA_PEAK_CHAINS; c++) a[c] = _mm512_dpbf16_ps(a[c], x, y);
    }
    float s = 0;
    for (int c = 0; c < FMA_PEAK_CHAINS; c++) s += _mm512_reduce_add_ps(a[c]);
    return s;
}
#endif
FMA_PEAK_KERNEL(scalar, , 16)

struct fma_peak_path { float (*run)(int64_t iters); int lanes; };

static inline struct fma_peak_path fma_peak_path(const char * simd) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (strcmp(simd, "avx512") == 0) return (struct fma_peak_path) {fma_peak_avx512, 16};
    if (strcmp(simd, "avx2") == 0) return (struct fma_peak_path) {fma_peak_avx2, 8};
    if (strcmp(simd, "avx512_bf16") == 0) return (struct fma_peak_path) {fma_peak_avx512_bf16, 32};
#endif
    (void) simd;
    return (struct fma_peak_path) {fma_peak_scalar, 4};
}

struct fma_peak_job { float (*run)(int64_t); int64_t iters; volatile float sink; };

static void * fma_peak_thread(void * arg) {
    struct fma_peak_job * job = arg;
    job->sink = job->run(job->iters);
    return NULL;
}

/* Rate of nth threads (at most 64) each running `iters` iterations of the
 * kernel for path simd at once, in GFLOP/s of wall-clock time; also, when
 * cpu_gflops is given, per second of CPU time times nth (what the threads
 * reach while they hold a core: the same figure on an idle machine, and one
 * that a loaded machine does not drag down). 0 if a thread could not start. */
static inline double fma_peak_gflops(const char * simd, int nth, int64_t iters, double * cpu_gflops) {
    const struct fma_peak_path path = fma_peak_path(simd);
    struct fma_peak_job jobs[64];
    pthread_t threads[64];
    if (nth < 1) nth = 1;
    if (nth > 64) nth = 64;
    struct timespec t0, t1, c0, c1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    int started = 1;
    for (int t = 0; t < nth; t++) { jobs[t].run = path.run; jobs[t].iters = iters; }
    for (int t = 1; t < nth && started == t; t++) started += pthread_create(&threads[t], NULL, fma_peak_thread, &jobs[t]) == 0;
    fma_peak_thread(&jobs[0]);
    for (int t = 1; t < started; t++) pthread_join(threads[t], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    if (started < nth) return 0.0;
    const double sec = (double) (t1.tv_sec - t0.tv_sec) + 1e-9 * (double) (t1.tv_nsec - t0.tv_nsec);
    const double cpu = (double) (c1.tv_sec - c0.tv_sec) + 1e-9 * (double) (c1.tv_nsec - c0.tv_nsec);
    /* per iteration: FMA_PEAK_CHAINS vectors x lanes x 2 flops */
    const double flops = (double) nth * (double) iters * FMA_PEAK_CHAINS * path.lanes * 2;
    if (cpu_gflops) *cpu_gflops = flops / cpu * nth / 1e9;
    return flops / sec / 1e9;
}

#endif
