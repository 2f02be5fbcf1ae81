/* bench_util.h -- what the benchmarks share: a clock, the median of a set of
 * timings, and random operands. */
#ifndef GGMLR_BENCH_UTIL_H
#define GGMLR_BENCH_UTIL_H

#include "ggml.h"

#include <stdlib.h>
#include <time.h>

/* Seconds on `clock` (CLOCK_MONOTONIC for wall time, CLOCK_PROCESS_CPUTIME_ID
 * for the CPU time of all threads). */
static inline double bench_clock_s(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

/* qsort order of doubles, ascending. */
static inline int bench_cmp_double(const void * a, const void * b) {
    const double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

/* Sorts v; returns the median. */
static inline double bench_median(double * v, int n) {
    qsort(v, (size_t) n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Uniform values in [-1, 1] (steps of 1e-3) in an F32 tensor. */
static inline void bench_fill(struct ggml_tensor * t) {
    float * d = t->data;
    for (int64_t i = 0; i < ggml_nelements(t); i++) d[i] = (float) (rand() % 2001) / 1000.0f - 1.0f;
}

#endif /* GGMLR_BENCH_UTIL_H */
